//! The value-gate case both gate benches measure: a `search_orders` call
//! (the 10-property nested tool of the test catalog) through the gate, and
//! the baseline a user would write for it.

use jsonschema::Validator;
use mcpgate::unstable::catalog::tool;
use mcpgate::unstable::protocol::{RootKind, SchemaDocument, compile_root_as_written};
use mcpgate::{Catalog, CatalogOptions, Gate, GateConfig};
use serde_json::json;

/// A gate serving the test catalog, and the baseline's two roots: the
/// `tools/call` message root as written and the tool's closed input root.
pub struct SearchOrders {
    pub gate: Gate,
    pub message_root: Validator,
    pub arguments_root: Validator,
}

impl SearchOrders {
    pub fn new() -> Self {
        let catalog_path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/catalog/tools.json");
        let catalog = Catalog::from_file(
            std::path::Path::new(catalog_path),
            &CatalogOptions::default(),
        )
        .unwrap();
        let input = tool(&catalog, "search_orders").unwrap().schema.clone();
        let gate = Gate::new(GateConfig::default()).unwrap();
        gate.set_catalog(catalog);
        let document = SchemaDocument::Mcp2026_07_28.parse();
        let message_root =
            compile_root_as_written(&document, &RootKind::Request("tools/call").key()).unwrap();
        let arguments_root = jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&input)
            .unwrap();
        SearchOrders {
            gate,
            message_root,
            arguments_root,
        }
    }

    /// What a user would write: parse, validate the message, validate the
    /// arguments, and on a refusal collect the errors to answer.
    pub fn baseline(&self, body: &[u8]) -> usize {
        let value: serde_json::Value = serde_json::from_slice(body).unwrap();
        if !self.message_root.is_valid(&value) {
            return 0;
        }
        let arguments = &value["params"]["arguments"];
        if self.arguments_root.is_valid(arguments) {
            return 1;
        }
        self.arguments_root
            .iter_errors(arguments)
            .map(|e| e.to_string().len())
            .sum::<usize>()
    }
}

/// A 2026-07-28 `tools/call` of `tool` and the headers a client sends.
pub fn tool_call(tool: &str, arguments: serde_json::Value) -> (Vec<(String, String)>, Vec<u8>) {
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {
        "_meta": {"io.modelcontextprotocol/protocolVersion": "2026-07-28",
                  "io.modelcontextprotocol/clientCapabilities": {}},
        "name": tool, "arguments": arguments}});
    let mut headers = vec![
        ("MCP-Protocol-Version".to_owned(), "2026-07-28".to_owned()),
        ("Mcp-Method".to_owned(), "tools/call".to_owned()),
        ("Mcp-Name".to_owned(), tool.to_owned()),
    ];
    if let Some(region) = message["params"]["arguments"]["region"].as_str() {
        headers.push(("Mcp-Param-Region".to_owned(), region.to_owned()));
    }
    (headers, serde_json::to_vec(&message).unwrap())
}
