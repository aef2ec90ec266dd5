//! `mcpgate serve`: the routes around the gate, on the HTTP server.
//!
//! | route | what |
//! |---|---|
//! | `POST <endpoint>` (default `/mcp`) | the MCP endpoint: wire checks, then the gate, then the upstream (when one is configured); other methods 405 |
//! | `GET`/`DELETE <endpoint>` | legacy lane with an upstream: the event stream and the end of a session, forwarded after the wire checks; 405 otherwise |
//! | `POST /validate` | the verdict service: the client's body and headers in, `204` or the exact rejection out |
//! | `GET /metrics` | Prometheus text, or OpenMetrics when `Accept` asks for it |
//! | `GET /healthz` | `200 ok` |
//! | `GET /.well-known/oauth-protected-resource[<endpoint>]` | with OAuth: the protected-resource metadata (RFC 9728); `404` otherwise |
//! | `/_noop` | only with `bench_noop_route`: `204` without reading anything, the load benchmark's floor (else `404` like any unknown path) |
//! | `OPTIONS <endpoint>`, `OPTIONS /.well-known/oauth-protected-resource[<endpoint>]` | a CORS preflight from an allowed origin: `204` ([`cors`]); another `OPTIONS`: `405` |

mod cors;
pub mod metrics;
pub mod oauth;
pub mod session;
pub mod wire;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use crate::classify::RequestId;
use crate::gate::watch::Watch;
use crate::server::{AnswerPlan, Forward, Reply, UpstreamFailure, WatchedAnswer};
use oauth::tokens::Grant;
use session::{Owner, Sessions, Verified};

use metrics::Metrics;
use wire::WirePolicy;

use crate::gate::{Allowed, Gate, Verdict};
use crate::reject::{Reason, Rejection};
use crate::server::{Head, HttpError, Response, Service};
use crate::upstream::UpstreamConfig;

pub const VALIDATE_PATH: &str = "/validate";
pub const METRICS_PATH: &str = "/metrics";
pub const HEALTH_PATH: &str = "/healthz";
pub const NOOP_PATH: &str = "/_noop";

/// The answer to a session id not sealed for its caller.
const UNKNOWN_SESSION: &str = "Not Found: no such session";

/// One MCP endpoint (a `[[route]]`, or the one the top-level keys make):
/// its gate, wire policy, upstream and sessions.
pub struct RouteService {
    /// Shared with the next configuration's route of the same path and
    /// gate settings, so that its learned catalog and counts carry over.
    pub gate: Arc<Gate>,
    pub endpoint: String,
    pub wire: WirePolicy,
    pub metrics: Arc<Metrics>,
    /// This route's cells in the metrics ([`Metrics::slot`]).
    pub slot: usize,
    /// Where allowed messages are forwarded; none: answered `NoUpstream`.
    pub upstream: Option<Arc<UpstreamConfig>>,
    /// With authentication on: session ids sealed to their caller and to
    /// this route.
    pub sessions: Option<Sessions>,
}

impl RouteService {
    /// An upstream is configured: allowed messages are forwarded to it.
    fn forwarding(&self) -> bool {
        self.upstream.is_some()
    }
}

/// One configuration's routes, swapped whole by a reload.
pub struct Routes {
    /// At least one; the first also answers what belongs to no route
    /// (`/validate`, an unknown path, a malformed request).
    pub routes: Vec<RouteService>,
    /// [`NOOP_PATH`] is served; off, it is an unknown path, so a
    /// deployment does not answer 204 to what nobody checked.
    pub noop_route: bool,
    /// The series of `/metrics` carry a `route` label (`[[route]]`
    /// tables were given).
    pub labelled: bool,
}

impl Routes {
    /// The route a path belongs to, and what it asks of it: the first
    /// route's path and the gateway's own first (one comparison each, as
    /// with a single route), then the other routes.
    fn find(&self, path: &str) -> (usize, Route) {
        let first = &self.routes[0];
        let route = match path {
            p if p == first.endpoint => Route::Endpoint,
            VALIDATE_PATH => Route::Validate,
            METRICS_PATH => Route::Metrics,
            HEALTH_PATH => Route::Health,
            NOOP_PATH if self.noop_route => Route::Noop,
            p => return self.find_other(p),
        };
        (0, route)
    }

    /// A path that is neither the first route's nor the gateway's own.
    fn find_other(&self, path: &str) -> (usize, Route) {
        if let Some(i) = self.routes.iter().position(|r| r.endpoint == path) {
            return (i, Route::Endpoint);
        }
        match path.strip_prefix(oauth::METADATA_PATH) {
            Some("") if self.routes[0].wire.oauth.is_some() => (0, Route::ResourceMetadata),
            Some(rest) => {
                let owner = self.routes.iter().position(|r| r.endpoint == rest);
                match owner.filter(|&i| self.routes[i].wire.oauth.is_some()) {
                    Some(i) => (i, Route::ResourceMetadata),
                    None => (0, Route::Unknown),
                }
            }
            None => (0, Route::Unknown),
        }
    }
}

/// The routes in service: swapped by a reload; each worker thread keeps
/// the last it read and reads again only when the generation moved.
pub struct McpService {
    pub metrics: Arc<Metrics>,
    current: arc_swap::ArcSwap<Routes>,
    generation: AtomicU64,
    /// Tells services apart in a thread's cache.
    id: u64,
}

static NEXT_SERVICE: AtomicU64 = AtomicU64::new(0);

/// Routes held by one thread: the `Rc` is counted by that thread alone,
/// so a request holding them writes no count another core shares.
#[allow(
    clippy::redundant_allocation,
    reason = "the Rc's count is the thread's own; the Arc's is shared"
)]
type Held = Rc<Arc<Routes>>;

thread_local! {
    /// This thread's routes: the service's id, the generation read, and
    /// the routes then in service.
    static CURRENT: RefCell<Option<(u64, u64, Held)>> = const { RefCell::new(None) };
}

impl McpService {
    pub fn new(routes: Routes, metrics: Arc<Metrics>) -> McpService {
        McpService {
            metrics,
            current: arc_swap::ArcSwap::from_pointee(routes),
            generation: AtomicU64::new(0),
            id: NEXT_SERVICE.fetch_add(1, Ordering::Relaxed),
        }
    }

    /// Puts `routes` in service for the requests that start from now on;
    /// those in flight finish under the routes they began with.
    pub fn swap(&self, routes: Routes) -> Arc<Routes> {
        let old = self.current.swap(Arc::new(routes));
        // After the store: a thread that sees the new generation reads the
        // new routes.
        self.generation.fetch_add(1, Ordering::Release);
        old
    }

    /// The routes in service, as a whole.
    pub fn routes_now(&self) -> Arc<Routes> {
        self.current.load_full()
    }

    /// The routes this thread read last, without looking at the
    /// generation: `on_head` looked for this request already.
    fn routes_read(&self) -> Held {
        let read = CURRENT.with(|current| match &*current.borrow() {
            Some((id, _, routes)) if *id == self.id => Some(routes.clone()),
            _ => None,
        });
        read.unwrap_or_else(|| self.routes())
    }

    /// This thread's routes: one load of the generation, and a reference
    /// count of this thread's own (no atomic write) on the allowed path.
    fn routes(&self) -> Held {
        let generation = self.generation.load(Ordering::Acquire);
        CURRENT.with(|current| {
            let mut current = current.borrow_mut();
            match &*current {
                Some((id, seen, routes)) if *id == self.id && *seen == generation => routes.clone(),
                _ => {
                    let routes = Rc::new(self.current.load_full());
                    *current = Some((self.id, generation, routes.clone()));
                    routes
                }
            }
        })
    }
}

/// A forwarded request's route: the routes it began under, kept until
/// its answer is relayed.
#[derive(Clone)]
pub struct RouteHandle {
    routes: Held,
    index: usize,
}

impl RouteHandle {
    fn get(&self) -> &RouteService {
        &self.routes.routes[self.index]
    }
}

impl std::fmt::Debug for RouteHandle {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("RouteHandle")
            .field(&self.get().endpoint)
            .finish()
    }
}

/// What a forwarded message needs once the upstream has (not) answered.
#[derive(Debug)]
pub struct Pending {
    /// The route it was sent under.
    route: RouteHandle,
    /// [`crate::gate::Allowed::id`]: the echo rule already applied.
    id: Option<RequestId>,
    /// What the gate reads in the answer once it is relayed.
    watch: Option<Watch>,
    /// The caller's grant, when its `tools/list` answer is cut down to
    /// the tools it may call.
    listing_for: Option<Arc<Grant>>,
    /// A 2025 lane's GET stream: its answers are cut event by event.
    stream: bool,
    /// What the gateway adds to the answer's result.
    adds: Additions,
    /// With authentication on: whom a session id in the answer is sealed
    /// for.
    owner: Option<Owner>,
    /// The request's own session id, verified: sealed the same again.
    verified: Option<Verified>,
    /// The allowed `Origin` the answer is marked readable for (CORS).
    origin: Option<Box<str>>,
}

/// What the gateway adds to an answer's `result` (the error-envelope
/// contract's "Server capabilities", `_meta.normalized` and
/// `_meta.rate_limit`).
#[derive(Debug, Default)]
struct Additions {
    /// `capabilities.experimental.openbridge_envelope` (an `initialize` or
    /// `server/discover` answer).
    capability: bool,
    /// `_meta.normalized`: what normalization did to the call.
    normalized: Option<bytes::Bytes>,
    /// `_meta.rate_limit`, from the answer's headers (a `tools/call`).
    rate_limit: bool,
}

impl Additions {
    fn for_allowed(allowed: &Allowed<'_>, meta: bool) -> Additions {
        let method = allowed.method.unwrap_or_default();
        Additions {
            capability: matches!(method, "initialize" | "server/discover"),
            normalized: allowed.normalized.clone().filter(|_| meta),
            rate_limit: meta && method == "tools/call",
        }
    }

    fn any(&self) -> bool {
        self.capability || self.normalized.is_some() || self.rate_limit
    }

    /// `body` with the additions, or `None` when it is not a result (or
    /// nothing was added).
    fn apply(&self, headers: &[u8], body: &[u8]) -> Option<Vec<u8>> {
        use crate::parse::span::{insert_member, value_at};
        let result = value_at(body, &["result"])?;
        if body.get(result.start) != Some(&b'{') {
            return None;
        }
        let mut edited: Option<Vec<u8>> = None;
        let mut add = |path: &[&str], name: &str, value: &[u8]| {
            let current = edited.as_deref().unwrap_or(body);
            if let Some(next) = insert_member(current, path, name, value) {
                edited = Some(next);
            }
        };
        if self.capability {
            add(
                &["result", "capabilities", "experimental"],
                "openbridge_envelope",
                crate::reject::codes::envelope_capability().as_bytes(),
            );
        }
        if let Some(events) = &self.normalized {
            add(&["result", "_meta"], "normalized", events);
        }
        if self.rate_limit
            && let Some(rate_limit) = crate::upstream::rate_limit::rate_limit_meta(headers)
        {
            add(&["result", "_meta"], "rate_limit", &rate_limit);
        }
        edited
    }
}

/// A request's session, with authentication on ([`McpService::session_of`]).
#[derive(Default)]
struct SessionUse {
    owner: Option<Owner>,
    /// The upstream's id: the first this many bytes of `Mcp-Session-Id`.
    id_len: Option<usize>,
    verified: Option<Verified>,
}

/// Where a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Endpoint,
    Validate,
    Metrics,
    Health,
    Noop,
    ResourceMetadata,
    Unknown,
}

impl RouteService {
    fn refuse(&self, reason: Reason, message: &str) -> Response {
        self.answer(
            self.gate
                .rejections()
                .send(reason, None, Some(message), &[]),
        )
    }

    /// The caller's grant when the tools it lists must be cut to its
    /// scopes (some tool needs a scope it lacks).
    fn listing_for(&self, grant: &Option<Arc<Grant>>) -> Option<Arc<Grant>> {
        grant.clone().filter(|grant| {
            self.wire
                .oauth
                .as_ref()
                .is_some_and(|oauth| oauth.lists_fewer_tools(grant))
        })
    }

    /// With authentication on: whom the request's sessions belong to, and
    /// its `Mcp-Session-Id` once verified. `None`: an id not sealed for
    /// this caller.
    fn session_of(&self, head: &Head<'_>, grant: Option<&Arc<Grant>>) -> Option<SessionUse> {
        let Some(sessions) = &self.sessions else {
            return Some(SessionUse::default());
        };
        let authorization = head.header("Authorization");
        let owner = match grant {
            Some(grant) => Some(sessions.owner_of_grant(grant, authorization)),
            None => sessions.owner_of_token(authorization),
        };
        let Some(sealed) = head.header("Mcp-Session-Id") else {
            return Some(SessionUse {
                owner,
                ..SessionUse::default()
            });
        };
        let id_len = sessions.unseal_remembered(owner.as_ref()?, sealed)?;
        Some(SessionUse {
            owner,
            id_len: Some(id_len),
            verified: Verified::keep(sealed, id_len),
        })
    }

    /// A method the path does not take; `allow`: the ones it does (the
    /// `Allow` header a 405 must carry).
    fn method_not_allowed(&self, allow: &'static str, message: &str) -> Response {
        let mut response = self.refuse(Reason::MethodNotAllowed, message);
        response.headers.push(("Allow", allow.to_owned()));
        response
    }

    /// A CORS preflight on `route` ([`cors::preflight`]).
    fn preflight(&self, head: &Head<'_>, route: Route) -> Response {
        let methods = match route {
            Route::Endpoint if self.forwarding() => "GET, POST, DELETE, OPTIONS",
            Route::Endpoint => "POST, OPTIONS",
            _ => "GET, OPTIONS",
        };
        match cors::preflight(&self.wire, head, methods, carries_body(head)) {
            Ok(answer) => answer,
            Err(refused) if refused.reason == Reason::MethodNotAllowed => {
                self.method_not_allowed(methods, refused.message)
            }
            Err(refused) => self.refuse(refused.reason, refused.message),
        }
    }

    /// A GET or DELETE with a body: refused before any of it is read, so
    /// nothing of it is forwarded or left to be read as the next request.
    fn body_not_allowed(&self) -> Response {
        self.refuse(
            Reason::BodyNotAllowed,
            "Bad Request: a GET or DELETE request may not carry a body",
        )
    }

    fn answer(&self, rejection: Rejection) -> Response {
        self.answer_scoped(rejection, None)
    }

    /// The answer to a refusal; `scopes`: what an `insufficient_scope`
    /// refusal of a tool names in its challenge.
    fn answer_scoped(&self, rejection: Rejection, scopes: Option<&[String]>) -> Response {
        let mut response = Response::json(rejection.status, rejection.body);
        match rejection.reason {
            Reason::Unauthorized => response
                .headers
                .push(("WWW-Authenticate", "Bearer realm=\"mcpgate\"".to_owned())),
            // The codings a request may use (RFC 9110 §12.5.3): none.
            Reason::UnsupportedContentEncoding => response
                .headers
                .push(("Accept-Encoding", "identity".to_owned())),
            // The learner asks the upstream again within this (a refused
            // call wakes it; never twice within its shortest refresh).
            Reason::CatalogUnknown => response.headers.push((
                "Retry-After",
                crate::upstream::learn::MIN_REFRESH.as_secs().to_string(),
            )),
            reason => {
                if let Some(challenge) = self
                    .wire
                    .oauth
                    .as_ref()
                    .and_then(|oauth| oauth.challenge(reason, scopes))
                {
                    response.headers.push(("WWW-Authenticate", challenge));
                }
            }
        }
        response
    }

    /// The gate's verdict on an MCP message; `allow` builds the reply to a
    /// message let through.
    fn judge(
        &self,
        head: &Head<'_>,
        body: &[u8],
        allow: impl FnOnce(Allowed<'_>, Option<Arc<Grant>>) -> Reply<Pending>,
    ) -> Reply<Pending> {
        let started = Instant::now();
        let reply = match &self.wire.oauth {
            None => match self.gate.check(head, body) {
                Verdict::Allow(allowed) => self.allowed(allowed, None, allow),
                Verdict::Reject(rejection) => self.answer(rejection).into(),
            },
            Some(oauth) => match oauth.admit(head.header("Authorization")) {
                // Verified at the head already; refused here only if it
                // expired since.
                Err(reason) => self.refuse(reason, oauth::message(reason)).into(),
                Ok(grant) => {
                    let denied = Cell::new(None);
                    let permit = |tool: &str| {
                        denied.set(oauth.tool_denied(&grant, tool));
                        denied.get().is_none()
                    };
                    match self.gate.check_permitted(head, body, &permit) {
                        Verdict::Allow(allowed) => self.allowed(allowed, Some(grant), allow),
                        Verdict::Reject(rejection) => {
                            self.answer_scoped(rejection, denied.get()).into()
                        }
                    }
                }
            },
        };
        self.metrics.request(self.slot, started.elapsed());
        reply
    }

    fn allowed(
        &self,
        allowed: Allowed<'_>,
        grant: Option<Arc<Grant>>,
        allow: impl FnOnce(Allowed<'_>, Option<Arc<Grant>>) -> Reply<Pending>,
    ) -> Reply<Pending> {
        self.metrics
            .allowed(self.slot, allowed.revision.lane().into(), allowed.kind);
        allow(allowed, grant)
    }

    /// Sends a request on to the upstream: `body`, when given, instead of
    /// the one received, with the identity headers of its token's `grant`
    /// and its session id cut to `session_id` bytes.
    fn forward(
        &self,
        pending: Pending,
        body: Option<bytes::Bytes>,
        grant: Option<&Grant>,
        session_id: Option<usize>,
    ) -> Reply<Pending> {
        Reply::Forward(Forward {
            body,
            session_id,
            seal_session: self.sessions.is_some(),
            // A POST's answer is held whole; a GET stream, event by event.
            // A listing (`tools/list`, or a stream) has nothing added to
            // it, so a rewrite and an edit never meet.
            plan: match (&pending.listing_for, pending.stream) {
                (Some(_), false) => AnswerPlan::Rewrite,
                (Some(_), true) => AnswerPlan::RewriteEvents,
                (None, _) if pending.adds.any() => AnswerPlan::Edit,
                (None, _) => AnswerPlan::Relay,
            },
            withhold: if self.wire.consumes_authorization() {
                &["Authorization"]
            } else {
                &[]
            },
            set_headers: self
                .wire
                .oauth
                .as_ref()
                .map(|oauth| oauth.identity_headers(grant))
                .unwrap_or_default(),
            watch: pending.watch.is_some(),
            pending,
        })
    }
}

/// The rejection-table row a refusal of the connection layer is answered
/// with.
pub fn http_error_reason(error: HttpError) -> Reason {
    match error {
        HttpError::HeadTooLarge => Reason::HeadTooLarge,
        HttpError::BodyTooLarge { .. } => Reason::BodyTooLarge,
        HttpError::BadRequest => Reason::BadHttp,
        HttpError::Field(field) => field.reason(),
    }
}

/// A body is framed (a `Content-Length` over 0, or chunked).
fn carries_body(head: &Head<'_>) -> bool {
    head.chunked || head.content_length.is_some_and(|n| n > 0)
}

/// The binding header a legacy GET or DELETE carries, if any: with no
/// body, nothing would check it before the upstream (or a proxy behind
/// the gateway) acted on it.
fn unmirrored_on_stream(head: &Head<'_>) -> Option<&'static str> {
    use crate::gate::headers::names;
    [names::METHOD, names::NAME]
        .into_iter()
        .find(|name| head.header(name).is_some())
        .or_else(|| (head.seen.params > 0).then_some("Mcp-Param-*"))
}

/// GET and DELETE on the endpoint belong to the 2025 transports: requests
/// without `MCP-Protocol-Version` (2025-03-26, per the spec) or naming a
/// 2025 revision.
fn legacy_lane(head: &Head<'_>) -> bool {
    head.header("MCP-Protocol-Version")
        .is_none_or(|v| v.trim_ascii().starts_with(b"2025-"))
}

impl Service for McpService {
    type Pending = Pending;

    fn on_head(&self, head: &Head<'_>) -> Option<Response> {
        let routes = self.routes();
        let (index, route) = routes.find(head.path);
        routes.routes[index].on_head(head, route)
    }

    fn on_request(&self, head: &Head<'_>, body: &[u8]) -> Reply<Pending> {
        let routes = self.routes_read();
        let (index, route) = routes.find(head.path);
        if route == Route::Metrics {
            return self.metrics_answer(head, &routes).into();
        }
        let handle = RouteHandle { routes, index };
        handle.get().on_request(head, body, route, &handle)
    }

    fn upstream<'p>(&self, pending: &'p Pending) -> Option<&'p Arc<UpstreamConfig>> {
        pending.route.get().upstream.as_ref()
    }

    fn on_upstream_failure(&self, pending: &Pending, failure: UpstreamFailure) -> Response {
        pending.route.get().on_upstream_failure(pending, failure)
    }

    fn edit_answer(
        &self,
        pending: &Pending,
        headers: &[u8],
        body: Option<&[u8]>,
    ) -> Option<Vec<u8>> {
        pending.route.get().edit_answer(pending, headers, body)
    }

    fn seal_session(
        &self,
        pending: &Pending,
        headers: &mut Vec<u8>,
        value: std::ops::Range<usize>,
    ) -> bool {
        pending.route.get().seal_session(pending, headers, value)
    }

    fn rewrite_answer(&self, pending: &Pending, answer: WatchedAnswer<'_>) -> Option<Vec<u8>> {
        pending.route.get().rewrite_answer(pending, answer)
    }

    fn on_answer(&self, pending: Pending, answer: WatchedAnswer<'_>) {
        let route = pending.route.clone();
        route.get().on_answer(pending, answer)
    }

    fn on_http_error(&self, error: HttpError) -> Response {
        self.routes().routes[0].on_http_error(error)
    }

    fn finish_answer(&self, head: &Head<'_>, response: &mut Response) {
        // A request without `Origin` (server to server) goes no further.
        if !head.seen.origin {
            return;
        }
        let routes = self.routes_read();
        let (index, route) = routes.find(head.path);
        routes.routes[index].finish_answer(head, response, route);
    }

    fn answer_headers(&self, pending: &Pending, headers: &mut Vec<u8>) {
        pending.route.get().answer_headers(pending, headers)
    }

    fn on_connection(&self, opened: bool) {
        self.metrics.connection(opened);
    }

    fn on_bytes_in(&self, n: usize) {
        self.metrics.bytes_in(n);
    }

    fn on_connection_limit(&self) {
        self.metrics.connection_limit_reached();
    }
}

impl McpService {
    /// `/metrics`: every route's counts, labelled by route when
    /// `[[route]]` tables gave them.
    fn metrics_answer(&self, head: &Head<'_>, routes: &Routes) -> Response {
        let openmetrics = metrics::wants_openmetrics(head.header("Accept"));
        let each: Vec<metrics::RouteCounts<'_>> = routes
            .routes
            .iter()
            .map(|r| metrics::RouteCounts {
                label: &r.endpoint,
                gate: &r.gate,
                slot: r.slot,
            })
            .collect();
        let (body, content_type) = self.metrics.render(&each, routes.labelled, openmetrics);
        let mut response = Response::empty(200);
        response.content_type = Some(content_type);
        response.body = body.into_bytes().into();
        response
    }
}

/// The service's calls, for one route.
impl RouteService {
    fn on_head(&self, head: &Head<'_>, route: Route) -> Option<Response> {
        // The head parser refused names spelling the fields it knows; the
        // identity headers are configured, so they are compared here, and
        // only when some name holds `_`.
        if head.seen.underscored
            && let Some(oauth) = &self.wire.oauth
            && let Some(header) = head
                .headers
                .iter()
                .find_map(|h| oauth.identity_spelled(h.name.as_bytes()))
        {
            return Some(self.answer(self.gate.refuse_underscored(header)));
        }
        if self.wire.authenticates() && head.query.is_some_and(wire::token_in_query) {
            return Some(self.refuse(
                Reason::TokenInQuery,
                "Bad Request: an access token may not be sent in the query string",
            ));
        }
        match route {
            Route::Endpoint | Route::ResourceMetadata if cors::is_preflight(head) => {
                Some(self.preflight(head, route))
            }
            Route::Endpoint
                if self.forwarding()
                    && matches!(head.method, "GET" | "DELETE")
                    && legacy_lane(head) =>
            {
                if let Err(refusal) = self.wire.check_stream(head, head.method == "GET") {
                    return Some(self.refuse(refusal.reason, refusal.message));
                }
                if let Some(header) = unmirrored_on_stream(head) {
                    return Some(self.answer(self.gate.rejections().send(
                        Reason::UnmirroredHeader,
                        None,
                        Some("Bad Request: a GET or DELETE has no body for Mcp-Method, Mcp-Name or Mcp-Param-* to mirror"),
                        &[(
                            crate::reject::codes::DataKey::Header,
                            crate::reject::envelope::DataValue::Text(header.as_bytes()),
                        )],
                    )));
                }
                carries_body(head).then(|| self.body_not_allowed())
            }
            Route::Endpoint | Route::Validate => {
                if head.method != "POST" {
                    // The 2025 lanes' stream and session end, where forwarded.
                    let (allow, message) =
                        if route == Route::Endpoint && self.forwarding() && legacy_lane(head) {
                            (
                                "GET, POST, DELETE",
                                "Method Not Allowed: the MCP endpoint takes GET, POST and DELETE",
                            )
                        } else {
                            ("POST", "Method Not Allowed: the MCP endpoint takes POST")
                        };
                    return Some(self.method_not_allowed(allow, message));
                }
                self.wire
                    .check(head)
                    .err()
                    .map(|refusal| self.refuse(refusal.reason, refusal.message))
            }
            Route::Metrics | Route::Health | Route::ResourceMetadata if head.method != "GET" => {
                Some(self.method_not_allowed("GET", "Method Not Allowed: this path takes GET"))
            }
            Route::Metrics | Route::Health | Route::ResourceMetadata if carries_body(head) => {
                Some(self.body_not_allowed())
            }
            Route::Metrics | Route::Health | Route::ResourceMetadata | Route::Noop => None,
            Route::Unknown => Some(self.refuse(Reason::UnknownPath, "Not Found: no such path")),
        }
    }

    fn on_request(
        &self,
        head: &Head<'_>,
        body: &[u8],
        route: Route,
        handle: &RouteHandle,
    ) -> Reply<Pending> {
        let response = match route {
            // A legacy GET or DELETE that passed `on_head`: nothing to gate.
            Route::Endpoint if head.method != "POST" => {
                let grant = match &self.wire.oauth {
                    None => None,
                    Some(oauth) => match oauth.admit(head.header("Authorization")) {
                        Ok(grant) => Some(grant),
                        Err(reason) => return self.refuse(reason, oauth::message(reason)).into(),
                    },
                };
                let Some(session) = self.session_of(head, grant.as_ref()) else {
                    return self.refuse(Reason::UnknownSession, UNKNOWN_SESSION).into();
                };
                // A resumed stream replays the answers of a request, a
                // `tools/list` among them: cut to the caller's scopes as
                // on a POST.
                let listing_for = self.listing_for(&grant);
                return self.forward(
                    Pending {
                        route: handle.clone(),
                        id: None,
                        watch: None,
                        adds: Additions::default(),
                        listing_for,
                        stream: true,
                        owner: session.owner,
                        verified: session.verified,
                        origin: cors::allowed_origin(&self.wire, head).map(Box::from),
                    },
                    None,
                    grant.as_deref(),
                    session.id_len,
                );
            }
            Route::Endpoint => {
                return self.judge(head, body, |allowed, grant| {
                    // Before anything else: whether there is an upstream
                    // tells another caller nothing either.
                    let Some(session) = self.session_of(head, grant.as_ref()) else {
                        return self
                            .answer(self.gate.rejections().send_allowed(
                                Reason::UnknownSession,
                                allowed.id.as_ref(),
                                Some(UNKNOWN_SESSION),
                            ))
                            .into();
                    };
                    if !self.forwarding() {
                        // Allowed, but this instance has no upstream to send it to.
                        return self
                            .answer(self.gate.rejections().send_allowed(
                                Reason::NoUpstream,
                                allowed.id.as_ref(),
                                Some("Internal error: no upstream is configured; POST /validate for verdicts"),
                            ))
                            .into();
                    }
                    let adds =
                        Additions::for_allowed(&allowed, self.gate.config().normalization_meta);
                    let listing_for = self
                        .listing_for(&grant)
                        .filter(|_| allowed.method == Some("tools/list"));
                    self.forward(
                        Pending {
                            route: handle.clone(),
                            id: allowed.id,
                            watch: allowed.watch,
                            adds,
                            listing_for,
                            stream: false,
                            owner: session.owner,
                            verified: session.verified,
                            origin: cors::allowed_origin(&self.wire, head).map(Box::from),
                        },
                        allowed.forward,
                        grant.as_deref(),
                        session.id_len,
                    )
                });
            }
            Route::Validate => return self.judge(head, body, |_, _| Response::empty(204).into()),
            Route::ResourceMetadata => match &self.wire.oauth {
                Some(oauth) => Response::json(200, oauth.metadata()),
                None => self.refuse(Reason::UnknownPath, "Not Found: no such path"),
            },
            // Answered by the service, which sees every route.
            Route::Metrics => self.refuse(Reason::UnknownPath, "Not Found: no such path"),
            Route::Health => {
                let mut response = Response::empty(200);
                response.content_type = Some("text/plain");
                response.body = bytes::Bytes::from_static(b"ok\n");
                response
            }
            Route::Noop => Response::empty(204),
            Route::Unknown => self.refuse(Reason::UnknownPath, "Not Found: no such path"),
        };
        response.into()
    }

    fn on_upstream_failure(&self, pending: &Pending, failure: UpstreamFailure) -> Response {
        let (reason, message) = match failure {
            UpstreamFailure::Unreachable => (
                Reason::UpstreamUnreachable,
                "Internal error: the upstream MCP server is unreachable",
            ),
            UpstreamFailure::Timeout => (
                Reason::UpstreamTimeout,
                "Internal error: the upstream MCP server did not answer in time",
            ),
            UpstreamFailure::BadAnswer => (
                Reason::UpstreamBadAnswer,
                "Internal error: the upstream MCP server's answer could not be read (not valid HTTP, or not readable where the gateway filters or seals it)",
            ),
            // Counted as unreachable: no connection the request could go on.
            UpstreamFailure::Tls => (
                Reason::UpstreamUnreachable,
                "Internal error: the upstream MCP server could not be reached over TLS (its certificate failed verification, or the TLS handshake failed)",
            ),
        };
        let mut answer = self.answer(self.gate.rejections().send_allowed(
            reason,
            pending.id.as_ref(),
            Some(message),
        ));
        if let Some(origin) = &pending.origin {
            cors::mark(&mut answer, origin);
        }
        answer
    }

    /// The CORS headers for `head`'s origin on an answer of this route's
    /// endpoint or metadata (`route`).
    fn finish_answer(&self, head: &Head<'_>, response: &mut Response, route: Route) {
        // A preflight's answer is complete, and another `OPTIONS` gets no
        // CORS headers; nor do the gateway's own paths.
        if head.method == "OPTIONS" || !matches!(route, Route::Endpoint | Route::ResourceMetadata) {
            return;
        }
        if let Some(origin) = cors::allowed_origin(&self.wire, head) {
            cors::mark(response, origin);
        }
    }

    fn answer_headers(&self, pending: &Pending, headers: &mut Vec<u8>) {
        if let Some(origin) = &pending.origin {
            cors::mark_relayed(headers, origin);
        }
    }

    fn edit_answer(
        &self,
        pending: &Pending,
        headers: &[u8],
        body: Option<&[u8]>,
    ) -> Option<Vec<u8>> {
        let edited = body.and_then(|body| pending.adds.apply(headers, body));
        // Nothing to add but rate limits the upstream did not give is no
        // loss; anything else not added is counted.
        if edited.is_none() && (pending.adds.capability || pending.adds.normalized.is_some()) {
            self.metrics.answer_unedited();
        }
        edited
    }

    fn seal_session(
        &self,
        pending: &Pending,
        headers: &mut Vec<u8>,
        value: std::ops::Range<usize>,
    ) -> bool {
        match (&self.sessions, &pending.owner) {
            (Some(sessions), Some(owner)) => {
                sessions.seal_in_place(owner, pending.verified.as_ref(), headers, value)
            }
            // Sealed for nobody: not relayed.
            _ => false,
        }
    }

    fn rewrite_answer(&self, pending: &Pending, answer: WatchedAnswer<'_>) -> Option<Vec<u8>> {
        match (&self.wire.oauth, &pending.listing_for) {
            (Some(oauth), Some(grant)) => {
                oauth::listing::filter_tools(answer.body, answer.event_stream, &|tool| {
                    oauth.tool_denied(grant, tool).is_none()
                })
            }
            _ => Some(answer.body.to_vec()),
        }
    }

    fn on_answer(&self, pending: Pending, answer: WatchedAnswer<'_>) {
        let Some(watch) = &pending.watch else {
            return;
        };
        self.metrics.answer_observed();
        self.gate
            .watch_answer(watch, pending.id.as_ref(), answer.body, answer.event_stream);
    }

    fn on_http_error(&self, error: HttpError) -> Response {
        if let HttpError::Field(field) = error {
            // One wording for the server and an embedder's header map.
            return self.answer(self.gate.refuse_field(field));
        }
        let rejection = crate::reject::out::with_arena(|arena| {
            let limit_message;
            let message = match error {
                HttpError::HeadTooLarge => {
                    "Request Header Fields Too Large: too many or too large headers"
                }
                HttpError::BodyTooLarge { limit } => {
                    limit_message = crate::gate::body_too_large_message(arena, limit);
                    &limit_message
                }
                HttpError::BadRequest => "Bad Request: malformed HTTP request",
                HttpError::Field(_) => unreachable!("answered above"),
            };
            self.gate
                .rejections()
                .send(http_error_reason(error), None, Some(message), &[])
        });
        self.answer(rejection)
    }
}

#[cfg(test)]
mod tests {
    use super::McpService;
    use crate::server::http::serve_connection;

    /// The size of what `f` returns, without calling it.
    fn returned_size<A, B, R>(_: &impl Fn(A, B) -> R) -> usize {
        std::mem::size_of::<R>()
    }

    /// Every open connection is one task of this size, allocated at accept:
    /// `max_connections` times it is memory held whatever the clients do.
    /// 2,432 bytes on monoio 0.2.4 (each timeout holds a 512-byte timer
    /// entry); 4,224 before the refusal, body and forward paths were boxed.
    #[test]
    fn a_connection_task_stays_under_2560_bytes() {
        let size = returned_size(&serve_connection::<McpService>);
        assert!(size <= 2560, "a connection task takes {size} bytes");
    }
}
