//! `mcpgate serve --tls-cert … --tls-key …` over real sockets on
//! 127.0.0.1, its certificate made per run: the same answers over TLS as
//! in the clear (on both io drivers), and clients that do not finish a
//! handshake (plaintext HTTP, silence, half a record) closed without an
//! answer and without harm to the others.

#[path = "support/certs.rs"]
mod certs;
#[path = "support/process.rs"]
mod process;
mod support;

use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::Arc;
use std::time::{Duration, Instant};

use certs::Ca;
use process::{CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;

/// A gateway serving TLS with a certificate for `localhost` and
/// 127.0.0.1, and the client configuration that trusts it.
fn tls_gateway(driver: &str, extra_file: &str) -> (Server, Arc<rustls::ClientConfig>) {
    let ca = Ca::new("gateway test CA");
    let leaf = ca.leaf(&["localhost", "127.0.0.1"]);
    let dir = certs::temp_dir("listener-tls");
    let cert = certs::write(&dir, "gateway.crt", &leaf.cert);
    let key = certs::write(&dir, "gateway.key", &leaf.key);
    let file = certs::write(&dir, "gateway.toml", extra_file);
    let args = [
        "--config",
        &file,
        "--io-driver",
        driver,
        "--tls-cert",
        &cert,
        "--tls-key",
        &key,
    ];
    // A client that would take HTTP/2 as well.
    let mut config = (*certs::client_config(&ca.pem())).clone();
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    (Server::start(&args), Arc::new(config))
}

type TlsStream = rustls::StreamOwned<rustls::ClientConnection, TcpStream>;

fn tls_connect(addr: SocketAddr, config: &Arc<rustls::ClientConfig>) -> TlsStream {
    let tcp = TcpStream::connect(addr).unwrap();
    tcp.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let name = "localhost".try_into().unwrap();
    let conn = rustls::ClientConnection::new(config.clone(), name).unwrap();
    rustls::StreamOwned::new(conn, tcp)
}

/// One answer: status, headers (lowercase names) and body
/// (`Content-Length` framed).
fn read_answer(stream: &mut impl Read) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        assert_eq!(stream.read(&mut byte).unwrap(), 1, "closed mid-head");
        head.push(byte[0]);
    }
    let (status_line, headers) = process::split_head(&head);
    let status = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).unwrap();
    let headers = headers
        .into_iter()
        .map(|(n, v)| (n.to_ascii_lowercase(), v))
        .filter(|(n, _)| n != "date")
        .collect();
    (status, headers, body)
}

/// What the plaintext and the TLS gateway are both asked, on one
/// connection each: a health check, a valid and an invalid MCP message.
fn requests() -> Vec<Vec<u8>> {
    let valid =
        json!({"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {"_meta": meta()}});
    let invalid = json!({"jsonrpc": "1.0", "id": 2, "method": "tools/list"});
    let message = |m: &Value| {
        post(
            "/mcp",
            &modern_headers(m),
            &serde_json::to_vec(m).unwrap(),
            CLIENT_HEADERS,
        )
    };
    vec![
        b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n".to_vec(),
        message(&valid),
        message(&invalid),
    ]
}

crate::on_each_driver!(
    requests_over_tls_get_the_answers_plaintext_requests_get,
    a_plaintext_request_to_the_tls_port_is_closed_without_an_answer,
    a_handshake_that_never_completes_is_cut_by_the_read_timeout,
);

fn requests_over_tls_get_the_answers_plaintext_requests_get(driver: &str) {
    let (tls, config) = tls_gateway(driver, "");
    let plain = Server::start(&["--io-driver", driver]);
    let mut over_tls = tls_connect(tls.address, &config);
    let mut in_clear = plain.connect();
    let (mut statuses, mut bodies) = (Vec::new(), Vec::new());
    for request in requests() {
        over_tls.write_all(&request).unwrap();
        in_clear.write_all(&request).unwrap();
        let (a, b) = (read_answer(&mut over_tls), read_answer(&mut in_clear));
        assert_eq!(a, b, "{:?}", String::from_utf8_lossy(&request));
        statuses.push(a.0);
        bodies.push(a.2);
    }
    assert_eq!(statuses[0], 200);
    // The invalid message is refused: a JSON-RPC error, whatever its status.
    let refused: Value = serde_json::from_slice(&bodies[2]).unwrap();
    assert_eq!(refused["error"]["code"], -32600, "{refused}");
    // And each on a connection of its own.
    for (request, status) in requests().iter().zip(&statuses) {
        let mut fresh = tls_connect(tls.address, &config);
        fresh.write_all(request).unwrap();
        assert_eq!(read_answer(&mut fresh).0, *status);
    }
    // HTTP/1.1 was agreed on.
    assert_eq!(over_tls.conn.alpn_protocol(), Some(&b"http/1.1"[..]));
}

/// Reads until the gateway closes; what it sent meanwhile. Fails when it
/// does not close within 10 s.
fn until_closed(stream: &mut TcpStream) -> Vec<u8> {
    let mut got = Vec::new();
    let mut buf = [0u8; 512];
    let end = Instant::now() + Duration::from_secs(10);
    while Instant::now() < end {
        match stream.read(&mut buf) {
            Ok(0) => return got,
            Ok(n) => got.extend_from_slice(&buf[..n]),
            Err(e) if e.kind() == std::io::ErrorKind::ConnectionReset => return got,
            Err(e) => panic!("not closed: {e}"),
        }
    }
    panic!("not closed within 10 s");
}

fn a_plaintext_request_to_the_tls_port_is_closed_without_an_answer(driver: &str) {
    let (server, config) = tls_gateway(driver, "");
    let mut plain = TcpStream::connect(server.address).unwrap();
    plain
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    plain
        .write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    let got = until_closed(&mut plain);
    assert!(
        !got.starts_with(b"HTTP/"),
        "{:?}",
        String::from_utf8_lossy(&got)
    );
    // The gateway goes on serving TLS.
    let mut tls = tls_connect(server.address, &config);
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_answer(&mut tls).0, 200);
}

fn a_handshake_that_never_completes_is_cut_by_the_read_timeout(driver: &str) {
    let (server, config) = tls_gateway(driver, "read_timeout_ms = 300\n");
    // Silence; the header of a ClientHello record of 512 bytes and none of
    // them; a record header announcing more than a record may hold.
    for sent in [
        &b""[..],
        b"\x16\x03\x01\x02\x00",
        b"\x16\x03\x01\xff\xff\x01",
    ] {
        let mut stalled = TcpStream::connect(server.address).unwrap();
        stalled
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stalled.write_all(sent).unwrap();
        let got = until_closed(&mut stalled);
        assert!(!got.starts_with(b"HTTP/"), "{sent:?}");
    }
    let mut tls = tls_connect(server.address, &config);
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_answer(&mut tls).0, 200);
}

#[test]
fn sigterm_closes_an_idle_tls_connection_and_exits_0() {
    let (mut server, config) = tls_gateway("epoll", "");
    let mut idle = tls_connect(server.address, &config);
    idle.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .unwrap();
    assert_eq!(read_answer(&mut idle).0, 200);
    // One mid-handshake too: it has sent nothing.
    let _silent = TcpStream::connect(server.address).unwrap();
    server.sigterm();
    let end = Instant::now() + Duration::from_secs(20);
    let status = loop {
        if let Some(status) = server.child.try_wait().unwrap() {
            break status;
        }
        assert!(Instant::now() < end, "still running 20 s after SIGTERM");
        std::thread::sleep(Duration::from_millis(20));
    };
    assert!(status.success(), "{status}");
    let mut rest = Vec::new();
    // Closed: the end of the stream (with or without TLS's close alert).
    let _ = idle.read_to_end(&mut rest);
    assert!(rest.is_empty(), "{:?}", String::from_utf8_lossy(&rest));
}

/// Sends SIGHUP to the gateway.
fn sighup(server: &Server) {
    let pid = server.child.id() as libc::pid_t;
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
}

/// Whether a client trusting `config` completes a request over TLS.
fn served_to(server: &Server, config: &Arc<rustls::ClientConfig>) -> bool {
    let mut tls = tls_connect(server.address, config);
    tls.write_all(b"GET /healthz HTTP/1.1\r\nHost: localhost\r\n\r\n")
        .is_ok()
        && tls.flush().is_ok()
        && {
            let mut first = [0u8; 12];
            tls.read_exact(&mut first).is_ok() && first.starts_with(b"HTTP/1.1 200")
        }
}

#[test]
fn sighup_serves_the_certificate_its_files_hold_now_and_a_bad_key_keeps_the_running_one() {
    let (old_ca, new_ca) = (Ca::new("old CA"), Ca::new("new CA"));
    let dir = certs::temp_dir("listener-tls-reload");
    let leaf = old_ca.leaf(&["localhost"]);
    let cert = certs::write(&dir, "gateway.crt", &leaf.cert);
    let key = certs::write(&dir, "gateway.key", &leaf.key);
    let mut server = Server::start_logging(
        &["--tls-cert", &cert, "--tls-key", &key],
        "info",
        std::process::Stdio::piped(),
    );
    let log = Arc::new(std::sync::Mutex::new(String::new()));
    let (stderr, lines) = (server.child.stderr.take().unwrap(), log.clone());
    std::thread::spawn(move || {
        use std::io::BufRead;
        for line in std::io::BufReader::new(stderr)
            .lines()
            .map_while(Result::ok)
        {
            lines.lock().unwrap().push_str(&(line + "\n"));
        }
    });
    let (old_client, new_client) = (
        certs::client_config(&old_ca.pem()),
        certs::client_config(&new_ca.pem()),
    );
    assert!(served_to(&server, &old_client));
    assert!(!served_to(&server, &new_client));

    let renewed = new_ca.leaf(&["localhost"]);
    std::fs::write(&cert, &renewed.cert).unwrap();
    std::fs::write(&key, &renewed.key).unwrap();
    sighup(&server);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !served_to(&server, &new_client) {
        assert!(
            Instant::now() < deadline,
            "the new certificate not served within 10 s"
        );
        std::thread::sleep(Duration::from_millis(20));
    }
    // A client new to the gateway (a resumed session skips the
    // certificate) no longer gets the old one.
    assert!(!served_to(&server, &certs::client_config(&old_ca.pem())));

    // A key that is no key: the reload is refused, the running certificate stays.
    std::fs::write(
        &key,
        "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
    )
    .unwrap();
    sighup(&server);
    let deadline = Instant::now() + Duration::from_secs(10);
    while !log.lock().unwrap().contains("reload refused") {
        assert!(Instant::now() < deadline, "no refusal logged within 10 s");
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(
        log.lock().unwrap().contains("tls_key"),
        "{}",
        log.lock().unwrap()
    );
    assert!(served_to(&server, &new_client));
    std::fs::remove_dir_all(&dir).ok();
}
