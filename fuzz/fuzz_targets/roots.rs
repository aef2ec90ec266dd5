//! Any bytes that parse as JSON, against every protocol root: the fast
//! verdict (`is_valid`) must agree with the error path (`validate`).
#![no_main]

use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use mcpgate::unstable::protocol::{SchemaDocument, compile_root, root_keys};

fn roots() -> &'static Vec<jsonschema::Validator> {
    static ROOTS: OnceLock<Vec<jsonschema::Validator>> = OnceLock::new();
    ROOTS.get_or_init(|| {
        SchemaDocument::ALL
            .into_iter()
            .flat_map(|document| {
                let parsed = document.parse();
                root_keys(&parsed)
                    .into_iter()
                    .map(move |key| compile_root(&parsed, &key).unwrap())
                    .collect::<Vec<_>>()
            })
            .collect()
    })
}

fuzz_target!(|data: &[u8]| {
    let Ok(value) = serde_json::from_slice::<serde_json::Value>(data) else {
        return;
    };
    for root in roots() {
        assert_eq!(root.is_valid(&value), root.validate(&value).is_ok());
    }
});
