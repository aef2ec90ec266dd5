//! `/metrics` in Prometheus text format. Every series is a fixed set of
//! atomics: nothing is allocated or locked on the request path.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use crate::classify::Kind;
use crate::gate::Gate;
use crate::protocol::Lane;
use crate::reject::TABLE;

/// Upper bounds of the latency histogram, in seconds.
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

#[derive(Default)]
pub struct Metrics {
    /// MCP messages let through, by lane and kind.
    allowed: [[AtomicU64; KINDS.len()]; 3],
    /// Requests to the MCP endpoint or `/validate`, whatever the outcome.
    requests: AtomicU64,
    latency_buckets: [AtomicU64; LATENCY_BOUNDS.len()],
    latency_count: AtomicU64,
    latency_sum_nanos: AtomicU64,
    open_connections: AtomicU64,
    /// Times a worker reached its share of `max_connections`.
    connection_limit_reached: AtomicU64,
    bytes_in: AtomicU64,
    /// Forwarded answers handed to the answer watch, complete.
    answers_observed: AtomicU64,
    answers_unedited: AtomicU64,
}

impl Metrics {
    pub fn allowed(&self, lane: LaneLabel, kind: Kind) {
        let k = KINDS
            .iter()
            .position(|k| *k == kind)
            .unwrap_or(KINDS.len() - 1);
        self.allowed[lane as usize][k].fetch_add(1, Ordering::Relaxed);
    }

    pub fn request(&self, took: Duration) {
        self.requests.fetch_add(1, Ordering::Relaxed);
        let seconds = took.as_secs_f64();
        if let Some(bucket) = LATENCY_BOUNDS.iter().position(|bound| seconds <= *bound) {
            self.latency_buckets[bucket].fetch_add(1, Ordering::Relaxed);
        }
        self.latency_count.fetch_add(1, Ordering::Relaxed);
        self.latency_sum_nanos
            .fetch_add(took.as_nanos() as u64, Ordering::Relaxed);
    }

    pub fn connection(&self, opened: bool) {
        if opened {
            self.open_connections.fetch_add(1, Ordering::Relaxed);
        } else {
            self.open_connections.fetch_sub(1, Ordering::Relaxed);
        }
    }

    pub fn connection_limit_reached(&self) {
        self.connection_limit_reached
            .fetch_add(1, Ordering::Relaxed);
    }

    pub fn bytes_in(&self, n: usize) {
        self.bytes_in.fetch_add(n as u64, Ordering::Relaxed);
    }

    pub fn answer_observed(&self) {
        self.answers_observed.fetch_add(1, Ordering::Relaxed);
    }

    /// An answer that was to carry the gateway's additions went out as the
    /// upstream sent it (larger than the body limit, or not a result).
    pub fn answer_unedited(&self) {
        self.answers_unedited.fetch_add(1, Ordering::Relaxed);
    }

    /// The exposition text (`text/plain; version=0.0.4`).
    pub fn render(&self, gate: &Gate) -> String {
        let rejections = gate.rejections();
        let catalog = gate.catalog();
        let mut out = String::with_capacity(4096);
        let load = |a: &AtomicU64| a.load(Ordering::Relaxed);
        out.push_str("# HELP mcpgate_allowed_total MCP messages let through, by lane and kind.\n");
        out.push_str("# TYPE mcpgate_allowed_total counter\n");
        for lane in LaneLabel::ALL {
            for (k, kind) in KINDS.iter().enumerate() {
                let _ = writeln!(
                    out,
                    "mcpgate_allowed_total{{lane=\"{}\",kind=\"{}\"}} {}",
                    lane.as_str(),
                    kind.as_str(),
                    load(&self.allowed[lane as usize][k])
                );
            }
        }
        out.push_str(
            "# HELP mcpgate_rejections_total Refusals, by the stage that refused and why.\n",
        );
        out.push_str("# TYPE mcpgate_rejections_total counter\n");
        for (row, count) in rejections.snapshot() {
            let _ = writeln!(
                out,
                "mcpgate_rejections_total{{rejecter=\"{}\",reason=\"{}\",status=\"{}\"}} {count}",
                row.rejecter.as_str(),
                row.name,
                row.status
            );
        }
        out.push_str(
            "# HELP mcpgate_rejection_log_suppressed_total Rejection log lines left out over each reason's budget per second.\n",
        );
        out.push_str("# TYPE mcpgate_rejection_log_suppressed_total counter\n");
        for row in TABLE.iter() {
            let _ = writeln!(
                out,
                "mcpgate_rejection_log_suppressed_total{{reason=\"{}\"}} {}",
                row.name,
                rejections.log_lines_suppressed(row.reason)
            );
        }
        out.push_str("# HELP mcpgate_requests_total Requests to the MCP endpoint and /validate.\n");
        out.push_str("# TYPE mcpgate_requests_total counter\n");
        let _ = writeln!(out, "mcpgate_requests_total {}", load(&self.requests));
        out.push_str(
            "# HELP mcpgate_request_duration_seconds Time from a whole request to its answer.\n",
        );
        out.push_str("# TYPE mcpgate_request_duration_seconds histogram\n");
        let mut cumulative = 0;
        for (bound, bucket) in LATENCY_BOUNDS.iter().zip(&self.latency_buckets) {
            cumulative += load(bucket);
            let _ = writeln!(
                out,
                "mcpgate_request_duration_seconds_bucket{{le=\"{bound}\"}} {cumulative}"
            );
        }
        let count = load(&self.latency_count);
        let _ = writeln!(
            out,
            "mcpgate_request_duration_seconds_bucket{{le=\"+Inf\"}} {count}"
        );
        let _ = writeln!(
            out,
            "mcpgate_request_duration_seconds_sum {}",
            load(&self.latency_sum_nanos) as f64 / 1e9
        );
        let _ = writeln!(out, "mcpgate_request_duration_seconds_count {count}");
        out.push_str("# HELP mcpgate_open_connections Client connections open now.\n");
        out.push_str("# TYPE mcpgate_open_connections gauge\n");
        let _ = writeln!(
            out,
            "mcpgate_open_connections {}",
            load(&self.open_connections)
        );
        out.push_str(
            "# HELP mcpgate_connection_limit_reached_total Times a worker reached its share of max_connections and stopped accepting until a connection closed.\n",
        );
        out.push_str("# TYPE mcpgate_connection_limit_reached_total counter\n");
        let _ = writeln!(
            out,
            "mcpgate_connection_limit_reached_total {}",
            load(&self.connection_limit_reached)
        );
        out.push_str(
            "# HELP mcpgate_catalog_tools Tools of the catalog in service: registered, or refused at registration.\n",
        );
        out.push_str("# TYPE mcpgate_catalog_tools gauge\n");
        let _ = writeln!(
            out,
            "mcpgate_catalog_tools{{state=\"registered\"}} {}",
            catalog.len()
        );
        let _ = writeln!(
            out,
            "mcpgate_catalog_tools{{state=\"refused\"}} {}",
            catalog.refused().len()
        );
        out.push_str(
            "# HELP mcpgate_tool_output_mismatches_total tools/call results whose structuredContent failed the tool's outputSchema (relayed unaltered).\n",
        );
        out.push_str("# TYPE mcpgate_tool_output_mismatches_total counter\n");
        let _ = writeln!(
            out,
            "mcpgate_tool_output_mismatches_total {}",
            gate.watched().output_mismatches()
        );
        out.push_str(
            "# HELP mcpgate_catalogs_learned_total Catalogs taken from tools/list answers passing through.\n",
        );
        out.push_str("# TYPE mcpgate_catalogs_learned_total counter\n");
        let _ = writeln!(
            out,
            "mcpgate_catalogs_learned_total {}",
            gate.watched().catalogs_learned()
        );
        out.push_str("# HELP mcpgate_bytes_in_total Bytes read from clients.\n");
        out.push_str("# TYPE mcpgate_bytes_in_total counter\n");
        let _ = writeln!(out, "mcpgate_bytes_in_total {}", load(&self.bytes_in));
        out.push_str(
            "# HELP mcpgate_answers_observed_total Forwarded tools/list and tools/call answers watched in full.\n",
        );
        out.push_str("# TYPE mcpgate_answers_observed_total counter\n");
        let _ = writeln!(
            out,
            "mcpgate_answers_observed_total {}",
            load(&self.answers_observed)
        );
        out.push_str(
            "# HELP mcpgate_answers_unedited_total Answers relayed without the capability or _meta the gateway adds: over the body limit, or not a result.\n",
        );
        out.push_str("# TYPE mcpgate_answers_unedited_total counter\n");
        let _ = writeln!(
            out,
            "mcpgate_answers_unedited_total {}",
            load(&self.answers_unedited)
        );
        out
    }
}
