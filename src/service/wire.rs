//! Stage 1, the wire: what a request's head must be before its body is
//! read — the method, the `Origin` (DNS rebinding), bearer auth, the
//! content type and what the client accepts.

use std::sync::Arc;

use crate::gate::RequestHeaders;
use crate::reject::Reason;
use crate::service::oauth::{self, OAuth};

/// Who may call, and from where.
#[derive(Clone, Debug, Default)]
pub struct WirePolicy {
    /// Origins allowed besides the loopback ones (`scheme://host[:port]`,
    /// compared exactly); `*` allows any.
    pub allowed_origins: Vec<String>,
    /// Accepted bearer tokens; none: no auth.
    pub bearer_tokens: Vec<String>,
    /// Access tokens verified as an OAuth resource server (then
    /// `bearer_tokens` is empty).
    pub oauth: Option<Arc<OAuth>>,
}

/// A refusal of the wire stage: the reason and the one-line cause.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct WireRefusal {
    pub reason: Reason,
    pub message: &'static str,
}

impl WirePolicy {
    /// The checks of an MCP message's head, in order: origin, auth, content
    /// type, content coding, accept. The method is the route's to check.
    pub fn check(&self, headers: &(impl RequestHeaders + ?Sized)) -> Result<(), WireRefusal> {
        self.check_access(headers)?;
        if !headers
            .header("Content-Type")
            .is_some_and(is_json_media_type)
        {
            return Err(WireRefusal {
                reason: Reason::UnsupportedMediaType,
                message: "Unsupported Media Type: Content-Type must be application/json",
            });
        }
        if headers
            .header("Content-Encoding")
            .is_some_and(|value| !is_identity_coding(value))
        {
            return Err(WireRefusal {
                reason: Reason::UnsupportedContentEncoding,
                message: "Unsupported Media Type: the body must be sent without a Content-Encoding (the gateway checks it as sent)",
            });
        }
        if !headers.header("Accept").is_some_and(accepts_json_and_sse) {
            return Err(WireRefusal {
                reason: Reason::NotAcceptable,
                message: "Not Acceptable: Accept must allow application/json and text/event-stream",
            });
        }
        Ok(())
    }

    /// The checks of a legacy-lane GET (the server's event stream) or
    /// DELETE (the end of a session) on the endpoint: origin, auth, and for
    /// a GET an `Accept` that admits `text/event-stream`.
    pub fn check_stream(
        &self,
        headers: &(impl RequestHeaders + ?Sized),
        get: bool,
    ) -> Result<(), WireRefusal> {
        self.check_access(headers)?;
        if get && !headers.header("Accept").is_some_and(accepts_sse) {
            return Err(WireRefusal {
                reason: Reason::NotAcceptable,
                message: "Not Acceptable: Accept must allow text/event-stream",
            });
        }
        Ok(())
    }

    /// Origin, then auth.
    fn check_access(&self, headers: &(impl RequestHeaders + ?Sized)) -> Result<(), WireRefusal> {
        if let Some(origin) = headers.header("Origin")
            && !self.origin_allowed(origin)
        {
            return Err(WireRefusal {
                reason: Reason::OriginNotAllowed,
                message: "Forbidden: the Origin is not allowed",
            });
        }
        if let Some(oauth) = &self.oauth {
            return oauth
                .admit(headers.header("Authorization"))
                .map(drop)
                .map_err(|reason| WireRefusal {
                    reason,
                    message: oauth::message(reason),
                });
        }
        if !self.bearer_tokens.is_empty() && !self.authorized(headers.header("Authorization")) {
            return Err(WireRefusal {
                reason: Reason::Unauthorized,
                message: "Unauthorized: a valid bearer token is required",
            });
        }
        Ok(())
    }

    /// Whether requests must carry a bearer token or an OAuth access token.
    pub fn authenticates(&self) -> bool {
        self.oauth.is_some() || !self.bearer_tokens.is_empty()
    }

    /// Whether the gateway checks `Authorization` itself (then it is not
    /// passed on: the token is the gateway's, not the upstream's; an OAuth
    /// token only where `oauth_forward_authorization` says so).
    pub fn consumes_authorization(&self) -> bool {
        match &self.oauth {
            Some(oauth) => !oauth.config.forward_authorization,
            None => !self.bearer_tokens.is_empty(),
        }
    }

    /// The `Origin` rule: a loopback origin, one of `allowed_origins`
    /// (compared exactly), or any with `*`.
    pub(crate) fn origin_allowed(&self, origin: &[u8]) -> bool {
        let Ok(origin) = std::str::from_utf8(origin) else {
            return false;
        };
        is_loopback_origin(origin)
            || self
                .allowed_origins
                .iter()
                .any(|allowed| allowed == "*" || allowed == origin)
    }

    fn authorized(&self, header: Option<&[u8]>) -> bool {
        let Some(token) = header.and_then(|h| bearer_token(h)) else {
            return false;
        };
        // Every token compared in full: the time taken does not tell how
        // much of a guess was right.
        self.bearer_tokens.iter().fold(false, |found, known| {
            found | constant_time_eq(known.as_bytes(), token)
        })
    }
}

/// Whether a query string holds an `access_token` parameter (any case,
/// percent-escapes in its name decoded, `&` or `;` between parameters):
/// OAuth 2.1 keeps tokens out of URIs, which logs and caches keep, and an
/// upstream reading one would find a credential the gateway never checked.
pub fn token_in_query(query: &str) -> bool {
    query
        .split(['&', ';'])
        .any(|parameter| names_access_token(parameter.split('=').next().unwrap_or_default()))
}

/// `name`, percent-decoded, is `access_token` case aside.
fn names_access_token(name: &str) -> bool {
    const TOKEN: &[u8] = b"access_token";
    let mut bytes = name.bytes();
    let mut at = 0;
    while let Some(b) = bytes.next() {
        let b = if b == b'%' {
            let hex = |d: Option<u8>| d.and_then(|d| (d as char).to_digit(16));
            match (hex(bytes.next()), hex(bytes.next())) {
                (Some(hi), Some(lo)) => (hi * 16 + lo) as u8,
                _ => return false,
            }
        } else {
            b
        };
        if TOKEN.get(at).is_none_or(|t| !t.eq_ignore_ascii_case(&b)) {
            return false;
        }
        at += 1;
    }
    at == TOKEN.len()
}

/// `http(s)://localhost`, `127.0.0.1` or `[::1]`, any port.
fn is_loopback_origin(origin: &str) -> bool {
    let Some(rest) = origin
        .strip_prefix("http://")
        .or_else(|| origin.strip_prefix("https://"))
    else {
        return false;
    };
    let (host, port) = match rest.strip_prefix('[') {
        Some(v6) => match v6.split_once(']') {
            Some(parts) => parts,
            None => return false,
        },
        None => rest.split_at(rest.find(':').unwrap_or(rest.len())),
    };
    let port_ok = port.is_empty()
        || port.strip_prefix(':').is_some_and(|digits| {
            (1..=5).contains(&digits.len()) && digits.bytes().all(|b| b.is_ascii_digit())
        });
    port_ok && matches!(host, "localhost" | "127.0.0.1" | "::1")
}

/// The token of an `Authorization: Bearer` header.
pub fn bearer_token(header: &[u8]) -> Option<&[u8]> {
    let (scheme, token) = header.split_at_checked(7)?;
    scheme
        .eq_ignore_ascii_case(b"bearer ")
        .then(|| token.trim_ascii())
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    if a.len() != b.len() {
        return false;
    }
    a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

/// The media type part of a `Content-Type` (parameters dropped).
fn media_type(value: &[u8]) -> &[u8] {
    value
        .split(|&b| b == b';')
        .next()
        .unwrap_or_default()
        .trim_ascii()
}

/// `application/json`, with any parameters but a `charset` other than
/// UTF-8. The gate reads the body as UTF-8, as JSON is (RFC 8259, 8.1); an
/// upstream honouring another declared charset would read other strings
/// than the ones checked (`é` read as Latin-1 is two characters: another
/// length, another enum member). A `;` inside a quoted parameter value
/// splits it here: at worst a charset-like tail refuses a type that was
/// fine, never the other way.
fn is_json_media_type(value: &[u8]) -> bool {
    let mut parts = value.split(|&b| b == b';');
    let media = parts.next().unwrap_or_default().trim_ascii();
    media.eq_ignore_ascii_case(b"application/json")
        && parts.all(|parameter| {
            let (name, value) = match parameter.iter().position(|&b| b == b'=') {
                Some(at) => (&parameter[..at], &parameter[at + 1..]),
                None => (parameter, &b""[..]),
            };
            !name.trim_ascii().eq_ignore_ascii_case(b"charset")
                || unquoted(value.trim_ascii()).eq_ignore_ascii_case(b"utf-8")
        })
}

/// A `Content-Encoding` that leaves the body as sent: empty, or `identity`
/// only. Any coding would have the upstream decode the body into other
/// bytes than the gate checked (a plain JSON body declared `br` is valid
/// here and something else there); a compressed one would be refused as
/// malformed JSON, a misleading answer.
fn is_identity_coding(value: &[u8]) -> bool {
    value.split(|&b| b == b',').all(|coding| {
        let coding = coding.trim_ascii();
        coding.is_empty() || coding.eq_ignore_ascii_case(b"identity")
    })
}

/// A parameter value without the quotes of a quoted string.
fn unquoted(value: &[u8]) -> &[u8] {
    value
        .strip_prefix(b"\"")
        .and_then(|inner| inner.strip_suffix(b"\""))
        .unwrap_or(value)
}

fn accepts_sse(value: &[u8]) -> bool {
    value.split(|&b| b == b',').map(media_type).any(|range| {
        range.eq_ignore_ascii_case(b"*/*")
            || range.eq_ignore_ascii_case(b"text/*")
            || range.eq_ignore_ascii_case(b"text/event-stream")
    })
}

/// What the MCP SDKs send, byte for byte: answered by one comparison.
const SDK_ACCEPT: &[u8] = b"application/json, text/event-stream";

/// Whether an `Accept` list admits both answers a server may give (one
/// pass, no allocation: this runs on every request).
fn accepts_json_and_sse(value: &[u8]) -> bool {
    if value == SDK_ACCEPT {
        return true;
    }
    let (mut json, mut sse) = (false, false);
    for range in value.split(|&b| b == b',').map(media_type) {
        let any = range.eq_ignore_ascii_case(b"*/*");
        json |= any
            || range.eq_ignore_ascii_case(b"application/json")
            || range.eq_ignore_ascii_case(b"application/*");
        sse |= any
            || range.eq_ignore_ascii_case(b"text/event-stream")
            || range.eq_ignore_ascii_case(b"text/*");
    }
    json && sse
}

#[cfg(test)]
mod tests {
    use super::*;

    fn headers(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
        pairs
            .iter()
            .map(|(n, v)| (n.to_string(), v.to_string()))
            .collect()
    }

    const GOOD: [(&str, &str); 2] = [
        ("Content-Type", "application/json"),
        ("Accept", "application/json, text/event-stream"),
    ];

    #[test]
    fn an_access_token_parameter_is_found_in_any_case_and_escaping() {
        for query in [
            "access_token=abc",
            "a=1&access_token=abc",
            "ACCESS_TOKEN=abc",
            "x=1;Access_Token",
            "access%5Ftoken=abc",
            "%61ccess_token=",
        ] {
            assert!(token_in_query(query), "{query}");
        }
        for query in [
            "",
            "token=abc",
            "access_tokens=abc",
            "x=access_token",
            "access_toke",
            "access%5token=a",
        ] {
            assert!(!token_in_query(query), "{query}");
        }
    }

    #[test]
    fn loopback_origins_pass_and_foreign_ones_are_forbidden() {
        let policy = WirePolicy::default();
        for origin in [
            "http://localhost:3000",
            "http://127.0.0.1",
            "https://[::1]:8443",
            "http://localhost",
        ] {
            let mut h = headers(&GOOD);
            h.push(("Origin".into(), origin.into()));
            assert_eq!(policy.check(h.as_slice()), Ok(()), "{origin}");
        }
        for origin in [
            "http://evil.example",
            "http://localhost.evil.example",
            "http://127.0.0.1.evil:80",
            "null",
            "http://localhost:x",
        ] {
            let mut h = headers(&GOOD);
            h.push(("Origin".into(), origin.into()));
            assert_eq!(
                policy.check(h.as_slice()).unwrap_err().reason,
                Reason::OriginNotAllowed,
                "{origin}"
            );
        }
    }

    #[test]
    fn configured_origins_and_the_wildcard_are_allowed() {
        let policy = WirePolicy {
            allowed_origins: vec!["https://app.example".into()],
            ..WirePolicy::default()
        };
        let mut h = headers(&GOOD);
        h.push(("Origin".into(), "https://app.example".into()));
        assert_eq!(policy.check(h.as_slice()), Ok(()));
        let any = WirePolicy {
            allowed_origins: vec!["*".into()],
            ..WirePolicy::default()
        };
        h[2].1 = "https://anything.example".into();
        assert_eq!(any.check(h.as_slice()), Ok(()));
    }

    #[test]
    fn bearer_tokens_are_required_when_configured() {
        let policy = WirePolicy {
            bearer_tokens: vec!["s3cret".into()],
            ..WirePolicy::default()
        };
        assert_eq!(
            policy.check(headers(&GOOD).as_slice()).unwrap_err().reason,
            Reason::Unauthorized
        );
        let mut h = headers(&GOOD);
        h.push(("Authorization".into(), "Bearer wrong".into()));
        assert_eq!(
            policy.check(h.as_slice()).unwrap_err().reason,
            Reason::Unauthorized
        );
        h[2].1 = "bearer s3cret".into();
        assert_eq!(policy.check(h.as_slice()), Ok(()));
    }

    #[test]
    fn content_type_must_be_json_in_utf_8_with_any_other_parameters() {
        let policy = WirePolicy::default();
        let mut h = headers(&GOOD);
        for fine in [
            "application/json; charset=utf-8",
            "Application/JSON;Charset=\"UTF-8\"",
            "application/json; x=\"a,b\"; charset = utf-8",
            "application/json;profile=mcp",
        ] {
            h[0].1 = fine.into();
            assert_eq!(policy.check(h.as_slice()), Ok(()), "{fine}");
        }
        for refused in [
            "text/plain",
            "application/json; charset=iso-8859-1",
            "application/json; charset=utf-16",
            "application/json; charset=\"latin1\"",
            "application/json; charset=utf-8; charset=windows-1252",
            "application/json; charset",
            "application/jsonx",
        ] {
            h[0].1 = refused.into();
            assert_eq!(
                policy.check(h.as_slice()).unwrap_err().reason,
                Reason::UnsupportedMediaType,
                "{refused}"
            );
        }
        h.remove(0);
        assert_eq!(
            policy.check(h.as_slice()).unwrap_err().reason,
            Reason::UnsupportedMediaType
        );
    }

    #[test]
    fn a_body_with_a_content_coding_is_refused_and_identity_passes() {
        let policy = WirePolicy::default();
        let with = |coding: &str| {
            let mut h = headers(&GOOD);
            h.push(("Content-Encoding".into(), coding.into()));
            policy.check(h.as_slice())
        };
        for fine in [
            "identity",
            "IDENTITY",
            " identity ",
            "",
            "identity, identity",
        ] {
            assert_eq!(with(fine), Ok(()), "{fine:?}");
        }
        for refused in [
            "gzip",
            "br",
            "deflate",
            "zstd",
            "x-gzip",
            "identity, gzip",
            "gzip,",
        ] {
            let refusal = with(refused).unwrap_err();
            assert_eq!(
                refusal.reason,
                Reason::UnsupportedContentEncoding,
                "{refused:?}"
            );
            assert!(refusal.message.contains("Content-Encoding"), "{refused:?}");
        }
    }

    #[test]
    fn accept_must_admit_json_and_event_streams() {
        let policy = WirePolicy::default();
        for ok in [
            "*/*",
            "application/json, text/event-stream",
            "application/*;q=0.9, text/*",
            "text/event-stream,application/json",
        ] {
            let mut h = headers(&GOOD);
            h[1].1 = ok.into();
            assert_eq!(policy.check(h.as_slice()), Ok(()), "{ok}");
        }
        for bad in ["application/json", "text/event-stream", "text/html"] {
            let mut h = headers(&GOOD);
            h[1].1 = bad.into();
            assert_eq!(
                policy.check(h.as_slice()).unwrap_err().reason,
                Reason::NotAcceptable,
                "{bad}"
            );
        }
    }
}
