//! Sessions belong to the caller who opened them: with authentication on
//! (OAuth or static bearer tokens) a 2025 lane's `Mcp-Session-Id` is
//! sealed to its owner, another caller holding it gets the 404 of an
//! unknown session on POST, GET and DELETE, and nothing of theirs reaches
//! the upstream; gateways given one `session_key` read each other's ids.
//! Real `mcpgate serve` processes and a recording upstream on 127.0.0.1.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::Write;
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

use process::{Answer, CLIENT_HEADERS, Server, post, read_answer, run_bounded};
use serde_json::{Value, json};
use support::legacy_headers;
use tokens::*;

/// A request as the upstream received it.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// A 2025-11-25 upstream with sessions: `initialize` opens one (its id
/// `<prefix><n>`), every other answer names the session it was asked in,
/// a GET stream sends one event naming it, a DELETE ends it. Records
/// every request.
struct Upstream {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
}

impl Upstream {
    fn start(prefix: &'static str) -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let opened = Arc::new(AtomicUsize::new(0));
        let seen = received.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                let (seen, opened) = (seen.clone(), opened.clone());
                thread::spawn(move || serve_upstream(stream, &seen, &opened, prefix));
            }
        });
        Upstream { addr, received }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    fn last(&self) -> Received {
        self.received()
            .last()
            .cloned()
            .expect("a request reached the upstream")
    }

    fn count(&self) -> usize {
        self.received.lock().unwrap().len()
    }
}

fn serve_upstream(
    mut stream: TcpStream,
    seen: &Mutex<Vec<Received>>,
    opened: &AtomicUsize,
    prefix: &str,
) {
    stream
        .set_read_timeout(Some(Duration::from_secs(30)))
        .unwrap();
    // Bounded: a gateway's pooled connection carries a few requests.
    for _ in 0..1000 {
        let Some((request, body)) = read_request(&mut stream) else {
            return;
        };
        seen.lock().unwrap().push(request.clone());
        let session = request.header("Mcp-Session-Id").map(str::to_owned);
        let named = session
            .as_deref()
            .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
            .unwrap_or_default();
        let answer = if request.request_line.starts_with("GET") {
            let event = format!(
                "data: {}\n\n",
                json!({"jsonrpc": "2.0", "method": "notifications/message",
                       "params": {"level": "info", "data": format!("for {}", session.unwrap_or_default())}})
            );
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n{named}Content-Length: {}\r\n\r\n{event}",
                event.len()
            )
        } else if request.request_line.starts_with("DELETE") {
            format!("HTTP/1.1 200 OK\r\n{named}Content-Length: 0\r\n\r\n")
        } else {
            let message: Value = serde_json::from_slice(&body).unwrap_or_default();
            let (named, result) = if message["method"] == "initialize" {
                let n = opened.fetch_add(1, Ordering::SeqCst) + 1;
                (
                    format!("Mcp-Session-Id: {prefix}{n}\r\n"),
                    json!({"protocolVersion": "2025-11-25", "capabilities": {},
                           "serverInfo": {"name": "sessions", "version": "1"}}),
                )
            } else {
                (named, json!({}))
            };
            let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string();
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{named}Content-Length: {}\r\n\r\n{body}",
                body.len()
            )
        };
        if stream.write_all(answer.as_bytes()).is_err() {
            return;
        }
    }
}

/// One request's head and its `Content-Length` body; `None` at EOF.
fn read_request(stream: &mut TcpStream) -> Option<(Received, Vec<u8>)> {
    let request = process::read_request(stream)?;
    let head = Received {
        request_line: request.line,
        headers: request.headers,
    };
    Some((head, request.body))
}

/// A gateway in front of `upstream` (the tools it lists are not asked for).
fn gateway(upstream: &Upstream, extra: &[&str]) -> Server {
    let url = upstream.url();
    let mut args = vec!["--upstream", &url, "--learn-catalog", "false"];
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// A gateway verifying OAuth tokens signed by `signer`.
fn oauth_gateway(upstream: &Upstream, signer: &Signer) -> Server {
    let jwks = write_file(&jwks(&[signer]));
    gateway(
        upstream,
        &[
            "--oauth-issuer",
            ISSUER,
            "--oauth-resource",
            RESOURCE,
            "--oauth-jwks-file",
            jwks.to_str().unwrap(),
        ],
    )
}

fn bearer(token: &str) -> String {
    format!("Authorization: Bearer {token}\r\n")
}

fn session_header(session: Option<&str>) -> String {
    session
        .map(|s| format!("Mcp-Session-Id: {s}\r\n"))
        .unwrap_or_default()
}

/// Sends `raw` to `to` on a fresh connection and reads one answer.
fn send(to: SocketAddr, raw: &[u8]) -> Answer {
    let mut stream = TcpStream::connect(to).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    stream.write_all(raw).unwrap();
    read_answer(&mut stream)
}

/// A 2025-11-25 `initialize`: it opens a session upstream.
fn initialize(to: SocketAddr, auth: &str) -> Answer {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}});
    send(
        to,
        &post(
            "/mcp",
            &legacy_headers(),
            &serde_json::to_vec(&message).unwrap(),
            &format!("{CLIENT_HEADERS}{auth}"),
        ),
    )
}

/// A `ping` POSTed in `session`.
fn ping(to: SocketAddr, auth: &str, session: Option<&str>) -> Answer {
    let body = br#"{"jsonrpc":"2.0","id":2,"method":"ping"}"#;
    send(
        to,
        &post(
            "/mcp",
            &legacy_headers(),
            body,
            &format!("{CLIENT_HEADERS}{auth}{}", session_header(session)),
        ),
    )
}

/// The session's GET event stream.
fn stream(to: SocketAddr, auth: &str, session: &str) -> Answer {
    send(
        to,
        format!(
            "GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\n{auth}{}\r\n",
            session_header(Some(session))
        )
        .as_bytes(),
    )
}

/// The session's end.
fn end(to: SocketAddr, auth: &str, session: &str) -> Answer {
    send(
        to,
        format!(
            "DELETE /mcp HTTP/1.1\r\nHost: t\r\nMCP-Protocol-Version: 2025-11-25\r\n{auth}{}\r\n",
            session_header(Some(session))
        )
        .as_bytes(),
    )
}

fn unknown_sessions(server: &Server) -> u64 {
    server.metric(
        "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unknown_session\",status=\"404\"}",
    )
}

/// `answer` is the 404 of an unknown session, a JSON-RPC error with `id`.
#[track_caller]
fn assert_unknown(answer: &Answer, id: Value) {
    assert_eq!(
        answer.status,
        404,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["error"]["code"], json!(-32600), "{body}");
    assert_eq!(body["id"], id, "{body}");
    assert!(answer.header("Mcp-Session-Id").is_none());
}

/// A opens a session and uses it; B, with a valid token of its own and
/// A's id, cannot POST on it, stream it or end it, and nothing of B's
/// reaches the upstream; neither does the upstream's raw id or an altered
/// seal, from anyone. Returns A's sealed id.
fn holds(server: &Server, upstream: &Upstream, a: &str, b: &str) -> String {
    let opened = initialize(server.address, a);
    assert_eq!(
        opened.status,
        200,
        "{}",
        String::from_utf8_lossy(&opened.body)
    );
    let sealed = opened
        .header("Mcp-Session-Id")
        .expect("the session's id")
        .to_owned();
    let raw = upstream.last().header("Mcp-Session-Id").map(str::to_owned);
    assert_eq!(raw, None, "initialize is sent without a session");
    let (id, seal) = sealed.rsplit_once('.').expect("a sealed id");
    assert!(id.starts_with("up-"), "{sealed}");
    assert_eq!(seal.len(), 43, "{sealed}");
    assert!(
        sealed.bytes().all(|b| (0x21..=0x7E).contains(&b)),
        "{sealed}"
    );
    let raw = id.to_owned();

    // The owner's POST, GET and DELETE reach the upstream with its own id,
    // and every answer naming it names it sealed.
    let answer = ping(server.address, a, Some(&sealed));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(upstream.last().header("Mcp-Session-Id"), Some(raw.as_str()));
    assert_eq!(answer.header("Mcp-Session-Id"), Some(sealed.as_str()));
    let events = stream(server.address, a, &sealed);
    assert_eq!(events.status, 200);
    assert!(
        String::from_utf8_lossy(&events.body).contains(&format!("for {raw}")),
        "{:?}",
        String::from_utf8_lossy(&events.body)
    );
    assert_eq!(upstream.last().request_line, "GET /mcp HTTP/1.1");
    assert_eq!(upstream.last().header("Mcp-Session-Id"), Some(raw.as_str()));
    assert_eq!(events.header("Mcp-Session-Id"), Some(sealed.as_str()));

    // B: its token is valid (its own session opens), A's id is not its own.
    let before = upstream.count();
    let refused_before = unknown_sessions(server);
    assert_unknown(&ping(server.address, b, Some(&sealed)), json!(2));
    assert_unknown(&stream(server.address, b, &sealed), Value::Null);
    assert_unknown(&end(server.address, b, &sealed), Value::Null);
    // The upstream's own id, and a seal altered by one character, from A.
    let mut altered = sealed.clone().into_bytes();
    let last = altered.len() - 1;
    altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
    let altered = String::from_utf8(altered).unwrap();
    for bad in [raw.as_str(), altered.as_str(), "", "up-1.x"] {
        assert_unknown(&ping(server.address, a, Some(bad)), json!(2));
        assert_unknown(&stream(server.address, a, bad), Value::Null);
        assert_unknown(&end(server.address, a, bad), Value::Null);
    }
    assert_eq!(upstream.count(), before, "{:?}", upstream.received());
    assert_eq!(unknown_sessions(server), refused_before + 3 + 4 * 3);

    let own = initialize(server.address, b);
    assert_eq!(own.status, 200);
    let own = own.header("Mcp-Session-Id").unwrap().to_owned();
    assert_ne!(own, sealed);
    assert_eq!(ping(server.address, b, Some(&own)).status, 200);
    assert_unknown(&ping(server.address, a, Some(&own)), json!(2));

    let ended = end(server.address, a, &sealed);
    assert_eq!(ended.status, 200);
    assert_eq!(upstream.last().request_line, "DELETE /mcp HTTP/1.1");
    assert_eq!(upstream.last().header("Mcp-Session-Id"), Some(raw.as_str()));
    sealed
}

#[test]
fn with_static_tokens_a_session_is_usable_only_with_the_token_that_opened_it() {
    let upstream = Upstream::start("up-");
    let server = gateway(&upstream, &["--bearer-tokens", "token-a,token-b"]);
    let sealed = holds(&server, &upstream, &bearer("token-a"), &bearer("token-b"));
    // The token is nowhere in the id.
    assert!(!sealed.contains("token-a"));
    // Without a token the wire stage refuses first, as before.
    assert_eq!(ping(server.address, "", Some(&sealed)).status, 401);
}

#[test]
fn with_oauth_a_session_is_usable_only_by_the_subject_that_opened_it() {
    let upstream = Upstream::start("up-");
    let signer = ec_signer("k1");
    let server = oauth_gateway(&upstream, &signer);
    let alice = signer.sign(&claims(json!({"sub": "alice"})));
    let bob = signer.sign(&claims(json!({"sub": "bob"})));
    let sealed = holds(&server, &upstream, &bearer(&alice), &bearer(&bob));
    // Bound to the subject, not the token: alice's next token holds it.
    let renewed = signer.sign(&claims(json!({"sub": "alice", "exp": now() + 600})));
    assert_ne!(renewed, alice);
    let answer = ping(server.address, &bearer(&renewed), Some(&sealed));
    assert_eq!(answer.status, 200);
    // A token without a `sub` owns its sessions by the token itself.
    let anonymous = signer.sign(&claims(json!({"sub": null})));
    let other = signer.sign(&claims(json!({"sub": null, "exp": now() + 600})));
    let opened = initialize(server.address, &bearer(&anonymous));
    assert_eq!(opened.status, 200);
    let theirs = opened.header("Mcp-Session-Id").unwrap().to_owned();
    assert_eq!(
        ping(server.address, &bearer(&anonymous), Some(&theirs)).status,
        200
    );
    assert_unknown(
        &ping(server.address, &bearer(&other), Some(&theirs)),
        json!(2),
    );
}

#[test]
fn without_authentication_session_ids_pass_untouched() {
    let upstream = Upstream::start("up-");
    let server = gateway(&upstream, &[]);
    let opened = initialize(server.address, "");
    assert_eq!(opened.status, 200);
    assert_eq!(opened.header("Mcp-Session-Id"), Some("up-1"));
    for id in ["up-1", "anything.at-all"] {
        let answer = ping(server.address, "", Some(id));
        assert_eq!(answer.status, 200);
        assert_eq!(upstream.last().header("Mcp-Session-Id"), Some(id));
        assert_eq!(answer.header("Mcp-Session-Id"), Some(id));
        assert_eq!(stream(server.address, "", id).status, 200);
        assert_eq!(upstream.last().header("Mcp-Session-Id"), Some(id));
    }
    assert_eq!(unknown_sessions(&server), 0);
}

#[test]
fn gateways_given_one_session_key_accept_each_others_sessions_and_another_key_does_not() {
    let upstream = Upstream::start("up-");
    let key = [0x5au8; 32];
    let hex: String = key.iter().map(|b| format!("{b:02x}")).collect();
    // The same key in base64, from a file: the same key.
    let base64 = {
        use base64::Engine as _;
        base64::engine::general_purpose::STANDARD.encode(key)
    };
    let config = write_file(&format!("session_key = \"{base64}\"\n"));
    let auth = bearer("token-a");
    let first = gateway(
        &upstream,
        &["--bearer-tokens", "token-a", "--session-key", &hex],
    );
    let second = gateway(
        &upstream,
        &[
            "--bearer-tokens",
            "token-a",
            "--config",
            config.to_str().unwrap(),
        ],
    );
    let other_key = "a5".repeat(32);
    let third = gateway(
        &upstream,
        &["--bearer-tokens", "token-a", "--session-key", &other_key],
    );

    let opened = initialize(first.address, &auth);
    assert_eq!(opened.status, 200);
    let sealed = opened.header("Mcp-Session-Id").unwrap().to_owned();
    let answer = ping(second.address, &auth, Some(&sealed));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(upstream.last().header("Mcp-Session-Id"), Some("up-1"));
    assert_eq!(answer.header("Mcp-Session-Id"), Some(sealed.as_str()));
    let before = upstream.count();
    assert_unknown(&ping(third.address, &auth, Some(&sealed)), json!(2));
    assert_unknown(&stream(third.address, &auth, &sealed), Value::Null);
    assert_eq!(upstream.count(), before);
}

#[test]
fn an_upstream_session_id_that_cannot_be_sealed_is_never_relayed() {
    // Not visible ASCII: no sealed form is a valid session id.
    let upstream = Upstream::start("up ");
    let server = gateway(&upstream, &["--bearer-tokens", "token-a"]);
    let answer = initialize(server.address, &bearer("token-a"));
    assert_eq!(
        answer.status,
        502,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert!(answer.header("Mcp-Session-Id").is_none());
    assert!(!String::from_utf8_lossy(&answer.body).contains("up 1"));
    assert_eq!(upstream.count(), 1);
}

#[test]
fn a_wrong_session_key_stops_the_start_naming_the_key_but_not_the_value() {
    for bad in ["0123abcd", "not hex, not base64"] {
        let ran = run_bounded(
            Command::new(env!("CARGO_BIN_EXE_mcpgate")).args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--bearer-tokens",
                "t",
                "--session-key",
                bad,
            ]),
            Duration::from_secs(20),
        );
        assert_eq!(ran.status.code(), Some(2), "{}", ran.stderr);
        assert!(ran.stderr.contains("session_key"), "{}", ran.stderr);
        assert!(!ran.stderr.contains(bad), "{}", ran.stderr);
    }
}

/// `haproxy -f CFG -db` (foreground), killed and reaped when dropped.
struct HaProxy(std::process::Child);

impl Drop for HaProxy {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn two_gateways_sharing_a_key_behind_haproxy_hold_one_session_for_its_owner_only() {
    assert!(
        Command::new("haproxy").arg("-v").output().is_ok(),
        "haproxy is absent: this test needs the end-to-end peers (bash e2e/setup.sh installs it)"
    );
    let upstream = Upstream::start("up-");
    let key = "c3".repeat(32);
    let args = ["--bearer-tokens", "token-a,token-b", "--session-key", &key];
    let gateways = [gateway(&upstream, &args), gateway(&upstream, &args)];
    let port = process::free_port();
    let cfg = write_file(&format!(
        "global\n    maxconn 64\n\
         defaults\n    mode http\n    timeout connect 2s\n    timeout client 10s\n    timeout server 10s\n\
         frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend gateways\n\
         backend gateways\n    balance roundrobin\n\
         \x20   server first {}\n    server second {}\n",
        gateways[0].address, gateways[1].address
    ));
    let _haproxy = HaProxy(
        Command::new("haproxy")
            .arg("-f")
            .arg(&cfg)
            .arg("-db")
            .stdout(std::process::Stdio::null())
            .spawn()
            .unwrap(),
    );
    // Ready once it accepts connections: at most 100 tries, 50 ms apart.
    let ready = (0..100).any(|_| {
        if TcpStream::connect(("127.0.0.1", port)).is_ok() {
            return true;
        }
        thread::sleep(Duration::from_millis(50));
        false
    });
    assert!(ready, "haproxy did not listen on 127.0.0.1:{port}");
    let front: SocketAddr = format!("127.0.0.1:{port}").parse().unwrap();
    let (a, b) = (bearer("token-a"), bearer("token-b"));
    let opened = initialize(front, &a);
    assert_eq!(opened.status, 200);
    let sealed = opened.header("Mcp-Session-Id").unwrap().to_owned();
    let served = |g: &Server| g.metric("mcpgate_requests_total");
    let before = [served(&gateways[0]), served(&gateways[1])];
    // Round robin: the session's requests alternate between the two.
    for _ in 0..4 {
        let answer = ping(front, &a, Some(&sealed));
        assert_eq!(
            answer.status,
            200,
            "{}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(upstream.last().header("Mcp-Session-Id"), Some("up-1"));
    }
    let after = [served(&gateways[0]), served(&gateways[1])];
    assert!(
        after[0] > before[0] && after[1] > before[1],
        "both gateways served the session: {before:?} {after:?}"
    );
    let count = upstream.count();
    for _ in 0..4 {
        assert_unknown(&ping(front, &b, Some(&sealed)), json!(2));
    }
    assert_eq!(upstream.count(), count);
}
