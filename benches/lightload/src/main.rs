//! A load generator that costs the server's machine little per request.
//!
//! On a 2-core machine wrk spends about as much CPU per request as the
//! server it measures (loopback TCP charges the receiver's work to the
//! sender, and each answer that arrives wakes wrk up), so a second server
//! worker can only take CPU from wrk. This one keeps every connection
//! `--depth` requests deep (pipelined, topped up once half are answered)
//! and looks at its sockets only every `--interval-ms`: in between it
//! sleeps, and the answers pile up in the kernel to be read in one go. It
//! prints its own CPU time per request so that a run shows how much of the
//! machine it took.
//!
//! Every answer must be `HTTP/1.1 204` without a body (`POST /validate`
//! with a valid message, or a no-op route); anything else, or a connection
//! the server closes, ends the run with exit status 1. The run is bounded
//! in time (`--warmup` + `--seconds`) and in requests (`--max-requests`).
//!
//! Output, one line: `lightload req/s=R answers=N cpu_us_per_req=C`, for
//! the seconds measured after the warm-up.
//!
//! Usage: `lightload ADDRESS PATH BODY_FILE [--connections 16] [--depth 256]
//! [--interval-ms 2] [--seconds 10] [--warmup 1] [--max-requests N]
//! [--header 'Name: value']...`

use std::io::{ErrorKind, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::process::exit;
use std::time::{Duration, Instant};

const STATUS: &[u8] = b"HTTP/1.1 204 ";

struct Settings {
    address: SocketAddr,
    path: String,
    body: Vec<u8>,
    headers: Vec<String>,
    connections: usize,
    depth: usize,
    interval: Duration,
    seconds: f64,
    warmup: f64,
    max_requests: u64,
}

fn fail(why: impl std::fmt::Display) -> ! {
    eprintln!("lightload: {why}");
    exit(1)
}

fn settings() -> Settings {
    let mut args = std::env::args().skip(1);
    let mut positional = Vec::new();
    let mut s = Settings {
        address: "127.0.0.1:0".parse().unwrap(),
        path: String::new(),
        body: Vec::new(),
        headers: Vec::new(),
        connections: 16,
        depth: 256,
        interval: Duration::from_millis(2),
        seconds: 10.0,
        warmup: 1.0,
        max_requests: 100_000_000,
    };
    while let Some(arg) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| fail(format!("{name} needs a value")))
        };
        match arg.as_str() {
            "--connections" => s.connections = number(&arg, value(&arg)),
            "--depth" => s.depth = number(&arg, value(&arg)),
            "--interval-ms" => {
                s.interval = Duration::from_secs_f64(number::<f64>(&arg, value(&arg)) / 1000.0)
            }
            "--seconds" => s.seconds = number(&arg, value(&arg)),
            "--warmup" => s.warmup = number(&arg, value(&arg)),
            "--max-requests" => s.max_requests = number(&arg, value(&arg)),
            "--header" => s.headers.push(value(&arg)),
            flag if flag.starts_with("--") => fail(format!("unknown flag {flag}")),
            _ => positional.push(arg),
        }
    }
    let [address, path, body_file] = <[String; 3]>::try_from(positional)
        .unwrap_or_else(|_| fail("usage: lightload ADDRESS PATH BODY_FILE [flags]"));
    s.address = address
        .parse()
        .unwrap_or_else(|_| fail(format!("not an IP:PORT: {address}")));
    if !s.address.ip().is_loopback() {
        fail("loopback addresses only");
    }
    // Written so that NaN fails too.
    let positive = s.seconds > 0.0 && s.warmup >= 0.0;
    if s.connections == 0 || s.depth == 0 || !positive {
        fail("--connections, --depth and --seconds must be positive, --warmup not negative");
    }
    s.path = path;
    s.body = std::fs::read(&body_file).unwrap_or_else(|e| fail(format!("{body_file}: {e}")));
    s
}

/// `value` read as a number of the flag's type.
fn number<T: std::str::FromStr>(flag: &str, value: String) -> T {
    value
        .parse()
        .unwrap_or_else(|_| fail(format!("{flag}: not a number: {value}")))
}

/// This process's CPU time (user and system), from the scheduler's own
/// count in nanoseconds (one thread).
fn cpu_time() -> Duration {
    let text = std::fs::read_to_string("/proc/self/schedstat").unwrap_or_default();
    let ns = text.split_whitespace().next().and_then(|v| v.parse().ok());
    Duration::from_nanos(ns.unwrap_or_else(|| fail("cannot read /proc/self/schedstat")))
}

/// Room for what one look at a socket reads at a time.
const READ_BUF: usize = 256 * 1024;

struct Connection {
    stream: TcpStream,
    /// Requests written (or being written) and not yet answered.
    in_flight: usize,
    /// Bytes of the current batch still to write.
    unsent: usize,
    /// Read buffer: `buf[..filled]` is what was read and not yet taken as
    /// whole answers (less than one answer between looks).
    buf: Box<[u8]>,
    filled: usize,
}

impl Connection {
    /// Reads what has arrived; returns the whole answers among it.
    fn take_answers(&mut self, index: usize) -> usize {
        let mut answers = 0;
        loop {
            let n = match self.stream.read(&mut self.buf[self.filled..]) {
                Ok(0) => fail(format!("the server closed connection {index}")),
                Ok(n) => n,
                Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                Err(e) => fail(format!("connection {index}: {e}")),
            };
            self.filled += n;
            let mut at = 0;
            while let Some(len) = answer_len(&self.buf[at..self.filled]) {
                at += len;
                answers += 1;
            }
            self.buf.copy_within(at..self.filled, 0);
            self.filled -= at;
            if self.filled == self.buf.len() {
                fail(format!(
                    "connection {index}: an answer head over {READ_BUF} bytes"
                ));
            }
        }
        self.in_flight = self
            .in_flight
            .checked_sub(answers)
            .unwrap_or_else(|| fail(format!("connection {index}: more answers than requests")));
        answers
    }
}

/// The length of the whole answer at the start of `bytes` (a head that
/// ends in an empty line), or None while its head is incomplete. Anything
/// but a 204 ends the run.
fn answer_len(bytes: &[u8]) -> Option<usize> {
    let mut from = 0;
    let end = loop {
        let nl = from + bytes[from..].iter().position(|&b| b == b'\n')?;
        if nl >= 3 && &bytes[nl - 3..nl] == b"\r\n\r" {
            break nl + 1;
        }
        from = nl + 1;
    };
    if !bytes.starts_with(STATUS) {
        let shown = String::from_utf8_lossy(&bytes[..end.min(200)]);
        fail(format!(
            "an answer other than 204 without a body: {shown:?}"
        ));
    }
    Some(end)
}

fn main() {
    let s = settings();
    let mut request = format!("POST {} HTTP/1.1\r\nHost: {}\r\n", s.path, s.address);
    for header in &s.headers {
        request.push_str(header);
        request.push_str("\r\n");
    }
    request.push_str(&format!("Content-Length: {}\r\n\r\n", s.body.len()));
    let mut request = request.into_bytes();
    request.extend_from_slice(&s.body);
    // The most one connection is topped up with at once: `depth` requests.
    let batch = request.repeat(s.depth);

    let mut conns: Vec<Connection> = (0..s.connections)
        .map(|i| {
            let stream = TcpStream::connect_timeout(&s.address, Duration::from_secs(5))
                .unwrap_or_else(|e| fail(format!("connection {i}: {e}")));
            stream.set_nonblocking(true).unwrap();
            stream.set_nodelay(true).unwrap();
            Connection {
                stream,
                in_flight: 0,
                unsent: 0,
                buf: vec![0; READ_BUF].into_boxed_slice(),
                filled: 0,
            }
        })
        .collect();

    let start = Instant::now();
    let measure_from = start + Duration::from_secs_f64(s.warmup);
    let stop = measure_from + Duration::from_secs_f64(s.seconds);
    let (mut answered, mut sent) = (0u64, 0u64);
    let mut base: Option<(u64, Duration, Instant)> = None;
    loop {
        let now = Instant::now();
        if base.is_none() && now >= measure_from {
            base = Some((answered, cpu_time(), now));
        }
        if now >= stop || (sent >= s.max_requests && answered >= sent) {
            break;
        }
        for (i, c) in conns.iter_mut().enumerate() {
            answered += c.take_answers(i) as u64;
            if c.unsent == 0 && c.in_flight <= s.depth / 2 && sent < s.max_requests {
                let k = (s.depth - c.in_flight).min((s.max_requests - sent) as usize);
                c.in_flight += k;
                c.unsent = k * request.len();
                sent += k as u64;
            }
            while c.unsent > 0 {
                // The batch's tail: every copy of the request is the same.
                match c.stream.write(&batch[batch.len() - c.unsent..]) {
                    Ok(n) => c.unsent -= n,
                    Err(e) if e.kind() == ErrorKind::WouldBlock => break,
                    Err(e) => fail(format!("connection {i}: {e}")),
                }
            }
        }
        std::thread::sleep(s.interval);
    }

    let Some((base_answers, base_cpu, measured_from)) = base else {
        fail("the run ended during the warm-up");
    };
    let count = answered - base_answers;
    if count == 0 {
        fail("no answers in the measured time");
    }
    let elapsed = measured_from.elapsed().as_secs_f64();
    let cpu = cpu_time() - base_cpu;
    println!(
        "lightload req/s={:.0} answers={} cpu_us_per_req={:.2}",
        count as f64 / elapsed,
        count,
        cpu.as_secs_f64() * 1e6 / count as f64
    );
}
