//! CORS for browser clients, over real sockets on 127.0.0.1: preflights on
//! the endpoint and the OAuth metadata path, the headers every answer to
//! an allowed origin carries (refusals, forwarded answers, event streams,
//! upstream failures, the metadata and its 401), and the hostile cases,
//! each with its exact bytes. The browser itself: `tests/browser.rs`.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::thread;
use std::time::Duration;

use process::{Answer, CLIENT_HEADERS, Server, post};
use serde_json::json;
use support::*;

const PAGE: &str = "http://app.example:5173";
const EXPOSED: &str = "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate";
const ALLOWED_HEADERS: &str = "Content-Type, Authorization, MCP-Protocol-Version, Mcp-Method, Mcp-Name, Mcp-Session-Id, Last-Event-ID";

/// An upstream that counts what reaches it and answers with CORS headers
/// of its own (which must never reach the client): a POST with a JSON
/// result, a GET with an event stream.
struct Upstream {
    addr: SocketAddr,
    requests: Arc<AtomicUsize>,
}

impl Upstream {
    fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let requests = Arc::new(AtomicUsize::new(0));
        let counted = requests.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let counted = counted.clone();
                thread::spawn(move || serve_upstream(stream, &counted));
            }
        });
        Upstream { addr, requests }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn requests(&self) -> usize {
        self.requests.load(Ordering::SeqCst)
    }
}

const UPSTREAM_CORS: &str = "Access-Control-Allow-Origin: *\r\n\
    Access-Control-Allow-Credentials: true\r\n\
    access-control-expose-headers: X-Upstream-Secret\r\n";

fn serve_upstream(mut stream: TcpStream, counted: &AtomicUsize) {
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    loop {
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            match stream.read(&mut byte) {
                Ok(1) => head.push(byte[0]),
                _ => return,
            }
        }
        let (line, headers) = process::split_head(&head);
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; length];
        if stream.read_exact(&mut body).is_err() {
            return;
        }
        counted.fetch_add(1, Ordering::SeqCst);
        let answer = if line.starts_with("GET") {
            let events = "data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/ping\"}\n\n";
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{UPSTREAM_CORS}Content-Length: {}\r\n\r\n{events}",
                events.len()
            )
        } else {
            let id = serde_json::from_slice::<serde_json::Value>(&body)
                .map(|v| v["id"].clone())
                .unwrap_or_default();
            let result = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}).to_string();
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nMcp-Session-Id: s-1\r\n{UPSTREAM_CORS}Content-Length: {}\r\n\r\n{result}",
                result.len()
            )
        };
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// A gateway in front of `upstream` allowing [`PAGE`].
fn gateway(upstream: &Upstream, extra: &[&str]) -> Server {
    let url = upstream.url();
    let mut args = vec![
        "--upstream",
        &url,
        "--learn-catalog",
        "false",
        "--allowed-origins",
        PAGE,
    ];
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// A valid 2026-07-28 `tools/call`, with `extra` header lines.
fn call(extra: &str) -> Vec<u8> {
    let message = tools_call(json!(7), "echo", json!({"text": "hi"}));
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{extra}"),
    )
}

/// The answer carries the CORS headers that let the page of `origin` read
/// it, once each, and nothing the upstream said of CORS.
fn assert_readable_by(answer: &Answer, origin: &str, case: &str) {
    let all = |name: &str| -> Vec<&str> {
        answer
            .headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(all("Access-Control-Allow-Origin"), [origin], "{case}");
    assert_eq!(all("Access-Control-Expose-Headers"), [EXPOSED], "{case}");
    assert!(all("Vary").contains(&"Origin"), "{case}: {answer:?}");
    assert_eq!(all("Access-Control-Allow-Credentials"), [""; 0], "{case}");
}

/// The answer carries no CORS header at all.
fn assert_no_cors(answer: &Answer, case: &str) {
    assert!(
        answer
            .headers
            .iter()
            .all(|(n, _)| !n.to_ascii_lowercase().starts_with("access-control-")),
        "{case}: {answer:?}"
    );
}

#[test]
fn a_preflight_from_an_allowed_origin_is_answered_204_and_never_forwarded() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    let answer = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\
          Access-Control-Request-Headers: content-type,mcp-method,mcp-name,mcp-param-region,mcp-protocol-version\r\n\r\n",
    );
    assert_eq!(answer.status, 204);
    assert!(answer.body.is_empty());
    assert_eq!(answer.header("Content-Length"), None);
    assert_eq!(answer.header("Access-Control-Allow-Origin"), Some(PAGE));
    assert_eq!(
        answer.header("Access-Control-Allow-Methods"),
        Some("GET, POST, DELETE, OPTIONS")
    );
    assert_eq!(
        answer.header("Access-Control-Allow-Headers"),
        Some(format!("{ALLOWED_HEADERS}, mcp-param-region").as_str())
    );
    assert_eq!(
        answer.header("Access-Control-Expose-Headers"),
        Some(EXPOSED)
    );
    assert_eq!(answer.header("Access-Control-Max-Age"), Some("600"));
    assert_eq!(
        answer.header("Vary"),
        Some("Origin, Access-Control-Request-Method, Access-Control-Request-Headers")
    );
    assert_eq!(answer.header("Access-Control-Allow-Credentials"), None);
    // GET and DELETE (the 2025 lanes' stream and session end) too.
    for method in ["GET", "DELETE"] {
        let answer = server.send(
            format!(
                "OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: {PAGE}\r\n\
                 Access-Control-Request-Method: {method}\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_eq!(answer.status, 204, "{method}");
        assert_eq!(
            answer.header("Access-Control-Allow-Headers"),
            Some(ALLOWED_HEADERS)
        );
    }
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn loopback_origins_and_the_wildcard_get_their_own_origin_echoed() {
    let upstream = Upstream::start();
    // No `allowed_origins`: the loopback ones only.
    let url = upstream.url();
    let server = Server::start(&["--upstream", &url, "--learn-catalog", "false"]);
    for origin in [
        "http://localhost:3000",
        "http://127.0.0.1",
        "https://[::1]:8443",
    ] {
        let answer = server.send(
            format!(
                "OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: {origin}\r\nAccess-Control-Request-Method: POST\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_eq!(answer.status, 204, "{origin}");
        assert_eq!(
            answer.header("Access-Control-Allow-Origin"),
            Some(origin),
            "{origin}"
        );
    }
    let any = Server::start(&[
        "--upstream",
        &url,
        "--learn-catalog",
        "false",
        "--allowed-origins",
        "*",
    ]);
    let answer = any.send(&call("Origin: https://anything.example\r\n"));
    assert_eq!(answer.status, 200);
    // The origin, never `*`.
    assert_readable_by(&answer, "https://anything.example", "wildcard");
    // `null` (a sandboxed frame, a file) passes the check only under `*`,
    // which lets any page read already.
    let opaque = any.send(&call("Origin: null\r\n"));
    assert_eq!(opaque.status, 200);
    assert_readable_by(&opaque, "null", "null under the wildcard");
    let listed_only = server.send(&call("Origin: null\r\n"));
    assert_eq!(listed_only.status, 403);
    assert_no_cors(&listed_only, "null, loopback only");
}

#[test]
fn without_an_upstream_a_preflight_names_post_only() {
    let server = Server::start(&["--allowed-origins", PAGE]);
    let post = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\r\n",
    );
    assert_eq!(post.status, 204);
    assert_eq!(
        post.header("Access-Control-Allow-Methods"),
        Some("POST, OPTIONS")
    );
    let get = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: GET\r\n\r\n",
    );
    assert_eq!(get.status, 405);
    assert_no_cors(&get, "GET without an upstream");
}

#[test]
fn an_options_that_is_no_preflight_is_405_without_cors_headers() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    for (case, raw) in [
        (
            "no Access-Control-Request-Method",
            &b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\r\n"[..],
        ),
        (
            "no Origin",
            b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nAccess-Control-Request-Method: POST\r\n\r\n",
        ),
        ("neither", b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\n\r\n"),
    ] {
        let answer = server.send(raw);
        assert_eq!(answer.status, 405, "{case}");
        assert_eq!(answer.header("Allow"), Some("GET, POST, DELETE"), "{case}");
        assert_eq!(answer.json()["error"]["code"], -32600, "{case}");
        assert_no_cors(&answer, case);
    }
    // `/validate` takes no preflight: it is no browser's endpoint.
    let validate = server.send(
        b"OPTIONS /validate HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\r\n",
    );
    assert_eq!(validate.status, 405);
    assert_no_cors(&validate, "/validate");
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn a_preflight_from_an_origin_not_allowed_is_403_without_cors_headers() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    for origin in [
        "null",
        // The allowed one as a prefix, and as a suffix.
        "http://app.example:5173.evil",
        "http://app.example:51730",
        "http://evilapp.example:5173",
        "http://app.example:517",
        "http://app.example",
        "https://app.example:5173",
        "HTTP://app.example:5173",
        "http://APP.example:5173",
        "http://app.example:5173/",
        "HTTP://localhost:3000",
        "http://localhost.evil.example",
    ] {
        let raw = format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: {origin}\r\n\
             Access-Control-Request-Method: POST\r\n\r\n"
        );
        let answer = server.send(raw.as_bytes());
        assert_eq!(answer.status, 403, "{origin}");
        assert_eq!(answer.json()["error"]["code"], -32600, "{origin}");
        assert_no_cors(&answer, origin);
        // Its requests are refused as before, without CORS headers.
        let refused = server.send(&call(&format!("Origin: {origin}\r\n")));
        assert_eq!(refused.status, 403, "{origin}");
        assert_no_cors(&refused, origin);
    }
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn two_origin_headers_are_refused_400_without_cors_headers() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    for raw in [
        &b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
           Origin: http://evil.example\r\nAccess-Control-Request-Method: POST\r\n\r\n"[..],
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173, http://evil.example\r\n\
          Access-Control-Request-Method: POST\r\n\r\n",
    ] {
        let answer = server.send(raw);
        assert_eq!(answer.status, 400);
        assert_no_cors(&answer, "two origins");
    }
    let twice = call("Origin: http://app.example:5173\r\nOrigin: http://app.example:5173\r\n");
    let answer = server.send(&twice);
    assert_eq!(answer.status, 400);
    assert_no_cors(&answer, "the same origin twice");
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn a_preflight_for_a_method_the_endpoint_does_not_take_is_405_without_cors_headers() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    for method in ["TRACE", "PUT", "OPTIONS", "post", "POST, TRACE", ""] {
        let raw = format!(
            "OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
             Access-Control-Request-Method: {method}\r\n\r\n"
        );
        let answer = server.send(raw.as_bytes());
        assert_eq!(answer.status, 405, "{method:?}");
        assert_eq!(
            answer.header("Allow"),
            Some("GET, POST, DELETE, OPTIONS"),
            "{method:?}"
        );
        assert_no_cors(&answer, method);
    }
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn a_preflight_echoes_only_the_mcp_param_names_the_gateway_takes() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    // `_` for `-` in the prefix (refused as a request header), `_` in
    // another name, a name that is no token: none echoed. `_` in an
    // argument's own name is fine (an annotation may hold it).
    let answer = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\
          Access-Control-Request-Headers: mcp_param-region, mcp-param_region, mcp_method, \
          mcp-param-order_id, mcp-param-a(b), x-custom\r\n\r\n",
    );
    assert_eq!(answer.status, 204);
    assert_eq!(
        answer.header("Access-Control-Allow-Headers"),
        Some(format!("{ALLOWED_HEADERS}, mcp-param-order_id").as_str())
    );
    // A CR or LF inside the value: the head is malformed, refused before
    // any route, and nothing of it is echoed.
    for raw in [
        &b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
           Access-Control-Request-Method: POST\r\n\
           Access-Control-Request-Headers: mcp-param-a\rmcp-param-b\r\n\r\n"[..],
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\
          Access-Control-Request-Headers: mcp-param-a\r\n mcp-param-b\r\n\r\n",
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\
          Access-Control-Request-Headers: mcp-param-a\r\nmcp-param-b\r\n\r\n",
    ] {
        let answer = server.send(raw);
        assert_eq!(answer.status, 400, "{:?}", String::from_utf8_lossy(raw));
        assert_no_cors(&answer, "CR or LF");
    }
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn a_preflight_with_a_body_is_refused_and_the_body_reaches_nothing() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let raw = format!(
        "OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
         Access-Control-Request-Method: POST\r\nContent-Type: application/json\r\n\
         Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let answer = server.send(raw.as_bytes());
    assert_eq!(answer.status, 400);
    assert_eq!(answer.json()["error"]["code"], -32600);
    assert_no_cors(&answer, "a body");
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn a_preflight_needs_no_credentials() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &["--bearer-tokens", "s3cret"]);
    let answer = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\
          Access-Control-Request-Headers: authorization, content-type\r\n\r\n",
    );
    assert_eq!(answer.status, 204);
    // The request itself is refused without its token, readably.
    let refused = server.send(&call("Origin: http://app.example:5173\r\n"));
    assert_eq!(refused.status, 401);
    assert!(refused.header("WWW-Authenticate").is_some());
    assert_readable_by(&refused, PAGE, "401");
    let allowed = server.send(&call(
        "Origin: http://app.example:5173\r\nAuthorization: Bearer s3cret\r\n",
    ));
    assert_eq!(allowed.status, 200);
    assert_readable_by(&allowed, PAGE, "with its token");
}

#[test]
fn a_forwarded_answer_carries_the_gateways_cors_headers_and_never_the_upstreams() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    let answer = server.send(&call("Origin: http://app.example:5173\r\n"));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["id"], 7);
    assert_eq!(answer.header("Mcp-Session-Id"), Some("s-1"));
    assert_readable_by(&answer, PAGE, "forwarded");
    // The 2025 lane's event stream.
    let stream = server.send(
        b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\
          MCP-Protocol-Version: 2025-11-25\r\nOrigin: http://app.example:5173\r\n\r\n",
    );
    assert_eq!(stream.status, 200);
    assert!(stream.body.starts_with(b"data: "));
    assert_readable_by(&stream, PAGE, "event stream");
    assert_eq!(upstream.requests(), 2);
    // Without `Origin` (a server-to-server client) nothing is added, and
    // the answer is relayed as the upstream sent it.
    let plain = server.send(&call(""));
    assert_eq!(plain.status, 200);
    assert_eq!(plain.header("Access-Control-Allow-Origin"), Some("*"));
    assert_eq!(plain.header("Vary"), None);
}

#[test]
fn the_gates_refusals_and_upstream_failures_carry_cors_headers_for_an_allowed_origin() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    // Refused by the wire checks (from the head), and by the gate.
    let mut wrong_type = call("Origin: http://app.example:5173\r\n");
    let at = wrong_type
        .windows(b"Content-Type: application/json".len())
        .position(|w| w == b"Content-Type: application/json")
        .unwrap();
    wrong_type.splice(at..at + 30, b"Content-Type: text/plain".iter().copied());
    let refused = server.send(&wrong_type);
    assert_eq!(refused.status, 415);
    assert_readable_by(&refused, PAGE, "415");
    let message = tools_call(json!(3), "echo", json!({"text": "hi"}));
    let mut headers = modern_headers(&message);
    headers.retain(|(name, _)| name != "Mcp-Name");
    headers.push(("Mcp-Name".into(), "other".into()));
    let mismatch = server.send(&post(
        "/mcp",
        &headers,
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}Origin: http://app.example:5173\r\n"),
    ));
    assert_eq!(mismatch.json()["error"]["code"], -32020);
    assert_readable_by(&mismatch, PAGE, "header mismatch");
    assert_eq!(upstream.requests(), 0);

    // No upstream to reach: the 502 is readable too.
    let closed = TcpListener::bind("127.0.0.1:0").unwrap();
    let gone = format!("http://{}/mcp", closed.local_addr().unwrap());
    drop(closed);
    let server = Server::start(&[
        "--upstream",
        &gone,
        "--learn-catalog",
        "false",
        "--allowed-origins",
        PAGE,
    ]);
    let failed = server.send(&call("Origin: http://app.example:5173\r\n"));
    assert_eq!(failed.status, 502);
    assert_eq!(failed.json()["id"], 7);
    assert_readable_by(&failed, PAGE, "502");
    let plain = server.send(&call(""));
    assert_eq!(plain.status, 502);
    assert_no_cors(&plain, "502 without Origin");
}

#[test]
fn the_oauth_metadata_and_its_challenge_are_readable_from_an_allowed_origin() {
    let upstream = Upstream::start();
    let signer = tokens::rsa_signer(jsonwebtoken::Algorithm::RS256, "k1");
    let jwks = tokens::write_file(&tokens::jwks(&[&signer]));
    let server = gateway(
        &upstream,
        &[
            "--oauth-issuer",
            tokens::ISSUER,
            "--oauth-resource",
            tokens::RESOURCE,
            "--oauth-jwks-file",
            jwks.to_str().unwrap(),
        ],
    );
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let preflight = server.send(
            format!(
                "OPTIONS {path} HTTP/1.1\r\nHost: t\r\nOrigin: {PAGE}\r\n\
                 Access-Control-Request-Method: GET\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_eq!(preflight.status, 204, "{path}");
        assert_eq!(
            preflight.header("Access-Control-Allow-Methods"),
            Some("GET, OPTIONS")
        );
        assert_eq!(preflight.header("Access-Control-Allow-Origin"), Some(PAGE));
        let metadata = server
            .send(format!("GET {path} HTTP/1.1\r\nHost: t\r\nOrigin: {PAGE}\r\n\r\n").as_bytes());
        assert_eq!(metadata.status, 200, "{path}");
        assert_eq!(metadata.json()["resource"], tokens::RESOURCE);
        assert_readable_by(&metadata, PAGE, path);
        // Public: another origin still reads it as before, without CORS.
        let other = server.send(
            format!("GET {path} HTTP/1.1\r\nHost: t\r\nOrigin: http://evil.example\r\n\r\n")
                .as_bytes(),
        );
        assert_eq!(other.status, 200, "{path}");
        assert_no_cors(&other, "metadata, another origin");
    }
    // A preflight needs no token; the request without one is challenged.
    let preflight = server.send(
        b"OPTIONS /mcp HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\
          Access-Control-Request-Method: POST\r\n\r\n",
    );
    assert_eq!(preflight.status, 204);
    let challenged = server.send(&call("Origin: http://app.example:5173\r\n"));
    assert_eq!(challenged.status, 401);
    assert!(
        challenged
            .header("WWW-Authenticate")
            .is_some_and(|c| c.contains("resource_metadata="))
    );
    assert_readable_by(&challenged, PAGE, "401 challenge");
    let _ = std::fs::remove_file(jwks);
    assert_eq!(upstream.requests(), 0);
}

#[test]
fn other_paths_get_no_cors_headers() {
    let upstream = Upstream::start();
    let server = gateway(&upstream, &[]);
    for raw in [
        &b"GET /healthz HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\r\n"[..],
        b"GET /metrics HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\r\n",
        b"GET /nowhere HTTP/1.1\r\nHost: t\r\nOrigin: http://app.example:5173\r\n\r\n",
    ] {
        let answer = server.send(raw);
        assert_no_cors(&answer, &String::from_utf8_lossy(raw));
    }
}
