//! `mcpgate serve` as an OAuth resource server, over real sockets on
//! 127.0.0.1: keys generated per run (RSA, EC P-256, Ed25519), tokens
//! signed with them, a JWKS read from a file or served (and rotated) by a
//! loopback HTTP server, and an upstream that records what reaches it.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use jsonwebtoken::{Algorithm, EncodingKey, Header};
use process::{Answer, CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;
use tokens::*;
const METADATA_URL: &str = "https://mcp.example/.well-known/oauth-protected-resource/mcp";

/// A request's headers, as the upstream received them.
type Headers = Vec<(String, String)>;

/// An upstream that records each request's headers and answers a result.
struct Upstream {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Headers>>>,
}

/// What the upstream answers a `tools/list` with: `echo` and `ping`.
const LISTING: &str = r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"echo","inputSchema":{"type":"object"}},{"name":"ping","inputSchema":{"type":"object"}}]}}"#;

impl Upstream {
    fn start() -> Upstream {
        Upstream::listing(LISTING.to_owned())
    }

    /// An upstream answering a `tools/list` with `listing`, and a GET
    /// with a stream replaying it.
    fn listing(listing: String) -> Upstream {
        // A 2025 lane's GET stream, resumed: a notification, then the
        // replayed `tools/list` answer, with the length the upstream knew.
        let events = format!(
            "data: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}\n\nid: 7\ndata: {listing}\n\n"
        );
        Upstream::answering(
            exact_answer("application/json", listing.as_bytes()),
            exact_answer("text/event-stream", events.as_bytes()),
        )
    }

    /// An upstream answering a `tools/list` with the bytes `listing` (a
    /// whole HTTP answer), a GET with the bytes `stream`, anything else
    /// with a result.
    fn answering(listing: Vec<u8>, stream: Vec<u8>) -> Upstream {
        let replies = Arc::new(Replies { listing, stream });
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (seen, replies) = (seen.clone(), replies.clone());
                thread::spawn(move || serve_upstream(stream, &seen, &replies));
            }
        });
        Upstream { addr, received }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn last_headers(&self) -> Headers {
        self.received.lock().unwrap().last().cloned().unwrap()
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

/// Reads one request's head and its `Content-Length` body.
fn read_request(reader: &mut BufReader<TcpStream>) -> Option<(Headers, Vec<u8>)> {
    let mut line = String::new();
    // The request line.
    reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
    let mut headers = Vec::new();
    loop {
        line.clear();
        reader.read_line(&mut line).ok().filter(|&n| n > 0)?;
        let Some((name, value)) = line.trim_end().split_once(':') else {
            break;
        };
        headers.push((name.to_owned(), value.trim().to_owned()));
    }
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    reader.read_exact(&mut body).ok()?;
    Some((headers, body))
}

/// What an [`Upstream`] answers, each a whole HTTP answer.
struct Replies {
    listing: Vec<u8>,
    stream: Vec<u8>,
}

/// A 200 answer of `content_type` holding `body`, with its length.
fn exact_answer(content_type: &str, body: &[u8]) -> Vec<u8> {
    let mut answer = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    )
    .into_bytes();
    answer.extend_from_slice(body);
    answer
}

fn serve_upstream(stream: TcpStream, seen: &Mutex<Vec<Headers>>, replies: &Replies) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    while let Some((headers, request)) = read_request(&mut reader) {
        seen.lock().unwrap().push(headers);
        let answer = if request.is_empty() {
            // A GET stream: the test's only bodiless request.
            replies.stream.clone()
        } else if String::from_utf8_lossy(&request).contains("tools/list") {
            replies.listing.clone()
        } else {
            exact_answer(
                "application/json",
                br#"{"jsonrpc":"2.0","id":1,"result":{"content":[{"type":"text","text":"ok"}]}}"#,
            )
        };
        if stream.write_all(&answer).is_err() {
            return;
        }
    }
}

/// A JWKS over HTTP whose document can be replaced; counts its fetches.
struct JwksServer {
    addr: SocketAddr,
    document: Arc<Mutex<Option<String>>>,
    fetches: Arc<AtomicUsize>,
}

impl JwksServer {
    fn start(text: &str) -> JwksServer {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let document = Arc::new(Mutex::new(Some(text.to_owned())));
        let fetches = Arc::new(AtomicUsize::new(0));
        let (served, counted) = (document.clone(), fetches.clone());
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let mut reader = BufReader::new(stream.try_clone().unwrap());
                let mut stream = stream;
                if read_request(&mut reader).is_none() {
                    continue;
                }
                counted.fetch_add(1, Ordering::SeqCst);
                let answer = match served.lock().unwrap().clone() {
                    Some(text) => format!(
                        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{text}",
                        text.len()
                    ),
                    // A failing authorization server.
                    None => "HTTP/1.1 500 Internal Server Error\r\nContent-Length: 0\r\nConnection: close\r\n\r\n".to_owned(),
                };
                let _ = stream.write_all(answer.as_bytes());
            }
        });
        JwksServer {
            addr,
            document,
            fetches,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/jwks.json", self.addr)
    }

    fn serve(&self, text: Option<String>) {
        *self.document.lock().unwrap() = text;
    }
}

/// A gateway in front of `upstream` verifying tokens against the JWKS
/// file of `signers`, with two tools taking any object: `echo` needs the
/// scope `tools:echo`, `ping` none of its own.
fn gateway(upstream: &Upstream, signers: &[&Signer], extra: &[&str]) -> Server {
    let jwks = write_file(&jwks(signers));
    let catalog = write_file(
        &json!({"tools": [
            {"name": "echo", "inputSchema": {"type": "object"}},
            {"name": "ping", "inputSchema": {"type": "object"}},
        ]})
        .to_string(),
    );
    let mut args = vec![
        "--upstream".to_owned(),
        upstream.url(),
        "--catalog".to_owned(),
        catalog.to_str().unwrap().to_owned(),
        "--oauth-issuer".to_owned(),
        ISSUER.to_owned(),
        "--oauth-resource".to_owned(),
        RESOURCE.to_owned(),
        "--oauth-jwks-file".to_owned(),
        jwks.to_str().unwrap().to_owned(),
        "--oauth-tool-scopes".to_owned(),
        "echo=tools:echo".to_owned(),
    ];
    args.extend(extra.iter().map(|a| a.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args)
}

/// A `tools/call` of `tool` with `authorization` (a whole header line or
/// nothing).
fn call(server: &Server, tool: &str, id: i64, authorization: &str) -> Answer {
    let message = tools_call(json!(id), tool, json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    server.send(&post(
        "/mcp",
        &modern_headers(&message),
        &body,
        &format!("{CLIENT_HEADERS}{authorization}"),
    ))
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\n")
}

fn series(reason: &str, status: u16) -> String {
    format!("mcpgate_rejections_total{{rejecter=\"wire\",reason=\"{reason}\",status=\"{status}\"}}")
}

/// `answer` is a JSON-RPC error (`-32600`) with `status` and `id`; its
/// texts do not quote `token`.
#[track_caller]
fn assert_refused(answer: &Answer, status: u16, id: Value, token: &str) {
    assert_eq!(
        answer.status,
        status,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["error"]["code"], json!(-32600), "{body}");
    assert_eq!(body["id"], id, "{body}");
    if !token.is_empty() {
        let text = String::from_utf8_lossy(&answer.body);
        assert!(!text.contains(token), "{text}");
        let challenge = answer.header("WWW-Authenticate").unwrap_or_default();
        assert!(!challenge.contains(token), "{challenge}");
    }
}

#[test]
fn the_metadata_document_is_served_at_both_well_known_paths() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &["--oauth-scopes-required", "mcp"]);
    for path in [
        "/.well-known/oauth-protected-resource",
        "/.well-known/oauth-protected-resource/mcp",
    ] {
        let answer = server.send(format!("GET {path} HTTP/1.1\r\nHost: t\r\n\r\n").as_bytes());
        assert_eq!(answer.status, 200, "{path}");
        assert_eq!(answer.header("Content-Type"), Some("application/json"));
        assert_eq!(
            answer.json(),
            json!({
                "resource": RESOURCE,
                "authorization_servers": [ISSUER],
                "scopes_supported": ["mcp", "tools:echo"],
                "bearer_methods_supported": ["header"],
            })
        );
    }
    let other =
        server.send(b"GET /.well-known/oauth-protected-resource/other HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(other.status, 404);
}

#[test]
fn a_request_without_a_token_is_401_pointing_to_the_metadata() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &["--oauth-scopes-required", "mcp"]);
    let before = server.metric(&series("token_missing", 401));
    for authorization in [
        "",
        "Authorization: Basic YWxpY2U6c2VjcmV0\r\n",
        "Authorization: Bearer \r\n",
        // Only the `Authorization` header carries a token.
        &format!("X-Access-Token: {}\r\n", signer.sign(&claims(json!({})))),
    ] {
        let answer = call(&server, "echo", 1, authorization);
        assert_refused(&answer, 401, Value::Null, "");
        assert_eq!(
            answer.header("WWW-Authenticate"),
            Some(format!("Bearer resource_metadata=\"{METADATA_URL}\", scope=\"mcp\"").as_str())
        );
    }
    assert_eq!(server.metric(&series("token_missing", 401)), before + 4);
    assert_eq!(upstream.count(), 0);
}

#[test]
fn valid_tokens_of_each_algorithm_reach_the_upstream_without_the_authorization() {
    let upstream = Upstream::start();
    let rs = rsa_signer(Algorithm::RS256, "rsa-1");
    let ps = rsa_signer(Algorithm::PS256, "rsa-pss");
    let ec = ec_signer("ec-1");
    let ed = ed_signer("ed-1");
    let server = gateway(
        &upstream,
        &[&rs, &ps, &ec, &ed],
        &[
            "--oauth-subject-header",
            "X-Subject",
            "--oauth-scopes-header",
            "X-Scopes",
        ],
    );
    for signer in [&rs, &ps, &ec, &ed] {
        let token = signer.sign(&claims(
            json!({"aud": ["other", RESOURCE], "sub": signer.kid}),
        ));
        // A client's own identity header is replaced, never passed on.
        let authorization = format!("{}X-Subject: mallory\r\n", bearer(&token));
        let answer = call(&server, "ping", 7, &authorization);
        assert_relayed(&answer);
        let headers = upstream.last_headers();
        let header = |name: &str| {
            headers
                .iter()
                .filter(|(n, _)| n.eq_ignore_ascii_case(name))
                .map(|(_, v)| v.as_str())
                .collect::<Vec<_>>()
        };
        assert!(header("Authorization").is_empty(), "{headers:?}");
        assert_eq!(header("X-Subject"), [signer.kid.as_str()]);
        assert_eq!(header("X-Scopes"), ["mcp"]);
    }
}

#[test]
fn forward_authorization_passes_the_token_on() {
    let upstream = Upstream::start();
    let signer = ed_signer("ed-1");
    let server = gateway(
        &upstream,
        &[&signer],
        &["--oauth-forward-authorization", "true"],
    );
    let token = signer.sign(&claims(json!({})));
    assert_relayed(&call(&server, "ping", 1, &bearer(&token)));
    let headers = upstream.last_headers();
    assert!(
        headers.iter().any(
            |(n, v)| n.eq_ignore_ascii_case("Authorization") && *v == format!("Bearer {token}")
        ),
        "{headers:?}"
    );
}

#[test]
fn refused_tokens_are_401_invalid_token_counted_by_reason() {
    let upstream = Upstream::start();
    let rs = rsa_signer(Algorithm::RS256, "rsa-1");
    let ec = ec_signer("ec-1");
    let stranger = ec_signer("ec-1");
    let server = gateway(&upstream, &[&rs, &ec], &[]);
    let b64 = |v: Value| {
        use base64::Engine;
        base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(serde_json::to_vec(&v).unwrap())
    };
    // `alg: none` with no signature.
    let none = format!(
        "{}.{}.",
        b64(json!({"alg": "none", "typ": "JWT", "kid": "rsa-1"})),
        b64(claims(json!({})))
    );
    // HS256 keyed with the RSA key's public modulus (what a verifier that
    // takes `alg` from the token would accept).
    let public = match &rs.jwk.algorithm {
        jsonwebtoken::jwk::AlgorithmParameters::RSA(rsa) => rsa.n.clone(),
        _ => unreachable!(),
    };
    let mut hs_header = Header::new(Algorithm::HS256);
    hs_header.kid = Some("rsa-1".into());
    let hmac = jsonwebtoken::encode(
        &hs_header,
        &claims(json!({})),
        &EncodingKey::from_secret(public.as_bytes()).unwrap(),
    )
    .unwrap();
    // PS256 with a key the JWKS gives for RS256 only.
    let mut ps_header = Header::new(Algorithm::PS256);
    ps_header.kid = Some("rsa-1".into());
    let wrong_alg = jsonwebtoken::encode(
        &ps_header,
        &claims(json!({})),
        &EncodingKey::from_rsa_der(rsa_der()),
    )
    .unwrap();
    let cases: Vec<(&str, String)> = vec![
        (
            "wrong_audience",
            ec.sign(&claims(json!({"aud": "https://other.example/mcp"}))),
        ),
        ("wrong_audience", ec.sign(&claims(json!({"aud": null})))),
        (
            "wrong_issuer",
            ec.sign(&claims(json!({"iss": "https://evil.example"}))),
        ),
        (
            "token_expired",
            ec.sign(&claims(json!({"exp": now() - 600}))),
        ),
        (
            "token_invalid",
            ec.sign(&claims(json!({"nbf": now() + 600}))),
        ),
        ("token_invalid", ec.sign(&claims(json!({"exp": null})))),
        ("token_invalid", stranger.sign(&claims(json!({})))),
        ("token_invalid", none),
        ("token_invalid", hmac),
        ("token_invalid", wrong_alg),
        ("token_invalid", "not.a.token".to_owned()),
        ("token_invalid", "x".repeat(6000)),
    ];
    for (reason, token) in cases {
        let before = server.metric(&series(reason, 401));
        let answer = call(&server, "echo", 3, &bearer(&token));
        assert_refused(&answer, 401, Value::Null, &token);
        let challenge = answer.header("WWW-Authenticate").unwrap_or_default();
        assert!(
            challenge.starts_with("Bearer error=\"invalid_token\"")
                && challenge.contains(&format!("resource_metadata=\"{METADATA_URL}\"")),
            "{reason}: {challenge}"
        );
        assert_eq!(
            server.metric(&series(reason, 401)),
            before + 1,
            "{reason}: {}",
            String::from_utf8_lossy(&answer.body)
        );
    }
    assert_eq!(upstream.count(), 0);
}

#[test]
fn a_tool_call_without_its_scope_is_403_insufficient_scope() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let before = server.metric(&series("insufficient_scope", 403));
    let answer = call(&server, "echo", 42, &bearer(&token));
    // A parsed request: its id is echoed.
    assert_refused(&answer, 403, json!(42), &token);
    assert_eq!(
        answer.header("WWW-Authenticate"),
        Some(
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"tools:echo\", resource_metadata=\"{METADATA_URL}\""
            )
            .as_str()
        )
    );
    assert_eq!(
        server.metric(&series("insufficient_scope", 403)),
        before + 1
    );
    assert_eq!(upstream.count(), 0);
    // Tools without a scope of their own, and the scoped one with it.
    assert_relayed(&call(&server, "ping", 1, &bearer(&token)));
    let scoped = signer.sign(&claims(json!({"scp": ["mcp", "tools:echo"]})));
    assert_relayed(&call(&server, "echo", 2, &bearer(&scoped)));
    assert_eq!(upstream.count(), 2);
}

/// The answer to a `tools/list` with `token`.
fn list(server: &Server, token: &str) -> Answer {
    let message = json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list",
        "params": {"_meta": meta()}});
    let body = serde_json::to_vec(&message).unwrap();
    server.send(&post(
        "/mcp",
        &modern_headers(&message),
        &body,
        &format!("{CLIENT_HEADERS}{}", bearer(token)),
    ))
}

/// The names of the tools a `tools/list` with `token` gets.
fn listed(server: &Server, token: &str) -> Vec<String> {
    let answer = list(server, token);
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    answer.json()["result"]["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_tools_list_answer_lists_only_the_tools_the_callers_scopes_allow() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let without = signer.sign(&claims(json!({"scope": "mcp"})));
    assert_eq!(listed(&server, &without), ["ping"]);
    let with = signer.sign(&claims(json!({"scope": "mcp tools:echo"})));
    assert_eq!(listed(&server, &with), ["echo", "ping"]);
    assert_eq!(upstream.count(), 2);
}

/// The events of a 2025 lane's GET stream opened with `token`, each
/// event's `data` read as JSON.
fn streamed(server: &Server, token: &str) -> (Answer, Vec<Value>) {
    let answer = server.send(
        format!(
            "GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\
             MCP-Protocol-Version: 2025-11-25\r\nLast-Event-ID: 6\r\n{}\r\n",
            bearer(token)
        )
        .as_bytes(),
    );
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let events = String::from_utf8_lossy(&answer.body)
        .split("\n\n")
        .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    (answer, events)
}

#[test]
fn a_tools_list_answer_replayed_on_a_get_stream_lists_only_the_tools_the_callers_scopes_allow() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let names = |events: &[Value]| -> Vec<String> {
        events[1]["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap().to_owned())
            .collect()
    };
    let without = signer.sign(&claims(json!({"scope": "mcp"})));
    let (answer, events) = streamed(&server, &without);
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["method"], "notifications/tools/list_changed");
    assert_eq!(names(&events), ["ping"]);
    // The upstream's length no longer holds: the stream is re-chunked.
    assert_eq!(answer.header("Transfer-Encoding"), Some("chunked"));
    assert!(String::from_utf8_lossy(&answer.body).contains("id: 7\n"));
    // A caller granted every tool's scopes gets the stream as it came.
    let with = signer.sign(&claims(json!({"scope": "mcp tools:echo"})));
    let (answer, events) = streamed(&server, &with);
    assert_eq!(names(&events), ["echo", "ping"]);
    assert!(answer.header("Content-Length").is_some());
    assert_eq!(upstream.count(), 2);
}

#[test]
fn a_listing_too_large_to_filter_is_502_never_sent_unfiltered() {
    let tools: Vec<Value> = (0..200)
        .map(|n| json!({"name": format!("tool_{n:03}"), "inputSchema": {"type": "object"}}))
        .chain([json!({"name": "echo", "inputSchema": {"type": "object"}})])
        .collect();
    let listing = json!({"jsonrpc": "2.0", "id": 5, "result": {"tools": tools}}).to_string();
    assert!(listing.len() > 4096);
    let upstream = Upstream::listing(listing);
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &["--body-limit", "4096"]);
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let answer = list(&server, &token);
    assert_eq!(answer.status, 502);
    assert_eq!(answer.json()["error"]["code"], json!(-32603));
    assert!(!String::from_utf8_lossy(&answer.body).contains("echo"));
    // A caller granted every tool's scopes gets the answer as it streams.
    let full = signer.sign(&claims(json!({"scope": "mcp tools:echo"})));
    let answer = list(&server, &full);
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.json()["result"]["tools"].as_array().unwrap().len(),
        201
    );
}

/// Thirteen tools: `echo`, which needs `tools:echo`, with a description
/// and a schema of its own, and twelve any caller may call.
fn thirteen_tools() -> Vec<Value> {
    let mut tools = vec![json!({
        "name": "echo",
        "description": "SCOPED-DESCRIPTION",
        "inputSchema": {"type": "object", "properties": {"scoped_field": {"type": "string"}}},
    })];
    tools.extend(
        (1..=12)
            .map(|n| json!({"name": format!("open_{n:02}"), "inputSchema": {"type": "object"}})),
    );
    tools
}

/// A `tools/list` answer with the thirteen tools, as one line of JSON.
fn thirteen_listed(id: i64) -> String {
    json!({"jsonrpc": "2.0", "id": id, "result": {"tools": thirteen_tools()}}).to_string()
}

/// Nothing of `echo` (its name, description or schema) is in `bytes`.
#[track_caller]
fn assert_nothing_of_the_scoped_tool(bytes: &[u8]) {
    let text = String::from_utf8_lossy(bytes);
    for mark in ["\"echo\"", "SCOPED-DESCRIPTION", "scoped_field"] {
        assert!(!text.contains(mark), "{mark} reached the caller: {text}");
    }
}

/// The names of the tools of a result.
fn names(result: &Value) -> Vec<String> {
    result["tools"]
        .as_array()
        .unwrap_or_else(|| panic!("no tools in {result}"))
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_owned())
        .collect()
}

fn twelve_open() -> Vec<String> {
    (1..=12).map(|n| format!("open_{n:02}")).collect()
}

/// A 2025-03-26 GET stream (no `MCP-Protocol-Version`) opened with
/// `token`, without a session id (a raw one would be another's).
fn stream_2025_03_26(server: &Server, token: &str) -> Answer {
    server.send(
        format!(
            "GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\
             Last-Event-ID: 6\r\n{}\r\n",
            bearer(token)
        )
        .as_bytes(),
    )
}

/// The `data` of each event of an event stream, read as JSON.
fn event_data(body: &[u8]) -> Vec<Value> {
    String::from_utf8_lossy(body)
        .split("\n\n")
        .filter_map(|event| event.lines().find_map(|line| line.strip_prefix("data: ")))
        .map(|data| serde_json::from_str(data).unwrap())
        .collect()
}

fn bad_answers() -> String {
    "mcpgate_rejections_total{rejecter=\"forward\",reason=\"upstream_bad_answer\",status=\"502\"}"
        .to_owned()
}

#[test]
fn a_batch_listing_as_a_json_body_is_filtered_element_by_element() {
    let batch = format!("[{},{}]", thirteen_listed(5), thirteen_listed(6));
    let upstream = Upstream::answering(
        exact_answer("application/json", batch.as_bytes()),
        Vec::new(),
    );
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let answer = list(&server, &token);
    assert_eq!(answer.status, 200);
    assert_nothing_of_the_scoped_tool(&answer.body);
    let body = answer.json();
    assert_eq!(body.as_array().unwrap().len(), 2, "{body}");
    for element in body.as_array().unwrap() {
        assert_eq!(names(&element["result"]), twelve_open());
    }
    // A caller granted `tools:echo` gets all thirteen, as they came.
    let full = signer.sign(&claims(json!({"scope": "mcp tools:echo"})));
    assert_eq!(list(&server, &full).body, batch.as_bytes());
}

#[test]
fn a_batch_listing_as_an_event_stream_is_filtered_element_by_element() {
    // A byte order mark opens the stream (a reader drops it); another
    // opens the second event (a reader takes `\u{feff}data` for a field it
    // does not know, and ignores it).
    let events = format!(
        "\u{feff}event: message\nid: 1\ndata: [{}]\n\n\u{feff}data: {}\n\n",
        thirteen_listed(5),
        thirteen_listed(6)
    );
    let upstream = Upstream::answering(
        exact_answer("text/event-stream", events.as_bytes()),
        Vec::new(),
    );
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let answer = list(&server, &token);
    assert_eq!(answer.status, 200);
    assert_nothing_of_the_scoped_tool(&answer.body);
    let text = String::from_utf8_lossy(&answer.body);
    assert!(
        text.starts_with("event: message\nid: 1\ndata: [{"),
        "{text}"
    );
    let data = event_data(&answer.body);
    assert_eq!(data.len(), 1, "{text}");
    assert_eq!(names(&data[0][0]["result"]), twelve_open());
}

#[test]
fn a_batch_listing_on_a_2025_03_26_get_stream_is_filtered_element_by_element() {
    // A batch after the byte order mark opening the stream; an event a
    // reader ignores (a field it does not know, `\u{feff}data`); one whose
    // lines end in a lone CR; one with a field a lax reader might take for
    // data.
    let notification = r#"{"jsonrpc":"2.0","method":"notifications/progress"}"#;
    let events = format!(
        "\u{feff}id: 7\ndata: [{},{notification}]\n\n\u{feff}data: {}\n\n\
         id: 8\rdata: {}\n\nx-data: {}\ndata: {notification}\n\n",
        thirteen_listed(5),
        thirteen_listed(6),
        thirteen_listed(7),
        thirteen_listed(8),
    );
    let upstream = Upstream::answering(
        Vec::new(),
        exact_answer("text/event-stream", events.as_bytes()),
    );
    let signer = ec_signer("ec-1");
    let server = gateway(&upstream, &[&signer], &[]);
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let answer = stream_2025_03_26(&server, &token);
    assert_eq!(answer.status, 200);
    assert_nothing_of_the_scoped_tool(&answer.body);
    let data = event_data(&answer.body);
    assert_eq!(data.len(), 3, "{}", String::from_utf8_lossy(&answer.body));
    assert_eq!(names(&data[0][0]["result"]), twelve_open());
    assert_eq!(data[0][1]["method"], "notifications/progress");
    assert_eq!(names(&data[1]["result"]), twelve_open());
    assert_eq!(data[1]["id"], 7);
    assert_eq!(data[2]["method"], "notifications/progress");
    let text = String::from_utf8_lossy(&answer.body);
    assert!(
        text.starts_with("id: 7\n") && text.contains("id: 8\n"),
        "{text}"
    );
}

#[test]
fn a_listing_the_filter_cannot_read_is_never_relayed() {
    let signer = ec_signer("ec-1");
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let listed = thirteen_listed(5);
    let inner = serde_json::to_string(&listed).unwrap();
    // Whole answers: refused with 502, counted.
    for (content_type, body) in [
        // Not JSON.
        ("application/json", format!("[{listed},")),
        // A batch element that is no message.
        ("application/json", format!("[{listed},[{listed}]]")),
        // `result` twice: the caller's parser might read the first.
        (
            "application/json",
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{{\"tools\":{}}},\"result\":{{\"tools\":[]}}}}",
                json!(thirteen_tools())
            ),
        ),
        // `tools` that is not a list.
        (
            "application/json",
            format!(
                "{{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{{\"tools\":{{\"echo\":{}}}}}}}",
                json!(thirteen_tools()[0])
            ),
        ),
        // A listing inside a string: not a message.
        ("application/json", inner.clone()),
        // An event whose data is no JSON.
        ("text/event-stream", format!("data: [{listed}\n\n")),
        // No event stream at all, though the upstream says it is one.
        (
            "text/event-stream",
            format!("{{\"x\":1}}\n\ndata: {inner}\n\n"),
        ),
    ] {
        let upstream = Upstream::answering(exact_answer(content_type, body.as_bytes()), Vec::new());
        let server = gateway(&upstream, &[&signer], &[]);
        let answer = list(&server, &token);
        assert_eq!(answer.status, 502, "{body}");
        assert_eq!(answer.json()["error"]["code"], json!(-32603));
        assert_eq!(answer.json()["id"], json!(5));
        assert_nothing_of_the_scoped_tool(&answer.body);
        assert_eq!(server.metric(&bad_answers()), 1, "{body}");
    }
    // A GET stream: the unreadable events are left out, the rest relayed.
    let twice = format!(
        "{{\"jsonrpc\":\"2.0\",\"id\":5,\"result\":{{\"tools\":{}}},\"result\":{{}}}}",
        json!(thirteen_tools())
    );
    let events = format!(
        "data: [{listed}\n\ndata: {inner}\n\ndata: {twice}\n\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}}\n\n",
    );
    let upstream = Upstream::answering(
        Vec::new(),
        exact_answer("text/event-stream", events.as_bytes()),
    );
    let server = gateway(&upstream, &[&signer], &[]);
    let answer = stream_2025_03_26(&server, &token);
    assert_eq!(answer.status, 200);
    assert_nothing_of_the_scoped_tool(&answer.body);
    assert_eq!(
        answer.body,
        b"data: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n"
    );
    // A GET answered with JSON, not a stream: filtered whole.
    let upstream = Upstream::answering(
        Vec::new(),
        exact_answer("application/json", format!("[{listed}]").as_bytes()),
    );
    let server = gateway(&upstream, &[&signer], &[]);
    let answer = stream_2025_03_26(&server, &token);
    assert_eq!(answer.status, 200);
    assert_nothing_of_the_scoped_tool(&answer.body);
    assert_eq!(names(&answer.json()[0]["result"]), twelve_open());
}

/// A whole HTTP answer with `status_line`, `content_type` and `body`.
fn answer_with(status_line: &str, content_type: &str, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status_line}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

#[test]
fn a_listing_answered_with_any_status_is_filtered_or_withheld() {
    let signer = ec_signer("ec-1");
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let listed = thirteen_listed(5);
    let error =
        r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32001,"message":"Session not found"}}"#;
    // The upstream's answer to a `tools/list` and to a GET, the status the
    // caller gets (0: the upstream's), its body (`None`: the twelve tools).
    type Case<'a> = (Vec<u8>, Vec<u8>, u16, Option<&'a str>);
    let cases: Vec<Case> = vec![
        // Another success: a client reads it; filtered.
        (
            answer_with(
                "203 Non-Authoritative Information",
                "application/json",
                &listed,
            ),
            answer_with(
                "203 Non-Authoritative Information",
                "application/json",
                &listed,
            ),
            203,
            None,
        ),
        // An error whose body cannot be read: the status alone.
        (
            answer_with(
                "500 Internal Server Error",
                "text/plain",
                &format!("failed: {listed}"),
            ),
            answer_with(
                "405 Method Not Allowed",
                "text/plain",
                &format!("no: {listed}"),
            ),
            0,
            Some(""),
        ),
        // An error the filter reads, and an empty success: as they came.
        (
            answer_with("404 Not Found", "application/json", error),
            answer_with("404 Not Found", "application/json", error),
            404,
            Some(error),
        ),
        (
            answer_with("202 Accepted", "application/json", ""),
            answer_with("202 Accepted", "application/json", ""),
            202,
            Some(""),
        ),
    ];
    for (listing, stream, status, body) in cases {
        let upstream = Upstream::answering(listing, stream);
        let server = gateway(&upstream, &[&signer], &[]);
        for answer in [list(&server, &token), stream_2025_03_26(&server, &token)] {
            assert_nothing_of_the_scoped_tool(&answer.body);
            if status != 0 {
                assert_eq!(answer.status, status);
            } else {
                assert!(matches!(answer.status, 500 | 405), "{}", answer.status);
            }
            match body {
                Some(body) => assert_eq!(String::from_utf8_lossy(&answer.body), body),
                None => assert_eq!(names(&answer.json()["result"]), twelve_open()),
            }
        }
    }
}

#[test]
fn scopes_required_for_every_request_are_403_when_missing() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let server = gateway(
        &upstream,
        &[&signer],
        &["--oauth-scopes-required", "mcp,read"],
    );
    let token = signer.sign(&claims(json!({"scope": "mcp"})));
    let answer = call(&server, "ping", 1, &bearer(&token));
    assert_refused(&answer, 403, Value::Null, &token);
    assert_eq!(
        answer.header("WWW-Authenticate"),
        Some(
            format!(
                "Bearer error=\"insufficient_scope\", scope=\"mcp read\", resource_metadata=\"{METADATA_URL}\""
            )
            .as_str()
        )
    );
    let token = signer.sign(&claims(json!({"scope": "read mcp"})));
    assert_relayed(&call(&server, "ping", 1, &bearer(&token)));
}

/// `answer` is the upstream's result, relayed.
fn assert_relayed(answer: &Answer) {
    assert_eq!(
        (
            answer.status,
            &answer.json()["result"]["content"][0]["text"]
        ),
        (200, &json!("ok")),
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
}

/// Retries `call` until it answers `status` or 10 s pass.
fn eventually(status: u16, mut call: impl FnMut() -> Answer) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let answer = call();
        if answer.status == status || Instant::now() > deadline {
            return answer;
        }
        thread::sleep(Duration::from_millis(100));
    }
}

/// A gateway in front of `upstream` fetching its JWKS from `jwks`,
/// reloading it at most once a second.
fn url_gateway(upstream: &Upstream, jwks: &JwksServer) -> Server {
    Server::start(&[
        "--upstream",
        &upstream.url(),
        "--oauth-issuer",
        ISSUER,
        "--oauth-resource",
        RESOURCE,
        "--oauth-jwks-url",
        &jwks.url(),
        "--oauth-jwks-refresh-secs",
        "1",
    ])
}

#[test]
fn a_rotated_jwks_served_over_http_is_reloaded_on_an_unknown_key_id() {
    let upstream = Upstream::start();
    let old = ec_signer("old");
    let new = ed_signer("new");
    let jwks = JwksServer::start(&jwks(&[&old]));
    let server = url_gateway(&upstream, &jwks);
    assert_eq!(jwks.fetches.load(Ordering::SeqCst), 1);
    let old_token = old.sign(&claims(json!({})));
    let new_token = new.sign(&claims(json!({})));
    assert_relayed(&call(&server, "ping", 1, &bearer(&old_token)));
    // The authorization server rotates: the new key only.
    jwks.serve(Some(self::jwks(&[&new])));
    let answer = eventually(200, || call(&server, "ping", 1, &bearer(&new_token)));
    assert_relayed(&answer);
    // A burst of unknown key ids reloads at most once a second.
    let fetched = jwks.fetches.load(Ordering::SeqCst);
    let stranger = ec_signer("unknown").sign(&claims(json!({})));
    let started = Instant::now();
    for _ in 0..20 {
        assert_eq!(call(&server, "ping", 1, &bearer(&stranger)).status, 401);
    }
    let seconds = started.elapsed().as_secs() as usize;
    thread::sleep(Duration::from_millis(300));
    assert!(
        jwks.fetches.load(Ordering::SeqCst) <= fetched + seconds + 2,
        "{} fetches",
        jwks.fetches.load(Ordering::SeqCst) - fetched
    );
}

#[test]
fn a_failed_reload_keeps_the_keys_in_service() {
    let upstream = Upstream::start();
    let signer = rsa_signer(Algorithm::RS256, "rsa-1");
    let jwks = JwksServer::start(&jwks(&[&signer]));
    let server = url_gateway(&upstream, &jwks);
    let stranger = ec_signer("unknown").sign(&claims(json!({})));
    // An authorization server that fails, then one that serves a
    // malformed JWKS, then one with a symmetric key.
    for (fetches, served) in [
        (2, None),
        (3, Some("{\"keys\": [{\"kty\": 7".to_owned())),
        (
            4,
            Some(r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#.to_owned()),
        ),
    ] {
        jwks.serve(served);
        // Unknown key ids until a reload is tried (at most once a second).
        let deadline = Instant::now() + Duration::from_secs(10);
        while jwks.fetches.load(Ordering::SeqCst) < fetches && Instant::now() < deadline {
            assert_eq!(call(&server, "ping", 1, &bearer(&stranger)).status, 401);
            thread::sleep(Duration::from_millis(100));
        }
        assert!(
            jwks.fetches.load(Ordering::SeqCst) >= fetches,
            "no reload was tried"
        );
        thread::sleep(Duration::from_millis(200));
        // A token the server has not verified before (nothing cached).
        let token = signer.sign(&claims(json!({"sub": format!("user-{fetches}")})));
        assert_relayed(&call(&server, "ping", 1, &bearer(&token)));
    }
}

#[test]
fn a_cached_token_whose_key_left_the_jwks_is_refused_on_every_worker() {
    let upstream = Upstream::start();
    let kept = ec_signer("k1");
    let next = ed_signer("k2");
    let jwks = JwksServer::start(&jwks(&[&kept]));
    let server = Server::start(&[
        "--upstream",
        &upstream.url(),
        "--oauth-issuer",
        ISSUER,
        "--oauth-resource",
        RESOURCE,
        "--oauth-jwks-url",
        &jwks.url(),
        "--oauth-jwks-refresh-secs",
        "1",
        "--workers",
        "3",
    ]);
    let token = kept.sign(&claims(json!({"sub": "cached"})));
    let request = |id: i64| {
        let message = tools_call(json!(id), "ping", json!({}));
        post(
            "/mcp",
            &modern_headers(&message),
            &serde_json::to_vec(&message).unwrap(),
            &format!("{CLIENT_HEADERS}{}", bearer(&token)),
        )
    };
    // Connections kept open, each on the worker that accepted it, and
    // fresh ones spread over the workers: the token is verified and
    // remembered on each.
    let mut open: Vec<TcpStream> = (0..4).map(|_| server.connect()).collect();
    for (n, stream) in open.iter_mut().enumerate() {
        stream.write_all(&request(n as i64)).unwrap();
        assert_relayed(&process::read_answer(stream));
    }
    for n in 0..12 {
        assert_relayed(&server.send(&request(n)));
    }
    let relayed = upstream.count();
    // The authorization server drops `k1`; a token of `k2` (a key id the
    // gateway lacks) has the JWKS reloaded.
    jwks.serve(Some(self::jwks(&[&next])));
    let fresh = next.sign(&claims(json!({})));
    assert_relayed(&eventually(200, || {
        call(&server, "ping", 1, &bearer(&fresh))
    }));
    let before = server.metric(&series("token_invalid", 401));
    let mut refused = 0;
    for (n, stream) in open.iter_mut().enumerate() {
        stream.write_all(&request(n as i64)).unwrap();
        assert_refused(&process::read_answer(stream), 401, Value::Null, &token);
        refused += 1;
    }
    for n in 0..12 {
        let answer = server.send(&request(n));
        assert_refused(&answer, 401, Value::Null, &token);
        assert!(
            answer
                .header("WWW-Authenticate")
                .is_some_and(|c| c.starts_with("Bearer error=\"invalid_token\"")),
            "{:?}",
            answer.headers
        );
        refused += 1;
    }
    assert_eq!(
        server.metric(&series("token_invalid", 401)),
        before + refused
    );
    // Only the `k2` call reached the upstream after the reload.
    assert_eq!(upstream.count(), relayed + 1);
}

/// `serve` with `args` fails at start, naming `key`.
fn fails_naming(args: &[&str], key: &str) {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .args(args)
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2), "{args:?}");
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(stderr.contains(&format!("`{key}`")), "{args:?}: {stderr}");
}

#[test]
fn a_start_with_a_bad_oauth_setting_fails_naming_its_key() {
    let signer = ec_signer("ec-1");
    let good = write_file(&jwks(&[&signer]));
    let good = good.to_str().unwrap();
    let base = |issuer: &'static str, jwks: &str| -> Vec<String> {
        [
            "--oauth-issuer",
            issuer,
            "--oauth-resource",
            RESOURCE,
            "--oauth-jwks-file",
            jwks,
        ]
        .map(str::to_owned)
        .to_vec()
    };
    let run = |args: Vec<String>, key: &str| {
        fails_naming(&args.iter().map(String::as_str).collect::<Vec<_>>(), key)
    };
    run(base("auth.example", good), "oauth_issuer");
    run(base(ISSUER, "/no/such/jwks.json"), "oauth_jwks_file");
    let hs = write_file(r#"{"keys":[{"kty":"RSA","alg":"RS999","n":"AQAB","e":"AQAB"}]}"#);
    run(base(ISSUER, hs.to_str().unwrap()), "oauth_jwks_file");
    let malformed = write_file(r#"{"keys":[{"kty":"RSA","n":"%%%","e":{}}]}"#);
    run(base(ISSUER, malformed.to_str().unwrap()), "oauth_jwks_file");
    let mut both = base(ISSUER, good);
    both.extend(["--bearer-tokens".to_owned(), "t".to_owned()]);
    run(both, "bearer_tokens");
    let mut bad_scope = base(ISSUER, good);
    bad_scope.extend(["--oauth-scopes-required".to_owned(), "a\"b".to_owned()]);
    run(bad_scope, "oauth_scopes_required");
    run(
        vec!["--oauth-resource".to_owned(), RESOURCE.to_owned()],
        "oauth_issuer",
    );
}

#[test]
fn oauth_keys_are_read_from_the_toml_file_and_mcpgate_variables() {
    let signer = ed_signer("ed-1");
    let jwks = write_file(&jwks(&[&signer]));
    let config = write_file(&format!(
        "oauth_issuer = \"{ISSUER}\"\n\
         oauth_resource = \"{RESOURCE}\"\n\
         oauth_jwks_file = {:?}\n\
         oauth_authorization_servers = [\"https://login.example\"]\n\
         oauth_tool_scopes = {{ echo = [\"tools:echo\"] }}\n",
        jwks.to_str().unwrap()
    ));
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args(["serve", "--listen", "127.0.0.1:0", "--workers", "1"])
        .arg("--config")
        .arg(&config)
        .env("MCPGATE_OAUTH_SCOPES_REQUIRED", "mcp")
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let server = Server {
        address: line
            .trim()
            .strip_prefix("listening on ")
            .unwrap()
            .parse()
            .unwrap(),
        child,
    };
    let answer =
        server.send(b"GET /.well-known/oauth-protected-resource HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(
        answer.json(),
        json!({
            "resource": RESOURCE,
            "authorization_servers": ["https://login.example"],
            "scopes_supported": ["mcp", "tools:echo"],
            "bearer_methods_supported": ["header"],
        })
    );
}
