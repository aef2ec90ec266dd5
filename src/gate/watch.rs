//! Watching the upstream's answers (DESIGN.md §7, §9): a `tools/call`
//! result whose `structuredContent` fails the tool's output root is logged
//! and counted, never altered; a complete `tools/list` answer (no cursor
//! asked, no `nextCursor` given) becomes the catalog, unless the catalog
//! came from a file. The relayed bytes are never touched: this reads a
//! copy after the answer went out.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::Gate;
use crate::catalog::{Catalog, CatalogSource};
use crate::gate::distill::cut_at_echo_bound;

/// What watching found, counted.
#[derive(Default, Debug)]
pub struct Watched {
    /// `tools/call` results whose `structuredContent` failed the tool's
    /// output root.
    pub output_mismatches: AtomicU64,
    /// Catalogs learned from `tools/list` answers passing through.
    pub catalogs_learned: AtomicU64,
}

impl Watched {
    pub fn output_mismatches(&self) -> u64 {
        self.output_mismatches.load(Ordering::Relaxed)
    }

    pub fn catalogs_learned(&self) -> u64 {
        self.catalogs_learned.load(Ordering::Relaxed)
    }
}

impl Gate {
    /// The counters of [`Gate::watch_answer`].
    pub fn watched(&self) -> &Watched {
        &self.watched
    }

    /// Reads an upstream's answer to a request the gate let through:
    /// `request` the request's body, `answer` the answer's body (JSON, or
    /// an SSE stream when `event_stream`).
    pub fn watch_answer(&self, request: &[u8], answer: &[u8], event_stream: bool) {
        let Ok(request) = serde_json::from_slice::<Value>(request) else {
            return;
        };
        let method = request.get("method").and_then(Value::as_str);
        let params = request.get("params");
        match method {
            Some("tools/call") => {
                let catalog = self.catalog.load();
                let Some(name) = params.and_then(|p| p.get("name")).and_then(Value::as_str) else {
                    return;
                };
                let Some(output) = catalog.get(name).and_then(|tool| tool.output.as_ref()) else {
                    return;
                };
                let Some(result) = answer_result(answer, event_stream, request.get("id")) else {
                    return;
                };
                // A tool error carries no structured result to check.
                if result.get("isError") == Some(&Value::Bool(true)) {
                    return;
                }
                let valid = result
                    .get("structuredContent")
                    .is_some_and(|content| output.is_valid(content));
                if !valid {
                    self.watched
                        .output_mismatches
                        .fetch_add(1, Ordering::Relaxed);
                    tracing::warn!(
                        target: "mcpgate::watch",
                        tool = cut_at_echo_bound(name).as_ref(),
                        "structuredContent does not match the tool's outputSchema"
                    );
                }
            }
            Some("tools/list") => {
                if params.and_then(|p| p.get("cursor")).is_some()
                    || self.catalog.load().source() == Some(CatalogSource::File)
                {
                    return;
                }
                let Some(result) = answer_result(answer, event_stream, request.get("id")) else {
                    return;
                };
                if result.get("nextCursor").is_some() {
                    return;
                }
                let Some(tools) = result.get("tools").and_then(Value::as_array) else {
                    return;
                };
                let catalog =
                    Catalog::register(tools, CatalogSource::Upstream, &self.config.catalog);
                self.set_catalog(catalog);
                self.watched
                    .catalogs_learned
                    .fetch_add(1, Ordering::Relaxed);
            }
            _ => {}
        }
    }
}

/// The `result` of the answer to request `id`, from a JSON body or from the
/// SSE stream's `data:` messages.
fn answer_result(answer: &[u8], event_stream: bool, id: Option<&Value>) -> Option<Value> {
    let id = id?;
    let mut found = None;
    let mut take = |message: Value| {
        if found.is_none() && message.get("id") == Some(id) {
            found = message.get("result").cloned();
        }
    };
    if event_stream {
        let text = String::from_utf8_lossy(answer).replace("\r\n", "\n");
        for event in text.split("\n\n") {
            let data: Vec<&str> = event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|d| d.strip_prefix(' ').unwrap_or(d))
                .collect();
            if let Ok(message) = serde_json::from_str(&data.join("\n")) {
                take(message);
            }
        }
    } else if let Ok(message) = serde_json::from_slice(answer) {
        take(message);
    }
    found
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::catalog::CatalogOptions;
    use crate::gate::GateConfig;

    fn gate_with(tools: Value, source: CatalogSource) -> Gate {
        let gate = Gate::new(GateConfig::default()).unwrap();
        gate.set_catalog(Catalog::from_json(&tools, source, &CatalogOptions::default()).unwrap());
        gate
    }

    #[test]
    fn a_structured_result_off_its_output_schema_is_counted_not_altered() {
        let gate = gate_with(
            json!([{"name": "sum", "inputSchema": {"type": "object"},
                    "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}}]),
            CatalogSource::File,
        );
        let request = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sum","arguments":{}}}"#;
        let good =
            br#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"total":3}}}"#;
        let bad = br#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"total":"3"}}}"#;
        gate.watch_answer(request, good, false);
        assert_eq!(gate.watched().output_mismatches(), 0);
        gate.watch_answer(request, bad, false);
        assert_eq!(gate.watched().output_mismatches(), 1);
        let sse =
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}\n\n";
        gate.watch_answer(request, sse, true);
        assert_eq!(gate.watched().output_mismatches(), 2);
    }

    #[test]
    fn a_complete_tools_list_answer_becomes_the_catalog_unless_a_file_gave_it() {
        let request = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fresh","inputSchema":{"type":"object"}}]}}"#;
        let gate = gate_with(json!([]), CatalogSource::Upstream);
        gate.watch_answer(request, answer, false);
        assert!(gate.catalog().get("fresh").is_some());
        assert_eq!(gate.watched().catalogs_learned(), 1);
        let paged = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"2"}}"#;
        gate.watch_answer(request, paged, false);
        assert!(gate.catalog().get("fresh").is_some());
        let gate = gate_with(json!([]), CatalogSource::File);
        gate.watch_answer(request, answer, false);
        assert!(gate.catalog().get("fresh").is_none());
    }
}
