//! README.md's examples, run: every shown command's output must be what
//! README shows, so an example that drifts from the binary fails here.
//!
//! The convention README's examples follow (and this test parses):
//!
//! - In a ```` ```sh ```` block, a line starting with `$ ` is a command run
//!   here; a line ending with `\` continues it on the next line. Blocks
//!   without `$ ` lines (setup steps, long-running commands) are not run.
//! - The lines right after a command that start with `# ` (or are a lone
//!   `#`) are its output, one line each, compared exactly.
//! - A command without `#` lines that ends its block, when the next block is
//!   ```` ```json ````, has that block as its output, compared as JSON (an
//!   answer is sent on one line and shown indented).
//! - The commands understood, each with the binary this test was built with:
//!   - `mcpgate serve ARGS &` starts a server for the `curl` commands after
//!     it: on an ephemeral port of 127.0.0.1 in place of its `--listen`
//!     (default `127.0.0.1:8080`), and a URL naming that address goes to it.
//!   - `echo 'MESSAGE' | mcpgate check ARGS` runs `check` in the repository
//!     root with MESSAGE and a newline on standard input; its standard
//!     output is compared.
//!   - `curl` with `-s`, `-o /dev/null`, `-w FORMAT` (`%{http_code}`, `\n`),
//!     `-H 'Name: value'` and `-d 'BODY'` is sent as the request curl sends
//!     (a POST with `Content-Length`, `Accept: */*` unless given); its
//!     output is the body (unless `-o /dev/null`) and then FORMAT.
//!
//! Anything else after `$ ` fails the test, so README cannot show a command
//! this test does not run.
//!
//! Besides: the quick start's test command is `.ci/run`'s; the TypeScript
//! and Python client snippets, run through a gateway in front of
//! `e2e/upstream.mjs`, list its tools and then print what README shows
//! after them, a valid call's result and a wrong-typed call's envelope
//! (ignored unless asked for: it needs `e2e/setup.sh`'s peers); the agent
//! configuration is JSON naming the
//! gateway's URL; the Rust snippet is the crate's first doctest; README
//! stays within 350 lines; and every relative link names a file, and a
//! heading, that exist.

#[path = "support/peers.rs"]
mod peers;
#[path = "support/process.rs"]
mod process;
mod support;

use std::collections::HashMap;
use std::io::Write as _;
use std::net::SocketAddr;
use std::path::Path;
use std::process::{Command, Stdio};

use process::{Server, run_bounded};

/// The address README's examples use when a command names none.
const DEFAULT_ADDRESS: &str = "127.0.0.1:8080";
/// The MCP endpoint README points clients at.
const CLIENT_URL: &str = "http://127.0.0.1:8080/mcp";

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn readme() -> String {
    std::fs::read_to_string(root().join("README.md")).unwrap()
}

/// A fenced block: its info string, its lines, and the line it starts on.
struct Block {
    lang: String,
    lines: Vec<String>,
    line: usize,
}

fn blocks(text: &str) -> Vec<Block> {
    let mut found = Vec::new();
    let mut open: Option<Block> = None;
    for (number, line) in text.lines().enumerate() {
        match (&mut open, line.strip_prefix("```")) {
            (None, Some(lang)) => {
                open = Some(Block {
                    lang: lang.trim().to_owned(),
                    lines: Vec::new(),
                    line: number + 1,
                })
            }
            (Some(_), Some(_)) => found.push(open.take().unwrap()),
            (Some(block), None) => block.lines.push(line.to_owned()),
            (None, None) => {}
        }
    }
    assert!(open.is_none(), "README.md ends inside a fenced block");
    found
}

/// One `$ ` command, its output as shown, and where it is.
struct Example {
    command: String,
    output: Expected,
    line: usize,
}

enum Expected {
    Lines(Vec<String>),
    Json(serde_json::Value),
}

fn examples(blocks: &[Block]) -> Vec<Example> {
    let mut found: Vec<Example> = Vec::new();
    for (index, block) in blocks.iter().enumerate() {
        if block.lang != "sh" || !block.lines.iter().any(|l| l.starts_with("$ ")) {
            continue;
        }
        let mut lines = block.lines.iter().enumerate().peekable();
        let mut in_block: Vec<Example> = Vec::new();
        while let Some((offset, line)) = lines.next() {
            let line_number = block.line + offset + 1;
            if let Some(start) = line.strip_prefix("$ ") {
                let mut command = start.to_owned();
                while command.ends_with('\\') {
                    command.pop();
                    command.truncate(command.trim_end().len());
                    let (_, next) = lines.next().expect("a continued command goes on");
                    command.push(' ');
                    command.push_str(next.trim());
                }
                in_block.push(Example {
                    command,
                    output: Expected::Lines(Vec::new()),
                    line: line_number,
                });
            } else if line == "#" || line.starts_with("# ") {
                let example = in_block
                    .last_mut()
                    .unwrap_or_else(|| panic!("README.md:{line_number}: output before a command"));
                let Expected::Lines(shown) = &mut example.output else {
                    unreachable!()
                };
                shown.push(line.strip_prefix("# ").unwrap_or("").to_owned());
            } else {
                panic!(
                    "README.md:{line_number}: a block with `$ ` commands holds only commands and `# ` output: {line:?}"
                );
            }
        }
        if let (Some(last), Some(next)) = (in_block.last_mut(), blocks.get(index + 1))
            && matches!(&last.output, Expected::Lines(shown) if shown.is_empty())
            && next.lang == "json"
        {
            let text = next.lines.join("\n");
            last.output = Expected::Json(serde_json::from_str(&text).unwrap_or_else(|e| {
                panic!("README.md:{}: the json block is not JSON: {e}", next.line)
            }));
        }
        found.extend(in_block);
    }
    found
}

/// Splits a command line as a POSIX shell does for the quoting README uses:
/// single quotes, double quotes, and `|` and `&` as words of their own.
fn words(command: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word: Option<String> = None;
    let mut chars = command.chars();
    while let Some(c) = chars.next() {
        match c {
            '\'' | '"' => {
                let word = word.get_or_insert_with(String::new);
                for inner in chars.by_ref() {
                    if inner == c {
                        break;
                    }
                    word.push(inner);
                }
            }
            c if c.is_whitespace() => words.extend(word.take()),
            '|' | '&' => {
                words.extend(word.take());
                words.push(c.to_string());
            }
            c => word.get_or_insert_with(String::new).push(c),
        }
    }
    words.extend(word);
    words
}

/// The servers README's commands started, by the address they name.
type Servers = HashMap<String, Server>;

#[test]
fn readme_examples_show_what_the_binary_answers() {
    let text = readme();
    let all = blocks(&text);
    let examples = examples(&all);
    assert!(
        examples.len() >= 6,
        "README.md's examples were not found ({} commands)",
        examples.len()
    );
    let mut servers = Servers::new();
    let mut failures = Vec::new();
    for example in &examples {
        let words = words(&example.command);
        let actual = match words.first().map(String::as_str) {
            Some("mcpgate") if words.get(1).map(String::as_str) == Some("serve") => {
                start_server(&words[2..], &mut servers, example.line);
                continue;
            }
            Some("echo") => run_check(&words, example.line),
            Some("curl") => run_curl(&words[1..], &servers, example.line),
            _ => panic!(
                "README.md:{}: a command this test does not run: {}",
                example.line, example.command
            ),
        };
        let matches = match &example.output {
            Expected::Lines(shown) => actual.lines().eq(shown.iter().map(String::as_str)),
            Expected::Json(shown) => serde_json::from_str::<serde_json::Value>(&actual)
                .map(|answer| &answer == shown)
                .unwrap_or(false),
        };
        if !matches {
            let shown = match &example.output {
                Expected::Lines(shown) => shown.join("\n"),
                Expected::Json(shown) => serde_json::to_string_pretty(shown).unwrap(),
            };
            failures.push(format!(
                "README.md:{}: `{}`\nREADME shows:\n{shown}\nthe binary gives:\n{actual}",
                example.line, example.command
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

/// `mcpgate serve ARGS &`: started on an ephemeral port in place of its
/// `--listen`, filed under the address README gave it.
fn start_server(args: &[String], servers: &mut Servers, line: usize) {
    assert_eq!(
        args.last().map(String::as_str),
        Some("&"),
        "README.md:{line}: a server is started in the background (`&`)"
    );
    let mut kept: Vec<&str> = Vec::new();
    let mut address = DEFAULT_ADDRESS.to_owned();
    let mut rest = args[..args.len() - 1].iter();
    while let Some(arg) = rest.next() {
        if arg == "--listen" {
            address = rest.next().expect("--listen ADDRESS").clone();
        } else {
            kept.push(arg);
        }
    }
    // Tests run in the package root, where README's relative paths
    // (`tests/catalog/tools.json`) lead.
    let previous = servers.insert(address.clone(), Server::start(&kept));
    assert!(
        previous.is_none(),
        "README.md:{line}: a second server on {address}"
    );
}

/// `echo 'MESSAGE' | mcpgate check ARGS`: its standard output.
fn run_check(words: &[String], line: usize) -> String {
    let [_, message, pipe, program, subcommand, args @ ..] = words else {
        panic!("README.md:{line}: expected `echo 'MESSAGE' | mcpgate check ARGS`");
    };
    assert!(
        pipe == "|" && program == "mcpgate" && subcommand == "check",
        "README.md:{line}: expected `echo 'MESSAGE' | mcpgate check ARGS`"
    );
    let mut child = Command::new(env!("CARGO_BIN_EXE_mcpgate"))
        .arg("check")
        .args(args)
        .current_dir(root())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(format!("{message}\n").as_bytes()).unwrap();
    drop(stdin);
    let output = child.wait_with_output().unwrap();
    String::from_utf8(output.stdout).unwrap()
}

/// A `curl` command: the request curl sends, to the server README started
/// on the URL's address; what curl prints.
fn run_curl(args: &[String], servers: &Servers, line: usize) -> String {
    let mut url = None;
    let mut headers: Vec<(String, String)> = Vec::new();
    let mut body: Option<String> = None;
    let mut format = String::new();
    let mut print_body = true;
    let mut args = args.iter();
    while let Some(arg) = args.next() {
        let mut value = || {
            args.next()
                .unwrap_or_else(|| panic!("README.md:{line}: {arg} VALUE"))
                .clone()
        };
        match arg.as_str() {
            "-s" => {}
            "-H" => {
                let header = value();
                let (name, value) = header.split_once(':').expect("-H 'Name: value'");
                headers.push((name.trim().to_owned(), value.trim().to_owned()));
            }
            "-d" => body = Some(value()),
            "-w" => format = value(),
            "-o" => {
                assert_eq!(value(), "/dev/null", "README.md:{line}: -o /dev/null only");
                print_body = false;
            }
            other if !other.starts_with('-') && url.is_none() => url = Some(other.to_owned()),
            other => panic!("README.md:{line}: a curl option this test does not send: {other}"),
        }
    }
    let url = url.unwrap_or_else(|| panic!("README.md:{line}: curl without a URL"));
    let rest = url.strip_prefix("http://").expect("an http:// URL");
    let (address, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let server = servers
        .get(address)
        .unwrap_or_else(|| panic!("README.md:{line}: no `mcpgate serve` on {address} before it"));
    let raw = curl_request(server.address, path, &headers, body.as_deref());
    let answer = server.send(&raw);
    let mut printed = String::new();
    if print_body {
        printed.push_str(std::str::from_utf8(&answer.body).unwrap());
    }
    printed.push_str(
        &format
            .replace("%{http_code}", &answer.status.to_string())
            .replace("\\n", "\n"),
    );
    printed
}

/// The request curl 8 sends for `-H`/`-d`: a POST when there is a body.
fn curl_request(
    address: SocketAddr,
    path: &str,
    headers: &[(String, String)],
    body: Option<&str>,
) -> Vec<u8> {
    let has = |name: &str| headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name));
    let method = if body.is_some() { "POST" } else { "GET" };
    let mut raw = format!("{method} {path} HTTP/1.1\r\nHost: {address}\r\nUser-Agent: curl/8\r\n");
    if !has("Accept") {
        raw.push_str("Accept: */*\r\n");
    }
    for (name, value) in headers {
        raw.push_str(&format!("{name}: {value}\r\n"));
    }
    if let Some(body) = body {
        if !has("Content-Type") {
            raw.push_str("Content-Type: application/x-www-form-urlencoded\r\n");
        }
        raw.push_str(&format!("Content-Length: {}\r\n", body.len()));
    }
    raw.push_str("\r\n");
    raw.push_str(body.unwrap_or(""));
    raw.into_bytes()
}

/// The one block of `lang`.
fn only_block<'a>(all: &'a [Block], lang: &str) -> &'a Block {
    let found: Vec<&Block> = all.iter().filter(|b| b.lang == lang).collect();
    assert_eq!(found.len(), 1, "README.md holds one ```{lang} block");
    found[0]
}

#[test]
fn quick_start_test_command_is_what_ci_runs() {
    let text = readme();
    let all = blocks(&text);
    let quick_start = all
        .iter()
        .find(|b| {
            b.lines
                .iter()
                .any(|l| l.starts_with("cargo run --release -- serve"))
        })
        .expect("README.md's quick start runs `cargo run --release -- serve`");
    assert!(
        quick_start
            .lines
            .iter()
            .any(|l| l.split('#').next().unwrap().trim() == "cargo test -- --show-output"),
        "README.md's quick start gives `cargo test -- --show-output`"
    );
    let ci = std::fs::read_to_string(root().join(".ci/run")).unwrap();
    assert!(
        ci.lines()
            .any(|l| l.trim() == "cargo test -- --show-output"),
        ".ci/run runs README's test command"
    );
}

#[test]
fn agent_configuration_names_the_gateway() {
    let text = readme();
    let all = blocks(&text);
    let configs: Vec<serde_json::Value> = all
        .iter()
        .filter(|b| b.lang == "json")
        .map(|b| serde_json::from_str(&b.lines.join("\n")).unwrap())
        .filter(|v: &serde_json::Value| v.get("mcpServers").is_some())
        .collect();
    assert_eq!(configs.len(), 1, "README.md shows one agent configuration");
    let servers = configs[0]["mcpServers"].as_object().unwrap();
    assert!(
        servers.values().all(|s| s["url"] == CLIENT_URL),
        "{servers:?}"
    );
}

#[test]
fn rust_snippet_is_the_crates_first_doctest() {
    let text = readme();
    let all = blocks(&text);
    let snippet = &only_block(&all, "rust").lines;
    let lib = std::fs::read_to_string(root().join("src/lib.rs")).unwrap();
    let docs: Vec<&str> = lib
        .lines()
        .filter_map(|l| l.strip_prefix("//!"))
        .map(|l| l.strip_prefix(' ').unwrap_or(l))
        .collect();
    assert!(
        docs.windows(snippet.len())
            .any(|window| window.iter().eq(snippet.iter())),
        "README.md's Rust snippet is not a doctest of src/lib.rs (which runs it)"
    );
}

#[test]
fn relative_links_lead_to_files_and_headings() {
    let text = readme();
    let mut checked = 0;
    for (line_number, line) in text.lines().enumerate() {
        for link in line.split("](").skip(1) {
            let target = link.split(')').next().unwrap();
            if target.starts_with("http") {
                continue;
            }
            let (file, anchor) = target.split_once('#').unwrap_or((target, ""));
            let path = root().join(file);
            assert!(
                path.exists(),
                "README.md:{}: {file} does not exist",
                line_number + 1
            );
            if !anchor.is_empty() {
                let headings: Vec<String> = std::fs::read_to_string(&path)
                    .unwrap()
                    .lines()
                    .filter(|l| l.starts_with('#'))
                    .map(|l| slug(l.trim_start_matches('#').trim()))
                    .collect();
                assert!(
                    headings.iter().any(|h| h == anchor),
                    "README.md:{}: no heading #{anchor} in {file} ({headings:?})",
                    line_number + 1
                );
            }
            checked += 1;
        }
    }
    assert!(checked > 0, "README.md's links were not found");
}

/// A heading's anchor as GitHub makes it: lower case, spaces to hyphens,
/// punctuation other than `-` and `_` dropped.
fn slug(heading: &str) -> String {
    heading
        .to_lowercase()
        .chars()
        .filter_map(|c| match c {
            ' ' => Some('-'),
            c if c.is_alphanumeric() || c == '-' || c == '_' => Some(c),
            _ => None,
        })
        .collect()
}

/// The snippet of `lang` with its URL pointed at `url`.
fn snippet(lang: &str, url: &str) -> String {
    let text = readme();
    let all = blocks(&text);
    let code = only_block(&all, lang).lines.join("\n");
    assert!(
        code.contains(CLIENT_URL),
        "the {lang} snippet uses {CLIENT_URL}"
    );
    code.replace(CLIENT_URL, url)
}

/// What README shows the client snippets print after the tools' names: the
/// block right after the Python snippet.
fn client_output(all: &[Block]) -> Vec<String> {
    let python = all
        .iter()
        .position(|b| b.lang == "python")
        .expect("README.md shows the Python client");
    let shown = all
        .get(python + 1)
        .filter(|b| b.lang == "text")
        .unwrap_or_else(|| {
            panic!(
                "README.md: a ```text block of what the clients print follows the Python snippet"
            )
        });
    shown.lines.clone()
}

#[test]
#[ignore = "needs the end-to-end peers: bash e2e/setup.sh"]
fn client_snippets_list_and_call_tools_through_the_gateway() {
    peers::require_peers();
    let text = readme();
    let shown = client_output(&blocks(&text));
    let upstream = peers::start_upstream(0);
    let gateway = Server::start(&["--upstream", &upstream.url("/mcp")]);
    let url = format!("http://{}/mcp", gateway.address);

    let ts = run_bounded(
        peers::node().args(["--input-type=module", "-e", &snippet("js", &url)]),
        peers::CLIENT_LIMIT,
    );
    let python = peers::e2e_dir().join(".venv/bin/python");
    let py = run_bounded(
        Command::new(&python).args(["-c", &snippet("python", &url)]),
        peers::CLIENT_LIMIT,
    );
    for (what, ran) in [("the TypeScript snippet", ts), ("the Python snippet", py)] {
        peers::succeeded(&ran, what);
        let mut printed = ran.stdout.lines();
        let tools: Vec<&str> = printed.next().unwrap_or("").split_whitespace().collect();
        for tool in ["add", "search_orders", "get_account"] {
            assert!(
                tools.contains(&tool),
                "{what} did not list {tool}: {tools:?}"
            );
        }
        // The rest as README shows it: a line of JSON compared as JSON (the
        // Python client spaces its separators), any other line exactly.
        let rest: Vec<&str> = printed.collect();
        assert_eq!(
            rest.len(),
            shown.len(),
            "{what} printed {rest:#?}, README shows {shown:#?}"
        );
        for (line, expected) in rest.iter().zip(&shown) {
            let same = match serde_json::from_str::<serde_json::Value>(expected) {
                Ok(json) if json.is_object() => {
                    serde_json::from_str::<serde_json::Value>(line).ok() == Some(json)
                }
                _ => line == expected,
            };
            assert!(
                same,
                "{what} printed\n{line}\nwhere README shows\n{expected}"
            );
        }
    }
    // Each snippet's valid call reached the upstream; the wrong-typed one,
    // answered by the gateway, did not.
    assert_eq!(peers::upstream_calls(&upstream, "add"), 2);
    drop(upstream);
}

#[test]
fn readme_is_at_most_350_lines() {
    let lines = readme().lines().count();
    assert!(
        lines <= 350,
        "README.md has {lines} lines: a guide, at most 350"
    );
}
