//! CORS, for MCP clients running in a browser page: a preflight on the
//! endpoint or the OAuth metadata path from an allowed origin is answered
//! 204 with what the page may send, and every answer on those paths to a
//! request from an allowed origin names that origin as one that may read
//! it. The allowed origins are the wire check's (`allowed_origins`, `*`,
//! the loopback ones); a request without `Origin` (a server-to-server
//! client) is not looked at.
//!
//! The origin is echoed, never `*`, and `Access-Control-Allow-Credentials`
//! is never sent: the gateway's credentials are bearer tokens a page sends
//! in `Authorization` itself, not cookies the browser would attach.

use crate::catalog::header_params::{HEADER_PREFIX, is_token};
use crate::reject::Reason;
use crate::server::{Head, Response};
use crate::service::wire::WirePolicy;

/// The request headers an MCP client sends, on every revision's
/// transport, besides the `Mcp-Param-*` names a preflight asks for.
const ALLOW_HEADERS: &str = "Content-Type, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID";
/// The answer headers a page's script may read beyond the safelisted ones:
/// the session, the revision, and an OAuth challenge.
const EXPOSE_HEADERS: &str = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";
/// How long a browser may reuse a preflight's answer, in seconds: short
/// enough that a changed `allowed_origins` reaches pages soon.
const MAX_AGE: &str = "600";
/// A preflight's answer depends on all three.
const PREFLIGHT_VARY: &str =
    "Origin, Access-Control-Request-Method, Access-Control-Request-Headers";

/// The names an upstream's own CORS headers start with.
const UPSTREAM_PREFIX: &[u8] = b"access-control-";

/// The request's `Origin`, when the wire rule allows it: the origin its
/// answers are marked readable for. Looked for only when the head parser
/// saw one.
pub(crate) fn allowed_origin<'h>(wire: &WirePolicy, head: &'h Head<'_>) -> Option<&'h str> {
    if !head.seen.origin {
        return None;
    }
    let origin = head.header("Origin")?;
    if !wire.origin_allowed(origin) {
        return None;
    }
    std::str::from_utf8(origin).ok()
}

/// A CORS preflight: an `OPTIONS` carrying `Origin` and
/// `Access-Control-Request-Method`. Any other `OPTIONS` is a request of
/// its own (answered 405, without CORS headers).
pub(crate) fn is_preflight(head: &Head<'_>) -> bool {
    head.method == "OPTIONS"
        && head.seen.origin
        && head.header("Access-Control-Request-Method").is_some()
}

/// Adds to an answer what lets the page of `origin` read it.
pub(crate) fn mark(response: &mut Response, origin: &str) {
    let headers = &mut response.headers;
    headers.push(("Access-Control-Allow-Origin", origin.to_owned()));
    headers.push(("Access-Control-Expose-Headers", EXPOSE_HEADERS.to_owned()));
    headers.push(("Vary", "Origin".to_owned()));
}

/// A forwarded answer's headers (each `Name: value\r\n`) for the page of
/// `origin`: the upstream's own `Access-Control-*` headers dropped (which
/// pages may read an answer is the gateway's to say, not a server's that
/// knows nothing of `allowed_origins`), and the gateway's added.
///
/// Answers to requests without `Origin` are relayed as they come: a
/// browser sends `Origin` on every cross-origin request it lets a page
/// read, so those answers reach no page through CORS.
pub(crate) fn mark_relayed(headers: &mut Vec<u8>, origin: &str) {
    let mut at = 0;
    while let Some(eol) = headers[at..].iter().position(|&b| b == b'\n') {
        let end = at + eol + 1;
        let line = &headers[at..end];
        if line
            .get(..UPSTREAM_PREFIX.len())
            .is_some_and(|name| name.eq_ignore_ascii_case(UPSTREAM_PREFIX))
        {
            headers.drain(at..end);
        } else {
            at = end;
        }
    }
    for (name, value) in [
        ("Access-Control-Allow-Origin", origin),
        ("Access-Control-Expose-Headers", EXPOSE_HEADERS),
        ("Vary", "Origin"),
    ] {
        headers.extend_from_slice(name.as_bytes());
        headers.extend_from_slice(b": ");
        headers.extend_from_slice(value.as_bytes());
        headers.extend_from_slice(b"\r\n");
    }
}

/// A preflight refused: no CORS headers, so the browser stops there.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Refused {
    pub reason: Reason,
    pub message: &'static str,
}

/// The answer to a preflight ([`is_preflight`]) on a path taking
/// `methods` (`, `-separated, `OPTIONS` last): 204 with the CORS headers,
/// or refused: an origin the wire rule does not allow (403), a body (400:
/// a preflight has none, and nothing of it may reach the gate), a method
/// the path does not take (405).
pub(crate) fn preflight(
    wire: &WirePolicy,
    head: &Head<'_>,
    methods: &'static str,
    carries_body: bool,
) -> Result<Response, Refused> {
    let Some(origin) = allowed_origin(wire, head) else {
        return Err(Refused {
            reason: Reason::OriginNotAllowed,
            message: "Forbidden: the Origin is not allowed",
        });
    };
    if carries_body {
        return Err(Refused {
            reason: Reason::BodyNotAllowed,
            message: "Bad Request: an OPTIONS request may not carry a body",
        });
    }
    let asked = head
        .header("Access-Control-Request-Method")
        .unwrap_or_default()
        .trim_ascii();
    if !takes(methods, asked) {
        return Err(Refused {
            reason: Reason::MethodNotAllowed,
            message: "Method Not Allowed: the preflight asks for a method this path does not take",
        });
    }
    let mut response = Response::empty(204);
    let headers = &mut response.headers;
    headers.push(("Access-Control-Allow-Origin", origin.to_owned()));
    headers.push(("Access-Control-Allow-Methods", methods.to_owned()));
    headers.push((
        "Access-Control-Allow-Headers",
        allow_headers(head.header("Access-Control-Request-Headers")),
    ));
    headers.push(("Access-Control-Expose-Headers", EXPOSE_HEADERS.to_owned()));
    headers.push(("Access-Control-Max-Age", MAX_AGE.to_owned()));
    headers.push(("Vary", PREFLIGHT_VARY.to_owned()));
    Ok(response)
}

/// Whether `method`, as a preflight names it, is one of `methods` (which
/// end with `OPTIONS`, never preflighted). Compared exactly: a browser
/// sends the standard methods in upper case.
fn takes(methods: &str, method: &[u8]) -> bool {
    method != b"OPTIONS"
        && methods
            .split(", ")
            .any(|listed| listed.as_bytes() == method)
}

/// [`ALLOW_HEADERS`] and each `Mcp-Param-*` name the preflight asks for:
/// a mirrored argument's header is named by the tool's annotation, so the
/// list cannot be fixed. Only names the gateway would take are echoed: an
/// HTTP token with the prefix spelled exactly (`Mcp_Param-x` is refused as
/// a request header, so it is not offered here).
fn allow_headers(requested: Option<&[u8]>) -> String {
    let mut allowed = String::from(ALLOW_HEADERS);
    for name in requested.unwrap_or_default().split(|&b| b == b',') {
        let Ok(name) = std::str::from_utf8(name.trim_ascii()) else {
            continue;
        };
        let mirrored = name.len() > HEADER_PREFIX.len()
            && name.as_bytes()[..HEADER_PREFIX.len()]
                .eq_ignore_ascii_case(HEADER_PREFIX.as_bytes());
        if mirrored && is_token(name) {
            allowed.push_str(", ");
            allowed.push_str(name);
        }
    }
    allowed
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mcp_param_tokens_a_preflight_asks_for_are_added_to_the_allowed_headers() {
        assert_eq!(allow_headers(None), ALLOW_HEADERS);
        let allowed = allow_headers(Some(
            b"content-type, mcp-param-region,MCP-PARAM-Order_Id , mcp-param-, mcp_param-x, \
              mcp-param-a b, x-other, mcp-param-\xff",
        ));
        assert_eq!(
            allowed,
            format!("{ALLOW_HEADERS}, mcp-param-region, MCP-PARAM-Order_Id")
        );
    }

    #[test]
    fn a_preflight_may_ask_for_the_methods_the_path_takes_but_options() {
        let methods = "GET, POST, DELETE, OPTIONS";
        for fine in ["GET", "POST", "DELETE"] {
            assert!(takes(methods, fine.as_bytes()), "{fine}");
        }
        for refused in ["OPTIONS", "TRACE", "post", "PUT", "", "GET, POST"] {
            assert!(!takes(methods, refused.as_bytes()), "{refused}");
        }
        assert!(!takes("POST, OPTIONS", b"GET"));
    }

    #[test]
    fn a_relayed_answer_loses_the_upstreams_cors_headers_and_gets_the_gateways() {
        let mut headers = b"Content-Type: application/json\r\n\
            Access-Control-Allow-Origin: *\r\n\
            access-control-allow-credentials: true\r\n\
            Mcp-Session-Id: s\r\n\
            ACCESS-CONTROL-EXPOSE-HEADERS: X-Secret\r\n\
            Vary: Accept\r\n"
            .to_vec();
        mark_relayed(&mut headers, "http://localhost:5173");
        assert_eq!(
            String::from_utf8(headers).unwrap(),
            format!(
                "Content-Type: application/json\r\nMcp-Session-Id: s\r\nVary: Accept\r\n\
                 Access-Control-Allow-Origin: http://localhost:5173\r\n\
                 Access-Control-Expose-Headers: {EXPOSE_HEADERS}\r\nVary: Origin\r\n"
            )
        );
    }
}
