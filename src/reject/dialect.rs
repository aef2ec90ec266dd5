//! Builds the tool-dialect answer (ARCHITECTURE.md, "The value gate"): a `tools/call` result
//! with `isError: true`, `content[0].text` in plain words, and the error
//! envelope in `structuredContent`. Every text in it is bounded; nothing
//! sent is quoted beyond the echo bound.

use bytes::{BufMut, BytesMut};
use serde_json::Value;

use super::codes::{ENVELOPE_VERSION, TOOL_INPUT_ERROR_KIND};
use super::envelope::{escape, escape_bounded, escape_one_line, put_word};
use crate::classify::RequestId;
use crate::distill::within_echo_bound;

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
    // The fixed pieces carry the quotes of the plain text between them,
    // and the envelope's opening.
    out.extend_from_slice(if result_type {
        b",\"result\":{\"resultType\":\"complete\",\"content\":[{\"type\":\"text\",\"text\":\""
    } else {
        b",\"result\":{\"content\":[{\"type\":\"text\",\"text\":\""
    });
    let escaped = put_plain_text(out, error);
    out.extend_from_slice(b"\"}],\"structuredContent\":{\"error_kind\":\"");
    put_envelope(out, error, &escaped);
    out.extend_from_slice(b",\"isError\":true}}");
}

/// The details whose texts the envelope copies from the plain text; one
/// past them is escaped again.
const COPIED_DETAILS: usize = 8;

/// Where a text went in the answer: `start..end`.
type Span = (usize, usize);

/// Where the plain text holds a text of the envelope, escaped as the
/// envelope writes it: the envelope copies those bytes rather than escape
/// the text a second time.
#[derive(Default)]
struct Escaped {
    summary: Span,
    /// A detail's path and issue, where neither was over the echo bound
    /// (the plain text does not cut them; the envelope does).
    details: [Option<(Span, Span)>; COPIED_DETAILS],
    hints: [Span; MAX_HINTS],
}

/// Runs `write` and says where in `out` its bytes went.
fn span(out: &mut BytesMut, write: impl FnOnce(&mut BytesMut)) -> Span {
    let start = out.len();
    write(out);
    (start, out.len())
}

/// A text written before, as a JSON string again.
fn write_copy(out: &mut BytesMut, span: Span) {
    out.put_u8(b'"');
    put_copy(out, span);
    out.put_u8(b'"');
}

/// The inside of [`write_copy`], for fixed pieces that carry the quotes.
fn put_copy(out: &mut BytesMut, (start, end): Span) {
    out.extend_from_within(start..end);
}

/// The text a model reads, the inside of a JSON string: the summary, then
/// one line per problem and hint.
fn put_plain_text(out: &mut BytesMut, error: &ToolError<'_>) -> Escaped {
    let mut escaped = Escaped {
        summary: span(out, |out| escape_one_line(out, error.summary)),
        ..Escaped::default()
    };
    for (n, detail) in error.details.iter().enumerate() {
        // Fixed words are written as they are escaped.
        out.extend_from_slice(b"\\n- ");
        let path = if detail.path.is_empty() {
            out.extend_from_slice(b"arguments");
            None
        } else {
            Some(span(out, |out| escape(out, detail.path)))
        };
        out.extend_from_slice(b": ");
        let issue = span(out, |out| escape(out, detail.issue));
        if let (Some(slot), Some(path)) = (escaped.details.get_mut(n), path)
            && !within_echo_bound(detail.path).1
            && !within_echo_bound(detail.issue).1
        {
            *slot = Some((path, issue));
        }
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
    for (slot, hint) in escaped.hints.iter_mut().zip(error.hints) {
        out.extend_from_slice(b"\\nHint: ");
        *slot = span(out, |out| escape_bounded(out, hint));
    }
    escaped
}

/// The envelope, after its opening `{"error_kind":"` (which the answer's
/// piece before it carries).
fn put_envelope(out: &mut BytesMut, error: &ToolError<'_>, escaped: &Escaped) {
    // The fixed pieces carry the quotes of the strings between them: a
    // detail is thirteen writes, not twenty-five.
    put_word(out, TOOL_INPUT_ERROR_KIND);
    out.extend_from_slice(b"\",\"tool\":\"");
    escape_bounded(out, error.tool);
    out.extend_from_slice(b"\",\"summary\":\"");
    // As `write_one_line` writes it, escaped once already.
    put_copy(out, escaped.summary);
    out.extend_from_slice(b"\",\"details\":[");
    for (n, detail) in error.details.iter().enumerate() {
        out.extend_from_slice(if n > 0 {
            b",{\"path\":\""
        } else {
            b"{\"path\":\""
        });
        let copied = escaped.details.get(n).copied().flatten();
        match copied {
            Some((path, _)) => put_copy(out, path),
            None => escape_bounded(out, detail.path),
        }
        out.extend_from_slice(b"\",\"pointer\":\"");
        escape_bounded(out, detail.pointer);
        out.extend_from_slice(b"\",\"issue\":\"");
        match copied {
            Some((_, issue)) => put_copy(out, issue),
            None => escape_bounded(out, detail.issue),
        }
        out.extend_from_slice(b"\",\"received_type\":\"");
        put_word(out, detail.received_type);
        out.extend_from_slice(b"\",\"keyword\":\"");
        put_word(out, detail.keyword);
        out.extend_from_slice(b"\",\"error_code\":\"");
        put_word(out, detail.error_code);
        out.extend_from_slice(b"\"}");
    }
    out.extend_from_slice(b"],\"hints\":[");
    // As `write_bounded` writes them, escaped once already.
    for (n, hint) in escaped.hints.iter().take(error.hints.len()).enumerate() {
        if n > 0 {
            out.put_u8(b',');
        }
        write_copy(out, *hint);
    }
    out.extend_from_slice(b"],\"examples\":[");
    out.extend_from_slice(error.examples);
    out.extend_from_slice(b"],\"error_code\":\"");
    put_word(out, error.error_code);
    if let Some(events) = error.normalized {
        out.extend_from_slice(b"\",\"_meta\":{\"normalized\":");
        out.extend_from_slice(events);
        out.extend_from_slice(b"},\"retryable\":false,\"_envelope_version\":");
    } else {
        out.extend_from_slice(b"\",\"retryable\":false,\"_envelope_version\":");
    }
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
    use crate::reject::envelope::{write_bounded, write_one_line};

    /// A text as `write` writes it alone, read back.
    fn alone(write: fn(&mut BytesMut, &str), text: &str) -> Value {
        let mut out = BytesMut::new();
        write(&mut out, text);
        serde_json::from_slice(&out).unwrap()
    }

    #[test]
    fn texts_copied_from_the_plain_text_read_as_if_written_again() {
        let long = format!("{}\"end", "q\"".repeat(crate::distill::ECHO_BOUND));
        let texts = [
            "plain",
            "quote \" back\\slash",
            "line\nend\ttab\u{1}",
            long.as_str(),
            "",
            "é and 日本",
        ];
        // More details than are copied, each text against every other.
        let details: Vec<Detail<'_>> = (0..COPIED_DETAILS + 4)
            .map(|n| Detail {
                path: texts[n % texts.len()],
                pointer: texts[(n + 1) % texts.len()],
                issue: texts[(n + 2) % texts.len()],
                received_type: "string",
                keyword: "type",
                error_code: "SCHEMA_TYPE_MISMATCH",
            })
            .collect();
        let hints: Vec<&str> = texts.iter().copied().cycle().take(MAX_HINTS + 2).collect();
        for summary in texts {
            let error = ToolError {
                tool: "t",
                summary,
                details: &details,
                total: details.len(),
                hints: &hints,
                examples: b"",
                error_code: "SCHEMA_TYPE_MISMATCH",
                normalized: None,
            };
            let mut out = BytesMut::new();
            write_tool_error(&mut out, None, false, &error);
            let value: Value = serde_json::from_slice(&out).unwrap();
            let envelope = &value["result"]["structuredContent"];
            assert_eq!(envelope["summary"], alone(write_one_line, summary));
            for (n, detail) in details.iter().enumerate() {
                let written = &envelope["details"][n];
                assert_eq!(written["path"], alone(write_bounded, detail.path), "{n}");
                assert_eq!(
                    written["pointer"],
                    alone(write_bounded, detail.pointer),
                    "{n}"
                );
                assert_eq!(written["issue"], alone(write_bounded, detail.issue), "{n}");
            }
            let expected: Vec<Value> = hints
                .iter()
                .take(MAX_HINTS)
                .map(|hint| alone(write_bounded, hint))
                .collect();
            assert_eq!(envelope["hints"], Value::Array(expected));
            // The plain text holds each issue whole.
            let text = value["result"]["content"][0]["text"].as_str().unwrap();
            assert!(text.contains(&long), "an issue is cut in the plain text");
        }
    }

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
