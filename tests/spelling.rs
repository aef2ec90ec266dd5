//! What the gate did not judge never reaches the upstream, over real
//! sockets on 127.0.0.1: header names spelled with `_` for `-` (one
//! header to CGI and WSGI stacks), MCP binding headers nothing checks (on
//! a GET or DELETE, on the 2025 lane), `params` members the gate reads
//! spelled in another case, and an access token in the query string. An
//! upstream records every request that reaches it.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::thread;

use process::{Answer, CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;
use tokens::*;

const TOKEN: &str = "t0k3n";

/// One request as the upstream received it: its request line and headers.
#[derive(Clone, Debug)]
struct Received {
    line: String,
    headers: Vec<(String, String)>,
}

/// An upstream that records each request and answers it: a JSON result to
/// a POST, an empty event stream to a GET, 200 to a DELETE.
struct Upstream {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Upstream {
    fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let seen = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let seen = seen.clone();
                thread::spawn(move || serve(stream, &seen));
            }
        });
        Upstream { addr, received }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }

    fn last(&self) -> Received {
        self.received.lock().unwrap().last().cloned().unwrap()
    }
}

fn serve(stream: TcpStream, seen: &Mutex<Vec<Received>>) {
    let mut reader = BufReader::new(stream.try_clone().unwrap());
    let mut stream = stream;
    // Bounded: a gateway connection carries a handful of requests here.
    for _ in 0..64 {
        let mut line = String::new();
        if reader.read_line(&mut line).unwrap_or(0) == 0 {
            return;
        }
        let mut headers = Vec::new();
        loop {
            let mut header = String::new();
            if reader.read_line(&mut header).unwrap_or(0) == 0 {
                return;
            }
            let Some((name, value)) = header.trim_end().split_once(':') else {
                break;
            };
            headers.push((name.to_owned(), value.trim().to_owned()));
        }
        let length = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map_or(0, |(_, v)| v.parse().unwrap());
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let method = line.split(' ').next().unwrap_or_default().to_owned();
        seen.lock().unwrap().push(Received {
            line: line.trim_end().to_owned(),
            headers,
        });
        let answer: &[u8] = match method.as_str() {
            "GET" => b"HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 0\r\n\r\n",
            "DELETE" => b"HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
            _ => b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 62\r\n\r\n{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"content\":[],\"isError\":false}}",
        };
        if stream.write_all(answer).is_err() {
            return;
        }
    }
}

/// A gateway with bearer tokens in front of `upstream`, the test catalog.
fn gateway(upstream: &Upstream) -> Server {
    Server::start(&[
        "--upstream",
        &upstream.url(),
        "--bearer-tokens",
        TOKEN,
        "--catalog",
        catalog_path().to_str().unwrap(),
    ])
}

fn client() -> String {
    format!("{CLIENT_HEADERS}Authorization: Bearer {TOKEN}\r\n")
}

fn series(rejecter: &str, reason: &str, status: u16) -> String {
    format!(
        "mcpgate_rejections_total{{rejecter=\"{rejecter}\",reason=\"{reason}\",status=\"{status}\"}}"
    )
}

/// A valid modern `tools/call` of `echo` with `extra` header lines.
fn modern_call(extra: &str) -> Vec<u8> {
    let message = tools_call(json!(1), "echo", json!({}));
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{}{extra}", client()),
    )
}

/// `answer` is a 400 error envelope with `code`, `id`, and `data.header`
/// (when given).
#[track_caller]
fn assert_refused(answer: &Answer, code: i64, id: Value, header: Option<&str>) {
    assert_refused_with(answer, 400, code, id, header);
}

/// As [`assert_refused`], answered with `status`.
fn assert_refused_with(answer: &Answer, status: u16, code: i64, id: Value, header: Option<&str>) {
    let text = String::from_utf8_lossy(&answer.body).into_owned();
    assert_eq!(answer.status, status, "{text}");
    let body = answer.json();
    assert_eq!(body["error"]["code"], json!(code), "{text}");
    assert_eq!(body["id"], id, "{text}");
    if let Some(header) = header {
        assert_eq!(body["error"]["data"]["header"], json!(header), "{text}");
    }
}

#[test]
fn framing_and_mcp_headers_spelled_with_underscores_are_refused_before_the_upstream() {
    let upstream = Upstream::start();
    let server = gateway(&upstream);
    let underscored = series("wire", "underscored_header", 400);
    let before = server.metric(&underscored);
    let cases = [
        ("Content_Length: 5", "Content-Length"),
        ("Transfer_Encoding: chunked", "Transfer-Encoding"),
        ("content_type: text/plain", "Content-Type"),
        ("Content_Encoding: br", "Content-Encoding"),
        ("Accept_Encoding: gzip", "Accept-Encoding"),
        ("Keep_Alive: timeout=5", "Keep-Alive"),
        ("Proxy_Authorization: Basic YQ==", "Proxy-*"),
        ("X_Forwarded_Host: h", ""),
        ("Mcp_Method: tools/list", "Mcp-Method"),
        ("MCP_NAME: delete_order", "Mcp-Name"),
        ("Mcp-Session_Id: other", "Mcp-Session-Id"),
        ("MCP_Protocol_Version: 2025-03-26", "MCP-Protocol-Version"),
        ("Mcp_Param_Region: EU", "Mcp-Param-*"),
        ("Mcp-Param_Region: EU", "Mcp-Param-*"),
        ("Mcp_Anything: x", "Mcp-*"),
        ("Last_Event_ID: 7", "Last-Event-ID"),
    ];
    let mut refused = 0;
    for (line, header) in cases {
        let answer = server.send(&modern_call(&format!("{line}\r\n")));
        if header.is_empty() {
            // A name the gateway neither sets nor checks passes as sent.
            assert_eq!(answer.status, 200, "{line}");
            let name = line.split(':').next().unwrap();
            assert!(upstream.last().headers.iter().any(|(n, _)| n == name));
            continue;
        }
        assert_refused(&answer, -32600, Value::Null, Some(header));
        assert_eq!(
            answer.header("Connection"),
            Some("close"),
            "{line}: the head is refused whole"
        );
        refused += 1;
    }
    assert_eq!(upstream.count(), 1, "only the unguarded name was forwarded");
    assert_eq!(server.metric(&underscored), before + refused);
    // `Mcp-Param-` spelled exactly leaves the argument's name to the
    // annotation: one the tool annotates passes, checked.
    let message = tools_call(
        json!(2),
        "search_orders",
        json!({"marketplaceIds": ["A"], "region": "EU"}),
    );
    let mut headers = modern_headers(&message);
    headers.push(("Mcp-Param-Region".to_owned(), "EU".to_owned()));
    let body = serde_json::to_vec(&message).unwrap();
    let answer = server.send(&post("/mcp", &headers, &body, &client()));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(upstream.count(), 2);
}

#[test]
fn identity_headers_spelled_with_underscores_are_refused_and_never_reach_the_upstream() {
    let upstream = Upstream::start();
    let signer = ec_signer("ec-1");
    let jwks = write_file(&jwks(&[&signer]));
    let server = Server::start(&[
        "--upstream",
        &upstream.url(),
        "--catalog",
        catalog_path().to_str().unwrap(),
        "--oauth-issuer",
        ISSUER,
        "--oauth-resource",
        RESOURCE,
        "--oauth-jwks-file",
        jwks.to_str().unwrap(),
        "--oauth-subject-header",
        "X-Auth-Subject",
        "--oauth-scopes-header",
        "X-Auth-Scopes",
    ]);
    let token = signer.sign(&claims(json!({"sub": "alice", "scope": "mcp"})));
    let message = tools_call(json!(3), "echo", json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let send = |extra: &str| {
        server.send(&post(
            "/mcp",
            &modern_headers(&message),
            &body,
            &format!("{CLIENT_HEADERS}Authorization: Bearer {token}\r\n{extra}"),
        ))
    };
    let underscored = series("wire", "underscored_header", 400);
    let before = server.metric(&underscored);
    for (line, header) in [
        ("X_Auth_Subject: admin", "X-Auth-Subject"),
        ("X-Auth_Scopes: admin:all", "X-Auth-Scopes"),
        ("x_auth_scopes: admin:all", "X-Auth-Scopes"),
    ] {
        assert_refused(
            &send(&format!("{line}\r\n")),
            -32600,
            Value::Null,
            Some(header),
        );
    }
    assert_eq!(upstream.count(), 0);
    assert_eq!(server.metric(&underscored), before + 3);
    // The same request without the spoof reaches the upstream with the
    // gateway's own identity headers, and the client's of those names
    // dropped.
    let answer = send("X-Auth-Subject: admin\r\nX_Request_Id: 9\r\n");
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let received = upstream.last();
    let values = |name: &str| -> Vec<&str> {
        received
            .headers
            .iter()
            .filter(|(n, _)| n.replace('_', "-").eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    };
    assert_eq!(values("X-Auth-Subject"), ["alice"]);
    assert_eq!(values("X-Auth-Scopes"), ["mcp"]);
    assert_eq!(values("X-Request-Id"), ["9"]);
}

#[test]
fn a_legacy_get_or_delete_carrying_binding_headers_is_refused_before_the_upstream() {
    let upstream = Upstream::start();
    let server = gateway(&upstream);
    let unmirrored = series("wire", "unmirrored_header", 400);
    let before = server.metric(&unmirrored);
    let stream_head = |method: &str, extra: &str| {
        format!(
            "{method} /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nAuthorization: Bearer {TOKEN}\r\n{extra}\r\n"
        )
    };
    for (method, extra, header) in [
        (
            "GET",
            "Mcp-Method: tools/call\r\nMcp-Name: delete_order\r\n",
            "Mcp-Method",
        ),
        ("GET", "Mcp-Name: delete_order\r\n", "Mcp-Name"),
        ("DELETE", "Mcp-Param-Order-Id: 7\r\n", "Mcp-Param-*"),
        ("DELETE", "mcp-method: tools/call\r\n", "Mcp-Method"),
    ] {
        let answer = server.send(stream_head(method, extra).as_bytes());
        assert_refused(&answer, -32600, Value::Null, Some(header));
    }
    assert_eq!(upstream.count(), 0);
    assert_eq!(server.metric(&unmirrored), before + 4);
    // Without them the stream and the session's end are forwarded.
    for method in ["GET", "DELETE"] {
        let answer = server.send(stream_head(method, "").as_bytes());
        assert_eq!(answer.status, 200, "{method}");
        let received = upstream.last();
        assert!(received.line.starts_with(method), "{}", received.line);
        assert!(!received.headers.iter().any(
            |(n, _)| n.eq_ignore_ascii_case("mcp-method") || n.eq_ignore_ascii_case("mcp-name")
        ));
    }
    assert_eq!(upstream.count(), 2);
}

#[test]
fn binding_headers_nothing_checks_are_refused_on_both_lanes() {
    let upstream = Upstream::start();
    let server = gateway(&upstream);
    let legacy = |body: &str, extra: &str| {
        server.send(&post(
            "/mcp",
            &legacy_headers(),
            body.as_bytes(),
            &format!("{}{extra}", client()),
        ))
    };
    let mismatch = series("binding", "header_mismatch", 400);
    let param_mismatch = series("binding", "param_header_mismatch", 400);
    let (mismatch_before, param_before) =
        (server.metric(&mismatch), server.metric(&param_mismatch));
    // 2025 lane: `Mcp-Name` on a method that names nothing.
    let list = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let answer = legacy(list, "Mcp-Name: delete_order\r\n");
    assert_refused(&answer, -32020, json!(1), Some("Mcp-Name"));
    // A client's answer, which mirrors no method.
    let response = r#"{"jsonrpc":"2.0","id":"s-1","result":{}}"#;
    let answer = legacy(response, "Mcp-Method: tools/call\r\n");
    assert_refused(&answer, -32020, Value::Null, Some("Mcp-Method"));
    // An argument header no annotation of the tool names.
    let call =
        r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{}}}"#;
    let answer = legacy(call, "Mcp-Param-Order-Id: 7\r\n");
    assert_refused(&answer, -32020, json!(2), Some("Mcp-Param-Order-Id"));
    let answer = legacy(list, "Mcp-Param-Region: EU\r\n");
    assert_refused(&answer, -32020, json!(1), Some("Mcp-Param-Region"));
    // The modern lane: a header beside the ones the tool annotates.
    let message = tools_call(json!(4), "get_account", json!({"accountId": 42}));
    let mut headers = modern_headers(&message);
    headers.push(("Mcp-Param-Account-Id".to_owned(), "42".to_owned()));
    headers.push(("Mcp-Param-Account_Id".to_owned(), "1".to_owned()));
    let body = serde_json::to_vec(&message).unwrap();
    let answer = server.send(&post("/mcp", &headers, &body, &client()));
    assert_refused(&answer, -32020, json!(4), Some("Mcp-Param-Account_Id"));
    assert_eq!(upstream.count(), 0);
    assert_eq!(server.metric(&mismatch), mismatch_before + 2);
    assert_eq!(server.metric(&param_mismatch), param_before + 3);
    // The checked ones pass.
    headers.pop();
    let answer = server.send(&post("/mcp", &headers, &body, &client()));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(legacy(list, "").status, 200);
    assert_eq!(upstream.count(), 2);
}

#[test]
fn a_call_holding_arguments_in_another_case_is_refused_on_both_lanes() {
    let upstream = Upstream::start();
    let server = gateway(&upstream);
    let aliased = series("schema", "aliased_member", 400);
    let before = server.metric(&aliased);
    let modern = |id: i64, params: Value| {
        let mut message = tools_call(json!(id), "echo", json!({}));
        let meta = message["params"]["_meta"].clone();
        message["params"] = params;
        message["params"]["_meta"] = meta;
        let body = serde_json::to_vec(&message).unwrap();
        server.send(&post("/mcp", &modern_headers(&message), &body, &client()))
    };
    let legacy = |id: i64, params: Value| {
        let message = json!({"jsonrpc":"2.0","id":id,"method":"tools/call","params":params});
        let body = serde_json::to_vec(&message).unwrap();
        server.send(&post("/mcp", &legacy_headers(), &body, &client()))
    };
    let beside = json!({"name":"echo","arguments":{},"Arguments":{"x":1}});
    let instead = json!({"name":"echo","ARGUMENTS":{"x":1}});
    let named = json!({"name":"echo","Name":"delete_order","arguments":{}});
    let mut sent = 0;
    for (id, params) in [(10, &beside), (11, &instead), (12, &named)] {
        // A request's refusal: 200, as an MCP server answers it.
        assert_refused_with(&modern(id, params.clone()), 200, -32602, json!(id), None);
        assert_refused_with(&legacy(id, params.clone()), 200, -32602, json!(id), None);
        sent += 2;
    }
    assert_eq!(upstream.count(), 0);
    assert_eq!(server.metric(&aliased), before + sent);
    let fine = json!({"name":"echo","arguments":{}});
    assert_eq!(legacy(13, fine.clone()).status, 200);
    assert_eq!(modern(14, fine).status, 200);
    assert_eq!(upstream.count(), 2);
}

#[test]
fn an_access_token_in_the_query_is_refused_counted_and_never_logged() {
    let upstream = Upstream::start();
    let log = std::env::temp_dir().join(format!("mcpgate-spelling-{}.log", std::process::id()));
    let secret = "eyJhbGciOiJFUzI1NiJ9.c2VjcmV0.c2ln";
    let server = Server::start_logging(
        &[
            "--upstream",
            &upstream.url(),
            "--bearer-tokens",
            TOKEN,
            "--catalog",
            catalog_path().to_str().unwrap(),
        ],
        "info",
        Stdio::from(std::fs::File::create(&log).unwrap()),
    );
    let refused = series("wire", "token_in_query", 400);
    let before = server.metric(&refused);
    let message = tools_call(json!(1), "echo", json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let queries = [
        format!("access_token={secret}"),
        format!("x=1&Access_Token={secret}"),
        format!("access%5Ftoken={secret}"),
        format!("a=b;access_token={secret}"),
    ];
    for query in &queries {
        let answer = server.send(&post(
            &format!("/mcp?{query}"),
            &modern_headers(&message),
            &body,
            &client(),
        ));
        assert_refused(&answer, -32600, Value::Null, None);
        assert!(!String::from_utf8_lossy(&answer.body).contains(secret));
    }
    // Also on a legacy GET stream, which would forward its query.
    let get = format!(
        "GET /mcp?access_token={secret} HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nAuthorization: Bearer {TOKEN}\r\n\r\n"
    );
    assert_refused(&server.send(get.as_bytes()), -32600, Value::Null, None);
    assert_eq!(upstream.count(), 0);
    assert_eq!(server.metric(&refused), before + 5);
    // Another parameter passes with its query.
    let answer = server.send(&post(
        "/mcp?token_hint=1",
        &modern_headers(&message),
        &body,
        &client(),
    ));
    assert_eq!(answer.status, 200);
    assert!(upstream.last().line.contains("?token_hint=1"));
    drop(server);
    let logged = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    assert!(logged.contains("token_in_query"), "{logged}");
    assert!(!logged.contains(secret), "{logged}");
}
