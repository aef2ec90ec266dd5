//! Stage 3: tag a parsed body once (ARCHITECTURE.md, "Classification"); later stages branch on
//! the tag. No allocation, except the echo-ready copy of a request id.

use smallvec::SmallVec;

use crate::distill::ECHO_BOUND;
use crate::parse::{NodeKind, TapeNode};

/// What a body is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `method` is a string and `id` a request id: the only kind whose id
    /// is echoed.
    Request,
    /// `method` is a string and `id` is present but not a request id.
    UnidentifiedRequest,
    /// `method` is a string and there is no `id`.
    Notification,
    /// A client's answer to a server request: `id` beside `result`.
    Result,
    /// A client's error answer to a server request: `error`, no `method`.
    Error,
    /// Anything else.
    Unknown,
}

impl Kind {
    /// Its name in logs and metric labels (`"request"`, `"notification"`, …).
    pub const fn as_str(self) -> &'static str {
        match self {
            Kind::Request => "request",
            Kind::UnidentifiedRequest => "unidentified_request",
            Kind::Notification => "notification",
            Kind::Result => "result",
            Kind::Error => "error",
            Kind::Unknown => "unknown",
        }
    }
}

/// A request id as the JSON text an answer repeats (a string literal or
/// an integer), at most the echo bound long.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RequestId(SmallVec<[u8; RequestId::INLINE]>);

impl RequestId {
    /// Bytes of id text held without an allocation: a quoted UUID fits.
    const INLINE: usize = 40;

    /// The id as JSON text, ready to be written into an answer's `id`.
    pub fn json(&self) -> &[u8] {
        &self.0
    }

    /// The id of a request, if `node` is one (a string, or a number with an
    /// integral value that fits 64 bits). A string over the echo bound is
    /// still an id but is not repeated: `Some(None)`.
    fn read(node: TapeNode<'_>) -> Option<Option<RequestId>> {
        match node.kind() {
            NodeKind::String => {
                let text = node.as_str()?;
                if text.len() > ECHO_BOUND {
                    return Some(None);
                }
                let mut out = SmallVec::new();
                if text.bytes().all(|b| b >= 0x20 && b != b'"' && b != b'\\') {
                    // Nothing to escape: the common id, written as is, and
                    // where it fits inline written in place (`SmallVec`'s
                    // `extend_from_slice` moves what follows first: one
                    // more call than the copy).
                    if text.len() + 2 <= RequestId::INLINE {
                        let mut buf = [0u8; RequestId::INLINE];
                        buf[1..=text.len()].copy_from_slice(text.as_bytes());
                        buf[0] = b'"';
                        buf[text.len() + 1] = b'"';
                        return Some(Some(RequestId(SmallVec::from_buf_and_len(
                            buf,
                            text.len() + 2,
                        ))));
                    }
                    out.push(b'"');
                    out.extend_from_slice(text.as_bytes());
                    out.push(b'"');
                } else {
                    serde_json::to_writer(&mut SmallWriter(&mut out), text).ok()?;
                }
                Some(Some(RequestId(out)))
            }
            NodeKind::Number if node.is_integer() => {
                // `itoa`: `core::fmt`'s machinery is heavy for a stage
                // this small.
                let mut digits = itoa::Buffer::new();
                let text = match node.as_i64() {
                    Some(n) => digits.format(n),
                    None => digits.format(node.as_u64()?),
                };
                Some(Some(RequestId(SmallVec::from_slice(text.as_bytes()))))
            }
            _ => None,
        }
    }
}

struct SmallWriter<'a>(&'a mut SmallVec<[u8; RequestId::INLINE]>);

impl std::io::Write for SmallWriter<'_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A classified body.
#[derive(Clone, Debug)]
pub struct Classified<'p> {
    pub kind: Kind,
    /// The method, for requests, unidentified requests and notifications.
    pub method: Option<&'p str>,
    /// `params`, when present.
    pub params: Option<TapeNode<'p>>,
    /// The members of `params` later stages read, found in the same pass.
    pub members: ParamsMembers<'p>,
    /// Whether `jsonrpc` is the string `"2.0"` (the schema stage's to
    /// refuse otherwise; see `dispatch::Prechecks`).
    pub jsonrpc_2_0: bool,
    /// The id to echo: only ever read through [`Classified::echoed_id`].
    id: Option<RequestId>,
}

impl<'p> Classified<'p> {
    /// The id echo rule, in one place: only a request has its id repeated.
    pub fn echoed_id(&self) -> Option<&RequestId> {
        self.id.as_ref().filter(|_| self.kind == Kind::Request)
    }

    /// [`Classified::echoed_id`], moved out rather than copied.
    pub fn into_echoed_id(self) -> Option<RequestId> {
        self.echoed_id()?;
        self.id
    }
}

/// The members of `params` that the lane, binding and value stages read,
/// each `None` when absent or when `params` is not an object. One pass over
/// `params` finds them all, rather than one lookup per stage.
#[derive(Clone, Copy, Debug, Default)]
pub struct ParamsMembers<'p> {
    /// `name` (`tools/call`, `prompts/get`).
    pub name: Option<TapeNode<'p>>,
    /// `uri` (`resources/read`).
    pub uri: Option<TapeNode<'p>>,
    /// `_meta`.
    pub meta: Option<TapeNode<'p>>,
    /// `arguments` (`tools/call`).
    pub arguments: Option<TapeNode<'p>>,
    /// A member spelled like one of those above but in another case
    /// (`Arguments`, `NAME`): an upstream that matches names loosely could
    /// read it in place of the one the gate checked, so the gate refuses
    /// the message. The first such key, as sent.
    pub aliased: Option<&'p str>,
}

impl<'p> ParamsMembers<'p> {
    fn read(params: TapeNode<'p>) -> Self {
        let mut found = ParamsMembers::default();
        for (key, value) in params.members() {
            match key {
                "name" => found.name = Some(value),
                "uri" => found.uri = Some(value),
                "_meta" => found.meta = Some(value),
                "arguments" => found.arguments = Some(value),
                other => {
                    if found.aliased.is_none() && is_alias(other) {
                        found.aliased = Some(other);
                    }
                }
            }
        }
        found
    }
}

/// A key naming a member [`ParamsMembers`] reads, in another case (the
/// exact names are matched before): a length test first, so that other
/// keys cost one comparison.
fn is_alias(key: &str) -> bool {
    matches!(key.len(), 3 | 4 | 5 | 9)
        && ["name", "uri", "_meta", "arguments"]
            .iter()
            .any(|member| member.eq_ignore_ascii_case(key))
}

/// Tags a parsed body's root.
pub fn classify<'p>(root: TapeNode<'p>) -> Classified<'p> {
    let unknown = Classified {
        kind: Kind::Unknown,
        method: None,
        params: None,
        members: ParamsMembers::default(),
        jsonrpc_2_0: false,
        id: None,
    };
    if root.kind() != NodeKind::Object {
        return unknown;
    }
    let mut method = None;
    let mut id = None;
    let mut params = None;
    let mut has_result = false;
    let mut has_error = false;
    let mut method_present = false;
    let mut jsonrpc_2_0 = false;
    for (key, value) in root.members() {
        match key {
            "jsonrpc" => jsonrpc_2_0 = value.as_str() == Some("2.0"),
            "method" => {
                method_present = true;
                method = value.as_str();
            }
            "id" => id = Some(value),
            "params" => params = Some(value),
            "result" => has_result = true,
            "error" => has_error = true,
            _ => {}
        }
    }
    if let Some(method) = method {
        let members = params.map(ParamsMembers::read).unwrap_or_default();
        return match id {
            None => Classified {
                kind: Kind::Notification,
                method: Some(method),
                params,
                members,
                jsonrpc_2_0,
                id: None,
            },
            Some(id) => match RequestId::read(id) {
                Some(echo) => Classified {
                    kind: Kind::Request,
                    method: Some(method),
                    params,
                    members,
                    jsonrpc_2_0,
                    id: echo,
                },
                None => Classified {
                    kind: Kind::UnidentifiedRequest,
                    method: Some(method),
                    params,
                    members,
                    jsonrpc_2_0,
                    id: None,
                },
            },
        };
    }
    if method_present {
        return unknown;
    }
    match (has_result, has_error) {
        (true, false) if id.is_some() => Classified {
            kind: Kind::Result,
            jsonrpc_2_0,
            ..unknown
        },
        (false, true) => Classified {
            kind: Kind::Error,
            jsonrpc_2_0,
            ..unknown
        },
        _ => unknown,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{ParseLimits, Parser};

    /// The id `classify` echoes for a request whose `id` is `id` (JSON).
    fn echoed(id: &str) -> Option<Vec<u8>> {
        let body = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"ping"}}"#);
        let mut parser = Parser::new();
        let document = parser
            .parse(body.as_bytes(), ParseLimits::default())
            .expect("the body parses");
        classify(document.root())
            .into_echoed_id()
            .map(|id| id.json().to_vec())
    }

    #[test]
    fn a_string_id_is_echoed_as_its_json_text_at_every_length_up_to_the_echo_bound() {
        // Around the inline room (38 bytes of text and its quotes) and
        // around the echo bound.
        for len in [0, 1, 6, 37, 38, 39, 40, 127, ECHO_BOUND] {
            let text = "k".repeat(len);
            let id = format!("\"{text}\"");
            assert_eq!(echoed(&id), Some(id.clone().into_bytes()), "{len} bytes");
        }
        assert_eq!(echoed(&format!("\"{}\"", "k".repeat(ECHO_BOUND + 1))), None);
    }

    #[test]
    fn a_string_id_that_needs_escapes_is_echoed_escaped() {
        assert_eq!(echoed(r#""a\"b\u0001""#), Some(br#""a\"b\u0001""#.to_vec()));
    }

    #[test]
    fn an_integer_id_is_echoed_as_its_digits() {
        assert_eq!(echoed("-42"), Some(b"-42".to_vec()));
        assert_eq!(
            echoed("18446744073709551615"),
            Some(b"18446744073709551615".to_vec())
        );
        assert_eq!(echoed("1.5"), None);
    }
}
