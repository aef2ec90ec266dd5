//! Watching the upstream's answers (ARCHITECTURE.md, "The value gate" and "Forwarding"): a
//! `tools/call`
//! result whose `structuredContent` fails the tool's output root is logged
//! and counted, never altered; a complete `tools/list` answer (no cursor
//! asked, no `nextCursor` given) becomes the catalog, unless the catalog
//! came from a file or answers do not teach it (`learn_from_answers`
//! off). The relayed bytes are never touched: this reads a copy after the
//! answer went out.

use std::sync::atomic::{AtomicU64, Ordering};

use serde_json::Value;

use super::Gate;
use crate::catalog::{Catalog, CatalogSource};
use crate::classify::RequestId;
use crate::distill::cut_at_echo_bound;

/// An answer worth reading once relayed, decided when its request was let
/// through.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Watch {
    /// A `tools/list` asked without a cursor: its answer is the whole list.
    ToolsList,
    /// A `tools/call` of a tool with an output root.
    ToolsCall(std::sync::Arc<str>),
}

/// What watching found, counted ([`Gate::watched`]): what the server's
/// metrics report, for an embedder to report as well.
#[derive(Default, Debug)]
pub struct Watched {
    /// `tools/call` results whose `structuredContent` failed the tool's
    /// output root.
    output_mismatches: AtomicU64,
    /// Catalogs learned from `tools/list` answers passing through.
    catalogs_learned: AtomicU64,
}

impl Watched {
    /// `tools/call` results whose `structuredContent` failed the tool's
    /// output schema (relayed unaltered).
    pub fn output_mismatches(&self) -> u64 {
        self.output_mismatches.load(Ordering::Relaxed)
    }

    /// Catalogs taken from `tools/list` answers passing through.
    pub fn catalogs_learned(&self) -> u64 {
        self.catalogs_learned.load(Ordering::Relaxed)
    }
}

impl Gate {
    /// The counters of [`Gate::watch_answer`].
    pub fn watched(&self) -> &Watched {
        &self.watched
    }

    /// Reads an upstream's answer (its body; an SSE stream when
    /// `event_stream`) to a request the gate let through with `watch`;
    /// `id` is the request's id as [`super::Allowed`] holds it.
    ///
    /// ```
    /// use mcpgate::{Gate, GateConfig, Verdict};
    ///
    /// let gate = Gate::new(GateConfig::default())?;
    /// let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")];
    /// let list = br#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{
    ///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    /// let Verdict::Allow(allowed) = gate.check(&headers[..], list) else {
    ///     panic!("refused");
    /// };
    /// let watch = allowed.watch.expect("a tools/list answer is watched");
    /// // The upstream's answer, streamed as one server-sent event.
    /// let answer = b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":9,\"result\":{\"tools\":[\
    ///     {\"name\":\"echo\",\"inputSchema\":{\"type\":\"object\"}}]}}\n\n";
    /// gate.watch_answer(&watch, allowed.id.as_ref(), answer, true);
    /// assert_eq!(gate.watched().catalogs_learned(), 1);
    /// assert_eq!(gate.catalog().names().collect::<Vec<_>>(), ["echo"]);
    /// # Ok::<(), mcpgate::CompileRootError>(())
    /// ```
    pub fn watch_answer(
        &self,
        watch: &Watch,
        id: Option<&RequestId>,
        answer: &[u8],
        event_stream: bool,
    ) {
        let Some(id) = id.and_then(|id| serde_json::from_slice::<Value>(id.json()).ok()) else {
            return;
        };
        let Some(result) = answer_result(answer, event_stream, &id) else {
            return;
        };
        match watch {
            Watch::ToolsCall(name) => {
                let catalog = self.catalog.load();
                let Some(output) = catalog.get(name).and_then(|tool| tool.output.as_ref()) else {
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
            Watch::ToolsList => {
                if !self.config.learn_catalog
                    || !self.config.learn_from_answers
                    || self.catalog.load().source() == Some(CatalogSource::File)
                    || result.get("nextCursor").is_some()
                {
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
        }
    }
}

/// The `result` of the answer to request `id`, from a JSON body or from the
/// SSE stream's `data:` messages.
fn answer_result(answer: &[u8], event_stream: bool, id: &Value) -> Option<Value> {
    let mut found = None;
    let mut take = |message: Value| {
        if found.is_none() && message.get("id") == Some(id) {
            found = message.get("result").cloned();
        }
    };
    if event_stream {
        for data in super::sse::event_data(answer) {
            if let Ok(message) = serde_json::from_str(&data) {
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

    /// The watch and id a legacy-lane request is let through with.
    fn allowed(gate: &Gate, body: &[u8]) -> (Option<Watch>, Option<RequestId>) {
        let headers: [(&str, &str); 0] = [];
        match gate.check(&headers[..], body) {
            crate::gate::Verdict::Allow(allowed) => (allowed.watch, allowed.id),
            crate::gate::Verdict::Reject(r) => panic!("{}", String::from_utf8_lossy(&r.body)),
        }
    }

    #[test]
    fn a_structured_result_off_its_output_schema_is_counted_not_altered() {
        let gate = gate_with(
            json!([{"name": "sum", "inputSchema": {"type": "object"},
                    "outputSchema": {"type": "object", "properties": {"total": {"type": "number"}}, "required": ["total"]}}]),
            CatalogSource::File,
        );
        let request = allowed(
            &gate,
            br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"sum","arguments":{}}}"#,
        );
        let good =
            br#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"total":3}}}"#;
        let bad = br#"{"jsonrpc":"2.0","id":4,"result":{"content":[],"structuredContent":{"total":"3"}}}"#;
        let watch = |answer: &[u8], sse| {
            gate.watch_answer(request.0.as_ref().unwrap(), request.1.as_ref(), answer, sse)
        };
        watch(good, false);
        assert_eq!(gate.watched().output_mismatches(), 0);
        watch(bad, false);
        assert_eq!(gate.watched().output_mismatches(), 1);
        let sse =
            b"event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":4,\"result\":{\"content\":[]}}\n\n";
        watch(sse, true);
        assert_eq!(gate.watched().output_mismatches(), 2);
    }

    #[test]
    fn a_complete_tools_list_answer_becomes_the_catalog_unless_a_file_gave_it() {
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fresh","inputSchema":{"type":"object"}}]}}"#;
        let gate = gate_with(json!([]), CatalogSource::Upstream);
        let (watch, id) = allowed(&gate, list);
        assert_eq!(watch, Some(Watch::ToolsList));
        let paged = allowed(
            &gate,
            br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"cursor":"2"}}"#,
        );
        assert_eq!(paged.0, None);
        gate.watch_answer(&Watch::ToolsList, id.as_ref(), answer, false);
        assert!(gate.catalog().get("fresh").is_some());
        assert_eq!(gate.watched().catalogs_learned(), 1);
        let paged = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[],"nextCursor":"2"}}"#;
        gate.watch_answer(&Watch::ToolsList, id.as_ref(), paged, false);
        assert!(gate.catalog().get("fresh").is_some());
        let gate = gate_with(json!([]), CatalogSource::File);
        gate.watch_answer(&Watch::ToolsList, id.as_ref(), answer, false);
        assert!(gate.catalog().get("fresh").is_none());
    }

    #[test]
    fn where_answers_do_not_teach_a_tools_list_is_not_watched_nor_learned() {
        let gate = Gate::new(GateConfig::builder().learn_from_answers(false).build()).unwrap();
        gate.set_catalog(
            Catalog::from_json(
                &json!([{"name": "kept", "inputSchema": {"type": "object"}}]),
                CatalogSource::Upstream,
                &CatalogOptions::default(),
            )
            .unwrap(),
        );
        let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        assert_eq!(allowed(&gate, list).0, None);
        // Nor by an embedder who asks anyway.
        let id = allowed(&gate, list).1;
        let answer = br#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"fresh","inputSchema":{"type":"object"}}]}}"#;
        gate.watch_answer(&Watch::ToolsList, id.as_ref(), answer, false);
        assert!(gate.catalog().get("kept").is_some());
        assert!(gate.catalog().get("fresh").is_none());
        assert_eq!(gate.watched().catalogs_learned(), 0);
    }
}
