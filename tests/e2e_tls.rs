//! End to end over TLS with the official MCP peers of `e2e/` (installed by
//! `e2e/setup.sh`): the TypeScript SDK v2 server (`e2e/upstream.mjs`)
//! served over HTTPS with a certificate made per run, the gateway in front
//! of it with `upstream_ca_file`, and the official TypeScript client
//! (`e2e/client.mjs`) listing and calling its tools through the gateway,
//! in the clear and over the gateway's own TLS.

#[path = "support/certs.rs"]
mod certs;
#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;

use peers::*;
use process::{Peer, Server, run_bounded};
use serde_json::{Value, json};

/// `e2e/upstream.mjs` over HTTPS with `leaf`.
fn start_tls_upstream(dir: &std::path::Path, leaf: &certs::Leaf) -> Peer {
    let cert = certs::write(dir, "upstream.crt", &leaf.cert);
    let key = certs::write(dir, "upstream.key", &leaf.key);
    Peer::start(
        "upstream over https",
        node().args([
            "upstream.mjs",
            "--port",
            "0",
            "--tls-cert",
            &cert,
            "--tls-key",
            &key,
        ]),
        START_LIMIT,
    )
}

/// `client.mjs` against `url`, trusting `ca_file` besides Node's roots.
fn ts_client_trusting(ca_file: &str, url: &str, ops: &[&str]) -> Vec<Value> {
    let ran = run_bounded(
        node()
            .env("NODE_EXTRA_CA_CERTS", ca_file)
            .args(["client.mjs", "--url", url, "--mode", "modern"])
            .args(ops),
        CLIENT_LIMIT,
    );
    checked(ran, "client.mjs")
}

fn assert_listed_and_called(lines: &[Value]) {
    let names = tool_names(only(lines, "list"));
    for tool in ["add", "search_orders", "get_account"] {
        assert!(names.contains(&tool), "{tool} missing from {names:?}");
    }
    let calls = op(lines, "call");
    assert_eq!(
        calls[0]["result"]["structuredContent"],
        json!({"sum": 42}),
        "{lines:#?}"
    );
    assert_eq!(
        calls[1]["result"]["structuredContent"]["account_id"], "acct-7",
        "{lines:#?}"
    );
}

const OPS: [&str; 3] = [
    "list",
    r#"call:add:{"a":2,"b":40}"#,
    r#"call:get_account:{"account_id":"acct-7"}"#,
];

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn the_official_client_lists_and_calls_tools_through_the_gateway_to_an_https_upstream() {
    require_peers();
    let ca = certs::Ca::new("e2e test CA");
    let dir = certs::temp_dir("e2e-tls");
    let ca_file = certs::write(&dir, "ca.pem", &ca.pem());
    let upstream = start_tls_upstream(&dir, &ca.leaf(&["127.0.0.1"]));
    let upstream_url = format!("https://{}/mcp", upstream.address);

    // The upstream's certificate checked on its own first: the client
    // trusting the CA reaches it directly.
    let direct = ts_client_trusting(&ca_file, &upstream_url, &OPS);
    assert_listed_and_called(&direct);

    // Through the gateway, the catalog learned over TLS too.
    let gateway = Server::start(&["--upstream", &upstream_url, "--upstream-ca-file", &ca_file]);
    let url = format!("http://{}/mcp", gateway.address);
    assert_listed_and_called(&ts_client_trusting(&ca_file, &url, &OPS));

    // And with the gateway serving TLS itself.
    let leaf = ca.leaf(&["127.0.0.1"]);
    let cert = certs::write(&dir, "gateway.crt", &leaf.cert);
    let key = certs::write(&dir, "gateway.key", &leaf.key);
    let gateway = Server::start(&[
        "--upstream",
        &upstream_url,
        "--upstream-ca-file",
        &ca_file,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ]);
    let url = format!("https://{}/mcp", gateway.address);
    assert_listed_and_called(&ts_client_trusting(&ca_file, &url, &OPS));
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn an_https_upstream_the_gateway_cannot_verify_is_an_error_for_the_official_client() {
    require_peers();
    let ca = certs::Ca::new("e2e test CA");
    let dir = certs::temp_dir("e2e-tls");
    let upstream = start_tls_upstream(&dir, &ca.leaf(&["127.0.0.1"]));
    let other = certs::write(&dir, "other.pem", &certs::Ca::new("another CA").pem());
    let upstream_url = format!("https://{}/mcp", upstream.address);
    let gateway = Server::start(&[
        "--upstream",
        &upstream_url,
        "--upstream-ca-file",
        &other,
        "--learn-catalog",
        "false",
    ]);
    let url = format!("http://{}/mcp", gateway.address);
    let ran = run_bounded(
        node()
            .args(["client.mjs", "--url", &url, "--mode", "modern"])
            .arg(r#"call:add:{"a":2,"b":40}"#),
        CLIENT_LIMIT,
    );
    // The client's first request is refused (where it fails depends on
    // the client: the version probe, or the call), with the gateway's
    // JSON-RPC error naming the certificate.
    let lines = ran.json_lines();
    let failed = lines.iter().find(|l| !l["error"].is_null());
    let failed = failed.unwrap_or_else(|| panic!("no error in {lines:#?}"));
    let text = failed["error"].to_string();
    assert!(text.contains("-32603"), "{failed:#}");
    assert!(
        text.contains("certificate failed verification"),
        "{failed:#}"
    );
}
