//! The gate: every stage a message passes through, without a socket.
//!
//! `Gate::check(headers, body)` runs the stages in DESIGN.md §3 order —
//! wire (body limit), parse, classify, lane, header binding, dispatch,
//! message schema — each a phase-named function that passes the message on
//! or refuses it through the one rejection sender.

pub mod binding;
pub mod classify;
pub mod dispatch;
pub mod distill;
pub mod headers;
pub mod lane;
pub mod parse;

use std::cell::RefCell;

use classify::{Classified, Kind, RequestId};
use dispatch::{Root, RootSet};
use distill::{Collector, Distilled, Keyword, LocationReport, PathToken, Problem};
pub use headers::RequestHeaders;
use lane::LaneRefusal;
use parse::{ParseError, ParseLimits, Parser, TapeNode};

use crate::protocol::{CompileRootError, Lane, Revision, RootKind, SchemaDocument};
use crate::reject::codes::DataKey;
use crate::reject::envelope::DataValue;
use crate::reject::{Reason, Rejection, Rejections};

/// What a gate is built from.
#[derive(Clone, Debug)]
pub struct GateConfig {
    /// The revisions served; a request naming another is refused (-32022).
    pub revisions: Vec<Revision>,
    /// The largest body taken, in bytes (413 above it).
    pub body_limit: usize,
    /// The deepest nesting of arrays and objects taken.
    pub max_depth: usize,
}

impl Default for GateConfig {
    fn default() -> Self {
        GateConfig {
            revisions: Revision::ALL.to_vec(),
            body_limit: 4 * 1024 * 1024,
            max_depth: 64,
        }
    }
}

/// The gate's answer to one message.
#[derive(Debug)]
pub enum Verdict<'g> {
    Allow(Allowed<'g>),
    Reject(Rejection),
}

/// A message the gate lets through, with what forwarding needs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Allowed<'g> {
    pub kind: Kind,
    pub revision: Revision,
    /// The method, for requests and notifications.
    pub method: Option<&'g str>,
    /// The request id, JSON-encoded, for answers the forwarder builds
    /// itself (an unreachable upstream, say).
    pub id: Option<RequestId>,
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
}

pub struct Gate {
    config: GateConfig,
    supported: Vec<&'static str>,
    modern: RootSet,
    legacy: RootSet,
    rejections: Rejections,
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
}

impl Gate {
    /// Compiles every root of the served revisions.
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
        Ok(Gate {
            config,
            supported,
            modern,
            legacy,
            rejections: Rejections::default(),
        })
    }

    pub fn config(&self) -> &GateConfig {
        &self.config
    }

    /// The rejection counters.
    pub fn rejections(&self) -> &Rejections {
        &self.rejections
    }

    /// Checks one message with this thread's scratch buffers.
    pub fn check(&self, headers: &(impl RequestHeaders + ?Sized), body: &[u8]) -> Verdict<'_> {
        SCRATCH.with(|scratch| self.check_with(&mut scratch.borrow_mut(), headers, body))
    }

    /// Checks one message with the caller's scratch buffers.
    pub fn check_with(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
    ) -> Verdict<'_> {
        match self.run(scratch, headers, body) {
            Ok(allowed) => Verdict::Allow(allowed),
            Err(rejection) => Verdict::Reject(rejection),
        }
    }

    fn run(
        &self,
        scratch: &mut Scratch,
        headers: &(impl RequestHeaders + ?Sized),
        body: &[u8],
    ) -> Result<Allowed<'_>, Rejection> {
        self.wire_phase(body)?;
        let document = self.parse_phase(&mut scratch.parser, body)?;
        let message = self.classify_phase(document.root())?;
        let revision = self.lane_phase(headers, &message)?;
        if revision.lane() == Lane::Modern {
            self.binding_phase(headers, &message)?;
        }
        let (method, root) = self.dispatch_phase(revision, &message)?;
        self.schema_phase(root, document.root(), &message)?;
        Ok(Allowed {
            kind: message.kind,
            revision,
            method,
            id: message.echoed_id().cloned(),
        })
    }

    fn wire_phase(&self, body: &[u8]) -> Result<(), Rejection> {
        if body.len() <= self.config.body_limit {
            return Ok(());
        }
        let message = body_too_large_message(self.config.body_limit);
        Err(self
            .rejections
            .send(Reason::BodyTooLarge, None, Some(&message), &[]))
    }

    fn parse_phase<'p>(
        &self,
        parser: &'p mut Parser,
        body: &[u8],
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
            ParseError::TooDeep { limit } => refuse(
                Reason::TooDeep,
                &format!("Invalid Request: nesting deeper than {limit} levels"),
            ),
        })?;
        if document.root().kind() == parse::NodeKind::Array {
            return Err(refuse(
                Reason::Batch,
                "Invalid Request: batches are not supported",
            ));
        }
        Ok(document)
    }

    fn classify_phase<'p>(&self, root: TapeNode<'p>) -> Result<Classified<'p>, Rejection> {
        let message = classify::classify(root);
        let refusal = match message.kind {
            Kind::UnidentifiedRequest => (
                Reason::UnidentifiedRequest,
                "Invalid Request: id must be a string or an integer",
            ),
            Kind::Unknown => (
                Reason::UnknownMessage,
                "Invalid Request: not a JSON-RPC request or notification",
            ),
            _ => return Ok(message),
        };
        Err(self
            .rejections
            .send(refusal.0, Some(&message), Some(refusal.1), &[]))
    }

    fn lane_phase<'a>(
        &self,
        headers: &'a (impl RequestHeaders + ?Sized),
        message: &Classified<'a>,
    ) -> Result<Revision, Rejection> {
        let header = headers.header(headers::names::PROTOCOL_VERSION);
        let refusal = match lane::select(headers, &self.config.revisions) {
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
                match lane::check_protocol_fields(revision, message, header, &self.config.revisions)
                {
                    Ok(()) => return Ok(revision),
                    Err(refusal) => refusal,
                }
            }
            Err(refusal) => refusal,
        };
        Err(self.refuse_lane(message, refusal))
    }

    fn refuse_lane(&self, message: &Classified<'_>, refusal: LaneRefusal<'_>) -> Rejection {
        match refusal {
            LaneRefusal::Unsupported { requested } => self.rejections.send(
                Reason::UnsupportedProtocolVersion,
                Some(message),
                Some("Unsupported protocol version"),
                &[
                    (DataKey::Supported, DataValue::Texts(&self.supported)),
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
                    problems: vec![Problem {
                        keyword: if problem.missing.is_some() {
                            Keyword::Required
                        } else {
                            Keyword::Type
                        },
                        text,
                    }],
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
    ) -> Result<(), Rejection> {
        let Err(mismatch) = binding::check(message, headers) else {
            return Ok(());
        };
        let text = format!(
            "Header mismatch: {} {}",
            mismatch.header,
            mismatch.cause.describe()
        );
        let mut data = vec![
            (DataKey::Header, DataValue::Text(mismatch.header.as_bytes())),
            (
                DataKey::Expected,
                DataValue::Text(mismatch.expected.as_bytes()),
            ),
        ];
        if let Some(received) = mismatch.received.as_deref() {
            data.push((DataKey::Received, DataValue::Text(received)));
        }
        Err(self
            .rejections
            .send(Reason::HeaderMismatch, Some(message), Some(&text), &data))
    }

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
        if let Some(found) = roots.select(kind) {
            return Ok(found);
        }
        let reason = match revision.lane() {
            Lane::Modern => Reason::MethodNotFound,
            Lane::Legacy => Reason::MethodNotFoundLegacy,
        };
        let text = format!(
            "Method not found: {} is not a {} method",
            distill::cut_at_echo_bound(method),
            revision.as_str()
        );
        Err(self
            .rejections
            .send(reason, Some(message), Some(&text), &[]))
    }

    fn schema_phase(
        &self,
        root: &Root,
        instance: TapeNode<'_>,
        message: &Classified<'_>,
    ) -> Result<(), Rejection> {
        if root.validator.is_valid(instance) {
            return Ok(());
        }
        let mut collector = Collector::with_flag(is_envelope_problem);
        root.explainer.explain(instance, &mut collector);
        let mut distilled = collector.finish();
        if distilled.total == 0 {
            distilled = unexplained();
        }
        let (reason, prefix) = if distilled.flagged {
            (Reason::InvalidRequest, "Invalid Request")
        } else {
            (Reason::InvalidParams, "Invalid params")
        };
        let summary = distill::summary_line(prefix, &distilled);
        Err(self.rejections.send(
            reason,
            Some(message),
            Some(&summary),
            &[
                (DataKey::Errors, DataValue::Locations(&distilled.locations)),
                (DataKey::Total, DataValue::Count(distilled.total)),
            ],
        ))
    }
}

/// The message of a 413: it names the limit.
pub fn body_too_large_message(limit: usize) -> String {
    format!("Invalid Request: body exceeds the limit of {limit} bytes")
}

/// A problem with the envelope itself (`jsonrpc`, `id`, `method`, `params`
/// not an object) rather than with what `params` holds.
fn is_envelope_problem(path: &[PathToken<'_>], keyword: Keyword) -> bool {
    match path {
        [PathToken::Key("params")] => keyword == Keyword::Type,
        [PathToken::Key("params"), ..] => false,
        _ => true,
    }
}

/// What is sent when the explainer finds no cause for a refusal (it should
/// always find one): the whole message, flagged as an envelope problem.
fn unexplained() -> Distilled {
    Distilled {
        locations: vec![LocationReport {
            pointer: String::new(),
            received_type: "object",
            problems: vec![Problem {
                keyword: Keyword::Other,
                text: "value does not match the schema".to_owned(),
            }],
        }],
        total: 1,
        problem_count: 1,
        flagged: true,
    }
}
