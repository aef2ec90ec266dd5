//! The tool catalog (ARCHITECTURE.md, "The value gate"): every tool's roots compiled once, when
//! the catalog is loaded (`--catalog FILE`) or learned (the upstream's
//! `tools/list`); a call never compiles a schema. A tool that cannot be
//! registered is refused alone, with a log line naming it and the reason;
//! the rest of the catalog stays in service.

pub mod close;
pub mod header_params;
pub mod keys;
pub mod loose;
mod register;
pub mod subschemas;

use std::fmt;
use std::path::Path;

use rustc_hash::FxHashMap;
use serde_json::Value;

pub use register::Tool;

use crate::distill::cut_at_echo_bound;

/// How tools are registered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CatalogOptions {
    /// Close object schemas against unknown keys where they say nothing.
    pub close_objects: bool,
}

impl Default for CatalogOptions {
    fn default() -> Self {
        CatalogOptions {
            close_objects: true,
        }
    }
}

/// Where a catalog's tools came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CatalogSource {
    /// A catalog file (`--catalog FILE`) or a document the embedder read:
    /// it stays in service, never replaced by what the upstream lists.
    File,
    /// The upstream's `tools/list`: learned again when it may have changed.
    Upstream,
}

/// A tool refused at registration.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refused {
    /// Its name, cut at the echo bound (`(unnamed #N)` without one).
    pub tool: String,
    /// Why it was refused, for the log line and the operator.
    pub reason: String,
}

/// The registered tools, by name (FxHash: names are fixed at registration,
/// a call only looks up).
#[derive(Default)]
pub struct Catalog {
    tools: FxHashMap<Box<str>, Tool>,
    /// The tools' names by [`loose::hash`].
    loose: FxHashMap<u64, Vec<Box<str>>>,
    refused: Vec<Refused>,
    source: Option<CatalogSource>,
}

impl fmt::Debug for Catalog {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Catalog")
            .field("tools", &self.tools.len())
            .field("refused", &self.refused)
            .field("source", &self.source)
            .finish()
    }
}

/// A catalog document that is not one.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CatalogError {
    /// The file could not be read.
    #[error("cannot read {path}: {reason}")]
    Read {
        /// The file, as given.
        path: String,
        /// What the system said.
        reason: String,
    },
    /// The bytes are not JSON; what the JSON parser said.
    #[error("not JSON: {0}")]
    NotJson(String),
    /// JSON, but neither a `tools/list` result, a response carrying one,
    /// nor an array of tools.
    #[error(
        "expected a tools/list result ({{\"tools\": [...]}}), a JSON-RPC response carrying one, or an array of tools"
    )]
    Shape,
}

impl Catalog {
    /// Registers every tool of `tools` (Tool objects), refusing the ones
    /// that fail and, of tools sharing a name, all but the first.
    pub fn register(tools: &[Value], source: CatalogSource, options: &CatalogOptions) -> Catalog {
        let mut catalog = Catalog {
            source: Some(source),
            ..Catalog::default()
        };
        for (n, definition) in tools.iter().enumerate() {
            let label = definition
                .get("name")
                .and_then(Value::as_str)
                .map(|name| cut_at_echo_bound(name).into_owned())
                .unwrap_or_else(|| format!("(unnamed #{n})"));
            let outcome = register::register(definition, options).and_then(|tool| {
                if catalog.tools.contains_key(&*tool.name) {
                    Err(register::RegisterError::DuplicateName)
                } else {
                    Ok(tool)
                }
            });
            match outcome {
                Ok(tool) => {
                    catalog
                        .loose
                        .entry(loose::hash(&tool.name))
                        .or_default()
                        .push(Box::from(&*tool.name));
                    catalog.tools.insert(Box::from(&*tool.name), tool);
                }
                Err(reason) => {
                    let reason = reason.to_string();
                    tracing::warn!(
                        target: "mcpgate::catalog",
                        tool = label.as_str(),
                        reason = reason.as_str(),
                        "tool refused at registration"
                    );
                    catalog.refused.push(Refused {
                        tool: label,
                        reason,
                    });
                }
            }
        }
        catalog
    }

    /// A catalog from a document: a `tools/list` result, a JSON-RPC
    /// response carrying one, or an array of Tool objects. A tool that
    /// cannot be registered is refused alone ([`Catalog::refused`]); a
    /// document of another shape is an error.
    ///
    /// ```
    /// use mcpgate::{Catalog, CatalogError, CatalogOptions, CatalogSource};
    /// use serde_json::json;
    ///
    /// let options = CatalogOptions::default();
    /// let listed = json!({"tools": [
    ///     {"name": "add", "inputSchema": {"type": "object"}},
    ///     {"name": "broken", "inputSchema": {"type": "string"}},
    /// ]});
    /// let catalog = Catalog::from_json(&listed, CatalogSource::Upstream, &options)?;
    /// assert_eq!(catalog.len(), 1);
    /// assert_eq!(catalog.refused()[0].tool, "broken");
    /// let wrong = Catalog::from_json(&json!({"tool": []}), CatalogSource::File, &options);
    /// assert_eq!(wrong.unwrap_err(), CatalogError::Shape);
    /// # Ok::<(), CatalogError>(())
    /// ```
    pub fn from_json(
        document: &Value,
        source: CatalogSource,
        options: &CatalogOptions,
    ) -> Result<Catalog, CatalogError> {
        let tools = tool_list(document).ok_or(CatalogError::Shape)?;
        Ok(Catalog::register(tools, source, options))
    }

    /// A catalog from a file (see [`Catalog::from_json`]).
    pub fn from_file(path: &Path, options: &CatalogOptions) -> Result<Catalog, CatalogError> {
        let bytes = std::fs::read(path).map_err(|e| CatalogError::Read {
            path: path.display().to_string(),
            reason: e.to_string(),
        })?;
        let document: Value =
            serde_json::from_slice(&bytes).map_err(|e| CatalogError::NotJson(e.to_string()))?;
        Catalog::from_json(&document, CatalogSource::File, options)
    }

    pub(crate) fn get(&self, name: &str) -> Option<&Tool> {
        self.tools.get(name)
    }

    /// The tool a loose matcher would take `name` for (case aside,
    /// whitespace around trimmed): `Ok(None)` when none, `Err(())` when
    /// several tools are spelled alike and it could be any of them.
    pub(crate) fn get_loose(&self, name: &str) -> Result<Option<&Tool>, ()> {
        // No catalog (a gate forwarding by policy): nothing to hash for.
        if self.loose.is_empty() {
            return Ok(None);
        }
        let Some(names) = self.loose.get(&loose::hash(name)) else {
            return Ok(None);
        };
        let mut found = names.iter().filter(|known| loose::same(name, known));
        match (found.next(), found.next()) {
            (Some(one), None) => Ok(self.tools.get(one)),
            (None, _) => Ok(None),
            (Some(_), Some(_)) => Err(()),
        }
    }

    /// Registered tool names, in no order.
    pub fn names(&self) -> impl Iterator<Item = &str> {
        self.tools.keys().map(|k| &**k)
    }

    /// How many tools are registered (those refused are not counted).
    pub fn len(&self) -> usize {
        self.tools.len()
    }

    /// No tool is registered: the empty catalog a gate starts with, or one
    /// whose every tool was refused.
    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// Tools refused at registration.
    pub fn refused(&self) -> &[Refused] {
        &self.refused
    }

    /// One log line: the catalog going into service, `what` it is.
    #[cfg(feature = "server")]
    pub(crate) fn log_in_service(&self, what: &str) {
        tracing::info!(
            target: "mcpgate::catalog",
            tools = self.len(),
            refused = self.refused.len(),
            "{what}"
        );
    }

    /// `None` for the empty catalog a gate starts with.
    pub fn source(&self) -> Option<CatalogSource> {
        self.source
    }
}

/// A call for an early look at the upstream's catalog: a tool the upstream
/// added since the last listing is learned within the learner's shortest
/// refresh, not at
/// the listing's `ttlMs` (up to an hour). Set from the request path (a
/// flag and an unpark: no lock, no allocation), read by the learning
/// thread.
#[derive(Debug, Default)]
pub struct Relearn {
    requested: std::sync::atomic::AtomicBool,
    learner: std::sync::OnceLock<std::thread::Thread>,
    /// The route went out of service at a reload: the learner ends.
    #[cfg(feature = "server")]
    retired: std::sync::atomic::AtomicBool,
}

impl Relearn {
    /// Asks for the catalog again; repeated calls before the learner runs
    /// are one request.
    pub fn request(&self) {
        if !self
            .requested
            .swap(true, std::sync::atomic::Ordering::AcqRel)
            && let Some(learner) = self.learner.get()
        {
            learner.unpark();
        }
    }

    /// Ends the learner at its next turn (woken now), without another
    /// look at the upstream.
    #[cfg(feature = "server")]
    pub fn retire(&self) {
        self.retired
            .store(true, std::sync::atomic::Ordering::Release);
        self.request();
    }

    /// [`Relearn::retire`] was called.
    #[cfg(feature = "server")]
    pub fn is_retired(&self) -> bool {
        self.retired.load(std::sync::atomic::Ordering::Acquire)
    }

    /// Registers the calling thread as the learner that [`Relearn::request`]
    /// wakes.
    #[cfg(feature = "server")]
    pub fn register_learner(&self) {
        let _ = self.learner.set(std::thread::current());
    }

    /// Sleeps `wait`, or less when a request comes or came while the
    /// learner was busy (the flag keeps it until read).
    #[cfg(feature = "server")]
    pub fn sleep(&self, wait: std::time::Duration) {
        let deadline = std::time::Instant::now() + wait;
        loop {
            if self
                .requested
                .swap(false, std::sync::atomic::Ordering::AcqRel)
            {
                return;
            }
            let left = deadline.saturating_duration_since(std::time::Instant::now());
            if left.is_zero() {
                return;
            }
            // May wake early (spuriously or by a request): the loop decides.
            std::thread::park_timeout(left);
        }
    }
}

/// The Tool array of a catalog document.
pub fn tool_list(document: &Value) -> Option<&Vec<Value>> {
    match document {
        Value::Array(tools) => Some(tools),
        Value::Object(object) => object
            .get("tools")
            .or_else(|| object.get("result").and_then(|r| r.get("tools")))
            .and_then(Value::as_array),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn a_broken_tool_is_refused_and_its_neighbours_stay() {
        let tools = json!({"tools": [
            {"name": "good", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}}},
            {"name": "bad_schema", "inputSchema": {"type": "object", "properties": {"a": {"type": 7}}}},
            {"name": "bad_format", "inputSchema": {"type": "object", "properties": {"a": {"type": "string", "format": "no-such-format"}}}},
            {"name": "bad_default", "inputSchema": {"type": "object", "properties": {"a": {"type": "integer", "default": "x"}}}},
            {"name": "bad_header", "inputSchema": {"type": "object", "properties": {"a": {"type": "number", "x-mcp-header": "A"}}}},
            {"name": "bad_output", "inputSchema": {"type": "object"}, "outputSchema": {"type": "nope"}},
            {"name": "good", "inputSchema": {"type": "object"}},
            {"inputSchema": {"type": "object"}},
            {"name": "not_object", "inputSchema": {"type": "string"}}
        ]});
        let catalog =
            Catalog::from_json(&tools, CatalogSource::File, &CatalogOptions::default()).unwrap();
        assert_eq!(catalog.names().collect::<Vec<_>>(), ["good"]);
        let refused: Vec<&str> = catalog.refused().iter().map(|r| r.tool.as_str()).collect();
        assert_eq!(
            refused,
            [
                "bad_schema",
                "bad_format",
                "bad_default",
                "bad_header",
                "bad_output",
                "good",
                "(unnamed #7)",
                "not_object"
            ]
        );
        assert!(catalog.refused()[2].reason.contains("/properties/a"));
    }

    #[test]
    fn a_catalog_is_read_from_a_result_a_response_or_an_array() {
        let tool = json!({"name": "t", "inputSchema": {"type": "object"}});
        for document in [
            json!({"tools": [tool]}),
            json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [tool]}}),
            json!([tool]),
        ] {
            let catalog =
                Catalog::from_json(&document, CatalogSource::File, &CatalogOptions::default())
                    .unwrap();
            assert!(catalog.get("t").is_some());
        }
        assert_eq!(
            Catalog::from_json(
                &json!({"x": 1}),
                CatalogSource::File,
                &CatalogOptions::default()
            )
            .unwrap_err(),
            CatalogError::Shape
        );
    }
}
