//! Stage 6: (revision, kind, method) selects a precompiled root. The roots
//! of each `priv/` document are compiled once, when the gate is built.

use rustc_hash::FxHashMap;
use serde_json::Value;

use jsonschema::Validator;

use super::distill::{ExplainOptions, Explainer};
use super::lane::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use super::parse::TapeJson;
use crate::protocol::{
    CompileRootError, Lane, RootKind, SchemaDocument, compile_schema, inlined_root_schema,
    parse_root_key, root_keys, root_schema,
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
        let lane = document.revision().lane();
        let mut set = RootSet::default();
        for key in root_keys(&parsed) {
            let validator =
                compile_schema::<TapeJson>(gate_root_schema(&parsed, &key, lane), &key)?;
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

/// The root `key` of `document` as the gate validates it on `lane`: inlined
/// ([`inlined_root_schema`]), and without the checks that the stages before
/// the schema have already made on every message that reaches this root.
/// Those are:
/// - a request's `id` is a string or an integer (classify: anything else
///   is an unidentified request, refused there);
/// - a request's or notification's `method` is the root's own (dispatch
///   chose the root by it);
/// - on the modern lane, a request whose `params` is an object has a
///   `_meta` object with a string protocol version and an object of client
///   capabilities (the lane's protocol-fields check, which refuses with
///   `-32602` otherwise).
///
/// Why: every keyword is one more validator call per message; these take
/// 15% of the schema verdict of a `tools/call`. A keyword is left out only
/// where it says exactly what those stages hold (the same type, the same
/// constant), so a schema that says more keeps it; and the verdicts are
/// those of the schema as written for every message that gets this far
/// (the conformance tests hold them equal on every case). Error answers are
/// explained from the schema as written.
pub fn gate_root_schema(document: &Value, key: &str, lane: Lane) -> Option<Value> {
    let mut schema = inlined_root_schema(document, key)?;
    let (id_proven, method) = match parse_root_key(key)? {
        RootKind::Request(method) => (true, method),
        RootKind::Notification(method) => (false, method),
        RootKind::Result | RootKind::Error => return Some(schema),
    };
    let proven_method = serde_json::json!({ "const": method });
    let proven_id = serde_json::json!({ "type": ["string", "integer"] });
    let mut members = vec![("method", &proven_method)];
    if id_proven {
        members.push(("id", &proven_id));
    }
    drop_proven(&mut schema, &members);
    if id_proven
        && lane == Lane::Modern
        && let Some(params) = schema.pointer_mut("/properties/params")
    {
        drop_proven(
            params,
            &[("_meta", &serde_json::json!({ "type": "object" }))],
        );
        // Only the two protocol fields: `_meta`'s own schema says more.
        if let Some(meta) = params.pointer_mut("/properties/_meta") {
            let string = serde_json::json!({ "type": "string" });
            drop_proven(meta, &[(META_PROTOCOL_VERSION, &string)]);
            drop_required(meta, &[META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]);
        }
    }
    Some(schema)
}

/// Leaves out of an object schema each member `(name, proven)` whose
/// property schema is exactly `proven`, with its name in `required`; for a
/// property that says more, only the `required` entry goes. Where
/// `additionalProperties` or `unevaluatedProperties` would then apply to
/// the member, its property schema becomes `true` instead.
fn drop_proven(schema: &mut Value, members: &[(&str, &Value)]) {
    let names: Vec<&str> = members.iter().map(|(name, _)| *name).collect();
    drop_required(schema, &names);
    let closed = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|keyword| schema.get(keyword).is_some());
    let Some(properties) = schema.get_mut("properties").and_then(Value::as_object_mut) else {
        return;
    };
    for (name, proven) in members {
        if let Some(property) = properties.get_mut(*name)
            && property == *proven
        {
            if closed {
                *property = Value::Bool(true);
            } else {
                properties.remove(*name);
            }
        }
    }
}

/// Leaves `names` out of an object schema's `required`, and the keyword
/// out when nothing is left in it.
fn drop_required(schema: &mut Value, names: &[&str]) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(required)) = object.get_mut("required") {
        required.retain(|name| !name.as_str().is_some_and(|name| names.contains(&name)));
        if required.is_empty() {
            object.remove("required");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn document() -> Value {
        json!({"$defs": {
            "request:tools/call": {
                "type": "object",
                "required": ["jsonrpc", "id", "method", "params"],
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": {"$ref": "#/$defs/RequestId"},
                    "method": {"const": "tools/call"},
                    "params": {
                        "type": "object",
                        "required": ["_meta", "name"],
                        "properties": {
                            "name": {"type": "string"},
                            "_meta": {
                                "type": "object",
                                "required": [META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION, "x"],
                                "properties": {
                                    META_PROTOCOL_VERSION: {"type": "string"},
                                    META_CLIENT_CAPABILITIES: {"type": "object", "properties": {}}
                                }
                            }
                        }
                    }
                }
            },
            "notification:notifications/initialized": {
                "type": "object",
                "required": ["jsonrpc", "method"],
                "properties": {
                    "jsonrpc": {"const": "2.0"},
                    "id": {"type": ["string", "integer"]},
                    "method": {"const": "notifications/initialized", "maxLength": 30}
                }
            },
            "response:result": {
                "type": "object",
                "required": ["id", "result"],
                "properties": {"id": {"$ref": "#/$defs/RequestId"}}
            },
            "RequestId": {"type": ["string", "integer"]}
        }})
    }

    #[test]
    fn a_request_root_leaves_out_its_id_and_method_and_the_modern_protocol_fields() {
        let schema = gate_root_schema(&document(), "request:tools/call", Lane::Modern).unwrap();
        assert_eq!(schema["required"], json!(["jsonrpc", "params"]));
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["jsonrpc", "params"]);
        let params = &schema["properties"]["params"];
        assert_eq!(params["required"], json!(["name"]));
        let meta = &params["properties"]["_meta"];
        // What the protocol-fields check does not hold stays.
        assert_eq!(meta["required"], json!(["x"]));
        let meta_names: Vec<&String> = meta["properties"].as_object().unwrap().keys().collect();
        assert_eq!(meta_names, [META_CLIENT_CAPABILITIES]);
    }

    #[test]
    fn the_legacy_lane_keeps_the_protocol_fields() {
        let schema = gate_root_schema(&document(), "request:tools/call", Lane::Legacy).unwrap();
        assert_eq!(schema["required"], json!(["jsonrpc", "params"]));
        let params = &schema["properties"]["params"];
        assert_eq!(params["required"], json!(["_meta", "name"]));
        assert_eq!(
            params["properties"]["_meta"],
            document()["$defs"]["request:tools/call"]["properties"]["params"]["properties"]["_meta"]
        );
    }

    #[test]
    fn a_property_that_says_more_than_the_stages_hold_stays() {
        // A notification's method schema here also bounds its length, and a
        // notification's id is not the classify stage's to hold.
        let schema = gate_root_schema(
            &document(),
            "notification:notifications/initialized",
            Lane::Modern,
        )
        .unwrap();
        assert_eq!(schema["required"], json!(["jsonrpc"]));
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["id", "jsonrpc", "method"]);
    }

    #[test]
    fn a_member_of_a_closed_object_stays_named() {
        let mut document = document();
        document["$defs"]["request:tools/call"]["additionalProperties"] = json!(false);
        let schema = gate_root_schema(&document, "request:tools/call", Lane::Modern).unwrap();
        assert_eq!(schema["properties"]["id"], json!(true));
        assert_eq!(schema["properties"]["method"], json!(true));
        let validator = compile_schema::<jsonschema::json::SerdeJson>(Some(schema), "x").unwrap();
        let mut message = json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "t", "_meta": {"x": 1}}
        });
        assert!(validator.is_valid(&message));
        message["other"] = json!(1);
        assert!(!validator.is_valid(&message));
    }

    #[test]
    fn answer_roots_are_only_inlined() {
        let schema = gate_root_schema(&document(), "response:result", Lane::Legacy).unwrap();
        assert_eq!(
            schema,
            inlined_root_schema(&document(), "response:result").unwrap()
        );
        assert_eq!(
            schema["properties"]["id"],
            json!({"type": ["string", "integer"]})
        );
    }

    #[test]
    fn every_root_of_the_served_documents_compiles_as_the_gate_compiles_it() {
        for document in SchemaDocument::ALL {
            let parsed = document.parse();
            let lane = document.revision().lane();
            for key in root_keys(&parsed) {
                let schema = gate_root_schema(&parsed, &key, lane);
                assert!(schema.is_some(), "{key}");
                compile_schema::<TapeJson>(schema, &key).unwrap();
            }
        }
    }
}
