//! A `mcpgate serve` process on 127.0.0.1 and a raw HTTP/1.1 client.
#![allow(dead_code)]

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

pub struct Server {
    pub child: Child,
    pub address: SocketAddr,
}

impl Server {
    /// Starts the binary on an ephemeral port with `args` after `serve`
    /// (two workers unless `args` says otherwise).
    pub fn start(args: &[&str]) -> Server {
        Server::start_logging(args, "warn", Stdio::inherit())
    }

    /// As [`Server::start`], logging at `level` (`MCPGATE_LOG`) to `stderr`.
    pub fn start_logging(args: &[&str], level: &str, stderr: Stdio) -> Server {
        let mut child = Command::new(env!("CARGO_BIN_EXE_mcpgate"))
            .arg("serve")
            .args(["--listen", "127.0.0.1:0"])
            .args(if args.contains(&"--workers") {
                &[][..]
            } else {
                &["--workers", "2"][..]
            })
            .args(args)
            .env("MCPGATE_LOG", level)
            .stdout(Stdio::piped())
            .stderr(stderr)
            .spawn()
            .expect("mcpgate starts");
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        BufReader::new(stdout).read_line(&mut line).unwrap();
        let address = line
            .trim()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("unexpected first line {line:?}"))
            .parse()
            .unwrap();
        Server { child, address }
    }

    pub fn connect(&self) -> TcpStream {
        let stream = TcpStream::connect(self.address).unwrap();
        stream
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        stream.set_nodelay(true).unwrap();
        stream
    }

    /// Sends `raw` on a fresh connection and reads one answer.
    pub fn send(&self, raw: &[u8]) -> Answer {
        let mut stream = self.connect();
        stream.write_all(raw).unwrap();
        read_answer(&mut stream)
    }

    /// The value of one series in `/metrics` (0 when absent).
    pub fn metric(&self, series: &str) -> u64 {
        let answer = self.send(b"GET /metrics HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n");
        assert_eq!(answer.status, 200);
        String::from_utf8(answer.body)
            .unwrap()
            .lines()
            .find_map(|line| line.strip_prefix(series)?.trim().parse().ok())
            .unwrap_or(0)
    }

    /// Sends SIGTERM (and returns at once).
    pub fn sigterm(&self) {
        let pid = self.child.id().to_string();
        let status = Command::new("kill").args(["-TERM", &pid]).status().unwrap();
        assert!(status.success());
    }
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[derive(Debug)]
pub struct Answer {
    pub status: u16,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

impl Answer {
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub fn json(&self) -> serde_json::Value {
        serde_json::from_slice(&self.body)
            .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&self.body)))
    }
}

/// Reads one HTTP/1.1 answer (Content-Length framed or chunked, or none for 204).
pub fn read_answer(stream: &mut TcpStream) -> Answer {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        let n = stream
            .read(&mut byte)
            .expect("an answer before the timeout");
        assert!(
            n == 1,
            "connection closed after {:?}",
            String::from_utf8_lossy(&head)
        );
        head.push(byte[0]);
    }
    let (status_line, headers) = split_head(&head);
    let status: u16 = status_line.split(' ').nth(1).unwrap().parse().unwrap();
    let chunked = headers.iter().any(|(n, v)| {
        n.eq_ignore_ascii_case("transfer-encoding") && v.eq_ignore_ascii_case("chunked")
    });
    let body = if chunked {
        read_chunked(stream)
    } else {
        let length: usize = headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
            .map(|(_, v)| v.parse().unwrap())
            .unwrap_or(0);
        let mut body = vec![0; length];
        stream.read_exact(&mut body).unwrap();
        body
    };
    Answer {
        status,
        headers,
        body,
    }
}

/// A chunked body (no trailers), as a Node upstream sends it.
fn read_chunked(stream: &mut TcpStream) -> Vec<u8> {
    let mut body = Vec::new();
    loop {
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while !line.ends_with(b"\r\n") {
            stream.read_exact(&mut byte).expect("a chunk size line");
            line.push(byte[0]);
        }
        let text = String::from_utf8(line).unwrap();
        let size = usize::from_str_radix(text.trim().split(';').next().unwrap(), 16).unwrap();
        let mut chunk = vec![0; size + 2];
        stream.read_exact(&mut chunk).unwrap();
        if size == 0 {
            return body;
        }
        body.extend_from_slice(&chunk[..size]);
    }
}

/// A POST with the headers a well-behaved 2026-07-28 client sends.
pub fn post(path: &str, headers: &[(String, String)], body: &[u8], extra: &str) -> Vec<u8> {
    let mut raw = format!(
        "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: {}\r\n",
        body.len()
    );
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    raw.push_str(extra);
    raw.push_str("\r\n");
    let mut raw = raw.into_bytes();
    raw.extend_from_slice(body);
    raw
}

pub const CLIENT_HEADERS: &str =
    "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

/// Any child process (an MCP peer, a load balancer), killed and reaped when
/// dropped.
pub struct Peer {
    pub child: Child,
    pub name: &'static str,
    pub address: SocketAddr,
}

impl Peer {
    /// Spawns `command` (stdout piped) and waits, at most `limit`, for its
    /// `listening on HOST:PORT` line; later stdout is drained to stderr so
    /// the child never blocks on a full pipe.
    pub fn start(name: &'static str, command: &mut Command, limit: Duration) -> Peer {
        let mut child = command
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .unwrap_or_else(|e| panic!("{name} starts: {e}"));
        let stdout = child.stdout.take().unwrap();
        let (sender, receiver) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let mut sender = Some(sender);
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Some(rest) = line.strip_prefix("listening on ") {
                    if let Some(sender) = sender.take() {
                        let _ = sender.send(rest.trim().to_owned());
                    }
                } else if sender.is_none() {
                    eprintln!("[{name}] {line}");
                }
            }
        });
        let address = match receiver.recv_timeout(limit) {
            Ok(address) => address.parse().unwrap(),
            Err(_) => {
                let _ = child.kill();
                let _ = child.wait();
                panic!("{name} did not print `listening on` within {limit:?}");
            }
        };
        Peer {
            child,
            name,
            address,
        }
    }

    pub fn url(&self, path: &str) -> String {
        format!("http://{}{path}", self.address)
    }

    /// Kills the process now and waits for it to exit.
    pub fn kill(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

impl Drop for Peer {
    fn drop(&mut self) {
        self.kill();
    }
}

/// What a finished command printed.
#[derive(Debug)]
pub struct Ran {
    pub status: std::process::ExitStatus,
    pub stdout: String,
    pub stderr: String,
}

impl Ran {
    /// The stdout lines that are JSON objects.
    pub fn json_lines(&self) -> Vec<serde_json::Value> {
        self.stdout
            .lines()
            .filter(|line| line.starts_with('{'))
            .map(|line| serde_json::from_str(line).unwrap_or_else(|e| panic!("{e}: {line}")))
            .collect()
    }
}

/// Runs `command` to its end, killing it (and failing the test) if it runs
/// past `limit`.
pub fn run_bounded(command: &mut Command, limit: Duration) -> Ran {
    let mut child = command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("{command:?} starts: {e}"));
    let mut stdout = child.stdout.take().unwrap();
    let mut stderr = child.stderr.take().unwrap();
    let out = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stdout.read_to_string(&mut text);
        text
    });
    let err = std::thread::spawn(move || {
        let mut text = String::new();
        let _ = stderr.read_to_string(&mut text);
        text
    });
    let deadline = std::time::Instant::now() + limit;
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() >= deadline {
            let _ = child.kill();
            let _ = child.wait();
            let (stdout, stderr) = (out.join().unwrap(), err.join().unwrap());
            panic!("{command:?} ran past {limit:?}\nstdout:\n{stdout}\nstderr:\n{stderr}");
        }
        std::thread::sleep(Duration::from_millis(20));
    };
    Ran {
        status,
        stdout: out.join().unwrap(),
        stderr: err.join().unwrap(),
    }
}

/// A port that was free a moment ago on 127.0.0.1 (for a process that
/// must be told its port, such as HAProxy or an upstream restarted on the
/// same port).
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

/// A head's first line and its headers (names and values trimmed).
/// A request a test upstream read.
pub struct Request {
    pub line: String,
    pub headers: Vec<(String, String)>,
    pub body: Vec<u8>,
}

/// One request read off a test upstream's connection (`Content-Length`
/// framed, or no body); `None` at EOF.
pub fn read_request(stream: &mut TcpStream) -> Option<Request> {
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) => head.push(byte[0]),
            _ => return None,
        }
        // A head that never ends is no request.
        if head.len() > 64 * 1024 {
            return None;
        }
    }
    let (line, headers) = split_head(&head);
    let length = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .map_or(0, |(_, v)| v.parse().unwrap());
    let mut body = vec![0; length];
    stream.read_exact(&mut body).ok()?;
    Some(Request {
        line,
        headers,
        body,
    })
}

pub fn split_head(head: &[u8]) -> (String, Vec<(String, String)>) {
    let text = std::str::from_utf8(head).unwrap();
    let mut lines = text.split("\r\n");
    let first = lines.next().unwrap().to_owned();
    let headers = lines
        .filter(|l| !l.is_empty())
        .map(|l| {
            let (n, v) = l.split_once(':').unwrap();
            (n.trim().to_owned(), v.trim().to_owned())
        })
        .collect();
    (first, headers)
}
