//! Rejections: one sender, one table (ARCHITECTURE.md, "Rejections").
//!
//! Every refusal goes through [`Rejections::send`], which looks up the
//! row, applies the id echo rule (through the classification, never an id
//! passed by the caller), picks the HTTP status from the row and whether an
//! id was echoed ([`Row::status_for`]), counts the rejection once, logs one
//! line and builds the envelope.

pub mod codes;
pub mod dialect;
pub mod envelope;
pub mod normalized;
pub(crate) mod out;
pub mod table;

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::time::Instant;

use bytes::Bytes;
use codes::DataKey;
use envelope::DataValue;
pub use table::{Dialect, Reason, RefusalStatus, RefusalStatusError, Rejecter, Row, TABLE};

use crate::classify::{Classified, RequestId};

/// A refusal: what the transport sends back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    /// Why: the row of the rejection table it was answered by.
    pub reason: Reason,
    /// The HTTP status to answer with.
    pub status: u16,
    /// The exact body: a JSON-RPC error envelope (or, for a tool's
    /// arguments, a tool result carrying one). Written into a buffer the
    /// gate reuses on this thread: keep it as long as needed (it is
    /// reference-counted, cloning it copies nothing), and drop it once
    /// written out, so that the next refusal reuses its bytes.
    pub body: Bytes,
}

#[cfg(feature = "server")]
impl Rejection {
    pub(crate) fn row(&self) -> &'static Row {
        self.reason.row()
    }
    pub(crate) fn rejecter(&self) -> Rejecter {
        self.row().rejecter
    }
}

/// Log lines written per reason in one second; the refusals past it are
/// counted, not logged, so a client sending nothing but refusals cannot
/// fill a disk. The count is written with the next line let through.
pub const LOG_LINES_PER_SECOND: u32 = 10;

/// The rejection counters (one per table row) and the sender.
pub struct Rejections {
    counts: [AtomicU64; TABLE.len()],
    log: [LogBudget; TABLE.len()],
    /// Read, never written, per refusal: the status is decided here.
    refusal_status: RefusalStatus,
}

impl Default for Rejections {
    fn default() -> Self {
        Self::new(RefusalStatus::default())
    }
}

/// One reason's log lines in the current second. Threads racing at a
/// second's turn may let a line or two more through; none is lost from
/// the counts.
#[derive(Default)]
struct LogBudget {
    second: AtomicU64,
    lines: AtomicU32,
    suppressed: AtomicU64,
    suppressed_total: AtomicU64,
}

impl LogBudget {
    /// `Some(n)`: log this one, reporting the `n` suppressed since the last
    /// line; `None`: over the budget, counted as suppressed.
    fn admit(&self, second: u64) -> Option<u64> {
        let current = self.second.load(Ordering::Relaxed);
        if current != second
            && self
                .second
                .compare_exchange(current, second, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
        {
            self.lines.store(0, Ordering::Relaxed);
        }
        if self.lines.fetch_add(1, Ordering::Relaxed) < LOG_LINES_PER_SECOND {
            Some(self.suppressed.swap(0, Ordering::Relaxed))
        } else {
            self.suppressed.fetch_add(1, Ordering::Relaxed);
            self.suppressed_total.fetch_add(1, Ordering::Relaxed);
            None
        }
    }
}

/// The pairs of `data` whose keys `row` lists.
#[cold]
#[inline(never)]
fn keys_on_row<'d>(
    row: &Row,
    data: &[(DataKey, DataValue<'d>)],
) -> smallvec::SmallVec<[(DataKey, DataValue<'d>); 4]> {
    data.iter()
        .filter(|(key, _)| row.data.contains(key))
        .copied()
        .collect()
}

/// Whole seconds since the first refusal of the process.
fn log_second() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs()
}

impl Rejections {
    /// Counters and a sender whose refusals of requests go with the
    /// status `refusal_status` chooses.
    pub fn new(refusal_status: RefusalStatus) -> Self {
        Self {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
            log: std::array::from_fn(|_| LogBudget::default()),
            refusal_status,
        }
    }

    /// Refuses a message. `message` is the one-line cause (`None`: the
    /// condition's default text); `classified` is `None` before the
    /// classify stage has run.
    pub(crate) fn send(
        &self,
        reason: Reason,
        classified: Option<&Classified<'_>>,
        message: Option<&str>,
        data: &[(DataKey, DataValue<'_>)],
    ) -> Rejection {
        self.emit(
            reason,
            classified.and_then(Classified::echoed_id),
            message,
            data,
        )
    }

    /// Refuses a message the gate had allowed (the forwarder could not
    /// deliver it). `id` is the allowed message's (the gate's `Allowed::id`), which
    /// the echo rule already decided.
    pub fn send_allowed(
        &self,
        reason: Reason,
        id: Option<&RequestId>,
        message: Option<&str>,
    ) -> Rejection {
        self.emit(reason, id, message, &[])
    }

    fn emit(
        &self,
        reason: Reason,
        id: Option<&RequestId>,
        message: Option<&str>,
        data: &[(DataKey, DataValue<'_>)],
    ) -> Rejection {
        let row = reason.row();
        debug_assert_eq!(row.dialect, Dialect::Error, "{reason:?} answers as a tool");
        let on_row = data.iter().all(|(key, _)| row.data.contains(key));
        debug_assert!(
            on_row,
            "{reason:?} carries a data key its row does not list"
        );
        // In release a key off the row is dropped rather than sent (the
        // pairs copied out of line: every caller's keys are on its row).
        let kept;
        let data = if on_row {
            data
        } else {
            kept = keys_on_row(row, data);
            &kept[..]
        };
        let message = message.unwrap_or(row.condition.default_message());
        let body = out::answer(|out| envelope::write_error(out, id, row.condition, message, data));
        self.record(row);
        Rejection {
            reason,
            status: row.status_for(id.is_some(), self.refusal_status),
            body,
        }
    }

    /// Refuses a `tools/call` in the tool dialect: a result with
    /// `isError: true` carrying `error` (ARCHITECTURE.md, "The value gate").
    pub(crate) fn send_tool_error(
        &self,
        reason: Reason,
        classified: &Classified<'_>,
        result_type: bool,
        error: &dialect::ToolError<'_>,
    ) -> Rejection {
        let row = reason.row();
        debug_assert_eq!(row.dialect, Dialect::Tool, "{reason:?} answers as an error");
        let body = out::answer(|out| {
            dialect::write_tool_error(out, classified.echoed_id(), result_type, error);
        });
        self.record(row);
        Rejection {
            reason,
            status: row.status,
            body,
        }
    }

    /// Counts a rejection and logs its one line, within the reason's
    /// budget of [`LOG_LINES_PER_SECOND`].
    fn record(&self, row: &Row) {
        let index = row.reason.index();
        self.counts[index].fetch_add(1, Ordering::Relaxed);
        if !tracing::enabled!(target: "mcpgate::reject", tracing::Level::INFO) {
            return;
        }
        let Some(suppressed) = self.log[index].admit(log_second()) else {
            return;
        };
        tracing::info!(
            target: "mcpgate::reject",
            rejecter = row.rejecter.as_str(),
            reason = row.name,
            status = row.status,
            code = row.condition.code(),
            suppressed,
            "rejected"
        );
    }

    /// How many of `reason`'s log lines were left out over the budget.
    pub fn log_lines_suppressed(&self, reason: Reason) -> u64 {
        self.log[reason.index()]
            .suppressed_total
            .load(Ordering::Relaxed)
    }

    /// How many times `reason` was sent.
    pub fn count(&self, reason: Reason) -> u64 {
        self.counts[reason.index()].load(Ordering::Relaxed)
    }

    /// Every row with its count, in table order.
    #[cfg(feature = "server")]
    pub(crate) fn snapshot(&self) -> impl Iterator<Item = (&'static Row, u64)> + '_ {
        TABLE.iter().map(|row| (row, self.count(row.reason)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_reason_logs_its_budget_each_second_and_reports_what_it_left_out() {
        let budget = LogBudget::default();
        for _ in 0..LOG_LINES_PER_SECOND {
            assert_eq!(budget.admit(7), Some(0));
        }
        for _ in 0..25 {
            assert_eq!(budget.admit(7), None);
        }
        assert_eq!(budget.admit(8), Some(25), "the next second reports them");
        assert_eq!(budget.admit(8), Some(0));
        assert_eq!(budget.suppressed_total.load(Ordering::Relaxed), 25);
    }
}
