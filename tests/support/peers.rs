//! The official MCP peers of `e2e/` (installed by `e2e/setup.sh`) as the
//! end-to-end tests start and drive them: `e2e/upstream.mjs`, the
//! TypeScript client `e2e/client.mjs`, the upstream's call counts, and a
//! raw header-mismatch call. Shared by `tests/e2e.rs` and
//! `tests/embed.rs`, which include it beside `support/process.rs` and
//! `support/mod.rs`:
//!
//! ```ignore
//! #[path = "support/process.rs"]
//! mod process;
//! mod support;
//! #[path = "support/peers.rs"]
//! mod peers;
//! ```
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use serde_json::{Value, json};

use crate::process::{CLIENT_HEADERS, Peer, Ran, post, run_bounded};

pub const START_LIMIT: Duration = Duration::from_secs(20);
pub const CLIENT_LIMIT: Duration = Duration::from_secs(60);

/// `e2e/`, or `MCPGATE_E2E_DIR`: `.ci/run` points it at nothing while it
/// runs the tests a fresh clone runs, to prove that none of them needs the
/// peers.
pub fn e2e_dir() -> PathBuf {
    std::env::var_os("MCPGATE_E2E_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("e2e"))
}

/// Fails the test, saying what to run, unless `e2e/setup.sh` has installed
/// the peers: the tests that need them are ignored unless asked for.
pub fn require_peers() {
    let modules = e2e_dir().join("node_modules");
    assert!(
        modules.join("@modelcontextprotocol/client").is_dir()
            && modules.join("@modelcontextprotocol/server").is_dir(),
        "{} is absent: this test needs the end-to-end peers (bash e2e/setup.sh); \
         a plain `cargo test` leaves it out as ignored",
        modules.display()
    );
}

pub fn node() -> Command {
    let mut command = Command::new("node");
    command.current_dir(e2e_dir());
    command
}

/// `e2e/upstream.mjs` on `port` (0: ephemeral).
pub fn start_upstream(port: u16) -> Peer {
    Peer::start(
        "upstream",
        node().args(["upstream.mjs", "--port", &port.to_string()]),
        START_LIMIT,
    )
}

/// Runs `e2e/client.mjs` against `url` and returns its JSON lines.
pub fn ts_client(url: &str, mode: &str, extra: &[&str], ops: &[&str]) -> Vec<Value> {
    let ran = run_bounded(
        node()
            .args(["client.mjs", "--url", url, "--mode", mode])
            .args(extra)
            .args(ops),
        CLIENT_LIMIT,
    );
    checked(ran, "client.mjs")
}

pub fn checked(ran: Ran, what: &str) -> Vec<Value> {
    succeeded(&ran, what);
    ran.json_lines()
}

/// Fails the test, with what `what` printed, unless it exited 0.
pub fn succeeded(ran: &Ran, what: &str) {
    assert!(
        ran.status.success(),
        "{what} failed ({})\nstdout:\n{}\nstderr:\n{}",
        ran.status,
        ran.stdout,
        ran.stderr
    );
}

/// The lines of one op (`list`, `call`, `progress`, ...).
pub fn op<'a>(lines: &'a [Value], name: &str) -> Vec<&'a Value> {
    lines.iter().filter(|l| l["op"] == name).collect()
}

pub fn only<'a>(lines: &'a [Value], name: &str) -> &'a Value {
    let found = op(lines, name);
    assert_eq!(found.len(), 1, "one `{name}` line expected in {lines:#?}");
    found[0]
}

pub fn tool_names(list: &Value) -> Vec<&str> {
    list["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect()
}

/// The upstream's count of `tools/call` requests that reached it, by tool.
pub fn upstream_calls(upstream: &Peer, tool: &str) -> u64 {
    let mut stream = std::net::TcpStream::connect(upstream.address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    std::io::Write::write_all(
        &mut stream,
        b"GET /calls HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n",
    )
    .unwrap();
    let answer = crate::process::read_answer(&mut stream);
    assert_eq!(answer.status, 200);
    answer.json()["tools"][tool].as_u64().unwrap_or(0)
}

/// A raw 2026-07-28 `tools/call` of `add` whose `Mcp-Name` header says
/// `search_orders`: (status, body).
pub fn mismatched_name_call(address: std::net::SocketAddr) -> (u16, Value) {
    let message = crate::support::tools_call(json!(7), "add", json!({"a": 1, "b": 2}));
    let mut headers = crate::support::modern_headers(&message);
    for (name, value) in &mut headers {
        if name.eq_ignore_ascii_case("Mcp-Name") {
            *value = "search_orders".to_owned();
        }
    }
    let raw = post(
        "/mcp",
        &headers,
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    );
    let answer = send_raw(address, &raw);
    (answer.status, answer.json())
}

pub fn send_raw(address: std::net::SocketAddr, raw: &[u8]) -> crate::process::Answer {
    let mut stream = std::net::TcpStream::connect(address).unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    std::io::Write::write_all(&mut stream, raw).unwrap();
    crate::process::read_answer(&mut stream)
}
