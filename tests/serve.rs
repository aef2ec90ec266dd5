//! `mcpgate serve` over real sockets on 127.0.0.1: every rejection-table
//! row reachable over HTTP and counted exactly once in `/metrics`, the
//! verdict service, keep-alive and pipelining, chunked bodies, and a
//! SIGTERM that loses nothing in flight.

#[path = "support/process.rs"]
mod process;
mod support;

use std::io::Write;
use std::time::Duration;

use mcpgate::Reason;
use mcpgate::unstable::reject::{Dialect, TABLE, row};
use process::{CLIENT_HEADERS, Server, post, read_answer};
use serde_json::json;
use support::*;

const TOKEN: &str = "t0k3n";
const BODY_LIMIT: usize = 4096;

fn auth() -> String {
    format!("Authorization: Bearer {TOKEN}\r\n")
}

fn start() -> Server {
    Server::start(&[
        "--bearer-tokens",
        TOKEN,
        "--body-limit",
        &BODY_LIMIT.to_string(),
        "--catalog",
        catalog_path().to_str().unwrap(),
    ])
}

/// A raw request that triggers `reason` over HTTP, and the id its answer
/// must carry.
fn http_scenario(reason: Reason) -> (Vec<u8>, serde_json::Value) {
    let client = format!("{CLIENT_HEADERS}{}", auth());
    let valid = tools_call(json!(1), "echo", json!({}));
    let valid_body = serde_json::to_vec(&valid).unwrap();
    let null = serde_json::Value::Null;
    match reason {
        Reason::MethodNotAllowed => (
            format!("GET /mcp HTTP/1.1\r\nHost: t\r\n{client}\r\n").into_bytes(),
            null,
        ),
        Reason::UnknownPath => (post("/nope", &[], b"{}", &client), null),
        // With a bearer token, an id the gateway did not seal for it;
        // decided once the message is allowed, so its id is echoed.
        Reason::UnknownSession => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Mcp-Session-Id: not-sealed\r\n"),
            ),
            json!(1),
        ),
        Reason::OriginNotAllowed => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Origin: http://evil.example\r\n"),
            ),
            null,
        ),
        Reason::Unauthorized => (
            post("/mcp", &modern_headers(&valid), &valid_body, CLIENT_HEADERS),
            null,
        ),
        Reason::UnsupportedMediaType => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("Content-Type: text/plain\r\nAccept: */*\r\n{}", auth()),
            ),
            null,
        ),
        Reason::UnsupportedContentEncoding => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Content-Encoding: br\r\n"),
            ),
            null,
        ),
        Reason::NotAcceptable => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!(
                    "Content-Type: application/json\r\nAccept: application/json\r\n{}",
                    auth()
                ),
            ),
            null,
        ),
        Reason::HeadTooLarge => {
            let many: String = (0..100).map(|n| format!("X-Filler-{n}: {n}\r\n")).collect();
            (
                post(
                    "/mcp",
                    &modern_headers(&valid),
                    &valid_body,
                    &format!("{client}{many}"),
                ),
                null,
            )
        }
        Reason::BadHttp => (
            format!("POST /mcp HTTP/1.1\r\nHost: t\r\nContent-Length: abc\r\n{client}\r\n")
                .into_bytes(),
            null,
        ),
        Reason::RepeatedHeader => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Mcp-Name: other\r\n"),
            ),
            null,
        ),
        Reason::MissingHost => (
            format!("POST /mcp HTTP/1.1\r\n{client}Content-Length: 2\r\n\r\n{{}}").into_bytes(),
            null,
        ),
        Reason::NominatedHeader => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Connection: Mcp-Name\r\n"),
            ),
            null,
        ),
        Reason::BodyNotAllowed => (
            b"GET /healthz HTTP/1.1\r\nHost: t\r\nContent-Length: 2\r\n\r\n{}".to_vec(),
            null,
        ),
        Reason::UnderscoredHeader => (
            post(
                "/mcp",
                &modern_headers(&valid),
                &valid_body,
                &format!("{client}Content_Length: 5\r\n"),
            ),
            null,
        ),
        Reason::TokenInQuery => (
            post(
                "/mcp?access_token=t0k3n",
                &modern_headers(&valid),
                &valid_body,
                &client,
            ),
            null,
        ),
        // Allowed, so the request's id is echoed.
        Reason::NoUpstream => (
            post("/mcp", &modern_headers(&valid), &valid_body, &client),
            json!(1),
        ),
        gate_reason => {
            let (headers, body, id) = scenario(gate_reason).expect("a gate scenario");
            (post("/validate", &headers, &body, &client), id)
        }
    }
}

fn series(reason: Reason) -> String {
    let row = row(reason);
    format!(
        "mcpgate_rejections_total{{rejecter=\"{}\",reason=\"{}\",status=\"{}\"}}",
        row.rejecter.as_str(),
        row.name,
        row.status
    )
}

#[test]
fn every_rejection_row_is_reachable_over_http_and_counted_once() {
    let server = start();
    for row in TABLE.iter() {
        if matches!(
            row.reason,
            Reason::UpstreamUnreachable | Reason::UpstreamTimeout | Reason::UpstreamBadAnswer
        ) {
            // They need an upstream that fails: tests/forward.rs.
            continue;
        }
        if row.reason == Reason::CatalogUnknown {
            // It needs an upstream that has not listed its tools yet:
            // tests/catalog_guard.rs.
            continue;
        }
        if matches!(
            row.reason,
            Reason::TokenMissing
                | Reason::TokenInvalid
                | Reason::TokenExpired
                | Reason::WrongAudience
                | Reason::WrongIssuer
                | Reason::InsufficientScope
        ) {
            // They need a gateway verifying OAuth tokens: tests/oauth.rs.
            continue;
        }
        if row.reason == Reason::UnmirroredHeader {
            // A legacy GET is served only with an upstream: tests/spelling.rs.
            continue;
        }
        let before: Vec<u64> = TABLE
            .iter()
            .map(|r| server.metric(&series(r.reason)))
            .collect();
        let (raw, id) = http_scenario(row.reason);
        let answer = server.send(&raw);
        assert_eq!(
            answer.status,
            answered_status(row.reason, &id),
            "{:?}: {}",
            row.reason,
            String::from_utf8_lossy(&answer.body)
        );
        let body = answer.json();
        if row.dialect == Dialect::Tool {
            assert_eq!(body["result"]["isError"], json!(true), "{:?}", row.reason);
        } else {
            assert_eq!(
                body["error"]["code"],
                json!(row.condition.code()),
                "{:?}",
                row.reason
            );
        }
        assert_eq!(body["id"], id, "{:?}", row.reason);
        if row.reason == Reason::Unauthorized {
            assert!(
                answer
                    .header("WWW-Authenticate")
                    .is_some_and(|v| v.starts_with("Bearer"))
            );
        }
        if row.reason == Reason::MethodNotAllowed {
            assert_eq!(answer.header("Allow"), Some("POST"));
        }
        for (other, count_before) in TABLE.iter().zip(before) {
            let expected = count_before + u64::from(other.reason == row.reason);
            assert_eq!(
                server.metric(&series(other.reason)),
                expected,
                "{:?} after {:?}",
                other.reason,
                row.reason
            );
        }
    }
}

#[test]
fn metrics_count_the_catalogs_registered_and_refused_tools() {
    let server = start();
    assert_eq!(
        server.metric("mcpgate_catalog_tools{state=\"registered\"}"),
        5
    );
    assert_eq!(server.metric("mcpgate_catalog_tools{state=\"refused\"}"), 3);
}

#[test]
fn a_catalog_that_cannot_be_read_stops_the_start_naming_the_key() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--catalog",
            "/no/such/tools.json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`catalog`"));
}

#[test]
fn the_verdict_service_answers_204_for_a_valid_message() {
    let server = start();
    let message = tools_call(json!("v"), "echo", json!({"text": "hi"}));
    let raw = post(
        "/validate",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{}", auth()),
    );
    let answer = server.send(&raw);
    assert_eq!(answer.status, 204);
    assert!(answer.body.is_empty());
    assert_eq!(
        server.metric("mcpgate_allowed_total{lane=\"modern\",kind=\"request\"}"),
        1
    );
    let health = server.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!((health.status, health.body.as_slice()), (200, &b"ok\n"[..]));
}

#[test]
fn a_second_gateway_on_a_served_address_exits_1_and_the_first_serves_every_request() {
    let first = start();
    let address = first.address.to_string();
    let catalog = catalog_path();
    let mut second = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"));
    second
        .args(["serve", "--listen", &address, "--workers", "2"])
        .args(["--bearer-tokens", TOKEN, "--catalog"])
        .arg(&catalog)
        .env("MCPGATE_LOG", "warn");
    let ran = process::run_bounded(&mut second, Duration::from_secs(30));
    assert_eq!(ran.status.code(), Some(1), "stderr: {}", ran.stderr);
    assert!(
        ran.stderr
            .contains(&format!("another process is serving {address}")),
        "stderr: {}",
        ran.stderr
    );
    assert!(!ran.stdout.contains("listening on"), "{}", ran.stdout);
    // Every new connection still reaches the first gateway: none went to a
    // listener of the second.
    let message = tools_call(json!("v"), "echo", json!({"text": "hi"}));
    let raw = post(
        "/validate",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}{}", auth()),
    );
    for _ in 0..20 {
        assert_eq!(first.send(&raw).status, 204);
    }
    assert_eq!(
        first.metric("mcpgate_allowed_total{lane=\"modern\",kind=\"request\"}"),
        20
    );
}

#[test]
fn a_gateway_restarted_on_its_port_starts_while_old_connections_linger() {
    let port = process::free_port();
    let address = format!("127.0.0.1:{port}");
    let start_on = || {
        let mut command = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"));
        command
            .args(["serve", "--listen", &address, "--workers", "2"])
            .env("MCPGATE_LOG", "warn")
            .stdout(std::process::Stdio::piped())
            .spawn()
            .expect("mcpgate starts")
    };
    let first_line = |child: &mut std::process::Child| {
        let mut line = String::new();
        std::io::BufRead::read_line(
            &mut std::io::BufReader::new(child.stdout.take().unwrap()),
            &mut line,
        )
        .unwrap();
        line
    };
    let mut old = start_on();
    assert_eq!(first_line(&mut old), format!("listening on {address}\n"));
    // A connection the gateway closes first leaves the port in TIME_WAIT.
    let mut stream = std::net::TcpStream::connect(&address).unwrap();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    assert_eq!(read_answer(&mut stream).status, 200);
    old.kill().unwrap();
    old.wait().unwrap();
    let mut new = start_on();
    let line = first_line(&mut new);
    let _ = new.kill();
    let _ = new.wait();
    assert_eq!(line, format!("listening on {address}\n"));
}

#[test]
fn a_405_names_the_methods_its_path_takes() {
    let server = start();
    for path in ["/healthz", "/metrics"] {
        let answer = server.send(
            format!("POST {path} HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n").as_bytes(),
        );
        assert_eq!(answer.status, 405, "{path}");
        assert_eq!(answer.header("Allow"), Some("GET"), "{path}");
    }
    let answer = server.send(b"PUT /validate HTTP/1.1\r\nHost: t\r\nContent-Length: 0\r\n\r\n");
    assert_eq!(answer.status, 405);
    assert_eq!(answer.header("Allow"), Some("POST"));
}

#[test]
fn the_noop_route_is_a_404_unless_the_bench_flag_asks_for_it() {
    let noop = |server: &Server| server.send(&post("/_noop", &[], b"{}", CLIENT_HEADERS));
    let server = Server::start(&[]);
    let answer = noop(&server);
    assert_eq!(
        answer.status,
        404,
        "{}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(server.metric(&series(Reason::UnknownPath)), 1);
    let server = Server::start(&["--bench-noop-route"]);
    let answer = noop(&server);
    assert_eq!(answer.status, 204);
    assert!(answer.body.is_empty());
    assert_eq!(server.metric(&series(Reason::UnknownPath)), 0);
}

#[test]
fn a_refused_request_goes_with_200_and_with_refusal_status_http_with_400() {
    let mut bad = tools_call(json!(3), "echo", json!({}));
    bad["params"]["name"] = json!(7);
    let unknown = tools_call(json!(4), "no_such_tool", json!({}));
    let client = format!("{CLIENT_HEADERS}{}", auth());
    let send = |server: &Server, message: &serde_json::Value| {
        let body = serde_json::to_vec(message).unwrap();
        server.send(&post("/validate", &modern_headers(message), &body, &client))
    };
    let config = catalog_path();
    let http = Server::start(&[
        "--bearer-tokens",
        TOKEN,
        "--catalog",
        config.to_str().unwrap(),
        "--refusal-status",
        "http",
    ]);
    for (server, status) in [(start(), 200), (http, 400)] {
        for (message, reason, code) in [
            (&bad, Reason::InvalidParams, -32602),
            (&unknown, Reason::UnknownTool, -32602),
        ] {
            let answer = send(&server, message);
            assert_eq!(
                answer.status,
                status,
                "{}",
                String::from_utf8_lossy(&answer.body)
            );
            assert_eq!(answer.json()["id"], message["id"]);
            assert_eq!(answer.json()["error"]["code"], code);
            // Counted under the row's series either way.
            assert_eq!(server.metric(&series(reason)), 1);
        }
        // No id to answer: 400 either way.
        let answer = server.send(&post(
            "/validate",
            &modern_headers(&bad),
            b"{not json",
            &client,
        ));
        assert_eq!(answer.status, 400);
        assert_eq!(answer.json()["id"], serde_json::Value::Null);
    }
}

#[test]
fn pipelined_requests_on_one_connection_are_answered_in_order() {
    let server = start();
    let good = tools_call(json!(1), "echo", json!({}));
    let mut bad = tools_call(json!(2), "echo", json!({}));
    bad["params"]["name"] = json!(7);
    let client = format!("{CLIENT_HEADERS}{}", auth());
    let mut raw = post(
        "/validate",
        &modern_headers(&good),
        &serde_json::to_vec(&good).unwrap(),
        &client,
    );
    raw.extend(post(
        "/validate",
        &modern_headers(&bad),
        &serde_json::to_vec(&bad).unwrap(),
        &client,
    ));
    raw.extend(post(
        "/validate",
        &modern_headers(&good),
        &serde_json::to_vec(&good).unwrap(),
        &client,
    ));
    let mut stream = server.connect();
    stream.write_all(&raw).unwrap();
    assert_eq!(read_answer(&mut stream).status, 204);
    let second = read_answer(&mut stream);
    assert_eq!(second.status, 200);
    assert_eq!(second.json()["id"], 2);
    assert_eq!(read_answer(&mut stream).status, 204);
}

#[test]
fn a_chunked_body_is_checked_like_any_other() {
    let server = start();
    let message = tools_call(json!(1), "echo", json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let (a, b) = body.split_at(body.len() / 2);
    let mut raw = format!(
        "POST /validate HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n{CLIENT_HEADERS}{}",
        auth()
    );
    for (name, value) in modern_headers(&message) {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str("\r\n");
    let mut raw = raw.into_bytes();
    for chunk in [a, b] {
        raw.extend(format!("{:x}\r\n", chunk.len()).into_bytes());
        raw.extend_from_slice(chunk);
        raw.extend_from_slice(b"\r\n");
    }
    raw.extend_from_slice(b"0\r\n\r\n");
    assert_eq!(server.send(&raw).status, 204);
}

#[test]
fn sigterm_answers_the_request_in_flight_and_exits_0() {
    let mut server = start();
    let message = tools_call(json!("late"), "echo", json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let raw = post(
        "/validate",
        &modern_headers(&message),
        &body,
        &format!("{CLIENT_HEADERS}{}", auth()),
    );
    let (first, rest) = raw.split_at(raw.len() - 10);
    let mut stream = server.connect();
    stream.write_all(first).unwrap();
    std::thread::sleep(Duration::from_millis(200));
    server.sigterm();
    std::thread::sleep(Duration::from_millis(200));
    stream.write_all(rest).unwrap();
    let answer = read_answer(&mut stream);
    assert_eq!(answer.status, 204);
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
}

/// A graceful shutdown says when it starts and when it is over, with the
/// connections it closed.
#[test]
fn sigterm_logs_the_shutdown_and_its_end() {
    let mut server = Server::start_logging(&[], "info", std::process::Stdio::piped());
    let mut stream = server.connect();
    stream
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n")
        .unwrap();
    assert_eq!(read_answer(&mut stream).status, 200);
    server.sigterm();
    let status = server.child.wait().unwrap();
    assert_eq!(status.code(), Some(0));
    let mut log = String::new();
    std::io::Read::read_to_string(server.child.stderr.as_mut().unwrap(), &mut log).unwrap();
    let started = log
        .find("shutting down gracefully")
        .unwrap_or_else(|| panic!("no start line in {log}"));
    let ended = log
        .find("shut down: every connection closed")
        .unwrap_or_else(|| panic!("no end line in {log}"));
    assert!(started < ended, "{log}");
    let end = log[ended..].lines().next().unwrap();
    assert!(
        end.contains("connections=1") && end.contains("cut=0"),
        "{end}"
    );
}

/// With `--max-connections 1`, a second client takes the slot of the
/// connection idle longest (closed without an answer), and `/metrics`
/// counts each time a new client found the worker at its limit.
#[test]
fn a_connection_past_max_connections_takes_the_idle_ones_slot_and_is_counted() {
    let server = Server::start(&["--max-connections", "1", "--workers", "1"]);
    let metrics = b"GET /metrics HTTP/1.1\r\nHost: t\r\n\r\n";
    let scrape = |stream: &mut std::net::TcpStream, series: &str| -> u64 {
        stream.write_all(metrics).unwrap();
        let answer = read_answer(stream);
        assert_eq!(answer.status, 200);
        String::from_utf8(answer.body)
            .unwrap()
            .lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or_else(|| panic!("no series {series}"))
    };
    let mut first = server.connect();
    assert_eq!(scrape(&mut first, "mcpgate_open_connections"), 1);
    assert_eq!(
        scrape(&mut first, "mcpgate_connection_limit_reached_total"),
        0
    );

    // `first` waits for its next request: the new client takes its slot.
    let mut second = server.connect();
    assert_eq!(scrape(&mut second, "mcpgate_open_connections"), 1);
    assert_eq!(
        scrape(&mut second, "mcpgate_connection_limit_reached_total"),
        1
    );
    let mut byte = [0u8; 1];
    assert_eq!(
        std::io::Read::read(&mut first, &mut byte).expect("closed, not timed out"),
        0,
        "the idle connection was closed without an answer"
    );
}

/// Stalled and dribbling clients cost a bounded amount: with one worker,
/// other clients are answered while they hang, and they are closed once
/// the read deadline passes.
#[test]
fn stalled_and_dribbling_clients_do_not_hold_up_others() {
    let dir = std::env::temp_dir().join(format!("mcpgate-serve-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let config = dir.join("slow.toml");
    std::fs::write(&config, "read_timeout_ms = 500\nidle_timeout_ms = 2000\n").unwrap();
    let server = Server::start(&["--config", config.to_str().unwrap(), "--workers", "1"]);
    std::fs::remove_dir_all(&dir).unwrap();

    let message = tools_call(json!(1), "echo", json!({}));
    let raw = post(
        "/validate",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    );
    // One client stops mid-head, one mid-body, one sends a byte at a time.
    let mut stalled_head = server.connect();
    stalled_head.write_all(&raw[..20]).unwrap();
    let mut stalled_body = server.connect();
    stalled_body.write_all(&raw[..raw.len() - 5]).unwrap();
    let mut dribbler = server.connect();
    let started = std::time::Instant::now();
    for (n, byte) in raw.iter().enumerate().take(40) {
        if dribbler.write_all(&[*byte]).is_err() {
            break;
        }
        if n % 4 == 0 {
            // Meanwhile a well-behaved client is served.
            assert_eq!(server.send(&raw).status, 204);
        }
        std::thread::sleep(Duration::from_millis(25));
    }
    assert!(started.elapsed() < Duration::from_secs(5));
    // Past the read deadline every slow connection has been closed.
    std::thread::sleep(Duration::from_millis(800));
    for stream in [&mut stalled_head, &mut stalled_body, &mut dribbler] {
        let mut rest = Vec::new();
        let _ = std::io::Read::read_to_end(stream, &mut rest);
        assert!(
            !rest.windows(4).any(|w| w == b" 204"),
            "a slow client was answered: {rest:?}"
        );
    }
    assert_eq!(server.send(&raw).status, 204);
}

/// `serve ARGS` from `cwd`, logging at `level`; the server and its stderr.
fn serve_from(
    cwd: &std::path::Path,
    args: &[&str],
    level: &str,
) -> (Server, std::process::ChildStderr) {
    use std::io::BufRead as _;
    let mut child = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .current_dir(cwd)
        .arg("serve")
        .args(args)
        .env("MCPGATE_LOG", level)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let stderr = child.stderr.take().unwrap();
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let address = line.trim().strip_prefix("listening on ");
    let address = address.unwrap_or_else(|| panic!("unexpected first line {line:?}"));
    let server = Server {
        address: address.parse().unwrap(),
        child,
    };
    (server, stderr)
}

#[test]
fn a_relative_path_in_the_config_file_is_read_from_the_files_directory() {
    let dir = std::env::temp_dir().join(format!("mcpgate-serve-config-{}", std::process::id()));
    let elsewhere = dir.join("elsewhere");
    std::fs::create_dir_all(&elsewhere).unwrap();
    std::fs::copy(catalog_path(), dir.join("tools.json")).unwrap();
    let config = dir.join("gateway.toml");
    std::fs::write(&config, "catalog = \"tools.json\"\n").unwrap();
    let args = ["--listen", "127.0.0.1:0", "--workers", "1", "--config"];
    let (server, _) = serve_from(
        &elsewhere,
        &[&args[..], &[config.to_str().unwrap()]].concat(),
        "warn",
    );
    assert_eq!(
        server.metric("mcpgate_catalog_tools{state=\"registered\"}"),
        5
    );
    drop(server);
    // A flag's relative path is the working directory's: none there.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .current_dir(&elsewhere)
        .args([
            "serve",
            "--listen",
            "127.0.0.1:0",
            "--catalog",
            "tools.json",
        ])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`catalog`"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn listen_takes_a_host_name_and_says_which_address_it_uses() {
    let args = ["--listen", "localhost:0", "--workers", "1"];
    let (server, stderr) = serve_from(&std::env::temp_dir(), &args, "info");
    assert!(server.address.ip().is_loopback(), "{}", server.address);
    let health = server.send(b"GET /healthz HTTP/1.1\r\nHost: t\r\n\r\n");
    assert_eq!(health.status, 200);
    drop(server);
    let mut log = String::new();
    std::io::Read::read_to_string(&mut std::io::BufReader::new(stderr), &mut log).unwrap();
    assert!(log.contains("localhost:0"), "{log}");
    // A name that is no address is refused, naming the key.
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args(["serve", "--listen", "nowhere"])
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&output.stderr).contains("`listen`"));
}

#[test]
fn a_wrong_value_from_a_variable_names_the_variable() {
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("MCPGATE_WORKERS", "many")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("--workers") && stderr.contains("MCPGATE_WORKERS"),
        "{stderr}"
    );
    let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .args(["serve", "--listen", "127.0.0.1:0"])
        .env("MCPGATE_BODY_LIMIT", "0")
        .output()
        .unwrap();
    assert_eq!(output.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        stderr.contains("`body_limit` (from MCPGATE_BODY_LIMIT)"),
        "{stderr}"
    );
}

#[test]
fn a_log_filter_that_is_no_filter_refuses_to_start_naming_the_variable() {
    for bad in ["warnn", "mcpgate=loud", "info,mcpgate::server=verbose"] {
        let output = std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate"))
            .env("MCPGATE_LOG", bad)
            .args(["serve", "--listen", "127.0.0.1:0"])
            .output()
            .unwrap();
        assert_eq!(output.status.code(), Some(2), "{bad}");
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(stderr.contains("MCPGATE_LOG"), "{bad}: {stderr}");
    }
}
