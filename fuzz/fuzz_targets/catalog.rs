//! Any tool definitions, then a call of each tool that registered: the
//! input is a `tools` array's JSON text (what an upstream's `tools/list`
//! answer or a catalog file holds), a NUL byte, then the arguments' JSON
//! text. Registration never panics and refuses what it cannot compile (with
//! a reason, counted); every registered tool can be called with any
//! arguments, and each call gets one verdict, counted once, a rejection
//! being a well-formed, bounded JSON-RPC error in the tool dialect or the
//! schema one (the assertions of `parse` and `gate`).
#![no_main]

mod common;

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig};
use serde_json::{Value, json};

/// A gate of its own, so that the catalog swapped in on each run is never
/// the one the other targets' checks expect.
fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        Gate::new(GateConfig::builder().body_limit(common::BODY_LIMIT).build())
        .expect("the protocol roots compile")
    })
}

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (tools, arguments) = (&data[..split], &data[split + 1..]);
    let Ok(Value::Array(tools)) = serde_json::from_slice::<Value>(tools) else {
        return;
    };
    let options = CatalogOptions {
        close_objects: arguments.first().is_some_and(|b| b % 2 == 0),
    };
    let catalog = Catalog::register(&tools, CatalogSource::Upstream, &options);
    assert!(
        catalog.len() + catalog.refused().len() <= tools.len(),
        "more tools registered or refused than were defined"
    );
    let arguments = serde_json::from_slice::<Value>(arguments).unwrap_or(json!({}));
    let names: Vec<String> = catalog.names().map(str::to_owned).collect();
    let gate = gate();
    gate.set_catalog(catalog);
    for name in names.iter().take(4) {
        let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": name, "arguments": arguments}});
        let body = serde_json::to_vec(&call).expect("a Value serializes");
        let headers = common::modern_headers(&body);
        common::check_with(gate, headers.as_slice(), &body);
    }
});
