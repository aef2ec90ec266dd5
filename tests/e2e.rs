//! End to end with the official MCP peers of `e2e/` (installed by
//! `e2e/setup.sh`, which `.ci/run` runs first): the TypeScript SDK v2
//! server (`e2e/upstream.mjs`) and `server-everything` as upstreams, the
//! TypeScript client (pinned to 2026-07-28, and legacy) and the Python client,
//! the conformance suite, and HAProxy.
//!
//! The peers are first held to what the tests expect of them directly (so a
//! failure through the gateway is the gateway's), then driven through
//! `mcpgate serve --upstream URL` (with and without `--catalog FILE`).

#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use peers::*;
use process::{CLIENT_HEADERS, Peer, Server, free_port, post, run_bounded};
use serde_json::{Value, json};

/// The conformance suite has timing-sensitive checks (frames collected for
/// a few hundred milliseconds): its tests hold this lock exclusively, the
/// others share it, so on a 2-core machine it never runs beside them.
static SUITE: std::sync::RwLock<()> = std::sync::RwLock::new(());

/// Fails the test when the peers are not installed; otherwise evaluates to
/// a guard of `SUITE` (shared, or `exclusive`).
macro_rules! require_peers {
    () => {{
        require_peers();
        SUITE.read().unwrap_or_else(|e| e.into_inner())
    }};
    (exclusive) => {{
        require_peers();
        SUITE.write().unwrap_or_else(|e| e.into_inner())
    }};
}

/// `server-everything` (2025-11-25, sessions, SSE) on an ephemeral port.
fn start_everything() -> Peer {
    Peer::start(
        "server-everything",
        node().args(["everything.mjs", "--port", "0"]),
        START_LIMIT,
    )
}

/// Runs `e2e/client.py` (Python `mcp`) against `url`.
fn py_client(url: &str, mode: &str, ops: &[&str]) -> Vec<Value> {
    let python = e2e_dir().join(".venv/bin/python");
    assert!(
        python.exists(),
        "{} missing: run e2e/setup.sh",
        python.display()
    );
    let ran = run_bounded(
        Command::new(python)
            .current_dir(e2e_dir())
            .args(["client.py", "--url", url, "--mode", mode])
            .args(ops),
        CLIENT_LIMIT,
    );
    checked(ran, "client.py")
}

/// Asserts that `lines` hold `steps` progress notifications, in order, and
/// then the tool's successful result. With the upstream's ack gate, each
/// step is sent only after the client acknowledged the one before, so a
/// successful result proves the notifications arrived one at a time.
fn assert_incremental_progress(lines: &[Value], steps: u64) {
    let progress = op(lines, "progress");
    let seen: Vec<u64> = progress
        .iter()
        .map(|p| p["progress"].as_u64().unwrap())
        .collect();
    assert_eq!(seen, (1..=steps).collect::<Vec<_>>(), "{lines:#?}");
    let call = only(lines, "call");
    assert_eq!(call["result"]["isError"], Value::Null, "{call:#}");
    assert_eq!(call["result"]["structuredContent"]["counted"], steps);
    let arrived: Vec<f64> = progress.iter().map(|p| p["ms"].as_f64().unwrap()).collect();
    assert!(
        arrived.windows(2).all(|w| w[0] <= w[1]),
        "progress out of order: {arrived:?}"
    );
    assert!(arrived[0] <= call["ms"].as_f64().unwrap());
}

// ---- the peers on their own --------------------------------------------------

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn official_client_pinned_to_2026_07_28_lists_and_calls_the_upstream_tools() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let url = upstream.url("/mcp");
    let lines = ts_client(
        &url,
        "modern",
        &[],
        &[
            "list",
            r#"call:add:{"a":2,"b":40}"#,
            r#"call:search_orders:{"filters":{"region":"EU"},"tags":["gift"],"since":"2026-07-28","limit":3}"#,
            r#"call:get_account:{"account_id":"acct-7"}"#,
        ],
    );
    let names = tool_names(only(&lines, "list"));
    for tool in ["add", "search_orders", "slow_count", "get_account"] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    let calls = op(&lines, "call");
    assert_eq!(calls[0]["result"]["structuredContent"], json!({"sum": 42}));
    assert_eq!(
        calls[1]["result"]["structuredContent"]["region"], "EU",
        "{:#}",
        calls[1]
    );
    // The client mirrors `account_id` into Mcp-Param-Account (x-mcp-header);
    // the SDK server would refuse the call with -32020 without it.
    assert_eq!(
        calls[2]["result"]["structuredContent"]["account_id"], "acct-7",
        "{:#}",
        calls[2]
    );
    assert_eq!(upstream_calls(&upstream, "add"), 1);
    assert_eq!(upstream_calls(&upstream, "get_account"), 1);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn upstream_progress_arrives_one_acknowledged_step_at_a_time() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let lines = ts_client(
        &upstream.url("/mcp"),
        "modern",
        &["--ack-url", &upstream.url("/ack")],
        &[r#"progress:slow_count:{"steps":5,"gate":"direct"}"#],
    );
    assert_incremental_progress(&lines, 5);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn upstream_holds_the_next_progress_step_until_the_last_one_is_acknowledged() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    // No --ack-url: nobody acknowledges step 1, so step 2 is never sent and
    // the tool gives up. This is what makes the ack-gated progress tests
    // fail on a path that holds notifications back until the end.
    let lines = ts_client(
        &upstream.url("/mcp"),
        "modern",
        &[],
        &[r#"progress:slow_count:{"steps":3,"gate":"unacked","ack_timeout_ms":300}"#],
    );
    let seen: Vec<u64> = op(&lines, "progress")
        .iter()
        .map(|p| p["progress"].as_u64().unwrap())
        .collect();
    assert_eq!(seen, [1], "{lines:#?}");
    let result = &only(&lines, "call")["result"];
    assert_eq!(result["isError"], true, "{result:#}");
    assert_eq!(
        result["content"][0]["text"], "no ack for step 1 of gate unacked",
        "{result:#}"
    );
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn upstream_answers_a_wrong_typed_call_itself_and_counts_it() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let lines = ts_client(
        &upstream.url("/mcp"),
        "modern",
        &[],
        &["list", r#"call:add:{"a":"two","b":40}"#],
    );
    let call = only(&lines, "call");
    assert_eq!(call["result"]["isError"], true, "{call:#}");
    // The SDK's own wording, not the gateway's envelope.
    assert_eq!(call["result"]["structuredContent"], Value::Null);
    assert_eq!(upstream_calls(&upstream, "add"), 1);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn upstream_refuses_an_mcp_name_that_differs_from_the_body_with_32020() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let (status, body) = mismatched_name_call(upstream.address);
    assert_eq!(status, 400);
    assert_eq!(body["error"]["code"], -32020, "{body:#}");
    assert_eq!(upstream_calls(&upstream, "add"), 1);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn legacy_client_keeps_a_session_and_streams_progress_with_server_everything() {
    let _peers = require_peers!();
    let everything = start_everything();
    let lines = ts_client(
        &everything.url("/mcp"),
        "legacy",
        &[],
        &[
            "session",
            "list",
            r#"call:echo:{"message":"through sessions"}"#,
            r#"progress:trigger-long-running-operation:{"duration":1,"steps":3}"#,
        ],
    );
    assert!(
        only(&lines, "session")["id"].is_string(),
        "no Mcp-Session-Id: {lines:#?}"
    );
    assert!(tool_names(only(&lines, "list")).contains(&"echo"));
    let calls = op(&lines, "call");
    assert_eq!(
        calls[0]["result"]["content"][0]["text"],
        "Echo: through sessions"
    );
    let progress: Vec<u64> = op(&lines, "progress")
        .iter()
        .map(|p| p["progress"].as_u64().unwrap())
        .collect();
    assert_eq!(progress, [1, 2, 3], "{lines:#?}");
    assert_eq!(calls[1]["result"]["isError"], Value::Null, "{:#}", calls[1]);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn legacy_client_is_served_by_the_upstream_stateless_fallback() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let lines = ts_client(
        &upstream.url("/mcp"),
        "legacy",
        &[],
        &["list", r#"call:add:{"a":1,"b":2}"#],
    );
    assert!(tool_names(only(&lines, "list")).contains(&"add"));
    assert_eq!(
        only(&lines, "call")["result"]["structuredContent"],
        json!({"sum": 3})
    );
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn python_client_lists_and_calls_the_upstream_tools() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let lines = py_client(
        &upstream.url("/mcp"),
        "2026-07-28",
        &["list", r#"call:add:{"a":20,"b":22}"#],
    );
    let list = only(&lines, "list");
    assert_eq!(list["protocol"], "2026-07-28");
    assert!(tool_names(list).contains(&"search_orders"));
    let call = only(&lines, "call");
    assert_eq!(call["result"]["structuredContent"], json!({"sum": 42}));
    assert_eq!(upstream_calls(&upstream, "add"), 1);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn python_client_in_legacy_mode_talks_to_server_everything() {
    let _peers = require_peers!();
    let everything = start_everything();
    let lines = py_client(
        &everything.url("/mcp"),
        "legacy",
        &["list", r#"call:echo:{"message":"from python"}"#],
    );
    let list = only(&lines, "list");
    assert_eq!(list["protocol"], "2025-11-25");
    assert!(tool_names(list).contains(&"echo"));
    assert_eq!(
        only(&lines, "call")["result"]["content"][0]["text"],
        "Echo: from python"
    );
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn conformance_suite_against_the_upstream_fails_only_the_listed_checks() {
    let _peers = require_peers!(exclusive);
    let upstream = start_upstream(0);
    let ran = run_bounded(
        Command::new("bash")
            .current_dir(e2e_dir())
            .arg("conformance.sh")
            .arg(upstream.url("/mcp"))
            .arg("conformance-expected-failures.yml"),
        Duration::from_secs(300),
    );
    println!("{}", ran.stdout);
    assert!(
        ran.status.success(),
        "the upstream's conformance failures are not the listed ones\nstdout:\n{}\nstderr:\n{}",
        ran.stdout,
        ran.stderr
    );
    assert!(
        ran.stdout.contains("conformance-summary "),
        "{}",
        ran.stdout
    );
}

// ---- through the gateway ----------------------------------------------------

/// `mcpgate serve --upstream URL/mcp --catalog FILE`, the catalog being the
/// upstream's `tools/list` result (`{"tools": [...]}`) as the official
/// client sees it.
struct Gateway {
    server: Server,
    _catalog: TempDir,
}

impl Gateway {
    fn start(upstream: &Peer) -> Gateway {
        Gateway::start_with(upstream, &[])
    }

    /// A gateway with the upstream's tools as its catalog, and `extra`
    /// flags.
    fn start_with(upstream: &Peer, extra: &[&str]) -> Gateway {
        let lines = ts_client(&upstream.url("/mcp"), "modern", &[], &["tools"]);
        let tools = only(&lines, "tools")["tools"].clone();
        let catalog = TempDir::new("catalog");
        let file = catalog.0.join("catalog.json");
        std::fs::write(&file, serde_json::to_vec(&json!({"tools": tools})).unwrap()).unwrap();
        let upstream_url = upstream.url("/mcp");
        let mut args = vec![
            "--upstream",
            &upstream_url,
            "--catalog",
            file.to_str().unwrap(),
        ];
        args.extend_from_slice(extra);
        let server = Server::start(&args);
        Gateway {
            server,
            _catalog: catalog,
        }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.server.address)
    }
}

/// `/a/b`, `a.b` and `a/b` all give `["a", "b"]`.
fn path_segments(path: &str) -> Vec<&str> {
    path.split(['/', '.']).filter(|s| !s.is_empty()).collect()
}

/// A temporary folder, removed when dropped.
struct TempDir(PathBuf);

impl TempDir {
    fn new(tag: &str) -> TempDir {
        static NEXT: std::sync::atomic::AtomicU32 = std::sync::atomic::AtomicU32::new(0);
        let n = NEXT.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let dir =
            std::env::temp_dir().join(format!("mcpgate-e2e-{tag}-{}-{n}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn official_client_with_a_bearer_token_lists_its_permitted_tools_and_gets_403_without_a_tools_scope()
 {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let signer = tokens::ec_signer("e2e");
    let jwks = tokens::write_file(&tokens::jwks(&[&signer]));
    let gateway = Gateway::start_with(
        &upstream,
        &[
            "--oauth-issuer",
            tokens::ISSUER,
            "--oauth-resource",
            tokens::RESOURCE,
            "--oauth-jwks-file",
            jwks.to_str().unwrap(),
            "--oauth-tool-scopes",
            "get_account=accounts:read",
        ],
    );
    let url = gateway.url();
    let token = signer.sign(&tokens::claims(json!({"scope": "mcp"})));
    let lines = ts_client(
        &url,
        "modern",
        &["--bearer", &token],
        &[
            "list",
            r#"call:add:{"a":2,"b":40}"#,
            r#"call:get_account:{"account_id":"acct-7"}"#,
        ],
    );
    // The listing holds only the tools the token's scopes allow.
    let names = tool_names(only(&lines, "list"));
    assert!(
        names.contains(&"add") && !names.contains(&"get_account"),
        "{names:?}"
    );
    let calls = op(&lines, "call");
    assert_eq!(calls[0]["result"]["structuredContent"], json!({"sum": 42}));
    // The client reads the 403's challenge: the scope it needs.
    let refused = &calls[1]["error"];
    assert_eq!(refused["type"], "InsufficientScopeError", "{:#}", calls[1]);
    assert!(
        refused["message"]
            .as_str()
            .is_some_and(|m| m.contains("accounts:read")),
        "{:#}",
        calls[1]
    );
    assert_eq!(upstream_calls(&upstream, "add"), 1);
    assert_eq!(upstream_calls(&upstream, "get_account"), 0);
    // Without a token nothing reaches the upstream.
    let ran = run_bounded(
        node().args(["client.mjs", "--url", &url, "--mode", "modern", "list"]),
        CLIENT_LIMIT,
    );
    assert!(
        !ran.status.success() && ran.stdout.contains("401"),
        "{}\n{}",
        ran.stdout,
        ran.stderr
    );
    assert_eq!(upstream_calls(&upstream, "add"), 1);
}

/// A valid raw 2026-07-28 `tools/call` of `add` (JSON answer expected).
fn valid_add_call() -> Vec<u8> {
    let message = support::tools_call(json!(9), "add", json!({"a": 1, "b": 2}));
    post(
        "/mcp",
        &support::modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}Connection: close\r\n"),
    )
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn official_clients_list_and_call_tools_through_the_gateway() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let gateway = Gateway::start(&upstream);
    let url = gateway.url();

    let modern = ts_client(
        &url,
        "modern",
        &[],
        &[
            "list",
            r#"call:add:{"a":2,"b":40}"#,
            r#"call:get_account:{"account_id":"acct-7"}"#,
        ],
    );
    assert!(tool_names(only(&modern, "list")).contains(&"slow_count"));
    let calls = op(&modern, "call");
    assert_eq!(calls[0]["result"]["structuredContent"], json!({"sum": 42}));
    // Mcp-Param-Account passes the gateway's check and is forwarded.
    assert_eq!(
        calls[1]["result"]["structuredContent"]["account_id"], "acct-7",
        "{:#}",
        calls[1]
    );

    let legacy = ts_client(&url, "legacy", &[], &[r#"call:add:{"a":1,"b":2}"#]);
    assert_eq!(
        only(&legacy, "call")["result"]["structuredContent"],
        json!({"sum": 3})
    );

    let python = py_client(&url, "2026-07-28", &["list", r#"call:add:{"a":20,"b":22}"#]);
    assert_eq!(
        only(&python, "call")["result"]["structuredContent"],
        json!({"sum": 42})
    );
    assert_eq!(upstream_calls(&upstream, "add"), 3);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn a_miscased_key_and_a_scalar_for_an_array_reach_the_upstream_in_canonical_form() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    // Directly, the upstream refuses what the model sent.
    let direct = ts_client(
        &upstream.url("/mcp"),
        "modern",
        &[],
        &[r#"call:list_orders:{"MarketplaceIds":"A"}"#],
    );
    let direct = only(&direct, "call");
    assert!(
        direct.get("error").is_some() || direct["result"]["isError"] == true,
        "{direct:#}"
    );
    let gateway = Gateway::start(&upstream);
    let lines = ts_client(
        &gateway.url(),
        "modern",
        &[],
        &[r#"call:list_orders:{"MarketplaceIds":"A","status":"Shipped"}"#],
    );
    let call = only(&lines, "call");
    assert_eq!(
        call["result"]["structuredContent"]["received"],
        json!({"marketplaceIds": ["A"], "status": "Shipped"}),
        "{call:#}"
    );
    // The direct call and the one through the gateway.
    assert_eq!(upstream_calls(&upstream, "list_orders"), 2);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn progress_streams_through_the_gateway_one_step_at_a_time() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let gateway = Gateway::start(&upstream);
    // The acks go to the upstream directly: the upstream sends step N+1 only
    // once the client has seen step N through the gateway, so a gateway that
    // held the stream back would leave the call waiting for an ack and the
    // tool would answer isError instead of counting to the end.
    let lines = ts_client(
        &gateway.url(),
        "modern",
        &["--ack-url", &upstream.url("/ack")],
        &[r#"progress:slow_count:{"steps":5,"gate":"through"}"#],
    );
    assert_incremental_progress(&lines, 5);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn wrong_typed_call_gets_the_gateway_tool_dialect_answer_and_never_reaches_the_upstream() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let gateway = Gateway::start(&upstream);
    let before = upstream_calls(&upstream, "add") + upstream_calls(&upstream, "search_orders");
    let lines = ts_client(
        &gateway.url(),
        "modern",
        &[],
        &[
            r#"call:add:{"a":"two","b":40}"#,
            r#"call:search_orders:{"filters":{"region":"XX"},"tags":["a","b","c","d","e","f"],"since":"yesterday","limit":0}"#,
        ],
    );
    for call in op(&lines, "call") {
        let result = &call["result"];
        assert_eq!(result["isError"], true, "{call:#}");
        let envelope = &result["structuredContent"];
        assert_eq!(envelope["error_kind"], "mcp_input_validation", "{call:#}");
        assert_eq!(envelope["tool"], call["name"], "{call:#}");
        assert_eq!(envelope["_envelope_version"], 1, "{call:#}");
        assert!(
            !envelope["details"].as_array().unwrap().is_empty(),
            "{call:#}"
        );
        assert!(result["content"][0]["text"].is_string(), "{call:#}");
    }
    // Every offending value is listed in the one answer, whatever the path
    // notation (`/filters/region` or `filters.region`).
    let search = &op(&lines, "call")[1]["result"]["structuredContent"];
    let paths: Vec<Vec<&str>> = search["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| path_segments(d["path"].as_str().unwrap()))
        .collect();
    for wanted in [
        &["filters", "region"][..],
        &["tags"],
        &["since"],
        &["limit"],
    ] {
        assert!(
            paths.iter().any(|p| p.ends_with(wanted)),
            "{wanted:?} missing from {paths:?}"
        );
    }
    let after = upstream_calls(&upstream, "add") + upstream_calls(&upstream, "search_orders");
    assert_eq!(after, before, "a refused call reached the upstream");
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn header_mismatch_is_refused_with_32020_before_the_upstream() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let gateway = Gateway::start(&upstream);
    let (status, body) = mismatched_name_call(gateway.server.address);
    assert_eq!(status, 400, "{body:#}");
    assert_eq!(body["error"]["code"], -32020, "{body:#}");
    assert!(
        body["error"]["data"]["header"]
            .as_str()
            .is_some_and(|h| h.eq_ignore_ascii_case("Mcp-Name")),
        "{body:#}"
    );
    assert_eq!(body["error"]["data"]["expected"], "add", "{body:#}");
    assert_eq!(
        body["error"]["data"]["received"], "search_orders",
        "{body:#}"
    );
    assert_eq!(upstream_calls(&upstream, "add"), 0);
    assert_eq!(upstream_calls(&upstream, "search_orders"), 0);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn killed_upstream_gets_502_and_the_gateway_serves_again_once_it_is_back() {
    let _peers = require_peers!();
    let port = free_port();
    let mut upstream = start_upstream(port);
    let gateway = Gateway::start(&upstream);
    let answer = send_raw(gateway.server.address, &valid_add_call());
    assert_eq!(
        answer.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&answer.body)
    );

    upstream.kill();
    let answer = send_raw(gateway.server.address, &valid_add_call());
    assert_eq!(answer.status, 502);
    let body = answer.json();
    assert_eq!(body["error"]["code"], -32603, "{body:#}");
    assert_eq!(body["id"], 9, "{body:#}");

    let upstream = start_upstream(port);
    let answer = send_raw(gateway.server.address, &valid_add_call());
    assert_eq!(
        answer.status,
        200,
        "{:?}",
        String::from_utf8_lossy(&answer.body)
    );
    assert_eq!(
        answer.json()["result"]["structuredContent"],
        json!({"sum": 3})
    );
    let lines = ts_client(
        &gateway.url(),
        "modern",
        &[],
        &[r#"call:add:{"a":5,"b":6}"#],
    );
    assert_eq!(
        only(&lines, "call")["result"]["structuredContent"],
        json!({"sum": 11})
    );
    assert_eq!(upstream_calls(&upstream, "add"), 2);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn legacy_sessions_and_sse_from_server_everything_pass_through_the_gateway() {
    let _peers = require_peers!();
    let everything = start_everything();
    let gateway = Server::start(&["--upstream", &everything.url("/mcp")]);
    let lines = ts_client(
        &format!("http://{}/mcp", gateway.address),
        "legacy",
        &[],
        &[
            "session",
            r#"call:echo:{"message":"via gateway"}"#,
            r#"progress:trigger-long-running-operation:{"duration":1,"steps":3}"#,
        ],
    );
    assert!(only(&lines, "session")["id"].is_string(), "{lines:#?}");
    assert_eq!(
        op(&lines, "call")[0]["result"]["content"][0]["text"],
        "Echo: via gateway"
    );
    assert_eq!(op(&lines, "progress").len(), 3, "{lines:#?}");
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn conformance_through_the_gateway_loses_no_check_and_passes_header_validation() {
    let _peers = require_peers!(exclusive);
    let upstream = start_upstream(0);
    let gateway = Gateway::start(&upstream);
    let ran = run_bounded(
        Command::new("bash").current_dir(e2e_dir()).args([
            "conformance.sh",
            "compare",
            &upstream.url("/mcp"),
            &gateway.url(),
            "--require-pass",
            "http-header-validation",
            "--require-pass",
            "http-custom-header-server-validation",
        ]),
        Duration::from_secs(600),
    );
    println!("{}", ran.stdout);
    assert!(
        ran.status.success(),
        "stdout:\n{}\nstderr:\n{}",
        ran.stdout,
        ran.stderr
    );
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn two_gateways_behind_haproxy_answer_200_calls_and_share_them() {
    let _peers = require_peers!();
    let upstream = start_upstream(0);
    let first = Gateway::start(&upstream);
    let second = Gateway::start(&upstream);
    let config = TempDir::new("haproxy");
    let port = free_port();
    let cfg = config.0.join("haproxy.cfg");
    std::fs::write(
        &cfg,
        format!(
            "global\n    maxconn 256\n\
             defaults\n    mode http\n    timeout connect 2s\n    timeout client 30s\n    timeout server 30s\n\
             frontend mcp\n    bind 127.0.0.1:{port}\n    default_backend gateways\n\
             backend gateways\n    balance roundrobin\n\
             \x20   server first {}\n    server second {}\n",
            first.server.address, second.server.address
        ),
    )
    .unwrap();
    let haproxy = HaProxy::start(&cfg, port);

    let before = [first.requests(), second.requests()];
    let lines = ts_client(&haproxy.url(), "modern", &[], &["add-many:200"]);
    let summary = only(&lines, "add-many");
    assert_eq!(summary["correct"], 200, "{summary:#}");
    assert_eq!(summary["failed"], 0, "{summary:#}");
    let served = [first.requests() - before[0], second.requests() - before[1]];
    assert!(
        served[0] >= 50 && served[1] >= 50,
        "round robin should spread 200 calls over both instances: {served:?}"
    );
    assert!(served[0] + served[1] >= 200, "{served:?}");
    assert_eq!(upstream_calls(&upstream, "add"), 200);
}

impl Gateway {
    fn requests(&self) -> u64 {
        self.server.metric("mcpgate_requests_total")
    }
}

/// `haproxy -f CFG -db` (foreground), killed when dropped.
struct HaProxy {
    child: std::process::Child,
    port: u16,
}

impl HaProxy {
    fn start(cfg: &Path, port: u16) -> HaProxy {
        let child = Command::new("haproxy")
            .arg("-f")
            .arg(cfg)
            .arg("-db")
            .spawn()
            .expect("haproxy installed (e2e/setup.sh installs it)");
        let haproxy = HaProxy { child, port };
        // Ready once it accepts connections: at most 100 tries, 50 ms apart.
        let ready = (0..100).any(|_| {
            if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(50));
            false
        });
        assert!(ready, "haproxy did not listen on 127.0.0.1:{port}");
        haproxy
    }

    fn url(&self) -> String {
        format!("http://127.0.0.1:{}/mcp", self.port)
    }
}

impl Drop for HaProxy {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
