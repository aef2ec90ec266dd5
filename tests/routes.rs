//! `[[route]]` tables: one gateway in front of two MCP servers, each
//! route with its own upstream, catalog, OAuth resource and tool scopes;
//! and SIGHUP, which swaps a new configuration in under load.

#[path = "support/process.rs"]
mod process;
mod support;
#[path = "support/tokens.rs"]
mod tokens;

use std::io::{BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::process::Stdio;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use process::{Answer, CLIENT_HEADERS, Server, post};
use serde_json::{Value, json};
use support::*;
use tokens::*;

/// An upstream answering every request with a result echoing its id (and
/// a session id of its own), recording each body it receives.
struct Upstream {
    addr: SocketAddr,
    bodies: Arc<Mutex<Vec<String>>>,
}

impl Upstream {
    fn start() -> Upstream {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let addr = listener.local_addr().unwrap();
        let bodies = Arc::new(Mutex::new(Vec::new()));
        let recorded = bodies.clone();
        thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(mut stream) = stream else { continue };
                let recorded = recorded.clone();
                thread::spawn(move || {
                    while let Some(body) = read_body(&mut stream) {
                        recorded.lock().unwrap().push(body.clone());
                        let id = serde_json::from_str::<Value>(&body)
                            .map(|v| v["id"].clone())
                            .unwrap_or_default();
                        let answer = json!({"jsonrpc": "2.0", "id": id, "result": {"content": []}})
                            .to_string();
                        let head = format!(
                            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: {}\r\nMcp-Session-Id: from-upstream\r\n\r\n",
                            answer.len()
                        );
                        if stream
                            .write_all(&[head.as_bytes(), answer.as_bytes()].concat())
                            .is_err()
                        {
                            break;
                        }
                    }
                });
            }
        });
        Upstream { addr, bodies }
    }

    fn url(&self) -> String {
        format!("http://{}/mcp", self.addr)
    }

    /// How many bodies it received holding `needle`.
    fn received(&self, needle: &str) -> usize {
        let bodies = self.bodies.lock().unwrap();
        bodies.iter().filter(|b| b.contains(needle)).count()
    }
}

/// One request's body; `None` at EOF.
fn read_body(stream: &mut TcpStream) -> Option<String> {
    let request = process::read_request(stream)?;
    Some(String::from_utf8(request.body).unwrap())
}

/// A catalog of tools taking any object.
fn catalog(tools: &[&str]) -> String {
    let tools: Vec<Value> = tools
        .iter()
        .map(|name| json!({"name": name, "inputSchema": {"type": "object"}}))
        .collect();
    json!({ "tools": tools }).to_string()
}

const GITHUB: &str = "https://mcp.example/github";
const FILES: &str = "https://mcp.example/files";

/// A `tools/call` of `tool` on `path`, with `headers` (whole lines).
fn call(server: &Server, path: &str, tool: &str, id: i64, headers: &str) -> Answer {
    let message = tools_call(json!(id), tool, json!({}));
    let body = serde_json::to_vec(&message).unwrap();
    let extra = format!("{CLIENT_HEADERS}{headers}");
    server.send(&post(path, &modern_headers(&message), &body, &extra))
}

/// The JSON-RPC error code of a refusal (its HTTP status aside).
fn error_code(answer: &Answer) -> Option<i64> {
    answer.json()["error"]["code"].as_i64()
}

fn bearer(signer: &Signer, audience: &str, scope: &str) -> String {
    let token = signer.sign(&claims(json!({"aud": audience, "scope": scope})));
    format!("Authorization: Bearer {token}\r\n")
}

#[test]
fn each_route_forwards_to_its_own_upstream_under_its_own_catalog_audience_and_scopes() {
    let (github, files) = (Upstream::start(), Upstream::start());
    let signer = rsa_signer(jsonwebtoken::Algorithm::RS256, "k1");
    let jwks = write_file(&jwks(&[&signer]));
    let github_tools = write_file(&catalog(&["create_issue"]));
    let files_tools = write_file(&catalog(&["read_file"]));
    let config = write_file(&format!(
        r#"
        oauth_issuer = "{ISSUER}"
        oauth_jwks_file = {jwks:?}
        learn_catalog = false

        [[route]]
        path = "/github"
        upstream = "{}"
        catalog = {github_tools:?}
        oauth_resource = "{GITHUB}"
        oauth_tool_scopes = {{ create_issue = ["issues:write"] }}

        [[route]]
        path = "/files"
        upstream = "{}"
        catalog = {files_tools:?}
        oauth_resource = "{FILES}"
        "#,
        github.url(),
        files.url(),
    ));
    let server = Server::start(&["--config", config.to_str().unwrap()]);
    let writer = bearer(&signer, GITHUB, "mcp issues:write");
    let reader = bearer(&signer, GITHUB, "mcp");
    let on_files = bearer(&signer, FILES, "mcp");

    let allowed = call(&server, "/github", "create_issue", 1, &writer);
    assert_eq!(allowed.status, 200);
    assert_eq!(allowed.json()["result"], json!({"content": []}));
    // The same call without the route's tool scope.
    let unscoped = call(&server, "/github", "create_issue", 2, &reader);
    assert!(error_code(&unscoped).is_some(), "{unscoped:?}");
    let challenge = unscoped.header("WWW-Authenticate").unwrap_or_default();
    assert!(challenge.contains("insufficient_scope"), "{challenge}");
    // The other route's catalog lacks the tool; its resource is another.
    let elsewhere = call(&server, "/files", "create_issue", 3, &on_files);
    assert_eq!(error_code(&elsewhere), Some(-32602), "{elsewhere:?}");
    let wrong_audience = call(&server, "/files", "read_file", 4, &writer);
    assert_eq!(wrong_audience.status, 401, "a /github token on /files");
    let read = call(&server, "/files", "read_file", 5, &on_files);
    assert_eq!(read.status, 200);
    // Each upstream received its own route's allowed call, and nothing else.
    assert_eq!(github.received("create_issue"), 1);
    assert_eq!(github.received("read_file"), 0);
    assert_eq!(files.received("read_file"), 1);
    assert_eq!(files.received("create_issue"), 0);

    // The session id /github sealed, replayed on /files by the same
    // subject: unknown there, and never forwarded.
    let sealed = allowed.header("Mcp-Session-Id").unwrap().to_owned();
    assert!(sealed.starts_with("from-upstream."), "{sealed}");
    let replayed = call(
        &server,
        "/files",
        "read_file",
        6,
        &format!("{on_files}Mcp-Session-Id: {sealed}\r\n"),
    );
    assert!(
        String::from_utf8_lossy(&replayed.body).contains("no such session"),
        "{replayed:?}"
    );
    assert_eq!(files.received("\"id\":6"), 0);
    let resumed = call(
        &server,
        "/github",
        "create_issue",
        7,
        &format!("{writer}Mcp-Session-Id: {sealed}\r\n"),
    );
    assert_eq!(resumed.status, 200, "the id still serves its own route");

    // RFC 9728: each route's metadata names its resource.
    for (path, resource) in [("/github", GITHUB), ("/files", FILES)] {
        let raw = format!(
            "GET /.well-known/oauth-protected-resource{path} HTTP/1.1\r\nHost: t\r\nConnection: close\r\n\r\n"
        );
        let metadata = server.send(raw.as_bytes());
        assert_eq!(metadata.status, 200);
        assert_eq!(metadata.json()["resource"], resource);
    }

    // Every request and refusal series carries its route.
    let series = |kind: &str, route: &str| {
        server.metric(&format!(
            "mcpgate_allowed_total{{lane=\"modern\",kind=\"{kind}\",route=\"{route}\"}}"
        ))
    };
    assert_eq!(series("request", "/github"), 2);
    // The replayed call passed the gate, then its session was refused.
    assert_eq!(series("request", "/files"), 2);
    assert_eq!(
        server.metric(
            "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unknown_session\",status=\"404\",route=\"/files\"}"
        ) + server.metric(
            "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unknown_session\",status=\"200\",route=\"/files\"}"
        ),
        1
    );
    assert_eq!(
        server.metric("mcpgate_requests_total{route=\"/github\"}"),
        3
    );
}

/// A route table's text.
fn route(path: &str, upstream: &Upstream, catalog: &Path) -> String {
    format!(
        "[[route]]\npath = \"{path}\"\nupstream = \"{}\"\ncatalog = {catalog:?}\n",
        upstream.url()
    )
}

/// Sends SIGHUP to the gateway.
fn sighup(server: &Server) {
    let pid = server.child.id() as libc::pid_t;
    // SAFETY: a signal to the child this test started.
    assert_eq!(unsafe { libc::kill(pid, libc::SIGHUP) }, 0);
}

/// Waits (bounded) until `done` holds.
fn within_10s(what: &str, mut done: impl FnMut() -> bool) {
    let deadline = Instant::now() + Duration::from_secs(10);
    for _ in 0..1000 {
        if done() {
            return;
        }
        assert!(Instant::now() < deadline, "{what}: not within 10 s");
        thread::sleep(Duration::from_millis(10));
    }
    panic!("{what}: not within 1000 tries");
}

#[test]
fn sighup_swaps_a_new_configuration_in_under_load_and_an_invalid_one_is_refused() {
    let (github, files) = (Upstream::start(), Upstream::start());
    let dir = write_file("").with_extension("d");
    std::fs::create_dir_all(&dir).unwrap();
    let (github_tools, files_tools) = (dir.join("github.json"), dir.join("files.json"));
    std::fs::write(&github_tools, catalog(&["list_issues", "create_issue"])).unwrap();
    std::fs::write(&files_tools, catalog(&["read_file"])).unwrap();
    let config = dir.join("mcpgate.toml");
    let first = format!(
        "learn_catalog = false\n{}",
        route("/github", &github, &github_tools)
    );
    std::fs::write(&config, &first).unwrap();
    let mut server = Server::start_logging(
        &["--config", config.to_str().unwrap()],
        "info",
        Stdio::piped(),
    );
    let log = Arc::new(Mutex::new(String::new()));
    let stderr = server.child.stderr.take().unwrap();
    let lines = log.clone();
    thread::spawn(move || {
        for line in BufReader::new(stderr).lines() {
            let Ok(line) = line else { break };
            lines.lock().unwrap().push_str(&line);
            lines.lock().unwrap().push('\n');
        }
    });
    let server = Arc::new(server);
    assert_eq!(call(&server, "/github", "create_issue", 1, "").status, 200);
    assert_eq!(call(&server, "/files", "read_file", 2, "").status, 404);
    let unknown = call(&server, "/github", "no_such_tool", 3, "");
    assert_eq!(error_code(&unknown), Some(-32602));
    // Counted by the route's gate (whatever status the refusal goes with).
    let unknown_tools = |server: &Server| {
        let series = |status: u16| {
            server.metric(&format!(
                "mcpgate_rejections_total{{rejecter=\"value\",reason=\"unknown_tool\",status=\"{status}\",route=\"/github\"}}"
            ))
        };
        series(400) + series(200)
    };
    assert_eq!(unknown_tools(&server), 1);

    // A bounded load: 3 clients, 60 calls each, 20 s at most; the reload
    // lands in the middle.
    let load: Vec<_> = (0..3)
        .map(|client| {
            let server = server.clone();
            thread::spawn(move || {
                let deadline = Instant::now() + Duration::from_secs(20);
                let mut statuses = Vec::new();
                for i in 0..60 {
                    if Instant::now() > deadline {
                        break;
                    }
                    let id = 1000 * (client + 1) + i;
                    let answer = call(&server, "/github", "list_issues", id, "");
                    statuses.push((answer.status, error_code(&answer)));
                    thread::sleep(Duration::from_millis(5));
                }
                statuses
            })
        })
        .collect();
    thread::sleep(Duration::from_millis(100));
    // A route added, and a tool taken out of the changed catalog file.
    std::fs::write(&github_tools, catalog(&["list_issues"])).unwrap();
    let second = format!("{first}{}", route("/files", &files, &files_tools));
    std::fs::write(&config, &second).unwrap();
    sighup(&server);
    within_10s("the new route answering", || {
        call(&server, "/files", "read_file", 3, "").status == 200
    });
    let refused = call(&server, "/github", "create_issue", 4, "");
    assert_eq!(
        error_code(&refused),
        Some(-32602),
        "the changed catalog holds"
    );
    // /github's gate settings did not change: it kept its gate, and its
    // counts go on.
    assert_eq!(unknown_tools(&server), 2);
    for client in load {
        let statuses = client.join().unwrap();
        assert_eq!(statuses.len(), 60, "every call was answered in time");
        for (status, code) in statuses {
            assert_eq!((status, code), (200, None), "no call lost or refused");
        }
    }
    assert_eq!(files.received("read_file"), 1);
    assert_eq!(github.received("read_file"), 0);
    assert_eq!(github.received("list_issues"), 180);

    // An invalid file: the running configuration stays, and the log says
    // why.
    std::fs::write(&config, format!("{second}[[route]]\npath = \"/metrics\"\n")).unwrap();
    sighup(&server);
    within_10s("the refusal logged", || {
        log.lock().unwrap().contains("reload refused")
    });
    let logged = log.lock().unwrap().clone();
    let line = logged
        .lines()
        .find(|l| l.contains("reload refused"))
        .unwrap();
    assert!(
        line.contains("route.path") && line.contains("WARN"),
        "{line}"
    );
    assert_eq!(call(&server, "/files", "read_file", 5, "").status, 200);
    assert_eq!(call(&server, "/github", "list_issues", 6, "").status, 200);

    // What only a restart applies is said to be ignored; the rest is
    // reloaded.
    std::fs::write(
        &config,
        format!(
            "max_connections = 77
{first}"
        ),
    )
    .unwrap();
    sighup(&server);
    within_10s("the ignored key logged", || {
        log.lock().unwrap().contains("ignored until a restart")
    });
    let logged = log.lock().unwrap().clone();
    let line = logged
        .lines()
        .find(|l| l.contains("ignored until a restart"))
        .unwrap();
    assert!(line.contains("max_connections"), "{line}");
    within_10s("the route removed", || {
        call(&server, "/files", "read_file", 7, "").status == 404
    });
}

#[test]
fn a_path_only_like_a_routes_is_unknown_and_never_forwarded() {
    let github = Upstream::start();
    let tools = write_file(&catalog(&["create_issue"]));
    let config = write_file(&format!(
        "learn_catalog = false\n{}",
        route("/github", &github, &tools)
    ));
    let server = Server::start(&["--config", config.to_str().unwrap()]);
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"create_issue","arguments":{}}}"#;
    for path in [
        "/github/",
        "/githubx",
        "/GITHUB",
        "/github%2F",
        "//github",
        "/mcp",
        "/.well-known/oauth-protected-resource/github",
    ] {
        let raw = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: create_issue\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let answer = server.send(raw.as_bytes());
        assert_eq!(answer.status, 404, "{path}");
    }
    assert_eq!(github.received("create_issue"), 0);
    // The route itself, and a query after it.
    for path in ["/github", "/github?x=1"] {
        let raw = format!(
            "POST {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: create_issue\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        assert_eq!(server.send(raw.as_bytes()).status, 200, "{path}");
    }
    assert_eq!(github.received("create_issue"), 2);
}
