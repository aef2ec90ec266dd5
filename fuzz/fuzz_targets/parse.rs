//! Any bytes as a body through `Gate::check`, on the 2026-07-28 lane (with
//! the headers the body calls for) and on the legacy lane (no headers):
//! one verdict each, counted once, and a rejection is a well-formed,
//! bounded JSON-RPC error.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    common::check(common::modern_headers(data).as_slice(), data);
    let none: &[(&str, &[u8])] = &[];
    common::check(none, data);
});
