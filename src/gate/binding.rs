//! Stage 5: the headers that mirror the body must equal it. `Mcp-Method`
//! on every request (and on a notification that sends it), `Mcp-Name` on
//! `tools/call` and `prompts/get` (`params.name`) and `resources/read`
//! (`params.uri`). Values may use the sentinel `=?base64?…?=` (markers
//! case-sensitive) and are decoded before the comparison.
//!
//! The modern lane requires them on requests. The 2025 revisions do not
//! have them, but one sent there is still held to the body: the headers
//! exist so that intermediaries can route and authorize without reading
//! the body, and one behind the gateway would otherwise act on a header
//! the body contradicts.

use std::borrow::Cow;

use base64::Engine as _;

use super::headers::{RequestHeaders, names};
use crate::classify::{Classified, Kind};
use crate::parse::{TapeNode, words};

/// A header that does not mirror the body.
#[derive(Debug, PartialEq, Eq)]
pub struct Mismatch<'a> {
    pub header: &'a str,
    /// The body's value (`None` when the body has none).
    pub expected: Option<Cow<'a, str>>,
    /// The header's value as sent (decoded when in the base64 sentinel),
    /// `None` when the header is absent.
    pub received: Option<Cow<'a, [u8]>>,
    /// Why, in the gateway's words.
    pub cause: MismatchCause,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MismatchCause {
    Missing,
    /// Sent, but the body has no (non-null) value for it to mirror.
    Unexpected,
    Differs,
    /// Characters a header value may not hold, or a sentinel that does not
    /// decode to UTF-8 text.
    Malformed,
    /// Sent where the message has nothing it could mirror (`Mcp-Name` on a
    /// method without a name, an `Mcp-Param-*` no annotation of the called
    /// tool names): nothing would check it before the upstream read it.
    Unmirrored,
}

impl MismatchCause {
    pub fn describe(self) -> &'static str {
        match self {
            MismatchCause::Missing => "is required but absent",
            MismatchCause::Unexpected => "is sent but the argument it mirrors is absent or null",
            MismatchCause::Differs => "does not match the body",
            MismatchCause::Malformed => "is not a valid header value",
            MismatchCause::Unmirrored => "is sent but mirrors nothing this message holds",
        }
    }
}

/// The member of `params` that `Mcp-Name` mirrors for `method`.
pub fn name_member(method: &str) -> Option<&'static str> {
    match method {
        "tools/call" | "prompts/get" => Some("name"),
        "resources/read" => Some("uri"),
        _ => None,
    }
}

/// The member of `params` that `Mcp-Name` mirrors for the message's method
/// ([`name_member`]), if the method has one and the message holds it.
pub fn named<'p>(message: &Classified<'p>) -> Option<TapeNode<'p>> {
    match name_member(message.method?)? {
        "name" => message.members.name,
        "uri" => message.members.uri,
        _ => None,
    }
}

/// `named` is what [`named`] gives for `message`; `lane_requires`: the
/// message's lane requires the headers (the modern lane) rather than only
/// holding the ones sent to the body.
pub fn check<'a>(
    message: &Classified<'a>,
    named: Option<TapeNode<'a>>,
    headers: &'a (impl RequestHeaders + ?Sized),
    lane_requires: bool,
) -> Result<(), Mismatch<'a>> {
    let Some(method) = message.method else {
        // A client's answer (the 2025 lanes) has no method or name to
        // mirror: headers claiming one would reach the upstream unchecked.
        unmirrored(names::METHOD, headers)?;
        return unmirrored(names::NAME, headers);
    };
    let required = lane_requires && message.kind == Kind::Request;
    compare(
        names::METHOD,
        method,
        headers.header(names::METHOD),
        required,
        false,
    )?;
    // A missing or non-string member is the schema stage's to report.
    if let Some(value) = named.and_then(|v| v.as_str()) {
        compare(
            names::NAME,
            value,
            headers.header(names::NAME),
            required,
            true,
        )?;
    } else if name_member(method).is_none() {
        unmirrored(names::NAME, headers)?;
    }
    Ok(())
}

/// `header`, sent where the message holds nothing it mirrors.
fn unmirrored<'a>(
    header: &'a str,
    headers: &'a (impl RequestHeaders + ?Sized),
) -> Result<(), Mismatch<'a>> {
    match headers.header(header) {
        None => Ok(()),
        Some(raw) => Err(Mismatch {
            header,
            expected: None,
            received: Some(Cow::Borrowed(raw)),
            cause: MismatchCause::Unmirrored,
        }),
    }
}

/// Compares one mirrored header with the body's value.
pub fn compare<'a>(
    header: &'a str,
    expected: &'a str,
    value: Option<&'a [u8]>,
    required: bool,
    sentinel: bool,
) -> Result<(), Mismatch<'a>> {
    let Some(raw) = value else {
        return if required {
            Err(Mismatch {
                header,
                expected: Some(Cow::Borrowed(expected)),
                received: None,
                cause: MismatchCause::Missing,
            })
        } else {
            Ok(())
        };
    };
    // The common case first: the value sent exactly as the body has it.
    if is_same_field_value(raw, expected.as_bytes())
        && !(sentinel && raw.starts_with(SENTINEL_OPEN))
    {
        return Ok(());
    }
    let decoded = if sentinel {
        decode_sentinel(raw)
    } else {
        Some(Cow::Borrowed(raw))
    };
    let Some(decoded) = decoded.filter(|_| is_field_value(raw)) else {
        return Err(Mismatch {
            header,
            expected: Some(Cow::Borrowed(expected)),
            received: Some(Cow::Borrowed(raw)),
            cause: MismatchCause::Malformed,
        });
    };
    if decoded.as_ref() == expected.as_bytes() {
        Ok(())
    } else {
        Err(Mismatch {
            header,
            expected: Some(Cow::Borrowed(expected)),
            received: Some(decoded),
            cause: MismatchCause::Differs,
        })
    }
}

const SENTINEL_OPEN: &[u8] = b"=?base64?";
const SENTINEL_CLOSE: &[u8] = b"?=";

/// A header value in the `=?base64?…?=` sentinel, decoded; any other value
/// as it is. `None` for a sentinel that is not base64 of UTF-8 text.
pub fn decode_sentinel(raw: &[u8]) -> Option<Cow<'_, [u8]>> {
    let Some(inner) = raw
        .strip_prefix(SENTINEL_OPEN)
        .and_then(|rest| rest.strip_suffix(SENTINEL_CLOSE))
    else {
        return Some(Cow::Borrowed(raw));
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(inner)
        .ok()?;
    std::str::from_utf8(&bytes).ok()?;
    Some(Cow::Owned(bytes))
}

/// RFC 9110 field-value characters: visible ASCII, space and tab. Non-ASCII
/// text travels in the base64 sentinel.
pub fn is_field_value(raw: &[u8]) -> bool {
    // Without early exit, so that the loop compiles to vector code: a
    // header that is not a field value is the rare case.
    raw.iter().fold(true, |ok, &b| ok & is_field_byte(b))
}

/// [`is_field_value`] of `raw` and `raw == expected` in one pass: the
/// common header, sent exactly as the body has it (one pass costs less
/// than the comparison and the check one after the other).
///
/// Eight bytes at a time from eight on (the last word overlapping the one
/// before): a method or tool name costs two words, not a loop per byte.
fn is_same_field_value(raw: &[u8], expected: &[u8]) -> bool {
    let n = raw.len();
    if n != expected.len() {
        return false;
    }
    if n < 8 {
        return raw.iter().zip(expected).fold(true, |ok, (&sent, &body)| {
            ok & (sent == body) & is_field_byte(sent)
        });
    }
    let (mut differs, mut outside) = (0, 0);
    for (sent, body) in words::overlapping_words(raw).zip(words::overlapping_words(expected)) {
        differs |= sent ^ body;
        outside |= words::unprintable(sent);
    }
    // A tab is a field byte outside ` `..=`~`: the byte check decides.
    differs == 0 && (outside == 0 || is_field_value(raw))
}

#[inline(always)]
fn is_field_byte(byte: u8) -> bool {
    (byte == b'\t') | (byte.wrapping_sub(b' ') < 0x5F)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_value_is_the_same_field_value_exactly_when_equal_and_all_field_bytes() {
        let plain = |raw: &[u8], expected: &[u8]| raw == expected && is_field_value(raw);
        for len in 0..=24 {
            let base: Vec<u8> = (0..len).map(|i| b'a' + (i % 26) as u8).collect();
            assert!(is_same_field_value(&base, &base), "{len}");
            for at in 0..len {
                for byte in 0..=255u8 {
                    let mut raw = base.clone();
                    raw[at] = byte;
                    // The same byte on both sides, then a different one.
                    assert_eq!(
                        is_same_field_value(&raw, &raw),
                        plain(&raw, &raw),
                        "{len} {at} {byte:#x}"
                    );
                    assert_eq!(
                        is_same_field_value(&raw, &base),
                        plain(&raw, &base),
                        "{len} {at} {byte:#x}"
                    );
                }
            }
        }
        assert!(!is_same_field_value(b"tools/call", b"tools/cal"));
    }

    #[test]
    fn the_base64_sentinel_is_decoded_and_its_markers_are_case_sensitive() {
        assert_eq!(
            decode_sentinel(b"=?base64?dMO2w7ZsX3VuaWNvZGU=?=")
                .unwrap()
                .as_ref(),
            "tööl_unicode".as_bytes()
        );
        assert_eq!(
            decode_sentinel(b"=?BASE64?SGVsbG8=?=").unwrap().as_ref(),
            b"=?BASE64?SGVsbG8=?="
        );
        assert_eq!(decode_sentinel(b"=?base64?not base64!?="), None);
        assert_eq!(decode_sentinel(b"plain").unwrap().as_ref(), b"plain");
    }

    #[test]
    fn a_missing_required_header_names_itself_and_omits_received() {
        let mismatch = compare(names::METHOD, "tools/list", None, true, false).unwrap_err();
        assert_eq!(mismatch.cause, MismatchCause::Missing);
        assert_eq!(mismatch.received, None);
        assert!(compare(names::METHOD, "tools/list", None, false, false).is_ok());
    }

    #[test]
    fn control_characters_and_raw_non_ascii_are_malformed() {
        for raw in [&b"ec\rho"[..], b"ec\nho", "tööl".as_bytes(), b"a\0b"] {
            let mismatch = compare(names::NAME, "echo", Some(raw), true, true).unwrap_err();
            assert_eq!(mismatch.cause, MismatchCause::Malformed);
        }
    }

    #[test]
    fn a_header_equal_to_the_body_is_still_refused_when_it_is_no_field_value() {
        for byte in 0..0x80u8 {
            let text = format!("to{}ol-name", char::from(byte));
            let sent = compare(names::METHOD, &text, Some(text.as_bytes()), true, false);
            let field = byte == b'\t' || (b' '..=b'~').contains(&byte);
            assert_eq!(sent.is_ok(), field, "{byte:#x}");
        }
        let unicode = "tööl_unicode";
        let mismatch = compare(names::NAME, unicode, Some(unicode.as_bytes()), true, true);
        assert_eq!(mismatch.unwrap_err().cause, MismatchCause::Malformed);
    }

    #[test]
    fn field_value_bytes_are_exactly_visible_ascii_space_and_tab() {
        for byte in 0..=u8::MAX {
            let expected = byte == b'\t' || (b' '..=b'~').contains(&byte);
            assert_eq!(is_field_value(&[b'a', byte, b'z']), expected, "{byte:#x}");
        }
        assert!(is_field_value(b""));
    }

    #[test]
    fn a_sentinel_sent_for_a_body_value_shaped_like_one_is_decoded_first() {
        // The header mirrors `=?base64?SGVsbG8=?=` only if it encodes it;
        // sent as is, it decodes to `Hello` and differs.
        let literal = "=?base64?SGVsbG8=?=";
        let mismatch =
            compare(names::NAME, literal, Some(literal.as_bytes()), true, true).unwrap_err();
        assert_eq!(mismatch.cause, MismatchCause::Differs);
        assert_eq!(mismatch.received.as_deref(), Some(&b"Hello"[..]));
        // Where no sentinel applies (`Mcp-Method`), equal bytes are equal.
        assert!(
            compare(
                names::METHOD,
                literal,
                Some(literal.as_bytes()),
                true,
                false
            )
            .is_ok()
        );
    }

    #[test]
    fn equal_values_pass_and_different_ones_report_both() {
        assert!(compare(names::NAME, "echo", Some(b"echo"), true, true).is_ok());
        let mismatch = compare(names::NAME, "echo", Some(b"other"), true, true).unwrap_err();
        assert_eq!(mismatch.expected.as_deref(), Some("echo"));
        assert_eq!(mismatch.received.as_deref(), Some(&b"other"[..]));
    }
}
