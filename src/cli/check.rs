//! `mcpgate check`: each input is one message (a file, or one line of
//! NDJSON on standard input); print what the gateway would answer.
//! Exit 0 when every message was allowed, 1 when any was refused, 2 on a
//! usage error.

use std::io::{BufRead, Write};
use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Args, ValueEnum};

use crate::catalog::{Catalog, CatalogError};
use crate::config::{ConfigError, NormalizationArgs};
use crate::gate::binding::name_member;
use crate::gate::headers::names;
use crate::gate::{
    Gate, GateConfig, RefusalStatus, RefusalStatusError, UnknownTools, UnknownToolsError, Verdict,
};
use crate::protocol::{CompileRootError, Lane, Revision};

#[derive(Args, Debug)]
pub struct CheckArgs {
    /// Check as if sent with this `MCP-Protocol-Version` (absent: the
    /// header is not sent, which means 2025-03-26). On the 2026-07-28 lane
    /// `Mcp-Method` and `Mcp-Name` are filled from the body, as a client
    /// sends them, unless given with --header.
    #[arg(long)]
    pub revision: Option<String>,
    /// A request header, `Name: value`; repeatable.
    #[arg(long = "header", value_name = "NAME: VALUE")]
    pub headers: Vec<String>,
    /// Tool catalog (a `tools/list` result or an array of Tool objects):
    /// `tools/call` arguments are checked against it.
    #[arg(long)]
    pub catalog: Option<PathBuf>,
    /// A call of a tool the catalog lacks: `reject` or `forward` (let
    /// through unchecked) [default: reject with a catalog, let through
    /// without one].
    #[arg(long)]
    pub unknown_tools: Option<String>,
    /// A refusal that answers a request: `rpc` (status 200 with the
    /// JSON-RPC error, as MCP servers answer) or `http` (400) [default:
    /// rpc], as `serve`'s `refusal_status`.
    #[arg(long)]
    pub refusal_status: Option<String>,
    /// `ndjson`: one JSON object per input. Default: a readable report.
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Files holding one message each; `-` (or none) reads NDJSON from
    /// standard input, one message per line.
    pub inputs: Vec<PathBuf>,
    #[command(flatten)]
    pub normalization: NormalizationArgs,
}

#[derive(Clone, Copy, Debug, ValueEnum)]
pub enum Format {
    Ndjson,
}

/// What stops `check` before a verdict: a usage error (exit 2), told
/// after `mcpgate check: `.
#[derive(Debug, thiserror::Error)]
pub enum CheckError {
    #[error("--header {0:?}: expected 'Name: value'")]
    Header(String),
    /// A revision not served; `known` lists those that are.
    #[error("--revision {text:?}: not one of {known}")]
    Revision { text: String, known: String },
    #[error("--unknown-tools: {0}")]
    UnknownTools(UnknownToolsError),
    #[error("--refusal-status: {0}")]
    RefusalStatus(RefusalStatusError),
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error(transparent)]
    Compile(#[from] CompileRootError),
    #[error("--catalog: {0}")]
    Catalog(CatalogError),
    /// An input file that could not be read.
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    #[error("standard input: {0}")]
    Stdin(std::io::Error),
    #[error("standard output: {0}")]
    Stdout(std::io::Error),
}

pub fn run(args: CheckArgs) -> ExitCode {
    match run_inner(args) {
        Ok(true) => ExitCode::SUCCESS,
        Ok(false) => ExitCode::from(1),
        Err(message) => {
            eprintln!("mcpgate check: {message}");
            ExitCode::from(2)
        }
    }
}

fn run_inner(args: CheckArgs) -> Result<bool, CheckError> {
    let mut headers: Vec<(String, Vec<u8>)> = Vec::new();
    for header in &args.headers {
        let (name, value) = header
            .split_once(':')
            .ok_or_else(|| CheckError::Header(header.clone()))?;
        headers.push((name.trim().to_owned(), value.trim().as_bytes().to_vec()));
    }
    let revision = match &args.revision {
        None => None,
        Some(text) => Some(Revision::parse(text).ok_or_else(|| {
            let known: Vec<&str> = Revision::ALL.iter().map(|r| r.as_str()).collect();
            CheckError::Revision {
                text: text.clone(),
                known: known.join(", "),
            }
        })?),
    };
    if let Some(revision) = revision
        && !headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case(names::PROTOCOL_VERSION))
    {
        headers.push((
            names::PROTOCOL_VERSION.to_owned(),
            revision.as_str().as_bytes().to_vec(),
        ));
    }
    let fill_mirrors = revision.is_some_and(|r| r.lane() == Lane::Modern);
    let mut config = GateConfig::default();
    if let Some(policy) = &args.unknown_tools {
        config.unknown_tools = Some(
            policy
                .parse::<UnknownTools>()
                .map_err(CheckError::UnknownTools)?,
        );
    }
    if let Some(status) = &args.refusal_status {
        config.refusal_status = status
            .parse::<RefusalStatus>()
            .map_err(CheckError::RefusalStatus)?;
    }
    args.normalization.apply(&mut config)?;
    let options = config.catalog;
    let gate = Gate::new(config)?;
    if let Some(path) = &args.catalog {
        let catalog = Catalog::from_file(path, &options).map_err(CheckError::Catalog)?;
        for refused in catalog.refused() {
            eprintln!(
                "mcpgate check: tool {} refused at registration: {}",
                refused.tool, refused.reason
            );
        }
        gate.set_catalog(catalog);
    }

    let mut inputs: Vec<(String, Vec<u8>)> = Vec::new();
    let stdin_requested =
        args.inputs.is_empty() || args.inputs.iter().any(|p| p.as_os_str() == "-");
    for path in &args.inputs {
        if path.as_os_str() == "-" {
            continue;
        }
        let body = std::fs::read(path).map_err(|source| CheckError::Read {
            path: path.clone(),
            source,
        })?;
        inputs.push((path.display().to_string(), body));
    }
    if stdin_requested {
        let stdin = std::io::stdin();
        for (n, line) in stdin.lock().split(b'\n').enumerate() {
            let line = line.map_err(CheckError::Stdin)?;
            let line = line.strip_suffix(b"\r").map(<[u8]>::to_vec).unwrap_or(line);
            if line.iter().all(u8::is_ascii_whitespace) {
                continue;
            }
            inputs.push((format!("stdin:{}", n + 1), line));
        }
    }

    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let mut all_allowed = true;
    for (name, body) in &inputs {
        let mut message_headers = headers.clone();
        if fill_mirrors {
            add_mirror_headers(&mut message_headers, body, &gate.catalog());
        }
        let verdict = gate.check(message_headers.as_slice(), body);
        all_allowed &= matches!(verdict, Verdict::Allow(_));
        let normalized = match &verdict {
            Verdict::Allow(allowed) => allowed.normalized.clone(),
            Verdict::Reject(_) => gate.normalization_of(body),
        };
        let events: serde_json::Value = normalized
            .and_then(|n| serde_json::from_slice(&n).ok())
            .unwrap_or_else(|| serde_json::json!([]));
        let written = match args.format {
            Some(Format::Ndjson) => write_ndjson(&mut out, &verdict, events),
            None => write_report(&mut out, name, &verdict, &events),
        };
        written.map_err(CheckError::Stdout)?;
    }
    Ok(all_allowed)
}

/// `Mcp-Method`, `Mcp-Name` and the catalog's `Mcp-Param-*` as a
/// 2026-07-28 client sends them, where the caller did not give them.
fn add_mirror_headers(headers: &mut Vec<(String, Vec<u8>)>, body: &[u8], catalog: &Catalog) {
    let Ok(serde_json::Value::Object(message)) = serde_json::from_slice::<serde_json::Value>(body)
    else {
        return;
    };
    let has = |headers: &Vec<(String, Vec<u8>)>, name: &str| {
        headers.iter().any(|(n, _)| n.eq_ignore_ascii_case(name))
    };
    let Some(method) = message.get("method").and_then(|m| m.as_str()) else {
        return;
    };
    if !has(headers, names::METHOD) {
        headers.push((names::METHOD.to_owned(), method.as_bytes().to_vec()));
    }
    let value = name_member(method).and_then(|member| message.get("params")?.get(member)?.as_str());
    if let Some(value) = value
        && !has(headers, names::NAME)
    {
        headers.push((names::NAME.to_owned(), header_value(value)));
    }
    let tool = (method == "tools/call")
        .then(|| value.and_then(|name| catalog.get(name)))
        .flatten();
    for param in tool.map(|t| t.header_params.as_slice()).unwrap_or_default() {
        let argument = param
            .path
            .iter()
            .try_fold(
                message.get("params").and_then(|p| p.get("arguments")),
                |v, key| Some(v?.get(key)),
            )
            .flatten();
        let text = match argument {
            None | Some(serde_json::Value::Null) => continue,
            Some(serde_json::Value::String(s)) => s.clone(),
            Some(other) => other.to_string(),
        };
        if !has(headers, &param.header) {
            headers.push((param.header.clone(), header_value(&text)));
        }
    }
}

/// A header value as a client writes it: as is when it is plain visible
/// ASCII, else in the base64 sentinel.
fn header_value(value: &str) -> Vec<u8> {
    if value.bytes().all(|b| (b' '..=b'~').contains(&b)) {
        value.as_bytes().to_vec()
    } else {
        use base64::Engine as _;
        format!(
            "=?base64?{}?=",
            base64::engine::general_purpose::STANDARD.encode(value)
        )
        .into_bytes()
    }
}

/// One line: the verdict, the normalization events (`[]` for none) and,
/// when normalization changed the message, the message as forwarded.
fn write_ndjson(
    out: &mut impl Write,
    verdict: &Verdict<'_>,
    events: serde_json::Value,
) -> std::io::Result<()> {
    let mut line = match verdict {
        Verdict::Allow(_) => serde_json::json!({
            "verdict": "allow", "status": allow_status(verdict), "rejecter": null, "reason": null, "body": null
        }),
        Verdict::Reject(rejection) => serde_json::json!({
            "verdict": "reject",
            "status": rejection.status,
            "rejecter": rejection.rejecter().as_str(),
            "reason": rejection.row().name,
            "body": serde_json::from_slice::<serde_json::Value>(&rejection.body).unwrap_or(serde_json::Value::Null),
        }),
    };
    line["normalized"] = events;
    if let Verdict::Allow(allowed) = verdict
        && let Some(forward) = &allowed.forward
    {
        line["forward"] = serde_json::from_slice(forward).unwrap_or(serde_json::Value::Null);
    }
    serde_json::to_writer(&mut *out, &line)?;
    out.write_all(b"\n")
}

/// The status the transport answers an allowed message with when it
/// answers itself (verdict service): 204 for requests (let it through),
/// 202 for notifications and client answers.
fn allow_status(verdict: &Verdict<'_>) -> u16 {
    match verdict {
        Verdict::Allow(allowed) if !allowed.expects_response() => 202,
        _ => 204,
    }
}

fn write_report(
    out: &mut impl Write,
    name: &str,
    verdict: &Verdict<'_>,
    events: &serde_json::Value,
) -> std::io::Result<()> {
    write_verdict(out, name, verdict)?;
    for event in events.as_array().into_iter().flatten() {
        writeln!(out, "    normalized: {}", describe_event(event))?;
    }
    Ok(())
}

/// One normalization event in words.
fn describe_event(event: &serde_json::Value) -> String {
    let text = |key: &str| event[key].as_str().unwrap_or_default().to_owned();
    match event["kind"].as_str().unwrap_or_default() {
        "renamed" => format!("renamed {:?} to {:?}", text("from"), text("to")),
        "dropped_alias" => format!(
            "dropped {:?}, {:?} was sent too",
            text("from"),
            text("canonical")
        ),
        "coerced" => format!(
            "{:?}: {} wrapped in an {}",
            text("field"),
            text("from_type"),
            text("to_type")
        ),
        kind => format!("{kind} {:?} ({})", text("field"), text("reason")),
    }
}

fn write_verdict(out: &mut impl Write, name: &str, verdict: &Verdict<'_>) -> std::io::Result<()> {
    match verdict {
        Verdict::Allow(allowed) => writeln!(
            out,
            "{name}: allow — {} {} ({})",
            allowed.kind.as_str(),
            allowed.method.unwrap_or("-"),
            allowed.revision
        ),
        Verdict::Reject(rejection) => {
            let body: serde_json::Value =
                serde_json::from_slice(&rejection.body).unwrap_or_default();
            // A JSON-RPC error's message, or a tool-dialect answer's text
            // (its summary, then one line per problem and hint).
            let text = body["error"]["message"]
                .as_str()
                .or_else(|| body["result"]["content"][0]["text"].as_str())
                .unwrap_or_default();
            let mut lines = text.lines();
            writeln!(
                out,
                "{name}: reject — {} {}/{}: {}",
                rejection.status,
                rejection.rejecter().as_str(),
                rejection.row().name,
                lines.next().unwrap_or_default()
            )?;
            for line in lines {
                writeln!(out, "    {}", line.trim_start_matches("- "))?;
            }
            if let Some(errors) = body["error"]["data"]["errors"].as_array() {
                for location in errors {
                    let path = location["path"].as_str().unwrap_or_default();
                    for problem in location["problems"].as_array().into_iter().flatten() {
                        writeln!(
                            out,
                            "    {}: {}",
                            if path.is_empty() { "(message)" } else { path },
                            problem.as_str().unwrap_or_default()
                        )?;
                    }
                }
            }
            Ok(())
        }
    }
}
