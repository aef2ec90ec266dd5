//! Shared by the gate tests: messages, headers and the official schemas.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use serde_json::{Value, json};

pub fn shared_dir() -> PathBuf {
    let dir = std::env::var_os("MCPGATE_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"));
    assert!(
        dir.join("mcp-spec").is_dir(),
        "official MCP schemas expected in {}",
        dir.display()
    );
    dir
}

pub const MODERN: &str = "2026-07-28";

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A valid 2026-07-28 tools/call.
pub fn tools_call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"_meta": meta(), "name": name, "arguments": arguments}})
}

/// The headers a 2026-07-28 client sends with `message`.
pub fn modern_headers(message: &Value) -> Vec<(String, String)> {
    let mut headers = vec![("MCP-Protocol-Version".to_owned(), MODERN.to_owned())];
    if let Some(method) = message["method"].as_str() {
        headers.push(("Mcp-Method".to_owned(), method.to_owned()));
        let member = match method {
            "tools/call" | "prompts/get" => Some("name"),
            "resources/read" => Some("uri"),
            _ => None,
        };
        if let Some(value) = member.and_then(|m| message["params"][m].as_str()) {
            headers.push(("Mcp-Name".to_owned(), value.to_owned()));
        }
    }
    headers
}

pub fn legacy_headers() -> Vec<(String, String)> {
    vec![("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned())]
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Official `JSONRPCErrorResponse` of a revision, compiled. JSON-RPC 2.0
/// answers `"id": null` when the id cannot be told; the MCP schema has no
/// null id, so the check is made on the envelope without a null id (the
/// tests assert separately when the id is null).
pub struct OfficialError(jsonschema::Validator);

impl OfficialError {
    pub fn load(revision: &str) -> Self {
        let official = read_json(
            &shared_dir()
                .join("mcp-spec")
                .join(revision)
                .join("schema.json"),
        );
        let schema = mcpgate::protocol::root_schema(&official, "JSONRPCErrorResponse").unwrap();
        OfficialError(jsonschema::draft202012::new(&schema).unwrap())
    }

    pub fn check(&self, body: &Value) -> Result<(), String> {
        let mut body = body.clone();
        if body.get("id") == Some(&Value::Null) {
            body.as_object_mut().unwrap().remove("id");
        }
        match self.0.validate(&body) {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("{e} in {body}")),
        }
    }
}

/// Client-sent official examples of 2026-07-28, by directory name.
pub fn official_client_examples() -> Vec<(String, Value)> {
    let dir = shared_dir().join("mcp-spec/2026-07-28/examples");
    let names = [
        "CallToolRequest",
        "CompleteRequest",
        "DiscoverRequest",
        "GetPromptRequest",
        "ListPromptsRequest",
        "ListResourceTemplatesRequest",
        "ListResourcesRequest",
        "ReadResourceRequest",
        "SubscriptionsListenRequest",
        "ListToolsRequest",
        "CancelledNotification",
    ];
    let mut out = Vec::new();
    for name in names {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            out.push((
                format!("{name}/{}", file.file_name().unwrap().to_string_lossy()),
                read_json(&file),
            ));
        }
    }
    out
}

pub fn own_seeds(revision: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/conformance/seeds-{revision}.ndjson"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}
