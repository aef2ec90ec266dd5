//! A minimal tokio + hyper HTTP/1.1 server answering every request 204
//! without reading its body: what a user could stand up in front of an MCP
//! server with no checks at all. One thread, like one mcpgate worker.
//!
//! Usage: hyper-baseline 127.0.0.1:PORT

use std::convert::Infallible;

use http_body_util::Empty;
use hyper::body::Bytes;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper::{Request, Response, StatusCode};
use hyper_util::rt::TokioIo;
use tokio::net::TcpListener;

async fn answer(_: Request<hyper::body::Incoming>) -> Result<Response<Empty<Bytes>>, Infallible> {
    let mut response = Response::new(Empty::new());
    *response.status_mut() = StatusCode::NO_CONTENT;
    Ok(response)
}

#[tokio::main(flavor = "current_thread")]
async fn main() -> std::io::Result<()> {
    let address = std::env::args().nth(1).unwrap_or_else(|| "127.0.0.1:8090".to_owned());
    let listener = TcpListener::bind(&address).await?;
    println!("listening on {}", listener.local_addr()?);
    loop {
        let (stream, _) = listener.accept().await?;
        stream.set_nodelay(true)?;
        tokio::spawn(async move {
            let _ = http1::Builder::new()
                .serve_connection(TokioIo::new(stream), service_fn(answer))
                .await;
        });
    }
}
