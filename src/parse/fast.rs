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
//! takes the body once, strings sixteen bytes at a time.
//!
//! UTF-8 is checked string by string, by the scan that finds each string's
//! end (`scan::string_at`, where the unchecked steps are): everything else
//! in a body it takes is structural ASCII, so such a body is UTF-8 whole.
//! Checking the whole body first (`simdutf8`) is a second pass over every
//! byte; the scan adds one instruction per sixteen bytes to a pass it
//! makes anyway.

use simd_json::{Node, StaticNode};

use super::scan;

/// Deepest nesting the fast path takes; deeper bodies go to simd-json.
pub(super) const FAST_DEPTH: usize = 32;

/// Integers with this many digits or more go to simd-json (which holds the
/// ones beyond 64 bits as floats); below it, the value always fits.
const MAX_DIGITS: usize = 18;

/// One open array or object.
#[derive(Clone, Copy)]
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

/// Builds the tape of `bytes` into `tape` (emptied first) and returns `true`, or
/// returns `false` (the tape's content then unspecified) when the body is not
/// one the fast path takes. `objects` gets the tape index of every object
/// that may hold a duplicate key: all the duplicate-key check has to look
/// at (in the others, every key differs from the earlier ones in length,
/// first or last byte).
pub(super) fn fill<'a>(
    bytes: &'a [u8],
    tape: &mut Vec<Node<'a>>,
    objects: &mut Vec<u32>,
    max_depth: usize,
) -> bool {
    tape.clear();
    objects.clear();
    let depth_limit = max_depth.min(FAST_DEPTH);
    let mut stack = [Frame {
        header: 0,
        len: 0,
        key_bits: 0,
        suspect: false,
        object: false,
    }; FAST_DEPTH];
    let mut depth = 0;
    let mut at = skip_whitespace(bytes, 0);

    // Opens an object or an array: one expansion each, so that neither
    // pays a branch on which it is (one arm for both cost more per check).
    macro_rules! open {
        ($object:expr, $header:expr, $close:expr) => {{
            if depth == depth_limit {
                return false;
            }
            stack[depth] = Frame {
                header: tape.len(),
                len: 0,
                key_bits: 0,
                suspect: false,
                object: $object,
            };
            depth += 1;
            tape.push($header);
            at = skip_whitespace(bytes, at + 1);
            if bytes.get(at) == Some(&$close) {
                // Empty: its header is already right.
                depth -= 1;
                at += 1;
            } else {
                let frame = &mut stack[depth - 1];
                frame.len = 1;
                if $object {
                    let Some((next, bits)) = key_at(bytes, at, tape) else {
                        return false;
                    };
                    frame.key_bits = bits;
                    at = next;
                }
                continue;
            }
        }};
    }

    // Each turn reads one value at `at`, then what follows it up to the
    // start of the next value (or the end of the document).
    loop {
        match bytes.get(at) {
            Some(b'"') => {
                let Some((string, next)) = scan::string_at(bytes, at) else {
                    return false;
                };
                tape.push(Node::String(string));
                at = next;
            }
            Some(b'{') => open!(true, Node::Object { len: 0, count: 0 }, b'}'),
            Some(b'[') => open!(false, Node::Array { len: 0, count: 0 }, b']'),
            Some(b't') if bytes[at..].starts_with(b"true") => {
                tape.push(Node::Static(StaticNode::Bool(true)));
                at += 4;
            }
            Some(b'f') if bytes[at..].starts_with(b"false") => {
                tape.push(Node::Static(StaticNode::Bool(false)));
                at += 5;
            }
            Some(b'n') if bytes[at..].starts_with(b"null") => {
                tape.push(Node::Static(StaticNode::Null));
                at += 4;
            }
            Some(b'-' | b'0'..=b'9') => {
                let Some((number, next)) = number_at(bytes, at) else {
                    return false;
                };
                tape.push(Node::Static(number));
                at = next;
            }
            Some(&byte) if is_whitespace(byte) => {
                at = skip_whitespace(bytes, at);
                continue;
            }
            _ => return false,
        }

        // After a value: close what ends here, then find the next value.
        // Whitespace is one more arm of each match rather than a check
        // before it: compact JSON, what clients send, then pays nothing.
        loop {
            if depth == 0 {
                return skip_whitespace(bytes, at) == bytes.len();
            }
            let frame = &mut stack[depth - 1];
            match bytes.get(at) {
                Some(b',') => {
                    frame.len += 1;
                    at += 1;
                    if frame.object {
                        match key_at(bytes, at, tape) {
                            Some((next, bits)) => {
                                frame.suspect |= frame.key_bits & bits == bits;
                                frame.key_bits |= bits;
                                at = next;
                            }
                            None => return false,
                        }
                    }
                    break;
                }
                Some(b'}') if frame.object => {
                    if frame.suspect {
                        let Ok(header) = u32::try_from(frame.header) else {
                            return false;
                        };
                        objects.push(header);
                    }
                    let count = tape.len() - frame.header - 1;
                    tape[frame.header] = Node::Object {
                        len: frame.len,
                        count,
                    };
                }
                Some(b']') if !frame.object => {
                    let count = tape.len() - frame.header - 1;
                    tape[frame.header] = Node::Array {
                        len: frame.len,
                        count,
                    };
                }
                Some(&byte) if is_whitespace(byte) => {
                    at = skip_whitespace(bytes, at);
                    continue;
                }
                _ => return false,
            }
            depth -= 1;
            at += 1;
        }
    }
}

/// Reads an object key at `at` and the colon after it; gives the position
/// of the member's value and the key's [`key_bits`].
#[inline(always)]
fn key_at<'a>(bytes: &'a [u8], at: usize, tape: &mut Vec<Node<'a>>) -> Option<(usize, u64)> {
    let at = expect(bytes, at, b'"')?;
    let (key, next) = scan::string_at(bytes, at)?;
    tape.push(Node::String(key));
    let colon = expect(bytes, next, b':')?;
    Some((colon + 1, key_bits(key)))
}

/// The position of `byte` at `at` or after whitespace there; `None` if
/// something else comes first.
#[inline(always)]
fn expect(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    if bytes.get(at) == Some(&byte) {
        return Some(at);
    }
    expect_after_whitespace(bytes, at, byte)
}

/// [`expect`] when `byte` is not right there: out of line, so that the
/// compact case stays one comparison. (Inline, or `#[cold]`, the hot loop
/// cost more.)
#[inline(never)]
fn expect_after_whitespace(bytes: &[u8], at: usize, byte: u8) -> Option<usize> {
    let at = skip_whitespace(bytes, at);
    (bytes.get(at) == Some(&byte)).then_some(at)
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

/// A number at `at` as simd-json holds it, and the position after it:
/// an integer as `U64` when not negative and `I64` when negative (`-0`
/// included); one with a fraction or an exponent as `F64`, correctly
/// rounded as simd-json's does (`str::parse`, or one exact operation where
/// that gives the same). `None` for an integer part of
/// [`MAX_DIGITS`] digits or more, a float beyond `f64`'s range, or no
/// digits where the grammar needs one. A leading zero followed by more
/// digits is left to the caller, which finds a digit where a delimiter must
/// be.
fn number_at(bytes: &[u8], at: usize) -> Option<(StaticNode, usize)> {
    let negative = bytes[at] == b'-';
    let digits_start = at + usize::from(negative);
    let mut end = digits_start;
    let mut value: u64 = 0;
    if bytes.get(end) == Some(&b'0') {
        end += 1;
    } else {
        while let Some(&digit @ b'0'..=b'9') = bytes.get(end) {
            value = value * 10 + u64::from(digit - b'0');
            end += 1;
            if end - digits_start >= MAX_DIGITS {
                return None;
            }
        }
    }
    if end == digits_start {
        return None;
    }
    let mut float = false;
    // The literal is `value` × 10^`scale` while every digit fits below 2^53.
    let mut scale: i64 = 0;
    let mut exact = value <= EXACT_MANTISSA;
    if bytes.get(end) == Some(&b'.') {
        float = true;
        let from = end + 1;
        end = from;
        while let Some(&digit @ b'0'..=b'9') = bytes.get(end) {
            if value <= (EXACT_MANTISSA - 9) / 10 {
                value = value * 10 + u64::from(digit - b'0');
                scale -= 1;
            } else {
                exact = false;
            }
            end += 1;
        }
        if end == from {
            return None;
        }
    }
    if let Some(b'e' | b'E') = bytes.get(end) {
        float = true;
        end += 1;
        let negative_exponent = bytes.get(end) == Some(&b'-');
        if let Some(b'+' | b'-') = bytes.get(end) {
            end += 1;
        }
        let from = end;
        end = digits_after(bytes, from)?;
        // Past four digits the fast rule below cannot apply anyway.
        let exponent = bytes[from..end]
            .iter()
            .take(4)
            .fold(0, |sum, digit| sum * 10 + i64::from(digit - b'0'));
        exact &= end - from <= 4;
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
            return Some((StaticNode::F64(value), end));
        }
        // Only JSON's number grammar reaches here, which `f64`'s parser
        // takes whole (it takes more, such as `inf`, that cannot occur).
        let literal = std::str::from_utf8(bytes.get(at..end)?).ok()?;
        let value: f64 = literal.parse().ok()?;
        return value.is_finite().then_some((StaticNode::F64(value), end));
    }
    let node = if negative {
        // At most 17 digits: the negation fits.
        StaticNode::I64(-(value as i64))
    } else {
        StaticNode::U64(value)
    };
    Some((node, end))
}

/// The position after the digits that start at `from`; `None` for none.
fn digits_after(bytes: &[u8], from: usize) -> Option<usize> {
    let count = bytes
        .get(from..)?
        .iter()
        .take_while(|byte| byte.is_ascii_digit())
        .count();
    (count > 0).then_some(from + count)
}

#[inline(always)]
fn is_whitespace(byte: u8) -> bool {
    matches!(byte, b' ' | b'\n' | b'\r' | b'\t')
}

#[inline(always)]
fn skip_whitespace(bytes: &[u8], mut at: usize) -> usize {
    // Compact JSON, what clients send, has none: one comparison.
    while let Some(&byte) = bytes.get(at) {
        if byte > b' ' || !is_whitespace(byte) {
            break;
        }
        at += 1;
    }
    at
}

#[cfg(test)]
mod tests {
    use super::*;

    fn fast(body: &str) -> Option<Vec<Node<'_>>> {
        let mut tape = Vec::new();
        fill(body.as_bytes(), &mut tape, &mut Vec::new(), 64).then_some(tape)
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
    fn invalid_utf8_anywhere_goes_to_simd_json() {
        for body in [
            &b"{\"a\":\"\xC3\"}"[..],
            b"{\"\xFF\":1}",
            b"[\"ok\",\"\xED\xA0\x80\"]",
            b"[\"caf\xC3\xA9\",\"\xC3\x28\"]",
            b"[1,\xC3\xA9]",
            b"\xEF\xBB\xBF[]",
        ] {
            assert!(
                !fill(body, &mut Vec::new(), &mut Vec::new(), 64),
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
        assert!(fill(four.as_bytes(), &mut Vec::new(), &mut Vec::new(), 4));
        assert!(!fill(five.as_bytes(), &mut Vec::new(), &mut Vec::new(), 4));
    }

    #[test]
    fn objects_that_may_repeat_a_key_are_listed() {
        let (mut tape, mut objects) = (Vec::new(), Vec::new());
        let mixed = r#"{"a":{},"b":{"c":1},"x":{"same":1,"same":2},"d":[{"e":1,"ff":2}]}"#;
        assert!(fill(mixed.as_bytes(), &mut tape, &mut objects, 64));
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
        assert!(fill(crowded.as_bytes(), &mut tape, &mut objects, 64));
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
                let read = number_at(number.as_bytes(), 0);
                proptest::prop_assert_eq!(
                    read,
                    Some((StaticNode::F64(expected), number.len())),
                    "{}", number
                );
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
