//! `mcpgate serve --upstream https://…` in front of a TLS upstream on
//! 127.0.0.1 whose certificates are made per run: calls forwarded over
//! TLS (on both io drivers) on kept-alive connections, the catalog learned
//! over TLS, and a certificate that is not to be trusted (another CA, or
//! another name) answered 502 before any byte of the request leaves.

#[path = "support/certs.rs"]
mod certs;
#[path = "support/process.rs"]
mod process;
mod support;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpListener};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use certs::{Ca, Leaf};
use process::{CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;

/// An MCP upstream speaking TLS: answers `tools/list` with one tool,
/// `echo`, and any other request with an empty result; counts TCP
/// connections, completed handshakes and the requests it read.
struct TlsUpstream {
    addr: SocketAddr,
    connections: Arc<AtomicUsize>,
    handshakes: Arc<AtomicUsize>,
    requests: Arc<Mutex<Vec<Value>>>,
    stop: Arc<AtomicBool>,
}

impl TlsUpstream {
    fn start(leaf: &Leaf) -> TlsUpstream {
        let config = certs::server_config(leaf);
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        listener.set_nonblocking(true).unwrap();
        let upstream = TlsUpstream {
            addr: listener.local_addr().unwrap(),
            connections: Arc::default(),
            handshakes: Arc::default(),
            requests: Arc::default(),
            stop: Arc::default(),
        };
        let (connections, handshakes, requests, stop) = (
            upstream.connections.clone(),
            upstream.handshakes.clone(),
            upstream.requests.clone(),
            upstream.stop.clone(),
        );
        thread::spawn(move || {
            // Bounded: the test is over long before.
            let end = Instant::now() + Duration::from_secs(120);
            while !stop.load(Ordering::SeqCst) && Instant::now() < end {
                let Ok((tcp, _)) = listener.accept() else {
                    thread::sleep(Duration::from_millis(5));
                    continue;
                };
                connections.fetch_add(1, Ordering::SeqCst);
                let (config, handshakes, requests) =
                    (config.clone(), handshakes.clone(), requests.clone());
                thread::spawn(move || serve(tcp, config, &handshakes, &requests));
            }
        });
        upstream
    }

    fn url(&self) -> String {
        format!("https://{}/mcp", self.addr)
    }

    fn requests(&self) -> Vec<Value> {
        self.requests.lock().unwrap().clone()
    }
}

impl Drop for TlsUpstream {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve(
    mut tcp: std::net::TcpStream,
    config: Arc<rustls::ServerConfig>,
    handshakes: &AtomicUsize,
    requests: &Mutex<Vec<Value>>,
) {
    tcp.set_nonblocking(false).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(20))).unwrap();
    let mut tls = rustls::ServerConnection::new(config).unwrap();
    while tls.is_handshaking() {
        if tls.complete_io(&mut tcp).is_err() {
            return;
        }
    }
    handshakes.fetch_add(1, Ordering::SeqCst);
    let mut reader = BufReader::new(rustls::StreamOwned::new(tls, tcp));
    for _ in 0..1000 {
        let mut length = 0;
        let mut line = String::new();
        loop {
            line.clear();
            match reader.read_line(&mut line) {
                Ok(n) if n > 0 => {}
                _ => return,
            }
            if line == "\r\n" {
                break;
            }
            if let Some((name, value)) = line.split_once(':')
                && name.eq_ignore_ascii_case("content-length")
            {
                length = value.trim().parse().unwrap();
            }
        }
        let mut body = vec![0; length];
        if reader.read_exact(&mut body).is_err() {
            return;
        }
        let message: Value = serde_json::from_slice(&body).unwrap_or_default();
        requests.lock().unwrap().push(message.clone());
        let result = match message["method"].as_str() {
            Some("tools/list") => json!({"tools": [
                {"name": "echo", "inputSchema": {"type": "object"}}
            ]}),
            _ => json!({"content": []}),
        };
        let body = json!({"jsonrpc": "2.0", "id": message["id"], "result": result}).to_string();
        let answer = format!(
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let stream = reader.get_mut();
        if stream.write_all(answer.as_bytes()).is_err() || stream.flush().is_err() {
            return;
        }
    }
}

/// A CA, an upstream serving a certificate it signed for `names`, and
/// the CA's PEM file.
fn upstream_signed_for(names: &[&str]) -> (Ca, TlsUpstream, String) {
    let ca = Ca::new("upstream test CA");
    let upstream = TlsUpstream::start(&ca.leaf(names));
    let file = certs::write(&certs::temp_dir("upstream-tls"), "ca.pem", &ca.pem());
    (ca, upstream, file)
}

fn gateway(driver: &str, upstream: &TlsUpstream, ca_file: &str, extra: &[&str]) -> Server {
    let url = upstream.url();
    let mut args = vec![
        "--io-driver",
        driver,
        "--workers",
        "1",
        "--upstream",
        &url,
        "--upstream-ca-file",
        ca_file,
    ];
    if !extra.contains(&"--learn-catalog") {
        args.extend_from_slice(&["--learn-catalog", "false"]);
    }
    args.extend_from_slice(extra);
    Server::start(&args)
}

/// A valid 2026-07-28 `tools/call` of `echo`.
fn call(id: Value) -> Vec<u8> {
    let message = tools_call(id, "echo", json!({"text": "hi"}));
    post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    )
}

crate::on_each_driver!(
    calls_are_forwarded_over_tls_on_one_kept_alive_connection,
    a_certificate_from_an_untrusted_ca_answers_502_and_sends_nothing,
    a_certificate_for_another_name_answers_502_and_sends_nothing,
    a_client_over_tls_is_answered_through_an_upstream_over_tls,
);

fn calls_are_forwarded_over_tls_on_one_kept_alive_connection(driver: &str) {
    let (_ca, upstream, ca_file) = upstream_signed_for(&["127.0.0.1"]);
    let server = gateway(driver, &upstream, &ca_file, &[]);
    for id in ["tls-1", "tls-2", "tls-3"] {
        let answer = server.send(&call(json!(id)));
        assert_eq!(
            answer.status,
            200,
            "{:?}",
            String::from_utf8_lossy(&answer.body)
        );
        assert_eq!(answer.json()["id"], id);
        assert_eq!(answer.json()["result"], json!({"content": []}));
    }
    let ids: Vec<Value> = upstream
        .requests()
        .iter()
        .map(|m| m["id"].clone())
        .collect();
    assert_eq!(ids, [json!("tls-1"), json!("tls-2"), json!("tls-3")]);
    // One worker, one pooled connection: one handshake for every call.
    assert_eq!(upstream.connections.load(Ordering::SeqCst), 1);
    assert_eq!(upstream.handshakes.load(Ordering::SeqCst), 1);
}

/// The refusal every failed handshake gets, counted as unreachable.
fn assert_refused_before_sending(server: &Server, upstream: &TlsUpstream) {
    let answer = server.send(&call(json!("r-tls")));
    assert_eq!(answer.status, 502);
    let body = answer.json();
    assert_eq!(body["id"], "r-tls");
    assert_eq!(body["error"]["code"], -32603);
    let message = body["error"]["message"].as_str().unwrap();
    assert!(
        message.contains("certificate failed verification"),
        "{message}"
    );
    let series = "mcpgate_rejections_total{rejecter=\"forward\",reason=\"upstream_unreachable\",status=\"502\"}";
    assert_eq!(server.metric(series), 1);
    // The gateway reached it, refused its certificate, sent nothing.
    assert!(upstream.connections.load(Ordering::SeqCst) >= 1);
    assert_eq!(upstream.handshakes.load(Ordering::SeqCst), 0);
    assert!(upstream.requests().is_empty());
}

fn a_certificate_from_an_untrusted_ca_answers_502_and_sends_nothing(driver: &str) {
    let (_ca, upstream, _) = upstream_signed_for(&["127.0.0.1"]);
    let other = Ca::new("another CA");
    let other_file = certs::write(&certs::temp_dir("upstream-tls"), "other.pem", &other.pem());
    let server = gateway(driver, &upstream, &other_file, &[]);
    assert_refused_before_sending(&server, &upstream);
}

fn a_certificate_for_another_name_answers_502_and_sends_nothing(driver: &str) {
    let (_ca, upstream, ca_file) = upstream_signed_for(&["other.test"]);
    let server = gateway(driver, &upstream, &ca_file, &[]);
    assert_refused_before_sending(&server, &upstream);
}

fn a_client_over_tls_is_answered_through_an_upstream_over_tls(driver: &str) {
    let (ca, upstream, ca_file) = upstream_signed_for(&["127.0.0.1"]);
    // The gateway's own certificate, from the same CA.
    let leaf = ca.leaf(&["localhost"]);
    let dir = certs::temp_dir("upstream-tls");
    let cert = certs::write(&dir, "gateway.crt", &leaf.cert);
    let key = certs::write(&dir, "gateway.key", &leaf.key);
    let server = gateway(
        driver,
        &upstream,
        &ca_file,
        &["--tls-cert", &cert, "--tls-key", &key],
    );
    let tcp = std::net::TcpStream::connect(server.address).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let config = certs::client_config(&ca.pem());
    let conn = rustls::ClientConnection::new(config, "localhost".try_into().unwrap()).unwrap();
    let mut client = rustls::StreamOwned::new(conn, tcp);
    for id in ["both-1", "both-2"] {
        client.write_all(&call(json!(id))).unwrap();
        let mut head = Vec::new();
        let mut byte = [0u8; 1];
        while !head.ends_with(b"\r\n\r\n") {
            client.read_exact(&mut byte).unwrap();
            head.push(byte[0]);
        }
        let (status, headers) = process::split_head(&head);
        assert!(status.starts_with("HTTP/1.1 200"), "{status}");
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .unwrap();
        let mut body = vec![0; length];
        client.read_exact(&mut body).unwrap();
        let body: Value = serde_json::from_slice(&body).unwrap();
        assert_eq!(body["id"], id);
    }
    assert_eq!(upstream.requests().len(), 2);
}

#[test]
fn the_catalog_is_learned_over_tls_with_the_ca_file() {
    let (_ca, upstream, ca_file) = upstream_signed_for(&["127.0.0.1"]);
    let server = gateway("epoll", &upstream, &ca_file, &["--learn-catalog", "true"]);
    // Asked at start, before the gateway listens.
    assert!(
        upstream
            .requests()
            .iter()
            .any(|m| m["method"] == "tools/list")
    );
    // The learned tool is called; one the listing lacks is refused here.
    let answer = server.send(&call(json!(1)));
    assert_eq!(answer.status, 200);
    let message = tools_call(json!(2), "not-listed", json!({}));
    let unknown = post(
        "/mcp",
        &modern_headers(&message),
        &serde_json::to_vec(&message).unwrap(),
        CLIENT_HEADERS,
    );
    let answer = server.send(&unknown);
    let refused: Value = serde_json::from_slice(&answer.body).unwrap();
    assert_eq!(refused["error"]["code"], -32602, "{refused}");
    assert!(
        !upstream
            .requests()
            .iter()
            .any(|m| m["params"]["name"] == "not-listed")
    );
}

#[test]
fn an_unreadable_or_empty_upstream_ca_file_stops_the_start_naming_the_key() {
    let dir = certs::temp_dir("upstream-tls");
    let empty = certs::write(&dir, "empty.pem", "");
    let missing = dir.join("missing.pem").to_str().unwrap().to_owned();
    for file in [empty, missing] {
        let ran = process::run_bounded(
            std::process::Command::new(env!("CARGO_BIN_EXE_mcpgate")).args([
                "serve",
                "--listen",
                "127.0.0.1:0",
                "--upstream",
                "https://127.0.0.1:9/mcp",
                "--upstream-ca-file",
                &file,
            ]),
            Duration::from_secs(20),
        );
        assert!(!ran.status.success());
        assert!(ran.stderr.contains("upstream_ca_file"), "{}", ran.stderr);
    }
}
