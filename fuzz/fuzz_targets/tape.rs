//! Any schema against any instance, on the gate's tape backend and on
//! `jsonschema`'s `serde_json` backend: the input is a schema's JSON text, a
//! NUL byte, then an instance's JSON text. Both backends compile the schema
//! or both refuse it; where the gate's parser and `serde_json` both read
//! the instance, they read the same value, and the two validators give the
//! same `is_valid`, the same `validate` outcome with the first error at the
//! same place, and the same number of errors. The tests in
//! `tests/tape_backend.rs` hold this for the MCP roots and hand-written
//! schemas; here the schemas are whatever a tool's `inputSchema` can be.
#![no_main]

use jsonschema::json::cmp::equal;
use jsonschema::{Draft, Validator};
use libfuzzer_sys::fuzz_target;
use mcpgate::gate::parse::{ParseLimits, Parser, TapeJson};
use serde_json::Value;

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
    let serde = jsonschema::options()
        .with_draft(Draft::Draft202012)
        .build(&schema);
    let tape = jsonschema::options_for::<TapeJson>()
        .with_draft(Draft::Draft202012)
        .build(&schema);
    let (serde, tape): (Validator, Validator<TapeJson>) = match (serde, tape) {
        (Ok(serde), Ok(tape)) => (serde, tape),
        (Err(_), Err(_)) => return,
        (serde, tape) => panic!(
            "one backend compiled the schema and not the other: serde {:?}, tape {:?}",
            serde.err().map(|e| e.to_string()),
            tape.err().map(|e| e.to_string())
        ),
    };
    let Ok(value) = serde_json::from_slice::<Value>(instance) else {
        return;
    };
    let mut parser = Parser::new();
    let Ok(document) = parser.parse(instance, LIMITS) else {
        return;
    };
    let root = document.root();
    assert!(equal(&root.to_value(), &value), "the readings differ");

    let valid = serde.is_valid(&value);
    assert_eq!(valid, tape.is_valid(root), "is_valid differs");
    let (serde_first, tape_first) = (serde.validate(&value), tape.validate(root));
    assert_eq!(
        serde_first.is_ok(),
        valid,
        "serde's validate disagrees with its is_valid"
    );
    assert_eq!(
        tape_first.is_ok(),
        valid,
        "the tape's validate disagrees with is_valid"
    );
    if let (Err(s), Err(t)) = (&serde_first, &tape_first) {
        assert_eq!(
            s.instance_path().as_str(),
            t.instance_path().as_str(),
            "the first error's location differs"
        );
    }
    assert_eq!(
        serde.iter_errors(&value).count(),
        tape.iter_errors(root).count(),
        "the error count differs"
    );
});
