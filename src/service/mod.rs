//! `mcpgate serve`: the routes around the gate, on the HTTP server.
//!
//! | route | what |
//! |---|---|
//! | `POST <endpoint>` (default `/mcp`) | the MCP endpoint: wire checks, then the gate; other methods 405 |
//! | `POST /validate` | the verdict service: the client's body and headers in, `204` or the exact rejection out |
//! | `GET /metrics` | Prometheus text |
//! | `GET /healthz` | `200 ok` |
//! | `/_noop` | `204` without reading anything: the load benchmark's floor |

pub mod metrics;
pub mod wire;

use std::time::Instant;

use metrics::Metrics;
use wire::WirePolicy;

use crate::gate::{Gate, Verdict};
use crate::reject::{Reason, Rejection};
use crate::server::{Head, HttpError, Response, Service};

pub const VALIDATE_PATH: &str = "/validate";
pub const METRICS_PATH: &str = "/metrics";
pub const HEALTH_PATH: &str = "/healthz";
pub const NOOP_PATH: &str = "/_noop";

pub struct McpService {
    pub gate: Gate,
    pub endpoint: String,
    pub wire: WirePolicy,
    pub metrics: Metrics,
}

/// Where a request goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Route {
    Endpoint,
    Validate,
    Metrics,
    Health,
    Noop,
    Unknown,
}

impl McpService {
    fn route(&self, path: &str) -> Route {
        match path {
            p if p == self.endpoint => Route::Endpoint,
            VALIDATE_PATH => Route::Validate,
            METRICS_PATH => Route::Metrics,
            HEALTH_PATH => Route::Health,
            NOOP_PATH => Route::Noop,
            _ => Route::Unknown,
        }
    }

    fn refuse(&self, reason: Reason, message: &str) -> Response {
        self.answer(
            self.gate
                .rejections()
                .send(reason, None, Some(message), &[]),
        )
    }

    fn answer(&self, rejection: Rejection) -> Response {
        let mut response = Response::json(rejection.status, rejection.body);
        match rejection.reason {
            Reason::Unauthorized => response
                .headers
                .push(("WWW-Authenticate", "Bearer realm=\"mcpgate\"".to_owned())),
            Reason::MethodNotAllowed => response.headers.push(("Allow", "POST".to_owned())),
            _ => {}
        }
        response
    }

    /// The gate's verdict on an MCP message; `allow` builds the answer to a
    /// message let through.
    fn judge(&self, head: &Head<'_>, body: &[u8], allow: impl FnOnce() -> Response) -> Response {
        let started = Instant::now();
        let response = match self.gate.check(head, body) {
            Verdict::Allow(allowed) => {
                self.metrics
                    .allowed(allowed.revision.lane().into(), allowed.kind);
                allow()
            }
            Verdict::Reject(rejection) => self.answer(rejection),
        };
        self.metrics.request(started.elapsed());
        response
    }
}

/// The rejection-table row a refusal of the connection layer is answered
/// with.
pub fn http_error_reason(error: HttpError) -> Reason {
    match error {
        HttpError::HeadTooLarge => Reason::HeadTooLarge,
        HttpError::BodyTooLarge { .. } => Reason::BodyTooLarge,
        HttpError::BadRequest => Reason::BadHttp,
    }
}

impl Service for McpService {
    fn on_head(&self, head: &Head<'_>) -> Option<Response> {
        let route = self.route(head.path);
        match route {
            Route::Endpoint | Route::Validate => {
                if head.method != "POST" {
                    return Some(self.refuse(
                        Reason::MethodNotAllowed,
                        "Method Not Allowed: the MCP endpoint takes POST",
                    ));
                }
                self.wire
                    .check(head)
                    .err()
                    .map(|refusal| self.refuse(refusal.reason, refusal.message))
            }
            Route::Metrics | Route::Health if head.method != "GET" => Some(self.refuse(
                Reason::MethodNotAllowed,
                "Method Not Allowed: this path takes GET",
            )),
            Route::Metrics | Route::Health | Route::Noop => None,
            Route::Unknown => Some(self.refuse(Reason::UnknownPath, "Not Found: no such path")),
        }
    }

    fn on_request(&self, head: &Head<'_>, body: &[u8]) -> Response {
        match self.route(head.path) {
            Route::Endpoint => self.judge(head, body, || {
                // Allowed, but this instance has no upstream to send it to.
                self.refuse(
                    Reason::NoUpstream,
                    "Internal error: no upstream is configured; POST /validate for verdicts",
                )
            }),
            Route::Validate => self.judge(head, body, || Response::empty(204)),
            Route::Metrics => {
                let mut response = Response::empty(200);
                response.content_type = Some("text/plain; version=0.0.4");
                response.body = self.metrics.render(&self.gate).into_bytes();
                response
            }
            Route::Health => {
                let mut response = Response::empty(200);
                response.content_type = Some("text/plain");
                response.body = b"ok\n".to_vec();
                response
            }
            Route::Noop => Response::empty(204),
            Route::Unknown => self.refuse(Reason::UnknownPath, "Not Found: no such path"),
        }
    }

    fn on_http_error(&self, error: HttpError) -> Response {
        let message = match error {
            HttpError::HeadTooLarge => {
                "Request Header Fields Too Large: too many or too large headers".into()
            }
            HttpError::BodyTooLarge { limit } => crate::gate::body_too_large_message(limit),
            HttpError::BadRequest => "Bad Request: malformed HTTP request".into(),
        };
        self.refuse(http_error_reason(error), &message)
    }

    fn on_connection(&self, opened: bool) {
        self.metrics.connection(opened);
    }

    fn on_bytes_in(&self, n: usize) {
        self.metrics.bytes_in(n);
    }
}
