//! Rejections: one sender, one table (DESIGN.md §4).
//!
//! Every refusal goes through [`Rejections::send`], which looks up the
//! row, applies the id echo rule (through the classification, never an id
//! passed by the caller), counts the rejection once, logs one line and
//! builds the envelope.

pub mod codes;
pub mod dialect;
pub mod envelope;
pub mod table;

use std::sync::atomic::{AtomicU64, Ordering};

use codes::DataKey;
use envelope::DataValue;
pub use table::{Dialect, Reason, Rejecter, Row, TABLE};

use crate::gate::classify::{Classified, RequestId};

/// A refusal: what the transport sends back.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Rejection {
    pub reason: Reason,
    pub status: u16,
    /// The exact body: a JSON-RPC error envelope.
    pub body: Vec<u8>,
}

impl Rejection {
    pub fn row(&self) -> &'static Row {
        self.reason.row()
    }
    pub fn rejecter(&self) -> Rejecter {
        self.row().rejecter
    }
}

/// The rejection counters (one per table row) and the sender.
pub struct Rejections {
    counts: [AtomicU64; TABLE.len()],
}

impl Default for Rejections {
    fn default() -> Self {
        Self {
            counts: std::array::from_fn(|_| AtomicU64::new(0)),
        }
    }
}

impl Rejections {
    /// Refuses a message. `message` is the one-line cause (`None`: the
    /// condition's default text); `classified` is `None` before the
    /// classify stage has run.
    pub fn send(
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
    /// deliver it). `id` is [`Allowed::id`](crate::gate::Allowed), which
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
        debug_assert!(
            data.iter().all(|(key, _)| row.data.contains(key)),
            "{:?} carries a data key its row does not list",
            reason
        );
        // In release a key off the row is dropped rather than sent.
        let allowed: smallvec::SmallVec<[(DataKey, DataValue<'_>); 4]> = data
            .iter()
            .filter(|(key, _)| row.data.contains(key))
            .copied()
            .collect();
        let message = message.unwrap_or(row.condition.default_message());
        let mut body = Vec::with_capacity(128);
        envelope::write_error(&mut body, id, row.condition, message, &allowed);
        self.record(row);
        Rejection {
            reason,
            status: row.status,
            body,
        }
    }

    /// Refuses a `tools/call` in the tool dialect: a result with
    /// `isError: true` carrying `error` (DESIGN.md §7).
    pub fn send_tool_error(
        &self,
        reason: Reason,
        classified: &Classified<'_>,
        result_type: bool,
        error: &dialect::ToolError<'_>,
    ) -> Rejection {
        let row = reason.row();
        debug_assert_eq!(row.dialect, Dialect::Tool, "{reason:?} answers as an error");
        let mut body = Vec::with_capacity(512);
        dialect::write_tool_error(&mut body, classified.echoed_id(), result_type, error);
        self.record(row);
        Rejection {
            reason,
            status: row.status,
            body,
        }
    }

    /// Counts a rejection and logs its one line.
    fn record(&self, row: &Row) {
        self.counts[row.reason.index()].fetch_add(1, Ordering::Relaxed);
        tracing::info!(
            target: "mcpgate::reject",
            rejecter = row.rejecter.as_str(),
            reason = row.name,
            status = row.status,
            code = row.condition.code(),
            "rejected"
        );
    }

    /// How many times `reason` was sent.
    pub fn count(&self, reason: Reason) -> u64 {
        self.counts[reason.index()].load(Ordering::Relaxed)
    }

    /// Every row with its count, in table order.
    pub fn snapshot(&self) -> impl Iterator<Item = (&'static Row, u64)> + '_ {
        TABLE.iter().map(|row| (row, self.count(row.reason)))
    }
}
