//! Peak heap of the error path: a 1 MiB body of 100,000 wrong-typed items
//! is answered with bounded memory (a counting allocator in this test
//! binary measures it) and a small body.

#[path = "support/bodies.rs"]
mod bodies;

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicUsize, Ordering};

use mcpgate::{Gate, GateConfig, Verdict};

struct Counting;

static CURRENT: AtomicUsize = AtomicUsize::new(0);
static PEAK: AtomicUsize = AtomicUsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        let p = unsafe { System.alloc(layout) };
        if !p.is_null() {
            let now = CURRENT.fetch_add(layout.size(), Ordering::Relaxed) + layout.size();
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        p
    }
    unsafe fn dealloc(&self, p: *mut u8, layout: Layout) {
        unsafe { System.dealloc(p, layout) };
        CURRENT.fetch_sub(layout.size(), Ordering::Relaxed);
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

const PEAK_EXTRA_LIMIT: usize = 64 * 1024 * 1024;

#[test]
fn a_megabyte_of_wrong_items_is_answered_small_within_bounded_heap() {
    let gate = Gate::new(GateConfig::default()).unwrap();
    let headers = bodies::listen_headers();
    let body = bodies::wrong_items_body(100_000);
    assert!(body.len() > 1_000_000, "{} bytes", body.len());
    // Warm the thread's scratch buffers to the body's size first.
    drop(gate.check(headers.as_slice(), &body));

    let baseline = CURRENT.load(Ordering::Relaxed);
    PEAK.store(baseline, Ordering::Relaxed);
    let verdict = gate.check(headers.as_slice(), &body);
    let peak_extra = PEAK.load(Ordering::Relaxed) - baseline;

    let Verdict::Reject(rejection) = verdict else {
        panic!("allowed")
    };
    println!(
        "100,000 wrong items: peak extra heap {:.1} MiB, answer {} bytes",
        peak_extra as f64 / (1024.0 * 1024.0),
        rejection.body.len()
    );
    assert!(
        peak_extra < PEAK_EXTRA_LIMIT,
        "peak extra heap {peak_extra} bytes"
    );
    assert!(
        rejection.body.len() < 2048,
        "answer of {} bytes",
        rejection.body.len()
    );
    let answer: serde_json::Value = serde_json::from_slice(&rejection.body).unwrap();
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(answer["error"]["data"]["total"], 100_000);
    let errors = answer["error"]["data"]["errors"].as_array().unwrap();
    assert_eq!(errors.len(), 10);
    assert_eq!(
        errors[0]["path"],
        "/params/notifications/resourceSubscriptions/0"
    );
    assert_eq!(
        errors[9]["path"],
        "/params/notifications/resourceSubscriptions/9"
    );
}
