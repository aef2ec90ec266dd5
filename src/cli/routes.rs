//! `serve`'s routes built from the settings, at start and at each SIGHUP:
//! each route's gate and catalog, learner, OAuth resource server and
//! sessions; then swapped in for the requests that start after.

use std::sync::Arc;
use std::time::Duration;

use crate::config::{RouteSettings, Settings};
use crate::gate::Gate;
use crate::service::metrics::Metrics;
use crate::service::session::{SessionKey, Sessions};
use crate::service::wire::WirePolicy;
use crate::service::{McpService, RouteService, Routes};

/// Why routes could not be built: the text for the log or the exit.
#[derive(Debug)]
pub struct BuildError {
    pub message: String,
    /// The exit status at start: 2 for a configuration error.
    pub status: u8,
}

fn config_error(message: String) -> BuildError {
    BuildError { message, status: 2 }
}

/// The routes of `settings`. A route of `previous` with the same path,
/// gate settings and upstream keeps its gate (its learned catalog, its
/// counts and its learner); a catalog file is read again either way.
pub fn build(
    settings: &Settings,
    metrics: &Arc<Metrics>,
    key: &SessionKey,
    previous: Option<&Routes>,
) -> Result<Routes, BuildError> {
    let mut routes: Vec<RouteService> = Vec::with_capacity(settings.routes.len());
    for route in &settings.routes {
        match build_route(settings, route, metrics, key, previous) {
            Ok(route) => routes.push(route),
            Err(error) => {
                // The learners this attempt started end with it.
                let kept = |gate: &Arc<Gate>| {
                    previous.is_some_and(|p| p.routes.iter().any(|r| Arc::ptr_eq(&r.gate, gate)))
                };
                for built in routes.iter().filter(|r| !kept(&r.gate)) {
                    built.gate.relearn().retire();
                }
                return Err(error);
            }
        }
    }
    Ok(Routes {
        routes,
        noop_route: settings.bench_noop_route,
        labelled: settings.labelled,
    })
}

/// The previous route that may hand its gate on to `route`.
fn kept_gate(previous: Option<&Routes>, route: &RouteSettings) -> Option<Arc<Gate>> {
    let old = previous?.routes.iter().find(|r| r.endpoint == route.path)?;
    // Compared as printed: the settings hold no float or map whose text
    // could differ for equal values.
    let same_gate = format!("{:?}", old.gate.config()) == format!("{:?}", route.gate);
    let same_upstream = format!("{:?}", old.upstream) == format!("{:?}", route.upstream);
    (same_gate && same_upstream).then(|| Arc::clone(&old.gate))
}

fn build_route(
    settings: &Settings,
    route: &RouteSettings,
    metrics: &Arc<Metrics>,
    key: &SessionKey,
    previous: Option<&Routes>,
) -> Result<RouteService, BuildError> {
    let path = &route.path;
    let slot = metrics.slot(path).ok_or_else(|| {
        config_error(format!(
            "config key `route.path`: {path:?} is one route path more than the {} a process counts; restart to use it",
            crate::service::metrics::ROUTE_SLOTS
        ))
    })?;
    let kept = kept_gate(previous, route);
    let fresh = kept.is_none();
    let gate = match kept {
        Some(gate) => gate,
        None => Arc::new(Gate::new(route.gate.clone()).map_err(|error| BuildError {
            message: error.to_string(),
            status: 1,
        })?),
    };
    if let Some(file) = &route.catalog {
        match crate::catalog::Catalog::from_file(file, &route.gate.catalog) {
            Ok(catalog) => {
                catalog.log_in_service("catalog loaded");
                gate.set_catalog(catalog);
            }
            Err(error) => {
                let key = if settings.labelled {
                    "route.catalog"
                } else {
                    "catalog"
                };
                return Err(config_error(format!("config key `{key}`: {error}")));
            }
        }
    }
    let learn_from = route
        .upstream
        .clone()
        .filter(|_| route.catalog.is_none() && route.gate.learn_catalog && fresh);
    if let Some(upstream) = learn_from {
        learn(&gate, &upstream, route)?;
    }
    let mut wire = WirePolicy {
        allowed_origins: route.allowed_origins.clone(),
        bearer_tokens: settings.wire.bearer_tokens.clone(),
        oauth: None,
    };
    if let Some(config) = route.oauth.clone() {
        match crate::service::oauth::OAuth::start(config) {
            Ok(oauth) => wire.oauth = Some(Arc::new(oauth)),
            Err(error) => {
                let message = format!("config key `{}`: {}", error.key, error.message);
                return Err(config_error(message));
            }
        }
    }
    // With authentication on, session ids are sealed to their caller and
    // to this route.
    let sessions = (wire.oauth.is_some() || !wire.bearer_tokens.is_empty()).then(|| {
        let issuer = wire.oauth.as_ref().map(|o| o.config.issuer.as_str());
        Sessions::new(key, issuer, &wire.bearer_tokens).on_route(path)
    });
    Ok(RouteService {
        gate,
        endpoint: path.clone(),
        wire,
        metrics: Arc::clone(metrics),
        slot,
        upstream: route.upstream.clone(),
        sessions,
    })
}

/// Without a file, the catalog is the upstream's: asked for now (within
/// the connect timeout and at most 5 s for the answer: an upstream that is
/// slow to come up does not hold the start) and again on its own thread.
fn learn(
    gate: &Arc<Gate>,
    upstream: &Arc<crate::upstream::UpstreamConfig>,
    route: &RouteSettings,
) -> Result<(), BuildError> {
    let timeout = upstream
        .connect_timeout
        .max(Duration::from_secs(5).min(upstream.first_byte_timeout));
    let options = &route.gate.catalog;
    let (first_refresh, listed) = match crate::upstream::learn::learn(upstream, options, timeout) {
        Ok((catalog, next, tools)) => {
            catalog.log_in_service("catalog learned from the upstream");
            gate.set_catalog(catalog);
            (next, Some(tools))
        }
        Err(reason) => {
            tracing::warn!(
                target: "mcpgate::catalog",
                reason = %reason,
                route = %route.path,
                "the upstream's tools/list could not be read; tools/call is refused (503) until it can, or forwarded unchecked with unknown_tools = \"forward\""
            );
            (Duration::from_secs(1), None)
        }
    };
    // The learner holds the gate weakly: it installs nothing once the
    // route is gone, and ends when retired.
    let learner = Arc::downgrade(gate);
    let timeout = upstream.connect_timeout.max(upstream.first_byte_timeout);
    crate::upstream::learn::keep_learning(
        (**upstream).clone(),
        *options,
        timeout,
        first_refresh,
        listed,
        Arc::clone(gate.relearn()),
        move |catalog| {
            if let Some(gate) = learner.upgrade() {
                gate.set_catalog(catalog);
            }
        },
    )
    .map_err(|error| BuildError {
        message: error.to_string(),
        status: 1,
    })?;
    Ok(())
}

/// Ends the learners of `old`'s gates that `new` does not keep.
fn retire_learners(old: &Routes, new: &Routes) {
    for route in &old.routes {
        if !new.routes.iter().any(|r| Arc::ptr_eq(&r.gate, &route.gate)) {
            route.gate.relearn().retire();
        }
    }
}

/// What a reload needs of the start.
pub struct Reloader {
    pub service: Arc<McpService>,
    /// The settings in service.
    pub settings: Settings,
    /// The key drawn at start when none is configured: sessions survive a
    /// reload.
    pub drawn_key: SessionKey,
    /// Reads the settings again, as at start.
    pub resolve: Box<dyn Fn() -> Result<Settings, crate::config::ConfigError> + Send>,
}

impl Reloader {
    /// Reads the configuration again and swaps the routes it makes in; an
    /// invalid one keeps those in service and says why (WARN).
    pub fn reload(&mut self) {
        let settings = match (self.resolve)() {
            Ok(settings) => settings,
            Err(error) => {
                tracing::warn!(%error, "reload refused: the running configuration stays");
                return;
            }
        };
        let key = settings
            .session_key
            .clone()
            .unwrap_or_else(|| self.drawn_key.clone());
        let mut settings = settings;
        if let Err(error) = reload_certificate(&self.settings, &mut settings) {
            tracing::warn!(%error, "reload refused: the running configuration stays");
            return;
        }
        let current = self.service.routes_now();
        let routes = match build(&settings, &self.service.metrics, &key, Some(&current)) {
            Ok(routes) => routes,
            Err(error) => {
                let error = error.message;
                tracing::warn!(%error, "reload refused: the running configuration stays");
                return;
            }
        };
        self.ignored(&settings);
        let old = self.service.swap(routes);
        retire_learners(&old, &self.service.routes_now());
        tracing::info!(
            routes = settings.routes.len(),
            "configuration reloaded: new requests are served under it"
        );
        self.settings = settings;
    }

    /// Logs the changed settings a reload cannot apply.
    fn ignored(&self, new: &Settings) {
        let (old, new) = (&self.settings.server, &new.server);
        let changed = [
            ("listen", old.listen != new.listen),
            ("workers", old.workers != new.workers),
            ("io_driver", old.io_driver != new.io_driver),
            (
                "max_connections",
                old.max_connections != new.max_connections,
            ),
            ("max_headers", old.max_headers != new.max_headers),
            ("max_head_bytes", old.max_head_bytes != new.max_head_bytes),
            ("idle_timeout_ms", old.idle_timeout != new.idle_timeout),
            ("read_timeout_ms", old.read_timeout != new.read_timeout),
            (
                "shutdown_grace_ms",
                old.shutdown_grace != new.shutdown_grace,
            ),
            // Bodies are framed up to the start's largest route limit.
            ("body_limit", new.body_limit > old.body_limit),
        ];
        for (key, _) in changed.iter().filter(|(_, changed)| *changed) {
            tracing::warn!(key, "changed in the configuration; ignored until a restart");
        }
    }
}

/// The listener's certificate from `new`'s `tls_cert` and `tls_key`,
/// loaded into the running resolver (the workers' TLS configurations hold
/// it, so it is kept and `new` takes it). TLS turned on or off waits for a
/// restart.
fn reload_certificate(running: &Settings, new: &mut Settings) -> Result<(), String> {
    match (&running.server.tls, &new.server.tls) {
        (Some(resolver), Some(loaded)) => {
            let (cert, key) = loaded.files();
            resolver.reload(&cert, &key).map_err(|e| e.to_string())?;
            new.server.tls = Some(resolver.clone());
        }
        (None, None) => {}
        (running_tls, _) => {
            let key = "tls_cert";
            let state = if running_tls.is_some() { "on" } else { "off" };
            tracing::warn!(key, "TLS on the listener stays {state} until a restart");
            new.server.tls = running_tls.clone();
        }
    }
    Ok(())
}

/// Reloads on each SIGHUP, on a thread of its own, until the process ends.
pub fn reload_on_sighup(mut reloader: Reloader) -> std::io::Result<()> {
    let mut signals = signal_hook::iterator::Signals::new([signal_hook::consts::SIGHUP])?;
    std::thread::Builder::new()
        .name("mcpgate-reload".into())
        .spawn(move || {
            for _ in signals.forever() {
                tracing::info!("SIGHUP: reloading the configuration");
                reloader.reload();
            }
        })?;
    Ok(())
}
