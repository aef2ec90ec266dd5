//! mcpgate: a validating gateway for the Model Context Protocol.
//!
//! The crate is the `mcpgate` binary (feature `server`, on by default) and
//! the gate it runs, which a Rust frontend embeds with
//! `default-features = false`. [`Gate`] runs every stage a message passes
//! through (wire limit, parse, classify, lane, header binding, dispatch,
//! message schema, value gate) and answers [`Verdict::Allow`] or the exact
//! [`Rejection`] to send. ARCHITECTURE.md in the repository gives the
//! layers and the pipeline.
//!
//! # Build a gate and check a message
//!
//! ```
//! use mcpgate::{Gate, GateConfig, Verdict};
//!
//! fn main() -> Result<(), Box<dyn std::error::Error>> {
//!     let gate = Gate::new(GateConfig::default())?;
//!     let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
//!         "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!         "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//!     let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")];
//!     match gate.check(&headers[..], body) {
//!         Verdict::Allow(allowed) => assert!(allowed.expects_response()),
//!         Verdict::Reject(rejection) => panic!("refused: {rejection:?}"),
//!     }
//!     Ok(())
//! }
//! ```
//!
//! # Answer a rejection
//!
//! A refusal carries the HTTP status and the whole JSON-RPC body to send;
//! the frontend adds `Content-Type: application/json` and nothing else.
//! The body is [`bytes::Bytes`] from a buffer the gate reuses on its
//! thread: hand it to the transport as it is (no copy), keep it, or borrow
//! it as a slice; once it is dropped, the next refusal reuses its bytes.
//!
//! ```
//! use mcpgate::{Gate, GateConfig, Reason, Verdict};
//!
//! let gate = Gate::new(GateConfig::default())?;
//! let body = br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! // The header names another method than the body.
//! let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "prompts/list")];
//! let Verdict::Reject(rejection) = gate.check(&headers[..], body) else {
//!     panic!("a header mismatch was allowed");
//! };
//! assert_eq!((rejection.status, rejection.reason), (400, Reason::HeaderMismatch));
//! let body: bytes::Bytes = rejection.body; // what the transport sends
//! let answer: serde_json::Value = serde_json::from_slice(&body)?;
//! assert_eq!(answer["id"], 7);
//! assert_eq!(answer["error"]["code"], -32020);
//! assert_eq!(answer["error"]["data"]["header"], "Mcp-Method");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Load a catalog from a `tools/list` result
//!
//! Each tool's `inputSchema` is compiled once; a call's arguments are then
//! checked against it, and a wrong call is answered in the tool dialect (a
//! result with `isError: true` the model can act on).
//!
//! ```
//! use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, Verdict};
//! use serde_json::json;
//!
//! let gate = Gate::new(GateConfig::default())?;
//! let listed = json!({"tools": [{"name": "add", "inputSchema": {"type": "object",
//!     "properties": {"a": {"type": "number"}, "b": {"type": "number"}},
//!     "required": ["a", "b"]}}]});
//! gate.set_catalog(Catalog::from_json(&listed, CatalogSource::Upstream, &CatalogOptions::default())?);
//! let body = br#"{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}},
//!     "name":"add","arguments":{"a":1,"b":"two"}}}"#;
//! let headers = [
//!     ("MCP-Protocol-Version", "2026-07-28"),
//!     ("Mcp-Method", "tools/call"),
//!     ("Mcp-Name", "add"),
//! ];
//! let Verdict::Reject(rejection) = gate.check(&headers[..], body) else {
//!     panic!("a wrong-typed argument was allowed");
//! };
//! let answer: serde_json::Value = serde_json::from_slice(&rejection.body)?;
//! assert_eq!(rejection.status, 200);
//! assert_eq!(answer["result"]["isError"], true);
//! assert_eq!(answer["result"]["structuredContent"]["tool"], "add");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Forward what normalization made of a call
//!
//! Before the value gate, a call's top-level argument keys are put right
//! against the tool's schema (a key in the wrong case renamed, a scalar
//! sent for an array wrapped). A call so changed is allowed with the
//! message to forward in [`Allowed::forward`] (only `arguments` replaced,
//! the rest as sent, itself checked by the whole gate) and what was done in
//! [`Allowed::normalized`]; an unchanged call has neither and is forwarded
//! as sent.
//!
//! ```
//! use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, Verdict};
//! use serde_json::json;
//!
//! let gate = Gate::new(GateConfig::default())?;
//! let listed = json!([{"name": "orders", "inputSchema": {"type": "object",
//!     "properties": {"marketplaceIds": {"type": "array", "items": {"type": "string"}}},
//!     "required": ["marketplaceIds"]}}]);
//! gate.set_catalog(Catalog::from_json(&listed, CatalogSource::File, &CatalogOptions::default())?);
//! let body = br#"{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}},
//!     "name":"orders","arguments":{"MarketplaceIds":"A"}}}"#;
//! let headers = [
//!     ("MCP-Protocol-Version", "2026-07-28"),
//!     ("Mcp-Method", "tools/call"),
//!     ("Mcp-Name", "orders"),
//! ];
//! let Verdict::Allow(allowed) = gate.check(&headers[..], body) else {
//!     panic!("refused");
//! };
//! let forward = allowed.forward.expect("the arguments changed");
//! let message: serde_json::Value = serde_json::from_slice(&forward)?;
//! assert_eq!(message["params"]["arguments"], json!({"marketplaceIds": ["A"]}));
//! let events: serde_json::Value = serde_json::from_slice(&allowed.normalized.unwrap())?;
//! assert_eq!(events[0]["kind"], "renamed");
//! assert_eq!(events[1]["kind"], "coerced");
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Learn the catalog from a relayed answer
//!
//! An allowed `tools/list` asks to see its answer ([`Allowed::watch`]):
//! handed to [`Gate::watch_answer`] once relayed, its tools become the
//! catalog.
//!
//! ```
//! use mcpgate::{Gate, GateConfig, Verdict};
//!
//! let gate = Gate::new(GateConfig::default())?;
//! let body = br#"{"jsonrpc":"2.0","id":"l-1","method":"tools/list","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
//! let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")];
//! let Verdict::Allow(allowed) = gate.check(&headers[..], body) else {
//!     panic!("refused");
//! };
//! let watch = allowed.watch.expect("a tools/list answer is worth reading");
//! // What the upstream answered, as relayed to the client.
//! let answer = br#"{"jsonrpc":"2.0","id":"l-1","result":{"tools":[
//!     {"name":"echo","inputSchema":{"type":"object","properties":{"text":{"type":"string"}}}}]}}"#;
//! gate.watch_answer(&watch, allowed.id.as_ref(), answer, false);
//! assert_eq!(gate.catalog().len(), 1);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Choose what an unknown tool gets
//!
//! With a catalog, a call of a tool it lacks is refused (`-32602` naming
//! the tool); [`UnknownTools::Forward`] lets the upstream decide instead.
//! Without one, a call is let through, unless
//! [`GateConfig::await_catalog`] says a catalog is on its way (the
//! embedder learns it): then it is refused with 503
//! ([`Reason::CatalogUnknown`]) until [`Gate::set_catalog`] is called.
//! Where the embedder tells callers apart and the upstream may list tools
//! per caller, [`GateConfig::learn_from_answers`] off keeps one caller's
//! `tools/list` answer from becoming everyone's catalog.
//!
//! ```
//! use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, UnknownTools, Verdict};
//! use serde_json::json;
//!
//! let config = GateConfig::builder().unknown_tools(UnknownTools::Forward).build();
//! let gate = Gate::new(config)?;
//! let listed = json!([{"name": "add", "inputSchema": {"type": "object"}}]);
//! gate.set_catalog(Catalog::from_json(&listed, CatalogSource::File, &CatalogOptions::default())?);
//! let body = br#"{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"_meta":{
//!     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
//!     "io.modelcontextprotocol/clientCapabilities":{}},"name":"subtract","arguments":{}}}"#;
//! let headers = [
//!     ("MCP-Protocol-Version", "2026-07-28"),
//!     ("Mcp-Method", "tools/call"),
//!     ("Mcp-Name", "subtract"),
//! ];
//! assert!(matches!(gate.check(&headers[..], body), Verdict::Allow(_)));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Features
//!
//! - `server` (default): the `mcpgate` binary's server, forwarder,
//!   configuration and command line (`mcpgate::main`).
//! - `http`: [`RequestHeaders`] for `http::HeaderMap`, for an axum or
//!   hyper frontend.
//! - `unstable-internals`: the `mcpgate::unstable` module, the internals the
//!   crate's own tests, benches and fuzz targets drive. Outside semver: an
//!   embedder never needs it.
//!
//! `unsafe` is refused everywhere but in these small audited places:
//! `parse::reuse` (the tape kept across parses), `parse::scan` (the parse's
//! fast path: SSE2 string scanning, slicing between quotes),
//! `parse::subtree` (a tape node's subtree read without a bounds check at
//! each access), `parse::writer` (the fast path's tape writes into room
//! reserved once per turn), `sock` (a socket used by its descriptor beside
//! monoio, by the server and the forwarder) and one call in
//! `server::reclaim` (mimalloc's heap collection).
#![cfg_attr(docsrs, feature(doc_cfg))]
#![deny(unsafe_code)]
#![deny(missing_docs)]
// Without `unstable-internals`, what only `unstable` re-exports (for the
// tests, benches and fuzz targets) is unused, and no longer exported API to
// clippy; with it, as the lints run in CI, both are judged as before.
#![cfg_attr(
    not(feature = "unstable-internals"),
    allow(dead_code, unused_imports, clippy::wrong_self_convention)
)]

mod catalog;
mod classify;
#[cfg(feature = "server")]
mod cli;
#[cfg(feature = "server")]
mod config;
mod distill;
mod gate;
#[cfg(feature = "server")]
mod http1;
mod parse;
mod protocol;
mod reject;
#[cfg(feature = "server")]
mod server;
#[cfg(feature = "server")]
mod service;
#[cfg(feature = "server")]
#[allow(unsafe_code)]
mod sock;
#[cfg(feature = "unstable-internals")]
#[cfg_attr(docsrs, doc(cfg(feature = "unstable-internals")))]
pub mod unstable;
#[cfg(feature = "server")]
mod upstream;

pub use catalog::{Catalog, CatalogError, CatalogOptions, CatalogSource, Refused};
pub use classify::{Kind, RequestId};
pub use gate::watch::{Watch, Watched};
pub use gate::{
    Allowed, FieldError, Gate, GateConfig, GateConfigBuilder, RefusalStatus, RefusalStatusError,
    RequestHeaders, Scratch, UnknownTools, UnknownToolsError, Verdict,
};
pub use protocol::{CompileRootError, Lane, Revision};
pub use reject::{Reason, Rejection, Rejections};

/// Runs the `mcpgate` command line (`serve`, `check`, `roots`) on the
/// process's arguments and returns its exit code: what the binary's `main`
/// does, for a build that wraps it (its own allocator, say).
#[cfg(feature = "server")]
#[cfg_attr(docsrs, doc(cfg(feature = "server")))]
pub fn main() -> std::process::ExitCode {
    cli::main()
}
