//! Stage 6: (revision, kind, method) selects a precompiled root. The roots
//! of each `priv/` document are compiled once, when the gate is built.

use rustc_hash::FxHashMap;

use jsonschema::Validator;

use super::distill::{ExplainOptions, Explainer};
use super::parse::TapeJson;
use crate::protocol::{
    CompileRootError, RootKind, SchemaDocument, compile_root_for, parse_root_key, root_keys,
    root_schema,
};

/// One compiled root: the verdict (`is_valid`, the hot path) and the
/// explainer (the error path).
pub struct Root {
    pub validator: Validator<TapeJson>,
    pub explainer: Explainer<TapeJson>,
}

/// Every root of one schema document, by the naming rule.
///
/// Looked up with FxHash: the keys are fixed when the gate is built (a
/// client's method only ever looks up, never inserts), so a keyed hash buys
/// nothing here and costs a SipHash per message.
#[derive(Default)]
pub struct RootSet {
    requests: FxHashMap<Box<str>, Root>,
    notifications: FxHashMap<Box<str>, Root>,
    result: Option<Root>,
    error: Option<Root>,
}

impl RootSet {
    pub fn compile(document: SchemaDocument) -> Result<RootSet, CompileRootError> {
        let parsed = document.parse();
        let mut set = RootSet::default();
        for key in root_keys(&parsed) {
            let validator = compile_root_for::<TapeJson>(&parsed, &key)?;
            let schema = root_schema(&parsed, &key).expect("root_keys lists existing roots");
            let explainer = Explainer::new(
                &schema,
                ExplainOptions {
                    assert_formats: false,
                },
            )
            .map_err(|e| CompileRootError::Invalid {
                key: key.clone(),
                reason: e.to_string(),
            })?;
            let root = Root {
                validator,
                explainer,
            };
            match parse_root_key(&key).expect("root_keys lists roots only") {
                RootKind::Request(method) => {
                    set.requests.insert(method.into(), root);
                }
                RootKind::Notification(method) => {
                    set.notifications.insert(method.into(), root);
                }
                RootKind::Result => set.result = Some(root),
                RootKind::Error => set.error = Some(root),
            }
        }
        Ok(set)
    }

    /// The root for a message, with the method as the gate holds it.
    pub fn select(&self, kind: RootKind<'_>) -> Option<(Option<&str>, &Root)> {
        match kind {
            RootKind::Request(method) => self
                .requests
                .get_key_value(method)
                .map(|(k, r)| (Some(&**k), r)),
            RootKind::Notification(method) => self
                .notifications
                .get_key_value(method)
                .map(|(k, r)| (Some(&**k), r)),
            RootKind::Result => self.result.as_ref().map(|r| (None, r)),
            RootKind::Error => self.error.as_ref().map(|r| (None, r)),
        }
    }
}
