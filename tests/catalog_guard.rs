//! The catalog that decides what may be called, over real sockets on
//! 127.0.0.1, in front of a scripted upstream that records what reaches
//! it: no caller's traffic changes it once callers are told apart, a
//! `tools/call` waits for it (503) until the upstream has listed its
//! tools, and a tool's scopes guard it under every spelling of its name.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use process::{Answer, CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;
use tokens::*;

/// A request as the upstream received it.
#[derive(Debug, Clone)]
struct Received {
    headers: Vec<(String, String)>,
    body: String,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The gateway's own listing (it names itself in `clientInfo`), not a
    /// caller's.
    fn is_gateways_own(&self) -> bool {
        self.body.contains(r#"clientInfo":{"name":"mcpgate""#)
    }
}

/// What the upstream answers a request with: a status and a JSON body.
type Script = dyn Fn(&Received, &Value) -> (u16, Value) + Send + Sync;

/// A scripted upstream that records every request and answers each with
/// `script` (JSON, `Content-Length` framed, connections kept alive).
struct Upstream {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Upstream {
    fn start(script: impl Fn(&Received, &Value) -> (u16, Value) + Send + Sync + 'static) -> Self {
        let script: Arc<Script> = Arc::new(script);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let (seen, script) = (seen.clone(), script.clone());
                thread::spawn(move || {
                    while let Some(request) = read_request(&mut stream) {
                        seen.lock().unwrap().push(request.clone());
                        let message: Value =
                            serde_json::from_str(&request.body).unwrap_or_default();
                        let (status, result) = script(&request, &message);
                        let body = if status == 200 {
                            json!({"jsonrpc": "2.0", "id": message["id"], "result": result})
                        } else {
                            result
                        }
                        .to_string();
                        let answer = format!(
                            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
                            body.len()
                        );
                        if stream.write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        Upstream { addr, received }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// The `tools/call`s that reached it.
    fn calls(&self) -> Vec<Received> {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|r| r.body.contains(r#""method":"tools/call""#))
            .cloned()
            .collect()
    }
}

/// One request (`Content-Length` framed, or none); `None` at EOF.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let request = process::read_request(stream)?;
    Some(Received {
        headers: request.headers,
        body: String::from_utf8_lossy(&request.body).into_owned(),
    })
}

/// A tool whose arguments must hold a string `text`.
fn tool(name: &str) -> Value {
    json!({"name": name, "inputSchema": {"type": "object",
        "properties": {"text": {"type": "string"}}, "required": ["text"]}})
}

/// A `tools/call` result naming the tool it ran.
fn ran(message: &Value) -> Value {
    json!({"content": [{"type": "text", "text": message["params"]["name"]}]})
}

/// A modern `tools/call` of `name` on the endpoint, with `extra` headers.
fn call(name: &str, id: i64, arguments: Value, extra: &str) -> Vec<u8> {
    let message = tools_call(json!(id), name, arguments);
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{extra}"),
    )
}

/// A modern `tools/list` on the endpoint.
fn list(id: &str, extra: &str) -> Vec<u8> {
    let message = json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta": meta()}});
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{extra}"),
    )
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\n")
}

fn series(rejecter: &str, reason: &str, status: u16) -> String {
    format!(
        "mcpgate_rejections_total{{rejecter=\"{rejecter}\",reason=\"{reason}\",status=\"{status}\"}}"
    )
}

/// Sends `raw` until it is answered 200 without a JSON-RPC error (a
/// refusal of a request goes with 200 too): at most 100 tries over at most
/// 20 s; the last answer.
fn until_answered(server: &Server, raw: &[u8]) -> Answer {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut answer = server.send(raw);
    for _ in 0..100 {
        let answered = answer.status == 200 && answer.json()["error"].is_null();
        if answered || Instant::now() > deadline {
            break;
        }
        thread::sleep(Duration::from_millis(200));
        answer = server.send(raw);
    }
    answer
}

/// An OAuth gateway in front of `upstream` (the token's `sub` sent up in
/// `X-Auth-Subject`) whose tool `delete_order` needs `orders:write`.
fn oauth_gateway(upstream: &Upstream, signer: &Signer, extra: &[&str]) -> Server {
    let jwks = write_file(&jwks(&[signer]));
    let mut args = vec![
        "--upstream",
        &upstream.url(),
        "--oauth-issuer",
        ISSUER,
        "--oauth-resource",
        RESOURCE,
        "--oauth-jwks-file",
        jwks.to_str().unwrap(),
        "--oauth-subject-header",
        "X-Auth-Subject",
        "--oauth-tool-scopes",
        "delete_order=orders:write",
    ]
    .into_iter()
    .map(str::to_owned)
    .collect::<Vec<_>>();
    args.extend(extra.iter().map(|a| (*a).to_owned()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    Server::start(&args)
}

fn token(signer: &Signer, subject: &str, scope: &str) -> String {
    signer.sign(&claims(json!({"sub": subject, "scope": scope})))
}

#[test]
fn a_tools_call_before_the_catalog_is_known_is_refused_503_with_retry_after_and_never_forwarded() {
    let listing_works = Arc::new(AtomicBool::new(false));
    let works = listing_works.clone();
    let upstream = Upstream::start(move |_, message| match message["method"].as_str() {
        Some("tools/list") | Some("initialize") if !works.load(Ordering::SeqCst) => (
            500,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "starting"}}),
        ),
        Some("tools/list") => (200, json!({"tools": [tool("echo")]})),
        _ => (200, ran(message)),
    });
    let server = Server::start(&["--upstream", &upstream.url()]);
    let refused = series("value", "catalog_unknown", 503);

    let answer = server.send(&call("echo", 7, json!({"text": "hi"}), ""));
    assert_eq!(
        answer.status,
        503,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let retry: u64 = answer.header("Retry-After").unwrap().parse().unwrap();
    assert!((1..=60).contains(&retry), "Retry-After: {retry}");
    let body = answer.json();
    assert_eq!(body["id"], json!(7));
    assert_eq!(body["error"]["code"], json!(-32603));
    let message = body["error"]["message"].as_str().unwrap();
    assert!(message.contains("catalog is not known yet"), "{message}");
    assert_own_error(&body);
    // The verdict service answers what the endpoint would.
    let message = tools_call(json!("v"), "echo", json!({"text": "hi"}));
    let validate = server.send(&post(
        "/validate",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    ));
    assert_eq!(validate.status, 503);
    assert!(validate.header("Retry-After").is_some());
    assert_eq!(server.metric(&refused), 2);
    assert!(upstream.calls().is_empty(), "{:?}", upstream.calls());

    // The upstream comes up: once it has listed its tools, calls are
    // checked against them.
    listing_works.store(true, Ordering::SeqCst);
    let answer = until_answered(&server, &call("echo", 8, json!({"text": "hi"}), ""));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(answer.json()["error"].is_null(), "{}", answer.json());
    assert_eq!(upstream.calls().len(), 1);
    let wrong = server.send(&call("echo", 9, json!({"text": 5}), ""));
    assert_eq!(wrong.status, 200);
    assert_eq!(wrong.json()["result"]["isError"], json!(true));
    let unknown = server.send(&call("delete_everything", 10, json!({}), ""));
    assert_eq!(unknown.status, 200);
    assert_eq!(unknown.json()["error"]["code"], json!(-32602));
    assert_eq!(upstream.calls().len(), 1);
}

#[test]
fn with_unknown_tools_forward_a_call_before_the_catalog_is_known_is_forwarded() {
    let upstream = Upstream::start(|_, message| match message["method"].as_str() {
        Some("tools/list") | Some("initialize") => (
            500,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "down"}}),
        ),
        _ => (200, ran(message)),
    });
    let server = Server::start(&["--upstream", &upstream.url(), "--unknown-tools", "forward"]);
    let answer = server.send(&call("echo", 3, json!({"text": "hi"}), ""));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(upstream.calls().len(), 1);
    assert_eq!(server.metric(&series("value", "catalog_unknown", 503)), 0);
}

/// An upstream that lists tools per caller: its own listing gives the
/// gateway `echo` and `ping` (and `later` once `added`), a caller other
/// than `alice` is listed `ping` alone.
fn per_caller_upstream(added: Arc<AtomicBool>) -> Upstream {
    Upstream::start(move |request, message| match message["method"].as_str() {
        Some("tools/list") => {
            let mut tools = vec![tool("ping")];
            if request.is_gateways_own() || request.header("X-Auth-Subject") == Some("alice") {
                tools.push(tool("echo"));
                if added.load(Ordering::SeqCst) {
                    tools.push(tool("later"));
                }
            }
            (200, json!({"tools": tools}))
        }
        _ => (200, ran(message)),
    })
}

#[test]
fn with_oauth_one_callers_listing_does_not_change_what_another_may_call() {
    let added = Arc::new(AtomicBool::new(false));
    let upstream = per_caller_upstream(added.clone());
    let signer = ec_signer("k1");
    let server = oauth_gateway(&upstream, &signer, &[]);
    let alice = bearer(&token(&signer, "alice", "mcp"));
    let low = bearer(&token(&signer, "low", "mcp"));
    for round in 0..5 {
        let listed = server.send(&list("low-list", &low));
        assert_eq!(listed.status, 200);
        let names: Vec<Value> = listed.json()["result"]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].clone())
            .collect();
        assert_eq!(names, [json!("ping")], "the upstream lists `low` one tool");
        let answer = server.send(&call("echo", round, json!({"text": "hi"}), &alice));
        assert_eq!(
            answer.status,
            200,
            "round {round}: {}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.json()["result"]["content"][0]["text"], json!("echo"));
    }
    assert_eq!(upstream.calls().len(), 5);
    assert_eq!(server.metric(&series("value", "unknown_tool", 400)), 0);
    assert_eq!(server.metric("mcpgate_catalogs_learned_total"), 0);
    // The gateway's own listing still follows the upstream: a tool it adds
    // is learned (a call naming it asks for a new listing).
    added.store(true, Ordering::SeqCst);
    let answer = until_answered(&server, &call("later", 99, json!({"text": "hi"}), &alice));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(answer.json()["error"].is_null(), "{}", answer.json());
}

#[test]
fn with_bearer_tokens_a_listing_passing_through_does_not_become_the_catalog() {
    let upstream = per_caller_upstream(Arc::default());
    let server = Server::start(&[
        "--upstream",
        &upstream.url(),
        "--bearer-tokens",
        "t-low,t-high",
    ]);
    let low = bearer("t-low");
    let high = bearer("t-high");
    for round in 0..3 {
        assert_eq!(server.send(&list("l", &low)).status, 200);
        let answer = server.send(&call("echo", round, json!({"text": "hi"}), &high));
        assert_eq!(
            answer.status,
            200,
            "round {round}: {}",
            String::from_utf8_lossy(&answer.body)
        );
    }
    assert_eq!(upstream.calls().len(), 3);
    assert_eq!(server.metric("mcpgate_catalogs_learned_total"), 0);
}

#[test]
fn a_scope_guards_its_tool_under_every_spelling_before_a_catalog_is_known() {
    // The upstream never lists its tools, and matches names loosely: it
    // would run `delete_order` for any of these spellings.
    let upstream = Upstream::start(|_, message| match message["method"].as_str() {
        Some("tools/list") | Some("initialize") => (
            500,
            json!({"jsonrpc": "2.0", "id": null, "error": {"code": -32603, "message": "down"}}),
        ),
        _ => (200, ran(message)),
    });
    let signer = ec_signer("k1");
    let without = bearer(&token(&signer, "bob", "mcp"));
    let with = bearer(&token(&signer, "carol", "mcp orders:write"));
    let modern = |name: &str, id: i64, auth: &str| {
        // Exact bytes: the name as a loose matcher would read it.
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"{name}","arguments":{{}}}}}}"#
        );
        let headers = [
            ("MCP-Protocol-Version", "2026-07-28"),
            ("Mcp-Method", "tools/call"),
            ("Mcp-Name", name),
        ]
        .map(|(n, v)| (n.to_owned(), v.to_owned()));
        post(
            "/mcp",
            &headers,
            body.as_bytes(),
            &format!("{CLIENT_HEADERS}{auth}"),
        )
    };
    let legacy = |name: &str, id: i64, auth: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"name":"{name}","arguments":{{}}}}}}"#
        );
        post(
            "/mcp",
            &legacy_headers(),
            body.as_bytes(),
            &format!("{CLIENT_HEADERS}{auth}"),
        )
    };
    for policy in [&["--unknown-tools", "forward"][..], &[]] {
        let server = oauth_gateway(&upstream, &signer, policy);
        let refusals = [
            modern("Delete_Order", 1, &without),
            modern("DELETE_ORDER", 2, &without),
            modern("delete_order", 3, &without),
            legacy(" delete_order ", 4, &without),
            legacy("Delete_Order\\t", 5, &without),
        ];
        for (n, raw) in refusals.iter().enumerate() {
            let answer = server.send(raw);
            assert_eq!(
                answer.status,
                403,
                "{policy:?} #{n}: {}",
                String::from_utf8_lossy(&answer.body)
            );
            assert_eq!(answer.json()["id"], json!(n + 1));
            let challenge = answer.header("WWW-Authenticate").unwrap();
            assert!(challenge.contains(r#"scope="orders:write""#), "{challenge}");
        }
        assert!(upstream.calls().is_empty(), "{:?}", upstream.calls());
        assert_eq!(
            server.metric(&series("wire", "insufficient_scope", 403)),
            refusals.len() as u64
        );
    }
    // The scope holder's call goes on (forwarded unchecked, as asked).
    let server = oauth_gateway(&upstream, &signer, &["--unknown-tools", "forward"]);
    let answer = server.send(&modern("Delete_Order", 6, &with));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(upstream.calls().len(), 1);
}

#[test]
fn with_unknown_tools_forward_a_tools_name_in_another_spelling_is_checked_as_that_tool() {
    let upstream = Upstream::start(|_, message| (200, ran(message)));
    let catalog = write_file(
        &json!({"tools": [{"name": "delete_order", "inputSchema": {"type": "object",
            "properties": {"orderId": {"type": "integer"}}, "required": ["orderId"]}}]})
        .to_string(),
    );
    let server = Server::start(&[
        "--upstream",
        &upstream.url(),
        "--catalog",
        catalog.to_str().unwrap(),
        "--unknown-tools",
        "forward",
    ]);
    let legacy = |name: &str, arguments: &str| {
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"{name}","arguments":{arguments}}}}}"#
        );
        post("/mcp", &legacy_headers(), body.as_bytes(), CLIENT_HEADERS)
    };
    for name in ["Delete_Order", " delete_order ", "DELETE_ORDER"] {
        let answer = server.send(&legacy(name, r#"{"orderId":"all"}"#));
        assert_eq!(answer.status, 200, "{name:?}");
        assert_eq!(answer.json()["result"]["isError"], json!(true), "{name:?}");
    }
    assert!(upstream.calls().is_empty(), "{:?}", upstream.calls());
    let answer = server.send(&legacy("Delete_Order", r#"{"orderId":7}"#));
    assert_eq!(
        answer.json()["result"]["content"][0]["text"],
        json!("Delete_Order")
    );
    // A name no tool is spelled like is still the upstream's to decide.
    server.send(&legacy("other_tool", "{}"));
    assert_eq!(upstream.calls().len(), 2);
}
