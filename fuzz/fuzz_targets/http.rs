//! Any bytes as a raw HTTP/1.1 request into the connection layer's framing
//! (head parse, `Content-Length` and chunked bodies), arriving in reads of
//! a size the input picks: never a panic, never a body over the limit or a
//! head over its bound, the same request whatever the read size, and every
//! refusal a 4xx of the rejection table.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpgate::server::http::{FrameLimits, frame_request};
use mcpgate::service::http_error_reason;

fuzz_target!(|data: &[u8]| {
    let [read_size, variant, raw @ ..] = data else {
        return;
    };
    // Small limits reach every limit; the defaults are what is served.
    let limits = match variant % 3 {
        0 => FrameLimits {
            max_headers: 64,
            max_head_bytes: 16 * 1024,
            body_limit: 4 * 1024 * 1024,
        },
        1 => FrameLimits {
            max_headers: 4,
            max_head_bytes: 256,
            body_limit: 64,
        },
        _ => FrameLimits {
            max_headers: 1,
            max_head_bytes: 64,
            body_limit: 0,
        },
    };
    let whole = frame_request(raw, raw.len(), limits);
    let split = frame_request(raw, usize::from(*read_size).max(1), limits);
    match &whole {
        Ok(Some(framed)) => {
            assert!(framed.body.len() <= limits.body_limit);
            assert!(framed.head_len <= limits.max_head_bytes);
            assert!(framed.header_count <= limits.max_headers);
            assert!(framed.consumed <= raw.len());
            assert!(framed.head_len + framed.body.len() <= framed.consumed);
        }
        Ok(None) => {}
        Err(error) => {
            let status = http_error_reason(*error).row().status;
            assert!((400..500).contains(&status), "{error:?} answers {status}");
        }
    }
    // Where the reads split the input changes nothing the request says.
    match (&whole, &split) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole: {a:?}, in reads of {read_size}: {b:?}"),
    }
});
