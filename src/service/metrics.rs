//! `/metrics`, encoded by `prometheus-client`: OpenMetrics when the
//! scraper's `Accept` asks for it, the Prometheus text format (0.0.4)
//! otherwise.
//!
//! Each worker thread counts into cells of its own, which only it writes
//! (a load and a store, never a read-modify-write another core contends
//! for); a scrape sums every worker's cells into the families it encodes.
//! Nothing is allocated or locked on the request path: a thread's cells
//! are registered once, at its first count.

use std::cell::RefCell;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::ThreadId;
use std::time::Duration;

use prometheus_client::collector::Collector;
use prometheus_client::encoding::{DescriptorEncoder, EncodeLabelSet, EncodeMetric};
use prometheus_client::metrics::MetricType;
use prometheus_client::metrics::counter::ConstCounter;
use prometheus_client::metrics::gauge::ConstGauge;
use prometheus_client::registry::{Registry, Unit};

use crate::classify::Kind;
use crate::gate::Gate;
use crate::protocol::Lane;
use crate::reject::TABLE;

/// Upper bounds of the latency histogram, in seconds (then `+Inf`).
const LATENCY_BOUNDS: [f64; 12] = [
    0.000_005, 0.000_01, 0.000_025, 0.000_05, 0.000_1, 0.000_25, 0.000_5, 0.001, 0.002_5, 0.005,
    0.01, 0.05,
];

const KINDS: [Kind; 6] = [
    Kind::Request,
    Kind::Notification,
    Kind::Result,
    Kind::Error,
    Kind::UnidentifiedRequest,
    Kind::Unknown,
];

/// The content type of the Prometheus text format.
pub const TEXT_CONTENT_TYPE: &str = "text/plain; version=0.0.4";
/// The content type of OpenMetrics text.
pub const OPENMETRICS_CONTENT_TYPE: &str =
    "application/openmetrics-text; version=1.0.0; charset=utf-8";

/// The lane a request was counted under: none when it was refused before
/// a lane was chosen.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LaneLabel {
    Modern,
    Legacy,
    None,
}

impl LaneLabel {
    const ALL: [LaneLabel; 3] = [LaneLabel::Modern, LaneLabel::Legacy, LaneLabel::None];

    fn as_str(self) -> &'static str {
        match self {
            LaneLabel::Modern => "modern",
            LaneLabel::Legacy => "legacy",
            LaneLabel::None => "none",
        }
    }
}

impl From<Lane> for LaneLabel {
    fn from(lane: Lane) -> Self {
        match lane {
            Lane::Modern => LaneLabel::Modern,
            Lane::Legacy => LaneLabel::Legacy,
        }
    }
}

/// The most route paths one process counts under, reloads included: each
/// path keeps its cells for the process's life, so that its counters
/// never go back.
pub const ROUTE_SLOTS: usize = 32;
const _: () = assert!(ROUTE_SLOTS.is_power_of_two());

/// One route's counts in a worker's cells.
#[derive(Default)]
struct RouteCells {
    /// MCP messages let through, by lane and kind.
    allowed: [[AtomicU64; KINDS.len()]; 3],
    /// Requests to the MCP endpoint or `/validate` by latency bucket, the
    /// last past every bound: together, the requests.
    latency_buckets: [AtomicU64; LATENCY_BOUNDS.len() + 1],
    latency_sum_nanos: AtomicU64,
}

/// One worker's counts. Only its thread writes them; a scrape reads them
/// from another. Aligned so that two workers' cells never share a cache
/// line.
#[derive(Default)]
#[repr(align(128))]
struct Cells {
    /// By route slot ([`Metrics::slot`]).
    routes: [RouteCells; ROUTE_SLOTS],
    /// Connections this worker opened and has not closed (its own closes
    /// its own: never below zero).
    open_connections: AtomicI64,
    /// Times the worker reached its share of `max_connections`.
    connection_limit_reached: AtomicU64,
    bytes_in: AtomicU64,
    /// Forwarded answers handed to the answer watch, complete.
    answers_observed: AtomicU64,
    answers_unedited: AtomicU64,
}

/// Adds `n` to a cell only the calling thread writes: a plain load and
/// store, so no locked instruction and no cache line taken from another
/// core.
#[inline]
fn add(cell: &AtomicU64, n: u64) {
    cell.store(
        cell.load(Ordering::Relaxed).wrapping_add(n),
        Ordering::Relaxed,
    );
}

/// Tells the [`Metrics`] apart, for a thread's cached cells.
static NEXT_ID: AtomicU64 = AtomicU64::new(0);

thread_local! {
    /// The cells this thread counts into, and whose [`Metrics`] they
    /// belong to.
    static MINE: RefCell<Option<(u64, Arc<Cells>)>> = const { RefCell::new(None) };
}

pub struct Metrics {
    id: u64,
    /// Every thread's cells, by the thread that writes them.
    workers: Mutex<Vec<(ThreadId, Arc<Cells>)>>,
    /// The route path of each slot taken.
    slots: Mutex<Vec<String>>,
}

impl Default for Metrics {
    fn default() -> Self {
        Metrics {
            id: NEXT_ID.fetch_add(1, Ordering::Relaxed),
            workers: Mutex::new(Vec::new()),
            slots: Mutex::new(Vec::new()),
        }
    }
}

/// One route's part of a scrape: its label, its gate (rejections, the
/// catalog), and its cells.
pub struct RouteCounts<'a> {
    pub label: &'a str,
    pub gate: &'a Gate,
    pub slot: usize,
}

impl Metrics {
    /// The cells of the route at `path`: the same slot for the same path
    /// across reloads; `None` once [`ROUTE_SLOTS`] paths have been taken.
    pub fn slot(&self, path: &str) -> Option<usize> {
        let mut slots = self.slots.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(slot) = slots.iter().position(|p| p == path) {
            return Some(slot);
        }
        if slots.len() == ROUTE_SLOTS {
            return None;
        }
        slots.push(path.to_owned());
        Some(slots.len() - 1)
    }

    /// Counts into this thread's cells.
    #[inline]
    fn with(&self, count: impl FnOnce(&Cells)) {
        MINE.with(|mine| {
            let mut mine = mine.borrow_mut();
            match &*mine {
                Some((id, cells)) if *id == self.id => count(cells),
                _ => {
                    let cells = self.register();
                    count(&cells);
                    *mine = Some((self.id, cells));
                }
            }
        });
    }

    /// This thread's cells, made at its first count (or found again when
    /// it counted for another [`Metrics`] since).
    #[cold]
    #[inline(never)]
    fn register(&self) -> Arc<Cells> {
        let me = std::thread::current().id();
        let mut workers = self.workers.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, cells)) = workers.iter().find(|(thread, _)| *thread == me) {
            return Arc::clone(cells);
        }
        let cells = Arc::new(Cells::default());
        workers.push((me, Arc::clone(&cells)));
        cells
    }

    pub fn allowed(&self, slot: usize, lane: LaneLabel, kind: Kind) {
        let k = KINDS
            .iter()
            .position(|k| *k == kind)
            .unwrap_or(KINDS.len() - 1);
        // `%`: a slot is below `ROUTE_SLOTS` already; no bounds check.
        self.with(|cells| {
            add(
                &cells.routes[slot % ROUTE_SLOTS].allowed[lane as usize][k],
                1,
            )
        });
    }

    pub fn request(&self, slot: usize, took: Duration) {
        let seconds = took.as_secs_f64();
        let bucket = LATENCY_BOUNDS
            .iter()
            .position(|bound| seconds <= *bound)
            .unwrap_or(LATENCY_BOUNDS.len());
        self.with(|cells| {
            let cells = &cells.routes[slot % ROUTE_SLOTS];
            add(&cells.latency_buckets[bucket], 1);
            add(&cells.latency_sum_nanos, took.as_nanos() as u64);
        });
    }

    pub fn connection(&self, opened: bool) {
        let by = if opened { 1 } else { -1 };
        self.with(|cells| {
            let open = &cells.open_connections;
            open.store(open.load(Ordering::Relaxed) + by, Ordering::Relaxed);
        });
    }

    pub fn connection_limit_reached(&self) {
        self.with(|cells| add(&cells.connection_limit_reached, 1));
    }

    pub fn bytes_in(&self, n: usize) {
        self.with(|cells| add(&cells.bytes_in, n as u64));
    }

    pub fn answer_observed(&self) {
        self.with(|cells| add(&cells.answers_observed, 1));
    }

    /// An answer that was to carry the gateway's additions went out as the
    /// upstream sent it (larger than the body limit, or not a result).
    pub fn answer_unedited(&self) {
        self.with(|cells| add(&cells.answers_unedited, 1));
    }

    /// Every worker's counts summed, with each route's gate's own.
    fn scrape(&self, routes: &[RouteCounts<'_>], labelled: bool) -> Scrape {
        let mut scrape = Scrape {
            labelled,
            routes: routes
                .iter()
                .map(|route| RouteScrape {
                    label: route.label.to_owned(),
                    allowed: [[0; KINDS.len()]; 3],
                    rejections: [0; TABLE.len()],
                    log_lines_suppressed: [0; TABLE.len()],
                    latency_buckets: [0; LATENCY_BOUNDS.len() + 1],
                    latency_sum_nanos: 0,
                    catalog_registered: 0,
                    catalog_refused: 0,
                    output_mismatches: route.gate.watched().output_mismatches(),
                    catalogs_learned: route.gate.watched().catalogs_learned(),
                })
                .collect(),
            open_connections: 0,
            connection_limit_reached: 0,
            bytes_in: 0,
            answers_observed: 0,
            answers_unedited: 0,
        };
        let sum = |total: &mut u64, cell: &AtomicU64| {
            *total = total.wrapping_add(cell.load(Ordering::Relaxed));
        };
        for (_, cells) in self
            .workers
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .iter()
        {
            for (route, counts) in scrape.routes.iter_mut().zip(routes) {
                let cells = &cells.routes[counts.slot];
                for (totals, row) in route.allowed.iter_mut().zip(&cells.allowed) {
                    for (total, cell) in totals.iter_mut().zip(row) {
                        sum(total, cell);
                    }
                }
                for (total, cell) in route.latency_buckets.iter_mut().zip(&cells.latency_buckets) {
                    sum(total, cell);
                }
                sum(&mut route.latency_sum_nanos, &cells.latency_sum_nanos);
            }
            scrape.open_connections += cells.open_connections.load(Ordering::Relaxed);
            sum(
                &mut scrape.connection_limit_reached,
                &cells.connection_limit_reached,
            );
            sum(&mut scrape.bytes_in, &cells.bytes_in);
            sum(&mut scrape.answers_observed, &cells.answers_observed);
            sum(&mut scrape.answers_unedited, &cells.answers_unedited);
        }
        for (route, counts) in scrape.routes.iter_mut().zip(routes) {
            let rejections = counts.gate.rejections();
            for (i, (row, count)) in rejections.snapshot().enumerate() {
                route.rejections[i] = count;
                route.log_lines_suppressed[i] = rejections.log_lines_suppressed(row.reason);
            }
            let catalog = counts.gate.catalog();
            route.catalog_registered = catalog.len() as u64;
            route.catalog_refused = catalog.refused().len() as u64;
        }
        scrape
    }

    /// The exposition, OpenMetrics or not, with its content type;
    /// `labelled`: each route's series carry its `route` label.
    pub fn render(
        &self,
        routes: &[RouteCounts<'_>],
        labelled: bool,
        openmetrics: bool,
    ) -> (String, &'static str) {
        let mut registry = Registry::with_prefix("mcpgate");
        registry.register_collector(Box::new(self.scrape(routes, labelled)));
        let mut out = String::with_capacity(8192);
        // Writing into a `String` cannot fail.
        if openmetrics {
            let _ = prometheus_client::encoding::text::encode(&mut out, &registry);
            (out, OPENMETRICS_CONTENT_TYPE)
        } else {
            let _ = prometheus_client::encoding::prometheus_text::encode(&mut out, &registry);
            (out, TEXT_CONTENT_TYPE)
        }
    }
}

/// Whether an `Accept` value asks for OpenMetrics (as Prometheus's does,
/// ahead of the text format): a range naming it, not at `q=0`.
pub fn wants_openmetrics(accept: Option<&[u8]>) -> bool {
    let Some(accept) = accept else {
        return false;
    };
    accept.split(|&b| b == b',').any(|range| {
        let mut parts = range.split(|&b| b == b';').map(<[u8]>::trim_ascii);
        let named = parts
            .next()
            .is_some_and(|media| media.eq_ignore_ascii_case(b"application/openmetrics-text"));
        let refused = parts.any(|param| {
            param.len() > 2
                && param[..2].eq_ignore_ascii_case(b"q=")
                && std::str::from_utf8(&param[2..])
                    .ok()
                    .and_then(|q| q.trim().parse::<f64>().ok())
                    == Some(0.0)
        });
        named && !refused
    })
}

/// One scrape's sums, encoded as the families of `/metrics` in their
/// order. Names are given without the `_total` a counter's samples take:
/// the encoder adds it.
#[derive(Debug)]
struct Scrape {
    /// Each route's series carry a `route` label.
    labelled: bool,
    routes: Vec<RouteScrape>,
    open_connections: i64,
    connection_limit_reached: u64,
    bytes_in: u64,
    answers_observed: u64,
    answers_unedited: u64,
}

/// One route's sums.
#[derive(Debug)]
struct RouteScrape {
    label: String,
    allowed: [[u64; KINDS.len()]; 3],
    /// In table order.
    rejections: [u64; TABLE.len()],
    log_lines_suppressed: [u64; TABLE.len()],
    latency_buckets: [u64; LATENCY_BOUNDS.len() + 1],
    latency_sum_nanos: u64,
    catalog_registered: u64,
    catalog_refused: u64,
    output_mismatches: u64,
    catalogs_learned: u64,
}

/// The latency histogram from summed buckets (`prometheus-client`'s own
/// histogram is one set of atomics observed into, not a sum).
#[derive(Debug)]
struct Latency<'s>(&'s RouteScrape);

impl Latency<'_> {
    fn encode_into(
        &self,
        mut encoder: prometheus_client::encoding::MetricEncoder,
    ) -> Result<(), std::fmt::Error> {
        let scrape = self.0;
        let bounds = LATENCY_BOUNDS.iter().copied().chain([f64::INFINITY]);
        let buckets: Vec<(f64, u64)> = bounds.zip(scrape.latency_buckets).collect();
        let count = scrape.latency_buckets.iter().sum();
        encoder.encode_histogram::<prometheus_client::encoding::NoLabelSet>(
            scrape.latency_sum_nanos as f64 / 1e9,
            count,
            &buckets,
            None,
        )
    }
}

/// A family's labels, with the route's after them when labelled.
#[derive(Debug)]
struct WithRoute<'a, L> {
    labels: L,
    route: Option<&'a str>,
}

impl<L: EncodeLabelSet> EncodeLabelSet for WithRoute<'_, L> {
    fn encode(
        &self,
        encoder: &mut prometheus_client::encoding::LabelSetEncoder,
    ) -> Result<(), std::fmt::Error> {
        self.labels.encode(encoder)?;
        match self.route {
            Some(route) => [("route", route)].encode(encoder),
            None => Ok(()),
        }
    }
}

/// A counter family of one series.
fn counter(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    value: u64,
) -> Result<(), std::fmt::Error> {
    let family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    ConstCounter::new(value).encode(family)
}

/// A counter family of one series per label set.
fn counters<L: EncodeLabelSet>(
    encoder: &mut DescriptorEncoder,
    name: &str,
    help: &str,
    series: impl Iterator<Item = (L, u64)>,
) -> Result<(), std::fmt::Error> {
    let mut family = encoder.encode_descriptor(name, help, None, MetricType::Counter)?;
    for (labels, value) in series {
        ConstCounter::new(value).encode(family.encode_family(&labels)?)?;
    }
    Ok(())
}

impl Scrape {
    /// Each route with the `route` label its series carry (none when
    /// unlabelled).
    fn each(&self) -> impl Iterator<Item = (&RouteScrape, Option<&str>)> + Clone {
        let labelled = self.labelled;
        self.routes
            .iter()
            .map(move |r| (r, labelled.then_some(r.label.as_str())))
    }
}

impl Collector for Scrape {
    fn encode(&self, mut encoder: DescriptorEncoder) -> Result<(), std::fmt::Error> {
        let allowed = self.each().flat_map(|(route, label)| {
            LaneLabel::ALL.iter().flat_map(move |lane| {
                let counts = route.allowed[*lane as usize];
                KINDS.iter().zip(counts).map(move |(kind, value)| {
                    let labels = [("lane", lane.as_str()), ("kind", kind.as_str())];
                    (
                        WithRoute {
                            labels,
                            route: label,
                        },
                        value,
                    )
                })
            })
        });
        counters(
            &mut encoder,
            "allowed",
            "MCP messages let through, by lane and kind.",
            allowed,
        )?;
        let rejections = self.each().flat_map(|(route, label)| {
            TABLE.iter().zip(route.rejections).map(move |(row, value)| {
                let labels = (
                    [("rejecter", row.rejecter.as_str()), ("reason", row.name)],
                    [("status", row.status)],
                );
                (
                    WithRoute {
                        labels,
                        route: label,
                    },
                    value,
                )
            })
        });
        counters(
            &mut encoder,
            "rejections",
            "Refusals, by the stage that refused and why.",
            rejections,
        )?;
        let suppressed = self.each().flat_map(|(route, label)| {
            TABLE
                .iter()
                .zip(route.log_lines_suppressed)
                .map(move |(row, value)| {
                    let labels = [("reason", row.name)];
                    (
                        WithRoute {
                            labels,
                            route: label,
                        },
                        value,
                    )
                })
        });
        counters(
            &mut encoder,
            "rejection_log_suppressed",
            "Rejection log lines left out over each reason's budget per second.",
            suppressed,
        )?;

        let requests = self.each().map(|(route, label)| {
            let labels: [(&str, &str); 0] = [];
            let value = route.latency_buckets.iter().sum();
            (
                WithRoute {
                    labels,
                    route: label,
                },
                value,
            )
        });
        counters(
            &mut encoder,
            "requests",
            "Requests to the MCP endpoint and /validate.",
            requests,
        )?;

        let mut family = encoder.encode_descriptor(
            "request_duration",
            "Time from a whole request to its answer.",
            Some(&Unit::Seconds),
            MetricType::Histogram,
        )?;
        match (self.labelled, self.routes.first()) {
            (false, Some(route)) => Latency(route).encode_into(family)?,
            _ => {
                for route in &self.routes {
                    let labels = [("route", route.label.as_str())];
                    Latency(route).encode_into(family.encode_family(&labels)?)?;
                }
            }
        }

        let family = encoder.encode_descriptor(
            "open_connections",
            "Client connections open now.",
            None,
            MetricType::Gauge,
        )?;
        ConstGauge::new(self.open_connections.max(0)).encode(family)?;

        counter(
            &mut encoder,
            "connection_limit_reached",
            "Times a worker reached its share of max_connections and stopped accepting until a connection closed.",
            self.connection_limit_reached,
        )?;

        let mut family = encoder.encode_descriptor(
            "catalog_tools",
            "Tools of the catalog in service: registered, or refused at registration.",
            None,
            MetricType::Gauge,
        )?;
        for (route, label) in self.each() {
            for (state, value) in [
                ("registered", route.catalog_registered),
                ("refused", route.catalog_refused),
            ] {
                let labels = WithRoute {
                    labels: [("state", state)],
                    route: label,
                };
                ConstGauge::new(value as i64).encode(family.encode_family(&labels)?)?;
            }
        }

        let mismatches = self.each().map(|(route, label)| {
            let labels: [(&str, &str); 0] = [];
            (
                WithRoute {
                    labels,
                    route: label,
                },
                route.output_mismatches,
            )
        });
        counters(
            &mut encoder,
            "tool_output_mismatches",
            "tools/call results whose structuredContent failed the tool's outputSchema (relayed unaltered).",
            mismatches,
        )?;
        let learned = self.each().map(|(route, label)| {
            let labels: [(&str, &str); 0] = [];
            (
                WithRoute {
                    labels,
                    route: label,
                },
                route.catalogs_learned,
            )
        });
        counters(
            &mut encoder,
            "catalogs_learned",
            "Catalogs taken from tools/list answers passing through.",
            learned,
        )?;
        counter(
            &mut encoder,
            "bytes_in",
            "Bytes read from clients.",
            self.bytes_in,
        )?;
        counter(
            &mut encoder,
            "answers_observed",
            "Forwarded tools/list and tools/call answers watched in full.",
            self.answers_observed,
        )?;
        counter(
            &mut encoder,
            "answers_unedited",
            "Answers relayed without the capability or _meta the gateway adds: over the body limit, or not a result.",
            self.answers_unedited,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::gate::GateConfig;

    fn one_route(gate: &Gate) -> [RouteCounts<'_>; 1] {
        [RouteCounts {
            label: "/mcp",
            gate,
            slot: 0,
        }]
    }

    fn series(text: &str, name: &str) -> Option<u64> {
        text.lines()
            .find_map(|line| line.strip_prefix(name)?.strip_prefix(' ')?.parse().ok())
    }

    #[test]
    fn the_workers_counts_are_summed_at_a_scrape() {
        let gate = Gate::new(GateConfig::default()).unwrap();
        let metrics = Metrics::default();
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..100 {
                        metrics.allowed(0, LaneLabel::Modern, Kind::Request);
                        metrics.request(0, Duration::from_micros(3));
                    }
                    metrics.request(0, Duration::from_secs(1));
                    metrics.connection(true);
                    metrics.bytes_in(10);
                });
            }
        });
        metrics.connection(true);
        metrics.connection(false);
        assert_eq!(
            metrics.workers.lock().unwrap().len(),
            4,
            "one set of cells a thread"
        );
        let (text, content_type) = metrics.render(&one_route(&gate), false, false);
        assert_eq!(content_type, TEXT_CONTENT_TYPE);
        for (name, value) in [
            (
                "mcpgate_allowed_total{lane=\"modern\",kind=\"request\"}",
                300,
            ),
            ("mcpgate_allowed_total{lane=\"legacy\",kind=\"request\"}", 0),
            ("mcpgate_requests_total", 303),
            ("mcpgate_request_duration_seconds_count", 303),
            ("mcpgate_request_duration_seconds_bucket{le=\"5e-06\"}", 300),
            ("mcpgate_request_duration_seconds_bucket{le=\"0.05\"}", 300),
            ("mcpgate_request_duration_seconds_bucket{le=\"+Inf\"}", 303),
            ("mcpgate_open_connections", 3),
            ("mcpgate_bytes_in_total", 30),
        ] {
            assert_eq!(series(&text, name), Some(value), "{name}");
        }
        assert!(text.contains("# TYPE mcpgate_requests_total counter\n"));
        assert!(!text.contains("# EOF"));
    }

    #[test]
    fn openmetrics_names_the_counter_families_without_total_and_ends_with_eof() {
        let gate = Gate::new(GateConfig::default()).unwrap();
        let metrics = Metrics::default();
        metrics.request(0, Duration::from_millis(2));
        let (text, content_type) = metrics.render(&one_route(&gate), false, true);
        assert_eq!(content_type, OPENMETRICS_CONTENT_TYPE);
        assert!(text.contains("# TYPE mcpgate_requests counter\n"));
        assert_eq!(series(&text, "mcpgate_requests_total"), Some(1));
        assert!(text.contains("# UNIT mcpgate_request_duration_seconds seconds\n"));
        assert_eq!(
            series(
                &text,
                "mcpgate_request_duration_seconds_bucket{le=\"0.0025\"}"
            ),
            Some(1)
        );
        assert_eq!(
            series(
                &text,
                "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unknown_path\",status=\"404\"}"
            ),
            Some(0)
        );
        assert!(text.ends_with("# EOF\n"));
    }

    #[test]
    fn a_thread_counting_for_two_metrics_keeps_their_counts_apart() {
        let gate = Gate::new(GateConfig::default()).unwrap();
        let (one, two) = (Metrics::default(), Metrics::default());
        one.bytes_in(1);
        two.bytes_in(2);
        one.bytes_in(4);
        assert_eq!(one.workers.lock().unwrap().len(), 1);
        assert_eq!(
            series(
                &one.render(&one_route(&gate), false, false).0,
                "mcpgate_bytes_in_total"
            ),
            Some(5)
        );
        assert_eq!(
            series(
                &two.render(&one_route(&gate), false, false).0,
                "mcpgate_bytes_in_total"
            ),
            Some(2)
        );
    }

    #[test]
    fn openmetrics_is_served_to_an_accept_that_names_it() {
        let prometheus = b"application/openmetrics-text;version=1.0.0,application/openmetrics-text;version=0.0.1;q=0.75,text/plain;version=0.0.4;q=0.5,*/*;q=0.1";
        assert!(wants_openmetrics(Some(prometheus)));
        assert!(wants_openmetrics(Some(b"Application/OpenMetrics-Text")));
        assert!(!wants_openmetrics(Some(
            b"application/openmetrics-text; q=0"
        )));
        assert!(!wants_openmetrics(Some(b"text/plain;version=0.0.4")));
        assert!(!wants_openmetrics(Some(b"*/*")));
        assert!(!wants_openmetrics(None));
    }

    #[test]
    fn each_route_counts_apart_under_its_label_when_labelled() {
        let (github, files) = (
            Gate::new(GateConfig::default()).unwrap(),
            Gate::new(GateConfig::default()).unwrap(),
        );
        let metrics = Metrics::default();
        let (a, b) = (
            metrics.slot("/github").unwrap(),
            metrics.slot("/files").unwrap(),
        );
        assert_eq!(metrics.slot("/github"), Some(a), "a path keeps its slot");
        metrics.allowed(a, LaneLabel::Modern, Kind::Request);
        metrics.request(a, Duration::from_micros(3));
        metrics.request(b, Duration::from_micros(3));
        metrics.request(b, Duration::from_micros(3));
        let routes = [
            RouteCounts {
                label: "/github",
                gate: &github,
                slot: a,
            },
            RouteCounts {
                label: "/files",
                gate: &files,
                slot: b,
            },
        ];
        let (text, _) = metrics.render(&routes, true, false);
        for (name, value) in [
            (
                "mcpgate_allowed_total{lane=\"modern\",kind=\"request\",route=\"/github\"}",
                1,
            ),
            (
                "mcpgate_allowed_total{lane=\"modern\",kind=\"request\",route=\"/files\"}",
                0,
            ),
            ("mcpgate_requests_total{route=\"/github\"}", 1),
            ("mcpgate_requests_total{route=\"/files\"}", 2),
            (
                "mcpgate_request_duration_seconds_count{route=\"/files\"}",
                2,
            ),
            (
                "mcpgate_rejections_total{rejecter=\"wire\",reason=\"unknown_path\",status=\"404\",route=\"/files\"}",
                0,
            ),
        ] {
            assert_eq!(series(&text, name), Some(value), "{name}\n{text}");
        }
        // Unlabelled, the one route's series are those of a gateway
        // without routes.
        let (text, _) = metrics.render(&routes[..1], false, false);
        assert_eq!(series(&text, "mcpgate_requests_total"), Some(1));
        assert!(!text.contains("route="));
    }

    #[test]
    fn route_slots_run_out_after_their_number_of_paths() {
        let metrics = Metrics::default();
        for i in 0..ROUTE_SLOTS {
            assert_eq!(metrics.slot(&format!("/r{i}")), Some(i));
        }
        assert_eq!(metrics.slot("/one-more"), None);
        assert_eq!(metrics.slot("/r3"), Some(3));
    }
}
