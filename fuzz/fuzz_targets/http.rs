//! Any bytes as a raw HTTP/1.1 request into the connection layer's framing
//! (head parse, `Content-Length` and chunked bodies), arriving in reads of
//! a size the input picks: never a panic, never a body over the limit or a
//! head over its bound, the same request whatever the read size, and every
//! refusal a 4xx of the rejection table; then the wire checks and the gate
//! on what was framed.
#![no_main]

mod common;

use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| common::check_framing(data));
