//! The same mistakes read the same to the official clients with and
//! without the gateway: the TypeScript client (pinned to 2026-07-28, and
//! legacy) and the Python client (2026-07-28, and legacy) call a tool no
//! one has, send an integer `name`, a wrong-typed argument and a call
//! missing a required argument, first to `e2e/upstream.mjs` (the official
//! TypeScript SDK server) directly and then through `mcpgate serve
//! --upstream`; each raises the same error class with the same code, or
//! returns an `isError` result, both ways (`e2e/same-error.mjs`,
//! `e2e/same_error.py`: one `{case, class, code}` line per case).
//!
//! The gateway's refusals of the first two go with HTTP 200, as the
//! server's own do; with `refusal_status = "http"` (400) the legacy
//! TypeScript client raises an HTTP error instead, which is what the
//! default spares applications.

#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;

use std::process::Command;

use peers::*;
use process::{Server, run_bounded};
use serde_json::{Value, json};

/// The cases each script runs, in order.
const CASES: [&str; 4] = [
    "unknown_tool",
    "integer_name",
    "wrong_type",
    "missing_argument",
];

/// A client and the mode it connects in.
#[derive(Clone, Copy, Debug)]
enum Client {
    TypeScript(&'static str),
    Python(&'static str),
}

const CLIENTS: [Client; 4] = [
    Client::TypeScript("modern"),
    Client::TypeScript("legacy"),
    Client::Python("2026-07-28"),
    Client::Python("legacy"),
];

impl Client {
    /// What the client raised per case: `(case, class, code)`, in the
    /// order of [`CASES`].
    fn run(self, url: &str) -> Vec<(String, Value, Value)> {
        let ran = match self {
            Client::TypeScript(mode) => run_bounded(
                node().args(["same-error.mjs", "--url", url, "--mode", mode]),
                CLIENT_LIMIT,
            ),
            Client::Python(mode) => {
                let python = e2e_dir().join(".venv/bin/python");
                assert!(
                    python.exists(),
                    "{} missing: run e2e/setup.sh",
                    python.display()
                );
                run_bounded(
                    Command::new(python).current_dir(e2e_dir()).args([
                        "same_error.py",
                        "--url",
                        url,
                        "--mode",
                        mode,
                    ]),
                    CLIENT_LIMIT,
                )
            }
        };
        let lines = checked(ran, &format!("{self:?}"));
        let seen: Vec<(String, Value, Value)> = lines
            .iter()
            .map(|l| {
                let case = l["case"].as_str().expect("a case").to_owned();
                (case, l["class"].clone(), l["code"].clone())
            })
            .collect();
        let cases: Vec<&str> = seen.iter().map(|(case, _, _)| case.as_str()).collect();
        assert_eq!(cases, CASES, "{self:?}: {lines:#?}");
        seen
    }

    /// The class each client raises for a JSON-RPC error it reads as one.
    fn protocol_error(self) -> &'static str {
        match self {
            Client::TypeScript(_) => "ProtocolError",
            Client::Python(_) => "MCPError",
        }
    }
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn official_clients_raise_the_same_error_with_and_without_the_gateway() {
    require_peers();
    let upstream = start_upstream(0);
    let direct = upstream.url("/mcp");
    // The catalog is learned from the upstream before the gateway listens.
    let gateway = Server::start(&["--upstream", &direct]);
    let through = format!("http://{}/mcp", gateway.address);
    let direct_answers: Vec<_> = CLIENTS.iter().map(|c| c.run(&direct)).collect();
    let reached = |tool| upstream_calls(&upstream, tool);
    let before = (reached("no_such_tool"), reached("add"));
    for (client, without) in CLIENTS.into_iter().zip(direct_answers) {
        let with = client.run(&through);
        assert_eq!(
            with, without,
            "{client:?}: through the gateway, then directly"
        );
        // What both are: the protocol error -32602 for a wrong tool or
        // name, the tool dialect for wrong arguments (the server's own
        // text, and the gateway's envelope, inside).
        let protocol = json!(client.protocol_error());
        let expected = [
            (protocol.clone(), json!(-32602)),
            (protocol, json!(-32602)),
            (json!("isError"), Value::Null),
            (json!("isError"), Value::Null),
        ];
        for ((case, class, code), (want_class, want_code)) in with.iter().zip(expected) {
            assert_eq!(
                (class, code),
                (&want_class, &want_code),
                "{client:?}: {case}"
            );
        }
    }
    // Through the gateway, none of these reached the upstream: the gateway
    // answered them itself.
    assert_eq!((reached("no_such_tool"), reached("add")), before);
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn with_refusal_status_http_the_legacy_typescript_client_raises_an_http_error() {
    require_peers();
    let upstream = start_upstream(0);
    let gateway = Server::start(&[
        "--upstream",
        &upstream.url("/mcp"),
        "--refusal-status",
        "http",
    ]);
    let through = format!("http://{}/mcp", gateway.address);
    let seen = Client::TypeScript("legacy").run(&through);
    for (case, class, code) in &seen[..2] {
        assert_eq!(class, "SdkHttpError", "{case}: {code}");
    }
    // The tool dialect is a result: 200 either way.
    for (case, class, _) in &seen[2..] {
        assert_eq!(class, "isError", "{case}");
    }
    // The Python client reads a 400's JSON-RPC error as the protocol error.
    let python = Client::Python("legacy").run(&through);
    assert_eq!(python[0].1, "MCPError");
}
