//! Builds the JSON-RPC error envelope (ARCHITECTURE.md, "Rejections"): `code` from the
//! table, a one-line `message`, and `data` with keys from the closed list.

use bytes::{BufMut, BytesMut};

use super::codes::{Condition, DataKey};
use crate::classify::RequestId;
use crate::distill::{Found, LocationReport, within_echo_bound};
use crate::parse::{escape_stop, words};

/// The longest `message` an envelope carries; the variable parts in it are
/// cut at the echo bound before, this only bounds their sum.
pub const MAX_MESSAGE_BYTES: usize = 512;

/// One value of `error.data`.
#[derive(Clone, Copy, Debug)]
pub enum DataValue<'a> {
    /// Text (possibly sent by the client): cut at the echo bound.
    Text(&'a [u8]),
    Texts(&'a [&'a str]),
    Count(usize),
    Locations(&'a [LocationReport]),
    /// The same list, read in place from the collector that found it.
    Found(&'a Found<'a>),
}

/// Writes the envelope for `condition` into `out`.
pub fn write_error(
    out: &mut BytesMut,
    id: Option<&RequestId>,
    condition: Condition,
    message: &str,
    data: &[(DataKey, DataValue<'_>)],
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(id) => out.extend_from_slice(id.json()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"error\":{\"code\":");
    out.extend_from_slice(itoa::Buffer::new().format(condition.code()).as_bytes());
    out.extend_from_slice(b",\"message\":");
    write_one_line(out, message);
    if !data.is_empty() {
        out.extend_from_slice(b",\"data\":{");
        for (n, (key, value)) in data.iter().enumerate() {
            if n > 0 {
                out.put_u8(b',');
            }
            write_word(out, key.as_str());
            out.put_u8(b':');
            write_value(out, value);
        }
        out.put_u8(b'}');
    }
    out.extend_from_slice(b"}}");
}

fn write_value(out: &mut BytesMut, value: &DataValue<'_>) {
    match value {
        DataValue::Text(bytes) => match std::str::from_utf8(bytes) {
            Ok(text) => write_bounded(out, text),
            // Rare: sent bytes that are not UTF-8, made so on the heap.
            Err(_) => write_bounded(out, &String::from_utf8_lossy(bytes)),
        },
        DataValue::Texts(texts) => {
            out.put_u8(b'[');
            for (n, text) in texts.iter().enumerate() {
                if n > 0 {
                    out.put_u8(b',');
                }
                write_bounded(out, text);
            }
            out.put_u8(b']');
        }
        DataValue::Count(count) => {
            out.extend_from_slice(itoa::Buffer::new().format(*count).as_bytes());
        }
        DataValue::Locations(locations) => write_locations(
            out,
            locations.iter().map(|location| {
                let texts = location
                    .problems
                    .iter()
                    .map(|problem| problem.text.as_str());
                (location.pointer.as_str(), texts)
            }),
        ),
        DataValue::Found(found) => write_locations(
            out,
            found
                .locations()
                .map(|location| (location.pointer(), location.texts())),
        ),
    }
}

/// `[{"path": pointer, "problems": [text, …]}, …]`.
fn write_locations<'t, T: Iterator<Item = &'t str>>(
    out: &mut BytesMut,
    locations: impl Iterator<Item = (&'t str, T)>,
) {
    out.put_u8(b'[');
    for (n, (pointer, texts)) in locations.enumerate() {
        if n > 0 {
            out.put_u8(b',');
        }
        out.extend_from_slice(b"{\"path\":");
        write_bounded(out, pointer);
        out.extend_from_slice(b",\"problems\":[");
        for (m, text) in texts.enumerate() {
            if m > 0 {
                out.put_u8(b',');
            }
            write_bounded(out, text);
        }
        out.extend_from_slice(b"]}");
    }
    out.put_u8(b']');
}

/// One of the gateway's own words (a data key, a kind, a type, a
/// keyword, a code: constants with nothing to escape) as a JSON string,
/// without the escaping scan.
pub(crate) fn write_word(out: &mut BytesMut, word: &'static str) {
    out.put_u8(b'"');
    put_word(out, word);
    out.put_u8(b'"');
}

/// The inside of [`write_word`], for a writer whose fixed pieces carry the
/// quotes around it (one write fewer on each side).
pub(crate) fn put_word(out: &mut BytesMut, word: &'static str) {
    debug_assert!(!word.bytes().any(escaped), "{word:?} needs escaping");
    out.extend_from_slice(word.as_bytes());
}

/// `text` as a JSON string, cut at the echo bound (as
/// `distill::cut_at_echo_bound` cuts it), with no copy of it made.
pub(crate) fn write_bounded(out: &mut BytesMut, text: &str) {
    out.put_u8(b'"');
    escape_bounded(out, text);
    out.put_u8(b'"');
}

/// The inside of [`write_bounded`].
pub(crate) fn escape_bounded(out: &mut BytesMut, text: &str) {
    let (kept, cut) = within_echo_bound(text);
    escape(out, kept);
    if cut {
        out.extend_from_slice("…".as_bytes());
    }
}

/// `message` as a JSON string on one line and within
/// [`MAX_MESSAGE_BYTES`]: control characters become spaces, a longer
/// line is cut and ends with `…`.
pub(crate) fn write_one_line(out: &mut BytesMut, message: &str) {
    out.put_u8(b'"');
    escape_one_line(out, message);
    out.put_u8(b'"');
}

/// The inside of [`write_one_line`].
pub(crate) fn escape_one_line(out: &mut BytesMut, message: &str) {
    if message.len() <= MAX_MESSAGE_BYTES
        && (plain_ascii(message.as_bytes()) || !message.chars().any(char::is_control))
    {
        return escape(out, message);
    }
    let line = |c: char| if c.is_control() { ' ' } else { c };
    let total: usize = message.chars().map(|c| line(c).len_utf8()).sum();
    let mut written = 0;
    let mut char_bytes = [0u8; 4];
    for c in message.chars().map(line) {
        if total > MAX_MESSAGE_BYTES && written + c.len_utf8() > MAX_MESSAGE_BYTES {
            break;
        }
        written += c.len_utf8();
        escape(out, c.encode_utf8(&mut char_bytes));
    }
    if total > MAX_MESSAGE_BYTES {
        out.extend_from_slice("…".as_bytes());
    }
}

/// Writes `text` escaped for the inside of a JSON string: `"` and `\\`,
/// and control characters below U+0020 (short forms where JSON has them,
/// else `\\u00xx`).
pub(crate) fn escape(out: &mut BytesMut, text: &str) {
    let bytes = text.as_bytes();
    // Refusal texts are mostly plain, with a quote or a line end here and
    // there: the parse's sixteen-byte scan finds the next byte to escape.
    let mut copied = 0;
    while let Some(found) = escape_stop(bytes, copied) {
        out.extend_from_slice(&bytes[copied..found]);
        write_escaped(out, bytes[found]);
        copied = found + 1;
    }
    out.extend_from_slice(&bytes[copied..]);
}

/// Whether JSON escapes `byte`: `"`, `\\`, or a control character.
fn escaped(byte: u8) -> bool {
    byte < 0x20 || byte == b'"' || byte == b'\\'
}

/// One byte that JSON escapes: `"`, `\\`, or a control character (the
/// short forms where JSON has them, else `\\u00xx`).
fn write_escaped(out: &mut BytesMut, byte: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    // Fixed-size writes: a slice whose length is known only at run time
    // is copied by a call to `memcpy`, which costs more than the bytes.
    let short = match byte {
        b'"' => b'"',
        b'\\' => b'\\',
        b'\n' => b'n',
        b'\r' => b'r',
        b'\t' => b't',
        0x08 => b'b',
        0x0c => b'f',
        _ => {
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(byte >> 4)],
                HEX[usize::from(byte & 0xf)],
            ]);
            return;
        }
    };
    out.extend_from_slice(&[b'\\', short]);
}

/// Whether `bytes` are printable ASCII (no control character, nothing
/// past 0x7e), eight a step.
fn plain_ascii(bytes: &[u8]) -> bool {
    let mut words = bytes.chunks_exact(8);
    words.all(|chunk| words::unprintable(words::word_at(chunk, 0)) == 0)
        && words
            .remainder()
            .iter()
            .all(|&byte| (0x20..0x7f).contains(&byte))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `text` as a JSON string, escaped as JSON requires (what
    /// `serde_json` writes, the tests compare).
    fn write_string(out: &mut BytesMut, text: &str) {
        out.put_u8(b'"');
        escape(out, text);
        out.put_u8(b'"');
    }

    #[test]
    fn an_envelope_without_id_carries_null_and_data_keys_in_order() {
        let mut out = BytesMut::new();
        write_error(
            &mut out,
            None,
            Condition::UnsupportedProtocolVersion,
            "Unsupported protocol version",
            &[
                (DataKey::Supported, DataValue::Texts(&["2026-07-28"])),
                (DataKey::Requested, DataValue::Text(b"1900-01-01")),
            ],
        );
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            value,
            serde_json::json!({"jsonrpc":"2.0","id":null,"error":{"code":-32022,
                "message":"Unsupported protocol version",
                "data":{"supported":["2026-07-28"],"requested":"1900-01-01"}}})
        );
    }

    #[test]
    fn messages_are_one_line_and_bounded() {
        let mut out = BytesMut::new();
        let long = format!("a\nb{}", "x".repeat(10_000));
        write_error(&mut out, None, Condition::InternalError, &long, &[]);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let message = value["error"]["message"].as_str().unwrap();
        assert!(!message.contains('\n'));
        assert!(message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
    }

    /// What the envelope wrote before: `serde_json`'s escaping of the line
    /// made on the heap.
    fn one_line_on_the_heap(message: &str) -> String {
        let mut line: String = message
            .chars()
            .map(|c| if c.is_control() { ' ' } else { c })
            .collect();
        if line.len() > MAX_MESSAGE_BYTES {
            let mut end = MAX_MESSAGE_BYTES;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            line.truncate(end);
            line.push('…');
        }
        serde_json::to_string(&line).unwrap()
    }

    #[test]
    fn strings_are_escaped_as_serde_json_escapes_them() {
        let all: String = (0u32..0x250).filter_map(char::from_u32).collect();
        for text in [
            "",
            "plain",
            "a\"b\\c",
            "\u{1}\u{1f}\u{7f}\u{85}é",
            all.as_str(),
        ] {
            let mut out = BytesMut::new();
            write_string(&mut out, text);
            assert_eq!(&out[..], serde_json::to_string(text).unwrap().as_bytes());
        }
        let long = format!("é{}\u{85}{}", "x".repeat(509), "y".repeat(20));
        for text in [
            "plain",
            "a\nb",
            "\u{85}\u{85}",
            &all,
            &long,
            &"é".repeat(300),
        ] {
            let mut out = BytesMut::new();
            write_one_line(&mut out, text);
            assert_eq!(&out[..], one_line_on_the_heap(text).as_bytes(), "{text:?}");
        }
        // Each byte that needs escaping, and a few that do not, at every
        // place of the eight-byte words the scan reads.
        for special in [
            '"', '\\', '\n', '\u{0}', '\u{1f}', ' ', '\u{7f}', '\u{85}', 'é',
        ] {
            for at in 0..20 {
                let text = format!("{}{special}{}", "a".repeat(at), "b".repeat(19 - at));
                let mut out = BytesMut::new();
                write_string(&mut out, &text);
                let expected = serde_json::to_string(&text).unwrap();
                assert_eq!(&out[..], expected.as_bytes(), "{text:?}");
                let mut out = BytesMut::new();
                write_one_line(&mut out, &text);
                assert_eq!(&out[..], one_line_on_the_heap(&text).as_bytes(), "{text:?}");
            }
        }
        // Specials side by side, where a word's flags above the first
        // one may be false (a borrow from `"` flags the `#` after it).
        for pair in ["\"#", "\u{0}\u{1}", "\\]", "\u{1f}\u{20}", "\"\"", "\n\""] {
            for at in 0..16 {
                let text = format!("{}{pair}{pair}{}", "a".repeat(at), "b".repeat(16 - at));
                let mut out = BytesMut::new();
                write_string(&mut out, &text);
                assert_eq!(
                    &out[..],
                    serde_json::to_string(&text).unwrap().as_bytes(),
                    "{text:?}"
                );
            }
        }
        let over = "ü".repeat(crate::distill::ECHO_BOUND);
        let mut out = BytesMut::new();
        write_bounded(&mut out, &over);
        let cut = crate::distill::cut_at_echo_bound(&over);
        assert_eq!(&out[..], serde_json::to_string(&cut).unwrap().as_bytes());
    }

    proptest::proptest! {
        #[test]
        fn any_text_is_escaped_as_serde_json_escapes_it(
            text in "[\"\\\\\u{0}-\u{1f} !#\\]a-z\u{7f}-\u{ff}é]{0,40}"
        ) {
            let mut out = BytesMut::new();
            write_string(&mut out, &text);
            let expected = serde_json::to_string(&text).unwrap();
            proptest::prop_assert_eq!(&out[..], expected.as_bytes());
        }
    }
}
