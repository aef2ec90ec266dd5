//! Builds the JSON-RPC error envelope (ARCHITECTURE.md, "Rejections"): `code` from the
//! table, a one-line `message`, and `data` with keys from the closed list.

use std::io::Write as _;

use super::codes::{Condition, DataKey};
use crate::classify::RequestId;
use crate::distill::{LocationReport, cut_at_echo_bound};

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
}

/// Writes the envelope for `condition` into `out`.
pub fn write_error(
    out: &mut Vec<u8>,
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
    // Writing into a Vec cannot fail.
    let _ = write!(
        out,
        ",\"error\":{{\"code\":{},\"message\":",
        condition.code()
    );
    write_string(out, &one_line(message));
    if !data.is_empty() {
        out.extend_from_slice(b",\"data\":{");
        for (n, (key, value)) in data.iter().enumerate() {
            if n > 0 {
                out.push(b',');
            }
            write_string(out, key.as_str());
            out.push(b':');
            write_value(out, value);
        }
        out.push(b'}');
    }
    out.extend_from_slice(b"}}");
}

fn write_value(out: &mut Vec<u8>, value: &DataValue<'_>) {
    match value {
        DataValue::Text(bytes) => {
            let text = String::from_utf8_lossy(bytes);
            write_string(out, &cut_at_echo_bound(&text));
        }
        DataValue::Texts(texts) => {
            out.push(b'[');
            for (n, text) in texts.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                write_string(out, &cut_at_echo_bound(text));
            }
            out.push(b']');
        }
        DataValue::Count(count) => {
            let _ = write!(out, "{count}");
        }
        DataValue::Locations(locations) => {
            out.push(b'[');
            for (n, location) in locations.iter().enumerate() {
                if n > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(b"{\"path\":");
                write_string(out, &cut_at_echo_bound(&location.pointer));
                out.extend_from_slice(b",\"problems\":[");
                for (m, problem) in location.problems.iter().enumerate() {
                    if m > 0 {
                        out.push(b',');
                    }
                    write_string(out, &cut_at_echo_bound(&problem.text));
                }
                out.extend_from_slice(b"]}");
            }
            out.push(b']');
        }
    }
}

pub(crate) fn write_string(out: &mut Vec<u8>, text: &str) {
    // serde_json escapes exactly as JSON requires; a Vec never fails.
    let _ = serde_json::to_writer(&mut *out, text);
}

/// `message` on one line and within [`MAX_MESSAGE_BYTES`].
pub(crate) fn one_line(message: &str) -> String {
    if message.len() <= MAX_MESSAGE_BYTES && !message.chars().any(char::is_control) {
        return message.to_owned();
    }
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
    line
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_envelope_without_id_carries_null_and_data_keys_in_order() {
        let mut out = Vec::new();
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
        let mut out = Vec::new();
        let long = format!("a\nb{}", "x".repeat(10_000));
        write_error(&mut out, None, Condition::InternalError, &long, &[]);
        let value: serde_json::Value = serde_json::from_slice(&out).unwrap();
        let message = value["error"]["message"].as_str().unwrap();
        assert!(!message.contains('\n'));
        assert!(message.len() <= MAX_MESSAGE_BYTES + '…'.len_utf8());
    }
}
