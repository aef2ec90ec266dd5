//! An axum MCP endpoint with mcpgate's gate embedded: one `Gate` built at
//! start, every POST checked with `gate.check(&headers, &body)`, a refusal
//! answered here, an allowed message forwarded to the upstream and its
//! answer streamed back.
//!
//! ```text
//! cargo run --example axum_frontend --features http -- \
//!     --upstream http://127.0.0.1:3000/mcp [--listen 8080]
//! ```
//!
//! Prints `listening on 127.0.0.1:PORT` as its first stdout line, as
//! `mcpgate serve` does. What `mcpgate serve` adds and this example leaves
//! out: the wire checks (Origin allow-list, bearer auth, Content-Type and
//! Accept: the upstream still makes its own), upstream timeouts, the GET
//! stream and DELETE of 2025 sessions (axum answers 405), metrics.

use std::error::Error;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{DefaultBodyLimit, State};
use axum::http::{HeaderMap, HeaderName, HeaderValue, Request, Response, Uri, header};
use axum::routing::post;
use clap::Parser;
use hyper::body::{Frame, Incoming, SizeHint};
use hyper_util::client::legacy::Client;
use hyper_util::client::legacy::connect::HttpConnector;
use hyper_util::rt::TokioExecutor;
use mcpgate::{Gate, GateConfig, Reason, Rejection, RequestId, Verdict, Watch};

#[derive(Parser)]
struct Args {
    /// The port to listen on, on 127.0.0.1 (0: any free port).
    #[arg(long, env = "MCPGATE_EXAMPLE_LISTEN", default_value_t = 8080)]
    listen: u16,
    /// The upstream MCP endpoint, e.g. http://127.0.0.1:3000/mcp.
    #[arg(long, env = "MCPGATE_EXAMPLE_UPSTREAM")]
    upstream: Uri,
}

struct App {
    gate: Gate,
    upstream: Uri,
    client: Client<HttpConnector, Body>,
}

/// POST /mcp: the gate's verdict, then the upstream's answer.
async fn mcp(State(app): State<Arc<App>>, headers: HeaderMap, body: Bytes) -> Response<Body> {
    // The map goes in as it is: the gate refuses one holding a field it or
    // the upstream reads twice (400), so no copy it did not check goes on.
    let allowed = match app.gate.check(&headers, &body) {
        Verdict::Allow(allowed) => allowed,
        Verdict::Reject(rejection) => return json(rejection),
    };
    let request = upstream_request(&app.upstream, &headers, body);
    let Ok(answer) = app.client.request(request).await else {
        return upstream_unreachable(&app.gate, allowed.id.as_ref());
    };
    // Streamed back as it arrives; an answer the gate wants to read
    // (`tools/list`, a tool with an outputSchema) is copied on the way.
    let watcher = allowed.watch.map(|watch| Watcher {
        app: app.clone(),
        watch,
        id: allowed.id,
    });
    relay(answer, watcher)
}

/// A refusal, sent as the gate built it (its `Bytes`, not a copy).
fn json(rejection: Rejection) -> Response<Body> {
    let mut response = Response::new(Body::from(rejection.body));
    *response.status_mut() = rejection.status.try_into().expect("a table status");
    let json = HeaderValue::from_static("application/json");
    response.headers_mut().insert(header::CONTENT_TYPE, json);
    response
}

/// 502 for an upstream that cannot be reached: counted and worded as the
/// gate's own refusals, the request's id echoed.
fn upstream_unreachable(gate: &Gate, id: Option<&RequestId>) -> Response<Body> {
    let message = "Internal error: the upstream MCP server is unreachable";
    let rejections = gate.rejections();
    json(rejections.send_allowed(Reason::UpstreamUnreachable, id, Some(message)))
}

const MCP_SESSION_ID: HeaderName = HeaderName::from_static("mcp-session-id");

/// The message for the upstream: the same body bytes, and the fields the
/// upstream acts on — every `Mcp-*`/`MCP-*` field (those the gate binds are
/// checked, each present once) and content negotiation. Host and the
/// hop-by-hop fields stay behind; the client sets its own.
fn upstream_request(upstream: &Uri, headers: &HeaderMap, body: Bytes) -> Request<Body> {
    let mut request = Request::new(Body::from(body));
    *request.method_mut() = axum::http::Method::POST;
    *request.uri_mut() = upstream.clone();
    for (name, value) in headers {
        if name.as_str().starts_with("mcp-")
            || name == header::ACCEPT
            || name == header::CONTENT_TYPE
        {
            request.headers_mut().append(name, value.clone());
        }
    }
    request
}

/// The upstream's status, Content-Type, `Mcp-Session-Id` (2025 sessions)
/// and body, streamed (through `watcher` when the gate reads the answer).
/// A 202 without a body (a notification) is relayed as is.
fn relay(answer: Response<Incoming>, watcher: Option<Watcher>) -> Response<Body> {
    let (parts, incoming) = answer.into_parts();
    let body = match watcher {
        Some(watcher) => Body::new(Watched {
            event_stream: parts
                .headers
                .get(header::CONTENT_TYPE)
                .is_some_and(|v| v.as_bytes().starts_with(b"text/event-stream")),
            watcher: Some(watcher),
            inner: incoming,
            copy: Vec::new(),
        }),
        None => Body::new(incoming),
    };
    let mut response = Response::new(body);
    *response.status_mut() = parts.status;
    for name in [header::CONTENT_TYPE, MCP_SESSION_ID] {
        if let Some(value) = parts.headers.get(&name) {
            response.headers_mut().insert(name, value.clone());
        }
    }
    response
}

/// What the gate's answer watcher needs besides the answer: the gate, and
/// the request's watch and id as the gate let it through.
struct Watcher {
    app: Arc<App>,
    watch: Watch,
    id: Option<RequestId>,
}

/// An upstream answer passed on frame by frame while a copy is kept; once
/// it has ended the gate's answer watcher reads the copy: a complete
/// `tools/list` becomes the catalog, a tool's `structuredContent` is held
/// to its `outputSchema` (logged and counted, never altered). An answer cut
/// short or over the gate's body limit is not watched.
struct Watched {
    /// `None` once the copy was read, or given up.
    watcher: Option<Watcher>,
    event_stream: bool,
    inner: Incoming,
    copy: Vec<u8>,
}

impl hyper::body::Body for Watched {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        match &polled {
            Poll::Ready(Some(Ok(frame))) => {
                if let (Some(data), Some(watcher)) = (frame.data_ref(), &this.watcher) {
                    if this.copy.len() + data.len() > watcher.app.gate.config().body_limit {
                        this.watcher = None;
                        this.copy = Vec::new();
                    } else {
                        this.copy.extend_from_slice(data);
                    }
                }
            }
            Poll::Ready(None) => {
                if let Some(Watcher { app, watch, id }) = this.watcher.take() {
                    let sse = this.event_stream;
                    app.gate.watch_answer(&watch, id.as_ref(), &this.copy, sse);
                }
            }
            Poll::Ready(Some(Err(_))) => this.watcher = None,
            Poll::Pending => {}
        }
        polled
    }

    fn size_hint(&self) -> SizeHint {
        // Keeps the upstream's Content-Length for a JSON answer.
        self.inner.size_hint()
    }
}

/// Asks the upstream for its tools once, at start, the way a client
/// would: the request passes the gate, and its answer goes through the
/// answer watcher, which puts a complete `tools/list` in service as the
/// catalog (the same path takes every later `tools/list` a client asks).
/// Without a catalog, calls are forwarded unchecked. `Catalog::from_json`
/// and `Gate::set_catalog` do the same for a list the embedder holds.
async fn learn_catalog(app: &Arc<App>) -> Result<usize, Box<dyn Error>> {
    let message = serde_json::json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/list",
        "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}
    });
    let body = Bytes::from(serde_json::to_vec(&message)?);
    let mut headers = HeaderMap::new();
    for (name, value) in [
        ("mcp-protocol-version", "2026-07-28"),
        ("mcp-method", "tools/list"),
        ("content-type", "application/json"),
        ("accept", "application/json, text/event-stream"),
    ] {
        headers.insert(name, HeaderValue::from_static(value));
    }
    let answer = mcp(State(app.clone()), headers, body).await;
    let status = answer.status();
    // Read to its end: the watcher runs once the answer is complete.
    axum::body::to_bytes(answer.into_body(), usize::MAX).await?;
    if !status.is_success() {
        return Err(format!("tools/list answered {status}").into());
    }
    Ok(app.gate.catalog().len())
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> Result<(), Box<dyn Error>> {
    let args = Args::parse();
    let gate = Gate::new(GateConfig::default())?;
    let body_limit = gate.config().body_limit;
    let client = Client::builder(TokioExecutor::new()).build_http();
    let app = Arc::new(App {
        gate,
        upstream: args.upstream,
        client,
    });
    match learn_catalog(&app).await {
        Ok(tools) => eprintln!("axum_frontend: {tools} tools learned from the upstream"),
        Err(e) => eprintln!(
            "axum_frontend: no catalog ({e}); calls are forwarded unchecked until a client's tools/list passes"
        ),
    }
    let router = Router::new()
        .route("/mcp", post(mcp))
        // The gate's own limit: axum answers a larger body 413 itself.
        .layer(DefaultBodyLimit::max(body_limit))
        .with_state(app);
    let listener = tokio::net::TcpListener::bind(("127.0.0.1", args.listen)).await?;
    println!("listening on {}", listener.local_addr()?);
    axum::serve(listener, router).await?;
    Ok(())
}
