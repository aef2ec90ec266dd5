//! Same-run ratios of the gate, each from two calls timed in alternating
//! blocks, and the median of the per-pair ratios:
//!
//! - `gate/tools-call/search_orders/paired`: the valid call's check and
//!   its baseline (the same two as in the `gate` bench);
//! - `gate/tools_call_516b/paired`: the valid 516-byte check and its
//!   serde_json + jsonschema baseline (`gate/tools_call_516b/check`,
//!   `…/serde_jsonschema`);
//! - `gate/invalid_small/paired`: the small schema refusal against the
//!   valid 516-byte check (`gate/invalid_small/check`; the goal is
//!   "≤ 2.0×");
//! - `gate/tools-call/search_orders/refused_paired`: the call with the two
//!   wrong values `benches/refusal-load.sh` sends (the tool-dialect
//!   answer) against the valid call, in-process: the check's part of that
//!   script's refused / allowed ratio, without the kernel's;
//! - `gate/wrong_items/paired`: the refusal of 100,000 wrong items against
//!   that of 10,000 (`gate/wrong_items/check/…`), whose ratio is about ten
//!   where the walk is linear in the items.
//!
//! Why beside criterion: criterion times the two sides of a ratio seconds
//! apart, so on a shared machine a slow spell that hits one of them moves
//! their ratio by more than the differences measured. Here each pair of
//! blocks runs back to back, in alternating order, so a spell hits both
//! sides of a pair about equally; the median of the pairs' ratios is what
//! the comparison "in the same run" means.
//!
//! `cargo bench --bench gate_paired`; `MCPGATE_PAIRED_ROUNDS` sets the
//! number of pairs (default 201; an even number is raised by one, so the
//! median is one pair's ratio and its inverse the median of the inverses,
//! which `benches/floors.py` relies on). Bounded: per ratio, rounds × 2
//! blocks of 2,000 calls (of 20 and 2 for the wrong items). Each ratio is
//! also written to `target/paired/<name>/ratio.json` (under
//! `CARGO_TARGET_DIR` where that is set), where `benches/floors.py` holds
//! it to `benches/floors.toml`.

#[path = "../tests/support/bodies.rs"]
mod bodies;
#[path = "support/value_gate.rs"]
mod value_gate;

use std::hint::black_box;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use mcpgate::unstable::protocol::{RootKind, SchemaDocument, compile_root_as_written};
use mcpgate::{Gate, GateConfig, Scratch, Verdict};
use value_gate::{SearchOrders, tool_call};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const DEFAULT_ROUNDS: usize = 201;
/// Calls per block of a check that takes about a microsecond: milliseconds
/// of each side, long enough that the clock's reading costs nothing beside
/// it, short enough that a slow spell hits both blocks of a pair.
const BLOCK: u32 = 2_000;
/// Calls per block of the 10,000 and the 100,000 wrong items (about 0.3 and
/// 3 ms a call): the same milliseconds on each side of a pair.
const WRONG_ITEMS_BLOCKS: (u32, u32) = (20, 2);

fn main() {
    let rounds = std::env::var("MCPGATE_PAIRED_ROUNDS")
        .ok()
        .and_then(|value| value.parse().ok())
        .unwrap_or(DEFAULT_ROUNDS)
        | 1;

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
    let mut baseline = || case.baseline(black_box(&body)) == 1;
    assert!(baseline(), "the baseline finds the call valid");
    paired(
        "gate/tools-call/search_orders/paired",
        rounds,
        ("check_valid", &mut check),
        ("serde_jsonschema_valid", &mut baseline),
    );

    let (refused_headers, refused_body) =
        tool_call("search_orders", bodies::search_orders_refused_arguments());
    let mut refused_scratch = Scratch::default();
    let mut refusal = || {
        matches!(
            case.gate.check_with(
                &mut refused_scratch,
                refused_headers.as_slice(),
                black_box(&refused_body)
            ),
            Verdict::Reject(_)
        )
    };
    assert!(refusal(), "the call with two wrong values is refused");
    paired(
        "gate/tools-call/search_orders/refused_paired",
        rounds,
        ("check_valid", &mut check),
        ("check_refused", &mut refusal),
    );

    let gate = Gate::new(GateConfig::default()).unwrap();
    let (headers, body) = bodies::tools_call_body(516);
    let document = SchemaDocument::Mcp2026_07_28.parse();
    let root = compile_root_as_written(&document, &RootKind::Request("tools/call").key()).unwrap();
    let (mut valid_scratch, mut refusal_scratch) = (Scratch::default(), Scratch::default());
    let mut check = || {
        matches!(
            gate.check_with(&mut valid_scratch, headers.as_slice(), black_box(&body)),
            Verdict::Allow(_)
        )
    };
    assert!(check(), "the 516-byte call is allowed");
    let mut baseline = || {
        let value: serde_json::Value = serde_json::from_slice(black_box(&body)).unwrap();
        root.is_valid(&value)
    };
    assert!(baseline(), "the baseline finds the 516-byte call valid");
    paired(
        "gate/tools_call_516b/paired",
        rounds,
        ("check", &mut check),
        ("serde_jsonschema", &mut baseline),
    );

    let mut refusal = || {
        matches!(
            gate.check_with(
                &mut refusal_scratch,
                headers.as_slice(),
                black_box(bodies::INVALID_SMALL)
            ),
            Verdict::Reject(_)
        )
    };
    assert!(refusal(), "the small call is refused");
    paired(
        "gate/invalid_small/paired",
        rounds,
        ("tools_call_516b/check", &mut check),
        ("invalid_small/check", &mut refusal),
    );

    let listen = bodies::listen_headers();
    let (fewer, more) = (
        bodies::wrong_items_body(10_000),
        bodies::wrong_items_body(100_000),
    );
    let (mut fewer_scratch, mut more_scratch) = (Scratch::default(), Scratch::default());
    let mut refuse_fewer = || {
        matches!(
            gate.check_with(&mut fewer_scratch, listen.as_slice(), black_box(&fewer)),
            Verdict::Reject(_)
        )
    };
    let mut refuse_more = || {
        matches!(
            gate.check_with(&mut more_scratch, listen.as_slice(), black_box(&more)),
            Verdict::Reject(_)
        )
    };
    assert!(
        refuse_fewer() && refuse_more(),
        "both wrong-item bodies are refused"
    );
    paired_blocks(
        "gate/wrong_items/paired",
        rounds,
        WRONG_ITEMS_BLOCKS,
        ("check/10000", &mut refuse_fewer),
        ("check/100000", &mut refuse_more),
    );
}

/// Times `first` and `second` in `rounds` pairs of blocks of [`BLOCK`]
/// calls, the order swapped every pair, and prints each one's median time
/// per call and the median (and quartiles) of the pairs' ratios
/// `second / first`.
fn paired(
    name: &str,
    rounds: usize,
    first: (&str, &mut impl FnMut() -> bool),
    second: (&str, &mut impl FnMut() -> bool),
) {
    paired_blocks(name, rounds, (BLOCK, BLOCK), first, second);
}

/// [`paired`] with `blocks.0` calls of `first` and `blocks.1` of `second`
/// in each block.
fn paired_blocks(
    name: &str,
    rounds: usize,
    blocks: (u32, u32),
    (first_name, first): (&str, &mut impl FnMut() -> bool),
    (second_name, second): (&str, &mut impl FnMut() -> bool),
) {
    // Warm-up: one block of each.
    time_block(blocks.0, first);
    time_block(blocks.1, second);
    let (mut firsts, mut seconds, mut ratios) = (Vec::new(), Vec::new(), Vec::new());
    for round in 0..rounds {
        let (a, b) = if round % 2 == 0 {
            let a = time_block(blocks.0, first);
            (a, time_block(blocks.1, second))
        } else {
            let b = time_block(blocks.1, second);
            (time_block(blocks.0, first), b)
        };
        firsts.push(a);
        seconds.push(b);
        ratios.push(b.as_secs_f64() / a.as_secs_f64());
    }
    firsts.sort();
    seconds.sort();
    ratios.sort_by(f64::total_cmp);
    let quartile = |q: usize| ratios[(ratios.len() - 1) * q / 4];
    let (first_median, second_median) = (firsts[firsts.len() / 2], seconds[seconds.len() / 2]);
    println!(
        "{name} ({rounds} pairs of {}- and {}-call blocks)\n  \
         {first_name} {first_median:?}  {second_name} {second_median:?}  (medians per call)\n  \
         {second_name} / {first_name}: median {:.2}x  (quartiles {:.2}x .. {:.2}x)",
        blocks.0,
        blocks.1,
        quartile(2),
        quartile(1),
        quartile(3),
    );
    let result = serde_json::json!({
        "name": name,
        "pairs": rounds,
        "calls_per_block": [blocks.0, blocks.1],
        "first": {"name": first_name, "median_ns": first_median.as_secs_f64() * 1e9},
        "second": {"name": second_name, "median_ns": second_median.as_secs_f64() * 1e9},
        "second_over_first": {"median": quartile(2), "q1": quartile(1), "q3": quartile(3)},
    });
    let dir = std::env::var_os("CARGO_TARGET_DIR")
        .map_or_else(|| PathBuf::from("target"), PathBuf::from)
        .join("paired")
        .join(name);
    std::fs::create_dir_all(&dir)
        .and_then(|()| std::fs::write(dir.join("ratio.json"), result.to_string()))
        .unwrap_or_else(|error| panic!("writing {}: {error}", dir.display()));
}

/// Mean time per call over one block of `calls` calls.
fn time_block(calls: u32, call: &mut impl FnMut() -> bool) -> Duration {
    let start = Instant::now();
    for _ in 0..calls {
        black_box(call());
    }
    start.elapsed() / calls
}
