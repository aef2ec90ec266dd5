//! The merged keys checked once and turned into what `serve` runs with.

use std::collections::BTreeMap;
use std::net::{SocketAddr, ToSocketAddrs};
use std::ops::RangeInclusive;
use std::{path::PathBuf, sync::Arc, time::Duration};

use toml::Table;

use super::{ConfigError, Raw, RouteRaw};
use crate::gate::{GateConfig, RefusalStatus, UnknownTools};
use crate::protocol::Revision;
use crate::server::tls::{CertResolver, TlsFileError};
use crate::server::{IoDriver, MAX_HEADERS_CAP, ServerConfig};
use crate::service::oauth::{OAuthConfig, is_http_url, is_scope_token, may_carry_identity};
use crate::service::{oauth::keys::JwksSource, session::SessionKey, wire::WirePolicy};
use crate::upstream::UpstreamConfig;

/// Everything `serve` runs with.
#[derive(Debug, Clone)]
pub struct Settings {
    pub server: ServerConfig,
    /// The first route's (`routes[0]`), as the settings of a gateway of
    /// one route read.
    #[cfg_attr(not(test), allow(dead_code))]
    pub gate: GateConfig,
    #[cfg_attr(not(test), allow(dead_code))]
    pub endpoint: String,
    pub wire: WirePolicy,
    /// The tool catalog file, loaded at start.
    #[cfg_attr(not(test), allow(dead_code))]
    pub catalog: Option<PathBuf>,
    /// `/_noop` is served: for load benchmarks only.
    pub bench_noop_route: bool,
    /// The OAuth resource server, started (its JWKS loaded) by `serve`.
    pub oauth: Option<OAuthConfig>,
    /// `session_key`; none: `serve` draws one.
    pub session_key: Option<SessionKey>,
    /// The MCP endpoints: the top-level keys' one, then each `[[route]]`
    /// (`gate`, `endpoint`, `catalog`, `server.upstream`, `oauth` above
    /// are the first's).
    pub routes: Vec<RouteSettings>,
    /// `[[route]]` tables were given: the series of `/metrics` carry a
    /// `route` label.
    pub labelled: bool,
}

/// One MCP endpoint.
#[derive(Debug, Clone)]
pub struct RouteSettings {
    /// The endpoint's path, e.g. `/mcp`.
    pub path: String,
    pub gate: GateConfig,
    pub upstream: Option<Arc<UpstreamConfig>>,
    /// The tool catalog file, loaded at start and at each reload.
    pub catalog: Option<PathBuf>,
    pub allowed_origins: Vec<String>,
    /// The OAuth resource server with this route's resource and tool
    /// scopes.
    pub oauth: Option<OAuthConfig>,
}

/// The top-level keys that make the one-route shorthand next to
/// `[[route]]` tables (the other keys a route takes are every route's
/// defaults).
const SHORTHAND: [&str; 5] = [
    "endpoint",
    "upstream",
    "catalog",
    "oauth_resource",
    "oauth_tool_scopes",
];

/// Paths the gateway serves itself, which no route may take.
const RESERVED: [&str; 3] = ["/validate", "/metrics", "/healthz"];

/// The values a number takes, and what it is told otherwise.
type Range = (RangeInclusive<i64>, &'static str);
const SOME: Range = (1..=i64::MAX, "must be at least 1");
/// Deadlines are `now + timeout`: a year keeps them far from overflowing.
const A_YEAR: Range = (1..=365 * 24 * 3600 * 1000, "must be between 1 and a year");
const A_WEEK: Range = (1..=7 * 24 * 3600, "must be between 1 and a week");
const _: () = assert!(MAX_HEADERS_CAP == 256);
const JWKS_BOTH: &str = "give oauth_jwks_file or oauth_jwks_url, not both";
const JWKS_NEITHER: &str = "oauth_jwks_file or oauth_jwks_url is needed with oauth_issuer";

type Checked<T> = Result<T, ConfigError>;

/// The merged keys and where each was set.
pub(super) struct Given {
    pub raw: Raw,
    pub keys: Table,
    pub from: BTreeMap<String, String>,
}

/// `ms` milliseconds, else `default`.
fn ms(ms: Option<u64>, default: Duration) -> Duration {
    ms.map_or(default, Duration::from_millis)
}

impl Given {
    fn error(&self, key: &str, message: impl Into<String>) -> ConfigError {
        super::error(key, message, self.from.get(key).cloned())
    }

    /// Every number against its range, before anything is built.
    fn ranges(&self) -> Checked<()> {
        for (key, (ok, message)) in [
            ("workers", SOME),
            ("body_limit", SOME),
            ("max_depth", (1..=1024, "must be between 1 and 1024")),
            ("max_headers", (1..=256, "must be between 1 and 256")),
            ("max_head_bytes", (256..=i64::MAX, "must be at least 256")),
            ("max_connections", SOME),
            ("idle_timeout_ms", SOME),
            ("read_timeout_ms", SOME),
            ("shutdown_grace_ms", SOME),
            ("upstream_connect_timeout_ms", A_YEAR),
            ("upstream_first_byte_timeout_ms", A_YEAR),
            ("upstream_idle_timeout_ms", A_YEAR),
            ("oauth_jwks_refresh_secs", A_WEEK),
        ] {
            let value = self.keys.get(key).and_then(toml::Value::as_integer);
            if value.is_some_and(|v| !ok.contains(&v)) {
                return Err(self.error(key, message));
            }
        }
        Ok(())
    }

    pub(super) fn settings(self) -> Checked<Settings> {
        self.ranges()?;
        let (mut gate, mut server, raw) = (self.gate()?, self.server()?, &self.raw);
        server.upstream = self.upstream()?.map(Arc::new);
        let wire = WirePolicy {
            allowed_origins: raw.allowed_origins.clone().unwrap_or_default(),
            bearer_tokens: raw.bearer_tokens.clone().unwrap_or_default(),
            // Started by `serve` from `Settings::oauth` (it loads the JWKS).
            oauth: None,
        };
        let oauth = self.oauth()?;
        if oauth.is_some() && !wire.bearer_tokens.is_empty() {
            let message = "static bearer tokens and OAuth (oauth_issuer) exclude each other";
            return Err(self.error("bearer_tokens", message));
        }
        // With callers told apart, one caller's `tools/list` answer (which
        // the upstream may cut to that caller) must not decide what the
        // others may call: the catalog is the gateway's own listing.
        gate.learn_from_answers = oauth.is_none() && wire.bearer_tokens.is_empty();
        // A catalog learned from the upstream: calls wait until it is known.
        let learned = raw.catalog.is_none() && server.upstream.is_some();
        gate.await_catalog = gate.learn_catalog && learned;
        let endpoint = raw.endpoint.clone().unwrap_or_else(|| "/mcp".to_owned());
        if !endpoint.starts_with('/') || endpoint.contains(['?', '#', ' ']) {
            let message = format!("{endpoint:?} is not a path like /mcp");
            return Err(self.error("endpoint", message));
        }
        let key = |text: &String| SessionKey::parse(text).map_err(|e| e.to_string());
        let session_key = raw.session_key.as_ref().map(key).transpose();
        let tables = raw.route.clone().unwrap_or_default();
        let shorthand = tables.is_empty() || SHORTHAND.iter().any(|k| self.keys.contains_key(*k));
        let mut routes = Vec::new();
        if shorthand {
            if let Some(reserved) = RESERVED.iter().find(|r| **r == endpoint) {
                return Err(self.error("endpoint", format!("{reserved} is the gateway's own")));
            }
            routes.push(RouteSettings {
                path: endpoint.clone(),
                gate: gate.clone(),
                upstream: server.upstream.clone(),
                catalog: raw.catalog.clone(),
                allowed_origins: wire.allowed_origins.clone(),
                oauth: oauth.clone(),
            });
        }
        for table in &tables {
            let route = self.route(table, oauth.as_ref(), !wire.bearer_tokens.is_empty())?;
            if shorthand && route.path == endpoint {
                let key = SHORTHAND.iter().find(|k| self.keys.contains_key(**k));
                let key = key.copied().unwrap_or("endpoint");
                let message = format!(
                    "is set at the top level, which makes the route at {endpoint}, and a [[route]] has that path too: move the key into that [[route]]"
                );
                return Err(self.error(key, message));
            }
            if routes.iter().any(|r: &RouteSettings| r.path == route.path) {
                let message = format!("two [[route]] tables have path {:?}", route.path);
                return Err(self.error("route.path", message));
            }
            routes.push(route);
        }
        if routes.len() > crate::service::metrics::ROUTE_SLOTS {
            let most = crate::service::metrics::ROUTE_SLOTS;
            return Err(self.error("route", format!("at most {most} routes")));
        }
        let first = routes[0].clone();
        // The server frames bodies up to the largest route's limit; each
        // route's gate holds its own.
        server.body_limit = routes
            .iter()
            .map(|r| r.gate.body_limit)
            .max()
            .unwrap_or(server.body_limit);
        server.upstream = first.upstream.clone();
        Ok(Settings {
            server,
            gate: first.gate,
            endpoint: first.path,
            wire,
            catalog: first.catalog,
            bench_noop_route: raw.bench_noop_route.unwrap_or(false),
            oauth: first.oauth,
            session_key: session_key.map_err(|e| self.error("session_key", e))?,
            labelled: !tables.is_empty(),
            routes,
        })
    }

    /// A `[[route]]` table, its keys left out taken from the top level.
    fn route(
        &self,
        table: &RouteRaw,
        oauth: Option<&OAuthConfig>,
        bearer: bool,
    ) -> Checked<RouteSettings> {
        let (raw, path) = (&self.raw, &table.path);
        let bad = |key: &str, message: String| {
            let key = format!("route.{key}");
            self.error(&key, format!("{message} (the route at {path:?})"))
        };
        if !path.starts_with('/') || path.contains(['?', '#', ' ']) {
            return Err(bad("path", format!("{path:?} is not a path like /mcp")));
        }
        if RESERVED.contains(&path.as_str()) || path.starts_with("/.well-known/") {
            return Err(bad(
                "path",
                format!("{path:?} is a path the gateway serves itself"),
            ));
        }
        for (key, value) in [
            (
                "upstream_connect_timeout_ms",
                table.upstream_connect_timeout_ms,
            ),
            (
                "upstream_first_byte_timeout_ms",
                table.upstream_first_byte_timeout_ms,
            ),
            ("upstream_idle_timeout_ms", table.upstream_idle_timeout_ms),
        ] {
            if value.is_some_and(|v| !A_YEAR.0.contains(&(v.min(i64::MAX as u64) as i64))) {
                return Err(bad(key, A_YEAR.1.to_owned()));
            }
        }
        if table.body_limit == Some(0) {
            return Err(bad("body_limit", SOME.1.to_owned()));
        }
        let mut gate = self.gate()?;
        gate.body_limit = table.body_limit.unwrap_or(gate.body_limit);
        gate.learn_catalog = table.learn_catalog.unwrap_or(gate.learn_catalog);
        gate.learn_from_answers = oauth.is_none() && !bearer;
        let upstream = match &table.upstream {
            None => None,
            Some(url) => {
                let mut up =
                    UpstreamConfig::parse(url).map_err(|e| bad("upstream", e.to_string()))?;
                let connect = table
                    .upstream_connect_timeout_ms
                    .or(raw.upstream_connect_timeout_ms);
                up.connect_timeout = ms(connect, up.connect_timeout);
                let first = table
                    .upstream_first_byte_timeout_ms
                    .or(raw.upstream_first_byte_timeout_ms);
                up.first_byte_timeout = ms(first, up.first_byte_timeout);
                let idle = table
                    .upstream_idle_timeout_ms
                    .or(raw.upstream_idle_timeout_ms);
                up.idle_timeout = ms(idle, up.idle_timeout);
                self.trust_ca_file(&mut up)?;
                Some(Arc::new(up))
            }
        };
        gate.await_catalog = gate.learn_catalog && table.catalog.is_none() && upstream.is_some();
        let tool_scopes = table.oauth_tool_scopes.clone().unwrap_or_default();
        if let Some(bad_scope) = tool_scopes.values().flatten().find(|s| !is_scope_token(s)) {
            return Err(bad(
                "oauth_tool_scopes",
                format!("{bad_scope:?} is not a scope"),
            ));
        }
        let oauth = match (oauth, &table.oauth_resource) {
            (None, None) if tool_scopes.is_empty() => None,
            (None, _) => {
                let key = match table.oauth_resource {
                    Some(_) => "oauth_resource",
                    None => "oauth_tool_scopes",
                };
                return Err(bad(key, "needs oauth_issuer".to_owned()));
            }
            (Some(_), None) => {
                return Err(bad(
                    "oauth_resource",
                    "is needed with oauth_issuer".to_owned(),
                ));
            }
            (Some(global), Some(resource)) => {
                if !is_http_url(resource) || resource.contains(['?', '#']) {
                    let message =
                        format!("{resource:?} is not an http:// or https:// URL without a query");
                    return Err(bad("oauth_resource", message));
                }
                let mut config = global.clone();
                config.resource = resource.clone();
                config.tool_scopes = tool_scopes;
                Some(config)
            }
        };
        Ok(RouteSettings {
            path: path.clone(),
            gate,
            upstream,
            catalog: table.catalog.clone(),
            allowed_origins: table
                .allowed_origins
                .clone()
                .or_else(|| raw.allowed_origins.clone())
                .unwrap_or_default(),
            oauth,
        })
    }

    /// `listen`: an address, or a host name and port resolved now.
    fn listen(&self) -> Checked<SocketAddr> {
        let text = self.raw.listen.as_deref().unwrap_or("127.0.0.1:8080");
        let resolved = text.to_socket_addrs().map(|mut all| all.next());
        let Ok(Some(address)) = resolved else {
            let why = resolved.map_or_else(|e| e.to_string(), |_| "no address".to_owned());
            let message = format!("{text:?} is not an address like 127.0.0.1:8080 ({why})");
            return Err(self.error("listen", message));
        };
        if text.parse::<SocketAddr>().is_err() {
            tracing::info!(target: "mcpgate::config", "listen: {text} resolves to {address}, used");
        }
        Ok(address)
    }

    fn server(&self) -> Checked<ServerConfig> {
        let (r, mut s) = (&self.raw, ServerConfig::new(self.listen()?));
        let driver = r.io_driver.as_deref().map(str::parse::<IoDriver>);
        let driver = driver
            .transpose()
            .map_err(|e| self.error("io_driver", e.to_string()))?;
        s.io_driver = driver.unwrap_or_else(IoDriver::default_here);
        s.workers = r.workers.unwrap_or(s.workers);
        s.max_headers = r.max_headers.unwrap_or(s.max_headers);
        s.max_connections = r.max_connections.unwrap_or(s.max_connections);
        s.max_head_bytes = r.max_head_bytes.unwrap_or(s.max_head_bytes);
        s.idle_timeout = ms(r.idle_timeout_ms, s.idle_timeout);
        s.read_timeout = ms(r.read_timeout_ms, s.read_timeout);
        s.shutdown_grace = ms(r.shutdown_grace_ms, s.shutdown_grace);
        s.tls = match (&r.tls_cert, &r.tls_key) {
            (None, None) => None,
            (Some(cert), Some(key)) => {
                let certs = CertResolver::load(cert, key);
                let why = |e: TlsFileError| self.error(e.key(), e.to_string());
                Some(Arc::new(certs.map_err(why)?))
            }
            (Some(_), None) => return Err(self.error("tls_key", "is needed with tls_cert")),
            (None, Some(_)) => return Err(self.error("tls_cert", "is needed with tls_key")),
        };
        Ok(s)
    }

    fn gate(&self) -> Checked<GateConfig> {
        let (r, mut gate) = (&self.raw, GateConfig::default());
        gate.body_limit = r.body_limit.unwrap_or(gate.body_limit);
        gate.max_depth = r.max_depth.unwrap_or(gate.max_depth);
        if let Some(revisions) = &r.revisions {
            let revision = |r: &String| {
                let message = format!("{r:?} is not a revision mcpgate serves");
                Revision::parse(r).ok_or_else(|| self.error("revisions", message))
            };
            gate.revisions = revisions.iter().map(revision).collect::<Result<_, _>>()?;
            if gate.revisions.is_empty() {
                return Err(self.error("revisions", "must name at least one revision"));
            }
        }
        let policy = r.unknown_tools.as_deref().map(str::parse::<UnknownTools>);
        let policy = policy
            .transpose()
            .map_err(|e| self.error("unknown_tools", e.to_string()));
        gate.unknown_tools = policy?;
        let refusal_status = r.refusal_status.as_deref().map(str::parse::<RefusalStatus>);
        let refusal_status = refusal_status
            .transpose()
            .map_err(|e| self.error("refusal_status", e.to_string()))?;
        gate.refusal_status = refusal_status.unwrap_or(gate.refusal_status);
        r.switches.set(&mut gate);
        gate.learn_catalog = r.learn_catalog.unwrap_or(gate.learn_catalog);
        Ok(gate)
    }

    fn upstream(&self) -> Checked<Option<UpstreamConfig>> {
        let Some(url) = &self.raw.upstream else {
            return Ok(None);
        };
        let up = UpstreamConfig::parse(url).map_err(|e| self.error("upstream", e.to_string()));
        let (r, mut up) = (&self.raw, up?);
        up.connect_timeout = ms(r.upstream_connect_timeout_ms, up.connect_timeout);
        up.first_byte_timeout = ms(r.upstream_first_byte_timeout_ms, up.first_byte_timeout);
        up.idle_timeout = ms(r.upstream_idle_timeout_ms, up.idle_timeout);
        let routes = r.route.as_ref().is_some_and(|r| !r.is_empty());
        if r.upstream_ca_file.is_some() && up.tls.is_none() && !routes {
            return Err(self.error("upstream_ca_file", "is for an https:// upstream"));
        }
        self.trust_ca_file(&mut up)?;
        Ok(Some(up))
    }

    /// `upstream_ca_file`, for an `https://` upstream (the top level's or a route's).
    fn trust_ca_file(&self, up: &mut UpstreamConfig) -> Checked<()> {
        let (Some(path), Some(_)) = (&self.raw.upstream_ca_file, &up.tls) else {
            return Ok(());
        };
        let key = "upstream_ca_file";
        let unread = |e: std::io::Error| self.error(key, format!("{}: {e}", path.display()));
        let pem = std::fs::read(path).map_err(unread)?;
        let bad = |e: crate::upstream::tls::UpstreamTlsError| {
            self.error(key, format!("{}: {e}", path.display()))
        };
        let ca = crate::upstream::tls::read_pem_certificates(&pem).map_err(bad)?;
        up.trust(ca).map_err(bad)
    }

    /// The `oauth_*` keys: none without an issuer.
    fn oauth(&self) -> Checked<Option<OAuthConfig>> {
        let raw = &self.raw;
        let Some(issuer) = raw.oauth_issuer.clone() else {
            let others = raw.oauth_jwks_file.is_some() || raw.oauth_jwks_url.is_some();
            return match others || raw.oauth_resource.is_some() {
                true => Err(self.error("oauth_issuer", "is needed by the other oauth_* keys")),
                false => Ok(None),
            };
        };
        self.http_url("oauth_issuer", &issuer, "", true)?;
        let needed = || self.error("oauth_resource", "is needed with oauth_issuer");
        // With `[[route]]` tables alone, each route gives its own.
        let routes_only = raw.route.as_ref().is_some_and(|r| !r.is_empty())
            && !SHORTHAND.iter().any(|k| self.keys.contains_key(*k));
        let resource = match routes_only {
            true => raw.oauth_resource.clone().unwrap_or_default(),
            false => raw.oauth_resource.clone().ok_or_else(needed)?,
        };
        let query = resource.contains(['?', '#']);
        if !routes_only {
            self.http_url("oauth_resource", &resource, " without a query", !query)?;
        }
        let jwks = self.jwks()?;
        let refresh = raw.oauth_jwks_refresh_secs.unwrap_or(300);
        let servers = raw.oauth_authorization_servers.clone().unwrap_or_default();
        for server in &servers {
            self.http_url("oauth_authorization_servers", server, "", true)?;
        }
        let scopes_required = raw.oauth_scopes_required.clone().unwrap_or_default();
        let tool_scopes = raw.oauth_tool_scopes.clone().unwrap_or_default();
        let required = scopes_required.iter().map(|s| ("oauth_scopes_required", s));
        let by_tool = tool_scopes
            .values()
            .flatten()
            .map(|s| ("oauth_tool_scopes", s));
        if let Some((key, bad)) = required.chain(by_tool).find(|(_, s)| !is_scope_token(s)) {
            return Err(self.error(key, format!("{bad:?} is not a scope")));
        }
        Ok(Some(OAuthConfig {
            issuer,
            resource,
            jwks,
            jwks_refresh: Duration::from_secs(refresh),
            authorization_servers: servers,
            scopes_required,
            tool_scopes,
            forward_authorization: raw.oauth_forward_authorization.unwrap_or(false),
            subject_header: self.header("oauth_subject_header", &raw.oauth_subject_header)?,
            scopes_header: self.header("oauth_scopes_header", &raw.oauth_scopes_header)?,
        }))
    }

    /// `oauth_jwks_file` or `oauth_jwks_url`: one of the two.
    fn jwks(&self) -> Checked<JwksSource> {
        let (key, message) = match (&self.raw.oauth_jwks_file, &self.raw.oauth_jwks_url) {
            (Some(path), None) => return Ok(JwksSource::File(path.clone())),
            (None, Some(url)) => {
                self.http_url("oauth_jwks_url", url, "", true)?;
                return Ok(JwksSource::Url(url.clone()));
            }
            (Some(_), Some(_)) => ("oauth_jwks_url", JWKS_BOTH),
            (None, None) => ("oauth_jwks_file", JWKS_NEITHER),
        };
        Err(self.error(key, message))
    }

    /// `text` is an `http://` or `https://` URL with a host, and `also` (`what_else`) holds.
    fn http_url(&self, key: &str, text: &str, what_else: &str, also: bool) -> Checked<()> {
        if also && is_http_url(text) {
            return Ok(());
        }
        let message = format!("{text:?} is not an http:// or https:// URL{what_else}");
        Err(self.error(key, message))
    }

    /// A header the upstream may receive an identity in.
    fn header(&self, key: &str, name: &Option<String>) -> Checked<Option<String>> {
        match name {
            Some(name) if !may_carry_identity(name) => {
                let message = format!("{name:?} is not a header name the gateway may set");
                Err(self.error(key, message))
            }
            _ => Ok(name.clone()),
        }
    }
}
