//! The fast path of the parse: one pass over the body that builds the same
//! tape simd-json builds, for the bodies clients actually send.
//!
//! It only ever accepts. It takes documents whose strings have no escapes
//! and are UTF-8, whose integers have at most 17 digits, and whose nesting
//! stays within [`FAST_DEPTH`] and the configured limit; on anything else
//! (an escape, a long integer, and every error of any kind) it gives up,
//! and simd-json parses the body from the start. Every refusal, and every rare
//! form, therefore keeps simd-json's answer; the fast path only has to build
//! simd-json's tape exactly for what it takes, and debug builds check that it
//! does on every parse (`Parser::parse`).
//!
//! Why it pays: simd-json indexes every structural character in a first
//! pass, then walks the index and scans every string once more; this reader
//! takes the body once, strings sixteen bytes at a time. It reads the body
//! through a cursor over a padded copy (`scan::Cursor`, where the unchecked
//! steps are), so no byte costs a bounds check, and writes the tape into
//! room reserved before it starts (`writer::TapeWriter`), a turn at a time.
//!
//! UTF-8 is checked string by string, by the scan that finds each string's
//! end (`scan::Cursor::string`): everything else
//! in a body it takes is structural ASCII, so such a body is UTF-8 whole.
//! Checking the whole body first (`simdutf8`) is a second pass over every
//! byte; the scan adds one instruction per sixteen bytes to a pass it
//! makes anyway.

use simd_json::{Node, StaticNode};

use super::scan::Cursor;
use super::writer::{Last, TapeWriter};

/// Deepest nesting the fast path takes; deeper bodies go to simd-json.
pub(super) const FAST_DEPTH: usize = 32;

/// Integers with this many digits or more go to simd-json (which holds the
/// ones beyond 64 bits as floats); below it, the value always fits.
const MAX_DIGITS: usize = 18;

/// One open array or object.
#[derive(Clone, Copy, Default)]
struct Frame {
    /// Tape index of its header node.
    header: usize,
    /// Members or elements so far.
    len: usize,
    /// The [`key_bits`] of an object's keys so far, together.
    key_bits: u64,
    /// Some key found both its bits set: it may repeat an earlier one.
    suspect: bool,
    object: bool,
}

/// The arrays and objects open at a point of the parse, kept by the parser
/// from one parse to the next (made afresh for each, they cost more to
/// clear than a small body to read). Each frame is written when its array
/// or object opens, before it is read.
pub(super) struct Frames([Frame; FAST_DEPTH]);

impl Default for Frames {
    fn default() -> Self {
        Frames([Frame::default(); FAST_DEPTH])
    }
}

/// Tape nodes the fast path reserves for a body of `len` bytes, before it
/// reads the body: as many as such a body can hold. A finished value owns
/// two bytes at least (a number, its digit and the byte after it; the
/// others, their own first and last), but for a number that ends the body,
/// and an open array or object only its first byte so far.
///
/// Reserved whole rather than grown by doubling: a large body's tape would
/// be copied once per doubling and leave the smaller blocks behind, freed
/// but not always given back to the system yet. The pages of the room a
/// body does not fill are never touched, so they cost address space, not
/// memory.
fn tape_room(len: usize) -> usize {
    len / 2 + 1 + FAST_DEPTH
}

/// Builds the tape of the body under `cursor` into `tape` (emptied first)
/// and returns `true`, or returns `false` (the tape's content then
/// unspecified) when the body is not one the fast path takes. `objects`
/// gets the tape index of every object that may hold a duplicate key: all
/// the duplicate-key check has to look at (in the others, every key
/// differs from the earlier ones in length, first or last byte).
pub(super) fn fill<'a>(
    cursor: Cursor<'a>,
    tape: &mut Vec<Node<'a>>,
    frames: &mut Frames,
    objects: &mut Vec<u32>,
    max_depth: usize,
) -> bool {
    objects.clear();
    let mut writer = TapeWriter::new(tape, tape_room(cursor.body_len()));
    let taken = read(cursor, &mut writer, &mut frames.0, objects, max_depth).is_some();
    if taken {
        writer.finish();
    }
    taken
}

/// [`fill`]'s reading: `None` for a body the fast path does not take.
#[inline(always)]
fn read<'a>(
    mut cursor: Cursor<'a>,
    tape: &mut TapeWriter<'_, 'a>,
    stack: &mut [Frame; FAST_DEPTH],
    objects: &mut Vec<u32>,
    max_depth: usize,
) -> Option<()> {
    let depth_limit = max_depth.min(FAST_DEPTH);
    let mut depth = 0;
    cursor.skip_whitespace();

    // Opens an object or an array: one expansion each, so that neither
    // pays a branch on which it is (one arm for both cost more per check).
    // Its header is the turn's first node, an object's first key its last.
    macro_rules! open {
        ($turn:expr, $object:expr, $open:expr, $header:expr, $close:expr) => {{
            if depth == depth_limit {
                return None;
            }
            cursor.eat($open);
            let turn = $turn;
            stack[depth] = Frame {
                header: turn.len(),
                len: 0,
                key_bits: 0,
                suspect: false,
                object: $object,
            };
            depth += 1;
            let last = turn.push($header);
            cursor.skip_whitespace();
            if cursor.eat($close) {
                // Empty: its header is already right.
                depth -= 1;
                last
            } else {
                let frame = &mut stack[depth - 1];
                frame.len = 1;
                if $object {
                    frame.key_bits = key(&mut cursor, last)?;
                }
                continue;
            }
        }};
    }

    // Each turn reads one value at the cursor, then what follows it up to
    // the start of the next value (or the end of the document): at most two
    // nodes, the value and the key of the member after it.
    loop {
        let turn = tape.turn()?;
        let mut last = match cursor.peek() {
            b'"' => turn.push(Node::String(cursor.string()?)),
            b'{' => open!(turn, true, b'{', Node::Object { len: 0, count: 0 }, b'}'),
            b'[' => open!(turn, false, b'[', Node::Array { len: 0, count: 0 }, b']'),
            b't' if cursor.eat_word(b"true") => turn.push(Node::Static(StaticNode::Bool(true))),
            b'f' if cursor.eat_word(b"false") => turn.push(Node::Static(StaticNode::Bool(false))),
            b'n' if cursor.eat_word(b"null") => turn.push(Node::Static(StaticNode::Null)),
            b'-' | b'0'..=b'9' => {
                let (number, next) = number(cursor)?;
                cursor = next;
                turn.push(Node::Static(number))
            }
            b' ' | b'\n' | b'\r' | b'\t' => {
                cursor.skip_whitespace();
                continue;
            }
            _ => return None,
        };

        // After a value: close what ends here, then find the next value.
        // Whitespace is one more arm of each match rather than a check
        // before it: compact JSON, what clients send, then pays nothing.
        loop {
            if depth == 0 {
                cursor.skip_whitespace();
                return cursor.at_end().then_some(());
            }
            let frame = &mut stack[depth - 1];
            match cursor.peek() {
                b',' => {
                    cursor.eat(b',');
                    frame.len += 1;
                    if frame.object {
                        let bits = key(&mut cursor, last)?;
                        frame.suspect |= frame.key_bits & bits == bits;
                        frame.key_bits |= bits;
                    }
                    break;
                }
                b'}' if frame.object => {
                    cursor.eat(b'}');
                    if frame.suspect {
                        objects.push(u32::try_from(frame.header).ok()?);
                    }
                    let count = last.len() - frame.header - 1;
                    let len = frame.len;
                    last.set(frame.header, Node::Object { len, count });
                }
                b']' if !frame.object => {
                    cursor.eat(b']');
                    let count = last.len() - frame.header - 1;
                    let len = frame.len;
                    last.set(frame.header, Node::Array { len, count });
                }
                b' ' | b'\n' | b'\r' | b'\t' => {
                    cursor.skip_whitespace();
                    continue;
                }
                _ => return None,
            }
            depth -= 1;
        }
    }
}

/// Reads an object key at the cursor and the colon after it, leaving the
/// cursor at the member's value; gives the key's [`key_bits`]. The key is
/// its turn's last node.
#[inline(always)]
fn key<'a>(cursor: &mut Cursor<'a>, last: Last<'_, '_, 'a>) -> Option<u64> {
    if cursor.peek() != b'"' {
        *cursor = skip_whitespace_before(*cursor, b'"')?;
    }
    let key = cursor.string()?;
    last.push(Node::String(key));
    if !cursor.eat(b':') {
        *cursor = skip_whitespace_before(*cursor, b':')?;
        cursor.eat(b':');
    }
    Some(key_bits(key))
}

/// The cursor moved past whitespace to `byte`, or `None` if something
/// else comes first: out of line, so that the compact case stays one
/// comparison in [`key`]. (Inline, or `#[cold]`, the hot loop cost more.)
#[inline(never)]
fn skip_whitespace_before(mut cursor: Cursor<'_>, byte: u8) -> Option<Cursor<'_>> {
    cursor.skip_whitespace();
    (cursor.peek() == byte).then_some(cursor)
}

/// Two bits of 64 for a key, from its length and its first and last bytes.
/// Equal keys have equal bits, so a key whose bits are not both set already
/// differs from every earlier key of its object; an object where some key's
/// bits were both set goes to the key-by-key check. (Two bits rather than
/// one: six keys then send their object there about 5% of the time, not
/// 21%. Keys made to share bits only send their object to that check, which
/// is bounded.)
#[inline(always)]
fn key_bits(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let first = u64::from(bytes.first().copied().unwrap_or(0));
    let last = u64::from(bytes.last().copied().unwrap_or(0));
    let mixed =
        (bytes.len() as u64 ^ (first << 16) ^ (last << 24)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    (1 << (mixed >> 58)) | (1 << ((mixed >> 52) & 63))
}

/// The largest mantissa every `f64` holds exactly: 2^53.
const EXACT_MANTISSA: u64 = 1 << 53;

/// 10^0 to 10^22: the powers of ten `f64` holds exactly.
const POWERS_OF_TEN: [f64; 23] = [
    1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16,
    1e17, 1e18, 1e19, 1e20, 1e21, 1e22,
];

/// The number at the cursor as simd-json holds it, the cursor moved past
/// it: an integer as `U64` when not negative and `I64` when negative (`-0`
/// included); one with a fraction or an exponent as `F64`, correctly
/// rounded as simd-json's does (`str::parse`, or one exact operation where
/// that gives the same). `None` for an integer part of [`MAX_DIGITS`]
/// digits or more, a float beyond `f64`'s range, or no digits where the
/// grammar needs one. A leading zero followed by more digits is left to
/// the caller, which finds a digit where a delimiter must be.
fn number(mut cursor: Cursor<'_>) -> Option<(StaticNode, Cursor<'_>)> {
    let at = cursor.at();
    let negative = cursor.eat(b'-');
    let digits_start = cursor.at();
    let mut value: u64 = 0;
    if !cursor.eat(b'0') {
        while let Some(digit) = cursor.eat_digit() {
            value = value * 10 + digit;
            if cursor.at() - digits_start >= MAX_DIGITS {
                return None;
            }
        }
    }
    if cursor.at() == digits_start {
        return None;
    }
    let mut float = false;
    // The literal is `value` × 10^`scale` while every digit fits below 2^53.
    let mut scale: i64 = 0;
    let mut exact = value <= EXACT_MANTISSA;
    if cursor.eat(b'.') {
        float = true;
        let from = cursor.at();
        while let Some(digit) = cursor.eat_digit() {
            if value <= (EXACT_MANTISSA - 9) / 10 {
                value = value * 10 + digit;
                scale -= 1;
            } else {
                exact = false;
            }
        }
        if cursor.at() == from {
            return None;
        }
    }
    if cursor.eat(b'e') || cursor.eat(b'E') {
        float = true;
        let negative_exponent = cursor.eat(b'-');
        if !negative_exponent {
            cursor.eat(b'+');
        }
        let from = cursor.at();
        // Past four digits the fast rule below cannot apply anyway.
        let mut exponent = 0;
        while let Some(digit) = cursor.eat_digit() {
            if cursor.at() - from <= 4 {
                exponent = exponent * 10 + digit as i64;
            }
        }
        let digits = cursor.at() - from;
        if digits == 0 {
            return None;
        }
        exact &= digits <= 4;
        scale += if negative_exponent {
            -exponent
        } else {
            exponent
        };
    }
    if float {
        if exact && (-22..=22).contains(&scale) {
            // Clinger's fast path: the mantissa and the power of ten are
            // both exact in `f64`, so one multiplication or division rounds
            // once, correctly, to what the decimal literal means.
            let mantissa = value as f64;
            let magnitude = if scale < 0 {
                mantissa / POWERS_OF_TEN[scale.unsigned_abs() as usize]
            } else {
                mantissa * POWERS_OF_TEN[scale as usize]
            };
            let value = if negative { -magnitude } else { magnitude };
            return Some((StaticNode::F64(value), cursor));
        }
        // Only JSON's number grammar reaches here, which `f64`'s parser
        // takes whole (it takes more, such as `inf`, that cannot occur).
        let literal = std::str::from_utf8(cursor.read_since(at)?).ok()?;
        let value: f64 = literal.parse().ok()?;
        return value
            .is_finite()
            .then_some((StaticNode::F64(value), cursor));
    }
    let node = if negative {
        // At most 17 digits: the negation fits.
        StaticNode::I64(-(value as i64))
    } else {
        StaticNode::U64(value)
    };
    Some((node, cursor))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The fast path's tape of `body`, read as the parser reads it.
    fn fill_from(
        body: &[u8],
        tape: &mut Vec<Node<'static>>,
        objects: &mut Vec<u32>,
        max_depth: usize,
    ) -> bool {
        // The copy's strings outlive the test's tape.
        let buffer = Box::leak(Box::new(Vec::new()));
        let cursor = Cursor::new(buffer, body);
        fill(cursor, tape, &mut Frames::default(), objects, max_depth)
    }

    fn fast(body: &str) -> Option<Vec<Node<'static>>> {
        let mut tape = Vec::new();
        fill_from(body.as_bytes(), &mut tape, &mut Vec::new(), 64).then_some(tape)
    }

    fn simd(body: &str) -> Vec<Node<'static>> {
        let mut copy = body.as_bytes().to_vec();
        let tape = simd_json::to_tape(&mut copy).expect("simd-json parses it");
        // Strings borrow `copy`; leak it so the comparison can outlive it.
        tape.0
            .into_iter()
            .map(|node| match node {
                Node::String(s) => Node::String(Box::leak(s.to_owned().into_boxed_str())),
                Node::Object { len, count } => Node::Object { len, count },
                Node::Array { len, count } => Node::Array { len, count },
                Node::Static(value) => Node::Static(value),
            })
            .collect()
    }

    #[test]
    fn the_fast_tape_is_simd_jsons_tape() {
        for body in [
            r#"{"jsonrpc":"2.0","id":"call-1","method":"tools/call","params":{"name":"x","arguments":{"a":[1,-2,0,-0,true,false,null,"s",[],{}],"b":{"c":{"d":[[1],[2,3]]}}}}}"#,
            " \t\r\n[ 1 , { \"k\" : \"v\" } , [ ] ]\n",
            "{ \"a\" :1 ,\"b\":[ 1 ,2\t] ,\n\"c\" : { } ,\"d\"\r:\"x\" }",
            "{\"a\":{\"b\":1}\n}\t",
            "[]",
            "{}",
            "\"top\"",
            "12345678901234567",
            "-12345678901234567",
            "true",
            r#"[1.5,-0.0,0.1,1e3,1E-3,-2.5e+10,123456789.123456789e-5,0e0,1.7976931348623157e308,5e-324,2e-400]"#,
            r#"{"price":10.5,"lat":-33.8688,"lon":151.2093}"#,
            r#"{"ünïcödé ✓":"日本語 🎉","":""}"#,
            "[\"exactly8\",\"exactly 9\",\"seven77\",\"a\u{7f}b\"]",
        ] {
            assert_eq!(fast(body), Some(simd(body)), "{body}");
        }
    }

    #[test]
    fn everything_else_goes_to_simd_json() {
        for body in [
            r#"{"a":123456789012345678}"#,
            r#"{"a":123456789012345678.5}"#,
            r#"{"a":1e400}"#,
            r#"{"a":1.}"#,
            r#"{"a":.5}"#,
            r#"{"a":1e}"#,
            r#"{"a":1e+}"#,
            r#"{"a":-.5}"#,
            r#"{"a":+1}"#,
            r#"{"a":1.5.5}"#,
            r#"{"a":"esc\"aped"}"#,
            "{\"a\":\"tab\tinside\"}",
            r#"{"a":01}"#,
            r#"{"a":-}"#,
            r#"{"a":tru}"#,
            r#"{"a":truex}"#,
            r#"{"a":1,}"#,
            "{ \"a\":1 , }",
            "[1 , ]",
            "{\"a\" , 1}",
            "{ , }",
            "[ 1 ] x",
            r#"{"a" 1}"#,
            r#"{1:1}"#,
            r#"[1 2]"#,
            r#"[1,]"#,
            r#"{"a":1}}"#,
            r#"{"a":1} x"#,
            r#"{"a":[1}"#,
            r#"{"a":"unterminated}"#,
            "",
            "   ",
        ] {
            assert_eq!(fast(body), None, "{body}");
        }
    }

    #[test]
    fn the_densest_bodies_fit_the_room_reserved() {
        let deep = format!("{}0{}", "[".repeat(FAST_DEPTH), "]".repeat(FAST_DEPTH));
        let numbers = format!("[{}0]", "0,".repeat(500));
        let empties = format!("[{}[]]", "[],".repeat(500));
        let members = format!(
            "{{{}\"\":0}}",
            (0..300).map(|i| format!("\"{i}\":0,")).collect::<String>()
        );
        for body in [
            "0", "[]", "[0]", "{}", "{\"\":0}", &deep, &numbers, &empties, &members,
        ] {
            let tape = fast(body).unwrap_or_else(|| panic!("{body}"));
            assert!(tape.len() <= tape_room(body.len()), "{body}");
        }
    }

    #[test]
    fn invalid_utf8_or_a_zero_byte_anywhere_goes_to_simd_json() {
        for body in [
            &b"{\"a\":\"\xC3\"}"[..],
            // Zero is what the cursor reads past the body's end: inside
            // it, it ends nothing early and is taken nowhere.
            b"{\"a\":1}\0",
            b"{\"a\":1\0}",
            b"{\"a\0\":1}",
            b"[\"\0\"]",
            b"[1\0]",
            b"\0[]",
            b"[tru\0]",
            b"{\"\xFF\":1}",
            b"[\"ok\",\"\xED\xA0\x80\"]",
            b"[\"caf\xC3\xA9\",\"\xC3\x28\"]",
            b"[1,\xC3\xA9]",
            b"\xEF\xBB\xBF[]",
        ] {
            assert!(
                !fill_from(body, &mut Vec::new(), &mut Vec::new(), 64),
                "{body:?}"
            );
        }
    }

    #[test]
    fn nesting_beyond_either_limit_goes_to_simd_json() {
        let nested = |depth: usize| format!("{}{}", "[".repeat(depth), "]".repeat(depth));
        assert!(fast(&nested(FAST_DEPTH)).is_some());
        assert!(fast(&nested(FAST_DEPTH + 1)).is_none());
        let (four, five) = (nested(4), nested(5));
        assert!(fill_from(
            four.as_bytes(),
            &mut Vec::new(),
            &mut Vec::new(),
            4
        ));
        assert!(!fill_from(
            five.as_bytes(),
            &mut Vec::new(),
            &mut Vec::new(),
            4
        ));
    }

    #[test]
    fn objects_that_may_repeat_a_key_are_listed() {
        let (mut tape, mut objects) = (Vec::new(), Vec::new());
        let mixed = r#"{"a":{},"b":{"c":1},"x":{"same":1,"same":2},"d":[{"e":1,"ff":2}]}"#;
        assert!(fill_from(mixed.as_bytes(), &mut tape, &mut objects, 64));
        // Equal keys always share a bit, so that object is listed; others
        // may be (bits can collide), but only objects of two members or more.
        assert!(objects.contains(&8), "{objects:?}");
        for &at in &objects {
            assert!(
                matches!(tape[at as usize], Node::Object { len, .. } if len > 1),
                "{at} in {objects:?}"
            );
        }
        let many: Vec<String> = (0..65).map(|i| format!("\"k{i}\":{i}")).collect();
        let crowded = format!("{{{}}}", many.join(","));
        assert!(fill_from(crowded.as_bytes(), &mut tape, &mut objects, 64));
        assert_eq!(objects, [0], "65 keys cannot each bring a new bit of 64");
    }

    proptest::proptest! {
        #[test]
        fn numbers_read_as_simd_json_reads_them(
            int in "-?(0|[1-9][0-9]{0,20})",
            fraction in proptest::option::of("[0-9]{1,25}"),
            exponent in proptest::option::of("[eE][+-]?[0-9]{1,4}"),
        ) {
            let number = format!(
                "{int}{}{}",
                fraction.map(|digits| format!(".{digits}")).unwrap_or_default(),
                exponent.unwrap_or_default()
            );
            let body = format!("[{number}]");
            if let Some(tape) = fast(&body) {
                proptest::prop_assert_eq!(tape, simd(&body), "{}", number);
            }
        }
    }

    proptest::proptest! {
        /// Short mantissas and small exponents: where one exact operation
        /// stands in for `str::parse`, and the edges where it must not.
        #[test]
        fn short_decimals_read_as_str_parse_reads_them(
            negative in proptest::bool::ANY,
            int in "(0|[1-9][0-9]{0,16})",
            fraction in "[0-9]{1,17}",
            exponent in -30i32..30,
        ) {
            let sign = if negative { "-" } else { "" };
            for number in [
                format!("{sign}{int}.{fraction}"),
                format!("{sign}{int}.{fraction}e{exponent}"),
                format!("{sign}{int}E{exponent}"),
            ] {
                let expected: f64 = number.parse().unwrap();
                let mut buffer = Vec::new();
                let read = super::number(Cursor::new(&mut buffer, number.as_bytes()));
                let read = read.map(|(node, cursor)| (node, cursor.at_end()));
                proptest::prop_assert_eq!(read, Some((StaticNode::F64(expected), true)), "{}", number);
                if let Some((StaticNode::F64(value), _)) = read {
                    proptest::prop_assert_eq!(value.to_bits(), expected.to_bits(), "{}", number);
                }
            }
        }
    }

    #[test]
    fn a_quote_is_found_at_every_offset_of_a_word() {
        for length in 0..40 {
            let body = format!("[\"{}\",\"{}\\n\"]", "x".repeat(length), "y".repeat(length));
            assert_eq!(fast(&body), None, "escape after {length} bytes");
            let body = format!("[\"{}\"]", "x".repeat(length));
            assert_eq!(fast(&body), Some(simd(&body)), "{length} bytes");
        }
    }
}
