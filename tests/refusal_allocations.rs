//! Heap allocations of the refusal path, in steady state: a counting
//! allocator in this test binary counts what this thread allocates over
//! [`CHECKS`] refusals of one kind (each `Rejection` dropped before the
//! next check, as a worker does once it has written the answer), after a
//! few checks that warm the scratch buffers and the output buffer up.
//!
//! Every test asserts the exact count per refusal it holds today: a change
//! that adds an allocation to a refusal fails here. One more counts what
//! the parse of a large body allocates (its tape, once).

#[path = "support/bodies.rs"]
mod bodies;
#[allow(dead_code)]
#[path = "../benches/support/value_gate.rs"]
mod value_gate;

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;

use mcpgate::unstable::parse::{ParseLimits, Parser};
use mcpgate::{Gate, GateConfig, Reason, Scratch, Verdict};
use serde_json::json;
use value_gate::{SearchOrders, tool_call};

/// Counts this thread's allocations (libtest runs each test on its own
/// thread, so the tests do not see each other's).
struct Counting;

thread_local! {
    static COUNTING: Cell<bool> = const { Cell::new(false) };
    static ALLOCATIONS: Cell<usize> = const { Cell::new(0) };
    static BYTES: Cell<usize> = const { Cell::new(0) };
    static REALLOCATIONS: Cell<usize> = const { Cell::new(0) };
}

fn note(size: usize) {
    // `try_with`: the thread may be tearing its locals down.
    let _ = COUNTING.try_with(|counting| {
        if counting.get() {
            ALLOCATIONS.with(|n| n.set(n.get() + 1));
            BYTES.with(|b| b.set(b.get() + size));
        }
    });
}

fn note_realloc(size: usize) {
    note(size);
    let _ = COUNTING.try_with(|counting| {
        if counting.get() {
            REALLOCATIONS.with(|n| n.set(n.get() + 1));
        }
    });
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc(layout) }
    }
    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        note(layout.size());
        unsafe { System.alloc_zeroed(layout) }
    }
    unsafe fn realloc(&self, p: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        note_realloc(new_size);
        unsafe { System.realloc(p, layout, new_size) }
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Refusals counted per test.
const CHECKS: usize = 1_000;
/// Refusals before counting.
const WARM_UP: usize = 8;

/// What the parse of `body` allocates over `CHECKS` parses, in debug
/// builds: there the parser holds every tape of its fast path equal to
/// simd-json's, which allocates. Release builds do not check, and count
/// it all.
fn debug_checks(body: &[u8]) -> (usize, usize, usize) {
    if !cfg!(debug_assertions) {
        return (0, 0, 0);
    }
    let mut parser = Parser::new();
    for _ in 0..WARM_UP {
        let _ = parser.parse(body, ParseLimits::default()).is_ok();
    }
    counted(|| {
        for _ in 0..CHECKS {
            let _ = parser.parse(body, ParseLimits::default()).is_ok();
        }
    })
}

/// What `run` allocated on this thread: allocations (growing ones
/// included), bytes, and how many of them grew an allocation.
fn counted(run: impl FnOnce()) -> (usize, usize, usize) {
    ALLOCATIONS.with(|n| n.set(0));
    BYTES.with(|b| b.set(0));
    REALLOCATIONS.with(|n| n.set(0));
    COUNTING.with(|c| c.set(true));
    run();
    COUNTING.with(|c| c.set(false));
    (
        ALLOCATIONS.with(Cell::get),
        BYTES.with(Cell::get),
        REALLOCATIONS.with(Cell::get),
    )
}

/// What `CHECKS` refusals allocated: (allocations, bytes) per refusal,
/// the allocations exact (asserted to divide evenly), the bytes rounded.
fn per_refusal(
    gate: &Gate,
    headers: &[(String, String)],
    body: &[u8],
    reason: Reason,
) -> (usize, usize) {
    per_refusal_parsing(gate, headers, body, reason, &[])
}

/// [`per_refusal`] for a refusal that also parses each of `also` (whose
/// debug builds' checks are left out as the body's are).
fn per_refusal_parsing(
    gate: &Gate,
    headers: &[(String, String)],
    body: &[u8],
    reason: Reason,
    also: &[&[u8]],
) -> (usize, usize) {
    let mut scratch = Scratch::default();
    let mut refuse = || match gate.check_with(&mut scratch, headers, body) {
        Verdict::Reject(rejection) => {
            assert_eq!(rejection.reason, reason);
            assert!(!rejection.body.is_empty());
        }
        Verdict::Allow(allowed) => panic!("allowed: {allowed:?}"),
    };
    for _ in 0..WARM_UP {
        refuse();
    }
    let (allocations, bytes, reallocations) = counted(|| {
        for _ in 0..CHECKS {
            refuse();
        }
    });
    let (mut debug_allocations, mut debug_bytes, mut debug_reallocations) = debug_checks(body);
    for parsed in also {
        let (allocations, bytes, reallocations) = debug_checks(parsed);
        debug_allocations += allocations;
        debug_bytes += bytes;
        debug_reallocations += reallocations;
    }
    let allocations = allocations - debug_allocations;
    let bytes = bytes - debug_bytes;
    let reallocations = reallocations - debug_reallocations;
    println!(
        "{reason:?}: {allocations} allocations ({reallocations} of them growing one), {bytes} bytes over {CHECKS} refusals ({:.2} and {:.1} each)",
        allocations as f64 / CHECKS as f64,
        bytes as f64 / CHECKS as f64
    );
    assert_eq!(
        allocations % CHECKS,
        0,
        "{allocations} allocations over {CHECKS} refusals: not the same each time"
    );
    (allocations / CHECKS, bytes / CHECKS)
}

fn plain_gate() -> Gate {
    Gate::new(GateConfig::default()).unwrap()
}

/// The headers of a 2026-07-28 `tools/call` of `get_weather`.
fn modern_headers() -> Vec<(String, String)> {
    bodies::tools_call_body(516).0
}

#[test]
fn a_malformed_body() {
    let gate = plain_gate();
    let (allocations, _) = per_refusal(
        &gate,
        &modern_headers(),
        b"{\"jsonrpc\":\"2.0\",\"id\":1,",
        Reason::MalformedJson,
    );
    assert_eq!(allocations, 0);
}

#[test]
fn an_envelope_without_a_method() {
    let gate = plain_gate();
    let (allocations, _) = per_refusal(
        &gate,
        &modern_headers(),
        br#"{"jsonrpc":"2.0","id":1,"params":{}}"#,
        Reason::UnknownMessage,
    );
    assert_eq!(allocations, 0);
}

#[test]
fn an_envelope_of_another_jsonrpc_version() {
    let gate = plain_gate();
    let body = br#"{"jsonrpc":"1.0","id":7,"method":"tools/call","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"name":"get_weather","arguments":{}}}"#;
    let (allocations, _) = per_refusal(&gate, &modern_headers(), body, Reason::InvalidRequest);
    assert_eq!(allocations, 0);
}

#[test]
fn a_header_that_disagrees_with_the_body() {
    let gate = plain_gate();
    let (mut headers, body) = bodies::tools_call_body(516);
    for (name, value) in &mut headers {
        if name == "Mcp-Name" {
            *value = "get_forecast".to_owned();
        }
    }
    let (allocations, _) = per_refusal(&gate, &headers, &body, Reason::HeaderMismatch);
    assert_eq!(allocations, 0);
}

#[test]
fn a_schema_refusal() {
    // `gate/invalid_small` of benches/gate.rs.
    let gate = plain_gate();
    let (allocations, _) = per_refusal(
        &gate,
        &modern_headers(),
        bodies::INVALID_SMALL,
        Reason::InvalidParams,
    );
    assert_eq!(allocations, 0);
}

#[test]
fn a_tool_dialect_refusal() {
    // `gate/tools-call/search_orders/check_invalid` of benches/gate.rs.
    let case = SearchOrders::new();
    let mut arguments = bodies::search_orders_arguments();
    arguments["pageSize"] = json!("fifty");
    arguments["filters"]["currency"] = json!("usd");
    arguments["colour"] = json!("red");
    let (headers, body) = tool_call("search_orders", arguments);
    let (allocations, _) = per_refusal(&case.gate, &headers, &body, Reason::InvalidArguments);
    // The explaining walk asks the gate's own `email` format about the
    // valid `buyerEmail` (jsonschema's keeps a copy of what it accepts).
    assert_eq!(allocations, 0);
}

#[test]
fn a_tool_dialect_refusal_of_odd_and_long_keys() {
    // Keys quoted in the dotted path, and one cut at the echo bound (short
    // enough for the collector to keep its entry for the next refusal).
    let case = SearchOrders::new();
    let mut arguments = bodies::search_orders_arguments();
    arguments["colour \"name\""] = json!("red");
    arguments["k".repeat(1 << 9)] = json!(1);
    let (headers, body) = tool_call("search_orders", arguments);
    let (allocations, _) = per_refusal(&case.gate, &headers, &body, Reason::InvalidArguments);
    assert_eq!(allocations, 0);
}

#[test]
fn a_tool_dialect_refusal_of_a_call_without_arguments() {
    // No `arguments` member: explained as `{}` would be, which is parsed.
    let case = SearchOrders::new();
    let (headers, body) = tool_call("search_orders", json!({}));
    let mut message: serde_json::Value = serde_json::from_slice(&body).unwrap();
    message["params"]
        .as_object_mut()
        .unwrap()
        .remove("arguments");
    let body = serde_json::to_vec(&message).unwrap();
    let (allocations, _) = per_refusal_parsing(
        &case.gate,
        &headers,
        &body,
        Reason::InvalidArguments,
        &[b"{}"],
    );
    assert_eq!(allocations, 0);
}

#[test]
fn an_unknown_tool() {
    let case = SearchOrders::new();
    let (headers, body) = tool_call("search_order", json!({}));
    let (allocations, _) = per_refusal(&case.gate, &headers, &body, Reason::UnknownTool);
    assert_eq!(allocations, 0);
}

/// A large body's tape is reserved once, for the most nodes the body can
/// hold, never grown by doubling: each doubling copies the tape and leaves
/// the smaller block behind, which the allocator may keep resident (twice
/// the tape's size for a body at the limit).
#[test]
fn a_large_body_reserves_its_tape_once_instead_of_doubling_it() {
    // Larger than the size a debug build parses twice to compare.
    let values = 1 << 20;
    let body = format!("[{}1]", "1,".repeat(values - 1)).into_bytes();
    let mut parser = Parser::new();
    let (allocations, bytes, reallocations) = counted(|| {
        let document = parser.parse(&body, ParseLimits::default()).unwrap();
        assert_eq!(document.node_count(), values + 1);
    });
    println!(
        "first parse of {values} values: {allocations} allocations, {reallocations} growing one, {bytes} bytes"
    );
    assert_eq!(reallocations, 0, "the tape grew by reallocation");
    // The body's padded copy, which the fast path reads, and the tape.
    assert_eq!(allocations, 2);
    // The copy and its sixteen bytes of padding, and a 24-byte node for
    // each two bytes of the body (and one per level of nesting) at most.
    let copy = body.len() + 16;
    let tape = (body.len() / 2 + 1 + 32) * 24;
    assert!(bytes <= copy + tape, "{bytes} bytes");
}
