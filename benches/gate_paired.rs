//! `gate/tools-call/search_orders/paired`: the valid call's check and its
//! baseline (the same two as in the `gate` bench), timed in alternating
//! blocks, and the median of the per-pair ratios.
//!
//! Why beside criterion: criterion times the check and the baseline
//! seconds apart, so on a shared machine a slow spell that hits one of
//! them moves their ratio by more than the differences measured. Here
//! each pair of blocks runs back to back, in alternating order, so a spell
//! hits both sides of a pair about equally; the median of the pairs'
//! ratios is what the comparison "in the same run" means.
//!
//! `cargo bench --bench gate_paired`; `MCPGATE_PAIRED_ROUNDS` sets the
//! number of pairs (default 201). Bounded: rounds × 2 blocks of 2,000 calls.

#[path = "../tests/support/bodies.rs"]
mod bodies;
#[path = "support/value_gate.rs"]
mod value_gate;

use std::hint::black_box;
use std::time::{Duration, Instant};

use mcpgate::{Scratch, Verdict};
use value_gate::{SearchOrders, tool_call};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_ROUNDS: usize = 201;
/// Calls per block: milliseconds of each side, long enough that the clock's
/// reading costs nothing beside it, short enough that a slow spell hits
/// both blocks of a pair.
const BLOCK: u32 = 2_000;

fn main() {
    let rounds = std::env::var("MCPGATE_PAIRED_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS)
        .max(1);
    let case = SearchOrders::new();
    let (headers, body) = tool_call("search_orders", bodies::search_orders_arguments());
    let mut scratch = Scratch::default();
    let mut check = || {
        matches!(
            case.gate
                .check_with(&mut scratch, headers.as_slice(), black_box(&body)),
            Verdict::Allow(_)
        )
    };
    assert!(check(), "the call is allowed");
    let baseline = || case.baseline(black_box(&body));
    assert_eq!(baseline(), 1, "the baseline finds the call valid");

    // Warm-up: one block of each.
    time_block(&mut check);
    time_block(&mut || baseline() == 1);
    let (mut checks, mut baselines, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (check_time, baseline_time) = if round % 2 == 0 {
            let c = time_block(&mut check);
            (c, time_block(&mut || baseline() == 1))
        } else {
            let b = time_block(&mut || baseline() == 1);
            (time_block(&mut check), b)
        };
        checks.push(check_time);
        baselines.push(baseline_time);
        ratios.push(baseline_time.as_secs_f64() / check_time.as_secs_f64());
    }
    checks.sort();
    baselines.sort();
    ratios.sort_by(f64::total_cmp);
    let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    println!(
        "gate/tools-call/search_orders/paired ({rounds} pairs of {BLOCK}-call blocks)\n  \
         check_valid {:?}  serde_jsonschema_valid {:?}  (medians per call)\n  \
         ratio median {:.2}x  (quartiles {:.2}x .. {:.2}x)",
        checks[checks.len() / 2],
        baselines[baselines.len() / 2],
        quartile(2),
        quartile(1),
        quartile(3),
    );
}

/// Mean time per call over one block.
fn time_block(call: &mut impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    for _ in 0..BLOCK {
        black_box(call());
    }
    start.elapsed() / BLOCK
}
