//! The fuzz targets' assertions (the module they share) on stable, in every
//! test run: over the inputs a fuzz run once failed on (replayed below) and
//! over the project's own messages.

#[path = "../fuzz/fuzz_targets/common/mod.rs"]
mod common;

/// Bodies a `parse` run failed on, replayed as the target runs them.
const PARSE_INPUTS: &[&[u8]] = &[];

/// Raw inputs of the `http` target (read size, limits variant, request).
const HTTP_INPUTS: &[&[u8]] = &[];

/// As the `parse` target: each body on the modern lane (with the headers
/// it calls for) and on the legacy lane.
fn parse_target(body: &[u8]) {
    common::check(common::modern_headers(body).as_slice(), body);
    let none: &[(&str, &[u8])] = &[];
    common::check(none, body);
}

fn seeds() -> Vec<Vec<u8>> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance");
    let mut bodies = Vec::new();
    for revision in ["2026-07-28", "2025-11-25"] {
        let text = std::fs::read(dir.join(format!("seeds-{revision}.ndjson"))).unwrap();
        bodies.extend(
            text.split(|&b| b == b'\n')
                .filter(|line| !line.trim_ascii().is_empty())
                .map(<[u8]>::to_vec),
        );
    }
    bodies
}

#[test]
fn gate_answers_hold_the_fuzz_invariants_for_seeds_and_past_findings() {
    for input in PARSE_INPUTS {
        parse_target(input);
    }
    let seeds = seeds();
    assert!(seeds.len() > 50);
    for body in &seeds {
        parse_target(body);
        // Every prefix: truncated bodies reach the parse refusals.
        for end in (0..body.len()).step_by(7) {
            parse_target(&body[..end]);
        }
    }
    // Over the body limit, and hostile shapes.
    parse_target(&vec![b' '; common::BODY_LIMIT + 1]);
    parse_target(format!("{}{}", "[".repeat(100_000), "]".repeat(100_000)).as_bytes());
    let long = "é".repeat(100_000);
    parse_target(format!(r#"{{"jsonrpc":"2.0","id":"{long}","method":"{long}"}}"#).as_bytes());
}

#[test]
fn framing_holds_the_fuzz_invariants_for_seeds_and_past_findings() {
    for input in HTTP_INPUTS {
        common::check_framing(input);
    }
    for body in seeds() {
        let mut raw = format!(
            "POST /mcp HTTP/1.1\r\nHost: t\r\nTransfer-Encoding: chunked\r\n\r\n{:x}\r\n",
            body.len()
        )
        .into_bytes();
        raw.extend_from_slice(&body);
        raw.extend_from_slice(b"\r\n0\r\n\r\n");
        for read_size in [1, 3, 200] {
            for variant in 0..3 {
                let mut input = vec![read_size, variant];
                input.extend_from_slice(&raw);
                common::check_framing(&input);
            }
        }
    }
}
