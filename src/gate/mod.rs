//! The gate: every stage a message passes through, without a socket.
//!
//! `Gate::check(headers, body)` runs the stages in ARCHITECTURE.md, "The pipeline" order —
//! wire (body limit), parse, classify, lane, header binding, dispatch,
//! message schema — each a phase-named function that passes the message on
//! or refuses it through the one rejection sender.

pub mod binding;
pub mod dispatch;
pub mod fields;
pub mod headers;
pub mod lane;
pub mod normalize;
pub mod sse;
pub mod value;
pub mod watch;

use crate::{classify, distill, parse};
use std::cell::RefCell;
use std::ops::ControlFlow;
use std::sync::Arc;

use arc_swap::ArcSwap;
use bytes::Bytes;

use crate::classify::{Classified, Kind, RequestId};
use crate::distill::{Collector, Distilled, Keyword, LocationReport, PathToken, Problem};
use crate::parse::{ParseError, ParseLimits, Parser, TapeNode};
use dispatch::{Reads, Root, RootSet};
pub use fields::FieldError;
pub use headers::RequestHeaders;
use lane::LaneRefusal;

use crate::catalog::{Catalog, CatalogOptions, CatalogSource, Relearn};
use crate::protocol::{CompileRootError, Lane, Revision, RootKind, SchemaDocument};
use crate::reject::codes::DataKey;
use crate::reject::dialect::ToolError;
use crate::reject::envelope::DataValue;
use crate::reject::normalized;
use crate::reject::out::with_arena;
use crate::reject::{Reason, Rejection, Rejections};
pub use crate::reject::{RefusalStatus, RefusalStatusError};

/// What a gate is built from: [`GateConfig::default`], or
/// [`GateConfig::builder`] to change some of it. Its fields are read
/// as they are; new ones may come in a minor version, so it is built only
/// through those two.
///
/// ```
/// use mcpgate::{GateConfig, UnknownTools};
///
/// let config = GateConfig::builder()
///     .body_limit(64 * 1024)
///     .unknown_tools(UnknownTools::Forward)
///     .build();
/// assert_eq!(config.body_limit, 64 * 1024);
/// assert_eq!(config.max_depth, GateConfig::default().max_depth);
/// ```
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct GateConfig {
    /// The revisions served; a request naming another is refused (-32022).
    pub revisions: Vec<Revision>,
    /// The largest body taken, in bytes (413 above it).
    pub body_limit: usize,
    /// The deepest nesting of arrays and objects taken.
    pub max_depth: usize,
    /// What a call of a tool the catalog lacks gets; `None`: refused when
    /// there is a catalog, forwarded when there is none.
    pub unknown_tools: Option<UnknownTools>,
    /// How tools are registered when the catalog is learned.
    pub catalog: CatalogOptions,
    /// Whether `tools/list` answers passing through (and, for `serve`, the
    /// upstream's own `tools/list`) become the catalog when no file gives it.
    pub learn_catalog: bool,
    /// Whether, with `learn_catalog`, a `tools/list` answer passing through
    /// replaces the catalog. Off where callers are told apart (`serve`
    /// with OAuth or bearer tokens): an upstream may list tools per
    /// caller, and one caller's listing must not decide what another may
    /// call; the catalog then comes only from a file or from a listing of
    /// the gateway's own (the embedder's: [`Gate::set_catalog`]).
    pub learn_from_answers: bool,
    /// Whether a `tools/call` waits for a catalog: until one is set, it is
    /// refused ([`Reason::CatalogUnknown`], 503) instead of let through
    /// unchecked, unless `unknown_tools` is [`UnknownTools::Forward`].
    /// `serve` sets it when it learns the catalog from its upstream; off
    /// (the default), a gate without a catalog lets every call through.
    pub await_catalog: bool,
    /// Pre-flight normalization of `tools/call` arguments against the
    /// tool's schema before the value gate (the envelope contract's
    /// `MCP_SCHEMA_KEY_NORMALIZATION_ENABLED`).
    pub normalization: bool,
    /// Whether what normalization did is told in `_meta.normalized`: in a
    /// refused call's envelope and, relayed by `serve`, in the upstream's
    /// answer (`MCP_SCHEMA_KEY_NORMALIZATION_META`).
    pub normalization_meta: bool,
    /// The HTTP status a refusal that answers a request goes with:
    /// [`RefusalStatus::Rpc`] (the default) as MCP servers answer, 200 for
    /// most; [`RefusalStatus::Http`] the row's own, 400 for any malformed
    /// message.
    pub refusal_status: RefusalStatus,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            revisions: Revision::ALL.to_vec(),
            body_limit: 4 * 1024 * 1024,
            max_depth: 64,
            unknown_tools: None,
            catalog: CatalogOptions::default(),
            learn_catalog: true,
            learn_from_answers: true,
            await_catalog: false,
            normalization: true,
            normalization_meta: false,
            refusal_status: RefusalStatus::Rpc,
        }
    }
}

impl GateConfig {
    /// A builder starting from [`GateConfig::default`].
    pub fn builder() -> GateConfigBuilder {
        GateConfigBuilder {
            config: GateConfig::default(),
        }
    }
}

/// Builds a [`GateConfig`]: each setting left alone keeps its default.
#[derive(Clone, Debug)]
#[must_use = "a builder does nothing until `build` is called"]
pub struct GateConfigBuilder {
    config: GateConfig,
}

impl GateConfigBuilder {
    /// The revisions served ([`GateConfig::revisions`]).
    pub fn revisions(mut self, revisions: impl Into<Vec<Revision>>) -> Self {
        self.config.revisions = revisions.into();
        self
    }

    /// The largest body taken, in bytes ([`GateConfig::body_limit`]).
    pub fn body_limit(mut self, bytes: usize) -> Self {
        self.config.body_limit = bytes;
        self
    }

    /// The deepest nesting taken ([`GateConfig::max_depth`]).
    pub fn max_depth(mut self, depth: usize) -> Self {
        self.config.max_depth = depth;
        self
    }

    /// What a call of a tool the catalog lacks gets
    /// ([`GateConfig::unknown_tools`]).
    pub fn unknown_tools(mut self, policy: UnknownTools) -> Self {
        self.config.unknown_tools = Some(policy);
        self
    }

    /// How tools are registered when the catalog is learned
    /// ([`GateConfig::catalog`]).
    pub fn catalog(mut self, options: CatalogOptions) -> Self {
        self.config.catalog = options;
        self
    }

    /// Whether `tools/list` answers become the catalog
    /// ([`GateConfig::learn_catalog`]).
    pub fn learn_catalog(mut self, on: bool) -> Self {
        self.config.learn_catalog = on;
        self
    }

    /// Whether a `tools/list` answer passing through replaces the catalog
    /// ([`GateConfig::learn_from_answers`]).
    pub fn learn_from_answers(mut self, on: bool) -> Self {
        self.config.learn_from_answers = on;
        self
    }

    /// Whether a `tools/call` waits for a catalog
    /// ([`GateConfig::await_catalog`]).
    pub fn await_catalog(mut self, on: bool) -> Self {
        self.config.await_catalog = on;
        self
    }

    /// Pre-flight normalization of `tools/call` arguments
    /// ([`GateConfig::normalization`]).
    pub fn normalization(mut self, on: bool) -> Self {
        self.config.normalization = on;
        self
    }

    /// Whether what normalization did is told in `_meta.normalized`
    /// ([`GateConfig::normalization_meta`]).
    pub fn normalization_meta(mut self, on: bool) -> Self {
        self.config.normalization_meta = on;
        self
    }

    /// The HTTP status a refusal that answers a request goes with
    /// ([`GateConfig::refusal_status`]).
    pub fn refusal_status(mut self, status: RefusalStatus) -> Self {
        self.config.refusal_status = status;
        self
    }

    /// The configuration.
    pub fn build(self) -> GateConfig {
        self.config
    }
}

/// The policy for a `tools/call` naming a tool the catalog lacks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum UnknownTools {
    /// `-32602` naming the tool.
    Reject,
    /// Let it through: the upstream decides.
    Forward,
}

impl std::str::FromStr for UnknownTools {
    type Err = UnknownToolsError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "reject" => Ok(UnknownTools::Reject),
            "forward" => Ok(UnknownTools::Forward),
            other => Err(UnknownToolsError(other.to_owned())),
        }
    }
}

/// A policy name that is neither `reject` nor `forward` (the name given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown policy {0:?} (expected \"reject\" or \"forward\")")]
pub struct UnknownToolsError(pub String);

/// The gate's answer to one message.
#[derive(Debug)]
pub enum Verdict<'g> {
    /// Let it through: forward it (or answer 202 when no response is due).
    Allow(Allowed<'g>),
    /// Refuse it: send the rejection as it is.
    Reject(Rejection),
}

/// A message the gate lets through, with what forwarding needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed<'g> {
    /// What the message is: a request, a notification, a client's answer.
    pub kind: Kind,
    /// The revision it speaks: the one `MCP-Protocol-Version` names (on
    /// 2026-07-28, `_meta` names the same), 2025-03-26 without the header.
    pub revision: Revision,
    /// The method, for requests and notifications.
    pub method: Option<&'g str>,
    /// The request id, JSON-encoded, for answers the forwarder builds
    /// itself (an unreachable upstream, say).
    pub id: Option<RequestId>,
    /// Whether the answer is worth reading once relayed
    /// ([`Gate::watch_answer`]).
    pub watch: Option<watch::Watch>,
    /// The message to forward instead of the body checked, when
    /// normalization changed the arguments: the body with only
    /// `params.arguments` replaced, itself checked by the whole gate.
    /// `None`: forward the body as it was sent.
    pub forward: Option<Bytes>,
    /// What normalization did (the contract's `_meta.normalized` array, as
    /// JSON), when it did or reported anything.
    pub normalized: Option<Bytes>,
}

impl Allowed<'_> {
    /// A notification or a client's answer: the transport replies 202.
    pub fn expects_response(&self) -> bool {
        self.kind == Kind::Request
    }
}

/// Per-worker buffers, reused from message to message.
#[derive(Default)]
pub struct Scratch {
    parser: Parser,
    /// Keep what a large body grew until [`Scratch::release`] (a worker
    /// with a reclaim task), so that a burst of large bodies is parsed into
    /// the same pages instead of faulting fresh ones in for each.
    hold_large: bool,
    /// Holds what a body over [`Scratch::KEEP_BODY`] grew.
    grown: bool,
}

impl Scratch {
    /// Bodies up to this size leave the buffers they grew for the next
    /// message. A larger one grew them to several times its size (the
    /// body's copy, a tape node per value, simd-json's structural index):
    /// they are given back once it is answered, so that a burst of large
    /// bodies does not keep its peak for the life of the worker.
    pub const KEEP_BODY: usize = 64 * 1024;

    /// Scratch buffers that keep what a large body grew until
    /// [`Scratch::release`] is called.
    pub fn holding_large() -> Scratch {
        Scratch {
            hold_large: true,
            ..Scratch::default()
        }
    }

    /// Gives back what a body over [`Scratch::KEEP_BODY`] grew.
    pub fn release(&mut self) {
        if std::mem::take(&mut self.grown) {
            self.parser = Parser::default();
        }
    }

    /// After a body: gives back what it grew, or notes it for
    /// [`Scratch::release`].
    fn release_after(&mut self, body_len: usize) {
        if body_len > Self::KEEP_BODY {
            self.grown = true;
            if !self.hold_large {
                self.release();
            }
        }
    }
}

/// Makes [`Gate::check`] on this thread keep what a large body grew until
/// [`release_thread_scratch`]: for a server worker whose reclaim task
/// calls it once a burst of large bodies is over.
#[cfg(feature = "server")]
pub(crate) fn hold_thread_scratch() {
    SCRATCH.with(|scratch| scratch.borrow_mut().hold_large = true);
}

/// Gives back what large bodies grew in this thread's scratch buffers.
#[cfg(feature = "server")]
pub(crate) fn release_thread_scratch() {
    SCRATCH.with(|scratch| {
        if let Ok(mut scratch) = scratch.try_borrow_mut() {
            scratch.release();
        }
    });
}

/// The gate: the compiled roots of the served revisions, the catalog in
/// service and the rejection counters. Built once ([`Gate::new`]) and
/// shared by every thread that checks messages ([`Gate::check`]).
pub struct Gate {
    config: GateConfig,
    /// The revisions served, for `data.supported`.
    supported: Vec<&'static str>,
    /// The served revisions a request names per message (`_meta`): what a
    /// 2026-07-28-style request is told it may use.
    supported_per_request: Vec<&'static str>,
    modern: RootSet,
    legacy: RootSet,
    catalog: ArcSwap<Catalog>,
    /// Asks the catalog's learner (if any) to look again.
    relearn: Arc<Relearn>,
    rejections: Rejections,
    watched: watch::Watched,
}

impl std::fmt::Debug for Gate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Gate")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

thread_local! {
    static SCRATCH: RefCell<Scratch> = RefCell::new(Scratch::default());
    /// The schema phase's collector, kept with its capacity: a refusal in
    /// steady state allocates nothing to explain itself.
    static COLLECTOR: RefCell<Collector> = RefCell::new(Collector::with_flag(is_envelope_problem));
}

impl Gate {
    /// Compiles every root of the served revisions.
    ///
    /// ```
    /// use mcpgate::{Gate, GateConfig, Revision};
    ///
    /// let gate = Gate::new(GateConfig::builder().revisions([Revision::ALL[0]]).build())?;
    /// assert_eq!(gate.config().revisions, [Revision::ALL[0]]);
    /// assert!(gate.catalog().is_empty());
    /// # Ok::<(), mcpgate::CompileRootError>(())
    /// ```
    pub fn new(config: GateConfig) -> Result<Gate, CompileRootError> {
        let serves = |lane| config.revisions.iter().any(|r| r.lane() == lane);
        let modern = if serves(Lane::Modern) {
            RootSet::compile(SchemaDocument::Mcp2026_07_28)?
        } else {
            RootSet::default()
        };
        let legacy = if serves(Lane::Legacy) {
            RootSet::compile(SchemaDocument::Mcp2025_11_25)?
        } else {
            RootSet::default()
        };
        let supported = config.revisions.iter().map(|r| r.as_str()).collect();
        let supported_per_request = config
            .revisions
            .iter()
            .filter(|r| r.lane() == Lane::Modern)
            .map(|r| r.as_str())
            .collect();
        let rejections = Rejections::new(config.refusal_status);
        Ok(Gate {
            config,
            supported,
            supported_per_request,
            modern,
            legacy,
            catalog: ArcSwap::from_pointee(Catalog::default()),
            relearn: Arc::default(),
            rejections,
            watched: watch::Watched::default(),
        })
    }

    /// Puts `catalog` in service; calls being checked finish with the one
    /// they started with.
    ///
    /// ```
    /// use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig};
    /// use serde_json::json;
    ///
    /// let gate = Gate::new(GateConfig::default())?;
    /// let tools = json!([{"name": "echo", "inputSchema": {"type": "object"}}]);
    /// gate.set_catalog(Catalog::from_json(&tools, CatalogSource::File, &CatalogOptions::default())?);
    /// assert_eq!(gate.catalog().names().collect::<Vec<_>>(), ["echo"]);
    /// # Ok::<(), Box<dyn std::error::Error>>(())
    /// ```
    pub fn set_catalog(&self, catalog: Catalog) {
        self.catalog.store(Arc::new(catalog));
    }

    /// The catalog in service.
    pub fn catalog(&self) -> Arc<Catalog> {
        self.catalog.load_full()
    }

    /// What a call of a tool the catalog lacks signals to whoever learns
    /// the catalog from the upstream.
    #[cfg(feature = "server")]
    pub(crate) fn relearn(&self) -> &Arc<Relearn> {
        &self.relearn
    }

    /// What the gate was built from.
    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// The rejection counters.
    pub fn rejections(&self) -> &Rejections {
        &self.rejections
    }

    /// Checks one message with this thread's scratch buffers. `body` is
    /// checked as given: a frontend that forwards it must forward those
    /// bytes, so a request with a `Content-Encoding` other than `identity`
    /// is the frontend's to refuse (as `mcpgate serve` does, 415) or to
    /// decode and forward decoded.
    ///
    /// ```
    /// use mcpgate::{Gate, GateConfig, Kind, Reason, Verdict};
    ///
    /// let gate = Gate::new(GateConfig::default())?;
    /// let headers = [("MCP-Protocol-Version", "2026-07-28"), ("Mcp-Method", "tools/list")];
    /// let list = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{
    ///     "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///     "io.modelcontextprotocol/clientCapabilities":{}}}}"#;
    /// let Verdict::Allow(allowed) = gate.check(&headers[..], list) else {
    ///     panic!("a tools/list was refused");
    /// };
    /// assert_eq!(allowed.kind, Kind::Request);
    /// let Verdict::Reject(rejection) = gate.check(&headers[..], b"{not json") else {
    ///     panic!("a broken body was allowed");
    /// };
    /// assert_eq!((rejection.status, rejection.reason), (400, Reason::MalformedJson));
    /// # Ok::<(), mcpgate::CompileRootError>(())
    /// ```
    pub fn check(&self, headers: &(impl RequestHeaders + ?Sized), body: &[u8]) -> Verdict<'_> {
        SCRATCH.with(|scratch| self.check_with(&mut scratch.borrow_mut(), headers, body))
    }

    /// Checks one message with this thread's scratch buffers, and asks
    /// `permit` whether the caller may call the tool a `tools/call` names
    /// (`false`: refused as [`Reason::InsufficientScope`], before its
    /// arguments are checked, with or without a catalog). `permit` is given
    /// the name as sent: where the upstream matches names loosely, it
    /// should match them so too (`mcpgate serve` trims whitespace around
    /// the name and ignores case).
    ///
    /// ```
    /// use mcpgate::{Gate, GateConfig, Reason, Verdict};
    ///
    /// let gate = Gate::new(GateConfig::default())?;
    /// let call = |name: &str| {
    ///     let headers = [
    ///         ("MCP-Protocol-Version", "2026-07-28"),
    ///         ("Mcp-Method", "tools/call"),
    ///         ("Mcp-Name", name),
    ///     ];
    ///     let body = format!(
    ///         r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"_meta":{{
    ///         "io.modelcontextprotocol/protocolVersion":"2026-07-28",
    ///         "io.modelcontextprotocol/clientCapabilities":{{}}}},
    ///         "name":"{name}","arguments":{{}}}}}}"#
    ///     );
    ///     // This caller may call `search` only.
    ///     match gate.check_permitted(&headers[..], body.as_bytes(), &|tool| tool == "search") {
    ///         Verdict::Allow(_) => None,
    ///         Verdict::Reject(rejection) => Some((rejection.status, rejection.reason)),
    ///     }
    /// };
    /// assert_eq!(call("search"), None);
    /// assert_eq!(call("delete"), Some((403, Reason::InsufficientScope)));
    /// # Ok::<(), mcpgate::CompileRootError>(())
    /// ```
    pub fn check_permitted(
        &self,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
        permit: &dyn Fn(&str) -> bool,
    ) -> Verdict<'_> {
        SCRATCH.with(|scratch| {
            self.check_inner(&mut scratch.borrow_mut(), headers, body, Some(permit))
        })
    }

    /// Checks one message with the caller's scratch buffers.
    pub fn check_with(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
    ) -> Verdict<'_> {
        self.check_inner(scratch, headers, body, None)
    }

    fn check_inner(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
        permit: Option<&dyn Fn(&str) -> bool>,
    ) -> Verdict<'_> {
        let passed = self.pass(scratch, headers, body, Pass::First, permit);
        // Released before the verdict is made of what the pass gave (a
        // second pass releases what it grows itself): a verdict is larger
        // than a register, and one kept across a call is copied out and
        // back.
        scratch.release_after(body.len());
        match passed {
            Ok(Passed::Allowed(allowed)) => Verdict::Allow(allowed),
            Err(rejection) => Verdict::Reject(rejection),
            Ok(Passed::Normalized { body, events }) => {
                self.check_normalized(scratch, headers, body, events, permit)
            }
        }
    }

    /// A call normalization changed: the message as it will be forwarded
    /// passes the whole gate again.
    #[cold]
    fn check_normalized(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: Vec<u8>,
        events: Bytes,
        permit: Option<&dyn Fn(&str) -> bool>,
    ) -> Verdict<'_> {
        let passed = self.pass(scratch, headers, &body, Pass::Again(&events), permit);
        scratch.release_after(body.len());
        match passed {
            Ok(Passed::Allowed(mut allowed)) => {
                allowed.forward = Some(body.into());
                allowed.normalized = Some(events);
                Verdict::Allow(allowed)
            }
            Err(rejection) => Verdict::Reject(rejection),
            Ok(Passed::Normalized { .. }) => unreachable!("a second pass does not normalize"),
        }
    }

    fn pass(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
        pass: Pass<'_>,
        permit: Option<&dyn Fn(&str) -> bool>,
    ) -> Result<Passed<'_>, Rejection> {
        self.wire_phase(headers, body)?;
        let document = self.parse_phase(&mut scratch.parser, body)?;
        let message = classify::classify(document.root());
        self.classify_phase(&message)?;
        let revision = self.lane_phase(headers, &message)?;
        // The member `Mcp-Name` mirrors (a `tools/call`'s `params.name`),
        // looked up once for the binding and value phases.
        let named = binding::named(&message);
        self.binding_phase(headers, &message, named, revision.lane() == Lane::Modern)?;
        if !(message.kind == Kind::Request && message.method == Some("tools/call")) {
            // Only a call's tool annotates arguments: any `Mcp-Param-*`
            // here mirrors nothing the gate could check.
            self.mirrored_params(headers, &message, &|_| false)?;
        }
        let (method, root) = self.dispatch_phase(revision, &message)?;
        self.schema_phase(root, document.root(), &message, named)?;
        if let Some(key) = message.members.aliased {
            return Err(self.refuse_aliased(&message, key));
        }
        let (watch, normalized) = match (message.kind, method) {
            (Kind::Request, Some("tools/call")) => {
                if let Some(permit) = permit
                    && !permit(named.and_then(|n| n.as_str()).unwrap_or_default())
                {
                    return Err(self.rejections.send(
                        Reason::InsufficientScope,
                        Some(&message),
                        Some("Forbidden: the token lacks a scope this tool needs"),
                        &[],
                    ));
                }
                match self.value_phase(headers, revision, &message, named, body, pass)? {
                    Valued::Allowed { watch, normalized } => (watch, normalized),
                    Valued::Normalized { body, events } => {
                        return Ok(Passed::Normalized { body, events });
                    }
                }
            }
            (Kind::Request, Some("tools/list"))
                if self.config.learn_from_answers
                    && message.params.and_then(|p| p.get("cursor")).is_none() =>
            {
                (Some(watch::Watch::ToolsList), None)
            }
            _ => (None, None),
        };
        Ok(Passed::Allowed(Allowed {
            kind: message.kind,
            revision,
            method,
            id: message.into_echoed_id(),
            watch,
            forward: None,
            normalized,
        }))
    }

    fn wire_phase(
        &self,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
    ) -> Result<(), Rejection> {
        if let Some(error) = headers.field_error() {
            return Err(self.refuse_field(error));
        }
        if body.len() <= self.config.body_limit {
            return Ok(());
        }
        Err(with_arena(|arena| {
            let message = body_too_large_message(arena, self.config.body_limit);
            self.rejections
                .send(Reason::BodyTooLarge, None, Some(&message), &[])
        }))
    }

    /// A header field held twice, joined, missing or nominated (what the
    /// server refuses in the head, and what [`RequestHeaders::field_error`]
    /// reports for maps that keep every copy): 400, naming the field.
    pub(crate) fn refuse_field(&self, error: FieldError) -> Rejection {
        with_arena(|arena| {
            let (message, header) = match error {
                FieldError::Repeated(name) => (
                    bumpalo::format!(in arena, "Bad Request: the {} header must be sent once, with one value", name),
                    Some(name),
                ),
                FieldError::MissingHost => (
                    bumpalo::collections::String::from_str_in(
                        "Bad Request: an HTTP/1.1 request must carry a Host header",
                        arena,
                    ),
                    None,
                ),
                FieldError::Nominated(name) => (
                    bumpalo::format!(in arena, "Bad Request: the Connection header may not name {}", name),
                    Some(name),
                ),
                FieldError::Underscored(name) => (underscored_message(arena, name), Some(name)),
            };
            let data = header.map(|name| (DataKey::Header, DataValue::Text(name.as_bytes())));
            self.rejections
                .send(error.reason(), None, Some(&message), data.as_slice())
        })
    }

    /// A header spelled with `_` for `-` that names `header`, which the
    /// gateway sets or checks (the server's configured identity headers
    /// included): 400, naming `header`. Never the name as sent.
    #[cfg(feature = "server")]
    pub(crate) fn refuse_underscored(&self, header: &str) -> Rejection {
        with_arena(|arena| {
            let message = underscored_message(arena, header);
            self.rejections.send(
                Reason::UnderscoredHeader,
                None,
                Some(&message),
                &[(DataKey::Header, DataValue::Text(header.as_bytes()))],
            )
        })
    }

    fn parse_phase<'p>(
        &self,
        parser: &'p mut Parser,
        body: &'p [u8],
    ) -> Result<parse::Document<'p>, Rejection> {
        let limits = ParseLimits {
            max_depth: self.config.max_depth,
        };
        let refuse = |reason, message: &str| self.rejections.send(reason, None, Some(message), &[]);
        let document = parser.parse(body, limits).map_err(|error| match error {
            ParseError::Malformed => {
                refuse(Reason::MalformedJson, "Parse error: body is not valid JSON")
            }
            ParseError::DuplicateKey => refuse(
                Reason::DuplicateKey,
                "Invalid Request: an object has the same key twice",
            ),
            ParseError::TooDeep { limit } => with_arena(|arena| {
                refuse(
                    Reason::TooDeep,
                    &bumpalo::format!(in arena, "Invalid Request: nesting deeper than {} levels", limit),
                )
            }),
        })?;
        if document.root().kind() == parse::NodeKind::Array {
            return Err(refuse(
                Reason::Batch,
                "Invalid Request: batches are not supported",
            ));
        }
        Ok(document)
    }

    /// Refuses a body that is neither a request nor a notification nor a
    /// client's answer. It reads the classified message where the pass
    /// keeps it rather than handing it back: the message is large, and a
    /// move of it is a copy.
    fn classify_phase(&self, message: &Classified<'_>) -> Result<(), Rejection> {
        let refusal = match message.kind {
            Kind::UnidentifiedRequest => (
                Reason::UnidentifiedRequest,
                "Invalid Request: id must be a string or an integer",
            ),
            Kind::Unknown => (
                Reason::UnknownMessage,
                "Invalid Request: not a JSON-RPC request or notification",
            ),
            _ => return Ok(()),
        };
        Err(self
            .rejections
            .send(refusal.0, Some(message), Some(refusal.1), &[]))
    }

    fn lane_phase<'a>(
        &self,
        headers: &'a (impl RequestHeaders + ?Sized),
        message: &Classified<'a>,
    ) -> Result<Revision, Rejection> {
        let header = headers.header(headers::names::PROTOCOL_VERSION);
        let refusal = match lane::select(header, &self.config.revisions) {
            Ok(revision) => {
                if revision.lane() == Lane::Modern
                    && matches!(message.kind, Kind::Result | Kind::Error)
                {
                    // Stateless: no server request a client could answer.
                    return Err(self.rejections.send(
                        Reason::UnknownMessage,
                        Some(message),
                        Some("Invalid Request: responses are not accepted on the 2026-07-28 lane"),
                        &[],
                    ));
                }
                match lane::check_protocol_fields(revision, message, header) {
                    Ok(()) => return Ok(revision),
                    Err(refusal) => refusal,
                }
            }
            Err(refusal) => refusal,
        };
        Err(self.refuse_lane(message, refusal))
    }

    /// The versions an unsupported-version answer lists: a request that
    /// names its version in `_meta` (the 2026-07-28 way) is told the
    /// revisions it can name there; others every revision served.
    fn supported_for(&self, message: &Classified<'_>) -> &[&'static str] {
        let per_request = message
            .members
            .meta
            .and_then(|m| m.get(lane::META_PROTOCOL_VERSION))
            .is_some();
        if per_request && !self.supported_per_request.is_empty() {
            &self.supported_per_request
        } else {
            &self.supported
        }
    }

    fn refuse_lane(&self, message: &Classified<'_>, refusal: LaneRefusal<'_>) -> Rejection {
        match refusal {
            LaneRefusal::Unsupported { requested } => self.rejections.send(
                Reason::UnsupportedProtocolVersion,
                Some(message),
                Some("Unsupported protocol version"),
                &[
                    (
                        DataKey::Supported,
                        DataValue::Texts(self.supported_for(message)),
                    ),
                    (DataKey::Requested, DataValue::Text(requested)),
                ],
            ),
            LaneRefusal::VersionMismatch { body, header } => {
                let mut data = vec![
                    (
                        DataKey::Header,
                        DataValue::Text(headers::names::PROTOCOL_VERSION.as_bytes()),
                    ),
                    (DataKey::Expected, DataValue::Text(body.as_bytes())),
                ];
                if let Some(header) = header {
                    data.push((DataKey::Received, DataValue::Text(header)));
                }
                let text = match header {
                    Some(_) => {
                        "Header mismatch: MCP-Protocol-Version does not match the protocol version in params._meta"
                    }
                    None => "Header mismatch: MCP-Protocol-Version is required but absent",
                };
                self.rejections
                    .send(Reason::HeaderMismatch, Some(message), Some(text), &data)
            }
            LaneRefusal::ProtocolField(problem) => {
                let text = match problem.missing {
                    Some(name) => {
                        distill::cut_at_echo_bound(&format!("missing required property '{name}'"))
                            .into_owned()
                    }
                    None => format!(
                        "expected {}, found {}",
                        problem.expected,
                        problem.found.map(lane::kind_name).unwrap_or("nothing")
                    ),
                };
                let summary = format!("Invalid params: {text} at {}", problem.pointer);
                let report = [LocationReport {
                    pointer: problem.pointer.to_owned(),
                    received_type: problem.found.map(lane::kind_name).unwrap_or("object"),
                    problems: vec![Problem::plain(
                        if problem.missing.is_some() {
                            Keyword::Required
                        } else {
                            Keyword::Type
                        },
                        text,
                    )],
                    path: Vec::new(),
                }];
                self.rejections.send(
                    Reason::ProtocolField,
                    Some(message),
                    Some(&summary),
                    &[
                        (DataKey::Errors, DataValue::Locations(&report)),
                        (DataKey::Total, DataValue::Count(1)),
                    ],
                )
            }
        }
    }

    fn binding_phase<'a>(
        &self,
        headers: &'a (impl RequestHeaders + ?Sized),
        message: &Classified<'a>,
        named: Option<TapeNode<'a>>,
        lane_requires: bool,
    ) -> Result<(), Rejection> {
        match binding::check(message, named, headers, lane_requires) {
            Ok(()) => Ok(()),
            Err(mismatch) => Err(self.refuse_mismatch(Reason::HeaderMismatch, message, &mismatch)),
        }
    }

    /// Every `Mcp-Param-*` header sent must be one `mirrored` accepts (an
    /// annotation of the called tool, checked against its argument).
    fn mirrored_params<'a>(
        &self,
        headers: &'a (impl RequestHeaders + ?Sized),
        message: &Classified<'a>,
        mirrored: &dyn Fn(&str) -> bool,
    ) -> Result<(), Rejection> {
        match headers.unmirrored_param(mirrored) {
            None => Ok(()),
            Some(header) => Err(self.refuse_mismatch(
                Reason::ParamHeaderMismatch,
                message,
                &binding::Mismatch {
                    header,
                    expected: None,
                    received: headers.header(header).map(std::borrow::Cow::Borrowed),
                    cause: binding::MismatchCause::Unmirrored,
                },
            )),
        }
    }

    /// `params` holding a member the gate reads in another case (beside it
    /// or instead of it): 400 `-32602`, id echoed. What the gate checked
    /// and what a loosely matching upstream would read could differ.
    #[cold]
    fn refuse_aliased(&self, message: &Classified<'_>, key: &str) -> Rejection {
        with_arena(|arena| {
            let text = bumpalo::format!(
                in arena,
                "Invalid params: params.{} is a member the gateway reads spelled in another case; send it once, spelled as the protocol spells it",
                distill::cut_at_echo_bound(key)
            );
            self.rejections
                .send(Reason::AliasedMember, Some(message), Some(&text), &[])
        })
    }

    /// A header that does not mirror the body: 400 `-32020`.
    fn refuse_mismatch(
        &self,
        reason: Reason,
        message: &Classified<'_>,
        mismatch: &binding::Mismatch<'_>,
    ) -> Rejection {
        let mut data: smallvec::SmallVec<[(DataKey, DataValue<'_>); 3]> =
            smallvec::smallvec![(DataKey::Header, DataValue::Text(mismatch.header.as_bytes()))];
        if let Some(expected) = mismatch.expected.as_deref() {
            data.push((DataKey::Expected, DataValue::Text(expected.as_bytes())));
        }
        if let Some(received) = mismatch.received.as_deref() {
            data.push((DataKey::Received, DataValue::Text(received)));
        }
        with_arena(|arena| {
            let text = bumpalo::format!(
                in arena,
                "Header mismatch: {} {}",
                distill::cut_at_echo_bound(mismatch.header),
                mismatch.cause.describe()
            );
            self.rejections
                .send(reason, Some(message), Some(&text), &data)
        })
    }

    #[inline]
    fn dispatch_phase(
        &self,
        revision: Revision,
        message: &Classified<'_>,
    ) -> Result<(Option<&str>, &Root), Rejection> {
        let roots = match revision.lane() {
            Lane::Modern => &self.modern,
            Lane::Legacy => &self.legacy,
        };
        let method = message.method.unwrap_or_default();
        let kind = match message.kind {
            Kind::Request => RootKind::Request(method),
            Kind::Notification => RootKind::Notification(method),
            Kind::Result => RootKind::Result,
            Kind::Error => RootKind::Error,
            Kind::UnidentifiedRequest | Kind::Unknown => {
                unreachable!("refused by the classify phase")
            }
        };
        roots
            .select(kind)
            .ok_or_else(|| self.refuse_method(revision, message, method))
    }

    /// A method the revision does not have.
    #[cold]
    #[inline(never)]
    fn refuse_method(
        &self,
        revision: Revision,
        message: &Classified<'_>,
        method: &str,
    ) -> Rejection {
        let reason = match revision.lane() {
            Lane::Modern => Reason::MethodNotFound,
            Lane::Legacy => Reason::MethodNotFoundLegacy,
        };
        with_arena(|arena| {
            let text = bumpalo::format!(
                in arena,
                "Method not found: {} is not a {} method",
                distill::cut_at_echo_bound(method),
                revision.as_str()
            );
            self.rejections
                .send(reason, Some(message), Some(&text), &[])
        })
    }

    fn schema_phase(
        &self,
        root: &Root,
        instance: TapeNode<'_>,
        message: &Classified<'_>,
        named: Option<TapeNode<'_>>,
    ) -> Result<(), Rejection> {
        let held = root.prechecks.hold(message, named);
        if held && root.is_valid(instance, message) {
            return Ok(());
        }
        // A root that reads `params` alone, its prechecks held: the stages
        // before it proved the rest of the envelope, so every problem lies
        // in `params`, and the explanation walks only that.
        let within = match (held, root.reads) {
            (true, Reads::Params) => message.params,
            _ => None,
        };
        COLLECTOR.with(|collector| match collector.try_borrow_mut() {
            Ok(mut collector) => {
                let refusal = self.explain_refusal(root, instance, within, message, &mut collector);
                collector.clear();
                Err(refusal)
            }
            // Nested (never in practice): a collector of its own.
            Err(_) => Err(self.explain_refusal(
                root,
                instance,
                within,
                message,
                &mut Collector::with_flag(is_envelope_problem),
            )),
        })
    }

    /// The schema phase's refusal, explained into `collector` and written
    /// from it in place: from a walk of `params` alone when `params` holds
    /// every problem (see [`Gate::schema_phase`]), else of the whole
    /// message.
    fn explain_refusal<'a>(
        &self,
        root: &Root,
        instance: TapeNode<'a>,
        params: Option<TapeNode<'a>>,
        message: &Classified<'_>,
        collector: &mut Collector,
    ) -> Rejection {
        let walked =
            params.is_some_and(|params| root.explainer.explain_member(PARAMS, params, collector));
        if !walked {
            root.explainer.explain(instance, collector);
        }
        if collector.emitted() == 0 && root.explainer.compares_wide_integers() {
            // Refused for an integer beyond 64 bits alone (`Root::is_valid`).
            distill::report_wide_integer(instance, collector);
        }
        let found = collector.found(0);
        let refuse = |flagged: bool, summary: &str, errors: DataValue<'_>, total: usize| {
            let reason = if flagged {
                Reason::InvalidRequest
            } else {
                Reason::InvalidParams
            };
            self.rejections.send(
                reason,
                Some(message),
                Some(summary),
                &[
                    (DataKey::Errors, errors),
                    (DataKey::Total, DataValue::Count(total)),
                ],
            )
        };
        if found.total == 0 {
            // The whole message, flagged as an envelope problem.
            let distilled = Distilled::unexplained(true);
            let summary = distill::summary_line(INVALID_REQUEST, &distilled);
            let errors = DataValue::Locations(&distilled.locations);
            return refuse(true, &summary, errors, distilled.total);
        }
        let prefix = if found.flagged {
            INVALID_REQUEST
        } else {
            INVALID_PARAMS
        };
        with_arena(|arena| {
            // Room for the usual line at once, not grown by doubling.
            let mut summary = bumpalo::collections::String::with_capacity_in(SUMMARY_ROOM, arena);
            distill::write_summary_line(&mut summary, prefix, &found);
            refuse(
                found.flagged,
                &summary,
                DataValue::Found(&found),
                found.total,
            )
        })
    }
}

impl Gate {
    /// Stage 8: a `tools/call`'s arguments against the tool's input root
    /// (the message schema has passed: `params.name` is a string and
    /// `arguments`, when present, an object), then its `Mcp-Param-*`
    /// headers on the modern lane. A tool with an output root has its
    /// answer watched.
    fn value_phase<'a>(
        &self,
        headers: &'a (impl RequestHeaders + ?Sized),
        revision: Revision,
        message: &Classified<'a>,
        named: Option<TapeNode<'a>>,
        body: &[u8],
        pass: Pass<'_>,
    ) -> Result<Valued, Rejection> {
        let catalog = self.catalog.load();
        let name = named.and_then(|n| n.as_str()).unwrap_or_default();
        let tool = match catalog.get(name) {
            Some(tool) => tool,
            None => match self.unknown_tool_phase(&catalog, name, message)? {
                Some(tool) => tool,
                None => {
                    // Forwarded by policy: no annotation to hold a header to.
                    self.mirrored_params(headers, message, &|_| false)?;
                    return Ok(Valued::Allowed {
                        watch: None,
                        normalized: None,
                    });
                }
            },
        };
        let arguments = message.members.arguments;
        let valid = match arguments {
            // An integer beyond 64 bits that its float does not hold
            // exactly is refused where the tool's schema compares numbers
            // its float may be judged otherwise by (fail closed).
            Some(arguments) => {
                tool.input.is_valid(arguments)
                    && !(tool.explainer.compares_wide_integers() && arguments.holds_wide_integer())
            }
            None => tool.accepts_no_arguments,
        };
        let normalizing = pass == Pass::First && self.config.normalization;
        // What normalization did, as told: from the first pass when this is
        // the second, else from this one (rendered only when it is told).
        let told = |plan: &normalize::Plan<'_>| match pass {
            Pass::Again(events) => Some(events.clone()),
            Pass::First if plan.events.is_empty() => None,
            Pass::First => Some(normalized::render(&plan.events)),
        };
        if !valid {
            return value::refuse(
                tool,
                arguments,
                |may_normalize| {
                    let mut plan = normalize::Plan::default();
                    if normalizing && let Some(arguments) = arguments {
                        // Planned only where the explanation may show a
                        // key named case aside or a scalar sent for an
                        // array: most refusals pay nothing for it.
                        if may_normalize {
                            plan = normalize::plan(&tool.keys, arguments);
                        }
                        debug_assert!(
                            may_normalize || normalize::plan(&tool.keys, arguments).is_empty(),
                            "the explanation said normalization has nothing to do"
                        );
                        if let Some(normalized) = renormalized(body, &plan, arguments) {
                            return ControlFlow::Break(Ok(normalized));
                        }
                    }
                    ControlFlow::Continue(
                        self.config
                            .normalization_meta
                            .then(|| told(&plan))
                            .flatten(),
                    )
                },
                |told, error| {
                    let error = ToolError {
                        normalized: told.as_deref(),
                        ..error.clone()
                    };
                    Err(self.rejections.send_tool_error(
                        Reason::InvalidArguments,
                        message,
                        revision.lane() == Lane::Modern,
                        &error,
                    ))
                },
            );
        }
        // Arguments a closed root accepts name every key as the schema does
        // and send no scalar where only an array is admitted: nothing to
        // normalize, and the allow path pays nothing for it.
        let mut plan = normalize::Plan::default();
        if normalizing
            && !tool.keys.closed
            && let Some(arguments) = arguments
        {
            plan = normalize::plan(&tool.keys, arguments);
            if let Some(normalized) = renormalized(body, &plan, arguments) {
                return Ok(normalized);
            }
        }
        if let Err(mismatch) = value::params::check(
            &tool.header_params,
            arguments,
            headers,
            revision.lane() == Lane::Modern,
        ) {
            return Err(self.refuse_mismatch(Reason::ParamHeaderMismatch, message, &mismatch));
        }
        self.mirrored_params(headers, message, &|name| {
            tool.header_params
                .iter()
                .any(|p| p.header.eq_ignore_ascii_case(name))
        })?;
        Ok(Valued::Allowed {
            watch: tool
                .output
                .as_ref()
                .map(|_| watch::Watch::ToolsCall(tool.name.clone())),
            normalized: told(&plan),
        })
    }

    /// What normalization makes of a `tools/call` in `body` (the
    /// `_meta.normalized` array), whatever the verdict: for a report of a
    /// refused call, which carries the events only with
    /// `normalization_meta` on. `None` when it does or reports nothing.
    #[cfg(feature = "server")]
    pub(crate) fn normalization_of(&self, body: &[u8]) -> Option<Bytes> {
        if !self.config.normalization {
            return None;
        }
        let mut parser = Parser::default();
        let limits = ParseLimits {
            max_depth: self.config.max_depth,
        };
        let document = parser.parse(body, limits).ok()?;
        let message = classify::classify(document.root());
        if message.method != Some("tools/call") {
            return None;
        }
        let catalog = self.catalog.load();
        let tool = catalog.get(binding::named(&message)?.as_str()?)?;
        let arguments = message.members.arguments?;
        if arguments.kind() != parse::NodeKind::Object {
            return None;
        }
        let plan = normalize::plan(&tool.keys, arguments);
        (!plan.events.is_empty()).then(|| normalized::render(&plan.events))
    }

    /// A call of a tool the catalog lacks: refused, or let through by
    /// policy (`Ok(None)`), or, let through, checked as the tool of the
    /// catalog a loose matcher would take its name for (`Ok(Some)`).
    fn unknown_tool_phase<'c>(
        &self,
        catalog: &'c Catalog,
        name: &str,
        message: &Classified<'_>,
    ) -> Result<Option<&'c crate::catalog::Tool>, Rejection> {
        if self.config.learn_catalog && catalog.source() != Some(CatalogSource::File) {
            // The upstream may have added it since its last listing.
            self.relearn.request();
        }
        let policy = match (self.config.unknown_tools, catalog.source()) {
            (Some(policy), Some(_)) => policy,
            (None, Some(_)) => UnknownTools::Reject,
            (Some(UnknownTools::Forward), None) => UnknownTools::Forward,
            // A catalog is on its way: nothing yet says what this call
            // may be, so it is not let through unchecked.
            (_, None) if self.config.await_catalog => {
                return Err(self.rejections.send(
                    Reason::CatalogUnknown,
                    Some(message),
                    Some(CATALOG_UNKNOWN),
                    &[],
                ));
            }
            (policy, None) => policy.unwrap_or(UnknownTools::Forward),
        };
        if policy == UnknownTools::Forward {
            // An upstream that matches names loosely runs `delete_order`
            // for `Delete_Order`: such a call is checked as that tool; one
            // that could be several of them is not let through.
            if let Ok(tool) = catalog.get_loose(name) {
                return Ok(tool);
            }
        }
        let near = value::hints::nearest(name, catalog.names());
        Err(with_arena(|arena| {
            let mut text =
                bumpalo::format!(in arena, "Unknown tool: {}", distill::cut_at_echo_bound(name));
            if let Some(near) = near {
                text.push_str("; did you mean '");
                text.push_str(near);
                text.push_str("'?");
            }
            self.rejections
                .send(Reason::UnknownTool, Some(message), Some(&text), &[])
        }))
    }
}

/// The one line of an [`Reason::UnderscoredHeader`] refusal.
fn underscored_message<'b>(
    arena: &'b bumpalo::Bump,
    header: &str,
) -> bumpalo::collections::String<'b> {
    bumpalo::format!(
        in arena,
        "Bad Request: a header name spelled with _ for - names {}, which the gateway sets or checks",
        distill::cut_at_echo_bound(header)
    )
}

/// Which pass over a message this is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Pass<'e> {
    /// Over the body as sent: normalization may change it.
    First,
    /// Over the body normalization re-encoded, with what it did.
    Again(&'e Bytes),
}

/// What one pass over a message ends in, short of a refusal.
enum Passed<'g> {
    Allowed(Allowed<'g>),
    /// Normalization changed the arguments: the message re-encoded, to be
    /// checked again, and the events.
    Normalized {
        body: Vec<u8>,
        events: Bytes,
    },
}

/// The call in `body` re-encoded by `plan`, when it changes `arguments`.
fn renormalized(
    body: &[u8],
    plan: &normalize::Plan<'_>,
    arguments: TapeNode<'_>,
) -> Option<Valued> {
    if !plan.changes() {
        return None;
    }
    let body = normalize::rewrite(body, plan, arguments.len())?;
    Some(Valued::Normalized {
        body,
        events: normalized::render(&plan.events),
    })
}

/// What the value phase lets through.
enum Valued {
    Allowed {
        watch: Option<watch::Watch>,
        normalized: Option<Bytes>,
    },
    Normalized {
        body: Vec<u8>,
        events: Bytes,
    },
}

/// The message of a 413, in `arena`: it names the limit.
pub(crate) fn body_too_large_message(
    arena: &bumpalo::Bump,
    limit: usize,
) -> bumpalo::collections::String<'_> {
    bumpalo::format!(in arena, "Invalid Request: body exceeds the limit of {} bytes", limit)
}

/// The message of a `tools/call` refused until the catalog is known.
const CATALOG_UNKNOWN: &str = "Internal error: the tool catalog is not known yet (the upstream has not listed its tools); retry later";

/// The member of a request or notification that holds its parameters.
const PARAMS: &str = "params";

/// The summary line's prefix of a schema refusal, by its reason.
const INVALID_REQUEST: &str = "Invalid Request";
const INVALID_PARAMS: &str = "Invalid params";

/// Bytes the summary line of a schema refusal is given at once: a prefix,
/// a problem's text and a pointer fit in most.
const SUMMARY_ROOM: usize = 256;

/// A problem with the envelope itself (`jsonrpc`, `id`, `method`, `params`
/// not an object) rather than with what `params` holds.
fn is_envelope_problem(first: Option<PathToken<'_>>, depth: usize, keyword: Keyword) -> bool {
    match first {
        Some(PathToken::Key(PARAMS)) => depth == 1 && keyword == Keyword::Type,
        _ => true,
    }
}
