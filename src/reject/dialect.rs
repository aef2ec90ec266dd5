//! Builds the tool-dialect answer (ARCHITECTURE.md, "The value gate"): a `tools/call` result
//! with `isError: true`, `content[0].text` in plain words, and the error
//! envelope in `structuredContent`. Every text in it is bounded; nothing
//! sent is quoted beyond the echo bound.

use bytes::{BufMut, BytesMut};
use serde_json::Value;

use super::codes::{ENVELOPE_VERSION, TOOL_INPUT_ERROR_KIND};
use super::envelope::{
    escape, escape_bounded, escape_one_line, write_bounded, write_one_line, write_word,
};
use crate::classify::RequestId;

/// Hints sent at most.
pub const MAX_HINTS: usize = 5;
/// Examples of valid input sent at most.
pub const MAX_EXAMPLES: usize = 3;
/// The largest example of valid input sent (bytes).
pub const MAX_EXAMPLE_BYTES: usize = 1024;

/// What the envelope says, borrowed (its texts built where the caller
/// keeps them, a per-thread arena for a refusal); texts are cut when
/// written.
#[derive(Debug, Clone, Default)]
pub struct ToolError<'a> {
    /// The tool's name (from the catalog).
    pub tool: &'a str,
    /// One line: what is wrong, how much of it.
    pub summary: &'a str,
    pub details: &'a [Detail<'a>],
    /// Distinct locations with a problem, reported or not.
    pub total: usize,
    pub hints: &'a [&'a str],
    /// Valid inputs the tool's schema gives as `examples`, written once
    /// when the tool is registered ([`examples_json`]).
    pub examples: &'a [u8],
    /// The `error_code` of the first detail.
    pub error_code: &'static str,
    /// `_meta.normalized`: the events of the call's normalization, a JSON
    /// array ([`super::normalized::render`]), when they are to be told.
    pub normalized: Option<&'a [u8]>,
}

/// One problem at one location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Detail<'a> {
    /// Dotted path under `arguments` (`filters.region`, `items[3].sku`),
    /// empty for the arguments object itself.
    pub path: &'a str,
    /// The same location as an RFC 6901 pointer under `arguments`.
    pub pointer: &'a str,
    pub issue: &'a str,
    pub received_type: &'static str,
    /// The JSON Schema keyword that refused the value.
    pub keyword: &'static str,
    pub error_code: &'static str,
}

/// Writes the JSON-RPC answer carrying `error`. `result_type`: the
/// 2026-07-28 lane requires `resultType` on every result.
pub fn write_tool_error(
    out: &mut BytesMut,
    id: Option<&RequestId>,
    result_type: bool,
    error: &ToolError<'_>,
) {
    out.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":");
    match id {
        Some(id) => out.extend_from_slice(id.json()),
        None => out.extend_from_slice(b"null"),
    }
    out.extend_from_slice(b",\"result\":{");
    if result_type {
        out.extend_from_slice(b"\"resultType\":\"complete\",");
    }
    out.extend_from_slice(b"\"content\":[{\"type\":\"text\",\"text\":");
    write_plain_text(out, error);
    out.extend_from_slice(b"}],\"structuredContent\":");
    write_envelope(out, error);
    out.extend_from_slice(b",\"isError\":true}}");
}

/// The text a model reads, as a JSON string: the summary, then one line
/// per problem and hint.
fn write_plain_text(out: &mut BytesMut, error: &ToolError<'_>) {
    out.put_u8(b'"');
    escape_one_line(out, error.summary);
    for detail in error.details {
        // Fixed words are written as they are escaped.
        out.extend_from_slice(b"\\n- ");
        if detail.path.is_empty() {
            out.extend_from_slice(b"arguments");
        } else {
            escape(out, detail.path);
        }
        out.extend_from_slice(b": ");
        escape(out, detail.issue);
    }
    // The distinct locations shown (a handful: no set needed).
    let shown = error
        .details
        .iter()
        .enumerate()
        .filter(|(n, d)| !error.details[..*n].iter().any(|e| e.pointer == d.pointer))
        .count();
    let unshown = error.total.saturating_sub(shown);
    if unshown > 0 {
        out.extend_from_slice(b"\\n- and problems at ");
        out.extend_from_slice(itoa::Buffer::new().format(unshown).as_bytes());
        out.extend_from_slice(if unshown == 1 {
            b" more location"
        } else {
            b" more locations"
        });
    }
    for hint in error.hints.iter().take(MAX_HINTS) {
        out.extend_from_slice(b"\\nHint: ");
        escape_bounded(out, hint);
    }
    out.put_u8(b'"');
}

fn write_envelope(out: &mut BytesMut, error: &ToolError<'_>) {
    out.extend_from_slice(b"{\"error_kind\":");
    write_word(out, TOOL_INPUT_ERROR_KIND);
    out.extend_from_slice(b",\"tool\":");
    write_bounded(out, error.tool);
    out.extend_from_slice(b",\"summary\":");
    write_one_line(out, error.summary);
    out.extend_from_slice(b",\"details\":[");
    for (n, detail) in error.details.iter().enumerate() {
        if n > 0 {
            out.put_u8(b',');
        }
        out.extend_from_slice(b"{\"path\":");
        write_bounded(out, detail.path);
        out.extend_from_slice(b",\"pointer\":");
        write_bounded(out, detail.pointer);
        out.extend_from_slice(b",\"issue\":");
        write_bounded(out, detail.issue);
        out.extend_from_slice(b",\"received_type\":");
        write_word(out, detail.received_type);
        out.extend_from_slice(b",\"keyword\":");
        write_word(out, detail.keyword);
        out.extend_from_slice(b",\"error_code\":");
        write_word(out, detail.error_code);
        out.put_u8(b'}');
    }
    out.extend_from_slice(b"],\"hints\":[");
    for (n, hint) in error.hints.iter().take(MAX_HINTS).enumerate() {
        if n > 0 {
            out.put_u8(b',');
        }
        write_bounded(out, hint);
    }
    out.extend_from_slice(b"],\"examples\":[");
    out.extend_from_slice(error.examples);
    out.extend_from_slice(b"],\"error_code\":");
    write_word(out, error.error_code);
    if let Some(events) = error.normalized {
        out.extend_from_slice(b",\"_meta\":{\"normalized\":");
        out.extend_from_slice(events);
        out.put_u8(b'}');
    }
    out.extend_from_slice(b",\"retryable\":false,\"_envelope_version\":");
    out.extend_from_slice(itoa::Buffer::new().format(ENVELOPE_VERSION).as_bytes());
    out.extend_from_slice(b",\"total\":");
    out.extend_from_slice(itoa::Buffer::new().format(error.total).as_bytes());
    out.put_u8(b'}');
}

/// The inside of the envelope's `examples` array for a tool's schema
/// `examples`: at most [`MAX_EXAMPLES`], each at most
/// [`MAX_EXAMPLE_BYTES`] written (a longer one is left out). Schema words,
/// not sent data, but bounded all the same; written once per tool.
pub fn examples_json(examples: &[Value]) -> Box<[u8]> {
    let mut out = Vec::new();
    let mut written = 0;
    for example in examples {
        if written == MAX_EXAMPLES {
            break;
        }
        let Ok(json) = serde_json::to_vec(example) else {
            continue;
        };
        if json.len() > MAX_EXAMPLE_BYTES {
            continue;
        }
        if written > 0 {
            out.push(b',');
        }
        out.extend_from_slice(&json);
        written += 1;
    }
    out.into_boxed_slice()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_answer_is_a_tool_result_with_the_envelope() {
        let error = ToolError {
            tool: "search",
            summary: "Invalid arguments for tool search: expected integer, found string at limit",
            details: &[Detail {
                path: "limit",
                pointer: "/limit",
                issue: "expected integer, found string",
                received_type: "string",
                keyword: "type",
                error_code: "SCHEMA_TYPE_MISMATCH",
            }],
            total: 1,
            hints: &["Send a value of the schema-declared type for limit."],
            examples: &examples_json(&[
                serde_json::json!({"limit": 5}),
                serde_json::json!("x".repeat(MAX_EXAMPLE_BYTES)),
            ]),
            error_code: "SCHEMA_TYPE_MISMATCH",
            normalized: Some(b"[{\"kind\":\"coerced\"}]"),
        };
        let mut out = BytesMut::new();
        write_tool_error(&mut out, None, true, &error);
        let value: Value = serde_json::from_slice(&out).unwrap();
        let result = &value["result"];
        assert_eq!(result["isError"], true);
        assert_eq!(result["resultType"], "complete");
        assert_eq!(
            result["structuredContent"]["details"][0]["path"],
            Value::from("limit")
        );
        let text = result["content"][0]["text"].as_str().unwrap();
        assert!(text.contains("- limit: expected integer, found string"));
        assert!(text.contains("Hint: Send a value"));
        assert_eq!(
            result["structuredContent"]["_meta"]["normalized"][0]["kind"],
            "coerced"
        );
        // The example over the bound is left out.
        assert_eq!(
            result["structuredContent"]["examples"],
            serde_json::json!([{"limit": 5}])
        );
    }
}
