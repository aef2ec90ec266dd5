//! `mcpgate serve --upstream` over real sockets on 127.0.0.1, in front of
//! a scripted upstream that records what reaches it: what is forwarded
//! (and what is not), how answers come back (JSON, event streams as they
//! arrive), and what the client gets when the upstream fails. The relay's
//! scenarios run on both io drivers (`on_epoll::…`, `on_uring::…`).

#[path = "support/process.rs"]
mod process;
mod support;

use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use process::{Answer, CLIENT_HEADERS, Server, post, read_answer};
use serde_json::json;
use support::*;

/// A request as the upstream received it.
#[derive(Debug, Clone)]
struct Received {
    request_line: String,
    headers: Vec<(String, String)>,
    body: Vec<u8>,
}

impl Received {
    fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }
}

/// Answers one received request by writing to the connection; `false`
/// ends the connection.
type Script = Arc<dyn Fn(&Received, &mut TcpStream) -> bool + Send + Sync>;

/// A scripted HTTP/1.1 upstream: keeps connections alive, records every
/// request, counts connections.
struct Upstream {
    addr: SocketAddr,
    received: Arc<Mutex<Vec<Received>>>,
    accepted: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
    open: Arc<Mutex<Vec<TcpStream>>>,
    acceptor: Option<thread::JoinHandle<()>>,
}

impl Upstream {
    fn start(script: Script) -> Upstream {
        Upstream::start_at("127.0.0.1:0".parse().unwrap(), script)
    }

    fn start_at(addr: SocketAddr, script: Script) -> Upstream {
        let listener = TcpListener::bind(addr).unwrap();
        let addr = listener.local_addr().unwrap();
        let received = Arc::new(Mutex::new(Vec::new()));
        let accepted = Arc::new(AtomicUsize::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(Mutex::new(Vec::new()));
        let acceptor = {
            let (received, accepted, stop, open) = (
                received.clone(),
                accepted.clone(),
                stop.clone(),
                open.clone(),
            );
            thread::spawn(move || {
                for stream in listener.incoming() {
                    if stop.load(Ordering::SeqCst) {
                        break;
                    }
                    let Ok(mut stream) = stream else { continue };
                    accepted.fetch_add(1, Ordering::SeqCst);
                    open.lock().unwrap().push(stream.try_clone().unwrap());
                    let (received, script) = (received.clone(), script.clone());
                    thread::spawn(move || {
                        while let Some(request) = read_request(&mut stream) {
                            received.lock().unwrap().push(request.clone());
                            if !script(&request, &mut stream) {
                                break;
                            }
                        }
                        // The clone kept for `kill` would hold it open.
                        let _ = stream.shutdown(Shutdown::Both);
                    });
                }
            })
        };
        Upstream {
            addr,
            received,
            accepted,
            stop,
            open,
            acceptor: Some(acceptor),
        }
    }

    fn url(&self) -> String {
        format!("http://{}/upstream-mcp", self.addr)
    }

    fn received(&self) -> Vec<Received> {
        self.received.lock().unwrap().clone()
    }

    /// How many requests so far had `needle` in their body.
    fn bodies_containing(&self, needle: &str) -> usize {
        self.received
            .lock()
            .unwrap()
            .iter()
            .filter(|r| String::from_utf8_lossy(&r.body).contains(needle))
            .count()
    }

    /// Stops listening and closes every connection, like a killed process.
    fn kill(mut self) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = TcpStream::connect(self.addr);
        if let Some(acceptor) = self.acceptor.take() {
            acceptor.join().unwrap();
        }
        for stream in self.open.lock().unwrap().drain(..) {
            let _ = stream.shutdown(Shutdown::Both);
        }
    }
}

/// Reads one request (`Content-Length` framed, or none); `None` at EOF.
fn read_request(stream: &mut TcpStream) -> Option<Received> {
    let request = process::read_request(stream)?;
    Some(Received {
        request_line: request.line,
        headers: request.headers,
        body: request.body,
    })
}

fn json_answer(status: u16, body: &str) -> Vec<u8> {
    format!(
        "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nMcp-Session-Id: from-upstream\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// An upstream answering `tools/list` with `listing()` and every other
/// request with an empty result.
fn listing_upstream(listing: impl Fn() -> serde_json::Value + Send + Sync + 'static) -> Upstream {
    Upstream::start(Arc::new(move |request, stream| {
        let message: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let result = if message["method"] == "tools/list" {
            listing()
        } else {
            json!({"content": []})
        };
        let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string();
        stream.write_all(&json_answer(200, &body)).is_ok()
    }))
}

/// Answers every request 200 with a JSON-RPC result echoing its id.
fn echo_ids() -> Script {
    Arc::new(|request, stream| {
        let id = serde_json::from_slice::<serde_json::Value>(&request.body)
            .map(|v| v["id"].clone())
            .unwrap_or_default();
        let body = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}}).to_string();
        stream.write_all(&json_answer(200, &body)).is_ok()
    })
}

/// The scripted upstreams answer what each test sends, so the gateway does
/// not ask them for their tools (but where a test says so).
fn gateway(upstream: &str, extra: &[&str]) -> Server {
    let mut args = vec!["--upstream", upstream];
    if !extra.contains(&"--learn-catalog") {
        args.extend_from_slice(&["--learn-catalog", "false"]);
    }
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// The gateway on the io driver named (`epoll` or `uring`).
fn gateway_on(driver: &str, upstream: &str, extra: &[&str]) -> Server {
    let mut args = vec!["--io-driver", driver];
    args.extend_from_slice(extra);
    gateway(upstream, &args)
}

crate::on_each_driver!(
    sigterm_relays_the_answer_in_flight_closes_idle_clients_and_exits_0,
    a_json_answer_is_relayed_exactly,
    an_event_stream_is_relayed_as_each_event_arrives,
    a_client_that_disconnects_mid_stream_closes_the_upstream_connection,
    an_event_stream_silent_past_the_idle_timeout_closes_the_client_connection,
    a_client_that_leaves_before_the_answer_closes_the_upstream_connection,
    a_refused_connection_answers_502_with_the_request_id_and_is_counted,
    no_first_byte_within_the_timeout_answers_504,
    a_pooled_connection_closed_by_the_upstream_is_replaced_before_writing,
    a_post_the_upstream_may_have_received_is_never_sent_twice,
    pipelined_requests_are_forwarded_and_answered_in_order,
);

/// A valid 2026-07-28 `tools/call` request for the endpoint.
fn call(id: serde_json::Value, extra: &str) -> Vec<u8> {
    let message = tools_call(id, "echo", json!({"text": "hi"}));
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{extra}"),
    )
}

fn series(reason: &str, status: u16) -> String {
    format!(
        "mcpgate_rejections_total{{rejecter=\"forward\",reason=\"{reason}\",status=\"{status}\"}}"
    )
}

/// Reads a head (status and headers) from the gateway.
fn read_head(stream: &mut TcpStream) -> (u16, Vec<(String, String)>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "closed mid-head");
        head.push(byte[0]);
    }
    let (status_line, headers) = process::split_head(&head);
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    (status, headers)
}

fn find<'a>(headers: &'a [(String, String)], name: &str) -> Option<&'a str> {
    headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| v.as_str())
}

/// Reads one chunk of a chunked answer (empty: the last one).
fn read_chunk(stream: &mut TcpStream) -> Vec<u8> {
    let mut line = Vec::new();
    let mut byte = [0u8; 1];
    while !line.ends_with(b"\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "closed mid-chunk");
        line.push(byte[0]);
    }
    let size =
        usize::from_str_radix(std::str::from_utf8(&line[..line.len() - 2]).unwrap(), 16).unwrap();
    let mut data = vec![0; size + 2];
    stream.read_exact(&mut data).unwrap();
    assert!(data.ends_with(b"\r\n"));
    data.truncate(size);
    data
}

/// Waits (boundedly) for a series in `/metrics` to reach `value`.
fn wait_for_metric(server: &Server, series: &str, value: u64) {
    let deadline = Instant::now() + Duration::from_secs(5);
    while server.metric(series) != value {
        assert!(Instant::now() < deadline, "{series} never reached {value}");
        thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn the_body_is_forwarded_byte_for_byte_with_end_to_end_headers_only_and_no_content_coding_asked() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    // Key order and spacing the gateway must not normalise.
    let body = br#"{ "params" : {"arguments":{"text":"h\u00e9"},"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}},"method":"tools/call","id":"b-1","jsonrpc":"2.0" }"#;
    let message: serde_json::Value = serde_json::from_slice(body).unwrap();
    let extra = format!(
        "{CLIENT_HEADERS}Mcp-Session-Id: s-42\r\nAuthorization: Bearer upstream-token\r\n\
         Last-Event-ID: ev-7\r\nConnection: keep-alive, X-Private\r\nX-Private: secret\r\nKeep-Alive: timeout=5\r\n\
         Proxy-Authorization: Basic eA==\r\nTE: trailers\r\nX-Custom: kept\r\n\
         Accept-Encoding: gzip, deflate, br\r\n"
    );
    let raw = post("/mcp", &modern_headers(&message), body, &extra);
    let answer = server.send(&raw);
    assert_eq!(
        answer.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&answer.body)
    );
    let received = upstream.received();
    assert_eq!(received.len(), 1);
    let got = &received[0];
    assert_eq!(got.request_line, "POST /upstream-mcp HTTP/1.1");
    assert_eq!(got.body, body);
    assert_eq!(got.header("Host"), Some(upstream.addr.to_string().as_str()));
    for (name, value) in [
        ("Mcp-Session-Id", "s-42"),
        ("Authorization", "Bearer upstream-token"),
        ("Last-Event-ID", "ev-7"),
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
        ("Accept", "application/json, text/event-stream"),
        ("Content-Type", "application/json"),
        ("X-Custom", "kept"),
        // The gateway reads some answers: none may come back compressed.
        ("Accept-Encoding", "identity"),
    ] {
        assert_eq!(got.header(name), Some(value), "{name}");
    }
    assert_eq!(
        got.headers
            .iter()
            .filter(|(n, _)| n.eq_ignore_ascii_case("Accept-Encoding"))
            .count(),
        1
    );
    for name in [
        "Connection",
        "X-Private",
        "Keep-Alive",
        "Proxy-Authorization",
        "TE",
    ] {
        assert_eq!(got.header(name), None, "{name} was passed on");
    }
}

#[test]
fn a_chunked_client_body_reaches_the_upstream_whole_with_a_length() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    let message = tools_call(json!(5), "echo", json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let mut raw =
        format!("POST /mcp HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n{CLIENT_HEADERS}");
    for (name, value) in modern_headers(&message) {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str("\r\n");
    let mut raw = raw.into_bytes();
    for part in body.chunks(40) {
        raw.extend(format!("{:x}\r\n", part.len()).into_bytes());
        raw.extend_from_slice(part);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(server.send(&raw).status, 200);
    let got = &upstream.received()[0];
    assert_eq!(got.body, body);
    assert_eq!(
        got.header("Content-Length"),
        Some(body.len().to_string().as_str())
    );
    assert_eq!(got.header("Transfer-Encoding"), None);
}

#[test]
fn a_consumed_bearer_token_is_not_passed_on() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &["--bearer-tokens", "gw-token"]);
    let answer = server.send(&call(json!(1), "Authorization: Bearer gw-token\r\n"));
    assert_eq!(answer.status, 200);
    assert_eq!(upstream.received()[0].header("Authorization"), None);
}

fn a_json_answer_is_relayed_exactly(driver: &str) {
    let upstream = Upstream::start(Arc::new(|_, stream| {
        let body =
            r#"{"jsonrpc":"2.0","id":"x-1","result":{"content":[{"type":"text","text":"sunny"}]}}"#;
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: {}\r\n\
             Mcp-Session-Id: s-9\r\nConnection: X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=9\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(answer.as_bytes()).is_ok()
    }));
    let server = gateway_on(driver, &upstream.url(), &[]);
    let answer = server.send(&call(json!("x-1"), ""));
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.header("Content-Type"),
        Some("application/json; charset=utf-8")
    );
    assert_eq!(answer.header("Mcp-Session-Id"), Some("s-9"));
    assert_eq!(answer.header("X-Hop"), None);
    assert_eq!(answer.header("Keep-Alive"), None);
    assert_eq!(
        answer.body,
        br#"{"jsonrpc":"2.0","id":"x-1","result":{"content":[{"type":"text","text":"sunny"}]}}"#
    );
}

fn an_event_stream_is_relayed_as_each_event_arrives(driver: &str) {
    let (go_tx, go_rx) = mpsc::channel::<()>();
    let go_rx = Arc::new(Mutex::new(go_rx));
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        let event = |data: &str| {
            let text = format!("event: message\ndata: {data}\n\n");
            format!("{:x}\r\n{text}\r\n", text.len())
        };
        let first = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{}",
            event(
                r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}"#
            )
        );
        stream.write_all(first.as_bytes()).unwrap();
        // The second event only once the client has seen the first.
        go_rx.lock().unwrap().recv().unwrap();
        let last = format!(
            "{}0\r\n\r\n",
            event(r#"{"jsonrpc":"2.0","id":"s-1","result":{"content":[]}}"#)
        );
        stream.write_all(last.as_bytes()).is_ok()
    }));
    // `echo` promises a structured result; the streamed answer has none.
    let catalog = std::env::temp_dir().join(format!(
        "mcpgate-forward-{}-{driver}.json",
        std::process::id()
    ));
    std::fs::write(
        &catalog,
        br#"[{"name": "echo", "inputSchema": {"type": "object"},
              "outputSchema": {"type": "object", "required": ["text"]}}]"#,
    )
    .unwrap();
    let server = gateway_on(
        driver,
        &upstream.url(),
        &["--catalog", catalog.to_str().unwrap()],
    );
    let observed = "mcpgate_answers_observed_total";
    assert_eq!(server.metric(observed), 0);
    let mut stream = server.connect();
    stream.write_all(&call(json!("s-1"), "")).unwrap();
    let (status, headers) = read_head(&mut stream);
    assert_eq!(status, 200);
    assert_eq!(find(&headers, "Content-Type"), Some("text/event-stream"));
    assert_eq!(find(&headers, "X-Accel-Buffering"), Some("no"));
    assert_eq!(find(&headers, "Transfer-Encoding"), Some("chunked"));
    let first = read_chunk(&mut stream);
    assert!(
        String::from_utf8(first)
            .unwrap()
            .contains("notifications/progress")
    );
    go_tx.send(()).unwrap();
    let second = read_chunk(&mut stream);
    assert!(String::from_utf8(second).unwrap().contains(r#""id":"s-1""#));
    assert!(read_chunk(&mut stream).is_empty());
    // The watch saw the tools/call answer after it was relayed, and
    // counted its missing structured result.
    wait_for_metric(&server, observed, 1);
    wait_for_metric(&server, "mcpgate_tool_output_mismatches_total", 1);
    std::fs::remove_file(&catalog).unwrap();
    // The connection stays usable after a relayed stream.
    stream.write_all(&call(json!(2), "")).unwrap();
    go_tx.send(()).unwrap();
    let (status, _) = read_head(&mut stream);
    assert_eq!(status, 200);
}

fn a_client_that_disconnects_mid_stream_closes_the_upstream_connection(driver: &str) {
    let (sent_tx, sent_rx) = mpsc::channel::<()>();
    let (closed_tx, closed_rx) = mpsc::channel::<bool>();
    let (sent_tx, closed_tx) = (Mutex::new(sent_tx), Mutex::new(closed_tx));
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\n\r\ndata: {}\n\n";
        stream.write_all(head.as_bytes()).unwrap();
        sent_tx.lock().unwrap().send(()).unwrap();
        // Nothing more is sent: only the gateway closing ends this read.
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut byte = [0u8; 1];
        let closed = match stream.read(&mut byte) {
            Ok(n) => n == 0,
            // A timeout is not a close; a reset is.
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        closed_tx.lock().unwrap().send(closed).unwrap();
        false
    }));
    let server = gateway_on(driver, &upstream.url(), &[]);
    let mut stream = server.connect();
    stream.write_all(&call(json!(1), "")).unwrap();
    let (status, _) = read_head(&mut stream);
    assert_eq!(status, 200);
    sent_rx.recv().unwrap();
    let first = read_chunk(&mut stream);
    assert_eq!(first, b"data: {}\n\n");
    drop(stream);
    assert!(
        closed_rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        "the upstream connection stayed open"
    );
}

fn an_event_stream_silent_past_the_idle_timeout_closes_the_client_connection(driver: &str) {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        let head = "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n9\r\ndata: 1\n\n\r\n";
        stream.write_all(head.as_bytes()).unwrap();
        let _ = release_rx.lock().unwrap().recv();
        false
    }));
    let server = gateway_on(
        driver,
        &upstream.url(),
        &["--upstream-idle-timeout-ms", "300"],
    );
    let mut stream = server.connect();
    stream.write_all(&call(json!(1), "")).unwrap();
    assert_eq!(read_head(&mut stream).0, 200);
    assert_eq!(read_chunk(&mut stream), b"data: 1\n\n");
    // No last chunk: the close tells the client the stream broke off.
    let mut rest = Vec::new();
    stream.read_to_end(&mut rest).unwrap();
    assert!(rest.is_empty(), "{rest:?}");
    drop(release_tx);
}

fn a_client_that_leaves_before_the_answer_closes_the_upstream_connection(driver: &str) {
    let (got_tx, got_rx) = mpsc::channel::<()>();
    let (closed_tx, closed_rx) = mpsc::channel::<bool>();
    let (got_tx, closed_tx) = (Mutex::new(got_tx), Mutex::new(closed_tx));
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        got_tx.lock().unwrap().send(()).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let mut byte = [0u8; 1];
        let closed = match stream.read(&mut byte) {
            Ok(n) => n == 0,
            Err(e) => e.kind() == std::io::ErrorKind::ConnectionReset,
        };
        closed_tx.lock().unwrap().send(closed).unwrap();
        false
    }));
    let server = gateway_on(driver, &upstream.url(), &[]);
    let mut stream = server.connect();
    stream.write_all(&call(json!(1), "")).unwrap();
    got_rx.recv().unwrap();
    drop(stream);
    assert!(
        closed_rx.recv_timeout(Duration::from_secs(20)).unwrap(),
        "the upstream connection stayed open"
    );
}

#[test]
fn only_tools_list_and_tools_call_answers_are_watched_and_a_complete_list_becomes_the_catalog() {
    let upstream = Upstream::start(Arc::new(|request, stream| {
        let message: serde_json::Value = serde_json::from_slice(&request.body).unwrap();
        let answer = if message.get("id").is_some() {
            json_answer(
                200,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"t","inputSchema":{"type":"object"}}]}}"#,
            )
        } else {
            b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_vec()
        };
        stream.write_all(&answer).is_ok()
    }));
    let server = gateway(
        &upstream.url(),
        &["--workers", "1", "--learn-catalog", "true"],
    );
    let observed = "mcpgate_answers_observed_total";
    let send = |body: &[u8]| {
        server
            .send(&post("/mcp", &legacy_headers(), body, CLIENT_HEADERS))
            .status
    };
    assert_eq!(
        send(br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
        202
    );
    assert_eq!(send(br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#), 200);
    assert_eq!(server.metric(observed), 0);
    assert_eq!(
        send(br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#),
        200
    );
    wait_for_metric(&server, observed, 1);
    // The complete list became the catalog.
    wait_for_metric(&server, "mcpgate_catalogs_learned_total", 1);
    assert_eq!(
        server.metric("mcpgate_catalog_tools{state=\"registered\"}"),
        1
    );
}

fn sigterm_relays_the_answer_in_flight_closes_idle_clients_and_exits_0(driver: &str) {
    let (got_tx, got_rx) = mpsc::channel::<()>();
    let got_tx = Mutex::new(got_tx);
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        got_tx.lock().unwrap().send(()).unwrap();
        // Answered only after the gateway was told to stop.
        thread::sleep(Duration::from_millis(300));
        let body = r#"{"jsonrpc":"2.0","id":"late","result":{"content":[]}}"#;
        stream.write_all(&json_answer(200, body)).is_ok()
    }));
    let mut server = gateway_on(driver, &upstream.url(), &[]);
    let mut idle = server.connect();
    let mut busy = server.connect();
    busy.write_all(&call(json!("late"), "")).unwrap();
    got_rx.recv_timeout(Duration::from_secs(10)).unwrap();
    server.sigterm();
    let answer = read_answer(&mut busy);
    assert_eq!(answer.status, 200);
    assert_eq!(
        answer.body,
        br#"{"jsonrpc":"2.0","id":"late","result":{"content":[]}}"#
    );
    assert_eq!(answer.header("Connection"), Some("close"));
    // The idle client is closed without an answer.
    idle.set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut rest = Vec::new();
    assert_eq!(idle.read_to_end(&mut rest).unwrap(), 0);
    assert_eq!(server.child.wait().unwrap().code(), Some(0));
}

fn a_refused_connection_answers_502_with_the_request_id_and_is_counted(driver: &str) {
    let port = TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let server = gateway_on(driver, &format!("http://127.0.0.1:{port}/mcp"), &[]);
    let answer = server.send(&call(json!("r-7"), ""));
    assert_eq!(answer.status, 502);
    let body = answer.json();
    assert_eq!(body["id"], "r-7");
    assert_eq!(body["error"]["code"], -32603);
    assert_eq!(server.metric(&series("upstream_unreachable", 502)), 1);
}

fn no_first_byte_within_the_timeout_answers_504(driver: &str) {
    let (release_tx, release_rx) = mpsc::channel::<()>();
    let release_rx = Mutex::new(release_rx);
    let upstream = Upstream::start(Arc::new(move |_, _| {
        // Holds the request without answering until the test ends.
        let _ = release_rx.lock().unwrap().recv();
        false
    }));
    let server = gateway_on(
        driver,
        &upstream.url(),
        &["--upstream-first-byte-timeout-ms", "300"],
    );
    let answer = server.send(&call(json!(11), ""));
    assert_eq!(answer.status, 504);
    let body = answer.json();
    assert_eq!(body["id"], 11);
    assert_eq!(body["error"]["code"], -32603);
    assert_eq!(server.metric(&series("upstream_timeout", 504)), 1);
    drop(release_tx);
}

#[test]
fn an_answer_that_is_not_http_is_502() {
    let upstream = Upstream::start(Arc::new(|_, stream| {
        let _ = stream.write_all(b"SSH-2.0-OpenSSH\r\n\r\n");
        false
    }));
    let server = gateway(&upstream.url(), &[]);
    let answer = server.send(&call(json!(3), ""));
    assert_eq!(answer.status, 502);
    assert_eq!(answer.json()["id"], 3);
    assert_eq!(server.metric(&series("upstream_bad_answer", 502)), 1);
}

#[test]
fn an_upstream_restarted_on_the_same_port_is_served_again() {
    let upstream = Upstream::start(echo_ids());
    let addr = upstream.addr;
    let server = gateway(&upstream.url(), &["--workers", "1"]);
    assert_eq!(server.send(&call(json!(1), "")).status, 200);
    upstream.kill();
    assert_eq!(server.send(&call(json!(2), "")).status, 502);
    let upstream = Upstream::start_at(addr, echo_ids());
    let answer = server.send(&call(json!(3), ""));
    assert_eq!(answer.status, 200);
    assert_eq!(answer.json()["id"], 3);
    assert_eq!(upstream.received().len(), 1);
}

fn a_pooled_connection_closed_by_the_upstream_is_replaced_before_writing(driver: &str) {
    // Closes each connection after its answer without saying so.
    let upstream = Upstream::start(Arc::new(|request, stream| {
        echo_ids()(request, stream);
        false
    }));
    let server = gateway_on(driver, &upstream.url(), &["--workers", "1"]);
    for id in 1..=3 {
        let answer = server.send(&call(json!(id), ""));
        assert_eq!(answer.status, 200);
        assert_eq!(answer.json()["id"], id);
        // Time for the close to arrive: a close that crosses the next
        // request is a failure of that request (502), never a replay.
        thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(upstream.received().len(), 3);
    assert_eq!(upstream.accepted.load(Ordering::SeqCst), 3);
}

#[test]
fn sequential_requests_reuse_one_upstream_connection() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &["--workers", "1"]);
    for id in 1..=5 {
        assert_eq!(server.send(&call(json!(id), "")).status, 200);
    }
    assert_eq!(upstream.received().len(), 5);
    assert_eq!(upstream.accepted.load(Ordering::SeqCst), 1);
}

fn pipelined_requests_are_forwarded_and_answered_in_order(driver: &str) {
    let upstream = Upstream::start(echo_ids());
    let server = gateway_on(driver, &upstream.url(), &[]);
    let mut raw = call(json!(1), "");
    let mut bad = tools_call(json!(2), "echo", json!({}));
    bad["params"]["name"] = json!(7);
    raw.extend(post(
        "/mcp",
        &modern_headers(&bad),
        &serde_json::to_vec(&bad).unwrap(),
        CLIENT_HEADERS,
    ));
    raw.extend(call(json!(3), ""));
    let mut stream = server.connect();
    stream.write_all(&raw).unwrap();
    let answers: Vec<Answer> = (0..3).map(|_| read_answer(&mut stream)).collect();
    assert_eq!(
        answers
            .iter()
            .map(|a| (a.status, a.json()["id"].clone()))
            .collect::<Vec<_>>(),
        [(200, json!(1)), (200, json!(2)), (200, json!(3))]
    );
    // The second is the gate's refusal, not the upstream's echo.
    assert_eq!(answers[1].json()["error"]["code"], -32602);
}

#[test]
fn a_rejected_message_never_reaches_the_upstream() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    let mut bad = tools_call(json!(1), "echo", json!({}));
    bad["params"]["name"] = json!(7);
    let raw = post(
        "/mcp",
        &modern_headers(&bad),
        &serde_json::to_vec(&bad).unwrap(),
        CLIENT_HEADERS,
    );
    let refused = server.send(&raw);
    assert_eq!(refused.status, 200);
    assert_eq!(refused.json()["error"]["code"], -32602);
    // The /validate route never forwards either.
    let message = tools_call(json!(2), "echo", json!({}));
    let raw = post(
        "/validate",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    );
    assert_eq!(server.send(&raw).status, 204);
    assert!(upstream.received().is_empty());
    assert_eq!(server.send(&call(json!(3), "")).status, 200);
    assert_eq!(upstream.received().len(), 1);
}

#[test]
fn legacy_get_and_delete_are_forwarded_and_a_modern_get_is_405() {
    let upstream = Upstream::start(Arc::new(|request, stream| {
        let answer = if request.request_line.starts_with("GET") {
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nContent-Length: 12\r\n\r\ndata: ping\n\n"
        } else {
            "HTTP/1.1 204 No Content\r\n\r\n"
        };
        stream.write_all(answer.as_bytes()).is_ok()
    }));
    let server = gateway(&upstream.url(), &[]);
    let get = server.send(
        b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nMcp-Session-Id: s-1\r\n\
          MCP-Protocol-Version: 2025-11-25\r\nLast-Event-ID: 4\r\n\r\n",
    );
    assert_eq!(get.status, 200);
    assert_eq!(get.body, b"data: ping\n\n");
    assert_eq!(get.header("X-Accel-Buffering"), Some("no"));
    let delete = server.send(b"DELETE /mcp HTTP/1.1\r\nHost: t\r\nMcp-Session-Id: s-1\r\n\r\n");
    assert_eq!(delete.status, 204);
    let received = upstream.received();
    assert_eq!(received.len(), 2);
    assert_eq!(received[0].request_line, "GET /upstream-mcp HTTP/1.1");
    assert_eq!(received[0].header("Last-Event-ID"), Some("4"));
    assert_eq!(received[1].request_line, "DELETE /upstream-mcp HTTP/1.1");
    assert_eq!(received[1].header("Mcp-Session-Id"), Some("s-1"));

    // The wire checks still apply to a legacy GET.
    let not_sse = server.send(b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: application/json\r\n\r\n");
    assert_eq!(not_sse.status, 406);
    let foreign = server.send(
        b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nOrigin: http://evil.example\r\n\r\n",
    );
    assert_eq!(foreign.status, 403);
    // The modern lane has no GET stream and no sessions.
    for method in ["GET", "DELETE"] {
        let modern = server.send(
            format!(
                "{method} /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n"
            )
            .as_bytes(),
        );
        assert_eq!(modern.status, 405, "{method}");
        assert_eq!(modern.header("Allow"), Some("POST"), "{method}");
    }
    // Another method on the 2025 lane: the 405 names the three it takes.
    let put = server.send(b"PUT /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(put.status, 405);
    assert_eq!(put.header("Allow"), Some("GET, POST, DELETE"));
    assert_eq!(upstream.received().len(), 2);
}

#[test]
fn without_an_upstream_get_and_allowed_posts_answer_as_before() {
    let server = Server::start(&[]);
    let get = server.send(b"GET /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\n\r\n");
    assert_eq!(get.status, 405);
    let answer = server.send(&call(json!(1), ""));
    assert_eq!(answer.status, 502);
    assert_eq!(answer.json()["id"], 1, "the request's id is echoed");
    assert_eq!(server.metric(&series("no_upstream", 502)), 1);
}

#[test]
fn a_notification_is_forwarded_and_the_upstreams_202_relayed() {
    let upstream = Upstream::start(Arc::new(|_, stream| {
        stream
            .write_all(b"HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n")
            .is_ok()
    }));
    let server = gateway(&upstream.url(), &[]);
    let body = br#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#;
    let raw = post("/mcp", &legacy_headers(), body, CLIENT_HEADERS);
    let answer = server.send(&raw);
    assert_eq!(answer.status, 202);
    assert!(answer.body.is_empty());
    assert_eq!(upstream.received()[0].body, body);
}

#[test]
fn without_a_file_the_catalog_is_learned_from_the_upstream_at_start() {
    // The upstream lists one tool needing `text`.
    let upstream = listing_upstream(|| {
        json!({"tools": [{"name": "echo", "inputSchema": {"type": "object",
            "properties": {"text": {"type": "string"}}, "required": ["text"]}}]})
    });
    let server = gateway(&upstream.url(), &["--learn-catalog", "true"]);
    assert_eq!(
        server.metric("mcpgate_catalog_tools{state=\"registered\"}"),
        1
    );
    let calls_before = upstream.bodies_containing("tools/call");
    // `text` must be a string: the gateway answers, the upstream never sees it.
    let message = tools_call(json!("l-1"), "echo", json!({"text": 5}));
    let answer = server.send(&post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    ));
    assert_eq!(answer.status, 200);
    let body = answer.json();
    assert_eq!(body["result"]["isError"], true);
    assert_eq!(
        body["result"]["structuredContent"]["error_code"],
        "SCHEMA_TYPE_MISMATCH"
    );
    let calls_after = upstream.bodies_containing("tools/call");
    assert_eq!(calls_after, calls_before);
    // A call the catalog admits goes through.
    assert_eq!(server.send(&call(json!(2), "")).status, 200);
}

#[test]
fn a_tool_the_upstream_adds_is_learned_early_once_a_call_names_it() {
    // The upstream lists `echo`, and `shout` too once `added` is set; its
    // listing says to ask again in an hour.
    let added = Arc::new(AtomicBool::new(false));
    let listed = Arc::clone(&added);
    let upstream = listing_upstream(move || {
        let schema = json!({"type": "object", "properties": {"text": {"type": "string"}}});
        let mut tools = vec![json!({"name": "echo", "inputSchema": schema})];
        if listed.load(Ordering::SeqCst) {
            tools.push(json!({"name": "shout", "inputSchema": schema}));
        }
        json!({"tools": tools, "ttlMs": 3_600_000})
    });
    let server = gateway(&upstream.url(), &["--learn-catalog", "true"]);
    let shout = |id: i64| {
        let message = tools_call(json!(id), "shout", json!({"text": "hi"}));
        server.send(&post(
            "/mcp",
            &modern_headers(&message),
            &serde_json::to_vec(&message).unwrap(),
            CLIENT_HEADERS,
        ))
    };
    added.store(true, Ordering::SeqCst);
    // Unknown to the catalog in service: refused, and the learner is asked.
    let refused = shout(1);
    assert_eq!(refused.status, 200);
    assert_eq!(refused.json()["error"]["code"], -32602);
    // Learned within the minimum refresh interval (5 s), not the hour.
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut id = 2;
    let accepted = loop {
        let answer = shout(id);
        // A refusal goes with 200 too: the upstream's answer has no error.
        let learned = answer.status == 200 && answer.json()["error"].is_null();
        if learned || Instant::now() > deadline {
            break answer;
        }
        id += 1;
        thread::sleep(Duration::from_millis(250));
    };
    assert_eq!(accepted.status, 200, "shout was never learned");
    assert!(
        accepted.json()["error"].is_null(),
        "shout was never learned: {}",
        accepted.json()
    );
    assert_eq!(
        server.metric("mcpgate_catalog_tools{state=\"registered\"}"),
        2
    );
    let calls = upstream.bodies_containing("\"shout\"");
    assert_eq!(
        calls, 1,
        "only the call after learning reached the upstream"
    );
}

#[test]
fn a_listing_that_repeats_the_catalog_is_logged_at_debug_not_info() {
    // `ttlMs: 0`: listed again at the shortest refresh (5 s), unchanged.
    let listings = Arc::new(AtomicUsize::new(0));
    let counted = Arc::clone(&listings);
    let upstream = listing_upstream(move || {
        counted.fetch_add(1, Ordering::SeqCst);
        json!({"tools": [{"name": "echo", "inputSchema": {"type": "object"}}], "ttlMs": 0})
    });
    let log = std::env::temp_dir().join(format!("mcpgate-relearn-{}.log", std::process::id()));
    let file = std::fs::File::create(&log).unwrap();
    let url = upstream.url();
    let server = Server::start_logging(
        &["--upstream", &url, "--learn-catalog", "true"],
        "info",
        std::process::Stdio::from(file),
    );
    // The listing at start and two more, idle.
    let deadline = Instant::now() + Duration::from_secs(30);
    while listings.load(Ordering::SeqCst) < 3 {
        assert!(Instant::now() < deadline, "not listed three times in 30 s");
        thread::sleep(Duration::from_millis(100));
    }
    drop(server);
    let text = std::fs::read_to_string(&log).unwrap();
    let _ = std::fs::remove_file(&log);
    let learned = text.matches("catalog learned from the upstream").count();
    assert_eq!(learned, 1, "{text}");
}

/// A wire refusal's series in `/metrics`.
fn wire_series(reason: &str) -> String {
    format!("mcpgate_rejections_total{{rejecter=\"wire\",reason=\"{reason}\",status=\"400\"}}")
}

/// Sends `raw` from another thread (the gateway may answer before the
/// body is all written, and close) and reads the answer.
fn send_whole(server: &Server, raw: Vec<u8>) -> Answer {
    let mut stream = server.connect();
    let mut writer = stream.try_clone().unwrap();
    let sender = thread::spawn(move || {
        let _ = writer.write_all(&raw);
    });
    let answer = read_answer(&mut stream);
    let _ = stream.shutdown(Shutdown::Both);
    sender.join().unwrap();
    answer
}

/// Asserts a wire refusal: 400, `-32600`, no id echoed, the header named.
#[track_caller]
fn assert_refused(answer: &Answer, header: Option<&str>, case: &str) {
    assert_eq!(
        answer.status,
        400,
        "{case}: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32600, "{case}: {body}");
    assert_eq!(body["id"], serde_json::Value::Null, "{case}");
    assert_eq!(
        body["error"]["data"]["header"].as_str(),
        header,
        "{case}: {body}"
    );
}

#[test]
fn a_body_declared_in_a_charset_other_than_utf_8_is_refused_and_never_forwarded() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    // `é` is two bytes in UTF-8: an upstream reading them in the declared
    // Latin-1 would see two characters, arguments other than those checked.
    let message = tools_call(json!(1), "echo", json!({"text": "charset-é"}));
    let body = serde_json::to_vec(&message).unwrap();
    let with_type = |content_type: &str| {
        post(
            "/mcp",
            &modern_headers(&message),
            &body,
            &format!(
                "Content-Type: {content_type}\r\nAccept: application/json, text/event-stream\r\n"
            ),
        )
    };
    for declared in [
        "application/json; charset=iso-8859-1",
        "application/json;charset=\"utf-16\"",
    ] {
        let answer = server.send(&with_type(declared));
        assert_eq!(answer.status, 415, "{declared}");
        assert_eq!(answer.json()["error"]["code"], -32600, "{declared}");
    }
    assert_eq!(upstream.bodies_containing("charset-"), 0);
    let answer = server.send(&with_type("application/json; charset=UTF-8"));
    assert_eq!(answer.status, 200);
    assert_eq!(upstream.bodies_containing("charset-"), 1);
}

#[test]
fn a_body_with_a_content_coding_is_refused_415_and_never_forwarded() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    let message = tools_call(json!(1), "echo", json!({"text": "coded-body"}));
    let body = serde_json::to_vec(&message).unwrap();
    let with_coding = |coding: &str, body: &[u8]| {
        post(
            "/mcp",
            &modern_headers(&message),
            body,
            &format!("{CLIENT_HEADERS}Content-Encoding: {coding}\r\n"),
        )
    };
    // Plain JSON declared `br`: valid as sent, but an upstream would
    // decode it into other bytes than the ones checked. `{}` gzipped
    // (its exact bytes): refused for its coding, not as malformed JSON.
    let gzipped_braces =
        b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\xff\xab\xae\x05\x00\x43\xbf\xa6\xa3\x02\x00\x00\x00";
    let cases: [(&str, &[u8]); 4] = [
        ("br", &body),
        ("gzip", gzipped_braces),
        ("identity, deflate", &body),
        ("GZIP", gzipped_braces),
    ];
    for (coding, sent) in cases {
        let answer = server.send(&with_coding(coding, sent));
        assert_eq!(answer.status, 415, "{coding}");
        assert_eq!(
            answer.header("Accept-Encoding"),
            Some("identity"),
            "{coding}"
        );
        let refusal = answer.json();
        assert_eq!(refusal["error"]["code"], -32600, "{coding}");
        assert!(
            refusal["error"]["message"]
                .as_str()
                .unwrap()
                .contains("Content-Encoding"),
            "{coding}: {refusal}"
        );
    }
    assert!(upstream.received().is_empty(), "{:?}", upstream.received());
    assert_eq!(
        server.metric(
            "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unsupported_content_encoding\",status=\"415\"}"
        ),
        cases.len() as u64
    );
    // `identity` is no coding: forwarded as sent.
    let answer = server.send(&with_coding("identity", &body));
    assert_eq!(answer.status, 200);
    assert_eq!(upstream.bodies_containing("coded-body"), 1);
}

#[test]
fn a_repeated_or_joined_singleton_header_is_refused_and_never_forwarded() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    // Each after the valid call's own headers (`post` sends `Host:
    // 127.0.0.1`, `call` the client's and the modern lane's).
    let repeats = [
        ("Mcp-Name: other\r\n", "Mcp-Name"),
        ("mcp-name: echo\r\n", "Mcp-Name"),
        ("Mcp-Method: tools/list\r\n", "Mcp-Method"),
        (
            "MCP-Protocol-Version: 2025-11-25\r\n",
            "MCP-Protocol-Version",
        ),
        ("Content-Type: text/plain\r\n", "Content-Type"),
        (
            "Content-Encoding: identity\r\nContent-Encoding: gzip\r\n",
            "Content-Encoding",
        ),
        ("Host: evil.example\r\n", "Host"),
        (
            "Origin: http://localhost\r\nOrigin: http://evil.example\r\n",
            "Origin",
        ),
        (
            "Origin: http://localhost, http://evil.example\r\n",
            "Origin",
        ),
        (
            "Authorization: Bearer a\r\nAuthorization: Bearer b\r\n",
            "Authorization",
        ),
        (
            "Mcp-Session-Id: s-1\r\nMcp-Session-Id: s-2\r\n",
            "Mcp-Session-Id",
        ),
        (
            "Mcp-Param-Text: hi\r\nMcp-Param-Text: other\r\n",
            "Mcp-Param-*",
        ),
    ];
    for (n, (extra, header)) in repeats.iter().enumerate() {
        let answer = server.send(&call(json!(n), extra));
        assert_refused(&answer, Some(header), extra);
    }
    assert_eq!(
        server.metric(&wire_series("repeated_header")),
        repeats.len() as u64
    );

    // HTTP/1.1 without `Host`; HTTP/1.0 may omit it.
    let message = tools_call(json!(20), "echo", json!({"text": "hi"}));
    let body = serde_json::to_vec(&message).unwrap();
    let without_host = |version: &str| {
        let mut raw = format!(
            "POST /mcp HTTP/{version}\r\n{CLIENT_HEADERS}Content-Length: {}\r\n",
            body.len()
        );
        for (name, value) in modern_headers(&message) {
            raw.push_str(&format!("{name}: {value}\r\n"));
        }
        raw.push_str("\r\n");
        let mut raw = raw.into_bytes();
        raw.extend_from_slice(&body);
        raw
    };
    assert_refused(&server.send(&without_host("1.1")), None, "no Host");
    assert_eq!(server.metric(&wire_series("missing_host")), 1);
    assert!(upstream.received().is_empty(), "{:?}", upstream.received());

    assert_eq!(server.send(&without_host("1.0")).status, 200);
    assert_eq!(server.send(&call(json!(21), "")).status, 200);
    assert_eq!(upstream.received().len(), 2);
}

#[test]
fn a_connection_header_naming_a_checked_header_is_refused_and_never_forwarded() {
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &[]);
    let cases = [
        ("Mcp-Name, Mcp-Method, MCP-Protocol-Version", "Mcp-*"),
        ("keep-alive, Mcp-Param-Text", "Mcp-*"),
        ("Authorization", "Authorization"),
        ("Content-Type", "Content-Type"),
        ("Accept", "Accept"),
        ("close, Origin", "Origin"),
    ];
    for (n, (nominated, header)) in cases.iter().enumerate() {
        let answer = server.send(&call(json!(n), &format!("Connection: {nominated}\r\n")));
        assert_refused(&answer, Some(header), nominated);
    }
    assert_eq!(
        server.metric(&wire_series("nominated_header")),
        cases.len() as u64
    );
    assert!(upstream.received().is_empty(), "{:?}", upstream.received());
    // A private hop-by-hop header may still be named (and is dropped).
    let answer = server.send(&call(json!(9), "Connection: X-Private\r\nX-Private: 1\r\n"));
    assert_eq!(answer.status, 200);
    let received = upstream.received();
    assert_eq!(received.len(), 1);
    assert_eq!(received[0].header("X-Private"), None);
}

#[test]
fn a_get_or_delete_with_a_body_is_refused_and_never_forwarded() {
    let upstream = Upstream::start(Arc::new(|_, stream| {
        stream.write_all(b"HTTP/1.1 204 No Content\r\n\r\n").is_ok()
    }));
    let server = gateway(&upstream.url(), &[]);
    // 116 bytes: a batch holding one id twice.
    let batch = br#"[{"jsonrpc":"2.0","id":1,"method":"ping"},{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"x":"yyyyyyyyy"}}]"#;
    assert_eq!(batch.len(), 116);
    let head = |method: &str, framing: &str| {
        format!(
            "{method} /mcp HTTP/1.1\r\nHost: t\r\nAccept: text/event-stream\r\nMcp-Session-Id: s-1\r\n{framing}\r\n"
        )
        .into_bytes()
    };
    let with = |mut head: Vec<u8>, body: &[u8]| {
        head.extend_from_slice(body);
        head
    };
    let cases: Vec<(&str, Vec<u8>)> = vec![
        (
            "GET with a batch",
            with(head("GET", "Content-Length: 116\r\n"), batch),
        ),
        (
            "DELETE with a batch",
            with(head("DELETE", "Content-Length: 116\r\n"), batch),
        ),
        (
            "GET chunked",
            with(
                head("GET", "Transfer-Encoding: chunked\r\n"),
                b"5\r\nhello\r\n0\r\n\r\n",
            ),
        ),
        (
            "DELETE with binary garbage",
            with(
                head("DELETE", "Content-Length: 4\r\n"),
                &[0xff, 0x00, 0xfe, 0x01],
            ),
        ),
        (
            "GET with 4 MiB",
            with(
                head("GET", "Content-Length: 4194304\r\n"),
                &vec![b'x'; 4 * 1024 * 1024],
            ),
        ),
    ];
    for (case, raw) in &cases {
        let answer = send_whole(&server, raw.clone());
        assert_refused(&answer, None, case);
    }
    assert_eq!(
        server.metric(&wire_series("body_not_allowed")),
        cases.len() as u64
    );
    assert!(upstream.received().is_empty(), "{:?}", upstream.received());
    // Without a body both are still forwarded.
    assert_eq!(server.send(&head("GET", "")).status, 204);
    assert_eq!(
        server.send(&head("DELETE", "Content-Length: 0\r\n")).status,
        204
    );
    assert_eq!(upstream.received().len(), 2);
}

fn a_post_the_upstream_may_have_received_is_never_sent_twice(driver: &str) {
    // Answers the first call; reads the second whole and closes without a
    // word, on its pooled connection and on any other.
    let upstream = Upstream::start(Arc::new(|request, stream| {
        if String::from_utf8_lossy(&request.body).contains("\"id\":2") {
            return false;
        }
        echo_ids()(request, stream)
    }));
    let server = gateway_on(driver, &upstream.url(), &["--workers", "1"]);
    assert_eq!(server.send(&call(json!(1), "")).status, 200);
    let answer = server.send(&call(json!(2), ""));
    assert_eq!(answer.status, 502);
    assert_eq!(answer.json()["id"], 2);
    assert_eq!(upstream.bodies_containing("\"id\":2"), 1);
    assert_eq!(upstream.received().len(), 2);
    assert_eq!(upstream.accepted.load(Ordering::SeqCst), 1);
    // The next call gets a new connection.
    assert_eq!(server.send(&call(json!(3), "")).status, 200);
    assert_eq!(upstream.accepted.load(Ordering::SeqCst), 2);
}

/// A catalog file of one tool, `list_orders`, whose `marketplaceIds` is
/// an array of strings; removed when dropped.
struct ListOrders(std::path::PathBuf);

impl ListOrders {
    fn new(tag: &str) -> ListOrders {
        let path =
            std::env::temp_dir().join(format!("mcpgate-forward-{tag}-{}.json", std::process::id()));
        std::fs::write(
            &path,
            json!([{"name": "list_orders", "inputSchema": {"type": "object",
                "properties": {"marketplaceIds": {"type": "array", "items": {"type": "string"}},
                               "note": {"type": "string"}},
                "required": ["marketplaceIds"]}}])
            .to_string(),
        )
        .unwrap();
        ListOrders(path)
    }

    fn arg(&self) -> &str {
        self.0.to_str().unwrap()
    }
}

impl Drop for ListOrders {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// Sends a `list_orders` call with `arguments` (as text); its body and the
/// answer.
fn send_list_orders(server: &Server, arguments: &str) -> (String, Answer) {
    let body = format!(
        r#"{{"jsonrpc":"2.0","id":"n-1","method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"list_orders","arguments":{arguments}}}}}"#
    );
    let message: serde_json::Value = serde_json::from_str(&body).unwrap();
    let answer = post_ok(server, &modern_headers(&message), body.as_bytes());
    (body, answer)
}

/// Posts `body` to the endpoint with `headers`; the answer, a 200.
fn post_ok(server: &Server, headers: &[(String, String)], body: &[u8]) -> Answer {
    let answer = server.send(&post("/mcp", headers, body, CLIENT_HEADERS));
    assert_eq!(
        answer.status,
        200,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    answer
}

/// An upstream answering every request with the response carrying
/// `result` (the request's id echoed), as `frame` writes it.
fn answering_as(
    result: serde_json::Value,
    frame: impl Fn(&serde_json::Value) -> String + Send + Sync + 'static,
) -> Upstream {
    Upstream::start(Arc::new(move |request, stream| {
        let id = serde_json::from_slice::<serde_json::Value>(&request.body)
            .map(|v| v["id"].clone())
            .unwrap_or_default();
        let response = json!({"jsonrpc": "2.0", "id": id, "result": result});
        stream.write_all(frame(&response).as_bytes()).is_ok()
    }))
}

/// `answering_as` a JSON answer, `headers` added to its head.
fn answering(result: serde_json::Value, headers: &'static str) -> Upstream {
    answering_as(result, move |response| {
        let body = response.to_string();
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n{headers}Content-Length: {}\r\n\r\n{body}",
            body.len()
        )
    })
}

#[test]
fn a_normalized_call_reaches_the_upstream_re_encoded_and_an_unchanged_one_as_sent() {
    let catalog = ListOrders::new("reencoded");
    let upstream = Upstream::start(echo_ids());
    let server = gateway(&upstream.url(), &["--catalog", catalog.arg()]);
    let (sent, answer) = send_list_orders(&server, r#"{ "MarketplaceIds" : "A", "note":"x" }"#);
    // Without normalization_meta the answer is relayed as it came.
    assert_eq!(
        answer.json()["result"],
        json!({"content": []}),
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let (unchanged, _) = send_list_orders(&server, r#"{ "marketplaceIds" : ["A"] }"#);
    let received = upstream.received();
    assert_eq!(received.len(), 2);
    let expected = sent.replace(
        r#"{ "MarketplaceIds" : "A", "note":"x" }"#,
        r#"{"marketplaceIds":["A"],"note":"x"}"#,
    );
    assert_eq!(String::from_utf8_lossy(&received[0].body), expected);
    assert_eq!(
        received[0].header("Content-Length"),
        Some(expected.len().to_string().as_str())
    );
    assert_eq!(received[1].body, unchanged.as_bytes());
}

#[test]
fn with_normalization_meta_the_answer_tells_what_was_normalized_and_the_upstreams_rate_limit() {
    let catalog = ListOrders::new("meta");
    let upstream = answering(
        json!({"content": [{"type": "text", "text": "ok"}], "_meta": {"upstream": true}}),
        "X-RateLimit-Limit: 0.5\r\nX-RateLimit-Remaining: 3\r\nX-RateLimit-Reset: 2026-04-25T17:42:33Z\r\n",
    );
    let server = gateway(
        &upstream.url(),
        &["--catalog", catalog.arg(), "--normalization-meta", "true"],
    );
    let (_, answer) = send_list_orders(&server, r#"{"MarketplaceIds": "A"}"#);
    let meta = answer.json()["result"]["_meta"].clone();
    assert_eq!(meta["upstream"], true);
    assert_eq!(
        meta["normalized"],
        json!([
            {"kind": "renamed", "from": "MarketplaceIds", "to": "marketplaceIds", "reason": "schema_canonical_key"},
            {"kind": "coerced", "field": "marketplaceIds", "from_type": "string", "to_type": "array", "reason": "schema_wants_array"}
        ])
    );
    assert_eq!(
        meta["rate_limit"],
        json!({"limit_per_second": 0.5, "remaining": 3, "reset_at": "2026-04-25T17:42:33Z"})
    );
    if let Some(schema) = envelope_schema() {
        // The contract's `_meta` shapes, as its envelope schema has them.
        let envelope = json!({"error_kind": "mcp_input_validation", "tool": "list_orders",
            "summary": "s", "details": [], "hints": [], "examples": [], "error_code": "X",
            "retryable": false, "_envelope_version": 1,
            "_meta": {"normalized": meta["normalized"], "rate_limit": meta["rate_limit"]}});
        let errors: Vec<String> = schema
            .iter_errors(&envelope)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?}");
    }
    // An unchanged call: the rate limit alone.
    let (_, answer) = send_list_orders(&server, r#"{"marketplaceIds": ["A"]}"#);
    let meta = answer.json()["result"]["_meta"].clone();
    assert!(meta.get("normalized").is_none(), "{meta}");
    assert_eq!(meta["rate_limit"]["remaining"], 3);
}

#[test]
fn an_answer_over_the_body_limit_is_relayed_as_it_came_and_counted() {
    let catalog = ListOrders::new("large");
    let text = "x".repeat(4096);
    let upstream = answering(json!({"content": [{"type": "text", "text": text}]}), "");
    let server = gateway(
        &upstream.url(),
        &[
            "--catalog",
            catalog.arg(),
            "--normalization-meta",
            "true",
            "--body-limit",
            "2048",
        ],
    );
    let (_, answer) = send_list_orders(&server, r#"{"MarketplaceIds": "A"}"#);
    let result = answer.json()["result"].clone();
    assert_eq!(result["content"][0]["text"].as_str().unwrap().len(), 4096);
    assert!(result.get("_meta").is_none());
    wait_for_metric(&server, "mcpgate_answers_unedited_total", 1);
}

/// Adding to an answer is no filter: one the gateway cannot add to (a
/// batch, as a JSON body or as an event's data) is relayed as it came and
/// counted, the event stream's other events as they came.
#[test]
fn a_batch_answer_the_gateway_cannot_add_to_is_relayed_as_it_came_and_counted() {
    let result = json!({"protocolVersion": "2025-11-25", "capabilities": {},
        "serverInfo": {"name": "batch", "version": "1"}});
    let batch = json!([{"jsonrpc": "2.0", "id": 1, "result": result}]).to_string();
    let json_body = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{batch}",
        batch.len()
    );
    let events = format!(
        "event: message\ndata: {batch}\n\ndata: {{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{result}}}\n\n"
    );
    let event_body = format!(
        "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
        events.len()
    );
    let answers = [json_body, event_body];
    let sent = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let upstream = Upstream::start(Arc::new(move |_, stream| {
        let n = sent.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        stream.write_all(answers[n.min(1)].as_bytes()).is_ok()
    }));
    // A catalog file: the gateway does not ask the upstream for a listing.
    let catalog = ListOrders::new("batch");
    let server = gateway(&upstream.url(), &["--catalog", catalog.arg()]);
    let answer = initialize(&server);
    assert_eq!(answer.body, batch.as_bytes());
    wait_for_metric(&server, "mcpgate_answers_unedited_total", 1);
    let answer = initialize(&server);
    assert_eq!(answer.body, events.as_bytes());
    wait_for_metric(&server, "mcpgate_answers_unedited_total", 2);
}

/// A 2025-11-25 `initialize` through `server`; the answer, a 200.
fn initialize(server: &Server) -> Answer {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}});
    post_ok(
        server,
        &legacy_headers(),
        &serde_json::to_vec(&message).unwrap(),
    )
}

#[test]
fn initialize_and_server_discover_results_advertise_the_envelope_contract() {
    let upstream = answering(
        json!({"protocolVersion": "2025-11-25", "capabilities": {"tools": {}, "experimental": {"com.example/x": {}}},
               "serverInfo": {"name": "scripted", "version": "1.0.0"}}),
        "",
    );
    let server = gateway(&upstream.url(), &[]);
    let expected = json!({"contract_version": 1, "error_kinds": ["mcp_input_validation"]});
    let answer = initialize(&server).json();
    let capabilities = &answer["result"]["capabilities"];
    assert_eq!(
        capabilities["experimental"]["openbridge_envelope"], expected,
        "{answer}"
    );
    assert_eq!(capabilities["experimental"]["com.example/x"], json!({}));
    assert_eq!(capabilities["tools"], json!({}));
    if reference_checks() {
        let spec = official_spec();
        let official = read_json(&spec.join("2025-11-25").join("schema.json"));
        let result =
            mcpgate::unstable::protocol::root_schema(&official, "InitializeResult").unwrap();
        let result = jsonschema::draft202012::new(&result).unwrap();
        assert!(result.is_valid(&answer["result"]), "{answer}");
    }
    if reference_checks() {
        let oracle = envelope_oracle();
        let schema = read_json(&oracle.join("schemas/error-envelope.schema.json"));
        let kinds = schema["properties"]["error_kind"]["enum"]
            .as_array()
            .unwrap()
            .clone();
        for kind in expected["error_kinds"].as_array().unwrap() {
            assert!(kinds.contains(kind), "{kind}");
        }
    }
    let discover = json!({"jsonrpc": "2.0", "id": 2, "method": "server/discover",
        "params": {"_meta": meta()}});
    let answer = post_ok(
        &server,
        &modern_headers(&discover),
        &serde_json::to_vec(&discover).unwrap(),
    );
    assert_eq!(
        answer.json()["result"]["capabilities"]["experimental"]["openbridge_envelope"],
        expected
    );
    // The official example, whose capabilities have no `experimental`
    // object: one is added, and the result still validates.
    if reference_checks() {
        let spec = official_spec();
        let revision = spec.join("2026-07-28");
        let example =
            read_json(&revision.join("examples/DiscoverResult/server-capabilities-discovery.json"));
        assert!(example["capabilities"].get("experimental").is_none());
        let upstream = answering(example, "");
        let server = gateway(&upstream.url(), &[]);
        let answer = post_ok(
            &server,
            &modern_headers(&discover),
            &serde_json::to_vec(&discover).unwrap(),
        )
        .json();
        let capabilities = &answer["result"]["capabilities"];
        assert_eq!(
            capabilities["experimental"]["openbridge_envelope"],
            expected
        );
        assert_eq!(capabilities["resources"], json!({}), "{answer}");
        let official = read_json(&revision.join("schema.json"));
        let result = mcpgate::unstable::protocol::root_schema(&official, "DiscoverResult").unwrap();
        let result = jsonschema::draft202012::new(&result).unwrap();
        assert!(result.is_valid(&answer["result"]), "{answer}");
    }
}

/// An answer the gateway holds whole (to add the contract's capability to
/// an `initialize` result) that the upstream breaks off: nothing of it has
/// been sent, so the client gets a 502 rather than a closed connection.
#[test]
fn a_held_answer_the_upstream_breaks_off_is_answered_502() {
    let upstream = Upstream::start(Arc::new(|_, stream| {
        let _ = stream.write_all(
            b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{\"jsonrpc\":\"2.0\",",
        );
        false
    }));
    let server = gateway(&upstream.url(), &[]);
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                   "clientInfo": {"name": "c", "version": "1"}}});
    let answer = server.send(&post(
        "/mcp",
        &legacy_headers(),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    ));
    assert_eq!(
        answer.status,
        502,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["id"], json!(1), "{body}");
    assert_eq!(upstream.received().len(), 1);
}

/// `answering_as` an event stream: a log notification, then the response.
fn answering_events(result: serde_json::Value) -> Upstream {
    answering_as(result, |response| {
        let note = json!({"jsonrpc": "2.0", "method": "notifications/message",
            "params": {"level": "info", "data": "working"}});
        let events = format!(
            "event: message\ndata: {note}\n\nid: e-2\nevent: message\ndata: {response}\n\n"
        );
        format!(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n{events}\r\n0\r\n\r\n",
            events.len()
        )
    })
}

#[test]
fn in_an_event_stream_only_the_response_event_carries_the_additions() {
    let catalog = ListOrders::new("events");
    let upstream = answering_events(json!({"content": [], "capabilities": {}}));
    let server = gateway(
        &upstream.url(),
        &["--catalog", catalog.arg(), "--normalization-meta", "true"],
    );
    let (_, answer) = send_list_orders(&server, r#"{"MarketplaceIds": "A"}"#);
    let text = String::from_utf8_lossy(&answer.body).into_owned();
    assert!(text.contains("id: e-2\nevent: message\ndata: "), "{text}");
    let events: Vec<serde_json::Value> = mcpgate::unstable::gate::sse::event_data(&answer.body)
        .iter()
        .map(|data| serde_json::from_str(data).unwrap())
        .collect();
    assert_eq!(events.len(), 2, "{text}");
    assert!(events[0].get("id").is_none());
    assert_eq!(events[0]["params"]["data"], "working");
    assert_eq!(
        events[1]["result"]["_meta"]["normalized"][0]["kind"],
        "renamed"
    );
    // An initialize answered as an event stream gets the capability.
    let answer = initialize(&server);
    let events = mcpgate::unstable::gate::sse::event_data(&answer.body);
    let response: serde_json::Value = serde_json::from_str(&events[1]).unwrap();
    assert_eq!(
        response["result"]["capabilities"]["experimental"]["openbridge_envelope"]["contract_version"],
        1
    );
}

#[test]
fn integers_beyond_64_bits_reach_the_upstream_only_when_within_a_bound_as_large() {
    let upstream = Upstream::start(echo_ids());
    let catalog =
        std::env::temp_dir().join(format!("mcpgate-forward-wide-{}.json", std::process::id()));
    std::fs::write(
        &catalog,
        br#"[{"name": "measure", "inputSchema": {"type": "object", "properties": {
              "max": {"type": "integer", "maximum": 100000000000000000000},
              "min": {"type": "integer", "minimum": 100000000000000000000},
              "xmax": {"type": "integer", "exclusiveMaximum": 100000000000000000000},
              "neg": {"type": "integer", "minimum": -100000000000000000000},
              "c": {"const": 100000000000000000000},
              "e": {"enum": [100000000000000000000, 5]}}}}]"#,
    )
    .unwrap();
    let server = gateway(&upstream.url(), &["--catalog", catalog.to_str().unwrap()]);
    std::fs::remove_file(&catalog).unwrap();
    // Exact bytes: each first literal reads as the same float as the
    // second, and lies over, under or beside the bound where the second
    // does not.
    let cases = [
        (r#"{"max":100000000000000000001}"#, false),
        (r#"{"max":100000000000000000000}"#, true),
        (r#"{"min":99999999999999999999}"#, false),
        (r#"{"min":100000000000000000000}"#, true),
        (r#"{"xmax":99999999999999999999}"#, false),
        (r#"{"xmax":99999999999999983616}"#, true),
        (r#"{"neg":-100000000000000000001}"#, false),
        (r#"{"neg":-100000000000000000000}"#, true),
        (r#"{"c":100000000000000000001}"#, false),
        (r#"{"c":100000000000000000000}"#, true),
        (r#"{"e":100000000000000000001}"#, false),
        (r#"{"e":100000000000000000000}"#, true),
    ];
    let mut forwarded = Vec::new();
    for (id, (arguments, allowed)) in cases.into_iter().enumerate() {
        let message = tools_call(json!(id), "measure", json!({}));
        let text = serde_json::to_string(&message).unwrap();
        let body = text.replacen(
            r#""arguments":{}"#,
            &format!(r#""arguments":{arguments}"#),
            1,
        );
        let answer = server.send(&post(
            "/mcp",
            &modern_headers(&message),
            body.as_bytes(),
            CLIENT_HEADERS,
        ));
        assert_eq!(answer.status, 200, "{arguments}");
        let answer = answer.json();
        assert_eq!(answer["id"], json!(id), "{arguments}");
        assert_eq!(
            answer["result"]["isError"] == true,
            !allowed,
            "{arguments}: {answer}"
        );
        if allowed {
            forwarded.push(body.into_bytes());
        } else {
            let issue = answer["result"]["structuredContent"]["details"][0]["issue"]
                .as_str()
                .unwrap();
            assert!(!issue.contains("0000000000000000000"), "{issue}");
        }
    }
    // What reached the upstream: the allowed calls, byte for byte.
    let received: Vec<Vec<u8>> = upstream.received().into_iter().map(|r| r.body).collect();
    assert_eq!(received, forwarded);
}

against_reference!(
    with_normalization_meta_the_answer_tells_what_was_normalized_and_the_upstreams_rate_limit,
    initialize_and_server_discover_results_advertise_the_envelope_contract,
);
