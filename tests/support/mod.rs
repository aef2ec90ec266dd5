//! Shared by the gate tests: messages, headers and the official schemas.
#![allow(dead_code)]

use std::path::{Path, PathBuf};

use mcpgate::catalog::{Catalog, CatalogOptions};
use mcpgate::reject::Reason;
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

/// The project's catalog of realistic tools (three of them broken).
pub fn catalog_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalog/tools.json")
}

pub fn test_catalog() -> Catalog {
    Catalog::from_file(&catalog_path(), &CatalogOptions::default()).unwrap()
}

/// The error envelope's JSON Schema, from the contract's oracle.
pub fn envelope_schema() -> jsonschema::Validator {
    let schema = read_json(
        &shared_dir().join("oracles/openbridge-envelope/schemas/error-envelope.schema.json"),
    );
    jsonschema::draft202012::new(&schema).unwrap()
}

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
        let member = mcpgate::gate::binding::name_member(method);
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

/// One message that triggers `reason` through the gate, with the id its
/// answer must carry; `None` for the rows only a server reaches (the wire
/// stage's, the forwarder's: tests/serve.rs reaches every row over HTTP).
/// The match is exhaustive: a new row needs a decision here.
/// Headers, body, and the id the answer must carry.
pub type Scenario = (Vec<(String, String)>, Vec<u8>, Value);

pub fn scenario(reason: Reason) -> Option<Scenario> {
    Some(match reason {
        Reason::MethodNotAllowed
        | Reason::UnknownPath
        | Reason::OriginNotAllowed
        | Reason::Unauthorized
        | Reason::UnsupportedMediaType
        | Reason::NotAcceptable
        | Reason::HeadTooLarge
        | Reason::BadHttp
        | Reason::RepeatedHeader
        | Reason::MissingHost
        | Reason::NominatedHeader
        | Reason::BodyNotAllowed
        | Reason::NoUpstream
        | Reason::UpstreamUnreachable
        | Reason::UpstreamTimeout
        | Reason::UpstreamBadAnswer => return None,
        gate_reason => message_for(gate_reason),
    })
}

fn message_for(reason: Reason) -> Scenario {
    let modern = |message: &Value| {
        (
            modern_headers(message),
            serde_json::to_vec(message).unwrap(),
        )
    };
    let list = |id: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta": meta()}});
    match reason {
        Reason::BodyTooLarge => {
            let message = tools_call(json!(1), "echo", json!({"text": "x".repeat(8192)}));
            let (h, b) = modern(&message);
            (h, b, Value::Null)
        }
        Reason::MalformedJson => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":1,"#.to_vec(),
            Value::Null,
        ),
        Reason::Batch => (
            legacy_headers(),
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            Value::Null,
        ),
        Reason::DuplicateKey => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_vec(),
            Value::Null,
        ),
        Reason::TooDeep => {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{}{}}}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            );
            (legacy_headers(), body.into_bytes(), Value::Null)
        }
        Reason::UnidentifiedRequest => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            Value::Null,
        ),
        Reason::UnknownMessage => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":4}"#.to_vec(),
            Value::Null,
        ),
        Reason::UnsupportedProtocolVersion => {
            let message = list(json!(7));
            let mut headers = modern_headers(&message);
            headers[0].1 = "1999-01-01".to_owned();
            (headers, serde_json::to_vec(&message).unwrap(), json!(7))
        }
        Reason::ProtocolField => {
            let message = json!({"jsonrpc":"2.0","id":"pf","method":"tools/list",
                "params":{"_meta":{"io.modelcontextprotocol/protocolVersion": MODERN}}});
            let (h, b) = modern(&message);
            (h, b, json!("pf"))
        }
        Reason::HeaderMismatch => {
            let message = tools_call(json!(9), "echo", json!({}));
            let (mut h, b) = modern(&message);
            h.iter_mut().find(|(n, _)| n == "Mcp-Name").unwrap().1 = "other".to_owned();
            (h, b, json!(9))
        }
        Reason::MethodNotFound => {
            let message =
                json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"_meta": meta()}});
            let (h, b) = modern(&message);
            (h, b, json!(3))
        }
        Reason::MethodNotFoundLegacy => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":"m","method":"no/such"}"#.to_vec(),
            json!("m"),
        ),
        Reason::InvalidParams => {
            let mut message = tools_call(json!(11), "echo", json!({}));
            message["params"]["name"] = json!(5);
            let (h, b) = modern(&message);
            (h, b, json!(11))
        }
        Reason::InvalidRequest => {
            let mut message = list(json!(12));
            message["jsonrpc"] = json!("1.0");
            let (h, b) = modern(&message);
            (h, b, json!(12))
        }
        // The three rows of the value gate call tools of `test_catalog()`.
        Reason::ParamHeaderMismatch => {
            let message = tools_call(json!(21), "get_account", json!({"accountId": 42}));
            let (mut h, b) = modern(&message);
            h.push(("Mcp-Param-Account-Id".to_owned(), "43".to_owned()));
            (h, b, json!(21))
        }
        Reason::UnknownTool => {
            let message = tools_call(json!(22), "serch_orders", json!({}));
            let (h, b) = modern(&message);
            (h, b, json!(22))
        }
        Reason::InvalidArguments => {
            let message = tools_call(
                json!(23),
                "search_orders",
                json!({"marketplaceIds": ["A"], "region": "XX"}),
            );
            let (h, b) = modern(&message);
            (h, b, json!(23))
        }
        other => unreachable!("{other:?} has no gate scenario"),
    }
}
