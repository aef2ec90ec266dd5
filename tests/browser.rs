//! A browser page through the gateway: the official TypeScript client,
//! bundled with esbuild (`e2e/browser.mjs`), in headless Chromium, served
//! from an origin the gateway allows and from one it does not, in front of
//! `e2e/upstream.mjs`. Needs Chromium and the end-to-end peers (both
//! installed by `e2e/setup.sh`); ignored otherwise.

#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;

use std::io::{Read, Write};
use std::net::{TcpListener, TcpStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::thread;
use std::time::{Duration, Instant};

use peers::*;
use process::{Peer, Server, run_bounded};
use serde_json::{Value, json};

/// How long a page may take to report its outcome.
const OUTCOME_LIMIT: Duration = Duration::from_secs(90);
/// A host name Chromium resolves to 127.0.0.1 (`--host-resolver-rules`):
/// every loopback origin passes the gateway's `Origin` check, so the
/// origin it refuses has to be another name.
const BLOCKED_HOST: &str = "blocked.test";

/// Fails the test, saying what to run, unless Chromium and esbuild are
/// installed.
fn require_browser() {
    let esbuild = e2e_dir().join("node_modules/.bin/esbuild");
    assert!(
        esbuild.exists(),
        "{} is absent: run bash e2e/setup.sh node",
        esbuild.display()
    );
    let chromium = Command::new("chromium")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status();
    assert!(
        chromium.is_ok_and(|s| s.success()),
        "chromium is not installed: run bash e2e/setup.sh browser"
    );
}

/// A directory of this test's own, removed when dropped (after Chromium,
/// which writes its profile there, is stopped).
struct TempDir(PathBuf);

impl TempDir {
    fn new(what: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let path = std::env::temp_dir().join(format!(
            "mcpgate-browser-{what}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::SeqCst)
        ));
        let _ = std::fs::remove_dir_all(&path);
        std::fs::create_dir_all(&path).unwrap();
        TempDir(path)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// `e2e/browser.mjs` and the client it imports, as one script.
fn bundle(dir: &Path) -> Vec<u8> {
    let out = dir.join("bundle.js");
    let ran = run_bounded(
        Command::new(e2e_dir().join("node_modules/.bin/esbuild"))
            .current_dir(e2e_dir())
            .args([
                "browser.mjs",
                "--bundle",
                "--format=esm",
                "--platform=browser",
                "--log-level=warning",
            ])
            .arg(format!("--outfile={}", out.display())),
        CLIENT_LIMIT,
    );
    succeeded(&ran, "esbuild");
    std::fs::read(out).unwrap()
}

const PAGE: &str = "<!doctype html>\n<meta charset=\"utf-8\">\n<title>mcpgate</title>\n\
    <script type=\"module\" src=\"/bundle.js\"></script>\n";

/// The pages' server: `/` and `/bundle.js` on each of its listeners, and
/// `POST /outcome`, whose body is handed to the test with the port it
/// came to.
struct Pages {
    ports: Vec<u16>,
    outcomes: mpsc::Receiver<(u16, Vec<u8>)>,
    stop: Arc<AtomicBool>,
}

impl Pages {
    fn start(listeners: usize, bundle: Vec<u8>) -> Pages {
        let bundle = Arc::new(bundle);
        let stop = Arc::new(AtomicBool::new(false));
        let (sender, outcomes) = mpsc::channel();
        let mut ports = Vec::new();
        for _ in 0..listeners {
            let listener = TcpListener::bind("127.0.0.1:0").unwrap();
            let port = listener.local_addr().unwrap().port();
            listener.set_nonblocking(true).unwrap();
            ports.push(port);
            let (bundle, stop, sender) = (bundle.clone(), stop.clone(), sender.clone());
            thread::spawn(move || {
                // Bounded: stopped with the test, or after the longest a
                // test may run.
                let deadline = Instant::now() + 2 * OUTCOME_LIMIT + CLIENT_LIMIT;
                while !stop.load(Ordering::SeqCst) && Instant::now() < deadline {
                    match listener.accept() {
                        Ok((stream, _)) => {
                            let (bundle, sender) = (bundle.clone(), sender.clone());
                            thread::spawn(move || serve_page(stream, port, &bundle, &sender));
                        }
                        Err(_) => thread::sleep(Duration::from_millis(10)),
                    }
                }
            });
        }
        Pages {
            ports,
            outcomes,
            stop,
        }
    }

    /// The outcome the page on `port` reports, waiting at most
    /// [`OUTCOME_LIMIT`].
    fn outcome(&self, port: u16, browser: &Browser) -> Value {
        let deadline = Instant::now() + OUTCOME_LIMIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.outcomes.recv_timeout(left) {
                Ok((from, body)) if from == port => {
                    return serde_json::from_slice(&body)
                        .unwrap_or_else(|e| panic!("{e}: {:?}", String::from_utf8_lossy(&body)));
                }
                Ok(_) => continue,
                Err(_) => panic!(
                    "no outcome from the page on port {port} within {OUTCOME_LIMIT:?}; \
                     Chromium's log:\n{}",
                    browser.log()
                ),
            }
        }
    }
}

impl Drop for Pages {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
    }
}

fn serve_page(
    mut stream: TcpStream,
    port: u16,
    bundle: &[u8],
    outcomes: &mpsc::Sender<(u16, Vec<u8>)>,
) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let mut head = Vec::new();
    let mut byte = [0u8; 1];
    while !head.ends_with(b"\r\n\r\n") {
        match stream.read(&mut byte) {
            Ok(1) if head.len() < 64 * 1024 => head.push(byte[0]),
            _ => return,
        }
    }
    let (line, headers) = process::split_head(&head);
    let length: usize = headers
        .iter()
        .find(|(n, _)| n.eq_ignore_ascii_case("content-length"))
        .and_then(|(_, v)| v.parse().ok())
        .unwrap_or(0);
    let mut body = vec![0; length.min(1024 * 1024)];
    if stream.read_exact(&mut body).is_err() {
        return;
    }
    let target = line.split(' ').nth(1).unwrap_or_default();
    let path = target.split('?').next().unwrap_or_default();
    let (status, content_type, content): (&str, &str, &[u8]) =
        match (line.split(' ').next().unwrap_or_default(), path) {
            ("GET", "/") => ("200 OK", "text/html; charset=utf-8", PAGE.as_bytes()),
            ("GET", "/bundle.js") => ("200 OK", "text/javascript", bundle),
            ("POST", "/outcome") => {
                let _ = outcomes.send((port, body));
                ("204 No Content", "text/plain", b"")
            }
            _ => ("404 Not Found", "text/plain", b"not found"),
        };
    let answer = format!(
        "HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\nContent-Length: {}\r\n\
         Cache-Control: no-store\r\nConnection: close\r\n\r\n",
        content.len()
    );
    let _ = stream.write_all(answer.as_bytes());
    let _ = stream.write_all(content);
}

/// Headless Chromium on one URL, in a process group of its own with a
/// fresh profile; the group is killed (by its id, Chromium's PID) and the
/// profile removed when dropped, the test failing or not.
struct Browser {
    child: Child,
    dir: TempDir,
}

impl Browser {
    fn open(url: &str, insecure_origin: &str) -> Browser {
        use std::os::unix::process::CommandExt;
        let dir = TempDir::new("profile");
        let log = std::fs::File::create(dir.0.join("chromium.log")).unwrap();
        let child = Command::new("chromium")
            .args([
                "--headless",
                "--no-sandbox",
                "--disable-gpu",
                "--disable-quic",
                "--no-first-run",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--disable-dev-shm-usage",
            ])
            .arg(format!(
                "--user-data-dir={}",
                dir.0.join("profile").display()
            ))
            .arg(format!(
                "--host-resolver-rules=MAP {BLOCKED_HOST} 127.0.0.1"
            ))
            // Both pages in a secure context alike (127.0.0.1 is one), so
            // the refused page fails on CORS and nothing else.
            .arg(format!(
                "--unsafely-treat-insecure-origin-as-secure={insecure_origin}"
            ))
            .arg(url)
            .stdin(Stdio::null())
            .stdout(log.try_clone().unwrap())
            .stderr(log)
            .process_group(0)
            .spawn()
            .expect("chromium starts");
        Browser { child, dir }
    }

    fn log(&self) -> String {
        let text = std::fs::read(self.dir.0.join("chromium.log")).unwrap_or_default();
        String::from_utf8_lossy(&text[text.len().saturating_sub(4000)..]).into_owned()
    }
}

impl Drop for Browser {
    fn drop(&mut self) {
        // The whole group: the browser's helpers (zygote, renderer) too.
        let group = format!("-{}", self.child.id());
        let _ = Command::new("kill").args(["-KILL", "--", &group]).status();
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn rejections(server: &Server, reason: &str, status: u16) -> u64 {
    server.metric(&format!(
        "mcpgate_rejections_total{{rejecter=\"wire\",reason=\"{reason}\",status=\"{status}\"}}"
    ))
}

#[test]
#[ignore = "needs chromium and the e2e peers: bash e2e/setup.sh"]
fn a_page_on_an_allowed_origin_lists_and_calls_tools_and_one_on_another_origin_is_refused() {
    require_peers();
    require_browser();
    let build = TempDir::new("bundle");
    let pages = Pages::start(2, bundle(&build.0));
    let (allowed_port, blocked_port) = (pages.ports[0], pages.ports[1]);
    let allowed = format!("http://127.0.0.1:{allowed_port}");
    let blocked = format!("http://{BLOCKED_HOST}:{blocked_port}");

    let upstream = start_upstream(0);
    let gateway = Server::start(&[
        "--upstream",
        &upstream.url("/mcp"),
        "--allowed-origins",
        &allowed,
    ]);
    let everything = Peer::start(
        "server-everything",
        node().args(["everything.mjs", "--port", "0"]),
        START_LIMIT,
    );
    let sessions = Server::start(&[
        "--upstream",
        &everything.url("/mcp"),
        "--allowed-origins",
        &allowed,
    ]);
    let query = format!(
        "gateway=http://{}/mcp&sessions=http://{}/mcp",
        gateway.address, sessions.address
    );

    let browser = Browser::open(&format!("{allowed}/?{query}"), &blocked);
    let outcome = pages.outcome(allowed_port, &browser);
    drop(browser);
    assert_eq!(outcome["ok"], true, "{outcome:#}");
    for (stage, tool) in [("modern", "get_account"), ("legacy", "echo")] {
        let tools: Vec<&str> = outcome[stage]["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t.as_str().unwrap())
            .collect();
        assert!(tools.contains(&tool), "{stage}: {tool} missing: {tools:?}");
    }
    assert_eq!(
        outcome["modern"]["call"]["structuredContent"],
        json!({"sum": 42}),
        "{outcome:#}"
    );
    assert_eq!(
        outcome["legacy"]["call"]["content"][0]["text"], "Echo: from a page",
        "{outcome:#}"
    );
    // The SDK leaves `Mcp-Param-*` out in a browser: the gateway's refusal
    // of that call is what the page reads (or the result, should the SDK
    // start mirroring there, which the preflight allows).
    let account = &outcome["modern"]["account"];
    assert!(
        account["error"]["code"] == -32020
            || account["result"]["structuredContent"]["account_id"] == "acct-7",
        "{outcome:#}"
    );
    // The page read the session id: `Mcp-Session-Id` is exposed to it.
    assert!(outcome["legacy"]["session"].is_string(), "{outcome:#}");
    assert_eq!(upstream_calls(&upstream, "add"), 1);
    assert_eq!(rejections(&gateway, "origin_not_allowed", 403), 0);

    // The same page from an origin the gateway does not allow: its
    // preflight is refused, and the client's connection fails.
    let browser = Browser::open(&format!("{blocked}/?{query}"), &blocked);
    let outcome = pages.outcome(blocked_port, &browser);
    drop(browser);
    assert_eq!(outcome["ok"], false, "{outcome:#}");
    assert_eq!(outcome["stage"], "modern", "{outcome:#}");
    // The SDK words the failure its own way; a bare `fetch` from the same
    // page shows it is the browser's CORS refusal.
    assert!(outcome["error"]["message"].is_string(), "{outcome:#}");
    assert_eq!(outcome["probe"]["name"], "TypeError", "{outcome:#}");
    assert_eq!(
        outcome["probe"]["message"], "Failed to fetch",
        "{outcome:#}"
    );
    assert!(rejections(&gateway, "origin_not_allowed", 403) >= 1);
    assert_eq!(upstream_calls(&upstream, "add"), 1);
}
