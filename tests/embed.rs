//! The embedding example (`examples/axum_frontend.rs`: an axum endpoint
//! with `mcpgate::Gate` inside) in front of `e2e/upstream.mjs`, driven by
//! the official TypeScript client: tools listed and called through it, a
//! wrong-typed call answered in the tool dialect and a header mismatch
//! refused with -32020 without reaching the upstream, and a repeated
//! `Mcp-Name` refused before the gate could read one copy and the upstream
//! another.
//!
//! The example needs the `http` feature, which a plain `cargo test` does
//! not enable, so the test builds it (`cargo build --example axum_frontend
//! --features http`, a no-op when fresh) into this test's target directory
//! and profile rather than trusting whatever binary is lying there.

#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use peers::*;
use process::{CLIENT_HEADERS, Peer, post, run_bounded};
use serde_json::{Value, json};

/// The example's first build compiles the library again with `http`.
const BUILD_LIMIT: Duration = Duration::from_secs(1200);

/// Builds the example for this test's profile and target directory and
/// returns the executable cargo reports.
fn build_example() -> PathBuf {
    // <target>/<profile>/deps/embed-HASH
    let exe = std::env::current_exe().unwrap();
    let profile_dir = exe.parent().and_then(Path::parent).unwrap();
    let target_dir = profile_dir.parent().unwrap();
    let profile = match profile_dir.file_name().unwrap().to_str().unwrap() {
        "debug" => "dev",
        other => other,
    };
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let ran = run_bounded(
        Command::new(cargo)
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args(["build", "--example", "axum_frontend", "--features", "http"])
            .args(["--profile", profile, "--message-format", "json"])
            .arg("--target-dir")
            .arg(target_dir),
        BUILD_LIMIT,
    );
    assert!(
        ran.status.success(),
        "the example does not build:\n{}",
        ran.stderr
    );
    ran.json_lines()
        .iter()
        .filter(|m| m["reason"] == "compiler-artifact" && m["target"]["name"] == "axum_frontend")
        .find_map(|m| m["executable"].as_str().map(PathBuf::from))
        .expect("cargo names the example's executable")
}

/// The example on an ephemeral port of 127.0.0.1, in front of `upstream`.
fn start_frontend(upstream: &Peer) -> Peer {
    Peer::start(
        "axum_frontend",
        Command::new(build_example()).args(["--listen", "0", "--upstream", &upstream.url("/mcp")]),
        START_LIMIT,
    )
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn the_axum_example_gates_what_the_official_client_sends_before_the_upstream() {
    require_peers();
    let upstream = start_upstream(0);
    let frontend = start_frontend(&upstream);
    let url = frontend.url("/mcp");

    // Listed and called through the example (the `list` also passes the
    // answer watcher, as the example's own start-up `tools/list` did).
    let lines = ts_client(
        &url,
        "modern",
        &[],
        &[
            "list",
            r#"call:add:{"a":2,"b":40}"#,
            r#"call:get_account:{"account_id":"acct-7"}"#,
        ],
    );
    let names = tool_names(only(&lines, "list"));
    assert!(names.contains(&"add"), "{names:?}");
    let calls = op(&lines, "call");
    assert_eq!(calls[0]["result"]["structuredContent"], json!({"sum": 42}));
    // Mcp-Param-Account passes the gate's check and is forwarded.
    assert_eq!(
        calls[1]["result"]["structuredContent"]["account_id"], "acct-7",
        "{:#}",
        calls[1]
    );
    assert_eq!(upstream_calls(&upstream, "add"), 1);

    // A wrong-typed call: the gate's tool dialect, and the upstream never
    // sees it (its own answer would carry no structuredContent).
    let lines = ts_client(&url, "modern", &[], &[r#"call:add:{"a":"two","b":40}"#]);
    let call = only(&lines, "call");
    let result = &call["result"];
    assert_eq!(result["isError"], true, "{call:#}");
    let envelope = &result["structuredContent"];
    assert_eq!(envelope["error_kind"], "mcp_input_validation", "{call:#}");
    assert_eq!(envelope["tool"], "add", "{call:#}");
    assert_eq!(envelope["_envelope_version"], 1, "{call:#}");
    let details = envelope["details"].as_array().unwrap();
    assert!(
        details
            .iter()
            .any(|d| d["path"].as_str().unwrap().ends_with('a')),
        "{call:#}"
    );
    assert!(result["content"][0]["text"].is_string(), "{call:#}");
    assert_eq!(
        upstream_calls(&upstream, "add"),
        1,
        "a refused call reached the upstream"
    );

    // `Mcp-Name` says another tool than the body: -32020, not forwarded.
    let (status, body) = mismatched_name_call(frontend.address);
    assert_eq!(status, 400, "{body:#}");
    assert_eq!(body["error"]["code"], -32020, "{body:#}");
    assert_eq!(body["error"]["data"]["expected"], "add", "{body:#}");
    assert_eq!(
        body["error"]["data"]["received"], "search_orders",
        "{body:#}"
    );

    // `Mcp-Name` twice, the first copy matching the body: the gate reads
    // the map's repeat and refuses, so no upstream can act on the second.
    let (status, body) = repeated_name_call(frontend.address);
    assert_eq!(status, 400, "{body:#}");
    assert_eq!(body["error"]["code"], -32600, "{body:#}");
    assert_eq!(body["error"]["data"]["header"], "Mcp-Name", "{body:#}");
    assert_eq!(body["id"], Value::Null, "{body:#}");

    assert_eq!(upstream_calls(&upstream, "add"), 1);
    assert_eq!(upstream_calls(&upstream, "search_orders"), 0);
}

/// A raw 2026-07-28 `tools/call` of `add` carrying `Mcp-Name: add` and a
/// second `Mcp-Name: search_orders`: (status, body).
fn repeated_name_call(address: std::net::SocketAddr) -> (u16, Value) {
    let message = support::tools_call(json!(8), "add", json!({"a": 1, "b": 2}));
    let raw = post(
        "/mcp",
        &support::modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        &format!("{CLIENT_HEADERS}Mcp-Name: search_orders\r\n"),
    );
    let answer = send_raw(address, &raw);
    (answer.status, answer.json())
}
