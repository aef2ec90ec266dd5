//! `mcpgate serve` settings: built-in defaults, then a TOML file, then the
//! error-envelope contract's variables, then `MCPGATE_*` variables, then
//! flags, each later one winning. Every key is one field of [`Raw`]; the
//! layers merged into one `Raw` are validated once ([`Settings::resolve`]).

mod validate;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

use clap::Args;
use serde::{Deserialize, Serialize, de::DeserializeOwned};
use toml::Table;

use crate::gate::GateConfig;
use crate::service::oauth::tool_scopes::parse as parse_tool_scopes;

pub use validate::{RouteSettings, Settings};

/// Comma-separated in a flag, an array in the file (an alias: clap takes it as one value).
pub type Strings = Vec<String>;

/// Every key of `mcpgate serve`: a flag and its `MCPGATE_*` variable, and a key of the file.
#[derive(Args, Serialize, Deserialize, Debug, Default, Clone)]
#[serde(deny_unknown_fields)]
pub struct Raw {
    /// A TOML file with any of these keys; its relative paths are read from its directory.
    #[arg(long, env = "MCPGATE_CONFIG")]
    #[serde(skip)]
    pub config: Option<PathBuf>,
    /// `HOST:PORT` to listen on; a name's first address is used [default: 127.0.0.1:8080].
    #[arg(long, env = "MCPGATE_LISTEN")]
    pub listen: Option<String>,
    /// Worker threads, one runtime and listener each [default: cores].
    #[arg(long, env = "MCPGATE_WORKERS", value_parser = number::<usize>)]
    pub workers: Option<usize>,
    /// `epoll` or `uring` [default: uring where the kernel offers it, else epoll].
    #[arg(long, env = "MCPGATE_IO_DRIVER")]
    pub io_driver: Option<String>,
    /// Path of the MCP endpoint [default: /mcp].
    #[arg(long, env = "MCPGATE_ENDPOINT")]
    pub endpoint: Option<String>,
    /// Largest request body in bytes [default: 4194304].
    #[arg(long, env = "MCPGATE_BODY_LIMIT", value_parser = number::<usize>)]
    pub body_limit: Option<usize>,
    #[arg(skip)]
    pub max_depth: Option<usize>,
    #[arg(skip)]
    pub max_headers: Option<usize>,
    #[arg(skip)]
    pub max_head_bytes: Option<usize>,
    #[arg(skip)]
    pub idle_timeout_ms: Option<u64>,
    #[arg(skip)]
    pub read_timeout_ms: Option<u64>,
    #[arg(skip)]
    pub shutdown_grace_ms: Option<u64>,
    /// Most client connections open at once, split among the workers [default: 4096].
    #[arg(long, env = "MCPGATE_MAX_CONNECTIONS", value_parser = number::<usize>)]
    pub max_connections: Option<usize>,
    /// Comma-separated origins allowed besides loopback; `*` for any.
    #[arg(long, env = "MCPGATE_ALLOWED_ORIGINS", value_parser = list)]
    pub allowed_origins: Option<Strings>,
    /// Comma-separated bearer tokens; none: no auth.
    #[arg(long, env = "MCPGATE_BEARER_TOKENS", hide_env_values = true, value_parser = list)]
    pub bearer_tokens: Option<Strings>,
    /// With auth on, the key session ids are sealed under: hex or base64 of 32 bytes or more.
    #[arg(long, env = "MCPGATE_SESSION_KEY", hide_env_values = true)]
    pub session_key: Option<String>,
    #[arg(skip)]
    pub revisions: Option<Strings>,
    /// Tool catalog: a `tools/list` result or an array of Tool objects.
    #[arg(long, env = "MCPGATE_CATALOG")]
    pub catalog: Option<PathBuf>,
    /// A call of a tool the catalog lacks: `reject` or `forward` (let through unchecked)
    /// [default: reject with a catalog, let through without one; 503 while one is awaited].
    #[arg(long, env = "MCPGATE_UNKNOWN_TOOLS")]
    pub unknown_tools: Option<String>,
    /// A refusal that answers a request: `rpc` (HTTP 200 with the JSON-RPC error, as MCP servers
    /// answer; 400 for -32020/-32021/-32022 and missing `_meta` fields) or `http` (the rejection
    /// table's 400) [default: rpc].
    #[arg(long, env = "MCPGATE_REFUSAL_STATUS")]
    pub refusal_status: Option<String>,
    /// The older name of `strict_unknown_fields`.
    #[arg(skip)]
    pub close_tool_schemas: Option<bool>,
    #[command(flatten)]
    #[serde(flatten)]
    pub switches: NormalizationArgs,
    /// Without a catalog file, learn it from the upstream's `tools/list` [default: true].
    #[arg(long, env = "MCPGATE_LEARN_CATALOG", value_parser = boolean)]
    pub learn_catalog: Option<bool>,
    /// The MCP server allowed messages go to, `http://HOST:PORT/PATH` [default: none].
    #[arg(long, env = "MCPGATE_UPSTREAM")]
    pub upstream: Option<String>,
    /// Milliseconds to connect to the upstream [default: 2000].
    #[arg(long, env = "MCPGATE_UPSTREAM_CONNECT_TIMEOUT_MS", value_parser = number::<u64>)]
    pub upstream_connect_timeout_ms: Option<u64>,
    /// Milliseconds from a forwarded request to its answer's head [default: 30000].
    #[arg(long, env = "MCPGATE_UPSTREAM_FIRST_BYTE_TIMEOUT_MS", value_parser = number::<u64>)]
    pub upstream_first_byte_timeout_ms: Option<u64>,
    /// Milliseconds an answer's body (an event stream) may stay silent [default: 300000].
    #[arg(long, env = "MCPGATE_UPSTREAM_IDLE_TIMEOUT_MS", value_parser = number::<u64>)]
    pub upstream_idle_timeout_ms: Option<u64>,
    /// PEM certificates an `https://` upstream's certificate is verified against, in place of
    /// Mozilla's roots (a private CA).
    #[arg(long, env = "MCPGATE_UPSTREAM_CA_FILE")]
    pub upstream_ca_file: Option<PathBuf>,
    /// Serve TLS: the PEM certificate chain (with `tls_key`).
    #[arg(long, env = "MCPGATE_TLS_CERT")]
    pub tls_cert: Option<PathBuf>,
    /// Serve TLS: the PEM private key (with `tls_cert`).
    #[arg(long, env = "MCPGATE_TLS_KEY")]
    pub tls_key: Option<PathBuf>,
    /// Serve `/_noop`, a 204 that reads nothing (a load benchmark's floor) [default: false].
    #[arg(long, env = "MCPGATE_BENCH_NOOP_ROUTE", value_parser = boolean, value_name = "BOOL")]
    #[arg(num_args = 0..=1, default_missing_value = "true")]
    pub bench_noop_route: Option<bool>,
    /// OAuth: the issuer whose access tokens are accepted (`iss`) [default: none: no OAuth].
    #[arg(long, env = "MCPGATE_OAUTH_ISSUER")]
    pub oauth_issuer: Option<String>,
    /// OAuth: this gateway's resource URI, which a token's `aud` must contain.
    #[arg(long, env = "MCPGATE_OAUTH_RESOURCE")]
    pub oauth_resource: Option<String>,
    /// OAuth: the issuer's JWKS, read from this file.
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_FILE")]
    pub oauth_jwks_file: Option<PathBuf>,
    /// OAuth: the issuer's JWKS, fetched from this http:// or https:// URL.
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_URL")]
    pub oauth_jwks_url: Option<String>,
    /// OAuth: least seconds between two reloads of the JWKS [default: 300].
    #[arg(long, env = "MCPGATE_OAUTH_JWKS_REFRESH_SECS", value_parser = number::<u64>)]
    pub oauth_jwks_refresh_secs: Option<u64>,
    /// OAuth: comma-separated authorization servers in the metadata [default: the issuer].
    #[arg(long, env = "MCPGATE_OAUTH_AUTHORIZATION_SERVERS", value_parser = list)]
    pub oauth_authorization_servers: Option<Strings>,
    /// OAuth: comma-separated scopes every MCP request needs.
    #[arg(long, env = "MCPGATE_OAUTH_SCOPES_REQUIRED", value_parser = list)]
    pub oauth_scopes_required: Option<Strings>,
    /// OAuth: the scopes a tool's `tools/call` needs, `tool=scope scope;tool=scope`.
    #[arg(long, env = "MCPGATE_OAUTH_TOOL_SCOPES", value_parser = parse_tool_scopes)]
    pub oauth_tool_scopes: Option<BTreeMap<String, Vec<String>>>,
    /// OAuth: pass the client's `Authorization` on to the upstream [default: false].
    #[arg(long, env = "MCPGATE_OAUTH_FORWARD_AUTHORIZATION", value_parser = boolean)]
    pub oauth_forward_authorization: Option<bool>,
    /// OAuth: a header the upstream receives the token's `sub` in.
    #[arg(long, env = "MCPGATE_OAUTH_SUBJECT_HEADER")]
    pub oauth_subject_header: Option<String>,
    /// OAuth: a header the upstream receives the granted scopes in.
    #[arg(long, env = "MCPGATE_OAUTH_SCOPES_HEADER")]
    pub oauth_scopes_header: Option<String>,
    /// `[[route]]` tables (the file only): more MCP endpoints behind the
    /// one gateway, each with its own upstream and catalog.
    #[arg(skip)]
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub route: Option<Vec<RouteRaw>>,
}

/// One `[[route]]` table: an MCP endpoint and what it forwards to. A key
/// left out takes the top-level key of the same name (`path` aside, and
/// `upstream`, `catalog`, `oauth_resource`, `oauth_tool_scopes`, which
/// belong to the route alone).
#[derive(Serialize, Deserialize, Debug, Default, Clone, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct RouteRaw {
    pub path: String,
    pub upstream: Option<String>,
    pub catalog: Option<PathBuf>,
    pub learn_catalog: Option<bool>,
    pub oauth_resource: Option<String>,
    pub oauth_tool_scopes: Option<BTreeMap<String, Vec<String>>>,
    pub allowed_origins: Option<Strings>,
    pub body_limit: Option<usize>,
    pub upstream_connect_timeout_ms: Option<u64>,
    pub upstream_first_byte_timeout_ms: Option<u64>,
    pub upstream_idle_timeout_ms: Option<u64>,
}

/// Pre-flight normalization's switches (`check` takes them too): `true`/`false` or `1`/`0`.
#[derive(Args, Serialize, Deserialize, Debug, Default, Clone)]
pub struct NormalizationArgs {
    /// Put `tools/call` argument keys right against the tool's schema [default: true].
    #[arg(long, env = "MCPGATE_NORMALIZATION", value_name = "BOOL", value_parser = boolean)]
    pub normalization: Option<bool>,
    /// Tell what normalization did in a refused call's `_meta.normalized` [default: false].
    #[arg(long, env = "MCPGATE_NORMALIZATION_META", value_name = "BOOL", value_parser = boolean)]
    pub normalization_meta: Option<bool>,
    /// Refuse argument keys a tool's schema does not name nor allow [default: true].
    #[arg(long, env = "MCPGATE_STRICT_UNKNOWN_FIELDS", value_name = "BOOL", value_parser = boolean)]
    pub strict_unknown_fields: Option<bool>,
}

/// The error-envelope contract's variable of each switch (under `MCPGATE_*`, over the file).
pub const CONTRACT: [(&str, &str); 3] = [
    ("normalization", "MCP_SCHEMA_KEY_NORMALIZATION_ENABLED"),
    ("normalization_meta", "MCP_SCHEMA_KEY_NORMALIZATION_META"),
    ("strict_unknown_fields", "MCP_STRICT_UNKNOWN_FIELDS"),
];

impl NormalizationArgs {
    /// Sets the gate's switches, for `check`: these, else the contract's variables.
    pub fn apply(&self, gate: &mut GateConfig) -> Result<(), ConfigError> {
        let contract: NormalizationArgs = read(contract(|name| std::env::var(name).ok())?)?;
        contract.set(gate);
        self.set(gate);
        Ok(())
    }

    fn set(&self, gate: &mut GateConfig) {
        gate.normalization = self.normalization.unwrap_or(gate.normalization);
        gate.normalization_meta = self.normalization_meta.unwrap_or(gate.normalization_meta);
        let closed = &mut gate.catalog.close_objects;
        *closed = self.strict_unknown_fields.unwrap_or(*closed);
    }
}

/// A setting that cannot be used, by key, and where it was set (`in FILE`,
/// `from VARIABLE`, `from --FLAG`; none: the error is not one value's).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("config key `{key}`{}: {message}", origin.as_ref().map_or(String::new(), |o| format!(" ({o})")))]
pub struct ConfigError {
    pub key: String,
    pub message: String,
    pub origin: Option<String>,
}

fn error(key: &str, message: impl Into<String>, origin: Option<String>) -> ConfigError {
    ConfigError {
        key: key.to_owned(),
        message: message.into(),
        origin,
    }
}

/// The source of a key set by a flag.
pub fn flag(key: &str) -> String {
    format!("from --{}", key.replace('_', "-"))
}

/// A layer: its keys, and where it set them.
type Layer<'a> = (Table, &'a dyn Fn(&str) -> String);

/// The layers, each over those before: the keys, and where each was set.
fn merge(layers: Vec<Layer>) -> (Table, BTreeMap<String, String>) {
    let (mut merged, mut from) = (Table::new(), BTreeMap::new());
    for (table, source) in layers {
        from.extend(table.keys().map(|key| (key.clone(), source(key))));
        merged.extend(table);
    }
    (merged, from)
}

/// Merged keys as `T` (each layer was read as one already).
fn read<T: DeserializeOwned>(keys: Table) -> Result<T, ConfigError> {
    keys.try_into()
        .map_err(|e: toml::de::Error| error("config", e.message(), None))
}

/// A layer's keys (those it sets) as a table.
fn table(layer: &impl Serialize) -> Result<Table, ConfigError> {
    Table::try_from(layer).map_err(|e| error("config", e.to_string(), None))
}

fn contract_source(key: &str) -> String {
    let (_, name) = CONTRACT.iter().find(|(k, _)| *k == key).expect("a switch");
    format!("from {name}")
}

/// The contract's variables that are set, by key.
fn contract(var: impl Fn(&str) -> Option<String>) -> Result<Table, ConfigError> {
    let mut table = Table::new();
    for (key, name) in CONTRACT {
        if let Some(text) = var(name) {
            let on = boolean(&text);
            let on = on.map_err(|m| error(key, m.to_string(), Some(contract_source(key))))?;
            table.insert(key.to_owned(), on.into());
        }
    }
    Ok(table)
}

/// The file's keys, relative paths made relative to its directory.
fn file(path: &Path) -> Result<Table, ConfigError> {
    let from = || Some(format!("in {}", path.display()));
    let unread = |e| error("config", format!("{}: {e}", path.display()), None);
    let text = std::fs::read_to_string(path).map_err(unread)?;
    let bad = |e: toml::de::Error| error("config", e.to_string().trim_end(), from());
    let keys: Table = text.parse().map_err(bad)?;
    let mut raw: Raw = keys.clone().try_into().map_err(|e: toml::de::Error| {
        // The key at fault: the first that cannot be read alone.
        let alone = |(k, v): &(&String, &toml::Value)| {
            let one = Table::from_iter([((*k).clone(), (*v).clone())]);
            one.try_into::<Raw>().is_err()
        };
        let key = keys.iter().find(alone).map(|(k, _)| k.as_str());
        error(key.unwrap_or("config"), e.message(), from())
    })?;
    let dir = path.parent().unwrap_or(Path::new(""));
    let paths = [
        &mut raw.upstream_ca_file,
        &mut raw.tls_cert,
        &mut raw.tls_key,
    ];
    let routes = raw.route.iter_mut().flatten();
    let in_routes = routes.flat_map(|route| route.catalog.iter_mut());
    for path in raw
        .catalog
        .iter_mut()
        .chain(&mut raw.oauth_jwks_file)
        .chain(paths.into_iter().flatten())
        .chain(in_routes)
    {
        *path = dir.join(&*path);
    }
    let strict = &mut raw.switches.strict_unknown_fields;
    if strict.is_some_and(|a| raw.close_tool_schemas.is_some_and(|b| a != b)) {
        let message = "disagrees with close_tool_schemas, its older name";
        return Err(error("strict_unknown_fields", message, from()));
    }
    *strict = strict.or(raw.close_tool_schemas.take());
    table(&raw)
}

impl Settings {
    /// The layers under `flags` (and their `MCPGATE_*` variables: `from_cli` tells which
    /// set a key; `var` reads the contract's variables), merged and validated.
    pub fn resolve<S, V>(flags: &Raw, from_cli: S, var: V) -> Result<Settings, ConfigError>
    where
        S: Fn(&str) -> String,
        V: Fn(&str) -> Option<String>,
    {
        let in_file = |_: &str| format!("in {}", flags.config.as_ref().unwrap().display());
        let file = flags.config.as_deref().map(file).transpose()?;
        let mut layers: Vec<Layer> = file.map(|keys| (keys, &in_file as _)).into_iter().collect();
        layers.push((contract(var)?, &contract_source));
        layers.push((table(flags)?, &from_cli));
        let (keys, from) = merge(layers);
        let raw = read(keys.clone())?;
        validate::Given { raw, keys, from }.settings()
    }
}

/// A flag's or variable's text that is not a value of its kind (the text
/// as given in each).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ValueError {
    #[error("{0:?} is not a number")]
    Number(String),
    #[error("{0:?} is not true or false")]
    Boolean(String),
}

/// A number, spaces around it allowed.
fn number<T: std::str::FromStr>(text: &str) -> Result<T, ValueError> {
    let number = text.trim().parse();
    number.map_err(|_| ValueError::Number(text.to_owned()))
}

/// `true`/`false` in any case, or `1`/`0`.
fn boolean(text: &str) -> Result<bool, ValueError> {
    match text.trim() {
        t if t.eq_ignore_ascii_case("true") || t == "1" => Ok(true),
        t if t.eq_ignore_ascii_case("false") || t == "0" => Ok(false),
        _ => Err(ValueError::Boolean(text.to_owned())),
    }
}

/// Comma-separated, blanks dropped.
fn list(text: &str) -> Result<Strings, std::convert::Infallible> {
    let items = text.split(',').map(str::trim).filter(|s| !s.is_empty());
    Ok(items.map(str::to_owned).collect())
}

#[cfg(test)]
mod tests;
