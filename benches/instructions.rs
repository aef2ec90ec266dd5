//! One case of the gate checked a given number of times, for
//! `benches/instructions.sh`: callgrind counts the instructions of a run
//! of N checks and of 2N, and their difference over N is one check's,
//! set-up and all else cancelled out. Instruction counts do not move with
//! the machine's load as times do, so they tell a change of a few percent
//! on the refusal path apart where timings on a shared machine cannot.
//!
//! `instructions CASE COUNT`, CASE one of [`CASES`]. Without a case (as
//! `cargo bench` runs every bench) it lists the cases and does nothing.

#[path = "../tests/support/bodies.rs"]
mod bodies;
// Its gate and `tool_call` are read here, not its baselines.
#[allow(dead_code)]
#[path = "support/value_gate.rs"]
mod value_gate;

use std::hint::black_box;

use mcpgate::{Gate, GateConfig, Scratch, Verdict};
use serde_json::json;
use value_gate::{SearchOrders, tool_call};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The cases, and whether the gate allows each.
const CASES: [(&str, bool); 4] = [
    // `gate/tools_call_516b/check`.
    ("valid_516b", true),
    // `gate/invalid_small/check`: the message schema refuses it.
    ("invalid_small", false),
    // The value gate: a valid `search_orders` call, and the same call with
    // two wrong values answered in the tool dialect (as
    // `benches/refusal-load.sh` sends them over HTTP).
    ("search_orders_allowed", true),
    ("search_orders_refused", false),
];

fn main() {
    let mut args = std::env::args().skip(1);
    let (Some(case), Some(count)) = (args.next(), args.next()) else {
        let names: Vec<&str> = CASES.iter().map(|(name, _)| *name).collect();
        println!("instructions CASE COUNT; cases: {}", names.join(", "));
        return;
    };
    let count: usize = count.parse().expect("COUNT is a number of checks");
    let Some(&(_, allowed)) = CASES.iter().find(|(name, _)| *name == case) else {
        panic!("no case {case}");
    };
    // The message-schema cases on a gate without a catalog, as the
    // criterion bench checks them; the value gate's on the test catalog.
    let plain;
    let search_orders;
    let gate = if case.starts_with("search_orders") {
        search_orders = SearchOrders::new();
        &search_orders.gate
    } else {
        plain = Gate::new(GateConfig::default()).unwrap();
        &plain
    };
    let (headers, body) = match case.as_str() {
        "valid_516b" => bodies::tools_call_body(516),
        "invalid_small" => (
            bodies::tools_call_body(516).0,
            bodies::INVALID_SMALL.to_vec(),
        ),
        "search_orders_allowed" => tool_call("search_orders", bodies::search_orders_arguments()),
        _ => {
            let mut arguments = bodies::search_orders_arguments();
            arguments["pageSize"] = json!("fifty");
            arguments["statuses"] = json!(["Pending", "Open"]);
            tool_call("search_orders", arguments)
        }
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
