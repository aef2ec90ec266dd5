//! Learning the catalog from the upstream (ARCHITECTURE.md, "The value gate"): its `tools/list`
//! asked at start and again by its `ttlMs`, or sooner when a call names a
//! tool the catalog lacks ([`Relearn`]), on a thread of its own, off the
//! request path. The listing itself is [`super::fetch`]'s.

use std::sync::Arc;
use std::time::{Duration, Instant};

use super::fetch;
use super::{UpstreamConfig, UpstreamError};
use crate::catalog::{Catalog, CatalogOptions, CatalogSource, Relearn};

/// How often the upstream's catalog is asked for again: its `ttlMs`, held
/// between these bounds; without one, [`DEFAULT_REFRESH`].
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
pub const MAX_REFRESH: Duration = Duration::from_secs(3600);
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(60);

/// The upstream's catalog, registered, and when to ask again.
pub fn learn(
    endpoint: &UpstreamConfig,
    options: &CatalogOptions,
    timeout: Duration,
) -> Result<(Catalog, Duration), UpstreamError> {
    let listed = fetch::list_tools(endpoint, timeout).map_err(UpstreamError::List)?;
    let catalog = Catalog::register(&listed.tools, CatalogSource::Upstream, options);
    let next = listed
        .ttl
        .map_or(DEFAULT_REFRESH, |ttl| ttl.clamp(MIN_REFRESH, MAX_REFRESH));
    Ok((catalog, next))
}

/// Learns the upstream's catalog again and again on a thread of its own,
/// off the request path: after `first` (the previous listing's refresh
/// time), then each listing's own, or sooner when `relearn` asks (a call
/// named a tool the catalog lacks), but never twice within
/// [`MIN_REFRESH`]. A failed attempt keeps the catalog in service and is
/// retried after 1, 2, 4 ... up to 60 seconds. The thread lives as long as
/// the process.
pub fn keep_learning(
    endpoint: UpstreamConfig,
    options: CatalogOptions,
    timeout: Duration,
    first: Duration,
    relearn: Arc<Relearn>,
    install: impl Fn(Catalog) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mcpgate-catalog".into())
        .spawn(move || {
            relearn.register_learner();
            let mut wait = first;
            let mut backoff = Duration::from_secs(1);
            // The caller has just asked (at start).
            let mut last = Instant::now();
            loop {
                relearn.sleep(wait);
                std::thread::sleep(MIN_REFRESH.saturating_sub(last.elapsed()));
                last = Instant::now();
                match learn(&endpoint, &options, timeout) {
                    Ok((catalog, next)) => {
                        catalog.log_in_service("catalog learned from the upstream");
                        install(catalog);
                        wait = next;
                        backoff = Duration::from_secs(1);
                    }
                    Err(reason) => {
                        tracing::warn!(
                            target: "mcpgate::catalog",
                            reason = reason.to_string().as_str(),
                            "the upstream's tools/list could not be read; the catalog in service stays"
                        );
                        wait = backoff;
                        backoff = (backoff * 2).min(Duration::from_secs(60));
                    }
                }
            }
        })
}
