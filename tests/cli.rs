//! `mcpgate check` as a user runs it: NDJSON on stdin or files, one
//! verdict per input, exit 0 / 1 / 2.

use std::io::Write;
use std::process::{Command, Stdio};

use serde_json::{Value, json};

fn run(args: &[&str], stdin: &str) -> (i32, String, String) {
    run_with(args, stdin, &[])
}

/// Normalization's switches, which the tests set themselves.
const SWITCHES: [&str; 6] = [
    "MCP_SCHEMA_KEY_NORMALIZATION_ENABLED",
    "MCP_SCHEMA_KEY_NORMALIZATION_META",
    "MCP_STRICT_UNKNOWN_FIELDS",
    "MCPGATE_NORMALIZATION",
    "MCPGATE_NORMALIZATION_META",
    "MCPGATE_STRICT_UNKNOWN_FIELDS",
];

fn run_with(args: &[&str], stdin: &str, env: &[(&str, &str)]) -> (i32, String, String) {
    let mut command = Command::new(env!("CARGO_BIN_EXE_mcpgate"));
    for name in SWITCHES {
        command.env_remove(name);
    }
    let mut child = command
        .envs(env.iter().copied())
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(stdin.as_bytes())
        .unwrap();
    let output = child.wait_with_output().unwrap();
    (
        output.status.code().unwrap(),
        String::from_utf8(output.stdout).unwrap(),
        String::from_utf8(output.stderr).unwrap(),
    )
}

const VALID_2026: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"echo","arguments":{"text":"hi"}}}"#;
const WRONG_2026: &str = r#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":5}}"#;

#[test]
fn ndjson_prints_one_verdict_per_line_and_exits_1_when_any_is_refused() {
    let input = format!("{VALID_2026}\n{WRONG_2026}\n{{not json\n");
    let (code, stdout, stderr) = run(
        &[
            "check",
            "--revision",
            "2026-07-28",
            "--format",
            "ndjson",
            "-",
        ],
        &input,
    );
    assert_eq!(code, 1, "{stderr}");
    let lines: Vec<Value> = stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 3);
    assert_eq!(
        lines[0],
        json!({"verdict":"allow","status":204,"rejecter":null,"reason":null,"body":null,"normalized":[]})
    );
    assert_eq!(lines[1]["verdict"], "reject");
    // A request's refusal goes with 200, as an MCP server answers it.
    assert_eq!(lines[1]["status"], 200);
    assert_eq!(lines[1]["rejecter"], "schema");
    assert_eq!(lines[1]["reason"], "invalid_params");
    assert_eq!(lines[1]["body"]["id"], 2);
    assert_eq!(
        lines[1]["body"]["error"]["data"]["errors"][0]["path"],
        "/params/name"
    );
    assert_eq!(lines[2]["reason"], "malformed_json");
    assert_eq!(lines[2]["body"]["id"], Value::Null);
    // No id to answer: 400.
    assert_eq!(lines[2]["status"], 400);
}

#[test]
fn with_refusal_status_http_a_refused_request_keeps_400() {
    let input = format!("{WRONG_2026}\n");
    let (code, stdout, stderr) = run(
        &[
            "check",
            "--revision",
            "2026-07-28",
            "--refusal-status",
            "http",
            "--format",
            "ndjson",
            "-",
        ],
        &input,
    );
    assert_eq!(code, 1, "{stderr}");
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["reason"], "invalid_params");
    assert_eq!(line["body"]["id"], 2);
    assert_eq!(line["status"], 400);
    let (code, _, stderr) = run(&["check", "--refusal-status", "400", "-"], &input);
    assert_eq!(code, 2);
    assert!(stderr.contains("--refusal-status"), "{stderr}");
}

#[test]
fn all_allowed_exits_0_with_a_readable_report() {
    let (code, stdout, _) = run(
        &["check", "--revision", "2026-07-28"],
        &format!("{VALID_2026}\n"),
    );
    assert_eq!(code, 0);
    assert!(stdout.contains("allow"), "{stdout}");
    assert!(stdout.contains("tools/call"), "{stdout}");
}

#[test]
fn a_refusal_report_names_the_location_and_problem() {
    let (code, stdout, _) = run(
        &["check", "--revision", "2026-07-28"],
        &format!("{WRONG_2026}\n"),
    );
    assert_eq!(code, 1);
    assert!(stdout.contains("reject"), "{stdout}");
    assert!(stdout.contains("/params/name"), "{stdout}");
}

#[test]
fn files_are_one_message_each_and_headers_can_be_given() {
    let dir = std::env::temp_dir().join(format!("mcpgate-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("call.json");
    std::fs::write(&file, VALID_2026).unwrap();
    let path = file.to_str().unwrap();
    let (code, stdout, _) = run(
        &[
            "check",
            "--revision",
            "2026-07-28",
            "--header",
            "Mcp-Name: other",
            "--format",
            "ndjson",
            path,
        ],
        "",
    );
    std::fs::remove_dir_all(&dir).unwrap();
    assert_eq!(code, 1);
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["reason"], "header_mismatch");
    assert_eq!(line["body"]["error"]["data"]["received"], "other");
}

#[test]
fn usage_errors_exit_2() {
    assert_eq!(run(&["check", "--revision", "1999-01-01"], "").0, 2);
    assert_eq!(run(&["check", "--header", "no-colon"], "").0, 2);
    assert_eq!(run(&["check", "/no/such/file.json"], "").0, 2);
    assert_eq!(run(&["check", "--format", "xml"], "").0, 2);
}

#[test]
fn without_a_revision_the_message_is_checked_on_the_legacy_default() {
    let ping = r#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let (code, stdout, _) = run(&["check", "--format", "ndjson"], &format!("{ping}\n"));
    assert_eq!(code, 0, "{stdout}");
}

fn catalog_arg() -> String {
    concat!(env!("CARGO_MANIFEST_DIR"), "/tests/catalog/tools.json").to_owned()
}

fn search_orders(id: u32, arguments: Value) -> String {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": "search_orders", "arguments": arguments}})
    .to_string()
}

#[test]
fn with_a_catalog_wrong_arguments_get_the_tool_dialect_answer() {
    let catalog = catalog_arg();
    let stdin = format!(
        "{}\n{}\n",
        search_orders(1, json!({"marketplaceIds": ["A"], "region": "EU"})),
        search_orders(
            2,
            json!({"marketplaceIds": ["A"], "region": "EU", "pageSise": 5})
        )
    );
    let (code, out, err) = run(
        &[
            "check",
            "--revision",
            "2026-07-28",
            "--catalog",
            &catalog,
            "--format",
            "ndjson",
        ],
        &stdin,
    );
    assert_eq!(code, 1, "{out}{err}");
    let lines: Vec<Value> = out
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    // The first is allowed: its Mcp-Param-Region header is filled from the
    // catalog's annotation, as a client sends it.
    assert_eq!(lines[0]["verdict"], "allow");
    assert_eq!(lines[1]["verdict"], "reject");
    assert_eq!(lines[1]["status"], 200);
    assert_eq!(lines[1]["reason"], "invalid_arguments");
    let envelope = &lines[1]["body"]["result"]["structuredContent"];
    assert_eq!(envelope["error_code"], "SCHEMA_ADDITIONAL_PROPERTIES");
    assert_eq!(
        envelope["hints"][0],
        "Unknown key 'pageSise': did you mean 'pageSize'?"
    );
    // The broken tools of the catalog are named on standard error.
    assert_eq!(err.matches("refused at registration").count(), 3, "{err}");

    let (code, out, _) = run(
        &["check", "--revision", "2026-07-28", "--catalog", &catalog],
        &search_orders(3, json!({"region": "EU"})),
    );
    assert_eq!(code, 1);
    assert!(
        out.contains("reject — 200 value/invalid_arguments: Invalid arguments for tool 'search_orders': missing required property 'marketplaceIds' at marketplaceIds"),
        "{out}"
    );
    assert!(
        out.contains("Hint: Include marketplaceIds in the request body."),
        "{out}"
    );
}

#[test]
fn a_catalog_that_is_not_one_is_a_usage_error() {
    assert_eq!(
        run(&["check", "--catalog", "/no/such/catalog.json"], "").0,
        2
    );
    assert_eq!(run(&["check", "--unknown-tools", "drop"], "").0, 2);
}

#[test]
fn a_miscased_scalar_for_an_array_is_normalized_and_shown_unless_normalization_is_off() {
    let catalog = std::env::temp_dir().join(format!("mcpgate-cli-{}.json", std::process::id()));
    std::fs::write(
        &catalog,
        json!([{"name": "list_orders", "inputSchema": {"type": "object",
            "properties": {"marketplaceIds": {"type": "array", "items": {"type": "string"}}},
            "required": ["marketplaceIds"]}}])
        .to_string(),
    )
    .unwrap();
    let catalog = catalog.to_str().unwrap().to_owned();
    let call = json!({"jsonrpc": "2.0", "id": 9, "method": "tools/call",
        "params": {"name": "list_orders", "arguments": {"MarketplaceIds": "A"}}})
    .to_string();
    let args = ["check", "--catalog", &catalog, "--format", "ndjson", "-"];
    let (code, stdout, stderr) = run(&args, &call);
    assert_eq!(code, 0, "{stdout}{stderr}");
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["verdict"], "allow");
    let kinds: Vec<&str> = line["normalized"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap())
        .collect();
    assert_eq!(kinds, ["renamed", "coerced"]);
    assert_eq!(
        line["forward"]["params"]["arguments"],
        json!({"marketplaceIds": ["A"]})
    );
    // The readable report lists the events.
    let (code, stdout, _) = run(&["check", "--catalog", &catalog, "-"], &call);
    assert_eq!(code, 0);
    assert!(
        stdout.contains("renamed \"MarketplaceIds\" to \"marketplaceIds\""),
        "{stdout}"
    );
    assert!(stdout.contains("string wrapped in an array"), "{stdout}");
    // Switched off by the contract's variable: refused in the tool dialect.
    let (code, stdout, _) = run_with(
        &args,
        &call,
        &[("MCP_SCHEMA_KEY_NORMALIZATION_ENABLED", "false")],
    );
    assert_eq!(code, 1);
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["verdict"], "reject");
    assert_eq!(line["body"]["result"]["isError"], true);
    assert_eq!(
        line["body"]["result"]["structuredContent"]["error_code"],
        "SCHEMA_REQUIRED"
    );
    assert_eq!(line["normalized"], json!([]));
    assert!(line.get("forward").is_none());
    // A refused call shows what normalization made of it all the same.
    let refused = json!({"jsonrpc": "2.0", "id": 10, "method": "tools/call",
        "params": {"name": "list_orders", "arguments": {"MarketplaceIds": 5}}})
    .to_string();
    let (code, stdout, _) = run(&args, &refused);
    assert_eq!(code, 1);
    let line: Value = serde_json::from_str(stdout.trim()).unwrap();
    assert_eq!(line["normalized"][1]["from_type"], "integer");
    assert!(line.get("forward").is_none());
    let _ = std::fs::remove_file(&catalog);
}
