//! A minimal tokio + hyper HTTP/1.1 server, one thread like one mcpgate
//! worker, in two modes:
//!
//! - `204` (the default): answers every request 204 without reading its
//!   body: what a user could stand up in front of an MCP server with no
//!   checks at all (benches/load.sh).
//! - `tools-call`: reads each request's body and answers a fixed
//!   `tools/call` JSON-RPC result (naming the request's `Mcp-Session-Id`
//!   when it has one): a fast MCP upstream for the gateway benchmarks
//!   (benches/gateway-load.sh, benches/session-load.sh).
//!
//! Usage: hyper-baseline 127.0.0.1:PORT [204|tools-call [SESSION]]
//! (SESSION: the session id a `tools-call` answer names when its request
//! names none)

use std::convert::Infallible;

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::header::{CONTENT_TYPE, HeaderValue};
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

const TOOLS_CALL_RESULT: &[u8] = br#"{"jsonrpc":"2.0","id":"call-1","result":{"content":[{"type":"text","text":"New York: 21C, partly cloudy; next 3 days 19-24C"}],"isError":false}}"#;

async fn no_content(
    _: Request<hyper::body::Incoming>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    let mut response = Response::new(Full::new(Bytes::new()));
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

async fn tools_call(
    request: Request<hyper::body::Incoming>,
    opens: Option<HeaderValue>,
) -> Result<Response<Full<Bytes>>, Infallible> {
    // A request in a session is answered naming it, as a 2025 lane's
    // server does; one in none, naming `opens` when given
    // (benches/session-load.sh).
    let session = request.headers().get("mcp-session-id").cloned().or(opens);
    // Read the whole body, as an MCP server must before answering.
    let _ = request.into_body().collect().await;
    let mut response = Response::new(Full::new(Bytes::from_static(TOOLS_CALL_RESULT)));
    response
        .headers_mut()
        .insert(CONTENT_TYPE, HeaderValue::from_static("application/json"));
    if let Some(session) = session {
        response.headers_mut().insert("mcp-session-id", session);
    }
    Ok(response)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let mcp = match args.next().as_deref() {
        None | Some("204") => false,
        Some("tools-call") => true,
        Some(other) => {
            eprintln!("unknown mode {other:?} (expected 204 or tools-call)");
            std::process::exit(2);
        }
    };
    let opens = args.next().map(|id| HeaderValue::from_str(&id).expect("a session id"));
    let listener = TcpListener::bind(&address).await?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        let opens = opens.clone();
        tokio::spawn(async move {
            let io = TokioIo::new(stream);
            let _ = if mcp {
                http1::Builder::new()
                    .serve_connection(
                        io,
                        service_fn(move |request| tools_call(request, opens.clone())),
                    )
                    .await
            } else {
                http1::Builder::new()
                    .serve_connection(io, service_fn(no_content))
                    .await
            };
        });
    }
}
