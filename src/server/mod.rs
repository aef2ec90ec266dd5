//! The HTTP/1.1 server: thread-per-core monoio workers ([`runtime`]) and the
//! connection layer ([`http`]), behind the small [`Service`] trait that the
//! routes and wire checks implement.
//!
//! The transport owns framing and its limits: it parses heads (httparse),
//! reads `Content-Length` and chunked bodies, answers `Expect: 100-continue`,
//! keeps connections alive, pipelines, times out stalled clients and shuts
//! down gracefully. Everything a request *means* (status codes for methods,
//! auth, content types, the rejection bodies, metrics) is the service's.
//!
//! A service either answers a request itself ([`Reply::Full`]) or asks for
//! it to be forwarded ([`Reply::Forward`]): the connection then sends it
//! over its worker's upstream pool ([`crate::upstream`]) and relays the
//! answer to the client as it arrives, before it reads the next request.

pub mod http;
mod later;
mod reclaim;
pub mod runtime;
pub mod tls;

use std::fmt;
use std::net::SocketAddr;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;

use bytes::Bytes;
use smallvec::SmallVec;

pub use crate::upstream::Failure as UpstreamFailure;
use crate::upstream::UpstreamConfig;
pub use runtime::{ShutdownSignal, serve, serve_until};

/// A parsed request head; borrows the connection's read buffer.
#[derive(Debug)]
pub struct Head<'a> {
    /// The method as sent, e.g. `"POST"`.
    pub method: &'a str,
    /// The request target without the query string.
    pub path: &'a str,
    /// What followed the first `?` of the request target, if anything did.
    pub query: Option<&'a str>,
    /// The headers as parsed (names keep their case; look them up
    /// case-insensitively, e.g. with [`Head::header`]).
    pub headers: &'a [httparse::Header<'a>],
    /// The `Content-Length`, if one was sent (already checked: digits only,
    /// repeated headers agree).
    pub content_length: Option<u64>,
    /// `Transfer-Encoding: chunked`.
    pub chunked: bool,
    /// The request said `HTTP/1.0`.
    pub http10: bool,
    /// What the head parser saw of the fields (`Mcp-Param-*` fields, a
    /// name holding `_`), so later stages need not look again.
    pub(crate) seen: crate::gate::fields::Seen,
}

impl<'a> Head<'a> {
    /// What the forwarder sends on.
    pub fn client_request(&self) -> crate::upstream::ClientRequest<'a> {
        crate::upstream::ClientRequest {
            method: self.method,
            query: self.query,
            headers: self.headers,
            session_id: None,
        }
    }

    /// The value of the first header named `name` (ASCII case-insensitive).
    pub fn header(&self, name: &str) -> Option<&[u8]> {
        self.headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| h.value)
    }
}

impl crate::gate::RequestHeaders for Head<'_> {
    fn header(&self, name: &str) -> Option<&[u8]> {
        Head::header(self, name)
    }

    fn unmirrored_param(&self, mirrored: &dyn Fn(&str) -> bool) -> Option<&str> {
        // The head parser counted them: a head without one looks no further.
        if self.seen.params == 0 {
            return None;
        }
        crate::gate::headers::unmirrored_in(self.headers.iter().map(|h| h.name), mirrored)
    }
}

/// An answer. The connection layer adds `Content-Length` (except for 1xx,
/// 204 and 304, which carry no body) and `Connection: close` when it closes
/// the connection after writing it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status.
    pub status: u16,
    /// E.g. `Some("application/json")`.
    pub content_type: Option<&'static str>,
    /// Extra headers, e.g. `("WWW-Authenticate", "Bearer")`. A value holding
    /// CR or LF is dropped (never written).
    pub headers: SmallVec<[(&'static str, String); 2]>,
    /// The body, written as it is (a refusal's bytes as the gate wrote
    /// them, without a copy).
    pub body: Bytes,
    /// Close the connection after writing this response.
    pub close: bool,
}

impl Response {
    /// A response with no body and no content type.
    pub fn empty(status: u16) -> Response {
        Response {
            status,
            content_type: None,
            headers: SmallVec::new(),
            body: Bytes::new(),
            close: false,
        }
    }

    /// An `application/json` response.
    pub fn json(status: u16, body: impl Into<Bytes>) -> Response {
        Response {
            status,
            content_type: Some("application/json"),
            headers: SmallVec::new(),
            body: body.into(),
            close: false,
        }
    }
}

/// What the service answers a whole request with.
#[derive(Debug)]
pub enum Reply<P> {
    /// An answer built by the service.
    Full(Response),
    /// Send the request on to the upstream and relay its answer.
    Forward(Forward<P>),
}

impl<P> From<Response> for Reply<P> {
    fn from(response: Response) -> Self {
        Reply::Full(response)
    }
}

/// A request to forward: the head and body go upstream as received,
/// minus hop-by-hop headers and `withhold`, with `Host` rewritten.
#[derive(Debug)]
pub struct Forward<P> {
    /// Header names not to pass on (e.g. credentials the service consumed).
    pub withhold: &'static [&'static str],
    /// The body to send instead of the one received (with its own
    /// `Content-Length`).
    pub body: Option<bytes::Bytes>,
    /// How the answer is relayed.
    pub plan: AnswerPlan,
    /// Headers the service sets, in place of any the client sent under
    /// their names (`None`: the client's are only dropped).
    pub set_headers: Vec<(std::sync::Arc<str>, Option<String>)>,
    /// The client's `Mcp-Session-Id` goes on cut to its first this many
    /// bytes (the gateway's seal taken off).
    pub session_id: Option<usize>,
    /// The answer's `Mcp-Session-Id` is given to the client as
    /// [`Service::seal_session`] makes it.
    pub seal_session: bool,
    /// Keep a copy of the answer's body (up to the body limit) and hand it
    /// to [`Service::on_answer`] once it is complete.
    pub watch: bool,
    /// What the service needs later to answer a failure or watch the answer.
    pub pending: P,
}

/// How a forwarded request's answer is relayed. Whatever the plan, the
/// answer's session ids are sealed first (`Forward::seal_session`) and its
/// body is watched as the upstream sent it (`Forward::watch`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswerPlan {
    /// As the upstream sends it, each part of the body as it arrives.
    Relay,
    /// A `200` JSON answer held whole (up to the body limit) and handed to
    /// [`Service::edit_answer`] before it is relayed; an event stream's
    /// response event handed to it as it arrives; anything else relayed.
    Edit,
    /// An answer with a body, whatever its status, held whole (up to the
    /// body limit), and what [`Service::rewrite_answer`] makes of it sent;
    /// what it refuses is never sent (a 2xx answer is answered as a
    /// failure, another keeps its status without its body).
    Rewrite,
    /// A 2xx event stream (a 2025 lane's GET stream): each event's data
    /// handed to [`Service::rewrite_answer`] and what it makes of it
    /// relayed; an event it refuses, one longer than the body limit, and
    /// one the stream does not end are left out. Any other answer is
    /// rewritten whole, as with [`AnswerPlan::Rewrite`].
    RewriteEvents,
}

/// A forwarded answer the service asked to watch, complete.
#[derive(Debug, Clone, Copy)]
pub struct WatchedAnswer<'a> {
    pub status: u16,
    /// `Content-Type: text/event-stream`: `body` is the raw event stream.
    pub event_stream: bool,
    /// The body as relayed (de-chunked).
    pub body: &'a [u8],
}

/// A request the connection layer refused itself. The connection is closed
/// after the answer the service builds for it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HttpError {
    /// The head is over `max_head_bytes`, or has more than `max_headers`
    /// headers (431).
    HeadTooLarge,
    /// `Content-Length` over the limit (decided before any of the body is
    /// read), or a chunked body growing over it (413).
    BodyTooLarge {
        /// The body limit, in bytes, for the answer to name.
        limit: usize,
    },
    /// A malformed request line or header, a bad chunk size line, both
    /// `Content-Length` and `Transfer-Encoding`, an invalid `Content-Length`,
    /// or a `Transfer-Encoding` other than `chunked` (400).
    BadRequest,
    /// A header field the gate or the upstream reads, sent twice or joined,
    /// `Host` missing on HTTP/1.1, or a protected field nominated by
    /// `Connection` (400).
    Field(crate::gate::FieldError),
}

/// What the server runs for each request. Called on the worker threads,
/// synchronously, with no lock held; implementations keep their own state
/// per thread or lock-free.
pub trait Service: Send + Sync + 'static {
    /// Carried with a forwarded request until its answer is relayed.
    type Pending: 'static;
    /// The head is read, the body is not: a chance to refuse early (405,
    /// 401, 415...). `Some(response)` is sent without reading the body, and
    /// no `100 Continue` is sent. If the whole body (`Content-Length`)
    /// already arrived with the head it is skipped and the connection is
    /// kept alive; otherwise (a body still to come, or chunked) the
    /// connection is closed after the answer (`Connection: close`), reading
    /// and discarding what the client still sends for a short while so the
    /// answer is not lost to a reset.
    fn on_head(&self, head: &Head<'_>) -> Option<Response>;
    /// The whole request: answered here, or forwarded.
    fn on_request(&self, head: &Head<'_>, body: &[u8]) -> Reply<Self::Pending>;
    /// The upstream a forwarded request goes to; `None`: the server's own
    /// ([`ServerConfig::upstream`]). Each worker keeps a pool per upstream
    /// named here, found again by the `Arc`'s address.
    fn upstream<'p>(&self, pending: &'p Self::Pending) -> Option<&'p Arc<UpstreamConfig>> {
        let _ = pending;
        None
    }
    /// A forwarded request got no answer to relay; nothing was sent to the
    /// client yet.
    fn on_upstream_failure(&self, pending: &Self::Pending, failure: UpstreamFailure) -> Response {
        let _ = pending;
        Response::empty(match failure {
            UpstreamFailure::Timeout => 504,
            _ => 502,
        })
    }
    /// A watched answer (`Forward::watch`) was relayed in full. Not
    /// called when the answer was cut short or outgrew the body limit.
    fn on_answer(&self, pending: Self::Pending, answer: WatchedAnswer<'_>) {
        let _ = (pending, answer);
    }
    /// A JSON answer to a request forwarded with `Forward::edit`, held
    /// whole: the body to relay instead, or `None` to relay it as it is.
    /// `headers`: its end-to-end headers, each `Name: value\r\n`. `body`
    /// is `None` when the answer was too large to hold.
    fn edit_answer(
        &self,
        pending: &Self::Pending,
        headers: &[u8],
        body: Option<&[u8]>,
    ) -> Option<Vec<u8>> {
        let _ = (pending, headers, body);
        None
    }

    /// A whole answer to a request forwarded with `rewrite` (or one event's
    /// data, with `rewrite_events`): the body the client gets instead
    /// (`None`: it cannot be sent; the client of a 2xx answer gets
    /// [`Service::on_upstream_failure`]'s `BadAnswer`, of another the
    /// status alone).
    fn rewrite_answer(
        &self,
        pending: &Self::Pending,
        answer: WatchedAnswer<'_>,
    ) -> Option<Vec<u8>> {
        let _ = pending;
        Some(answer.body.to_vec())
    }

    /// The answer to a request forwarded with `seal_session` carries an
    /// `Mcp-Session-Id`, its value at `headers[value]` (the answer's
    /// end-to-end headers, each `Name: value\r\n`): replaces it in place
    /// with what the client gets. `false`: it cannot be given, and the
    /// client gets [`Service::on_upstream_failure`]'s `BadAnswer` instead
    /// of the answer.
    fn seal_session(
        &self,
        pending: &Self::Pending,
        headers: &mut Vec<u8>,
        value: std::ops::Range<usize>,
    ) -> bool {
        let _ = (pending, headers, value);
        true
    }

    /// An answer the service built (in `on_head` or `on_request`), its
    /// request's head still at hand: what every answer of a kind carries
    /// is added here (the CORS headers for a page's origin).
    fn finish_answer(&self, head: &Head<'_>, response: &mut Response) {
        let _ = (head, response);
    }

    /// A forwarded answer's end-to-end headers (each `Name: value\r\n`,
    /// sealed already), before they are written: the service may change
    /// them (its own CORS headers in place of the upstream's).
    fn answer_headers(&self, pending: &Self::Pending, headers: &mut Vec<u8>) {
        let _ = (pending, headers);
    }

    /// The connection layer refused the request; the service builds the
    /// answer (and counts it). The connection is closed after it.
    fn on_http_error(&self, error: HttpError) -> Response;
    /// A connection was opened (`true`) or closed (`false`).
    fn on_connection(&self, opened: bool) {
        let _ = opened;
    }
    /// `n` bytes were read from a client.
    fn on_bytes_in(&self, n: usize) {
        let _ = n;
    }
    /// A worker reached its share of `max_connections`: it closes its
    /// connection idle longest, or, with every one busy, stops accepting
    /// until one closes.
    fn on_connection_limit(&self) {}
}

/// Which monoio driver the workers run on.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum IoDriver {
    /// io_uring (`IoUringDriver`). When set, fails at start where the
    /// kernel or a sandbox refuses io_uring; nothing switches to epoll
    /// silently.
    Uring,
    /// epoll (monoio's `LegacyDriver`).
    #[default]
    Epoll,
}

impl IoDriver {
    /// The driver when none is set: io_uring where it is offered here,
    /// else epoll. On io_uring a forwarded request costs less gateway CPU
    /// (benches/README.md, "Through the gateway"), and a verdict less
    /// server CPU, on one worker and on two sharing their cores
    /// (benches/README.md, "Which driver").
    pub fn default_here() -> IoDriver {
        if Self::uring_offered() {
            IoDriver::Uring
        } else {
            IoDriver::Epoll
        }
    }

    /// Whether the kernel offers the io_uring operations monoio needs and a
    /// worker's runtime on it can be built here (a sandbox may refuse the
    /// ring, an old kernel's locked-memory limit its size).
    pub fn uring_offered() -> bool {
        monoio::utils::detect_uring() && runtime::uring_runtime().is_ok()
    }
}

impl FromStr for IoDriver {
    type Err = IoDriverError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "uring" => Ok(IoDriver::Uring),
            "epoll" => Ok(IoDriver::Epoll),
            other => Err(IoDriverError(other.to_owned())),
        }
    }
}

/// A driver name that is neither `uring` nor `epoll` (the name given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown io driver {0:?} (expected \"uring\" or \"epoll\")")]
pub struct IoDriverError(pub String);

impl fmt::Display for IoDriver {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            IoDriver::Uring => "uring",
            IoDriver::Epoll => "epoll",
        })
    }
}

/// Called once with the bound address, after every worker is listening.
pub type OnListening = Arc<dyn Fn(SocketAddr) + Send + Sync>;

/// How the server listens and its limits. [`ServerConfig::new`] fills in
/// the defaults.
#[derive(Clone)]
pub struct ServerConfig {
    /// Port 0 picks a free port; the one bound is passed to `on_listening`.
    pub listen: SocketAddr,
    /// Worker threads, each with its own runtime and `SO_REUSEPORT` listener.
    /// Default: `std::thread::available_parallelism()`.
    pub workers: usize,
    /// The driver the workers run on (`ServerConfig::new`: epoll).
    pub io_driver: IoDriver,
    /// The largest request body (bytes, after de-chunking).
    pub body_limit: usize,
    /// Most headers in one head (clamped to 1..=`MAX_HEADERS_CAP`).
    pub max_headers: usize,
    /// Largest head (request line + headers + blank line), bytes.
    pub max_head_bytes: usize,
    /// How long a keep-alive connection may wait for its next request.
    pub idle_timeout: Duration,
    /// How long a head, or a body, may take to arrive once it has started
    /// (the whole of it, not each read).
    pub read_timeout: Duration,
    /// How long a graceful shutdown waits for open connections.
    pub shutdown_grace: Duration,
    /// Most client connections open at once, split evenly among the
    /// workers (rounded up). A worker holding its share closes the
    /// connection that has waited longest for a request to take the next
    /// one; when every connection is busy with a request it stops
    /// accepting, and further connections wait in the kernel's backlog
    /// until one closes.
    pub max_connections: usize,
    /// Called once, from the thread that called `serve`, with the bound
    /// address once every worker is listening (e.g. to print
    /// `listening on 127.0.0.1:PORT`). Also logged with `tracing`.
    pub on_listening: Option<OnListening>,
    /// Where [`Reply::Forward`] sends requests; each worker keeps its own
    /// connections to it. None: forwarding fails as unreachable.
    pub upstream: Option<Arc<UpstreamConfig>>,
    /// Serve TLS with the certificate this holds (swappable while
    /// serving: `CertResolver::reload`). None: plaintext.
    pub tls: Option<Arc<tls::CertResolver>>,
}

/// The most headers a head may carry, whatever `max_headers` says (the
/// parse array lives on the stack).
pub const MAX_HEADERS_CAP: usize = 256;

impl ServerConfig {
    /// The defaults: a worker per core, epoll, 4 MiB bodies, 64 headers,
    /// 16 KiB heads, 60 s idle, 10 s read, 10 s grace, 4096 connections.
    pub fn new(listen: SocketAddr) -> ServerConfig {
        ServerConfig {
            listen,
            workers: std::thread::available_parallelism()
                .map(|n| n.get())
                .unwrap_or(1),
            io_driver: IoDriver::default(),
            body_limit: 4 * 1024 * 1024,
            max_headers: 64,
            max_head_bytes: 16 * 1024,
            idle_timeout: Duration::from_secs(60),
            read_timeout: Duration::from_secs(10),
            shutdown_grace: Duration::from_secs(10),
            max_connections: 4096,
            on_listening: None,
            upstream: None,
            tls: None,
        }
    }
}

impl fmt::Debug for ServerConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ServerConfig")
            .field("listen", &self.listen)
            .field("workers", &self.workers)
            .field("io_driver", &self.io_driver)
            .field("body_limit", &self.body_limit)
            .field("max_headers", &self.max_headers)
            .field("max_head_bytes", &self.max_head_bytes)
            .field("idle_timeout", &self.idle_timeout)
            .field("read_timeout", &self.read_timeout)
            .field("shutdown_grace", &self.shutdown_grace)
            .field("max_connections", &self.max_connections)
            .field("on_listening", &self.on_listening.is_some())
            .field("upstream", &self.upstream)
            .field("tls", &self.tls.is_some())
            .finish()
    }
}
