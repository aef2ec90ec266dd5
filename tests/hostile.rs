//! Hostile clients over real sockets: each gets its documented answer
//! (status, JSON-RPC code, id echo), a well-behaved client on another
//! connection keeps getting correct answers meanwhile, and the server's
//! peak memory stays bounded.

#[path = "support/bodies.rs"]
mod bodies;
#[path = "support/process.rs"]
mod process;
mod support;

use std::io::{Read, Write};
use std::net::TcpStream;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::thread::JoinHandle;
use std::time::Duration;

use process::{Answer, CLIENT_HEADERS, Server, post, read_answer};
use serde_json::{Value, json};
use support::*;

/// The body limit of the servers here (the default).
const BODY_LIMIT: usize = 4 * 1024 * 1024;

/// Peak resident memory a server may reach in these tests, in KiB.
///
/// A server starts with its compiled schemas and two workers' runtimes;
/// then it holds per connection a read buffer of at most
/// `max_head_bytes + body_limit + 16 KiB` and per worker a parse scratch of
/// a few times the largest body parsed. The largest bodies here are 1 MiB
/// texts; 128 MiB leaves room for what they need (the peaks measured
/// were 26–60 MiB) and still catches a buffer that grows with what a client sends (10,000
/// headers, a 2 GiB length, a body dribbled for ever).
const PEAK_RSS_KIB: u64 = 128 * 1024;

/// A server with short timeouts and a bystander: a client on its own
/// keep-alive connection that sends a valid and an invalid message in turn
/// and checks each answer until the test is over.
struct Hostile {
    server: Server,
    stop: Arc<AtomicBool>,
    bystander: Option<JoinHandle<u64>>,
}

impl Hostile {
    fn start() -> Hostile {
        Hostile::with_timeouts(2000, 3000)
    }

    fn with_timeouts(read_ms: u64, idle_ms: u64) -> Hostile {
        Hostile::with_config(read_ms, idle_ms, "")
    }

    /// With the project's test catalog: the value gate and its
    /// `Mcp-Param-*` headers are in play.
    fn with_catalog() -> Hostile {
        Hostile::with_catalog_and("")
    }

    /// As [`Hostile::with_catalog`], with `extra` configuration.
    fn with_catalog_and(extra: &str) -> Hostile {
        let catalog = catalog_path();
        Hostile::with_config(
            2000,
            3000,
            &format!("catalog = {:?}\n{extra}", catalog.to_str().unwrap()),
        )
    }

    fn with_config(read_ms: u64, idle_ms: u64, extra: &str) -> Hostile {
        let server = configured(&format!(
            "read_timeout_ms = {read_ms}\nidle_timeout_ms = {idle_ms}\n{extra}"
        ));
        let stop = Arc::new(AtomicBool::new(false));
        let bystander = {
            let stop = stop.clone();
            let mut stream = server.connect();
            std::thread::spawn(move || bystander(&mut stream, &stop))
        };
        Hostile {
            server,
            stop,
            bystander: Some(bystander),
        }
    }

    fn send(&self, raw: &[u8]) -> Answer {
        self.server.send(raw)
    }

    /// Stops the bystander (which must have been answered, every time
    /// correctly) and checks the server's peak memory.
    fn finish(self) {
        self.finish_within(PEAK_RSS_KIB);
    }

    /// As [`Hostile::finish`], with a peak RSS bound of its own.
    fn finish_within(mut self, bound_kib: u64) {
        // At least one answer while the hostile clients were at it.
        std::thread::sleep(Duration::from_millis(50));
        self.stop.store(true, Ordering::Relaxed);
        let answered = self.bystander.take().unwrap().join().expect("bystander");
        assert!(answered >= 2, "the bystander was answered {answered} times");
        let peak = peak_rss_kib(&self.server);
        eprintln!("server peak RSS: {peak} KiB");
        assert!(
            peak < bound_kib,
            "peak RSS {peak} KiB over the bound of {bound_kib} KiB"
        );
    }
}

impl Drop for Hostile {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::Relaxed);
    }
}

/// A server (two workers) started with `toml` as its configuration file.
fn configured(toml: &str) -> Server {
    let dir = std::env::temp_dir().join(format!(
        "mcpgate-hostile-{}-{:?}",
        std::process::id(),
        std::thread::current().id()
    ));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("hostile.toml");
    std::fs::write(&config, toml).unwrap();
    let server = Server::start(&["--config", config.to_str().unwrap()]);
    std::fs::remove_dir_all(&dir).unwrap();
    server
}

/// `VmHWM` of the server process: its peak resident set, in KiB.
fn peak_rss_kib(server: &Server) -> u64 {
    proc_status_kib(server, "VmHWM:")
}

/// `VmRSS` of the server process: its resident set now, in KiB.
fn rss_kib(server: &Server) -> u64 {
    proc_status_kib(server, "VmRSS:")
}

fn proc_status_kib(server: &Server, field: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{}/status", server.child.id())).unwrap();
    status
        .lines()
        .find_map(|line| line.strip_prefix(field))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .unwrap_or_else(|| panic!("{field} in /proc/<pid>/status"))
}

fn bystander(stream: &mut TcpStream, stop: &AtomicBool) -> u64 {
    let good = tools_call(json!("calm"), "echo", json!({"text": "hi"}));
    let mut bad = tools_call(json!(41), "echo", json!({}));
    bad["params"]["name"] = json!(7);
    let good = request(&good);
    let bad = request(&bad);
    let mut answered = 0;
    // At least one round, however soon the test is over.
    loop {
        stream.write_all(&good).unwrap();
        let answer = read_answer(stream);
        assert_eq!(answer.status, 204, "bystander: {answer:?}");
        stream.write_all(&bad).unwrap();
        let answer = read_answer(stream);
        assert_eq!(answer.status, 200, "bystander: {answer:?}");
        assert_eq!(answer.json()["id"], 41);
        assert_eq!(answer.json()["error"]["code"], -32602);
        answered += 2;
        if stop.load(Ordering::Relaxed) {
            return answered;
        }
        std::thread::sleep(Duration::from_millis(10));
    }
}

/// A POST to `/validate` of `message` with the headers its lane wants.
fn request(message: &Value) -> Vec<u8> {
    post(
        "/validate",
        &modern_headers(message),
        &serde_json::to_vec(message).unwrap(),
        CLIENT_HEADERS,
    )
}

/// A POST to `/validate` of raw `body` with `headers`.
fn raw_request(headers: &[(String, String)], body: &[u8]) -> Vec<u8> {
    post("/validate", headers, body, CLIENT_HEADERS)
}

fn modern(method: &str, name: Option<&str>) -> Vec<(String, String)> {
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), MODERN.to_owned()),
        ("Mcp-Method".to_owned(), method.to_owned()),
    ];
    if let Some(name) = name {
        headers.push(("Mcp-Name".to_owned(), name.to_owned()));
    }
    headers
}

/// Asserts the status, the JSON-RPC code and the id of an error answer.
#[track_caller]
fn assert_error(answer: &Answer, status: u16, code: i64, id: Value, case: &str) {
    assert_eq!(
        answer.status,
        status,
        "{case}: {}",
        String::from_utf8_lossy(&answer.body)
    );
    let body = answer.json();
    assert_eq!(body["jsonrpc"], "2.0", "{case}");
    assert_eq!(body["error"]["code"], code, "{case}: {body}");
    assert_eq!(body["id"], id, "{case}");
}

/// Writes `raw` (from another thread, ignoring a connection the server
/// closes early) and reads the answer.
fn send_all_then_read(server: &Server, raw: Vec<u8>) -> Answer {
    let mut stream = server.connect();
    let mut writer = stream.try_clone().unwrap();
    let sender = std::thread::spawn(move || {
        let _ = writer.write_all(&raw);
    });
    let answer = read_answer(&mut stream);
    let _ = stream.shutdown(std::net::Shutdown::Both);
    sender.join().unwrap();
    answer
}

/// A tools/call with `arguments` written as raw JSON text.
fn tools_call_raw(id: &str, name: &str, arguments: &str) -> Vec<u8> {
    let meta = serde_json::to_string(&meta()).unwrap();
    format!(
        r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{"_meta":{meta},"name":"{name}","arguments":{arguments}}}}}"#
    )
    .into_bytes()
}

#[test]
fn a_request_dribbled_a_byte_at_a_time_is_answered_within_the_read_deadline() {
    let hostile = Hostile::with_timeouts(10_000, 10_000);
    let message = tools_call(json!("slow"), "echo", json!({"text": "one byte at a time"}));
    let raw = request(&message);
    let mut stream = hostile.server.connect();
    // Headers and body alike, one byte per write.
    for byte in &raw {
        stream.write_all(&[*byte]).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_eq!(read_answer(&mut stream).status, 204);
    // The same, refused: the answer still echoes the id.
    let mut bad = tools_call(json!("slow-bad"), "echo", json!({}));
    bad["params"]["name"] = json!(false);
    for byte in &request(&bad) {
        stream.write_all(&[*byte]).unwrap();
        std::thread::sleep(Duration::from_millis(1));
    }
    assert_error(
        &read_answer(&mut stream),
        200,
        -32602,
        json!("slow-bad"),
        "dribbled invalid params",
    );
    hostile.finish();
}

#[test]
fn a_client_dribbling_past_the_read_deadline_is_closed_without_an_answer() {
    let hostile = Hostile::with_timeouts(300, 3000);
    let message = tools_call(json!(1), "echo", json!({}));
    let raw = request(&message);
    let mut stream = hostile.server.connect();
    let mut closed = false;
    // 40 ms a byte: the 300 ms deadline passes within the head.
    for byte in &raw {
        if stream.write_all(&[*byte]).is_err() {
            closed = true;
            break;
        }
        std::thread::sleep(Duration::from_millis(40));
        if !closed {
            let mut probe = [0u8; 64];
            stream.set_nonblocking(true).unwrap();
            match stream.read(&mut probe) {
                Ok(0) => closed = true,
                Ok(n) => panic!("answered: {:?}", String::from_utf8_lossy(&probe[..n])),
                Err(_) => {}
            }
            stream.set_nonblocking(false).unwrap();
            if closed {
                break;
            }
        }
    }
    assert!(closed, "the dribbling client was never closed");
    hostile.finish();
}

#[test]
fn a_content_length_of_2_gib_is_refused_413_before_any_body() {
    let hostile = Hostile::start();
    let raw = format!(
        "POST /validate HTTP/1.1\r\nHost: t\r\n{CLIENT_HEADERS}MCP-Protocol-Version: {MODERN}\r\nContent-Length: 2147483648\r\n\r\n{{\"jsonrpc\""
    );
    let answer = hostile.send(raw.as_bytes());
    assert_error(&answer, 413, -32600, Value::Null, "Content-Length 2^31");
    assert!(
        answer.json()["error"]["message"]
            .as_str()
            .unwrap()
            .contains(&BODY_LIMIT.to_string()),
        "the message names the limit"
    );
    assert_eq!(answer.header("Connection"), Some("close"));
    hostile.finish();
}

#[test]
fn malformed_and_over_long_chunk_sizes_are_refused() {
    let hostile = Hostile::start();
    let head = format!(
        "POST /validate HTTP/1.1\r\nHost: t\r\n{CLIENT_HEADERS}Transfer-Encoding: chunked\r\n\r\n"
    );
    let long_extension = format!("1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(5000));
    let no_line_end = "1".repeat(5000);
    let cases: [(&str, &str, u16); 8] = [
        ("not hex", "zz\r\n{}\r\n0\r\n\r\n", 400),
        ("negative", "-2\r\n{}\r\n0\r\n\r\n", 400),
        ("17 hex digits", "10000000000000000\r\n", 400),
        ("LF without CR", "2\n{}\r\n0\r\n\r\n", 400),
        ("data longer than its size", "1\r\n{}\r\n0\r\n\r\n", 400),
        ("a 5000-byte size line", &long_extension, 400),
        ("a size line that never ends", &no_line_end, 400),
        ("2^64 - 1 bytes", "ffffffffffffffff\r\n{}", 413),
    ];
    for (case, body, status) in cases {
        let answer = send_all_then_read(&hostile.server, format!("{head}{body}").into_bytes());
        assert_error(&answer, status, -32600, Value::Null, case);
        assert_eq!(answer.header("Connection"), Some("close"), "{case}");
    }
    hostile.finish();
}

#[test]
fn a_chunked_http_1_0_request_is_refused_and_nothing_after_it_is_served() {
    // HTTP/1.0 has no transfer coding (RFC 9112, 6.1): a peer that framed
    // this body as 1.0 bytes would take the chunk lines, and the request
    // behind them, for something else than the gateway does.
    let hostile = Hostile::start();
    let message = tools_call(json!(1), "echo", json!({"text": "hi"}));
    let body = serde_json::to_vec(&message).unwrap();
    let mut raw = format!(
        "POST /validate HTTP/1.0\r\nHost: t\r\nConnection: keep-alive\r\n{CLIENT_HEADERS}\
         MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n\
         Transfer-Encoding: chunked\r\n\r\n{:x}\r\n",
        body.len()
    )
    .into_bytes();
    raw.extend_from_slice(&body);
    raw.extend_from_slice(b"\r\n0\r\n\r\n");
    raw.extend_from_slice(&request(&message));
    let mut stream = hostile.server.connect();
    stream.write_all(&raw).unwrap();
    let answer = read_answer(&mut stream);
    assert_error(&answer, 400, -32600, Value::Null, "chunked HTTP/1.0");
    assert_eq!(answer.header("Connection"), Some("close"));
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
    assert!(
        rest.is_empty(),
        "an answer after the refusal: {:?}",
        String::from_utf8_lossy(&rest)
    );
    hostile.finish();
}

#[test]
fn nesting_100000_deep_is_refused_without_exhausting_the_stack() {
    let hostile = Hostile::start();
    let depth = 100_000;
    let arrays = format!("{}{}", "[".repeat(depth), "]".repeat(depth));
    let open_arrays = "[".repeat(depth);
    let objects = format!("{}1{}", r#"{"a":"#.repeat(depth), "}".repeat(depth));
    let in_arguments = tools_call_raw("7", "echo", &arrays);
    let cases: [(&str, &[u8], i64); 4] = [
        // Deeper than the limit: refused at the limit, before any schema
        // (so as a parse refusal, without the id).
        ("arrays", arrays.as_bytes(), -32600),
        ("objects", objects.as_bytes(), -32600),
        ("in the arguments", &in_arguments, -32600),
        // Never closed: still refused for its depth, at the 65th level,
        // before its end is looked for.
        ("unclosed arrays", open_arrays.as_bytes(), -32600),
    ];
    for (case, body, code) in cases {
        let answer = hostile.send(&raw_request(&modern("tools/call", Some("echo")), body));
        assert_error(&answer, 400, code, Value::Null, case);
    }
    hostile.finish();
}

#[test]
fn texts_and_keys_of_1_mib_are_checked_and_never_echoed_in_full() {
    let hostile = Hostile::start();
    let mib = "x".repeat(1 << 20);
    // Free-form arguments: any size within the body limit is valid.
    let long_text = tools_call_raw("1", "echo", &format!(r#"{{"text":"{mib}"}}"#));
    let long_key = tools_call_raw("2", "echo", &format!(r#"{{"{mib}":1}}"#));
    for (case, body) in [("text", &long_text), ("key", &long_key)] {
        let answer = hostile.send(&raw_request(&modern("tools/call", Some("echo")), body));
        assert_eq!(answer.status, 204, "a 1 MiB {case}");
    }
    // A 1 MiB method (legacy lane: no header has to carry it): not found,
    // the id echoed, the method cut at the echo bound.
    let body = format!(r#"{{"jsonrpc":"2.0","id":3,"method":"{mib}"}}"#);
    let answer = hostile.send(&raw_request(&[], body.as_bytes()));
    assert_error(&answer, 200, -32601, json!(3), "a 1 MiB method");
    assert!(answer.body.len() < 1024, "{} bytes", answer.body.len());
    // A 1 MiB id is an id, but too long to repeat.
    let mut message = tools_call(json!(mib), "echo", json!({}));
    message["params"]["name"] = json!(7);
    let answer = hostile.send(&request(&message));
    assert_error(&answer, 400, -32602, Value::Null, "a 1 MiB id");
    assert!(answer.body.len() < 2048, "{} bytes", answer.body.len());
    // A 1 MiB protocol version in _meta is refused, and cut in the answer.
    let mut message = tools_call(json!(4), "echo", json!({}));
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!(mib);
    let answer = hostile.send(&raw_request(
        &modern("tools/call", Some("echo")),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer.status, 400);
    assert!(answer.body.len() < 2048, "{} bytes", answer.body.len());
    hostile.finish();
}

#[test]
fn numbers_of_300_digits_are_values_but_not_ids() {
    let hostile = Hostile::start();
    let digits = "9".repeat(300);
    let answer = hostile.send(&raw_request(
        &modern("tools/call", Some("echo")),
        &tools_call_raw(&digits, "echo", "{}"),
    ));
    assert_error(&answer, 400, -32600, Value::Null, "a 300-digit id");
    let answer = hostile.send(&raw_request(
        &modern("tools/call", Some("echo")),
        &tools_call_raw("1", "echo", &format!(r#"{{"n":{digits},"m":-{digits}}}"#)),
    ));
    assert_eq!(answer.status, 204, "300-digit argument values");
    hostile.finish();
}

#[test]
fn invalid_utf8_and_lone_surrogates_are_parse_errors() {
    let hostile = Hostile::start();
    let headers = modern("tools/call", Some("echo"));
    let cases: [(&str, Vec<u8>); 6] = [
        (
            "a 0xFF byte",
            splice(
                &tools_call_raw("1", "echo", r#"{"t":"@@"}"#),
                b"@@",
                b"a\xffb",
            ),
        ),
        (
            "an overlong encoding",
            splice(
                &tools_call_raw("1", "echo", r#"{"t":"@@"}"#),
                b"@@",
                b"\xc0\xaf",
            ),
        ),
        (
            "an encoded surrogate",
            splice(
                &tools_call_raw("1", "echo", r#"{"t":"@@"}"#),
                b"@@",
                b"\xed\xa0\x80",
            ),
        ),
        (
            "a truncated sequence",
            splice(
                &tools_call_raw("1", "echo", r#"{"t":"@@"}"#),
                b"@@",
                b"\xe2\x82",
            ),
        ),
        (
            "a lone high surrogate escape",
            tools_call_raw("1", "echo", r#"{"t":"\ud800"}"#),
        ),
        (
            "a lone low surrogate escape",
            tools_call_raw("1", "echo", r#"{"t":"x\udc00y"}"#),
        ),
    ];
    for (case, body) in cases {
        let answer = hostile.send(&raw_request(&headers, &body));
        assert_error(&answer, 400, -32700, Value::Null, case);
    }
    // A surrogate pair is a character like any other.
    let answer = hostile.send(&raw_request(
        &headers,
        &tools_call_raw("1", "echo", r#"{"t":"\ud83d\ude00"}"#),
    ));
    assert_eq!(answer.status, 204);
    hostile.finish();
}

fn splice(body: &[u8], marker: &[u8], with: &[u8]) -> Vec<u8> {
    let at = body
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap();
    let mut out = body[..at].to_vec();
    out.extend_from_slice(with);
    out.extend_from_slice(&body[at + marker.len()..]);
    out
}

#[test]
fn duplicate_keys_at_every_depth_are_refused() {
    let hostile = Hostile::start();
    let headers = modern("tools/call", Some("echo"));
    let meta = serde_json::to_string(&meta()).unwrap();
    let cases = [
        (
            "top level",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"echo"}}}}"#
            ),
        ),
        (
            "params",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{meta},"name":"echo","name":"other"}}}}"#
            ),
        ),
        (
            "_meta",
            format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{"io.modelcontextprotocol/protocolVersion":"{MODERN}","io.modelcontextprotocol/protocolVersion":"2025-11-25","io.modelcontextprotocol/clientCapabilities":{{}}}},"name":"echo"}}}}"#
            ),
        ),
        (
            "deep in the arguments",
            String::from_utf8(tools_call_raw(
                "1",
                "echo",
                r#"{"a":[{"b":{"c":1,"d":[{"e":1,"e":1}]}}]}"#,
            ))
            .unwrap(),
        ),
        (
            "the same key spelled with an escape",
            String::from_utf8(tools_call_raw("1", "echo", r#"{"k":1,"\u006b":2}"#)).unwrap(),
        ),
    ];
    for (case, body) in cases {
        let answer = hostile.send(&raw_request(&headers, body.as_bytes()));
        assert_error(&answer, 400, -32600, Value::Null, case);
    }
    hostile.finish();
}

#[test]
fn nul_bytes_are_refused_where_json_and_http_forbid_them() {
    let hostile = Hostile::start();
    let headers = modern("tools/call", Some("echo"));
    let between_tokens = splice(&tools_call_raw("1", "echo", "{}"), b"{}", b"{\0}");
    let in_a_string = splice(
        &tools_call_raw("1", "echo", r#"{"t":"@@"}"#),
        b"@@",
        b"a\0b",
    );
    for (case, body) in [
        ("between tokens", between_tokens),
        ("in a string", in_a_string),
    ] {
        let answer = hostile.send(&raw_request(&headers, &body));
        assert_error(&answer, 400, -32700, Value::Null, case);
    }
    // Escaped, it is a character like any other.
    let escaped = tools_call_raw("1", "echo", r#"{"t":"a\u0000b"}"#);
    assert_eq!(hostile.send(&raw_request(&headers, &escaped)).status, 204);
    // In a header value or the request line: not HTTP.
    let body = tools_call_raw("1", "echo", "{}");
    let mut with_nul = headers.clone();
    with_nul.push(("X-Note".to_owned(), "a\0b".to_owned()));
    let answer = send_all_then_read(&hostile.server, raw_request(&with_nul, &body));
    assert_error(&answer, 400, -32600, Value::Null, "a NUL in a header");
    let answer = send_all_then_read(
        &hostile.server,
        b"POST /vali\0date HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}".to_vec(),
    );
    assert_error(&answer, 400, -32600, Value::Null, "a NUL in the target");
    hostile.finish();
}

#[test]
fn ten_thousand_headers_are_refused_431() {
    let hostile = Hostile::start();
    let many: Vec<(String, String)> = (0..10_000)
        .map(|n| (format!("X-H{n}"), n.to_string()))
        .collect();
    let answer = send_all_then_read(
        &hostile.server,
        raw_request(&many, &tools_call_raw("1", "echo", "{}")),
    );
    assert_error(&answer, 431, -32600, Value::Null, "10,000 headers");
    // As many bytes in few headers: the head size limit.
    let wide = vec![("X-Wide".to_owned(), "w".repeat(100_000))];
    let answer = send_all_then_read(
        &hostile.server,
        raw_request(&wide, &tools_call_raw("1", "echo", "{}")),
    );
    assert_error(&answer, 431, -32600, Value::Null, "a 100,000-byte header");
    hostile.finish();
}

#[test]
fn cr_and_lf_in_mirrored_headers_never_pass_or_reach_the_answer() {
    let hostile = Hostile::start();
    let body = tools_call_raw("5", "echo", "{}");
    let head = |name_line: &str| {
        let mut raw = format!(
            "POST /validate HTTP/1.1\r\nHost: t\r\n{CLIENT_HEADERS}MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\n{name_line}Content-Length: {}\r\n\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(&body);
        raw
    };
    // A bare CR inside a value, or a value folded onto the next line, is
    // not HTTP.
    for line in [
        "Mcp-Name: ec\rho\r\n",
        "Mcp-Name: echo\r\nMcp-Param-Units: a\rb\r\n",
        "Mcp-Name: ec\r\n ho\r\n",
    ] {
        let answer = send_all_then_read(&hostile.server, head(line));
        assert_error(
            &answer,
            400,
            -32600,
            Value::Null,
            &line.escape_debug().to_string(),
        );
    }
    // A bare LF ends the line: what follows is another header, and
    // Mcp-Name holds only what came before it.
    let answer = hostile.send(&head("Mcp-Name: ec\nho: x\r\n"));
    assert_error(&answer, 400, -32020, json!(5), "an LF in Mcp-Name");
    let data = &answer.json()["error"]["data"];
    assert_eq!(data["header"], "Mcp-Name");
    assert_eq!(
        (data["expected"].clone(), data["received"].clone()),
        (json!("echo"), json!("ec"))
    );
    // A header injected through the base64 sentinel stays text in the
    // JSON answer and never becomes a header of it.
    let injected = "=?base64?ZWNobw0KU2V0LUNvb2tpZTogeD0x?="; // "echo\r\nSet-Cookie: x=1"
    let answer = hostile.send(&head(&format!("Mcp-Name: {injected}\r\n")));
    assert_error(&answer, 400, -32020, json!(5), "CR LF in a sentinel");
    assert_eq!(
        answer.json()["error"]["data"]["received"],
        "echo\r\nSet-Cookie: x=1"
    );
    assert!(answer.header("Set-Cookie").is_none());
    // The same text in body and sentinel agrees: it is a name like any other.
    let crlf_name = tools_call_raw("6", r"echo\r\nSet-Cookie: x=1", "{}");
    let mut raw = format!(
        "POST /validate HTTP/1.1\r\nHost: t\r\n{CLIENT_HEADERS}MCP-Protocol-Version: {MODERN}\r\nMcp-Method: tools/call\r\nMcp-Name: {injected}\r\nContent-Length: {}\r\n\r\n",
        crlf_name.len()
    )
    .into_bytes();
    raw.extend_from_slice(&crlf_name);
    assert_eq!(hostile.send(&raw).status, 204);
    hostile.finish();
}

#[test]
fn cr_and_lf_smuggled_into_an_mcp_param_header_are_a_mismatch_and_stay_text() {
    let hostile = Hostile::with_catalog();
    let message = tools_call(
        json!("p-1"),
        "search_orders",
        json!({"marketplaceIds": ["A"], "region": "NA"}),
    );
    let body = serde_json::to_vec(&message).unwrap();
    let mut headers = modern("tools/call", Some("search_orders"));
    // "NA\r\nSet-Cookie: x=1" in the sentinel.
    headers.push((
        "Mcp-Param-Region".to_owned(),
        "=?base64?TkENClNldC1Db29raWU6IHg9MQ==?=".to_owned(),
    ));
    let answer = hostile.send(&raw_request(&headers, &body));
    assert_error(&answer, 400, -32020, json!("p-1"), "CR LF in Mcp-Param");
    let data = &answer.json()["error"]["data"];
    assert_eq!(data["header"], "Mcp-Param-Region");
    assert_eq!(data["expected"], "NA");
    assert_eq!(data["received"], "NA\r\nSet-Cookie: x=1");
    assert!(answer.header("Set-Cookie").is_none());
    // The header as the argument says it: the call passes.
    headers.pop();
    headers.push(("Mcp-Param-Region".to_owned(), "NA".to_owned()));
    assert_eq!(hostile.send(&raw_request(&headers, &body)).status, 204);
    hostile.finish();
}

#[test]
fn headers_naming_one_tool_and_a_body_naming_another_are_a_header_mismatch() {
    let hostile = Hostile::start();
    let message = tools_call(json!("who"), "delete_everything", json!({}));
    let answer = hostile.send(&raw_request(
        &modern("tools/call", Some("get_weather")),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_error(&answer, 400, -32020, json!("who"), "tool names differ");
    let data = &answer.json()["error"]["data"];
    assert_eq!(data["header"], "Mcp-Name");
    assert_eq!(data["expected"], "delete_everything");
    assert_eq!(data["received"], "get_weather");
    // And the method header naming another method.
    let answer = hostile.send(&raw_request(
        &modern("tools/list", None),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_error(&answer, 400, -32020, json!("who"), "methods differ");
    assert_eq!(answer.json()["error"]["data"]["header"], "Mcp-Method");
    hostile.finish();
}

#[test]
fn a_connection_that_never_sends_a_byte_is_closed_at_the_read_timeout() {
    let server = configured("read_timeout_ms = 300\nidle_timeout_ms = 30000\n");
    let mut silent = server.connect();
    let mut byte = [0u8; 1];
    // The client waits up to 10 s; the server closes at 0.3 s, where it
    // used to hold the connection for the idle timeout (30 s here).
    assert_eq!(
        silent.read(&mut byte).expect("closed, not timed out"),
        0,
        "closed without an answer"
    );
    // A connection that has sent a request waits for the next one for
    // the idle timeout.
    let mut kept = server.connect();
    let good = request(&tools_call(json!(1), "echo", json!({"text": "hi"})));
    kept.write_all(&good).unwrap();
    assert_eq!(read_answer(&mut kept).status, 204);
    std::thread::sleep(Duration::from_millis(900));
    kept.write_all(&good).unwrap();
    assert_eq!(read_answer(&mut kept).status, 204);
}

#[test]
fn a_thousand_silent_connections_leave_room_for_a_new_client() {
    const SILENT: usize = 1000;
    let server =
        configured("max_connections = 64\nread_timeout_ms = 10000\nidle_timeout_ms = 60000\n");
    let silent: Vec<TcpStream> = (0..SILENT)
        .map(|_| TcpStream::connect(server.address).unwrap())
        .collect();
    // Each worker holds its 32; every further connection takes the slot
    // of the one idle longest. The new client is answered long before
    // any silent connection's own deadline (10 s) frees a slot.
    let mut client = server.connect();
    client
        .set_read_timeout(Some(Duration::from_secs(5)))
        .unwrap();
    let good = request(&tools_call(json!(1), "echo", json!({"text": "hi"})));
    client.write_all(&good).unwrap();
    assert_eq!(read_answer(&mut client).status, 204);
    assert!(server.metric("mcpgate_connection_limit_reached_total") > 0);
    // The silent connections the server let go were closed, not reset,
    // and at most 64 are held once each worker has taken in its backlog
    // (the other worker may still be at it: looked at again, boundedly).
    let mut open: Vec<TcpStream> = silent;
    for stream in &open {
        stream.set_nonblocking(true).unwrap();
    }
    for _ in 0..50 {
        open.retain_mut(|stream| match stream.read(&mut [0u8; 1]) {
            Ok(0) => false,
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => true,
            other => panic!("a silent connection got {other:?}"),
        });
        if open.len() <= 64 {
            break;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    assert!(
        open.len() <= 64,
        "{} silent connections still open",
        open.len()
    );
}

#[test]
fn parse_memory_grown_by_large_bodies_is_given_back() {
    let server = Server::start(&[]);
    let good = request(&tools_call(json!(1), "echo", json!({"text": "hi"})));
    assert_eq!(server.send(&good).status, 204);
    let before = rss_kib(&server);
    // About 4 MiB of small values: a tape node each, and simd-json's
    // index of every structural byte.
    let items = vec![0u8; 2_000_000];
    let large = request(&tools_call(json!(2), "echo", json!({"items": items})));
    assert!(large.len() < BODY_LIMIT && large.len() > 3 * 1024 * 1024);
    for _ in 0..5 {
        // A connection each: both workers parse some.
        assert_eq!(server.send(&large).status, 204);
    }
    let grown = rss_kib(&server);
    // Within 32 MiB of the start once the bodies stop, in a few seconds.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let mut now = rss_kib(&server);
    while now > before + 32 * 1024 && std::time::Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(100));
        now = rss_kib(&server);
    }
    eprintln!("RSS: {before} KiB at start, {grown} KiB after the bodies, {now} KiB later");
    assert!(
        now <= before + 32 * 1024,
        "RSS {now} KiB, started at {before} KiB"
    );
}

#[test]
fn refusal_log_lines_are_limited_per_reason_and_what_was_left_out_is_counted() {
    const SENT: u64 = 300;
    let log = std::env::temp_dir().join(format!("mcpgate-hostile-log-{}", std::process::id()));
    let file = std::fs::File::create(&log).unwrap();
    let server = Server::start_logging(&[], "info", std::process::Stdio::from(file));
    let malformed = raw_request(&modern("tools/list", None), b"{\"jsonrpc\":");
    let started = std::time::Instant::now();
    let mut stream = server.connect();
    for _ in 0..SENT {
        stream.write_all(&malformed).unwrap();
        let answer = read_answer(&mut stream);
        assert_error(&answer, 400, -32700, Value::Null, "malformed");
    }
    let seconds = started.elapsed().as_secs();
    let suppressed =
        server.metric("mcpgate_rejection_log_suppressed_total{reason=\"malformed_json\"}");
    let counted = server.metric(
        "mcpgate_rejections_total{rejecter=\"parse\",reason=\"malformed_json\",status=\"400\"}",
    );
    let text = std::fs::read_to_string(&log).unwrap();
    std::fs::remove_file(&log).unwrap();
    let logged = text
        .lines()
        .filter(|line| line.contains("rejected") && line.contains("malformed_json"))
        .count() as u64;
    assert_eq!(counted, SENT, "every refusal counted");
    assert_eq!(
        logged + suppressed,
        SENT,
        "every refusal logged or counted as left out"
    );
    // Ten a second, each second the refusals spanned.
    assert!(
        logged <= 10 * (seconds + 1),
        "{logged} lines in {seconds} s"
    );
    assert!(suppressed > 0);
}

#[test]
fn a_body_at_the_limit_full_of_wrong_items_is_refused_as_a_tool_error_while_others_are_served() {
    // Two workers whatever the machine: each may hold one such body.
    let hostile = Hostile::with_catalog_and("workers = 2\n");
    // `1,` where `fields` wants strings: about two million wrong items.
    let count = (BODY_LIMIT - 512) / 2;
    let arguments = format!(
        r#"{{"accountId":1,"fields":[{}]}}"#,
        vec!["1"; count].join(",")
    );
    let body = tools_call_raw("\"w-1\"", "get_account", &arguments);
    assert!(body.len() <= BODY_LIMIT);
    let mut headers = modern("tools/call", Some("get_account"));
    headers.push(("Mcp-Param-Account-Id".to_owned(), "1".to_owned()));
    let raw = raw_request(&headers, &body);
    for _ in 0..3 {
        let answer = hostile.send(&raw);
        assert_eq!(answer.status, 200);
        let answer = answer.json();
        assert_eq!(answer["id"], "w-1");
        assert_eq!(answer["result"]["isError"], true);
        let envelope = &answer["result"]["structuredContent"];
        assert_eq!(envelope["total"], count);
        assert_eq!(envelope["details"].as_array().unwrap().len(), 10);
    }
    // The parse holds a 24-byte tape node per value, the tape reserved at
    // once rather than doubled (a doubled tape leaves its smaller blocks
    // resident: about 110 MiB for this body instead of 52), and each of the
    // two workers may hold one such body at once: bounded by the body
    // limit, not by the number of wrong items.
    hostile.finish_within(PEAK_RSS_KIB + 64 * 1024);
}

/// A client that pipelines large bodies holds its worker for the body being
/// checked, no more: a request that arrived meanwhile on another connection
/// is answered before the client's next body, on either I/O driver.
#[test]
fn pipelined_large_bodies_let_a_waiting_connection_in_between() {
    for driver in ["epoll", "uring"] {
        let server = configured(&format!("workers = 1\nio_driver = {driver:?}\n"));
        let headers = bodies::listen_headers();
        let large = raw_request(&headers, &bodies::wrong_items_body(100_000));
        let small = request(&tools_call(json!(5), "echo", json!({"text": "hi"})));
        let mut other = server.connect();
        other.write_all(&small).unwrap();
        assert_eq!(read_answer(&mut other).status, 204, "{driver}");

        let mut client = server.connect();
        let mut writer = client.try_clone().unwrap();
        let pipelined = large.repeat(3);
        let writing = std::thread::spawn(move || writer.write_all(&pipelined).unwrap());
        // The first body is answered: the worker holds the second.
        assert_eq!(read_answer(&mut client).status, 200, "{driver}");
        other.write_all(&small).unwrap();
        let waiting = std::thread::spawn(move || {
            let answer = read_answer(&mut other);
            (answer.status, std::time::Instant::now())
        });
        assert_eq!(read_answer(&mut client).status, 200, "{driver}");
        assert_eq!(read_answer(&mut client).status, 200, "{driver}");
        let third = std::time::Instant::now();
        writing.join().unwrap();
        let (status, answered) = waiting.join().unwrap();
        assert_eq!(status, 204, "{driver}");
        assert!(
            answered < third,
            "{driver}: the waiting request was answered after the client's third body"
        );
    }
}
