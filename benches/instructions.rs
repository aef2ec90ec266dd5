//! One case of the gate checked a given number of times, for
//! `benches/instructions.sh`: callgrind counts the instructions of a run
//! of N checks and of 2N, and their difference over N is one check's,
//! set-up and all else cancelled out. Instruction counts do not move with
//! the machine's load as times do, so they tell a change of a few percent
//! on the refusal path apart where timings on a shared machine cannot.
//!
//! `instructions CASE COUNT`, CASE one of [`CASES`]. Without a case (as
//! `cargo bench` runs every bench) it prints the cases, one per line, and
//! does nothing else: the script reads them from there.

#[path = "../tests/support/bodies.rs"]
mod bodies;
// Its gate and `tool_call` are read here, not its baselines.
#[allow(dead_code)]
#[path = "support/value_gate.rs"]
mod value_gate;

use std::hint::black_box;

use mcpgate::{Gate, GateConfig, Scratch, Verdict};
use value_gate::{SearchOrders, tool_call};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

const CASES: [&str; 4] = [
    "valid_516b",
    "invalid_small",
    "search_orders_allowed",
    "search_orders_refused",
];

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(case), Some(count)) = (args.next(), args.next()) else {
        for case in CASES {
            println!("{case}");
        }
        return;
    };
    let count: usize = count.parse().expect("COUNT is a number of checks");
    // The gate, the headers and body, and whether the gate allows them.
    // The message-schema cases on a gate without a catalog, as the
    // criterion bench checks them; the value gate's on the test catalog.
    let (gate, (headers, body), allowed) = match case.as_str() {
        // `gate/tools_call_516b/check`.
        "valid_516b" => (plain_gate(), bodies::tools_call_body(516), true),
        // `gate/invalid_small/check`: the message schema refuses it.
        "invalid_small" => (
            plain_gate(),
            (
                bodies::tools_call_body(516).0,
                bodies::INVALID_SMALL.to_vec(),
            ),
            false,
        ),
        // The value gate: a valid `search_orders` call, and the call
        // `benches/refusal-load.sh` refuses over HTTP (the tool dialect).
        "search_orders_allowed" => (
            SearchOrders::new().gate,
            tool_call("search_orders", bodies::search_orders_arguments()),
            true,
        ),
        "search_orders_refused" => (
            SearchOrders::new().gate,
            tool_call("search_orders", bodies::search_orders_refused_arguments()),
            false,
        ),
        _ => panic!("no case {case}; the cases: {}", CASES.join(", ")),
    };
    let mut scratch = Scratch::default();
    let mut allowed_seen = 0;
    for _ in 0..count {
        let verdict = gate.check_with(&mut scratch, headers.as_slice(), black_box(&body));
        allowed_seen += usize::from(matches!(verdict, Verdict::Allow(_)));
    }
    let expected = if allowed { count } else { 0 };
    assert_eq!(allowed_seen, expected, "{case}: the gate's verdict changed");
}

fn plain_gate() -> Gate {
    Gate::new(GateConfig::default()).unwrap()
}
