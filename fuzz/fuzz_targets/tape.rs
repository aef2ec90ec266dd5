//! Any schema against any instance, on the gate's tape backend and on
//! `jsonschema`'s `serde_json` backend: the input is a schema's JSON text, a
//! NUL byte, then an instance's JSON text. Both backends compile the schema
//! or both refuse it; where the gate's parser and `serde_json` both read
//! the instance, they read the same value, and the two validators give the
//! same `is_valid`, the same `validate` outcome with the same first error
//! (message, location, instance), and the same number of errors
//! (`common/tape_agreement.rs`). The tests in
//! `tests/tape_backend.rs` hold this for the MCP roots and hand-written
//! schemas; here the schemas are whatever a tool's `inputSchema` can be.
#![no_main]

#[path = "common/tape_agreement.rs"]
mod tape_agreement;

use libfuzzer_sys::fuzz_target;
use mcpgate::unstable::parse::{ParseLimits, Parser};
use serde_json::Value;
use tape_agreement::Pair;

/// serde_json's own nesting limit, so that both readers can take the
/// deepest instance either does.
const LIMITS: ParseLimits = ParseLimits { max_depth: 128 };

fuzz_target!(|data: &[u8]| {
    let Some(split) = data.iter().position(|&b| b == 0) else {
        return;
    };
    let (schema, instance) = (&data[..split], &data[split + 1..]);
    let Ok(schema) = serde_json::from_slice::<Value>(schema) else {
        return;
    };
    let pair = match Pair::compile(schema.to_string(), &schema) {
        Ok(Some(pair)) => pair,
        Ok(None) => return,
        Err(e) => panic!("{e}"),
    };
    let Ok(value) = serde_json::from_slice::<Value>(instance) else {
        return;
    };
    let mut parser = Parser::new();
    let Ok(document) = parser.parse(instance, LIMITS) else {
        return;
    };
    pair.check_readings(document.root(), &value, &String::from_utf8_lossy(instance));
});
