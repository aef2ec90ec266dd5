//! `mcpgate serve` settings: built-in defaults, then a TOML file
//! (`--config`), then `MCPGATE_*` variables, then flags — each later one
//! winning. A wrong value fails at start with a message naming the key.

use std::collections::BTreeMap;
use std::net::SocketAddr;
use std::path::PathBuf;
use std::time::Duration;

use clap::Args;
use serde::Deserialize;

use crate::gate::{GateConfig, UnknownTools};
use crate::protocol::Revision;
use crate::server::{IoDriver, ServerConfig};
use crate::service::oauth::keys::JwksSource;
use crate::service::oauth::{OAuthConfig, is_scope_token};
use crate::service::session::SessionKey;
use crate::service::wire::WirePolicy;

/// Flags (each also read from its `MCPGATE_*` variable).
#[derive(Args, Debug, Default)]
pub struct ServeArgs {
    /// A TOML file with any of the keys below (flags and variables win).
    #[arg(long, env = "MCPGATE_CONFIG")]
    pub config: Option<PathBuf>,
    /// Address to listen on [default: 127.0.0.1:8080].
    #[arg(long, env = "MCPGATE_LISTEN")]
    pub listen: Option<String>,
    /// Worker threads, one runtime and listener each [default: cores].
    #[arg(long, env = "MCPGATE_WORKERS")]
    pub workers: Option<String>,
    /// `epoll` or `uring` [default: uring where the kernel offers it, else
    /// epoll].
    #[arg(long, env = "MCPGATE_IO_DRIVER")]
    pub io_driver: Option<String>,
    /// Path of the MCP endpoint [default: /mcp].
    #[arg(long, env = "MCPGATE_ENDPOINT")]
    pub endpoint: Option<String>,
    /// Largest request body in bytes [default: 4194304].
    #[arg(long, env = "MCPGATE_BODY_LIMIT")]
    pub body_limit: Option<String>,
    /// Most client connections open at once, split among the workers;
    /// more wait in the kernel's backlog [default: 4096].
    #[arg(long, env = "MCPGATE_MAX_CONNECTIONS")]
    pub max_connections: Option<String>,
    /// Comma-separated origins allowed besides loopback; `*` for any.
    #[arg(long, env = "MCPGATE_ALLOWED_ORIGINS")]
    pub allowed_origins: Option<String>,
    /// Comma-separated bearer tokens; none: no auth.
    #[arg(long, env = "MCPGATE_BEARER_TOKENS", hide_env_values = true)]
    pub bearer_tokens: Option<String>,
    /// With authentication on, the key session ids are sealed under: hex
    /// or base64 of 32 bytes or more [default: drawn at start].
    #[arg(long, env = "MCPGATE_SESSION_KEY", hide_env_values = true)]
    pub session_key: Option<String>,
    /// Tool catalog: a `tools/list` result or an array of Tool objects.
    #[arg(long, env = "MCPGATE_CATALOG")]
    pub catalog: Option<PathBuf>,
    /// A call of a tool the catalog lacks: `reject` or `forward`
    /// [default: reject with a catalog, forward without].
    #[arg(long, env = "MCPGATE_UNKNOWN_TOOLS")]
    pub unknown_tools: Option<String>,
    /// Learn the catalog from the upstream (its `tools/list`, and
    /// `tools/list` answers passing through) when no file gives it:
    /// `true` or `false` [default: true].
    #[arg(long, env = "MCPGATE_LEARN_CATALOG")]
    pub learn_catalog: Option<String>,
    /// The MCP server to forward allowed messages to, `http://HOST:PORT/PATH`
    /// [default: none: allowed messages get 502, POST /validate for verdicts].
    #[arg(long, env = "MCPGATE_UPSTREAM")]
    pub upstream: Option<String>,
    /// Milliseconds to connect to the upstream [default: 2000].
    #[arg(long, env = "MCPGATE_UPSTREAM_CONNECT_TIMEOUT_MS")]
    pub upstream_connect_timeout_ms: Option<String>,
    /// Milliseconds from a forwarded request to its answer's head [default: 30000].
    #[arg(long, env = "MCPGATE_UPSTREAM_FIRST_BYTE_TIMEOUT_MS")]
    pub upstream_first_byte_timeout_ms: Option<String>,
    /// Milliseconds an answer's body (an event stream) may stay silent [default: 300000].
    #[arg(long, env = "MCPGATE_UPSTREAM_IDLE_TIMEOUT_MS")]
    pub upstream_idle_timeout_ms: Option<String>,
    /// Serve `/_noop`, a 204 that reads nothing (the load benchmark's
    /// floor): `true` or `false`, alone `true` [default: false: `/_noop` is
    /// a 404 like any unknown path].
    #[arg(
        long,
        env = "MCPGATE_BENCH_NOOP_ROUTE",
        num_args = 0..=1,
        default_missing_value = "true",
        value_name = "BOOL"
    )]
    pub bench_noop_route: Option<String>,
    /// OAuth: the authorization server whose access tokens are accepted;
    /// a token's `iss` must equal it [default: none: no OAuth].
    #[arg(long, env = "MCPGATE_OAUTH_ISSUER")]
    pub oauth_issuer: Option<String>,
    /// OAuth: this gateway's resource URI, which a token's `aud` must
    /// contain, e.g. https://mcp.example.com/mcp.
    #[arg(long, env = "MCPGATE_OAUTH_RESOURCE")]
    pub oauth_resource: Option<String>,
    /// OAuth: the issuer's JWKS, read from this file.
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_FILE")]
    pub oauth_jwks_file: Option<PathBuf>,
    /// OAuth: the issuer's JWKS, fetched from this http:// or https:// URL.
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_URL")]
    pub oauth_jwks_url: Option<String>,
    /// OAuth: least seconds between two reloads of the JWKS on an unknown
    /// key id [default: 300].
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_REFRESH_SECS")]
    pub oauth_jwks_refresh_secs: Option<String>,
    /// OAuth: comma-separated authorization servers in the metadata
    /// [default: the issuer].
    #[arg(long, env = "MCPGATE_OAUTH_AUTHORIZATION_SERVERS")]
    pub oauth_authorization_servers: Option<String>,
    /// OAuth: comma-separated scopes every MCP request needs.
    #[arg(long, env = "MCPGATE_OAUTH_SCOPES_REQUIRED")]
    pub oauth_scopes_required: Option<String>,
    /// OAuth: the scopes a tool's `tools/call` needs, `tool=scope scope`
    /// separated by `;`.
    #[arg(long, env = "MCPGATE_OAUTH_TOOL_SCOPES")]
    pub oauth_tool_scopes: Option<String>,
    /// OAuth: pass the client's `Authorization` on to the upstream:
    /// `true` or `false` [default: false].
    #[arg(long, env = "MCPGATE_OAUTH_FORWARD_AUTHORIZATION")]
    pub oauth_forward_authorization: Option<String>,
    /// OAuth: a header the upstream receives the token's `sub` in.
    #[arg(long, env = "MCPGATE_OAUTH_SUBJECT_HEADER")]
    pub oauth_subject_header: Option<String>,
    /// OAuth: a header the upstream receives the granted scopes in.
    #[arg(long, env = "MCPGATE_OAUTH_SCOPES_HEADER")]
    pub oauth_scopes_header: Option<String>,
    #[command(flatten)]
    pub normalization: NormalizationArgs,
}

/// Pre-flight normalization's switches: flags (each also read from its
/// `MCPGATE_*` variable), and the error-envelope contract's own variables,
/// which a flag or `MCPGATE_*` variable overrides.
#[derive(Args, Debug, Default, Clone)]
pub struct NormalizationArgs {
    /// Put `tools/call` argument keys right against the tool's schema
    /// before the value gate: `true` or `false` [default: true].
    #[arg(long, env = "MCPGATE_NORMALIZATION", value_name = "BOOL")]
    pub normalization: Option<String>,
    /// Tell what normalization did in a refused call's envelope
    /// (`_meta.normalized`): `true` or `false` [default: false].
    #[arg(long, env = "MCPGATE_NORMALIZATION_META", value_name = "BOOL")]
    pub normalization_meta: Option<String>,
    /// Refuse top-level keys a tool's schema does not name where it says
    /// nothing of them (objects closed at registration): `true` or `false`
    /// [default: true].
    #[arg(long, env = "MCPGATE_STRICT_UNKNOWN_FIELDS", value_name = "BOOL")]
    pub strict_unknown_fields: Option<String>,
    /// The contract's variables, by key.
    #[arg(skip = ContractVariables::from_env())]
    pub contract: ContractVariables,
}

/// The error-envelope contract's own variables, with the contract's
/// meaning.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub struct ContractVariables {
    /// `MCP_SCHEMA_KEY_NORMALIZATION_ENABLED`.
    pub normalization: Option<String>,
    /// `MCP_SCHEMA_KEY_NORMALIZATION_META`.
    pub normalization_meta: Option<String>,
    /// `MCP_STRICT_UNKNOWN_FIELDS`.
    pub strict_unknown_fields: Option<String>,
}

impl ContractVariables {
    /// The contract's variable of each key.
    pub const NAMES: [(&'static str, &'static str); 3] = [
        ("normalization", "MCP_SCHEMA_KEY_NORMALIZATION_ENABLED"),
        ("normalization_meta", "MCP_SCHEMA_KEY_NORMALIZATION_META"),
        ("strict_unknown_fields", "MCP_STRICT_UNKNOWN_FIELDS"),
    ];

    /// The variables as this process has them.
    pub fn from_env() -> ContractVariables {
        let [normalization, normalization_meta, strict_unknown_fields] =
            Self::NAMES.map(|(_, name)| std::env::var(name).ok());
        ContractVariables {
            normalization,
            normalization_meta,
            strict_unknown_fields,
        }
    }
}

/// The three keys as the TOML file gives them.
#[derive(Debug, Default, Clone, Copy)]
pub struct NormalizationFile {
    pub normalization: Option<bool>,
    pub normalization_meta: Option<bool>,
    pub strict_unknown_fields: Option<bool>,
    /// The older name of `strict_unknown_fields`.
    pub close_tool_schemas: Option<bool>,
}

impl NormalizationArgs {
    /// Sets the gate's switches: a flag or `MCPGATE_*` variable, else the
    /// contract's variable, else the file, else the default.
    pub fn apply(&self, file: NormalizationFile, gate: &mut GateConfig) -> Result<(), ConfigError> {
        let strict_in_file = match (file.strict_unknown_fields, file.close_tool_schemas) {
            (Some(a), Some(b)) if a != b => {
                return Err(error(
                    "strict_unknown_fields",
                    "disagrees with close_tool_schemas, its older name",
                ));
            }
            (a, b) => a.or(b),
        };
        let [normalization, meta, strict] = ContractVariables::NAMES;
        for ((key, variable), flag, contract, in_file, slot) in [
            (
                normalization,
                &self.normalization,
                &self.contract.normalization,
                file.normalization,
                &mut gate.normalization,
            ),
            (
                meta,
                &self.normalization_meta,
                &self.contract.normalization_meta,
                file.normalization_meta,
                &mut gate.normalization_meta,
            ),
            (
                strict,
                &self.strict_unknown_fields,
                &self.contract.strict_unknown_fields,
                strict_in_file,
                &mut gate.catalog.close_objects,
            ),
        ] {
            if let Some(on) = setting(key, flag, (variable, contract), in_file)? {
                *slot = on;
            }
        }
        Ok(())
    }
}

/// One switch: the flag (or its `MCPGATE_*` variable), else the contract's
/// variable, else the file.
fn setting(
    key: &str,
    flag: &Option<String>,
    (variable, contract): (&str, &Option<String>),
    file: Option<bool>,
) -> Result<Option<bool>, ConfigError> {
    if let Some(text) = flag {
        return parse_bool(text)
            .map(Some)
            .ok_or_else(|| error(key, format!("{text:?} is not true or false")));
    }
    if let Some(text) = contract {
        return parse_bool(text)
            .map(Some)
            .ok_or_else(|| error(key, format!("{variable}: {text:?} is not true or false")));
    }
    Ok(file)
}

/// `true`/`false` in any case, or `1`/`0`.
fn parse_bool(text: &str) -> Option<bool> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("true") || t == "1" => Some(true),
        t if t.eq_ignore_ascii_case("false") || t == "0" => Some(false),
        _ => None,
    }
}

/// The TOML file's keys.
#[derive(Deserialize, Debug, Default)]
#[serde(deny_unknown_fields)]
pub struct FileSettings {
    pub listen: Option<String>,
    pub workers: Option<usize>,
    pub io_driver: Option<String>,
    pub endpoint: Option<String>,
    pub body_limit: Option<usize>,
    pub max_depth: Option<usize>,
    pub max_headers: Option<usize>,
    pub max_head_bytes: Option<usize>,
    pub idle_timeout_ms: Option<u64>,
    pub read_timeout_ms: Option<u64>,
    pub shutdown_grace_ms: Option<u64>,
    pub max_connections: Option<usize>,
    pub allowed_origins: Option<Vec<String>>,
    pub bearer_tokens: Option<Vec<String>>,
    pub session_key: Option<String>,
    pub revisions: Option<Vec<String>>,
    pub catalog: Option<PathBuf>,
    pub unknown_tools: Option<String>,
    pub close_tool_schemas: Option<bool>,
    pub strict_unknown_fields: Option<bool>,
    pub normalization: Option<bool>,
    pub normalization_meta: Option<bool>,
    pub learn_catalog: Option<bool>,
    pub upstream: Option<String>,
    pub upstream_connect_timeout_ms: Option<u64>,
    pub upstream_first_byte_timeout_ms: Option<u64>,
    pub upstream_idle_timeout_ms: Option<u64>,
    pub bench_noop_route: Option<bool>,
    pub oauth_issuer: Option<String>,
    pub oauth_resource: Option<String>,
    pub oauth_jwks_file: Option<PathBuf>,
    pub oauth_jwks_url: Option<String>,
    pub oauth_jwks_refresh_secs: Option<u64>,
    pub oauth_authorization_servers: Option<Vec<String>>,
    pub oauth_scopes_required: Option<Vec<String>>,
    pub oauth_tool_scopes: Option<BTreeMap<String, Vec<String>>>,
    pub oauth_forward_authorization: Option<bool>,
    pub oauth_subject_header: Option<String>,
    pub oauth_scopes_header: Option<String>,
}

/// Everything `serve` runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub server: ServerConfig,
    pub gate: GateConfig,
    pub endpoint: String,
    pub wire: WirePolicy,
    /// The tool catalog file, loaded at start.
    pub catalog: Option<PathBuf>,
    /// `/_noop` is served (for benchmarks only: a deployment has no use
    /// for a route that answers without checking anything).
    pub bench_noop_route: bool,
    /// The OAuth resource server, when an issuer is configured (its JWKS
    /// is loaded at start).
    pub oauth: Option<OAuthConfig>,
    /// `session_key`; none: `serve` draws one.
    pub session_key: Option<SessionKey>,
}

/// A setting that cannot be used, by key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ConfigError {
    pub key: String,
    pub message: String,
}

impl std::fmt::Display for ConfigError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "config key `{}`: {}", self.key, self.message)
    }
}

impl std::error::Error for ConfigError {}

fn error(key: &str, message: impl std::fmt::Display) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        message: message.to_string(),
    }
}

fn parse_number<T: std::str::FromStr>(key: &str, text: &str) -> Result<T, ConfigError> {
    text.trim()
        .parse()
        .map_err(|_| error(key, format!("{text:?} is not a number")))
}

fn list(text: &str) -> Vec<String> {
    text.split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect()
}

impl Settings {
    /// The file (if any), overlaid with the flags and variables.
    pub fn resolve(args: &ServeArgs) -> Result<Settings, ConfigError> {
        let file = match &args.config {
            None => FileSettings::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .map_err(|e| error("config", format!("{}: {e}", path.display())))?;
                toml::from_str(&text).map_err(|e| {
                    let message = e.message().to_owned();
                    // The key of the line the error points into.
                    let key = e
                        .span()
                        .map(|span| {
                            let start = text[..span.start].rfind('\n').map_or(0, |i| i + 1);
                            text[start..]
                                .split(['=', '\n'])
                                .next()
                                .unwrap_or_default()
                                .trim()
                        })
                        .filter(|k| !k.is_empty())
                        .unwrap_or("config")
                        .to_owned();
                    error(&key, message)
                })?
            }
        };
        Settings::build(args, file)
    }

    fn build(args: &ServeArgs, mut file: FileSettings) -> Result<Settings, ConfigError> {
        let file_oauth = FileOAuth {
            issuer: file.oauth_issuer.take(),
            resource: file.oauth_resource.take(),
            jwks_file: file.oauth_jwks_file.take(),
            jwks_url: file.oauth_jwks_url.take(),
            jwks_refresh_secs: file.oauth_jwks_refresh_secs,
            authorization_servers: file.oauth_authorization_servers.take(),
            scopes_required: file.oauth_scopes_required.take(),
            tool_scopes: file.oauth_tool_scopes.take(),
            forward_authorization: file.oauth_forward_authorization,
            subject_header: file.oauth_subject_header.take(),
            scopes_header: file.oauth_scopes_header.take(),
        };
        let listen_text = args
            .listen
            .clone()
            .or(file.listen)
            .unwrap_or_else(|| "127.0.0.1:8080".to_owned());
        let listen: SocketAddr = listen_text.parse().map_err(|_| {
            error(
                "listen",
                format!("{listen_text:?} is not an address like 127.0.0.1:8080"),
            )
        })?;
        let mut server = ServerConfig::new(listen);
        if let Some(workers) = args
            .workers
            .as_deref()
            .map(|t| parse_number("workers", t))
            .transpose()?
            .or(file.workers)
        {
            if workers == 0 {
                return Err(error("workers", "must be at least 1"));
            }
            server.workers = workers;
        }
        let driver = args
            .io_driver
            .clone()
            .or(file.io_driver)
            .map(|d| d.parse::<IoDriver>().map_err(|e| error("io_driver", e)))
            .transpose()?;
        let body_limit = args
            .body_limit
            .as_deref()
            .map(|t| parse_number("body_limit", t))
            .transpose()?
            .or(file.body_limit);
        let mut gate = GateConfig::default();
        if let Some(limit) = body_limit {
            if limit == 0 {
                return Err(error("body_limit", "must be at least 1"));
            }
            gate.body_limit = limit;
        }
        server.body_limit = gate.body_limit;
        if let Some(depth) = file.max_depth {
            if !(1..=1024).contains(&depth) {
                return Err(error("max_depth", "must be between 1 and 1024"));
            }
            gate.max_depth = depth;
        }
        if let Some(n) = file.max_headers {
            if !(1..=crate::server::MAX_HEADERS_CAP).contains(&n) {
                return Err(error(
                    "max_headers",
                    format!("must be between 1 and {}", crate::server::MAX_HEADERS_CAP),
                ));
            }
            server.max_headers = n;
        }
        let max_connections = args
            .max_connections
            .as_deref()
            .map(|t| parse_number("max_connections", t))
            .transpose()?
            .or(file.max_connections);
        if let Some(n) = max_connections {
            if n == 0 {
                return Err(error("max_connections", "must be at least 1"));
            }
            server.max_connections = n;
        }
        if let Some(n) = file.max_head_bytes {
            if n < 256 {
                return Err(error("max_head_bytes", "must be at least 256"));
            }
            server.max_head_bytes = n;
        }
        for (key, value, slot) in [
            (
                "idle_timeout_ms",
                file.idle_timeout_ms,
                &mut server.idle_timeout,
            ),
            (
                "read_timeout_ms",
                file.read_timeout_ms,
                &mut server.read_timeout,
            ),
            (
                "shutdown_grace_ms",
                file.shutdown_grace_ms,
                &mut server.shutdown_grace,
            ),
        ] {
            if let Some(ms) = value {
                if ms == 0 {
                    return Err(error(key, "must be at least 1"));
                }
                *slot = Duration::from_millis(ms);
            }
        }
        if let Some(revisions) = file.revisions {
            gate.revisions = revisions
                .iter()
                .map(|r| {
                    Revision::parse(r).ok_or_else(|| {
                        error(
                            "revisions",
                            format!("{r:?} is not a revision mcpgate serves"),
                        )
                    })
                })
                .collect::<Result<_, _>>()?;
            if gate.revisions.is_empty() {
                return Err(error("revisions", "must name at least one revision"));
            }
        }
        if let Some(policy) = args.unknown_tools.clone().or(file.unknown_tools) {
            gate.unknown_tools = Some(
                policy
                    .parse::<UnknownTools>()
                    .map_err(|e| error("unknown_tools", e))?,
            );
        }
        args.normalization.apply(
            NormalizationFile {
                normalization: file.normalization,
                normalization_meta: file.normalization_meta,
                strict_unknown_fields: file.strict_unknown_fields,
                close_tool_schemas: file.close_tool_schemas,
            },
            &mut gate,
        )?;
        if let Some(text) = &args.learn_catalog {
            gate.learn_catalog = text
                .trim()
                .parse()
                .map_err(|_| error("learn_catalog", format!("{text:?} is not true or false")))?;
        } else if let Some(learn) = file.learn_catalog {
            gate.learn_catalog = learn;
        }
        let bench_noop_route = match &args.bench_noop_route {
            Some(text) => text
                .trim()
                .parse()
                .map_err(|_| error("bench_noop_route", format!("{text:?} is not true or false")))?,
            None => file.bench_noop_route.unwrap_or(false),
        };
        let catalog = args.catalog.clone().or(file.catalog);
        let endpoint = args
            .endpoint
            .clone()
            .or(file.endpoint)
            .unwrap_or_else(|| "/mcp".to_owned());
        if !endpoint.starts_with('/') || endpoint.contains(['?', '#', ' ']) {
            return Err(error(
                "endpoint",
                format!("{endpoint:?} is not a path like /mcp"),
            ));
        }
        let wire = WirePolicy {
            allowed_origins: args
                .allowed_origins
                .as_deref()
                .map(list)
                .or(file.allowed_origins)
                .unwrap_or_default(),
            bearer_tokens: args
                .bearer_tokens
                .as_deref()
                .map(list)
                .or(file.bearer_tokens)
                .unwrap_or_default(),
            // Started by `serve` from `Settings::oauth` (it loads the JWKS).
            oauth: None,
        };
        if let Some(url) = args.upstream.clone().or(file.upstream) {
            let mut upstream =
                crate::upstream::UpstreamConfig::parse(&url).map_err(|e| error("upstream", e))?;
            for (key, flag, value, slot) in [
                (
                    "upstream_connect_timeout_ms",
                    &args.upstream_connect_timeout_ms,
                    file.upstream_connect_timeout_ms,
                    &mut upstream.connect_timeout,
                ),
                (
                    "upstream_first_byte_timeout_ms",
                    &args.upstream_first_byte_timeout_ms,
                    file.upstream_first_byte_timeout_ms,
                    &mut upstream.first_byte_timeout,
                ),
                (
                    "upstream_idle_timeout_ms",
                    &args.upstream_idle_timeout_ms,
                    file.upstream_idle_timeout_ms,
                    &mut upstream.idle_timeout,
                ),
            ] {
                let ms = flag
                    .as_deref()
                    .map(|t| parse_number::<u64>(key, t))
                    .transpose()?
                    .or(value);
                if let Some(ms) = ms {
                    // Deadlines are `now + timeout`: keep them far from overflowing.
                    if !(1..=365 * 24 * 3600 * 1000).contains(&ms) {
                        return Err(error(key, "must be between 1 and a year"));
                    }
                    *slot = Duration::from_millis(ms);
                }
            }
            server.upstream = Some(std::sync::Arc::new(upstream));
        }
        server.io_driver = driver.unwrap_or_else(IoDriver::default_here);
        let oauth = oauth_config(args, file_oauth)?;
        if oauth.is_some() && !wire.bearer_tokens.is_empty() {
            return Err(error(
                "bearer_tokens",
                "static bearer tokens and OAuth (oauth_issuer) exclude each other",
            ));
        }
        // With callers told apart, one caller's `tools/list` answer (which
        // the upstream may cut to that caller) must not decide what the
        // others may call: the catalog is the gateway's own listing.
        gate.learn_from_answers = oauth.is_none() && wire.bearer_tokens.is_empty();
        // A catalog learned from the upstream: calls wait until it is known.
        gate.await_catalog = gate.learn_catalog && catalog.is_none() && server.upstream.is_some();
        let session_key = args
            .session_key
            .clone()
            .or(file.session_key)
            .map(|text| SessionKey::parse(&text).map_err(|e| error("session_key", e)))
            .transpose()?;
        Ok(Settings {
            server,
            gate,
            endpoint,
            wire,
            catalog,
            bench_noop_route,
            oauth,
            session_key,
        })
    }
}

/// The `oauth_*` keys of the file, apart from the others.
struct FileOAuth {
    issuer: Option<String>,
    resource: Option<String>,
    jwks_file: Option<PathBuf>,
    jwks_url: Option<String>,
    jwks_refresh_secs: Option<u64>,
    authorization_servers: Option<Vec<String>>,
    scopes_required: Option<Vec<String>>,
    tool_scopes: Option<BTreeMap<String, Vec<String>>>,
    forward_authorization: Option<bool>,
    subject_header: Option<String>,
    scopes_header: Option<String>,
}

fn is_http_url(text: &str) -> bool {
    text.strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"))
        .is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
        && !text.contains(|c: char| c.is_whitespace() || c == '"')
}

fn scopes(key: &str, list: Vec<String>) -> Result<Vec<String>, ConfigError> {
    match list.iter().find(|s| !is_scope_token(s)) {
        Some(bad) => Err(error(key, format!("{bad:?} is not a scope"))),
        None => Ok(list),
    }
}

/// `tool=scope scope;tool=scope`.
fn tool_scope_table(text: &str) -> Result<BTreeMap<String, Vec<String>>, ConfigError> {
    let mut table = BTreeMap::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let Some((tool, needed)) = entry.split_once('=') else {
            return Err(error(
                "oauth_tool_scopes",
                format!("{entry:?} is not tool=scope"),
            ));
        };
        table.insert(
            tool.trim().to_owned(),
            needed.split_whitespace().map(str::to_owned).collect(),
        );
    }
    Ok(table)
}

/// A header name the upstream may receive an identity in: a token that
/// names none of the headers the gateway frames or consumes.
fn identity_header(key: &str, name: Option<String>) -> Result<Option<String>, ConfigError> {
    let Some(name) = name else { return Ok(None) };
    let framing = [
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "authorization",
        "content-type",
        "accept",
    ];
    // No `_`: stacks that read `_` as `-` would take a client's
    // `X-Auth-Subject` for the gateway's `X_Auth_Subject`.
    if name.is_empty()
        || !name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        || framing.iter().any(|f| f.eq_ignore_ascii_case(&name))
        || name.to_ascii_lowercase().starts_with("mcp-")
    {
        return Err(error(
            key,
            format!("{name:?} is not a header name the gateway may set"),
        ));
    }
    Ok(Some(name))
}

fn oauth_config(args: &ServeArgs, file: FileOAuth) -> Result<Option<OAuthConfig>, ConfigError> {
    let issuer = args.oauth_issuer.clone().or(file.issuer);
    let resource = args.oauth_resource.clone().or(file.resource);
    let jwks_file = args.oauth_jwks_file.clone().or(file.jwks_file);
    let jwks_url = args.oauth_jwks_url.clone().or(file.jwks_url);
    let Some(issuer) = issuer else {
        if resource.is_some() || jwks_file.is_some() || jwks_url.is_some() {
            return Err(error("oauth_issuer", "is needed by the other oauth_* keys"));
        }
        return Ok(None);
    };
    if !is_http_url(&issuer) {
        return Err(error(
            "oauth_issuer",
            format!("{issuer:?} is not an http:// or https:// URL"),
        ));
    }
    let resource =
        resource.ok_or_else(|| error("oauth_resource", "is needed with oauth_issuer"))?;
    if !is_http_url(&resource) || resource.contains(['?', '#']) {
        return Err(error(
            "oauth_resource",
            format!("{resource:?} is not an http:// or https:// URL without a query"),
        ));
    }
    let jwks = match (jwks_file, jwks_url) {
        (Some(_), Some(_)) => {
            return Err(error(
                "oauth_jwks_url",
                "give oauth_jwks_file or oauth_jwks_url, not both",
            ));
        }
        (Some(path), None) => JwksSource::File(path),
        (None, Some(url)) if is_http_url(&url) => JwksSource::Url(url),
        (None, Some(url)) => {
            return Err(error(
                "oauth_jwks_url",
                format!("{url:?} is not an http:// or https:// URL"),
            ));
        }
        (None, None) => {
            return Err(error(
                "oauth_jwks_file",
                "oauth_jwks_file or oauth_jwks_url is needed with oauth_issuer",
            ));
        }
    };
    let refresh = args
        .oauth_jwks_refresh_secs
        .as_deref()
        .map(|t| parse_number::<u64>("oauth_jwks_refresh_secs", t))
        .transpose()?
        .or(file.jwks_refresh_secs)
        .unwrap_or(300);
    if !(1..=7 * 24 * 3600).contains(&refresh) {
        return Err(error(
            "oauth_jwks_refresh_secs",
            "must be between 1 and a week",
        ));
    }
    let authorization_servers = args
        .oauth_authorization_servers
        .as_deref()
        .map(list)
        .or(file.authorization_servers)
        .unwrap_or_default();
    if let Some(bad) = authorization_servers.iter().find(|s| !is_http_url(s)) {
        return Err(error(
            "oauth_authorization_servers",
            format!("{bad:?} is not an http:// or https:// URL"),
        ));
    }
    let scopes_required = scopes(
        "oauth_scopes_required",
        args.oauth_scopes_required
            .as_deref()
            .map(list)
            .or(file.scopes_required)
            .unwrap_or_default(),
    )?;
    let tool_scopes = match &args.oauth_tool_scopes {
        Some(text) => tool_scope_table(text)?,
        None => file.tool_scopes.unwrap_or_default(),
    };
    for needed in tool_scopes.values() {
        scopes("oauth_tool_scopes", needed.clone())?;
    }
    let forward_authorization = match &args.oauth_forward_authorization {
        Some(text) => text.trim().parse().map_err(|_| {
            error(
                "oauth_forward_authorization",
                format!("{text:?} is not true or false"),
            )
        })?,
        None => file.forward_authorization.unwrap_or(false),
    };
    Ok(Some(OAuthConfig {
        issuer,
        resource,
        jwks,
        jwks_refresh: Duration::from_secs(refresh),
        authorization_servers,
        scopes_required,
        tool_scopes,
        forward_authorization,
        subject_header: identity_header(
            "oauth_subject_header",
            args.oauth_subject_header.clone().or(file.subject_header),
        )?,
        scopes_header: identity_header(
            "oauth_scopes_header",
            args.oauth_scopes_header.clone().or(file.scopes_header),
        )?,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn file(text: &str) -> FileSettings {
        toml::from_str(text).unwrap()
    }

    #[test]
    fn normalization_switches_come_from_flags_then_the_contracts_variables_then_the_file() {
        let defaults = Settings::build(&ServeArgs::default(), FileSettings::default()).unwrap();
        assert!(defaults.gate.normalization);
        assert!(!defaults.gate.normalization_meta);
        assert!(defaults.gate.catalog.close_objects);
        let contract = |normalization: &str, meta: &str, strict: &str| ServeArgs {
            normalization: NormalizationArgs {
                contract: ContractVariables {
                    normalization: Some(normalization.into()),
                    normalization_meta: Some(meta.into()),
                    strict_unknown_fields: Some(strict.into()),
                },
                ..NormalizationArgs::default()
            },
            ..ServeArgs::default()
        };
        let file_on = || {
            file("normalization = true\nnormalization_meta = false\nstrict_unknown_fields = true")
        };
        // The contract's variables win over the file.
        let settings = Settings::build(&contract("false", "True", "0"), file_on()).unwrap();
        assert!(!settings.gate.normalization);
        assert!(settings.gate.normalization_meta);
        assert!(!settings.gate.catalog.close_objects);
        // A flag (or its MCPGATE_ variable) wins over the contract's.
        let mut args = contract("false", "true", "false");
        args.normalization.normalization = Some("true".into());
        args.normalization.strict_unknown_fields = Some("true".into());
        let settings = Settings::build(&args, FileSettings::default()).unwrap();
        assert!(settings.gate.normalization);
        assert!(settings.gate.catalog.close_objects);
        let error = Settings::build(&contract("nope", "true", "true"), file_on()).unwrap_err();
        assert_eq!(error.key, "normalization");
        assert!(
            error
                .message
                .contains("MCP_SCHEMA_KEY_NORMALIZATION_ENABLED")
        );
        // The older name of strict_unknown_fields still works, and may not
        // say the opposite.
        let settings =
            Settings::build(&ServeArgs::default(), file("close_tool_schemas = false")).unwrap();
        assert!(!settings.gate.catalog.close_objects);
        let error = Settings::build(
            &ServeArgs::default(),
            file("close_tool_schemas = false\nstrict_unknown_fields = true"),
        )
        .unwrap_err();
        assert_eq!(error.key, "strict_unknown_fields");
    }

    #[test]
    fn defaults_apply_without_file_or_flags() {
        let settings = Settings::build(&ServeArgs::default(), FileSettings::default()).unwrap();
        assert_eq!(settings.server.listen, "127.0.0.1:8080".parse().unwrap());
        assert_eq!(settings.endpoint, "/mcp");
        assert_eq!(settings.gate.body_limit, settings.server.body_limit);
        assert!(settings.wire.bearer_tokens.is_empty());
        assert!(settings.server.upstream.is_none());
        assert!(!settings.bench_noop_route);
    }

    #[test]
    fn the_noop_route_is_served_only_when_asked_for() {
        let flag = |value: &str| ServeArgs {
            bench_noop_route: Some(value.into()),
            ..ServeArgs::default()
        };
        let on = file("bench_noop_route = true");
        assert!(
            Settings::build(&ServeArgs::default(), on)
                .unwrap()
                .bench_noop_route
        );
        assert!(
            Settings::build(&flag("true"), FileSettings::default())
                .unwrap()
                .bench_noop_route
        );
        // The flag wins over the file.
        let on = file("bench_noop_route = true");
        assert!(
            !Settings::build(&flag("false"), on)
                .unwrap()
                .bench_noop_route
        );
        let error = Settings::build(&flag("yes"), FileSettings::default()).unwrap_err();
        assert_eq!(error.key, "bench_noop_route");
    }

    #[test]
    fn the_driver_defaults_to_io_uring_where_the_kernel_offers_it() {
        let gateway = ServeArgs {
            upstream: Some("http://127.0.0.1:9001/mcp".into()),
            ..ServeArgs::default()
        };
        let expected = if IoDriver::uring_offered() {
            IoDriver::Uring
        } else {
            IoDriver::Epoll
        };
        // The verdict service and a gateway alike.
        for args in [&ServeArgs::default(), &gateway] {
            let settings = Settings::build(args, FileSettings::default()).unwrap();
            assert_eq!(settings.server.io_driver, expected);
        }
        // A driver that is set wins, from a flag or from the file.
        let epoll = ServeArgs {
            io_driver: Some("epoll".into()),
            upstream: gateway.upstream.clone(),
            ..ServeArgs::default()
        };
        let settings = Settings::build(&epoll, FileSettings::default()).unwrap();
        assert_eq!(settings.server.io_driver, IoDriver::Epoll);
        let settings = Settings::build(&gateway, file("io_driver = \"epoll\"")).unwrap();
        assert_eq!(settings.server.io_driver, IoDriver::Epoll);
    }

    #[test]
    fn the_upstream_takes_its_timeouts_from_file_and_flags() {
        let args = ServeArgs {
            upstream: Some("http://127.0.0.1:9001/mcp".into()),
            upstream_first_byte_timeout_ms: Some("1500".into()),
            ..ServeArgs::default()
        };
        let settings = Settings::build(&args, file("upstream_connect_timeout_ms = 250")).unwrap();
        let upstream = settings.server.upstream.unwrap();
        assert_eq!(upstream.path, "/mcp");
        assert_eq!(upstream.connect_timeout, Duration::from_millis(250));
        assert_eq!(upstream.first_byte_timeout, Duration::from_millis(1500));
        assert_eq!(upstream.idle_timeout, crate::upstream::DEFAULT_IDLE_TIMEOUT);
    }

    #[test]
    fn flags_win_over_the_file() {
        let args = ServeArgs {
            listen: Some("127.0.0.1:9000".into()),
            body_limit: Some("2048".into()),
            ..ServeArgs::default()
        };
        let settings = Settings::build(
            &args,
            file("listen = \"127.0.0.1:7000\"\nbody_limit = 1024\nworkers = 3"),
        )
        .unwrap();
        assert_eq!(settings.server.listen.port(), 9000);
        assert_eq!(settings.gate.body_limit, 2048);
        assert_eq!(settings.server.workers, 3);
        assert_eq!(settings.server.max_connections, 4096);
        let args = ServeArgs {
            max_connections: Some("100".into()),
            ..ServeArgs::default()
        };
        let settings = Settings::build(&args, file("max_connections = 50")).unwrap();
        assert_eq!(settings.server.max_connections, 100);
    }

    #[test]
    fn a_wrong_value_names_its_key() {
        for (args, file_text, key) in [
            (
                ServeArgs {
                    listen: Some("nowhere".into()),
                    ..ServeArgs::default()
                },
                "",
                "listen",
            ),
            (
                ServeArgs {
                    workers: Some("many".into()),
                    ..ServeArgs::default()
                },
                "",
                "workers",
            ),
            (ServeArgs::default(), "io_driver = \"kqueue\"", "io_driver"),
            (
                ServeArgs::default(),
                "revisions = [\"2024-11-05\"]",
                "revisions",
            ),
            (ServeArgs::default(), "endpoint = \"mcp\"", "endpoint"),
            (
                ServeArgs {
                    upstream: Some("https://127.0.0.1:9/mcp".into()),
                    ..ServeArgs::default()
                },
                "",
                "upstream",
            ),
            (
                ServeArgs::default(),
                "upstream = \"http://127.0.0.1:9/mcp\"\nupstream_idle_timeout_ms = 0",
                "upstream_idle_timeout_ms",
            ),
            (
                ServeArgs::default(),
                "read_timeout_ms = 0",
                "read_timeout_ms",
            ),
            (
                ServeArgs::default(),
                "unknown_tools = \"drop\"",
                "unknown_tools",
            ),
            (
                ServeArgs::default(),
                "max_connections = 0",
                "max_connections",
            ),
            (
                ServeArgs {
                    max_connections: Some("lots".into()),
                    ..ServeArgs::default()
                },
                "",
                "max_connections",
            ),
        ] {
            let error = Settings::build(&args, file(file_text)).unwrap_err();
            assert_eq!(error.key, key, "{error}");
            assert!(error.to_string().contains(key));
        }
    }

    #[test]
    fn an_unknown_or_mistyped_file_key_is_named() {
        let dir = std::env::temp_dir().join(format!("mcpgate-config-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        for (text, key) in [
            ("body_limt = 5\n", "body_limt"),
            ("workers = \"two\"\n", "workers"),
        ] {
            let path = dir.join("c.toml");
            std::fs::write(&path, text).unwrap();
            let args = ServeArgs {
                config: Some(path),
                ..ServeArgs::default()
            };
            let error = Settings::resolve(&args).unwrap_err();
            assert!(error.to_string().contains(key), "{error}");
        }
        std::fs::remove_dir_all(&dir).unwrap();
    }

    /// `mcpgate.example.toml` in the repository.
    fn example_path() -> PathBuf {
        PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/mcpgate.example.toml"))
    }

    #[test]
    fn the_example_file_holds_the_built_in_defaults() {
        let args = ServeArgs {
            config: Some(example_path()),
            ..ServeArgs::default()
        };
        let from_file = Settings::resolve(&args).unwrap();
        let built_in = Settings::resolve(&ServeArgs::default()).unwrap();
        assert_eq!(format!("{from_file:?}"), format!("{built_in:?}"));
    }

    #[test]
    fn oauth_keys_from_the_file_and_flags_build_one_resource_server() {
        let toml = file(
            r#"
            oauth_issuer = "https://auth.example"
            oauth_resource = "https://mcp.example/mcp"
            oauth_jwks_url = "https://auth.example/jwks.json"
            oauth_scopes_required = ["mcp"]
            oauth_tool_scopes = { send_message = ["messages:send"] }
            oauth_subject_header = "X-Auth-Subject"
            "#,
        );
        let flags = ServeArgs {
            oauth_tool_scopes: Some("echo=tools:echo extra; ping=".into()),
            ..ServeArgs::default()
        };
        let oauth = Settings::build(&flags, toml).unwrap().oauth.unwrap();
        assert_eq!(
            oauth.jwks,
            JwksSource::Url("https://auth.example/jwks.json".into())
        );
        assert_eq!(oauth.jwks_refresh, Duration::from_secs(300));
        assert_eq!(oauth.scopes_required, ["mcp"]);
        // The flag's table wins over the file's.
        assert_eq!(
            oauth.tool_scopes,
            BTreeMap::from([
                (
                    "echo".to_owned(),
                    vec!["tools:echo".to_owned(), "extra".to_owned()]
                ),
                ("ping".to_owned(), vec![]),
            ])
        );
        assert_eq!(oauth.subject_header.as_deref(), Some("X-Auth-Subject"));
        assert!(!oauth.forward_authorization);
    }

    #[test]
    fn a_wrong_oauth_setting_names_its_key() {
        let base = || ServeArgs {
            oauth_issuer: Some("https://auth.example".into()),
            oauth_resource: Some("https://mcp.example/mcp".into()),
            oauth_jwks_file: Some("jwks.json".into()),
            ..ServeArgs::default()
        };
        for (args, key) in [
            (
                ServeArgs {
                    oauth_resource: None,
                    ..base()
                },
                "oauth_resource",
            ),
            (
                ServeArgs {
                    oauth_jwks_file: None,
                    ..base()
                },
                "oauth_jwks_file",
            ),
            (
                ServeArgs {
                    oauth_jwks_url: Some("ftp://auth.example/jwks".into()),
                    oauth_jwks_file: None,
                    ..base()
                },
                "oauth_jwks_url",
            ),
            (
                ServeArgs {
                    oauth_issuer: Some("https://".into()),
                    ..base()
                },
                "oauth_issuer",
            ),
            (
                ServeArgs {
                    oauth_tool_scopes: Some("echo".into()),
                    ..base()
                },
                "oauth_tool_scopes",
            ),
            (
                ServeArgs {
                    oauth_scopes_header: Some("Content-Length".into()),
                    ..base()
                },
                "oauth_scopes_header",
            ),
            (
                ServeArgs {
                    oauth_subject_header: Some("X_Auth_Subject".into()),
                    ..base()
                },
                "oauth_subject_header",
            ),
            (
                ServeArgs {
                    oauth_jwks_refresh_secs: Some("0".into()),
                    ..base()
                },
                "oauth_jwks_refresh_secs",
            ),
        ] {
            let error = Settings::build(&args, FileSettings::default()).unwrap_err();
            assert_eq!(error.key, key, "{error}");
        }
    }

    #[test]
    fn a_session_key_is_hex_or_base64_of_32_bytes_and_a_wrong_one_names_its_key() {
        let settings = |key: &str| {
            Settings::build(
                &ServeArgs {
                    session_key: Some(key.into()),
                    ..ServeArgs::default()
                },
                FileSettings::default(),
            )
        };
        let hex = "ab".repeat(32);
        assert!(settings(&hex).unwrap().session_key.is_some());
        let from_file = Settings::build(
            &ServeArgs::default(),
            file(&format!("session_key = \"{hex}\"")),
        )
        .unwrap();
        assert_eq!(from_file.session_key, settings(&hex).unwrap().session_key);
        for bad in ["ab".repeat(31), "secret".to_owned()] {
            let error = settings(&bad).unwrap_err();
            assert_eq!(error.key, "session_key", "{error}");
            // The key is never repeated back.
            assert!(!error.to_string().contains(&bad), "{error}");
        }
        assert!(
            Settings::build(&ServeArgs::default(), FileSettings::default())
                .unwrap()
                .session_key
                .is_none()
        );
    }

    #[test]
    fn the_example_file_names_every_key() {
        let text = std::fs::read_to_string(example_path()).unwrap();
        // Its commented keys, set, are keys too.
        let all: String = text
            .lines()
            .map(|line| match line.strip_prefix("# ") {
                Some(rest)
                    if rest.split_once(" = ").is_some_and(|(key, _)| {
                        key.chars().all(|c| c.is_ascii_lowercase() || c == '_')
                    }) =>
                {
                    rest
                }
                _ => line,
            })
            .collect::<Vec<_>>()
            .join("\n");
        let settings: FileSettings = toml::from_str(&all).unwrap();
        let shown = format!("{settings:?}");
        assert!(!shown.contains("None"), "a key is missing: {shown}");
    }
}
