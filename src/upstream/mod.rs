//! The upstream transport: where allowed messages are forwarded, over a
//! per-worker pool of keep-alive HTTP/1.1 connections ([`pool`]), and how
//! its answers are read ([`answer`]). Nothing here knows what a message
//! means; the gate decided that before.

pub mod answer;
pub mod learn;
pub mod pool;
pub mod rate_limit;
pub mod tls;

use std::net::{SocketAddr, ToSocketAddrs};
use std::time::Duration;

use bytes::{BufMut, BytesMut};

pub use answer::{AnswerHead, BodyFraming};
pub use pool::Pool;
pub use tls::UpstreamTls;

/// Where to forward, and how long to wait for it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpstreamConfig {
    /// The URL as configured (for logs).
    pub url: String,
    /// Resolved once, at start.
    pub addr: SocketAddr,
    /// `host[:port]` as the URL wrote it: the `Host` sent upstream.
    pub authority: String,
    /// The request path sent upstream (the client's query is appended).
    pub path: String,
    /// Establishing a new connection.
    pub connect_timeout: Duration,
    /// From the request written to the answer's head read in full.
    pub first_byte_timeout: Duration,
    /// Between two reads of an answer's body (an SSE stream may pause this
    /// long).
    pub idle_timeout: Duration,
    /// An `https://` upstream's TLS; none for `http://`.
    pub tls: Option<UpstreamTls>,
}

/// The defaults: 2 s to connect, 30 s to the first byte, 300 s idle.
pub const DEFAULT_CONNECT_TIMEOUT: Duration = Duration::from_secs(2);
pub const DEFAULT_FIRST_BYTE_TIMEOUT: Duration = Duration::from_secs(30);
pub const DEFAULT_IDLE_TIMEOUT: Duration = Duration::from_secs(300);

impl UpstreamConfig {
    /// Parses `http://host[:port][/path]` or `https://…` (verified against
    /// Mozilla's roots until [`UpstreamConfig::trust`]) and resolves the
    /// host. No user info, query or fragment.
    pub fn parse(url: &str) -> Result<UpstreamConfig, UpstreamError> {
        let (rest, https) = match (url.strip_prefix("http://"), url.strip_prefix("https://")) {
            (Some(rest), _) => (rest, false),
            (None, Some(rest)) => (rest, true),
            (None, None) => return Err(UpstreamError::NotHttp(url.to_owned())),
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.is_empty() || authority.contains('@') {
            return Err(UpstreamError::NoHost(url.to_owned()));
        }
        if path.contains(['?', '#']) || path.bytes().any(|b| b <= b' ' || b == 0x7f) {
            return Err(UpstreamError::Path(url.to_owned()));
        }
        let (host, with_port) = if authority.ends_with(']') || !authority.contains(':') {
            let port = if https { 443 } else { 80 };
            (authority, format!("{authority}:{port}"))
        } else {
            let colon = authority.rfind(':').unwrap_or(authority.len());
            (&authority[..colon], authority.to_owned())
        };
        let addr = with_port
            .to_socket_addrs()
            .map_err(|source| UpstreamError::Resolve {
                url: url.to_owned(),
                source,
            })?
            .next()
            .ok_or_else(|| UpstreamError::NoAddress(url.to_owned()))?;
        Ok(UpstreamConfig {
            url: url.to_owned(),
            addr,
            authority: authority.to_owned(),
            path: path.to_owned(),
            connect_timeout: DEFAULT_CONNECT_TIMEOUT,
            first_byte_timeout: DEFAULT_FIRST_BYTE_TIMEOUT,
            idle_timeout: DEFAULT_IDLE_TIMEOUT,
            tls: match https {
                true => Some(
                    UpstreamTls::new(host, None).map_err(|e| UpstreamError::Tls {
                        url: url.to_owned(),
                        reason: e.to_string(),
                    })?,
                ),
                false => None,
            },
        })
    }

    /// An `https://` upstream's certificate verified against `ca` alone
    /// (a private CA) instead of Mozilla's roots.
    pub fn trust(
        &mut self,
        ca: Vec<rustls::pki_types::CertificateDer<'static>>,
    ) -> Result<(), tls::UpstreamTlsError> {
        if let Some(tls) = &mut self.tls {
            let host = tls.name.to_str().into_owned();
            *tls = UpstreamTls::new(&host, Some(ca))?;
        }
        Ok(())
    }

    /// The URL the catalog listing asks (the same host, port and path).
    pub fn listing_url(&self) -> String {
        let scheme = if self.tls.is_some() { "https" } else { "http" };
        format!("{scheme}://{}{}", self.authority, self.path)
    }
}

/// Why the upstream's URL cannot be used (the URL, as configured, in
/// each).
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error("{0:?} is not an http:// or https:// URL")]
    NotHttp(String),
    #[error("{0:?} has no host (or has user info)")]
    NoHost(String),
    #[error("{0:?}: the path may not hold a query, a fragment or spaces")]
    Path(String),
    #[error("{url:?}: cannot resolve the host: {source}")]
    Resolve { url: String, source: std::io::Error },
    #[error("{0:?}: the host resolves to no address")]
    NoAddress(String),
    #[error("{url:?}: {reason}")]
    Tls { url: String, reason: String },
}

/// Why there is no answer to relay. The service turns each into its
/// answer (a 502 or 504).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Failure {
    /// No connection could be made (refused, or not within the connect
    /// timeout), or it broke before the answer's head.
    Unreachable,
    /// The answer's head took longer than the first-byte timeout.
    Timeout,
    /// The upstream answered something that is not an HTTP/1.x answer.
    BadAnswer,
    /// The TLS handshake with an `https://` upstream failed (its
    /// certificate not verified, or for another name): nothing was sent.
    Tls,
}

/// Headers that concern one connection only (RFC 9110 §7.6.1): never
/// passed on, in either direction.
pub fn is_hop_by_hop(name: &[u8]) -> bool {
    const NAMES: [&[u8]; 7] = [
        b"connection",
        b"keep-alive",
        b"te",
        b"trailer",
        b"transfer-encoding",
        b"upgrade",
        b"proxy-connection",
    ];
    NAMES.iter().any(|n| n.eq_ignore_ascii_case(name))
        || name
            .get(..6)
            .is_some_and(|p| p.eq_ignore_ascii_case(b"proxy-"))
}

/// The header names a `Connection` header lists (besides `close` and
/// `keep-alive`): hop-by-hop too.
pub(crate) fn connection_tokens<'a>(
    headers: impl Iterator<Item = (&'a [u8], &'a [u8])>,
) -> smallvec::SmallVec<[&'a [u8]; 4]> {
    let mut tokens = smallvec::SmallVec::new();
    for (name, value) in headers {
        if name.eq_ignore_ascii_case(b"connection") {
            for token in value.split(|&b| b == b',') {
                let token = token.trim_ascii();
                if !token.is_empty() {
                    tokens.push(token);
                }
            }
        }
    }
    tokens
}

/// The client's request as the forwarder needs it.
#[derive(Debug, Clone, Copy)]
pub struct ClientRequest<'a> {
    pub method: &'a str,
    /// What followed the first `?` of the request target.
    pub query: Option<&'a str>,
    pub headers: &'a [httparse::Header<'a>],
    /// The value `Mcp-Session-Id` goes on with in place of the client's
    /// (the gateway's seal taken off).
    pub session_id: Option<&'a [u8]>,
}

/// The answers the gateway reads (a `tools/list` result it learns tools
/// from or cuts to the caller's scopes, an answer it adds to) must come
/// back as JSON, not compressed, so every request to the upstream asks
/// for none: one rule for every answer rather than one that depends on
/// the method.
pub(crate) const NO_CONTENT_CODING: &str = "Accept-Encoding: identity\r\n";

/// Writes the request to send upstream: the client's method, the
/// upstream's path (with the client's query), `Host` rewritten,
/// [`NO_CONTENT_CODING`] in place of the client's `Accept-Encoding`, the
/// client's headers minus hop-by-hop ones, `withhold` and those `set`
/// names, then `set`'s values, and the body untouched with its own
/// `Content-Length` (a chunked body was de-chunked on the way in).
pub fn encode_request(
    out: &mut BytesMut,
    target: &UpstreamConfig,
    head: ClientRequest<'_>,
    body: &[u8],
    withhold: &[&str],
    set: &[(std::sync::Arc<str>, Option<String>)],
) {
    out.reserve(256 + body.len());
    out.extend_from_slice(head.method.as_bytes());
    out.put_u8(b' ');
    out.extend_from_slice(target.path.as_bytes());
    if let Some(query) = head.query {
        out.put_u8(b'?');
        out.extend_from_slice(query.as_bytes());
    }
    out.extend_from_slice(b" HTTP/1.1\r\nHost: ");
    out.extend_from_slice(target.authority.as_bytes());
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(NO_CONTENT_CODING.as_bytes());
    let named = connection_tokens(head.headers.iter().map(|h| (h.name.as_bytes(), h.value)));
    for h in head.headers {
        let name = h.name.as_bytes();
        let skip = is_hop_by_hop(name)
            || named.iter().any(|t| t.eq_ignore_ascii_case(name))
            // Re-framed, rewritten, or already answered by the gateway.
            || [&b"host"[..], b"content-length", b"expect", b"accept-encoding"]
                .iter()
                .any(|n| n.eq_ignore_ascii_case(name))
            || withhold.iter().any(|w| w.as_bytes().eq_ignore_ascii_case(name))
            || set.iter().any(|(s, _)| s.as_bytes().eq_ignore_ascii_case(name));
        if !skip {
            let value = match head.session_id {
                Some(id) if name.eq_ignore_ascii_case(b"mcp-session-id") => id,
                _ => h.value,
            };
            out.extend_from_slice(name);
            out.extend_from_slice(b": ");
            out.extend_from_slice(value);
            out.extend_from_slice(b"\r\n");
        }
    }
    for (name, value) in set {
        if let Some(value) = value {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    if !body.is_empty() || head.method == "POST" {
        out.extend_from_slice(b"Content-Length: ");
        out.extend_from_slice(itoa::Buffer::new().format(body.len()).as_bytes());
        out.extend_from_slice(b"\r\n");
    }
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(body);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_url_gives_address_host_and_path() {
        let c = UpstreamConfig::parse("http://127.0.0.1:9000/mcp").unwrap();
        assert_eq!(c.addr, "127.0.0.1:9000".parse().unwrap());
        assert_eq!(
            (c.authority.as_str(), c.path.as_str()),
            ("127.0.0.1:9000", "/mcp")
        );
        let c = UpstreamConfig::parse("http://127.0.0.1").unwrap();
        assert_eq!((c.addr.port(), c.path.as_str()), (80, "/"));
        let c = UpstreamConfig::parse("http://[::1]:81/x/y").unwrap();
        assert_eq!((c.addr.port(), c.authority.as_str()), (81, "[::1]:81"));
        let c = UpstreamConfig::parse("https://127.0.0.1/mcp").unwrap();
        assert_eq!(
            (c.addr.port(), c.listing_url().as_str()),
            (443, "https://127.0.0.1/mcp")
        );
        let c = UpstreamConfig::parse("https://localhost:8443").unwrap();
        let name = c.tls.map(|t| t.name.to_str().into_owned());
        assert_eq!((c.addr.port(), name.as_deref()), (8443, Some("localhost")));
        for bad in [
            "ftp://127.0.0.1/mcp",
            "127.0.0.1:80",
            "http:///mcp",
            "http://u@127.0.0.1/",
            "http://127.0.0.1/mcp?x=1",
            "http://127.0.0.1:notaport/",
        ] {
            assert!(UpstreamConfig::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn hop_by_hop_headers_are_known_in_any_case() {
        for name in [
            "Connection",
            "KEEP-ALIVE",
            "te",
            "Trailer",
            "Transfer-Encoding",
            "Upgrade",
            "Proxy-Authorization",
            "proxy-connection",
        ] {
            assert!(is_hop_by_hop(name.as_bytes()), "{name}");
        }
        for name in ["Mcp-Session-Id", "Authorization", "Accept", "Proxy", "Tee"] {
            assert!(!is_hop_by_hop(name.as_bytes()), "{name}");
        }
    }

    #[test]
    fn the_request_keeps_end_to_end_headers_and_the_body_and_asks_for_no_content_coding() {
        let target = UpstreamConfig::parse("http://127.0.0.1:9/up").unwrap();
        let headers = [
            httparse::Header {
                name: "Host",
                value: b"gw",
            },
            httparse::Header {
                name: "Connection",
                value: b"keep-alive, X-Private",
            },
            httparse::Header {
                name: "X-Private",
                value: b"1",
            },
            httparse::Header {
                name: "Mcp-Session-Id",
                value: b"s-1",
            },
            httparse::Header {
                name: "Authorization",
                value: b"Bearer t",
            },
            httparse::Header {
                name: "Transfer-Encoding",
                value: b"chunked",
            },
            httparse::Header {
                name: "accept-encoding",
                value: b"gzip, br",
            },
        ];
        let head = ClientRequest {
            method: "POST",
            query: Some("a=1"),
            headers: &headers,
            session_id: None,
        };
        let mut out = BytesMut::new();
        encode_request(&mut out, &target, head, b"{}", &["Authorization"], &[]);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "POST /up?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept-Encoding: identity\r\nMcp-Session-Id: s-1\r\nContent-Length: 2\r\n\r\n{}"
        );
        // Set headers replace the client's under the same name; one
        // without a value only removes them.
        let mut out = BytesMut::new();
        let set = [
            (
                std::sync::Arc::from("mcp-session-id"),
                Some("s-2".to_owned()),
            ),
            (std::sync::Arc::from("X-Subject"), None),
        ];
        encode_request(&mut out, &target, head, b"{}", &["Authorization"], &set);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "POST /up?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept-Encoding: identity\r\nmcp-session-id: s-2\r\nContent-Length: 2\r\n\r\n{}"
        );
        // A session id the gateway unsealed goes on in the client's place.
        let mut out = BytesMut::new();
        let unsealed = ClientRequest {
            session_id: Some(b"s"),
            ..head
        };
        encode_request(&mut out, &target, unsealed, b"{}", &["Authorization"], &[]);
        assert_eq!(
            std::str::from_utf8(&out).unwrap(),
            "POST /up?a=1 HTTP/1.1\r\nHost: 127.0.0.1:9\r\nAccept-Encoding: identity\r\nMcp-Session-Id: s\r\nContent-Length: 2\r\n\r\n{}"
        );
    }
}
