//! One schema compiled on the gate's tape backend and on `jsonschema`'s
//! `serde_json` backend, and the check that the two agree on an instance.
//! Shared by `tests/tape_backend.rs` (MCP roots and hand-written schemas)
//! and the fuzz target `tape` (any schema), so that both hold the same
//! agreement.
#![allow(dead_code)]

use jsonschema::json::cmp::equal;
use jsonschema::{Draft, Validator};
use mcpgate::unstable::parse::{ParseLimits, Parser, TapeJson, TapeNode};
use serde_json::Value;

pub struct Pair {
    pub name: String,
    pub serde: Validator,
    pub tape: Validator<TapeJson>,
}

impl Pair {
    /// Both backends' validators of `schema`; `Ok(None)` when both refuse
    /// it, `Err` (saying which) when only one does.
    pub fn compile(name: impl Into<String>, schema: &Value) -> Result<Option<Pair>, String> {
        let name = name.into();
        let serde = jsonschema::options()
            .with_draft(Draft::Draft202012)
            .build(schema);
        let tape = jsonschema::options_for::<TapeJson>()
            .with_draft(Draft::Draft202012)
            .build(schema);
        match (serde, tape) {
            (Ok(serde), Ok(tape)) => Ok(Some(Pair { name, serde, tape })),
            (Err(_), Err(_)) => Ok(None),
            (serde, tape) => Err(format!(
                "{name}: one backend compiled the schema and not the other: serde {:?}, tape {:?}",
                serde.err().map(|e| e.to_string()),
                tape.err().map(|e| e.to_string())
            )),
        }
    }

    /// Both validators of a schema that both must compile.
    pub fn new(name: impl Into<String>, schema: &Value) -> Pair {
        let name = name.into();
        match Pair::compile(name.clone(), schema) {
            Ok(Some(pair)) => pair,
            Ok(None) => panic!("{name}: neither backend compiles the schema"),
            Err(e) => panic!("{e}"),
        }
    }

    /// Reads `text` with `serde_json` and with `parser` and checks the two
    /// validators on it; panics on any disagreement, and if either reader
    /// refuses the text.
    pub fn check(&self, parser: &mut Parser, text: &str, limits: ParseLimits) {
        let value: Value = serde_json::from_str(text)
            .unwrap_or_else(|e| panic!("{}: serde_json refused {text}: {e}", self.name));
        let document = parser
            .parse(text.as_bytes(), limits)
            .unwrap_or_else(|e| panic!("{}: the parser refused {text}: {e}", self.name));
        self.check_readings(document.root(), &value, text);
    }

    /// Checks the two validators on one instance as each reader read it
    /// (`text` only names it in a failure); panics on any disagreement:
    /// the readings, `is_valid`, `validate` and its first error (message,
    /// location, instance), and the number of errors.
    pub fn check_readings(&self, root: TapeNode<'_>, value: &Value, text: &str) {
        let context = || format!("schema {}, instance {text}", self.name);
        // The two readings are the same value, except that simd-json reads
        // `-0` as the integer 0 where serde_json reads -0.0: equal numbers, so
        // verdicts cannot differ, but an error's text and instance do.
        let read = root.to_value();
        let same_reading = read == *value;
        assert!(
            same_reading || equal(&read, value),
            "readings differ: {}",
            context()
        );

        // An integer literal beyond 64 bits that its float does not hold
        // exactly is that float to `serde_json` but kept as written on the
        // tape, which compares it exactly where `jsonschema` reads the text
        // (`multipleOf` an integer) and in equality: the verdicts may
        // differ, the tape's being the exact one (`tests/tape_backend.rs`
        // holds it to known verdicts).
        if root.holds_wide_integer() {
            return;
        }
        let valid = self.serde.is_valid(value);
        assert_eq!(valid, self.tape.is_valid(root), "is_valid: {}", context());

        let serde_first = self.serde.validate(value);
        let tape_first = self.tape.validate(root);
        assert_eq!(
            valid,
            serde_first.is_ok(),
            "serde's validate disagrees with its is_valid: {}",
            context()
        );
        assert_eq!(
            valid,
            tape_first.is_ok(),
            "the tape's validate disagrees with is_valid: {}",
            context()
        );
        if let (Err(serde_error), Err(tape_error)) = (&serde_first, &tape_first) {
            assert_eq!(
                serde_error.instance_path().as_str(),
                tape_error.instance_path().as_str(),
                "first error location: {}",
                context()
            );
            // Read alike, the first errors are the same to the letter;
            // read as equal numbers, their instances are equal.
            let (serde_instance, tape_instance) = (serde_error.instance(), tape_error.instance());
            if same_reading {
                assert_eq!(
                    serde_error.to_string(),
                    tape_error.to_string(),
                    "first error: {}",
                    context()
                );
                assert_eq!(
                    serde_instance.as_ref(),
                    tape_instance.as_ref(),
                    "first error instance: {}",
                    context()
                );
            } else {
                assert!(
                    equal(serde_instance, tape_instance),
                    "first error instance: {}",
                    context()
                );
            }
        }
        assert_eq!(
            self.serde.iter_errors(value).count(),
            self.tape.iter_errors(root).count(),
            "error count: {}",
            context()
        );
    }
}
