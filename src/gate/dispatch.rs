//! Stage 6: (revision, kind, method) selects a precompiled root. The roots
//! of each `priv/` document are compiled once, when the gate is built.

use serde_json::Value;

use jsonschema::Validator;

use super::binding::name_member;
use super::lane::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use crate::classify::Classified;
use crate::distill::{ExplainOptions, Explainer};
use crate::parse::{NodeKind, TapeJson, TapeNode, same_text};
use crate::protocol::{
    CompileRootError, Lane, RootKind, SchemaDocument, compile_schema, inlined_root_schema,
    parse_root_key, root_keys, root_schema,
};

/// One compiled root: the verdict (`is_valid`, the hot path) and the
/// explainer (the error path).
pub struct Root {
    /// The verdict, over what [`Root::reads`] names.
    pub validator: Validator<TapeJson>,
    /// Which value of the message `validator` takes.
    pub reads: Reads,
    pub explainer: Explainer<TapeJson>,
    /// What the gate checks itself before `validator`'s verdict.
    pub prechecks: Prechecks,
}

/// The value of a message a root's validator takes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reads {
    /// The whole message.
    Message,
    /// Its `params` (absent: nothing to hold). A root that says nothing
    /// but `params`' schema once the stages before have done their part
    /// ([`what_it_reads`]) is compiled as that schema: the verdict then
    /// does not look up every member of the message to find the one it
    /// checks.
    Params,
}

impl Root {
    /// The root's verdict on `message`, classified as `classified` (the
    /// prechecks aside).
    pub fn is_valid(&self, message: TapeNode<'_>, classified: &Classified<'_>) -> bool {
        match self.reads {
            Reads::Message => self.validator.is_valid(message) && !self.refuses_wide(message),
            Reads::Params => classified
                .params
                .is_none_or(|params| self.validator.is_valid(params) && !self.refuses_wide(params)),
        }
    }

    /// Whether `instance` holds an integer beyond 64 bits that its float
    /// does not hold exactly, where the schema compares numbers that the
    /// float may be judged otherwise by than the exact value: refused
    /// whatever the validator said (fail closed, ARCHITECTURE.md, "The
    /// value gate").
    #[inline]
    fn refuses_wide(&self, instance: TapeNode<'_>) -> bool {
        self.explainer.compares_wide_integers() && instance.holds_wide_integer()
    }
}

/// Facts about a message that the gate reads while classifying it and
/// binding its headers, checked before a root's verdict in place of the
/// keywords [`gate_root_schema`] left out of that root for them. Each is
/// set only where the root as written requires exactly that fact, so a
/// message that fails one is refused by the root as written, and is
/// explained by it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Prechecks {
    /// `jsonrpc` is the string `"2.0"`.
    pub jsonrpc: bool,
    /// `params` holds the method's named member (`name` or `uri`, the one
    /// `Mcp-Name` mirrors) as a string.
    pub named: bool,
    /// `params` is present.
    pub params: bool,
    /// `params`, where present, is an object.
    pub params_object: bool,
}

impl Prechecks {
    /// Whether `message`, whose named member is `named`, holds them.
    pub fn hold(&self, message: &Classified<'_>, named: Option<TapeNode<'_>>) -> bool {
        (!self.jsonrpc || message.jsonrpc_2_0)
            && (!self.named || named.is_some_and(|member| member.as_str().is_some()))
            && (!self.params || message.params.is_some())
            && (!self.params_object
                || message
                    .params
                    .is_none_or(|params| params.kind() == NodeKind::Object))
    }
}

/// A root as the gate compiles it, and what the gate checks before it.
pub struct GateRoot {
    pub schema: Value,
    pub prechecks: Prechecks,
}

/// Every root of one schema document, by the naming rule.
#[derive(Default)]
pub struct RootSet {
    requests: Methods<Root>,
    notifications: Methods<Root>,
    result: Option<Root>,
    error: Option<Root>,
}

/// Values by method name, fixed when the gate is built, read by the
/// name's length first: a client's method only ever looks up, and the
/// few names of one length are told apart by [`same_text`]. (A hash map
/// hashed the name and called `memcmp` to confirm it, about twice the
/// instructions for the names MCP has.)
struct Methods<T> {
    /// By name length, then the later given first.
    entries: Vec<(Box<str>, T)>,
    /// `entries[starts[n]..starts[n + 1]]` hold the names of `n` bytes;
    /// a name longer than every entry's is in none.
    starts: Vec<usize>,
}

impl<T> Default for Methods<T> {
    fn default() -> Self {
        Methods::new(Vec::new())
    }
}

impl<T> Methods<T> {
    /// The table of `entries`; of a name given twice, the later value is
    /// found (reversed, then sorted stably, it comes first).
    fn new(mut entries: Vec<(Box<str>, T)>) -> Self {
        entries.reverse();
        entries.sort_by_key(|(name, _)| name.len());
        let longest = entries.last().map_or(0, |(name, _)| name.len());
        let starts = (0..=longest + 1)
            .map(|len| entries.partition_point(|(name, _)| name.len() < len))
            .collect();
        Methods { entries, starts }
    }

    /// The entry named `name`, with the name as held.
    fn get(&self, name: &str) -> Option<(&str, &T)> {
        let from = *self.starts.get(name.len())?;
        let to = *self.starts.get(name.len() + 1)?;
        self.entries[from..to]
            .iter()
            .find(|(held, _)| same_text(held, name))
            .map(|(held, value)| (&**held, value))
    }
}

impl RootSet {
    pub fn compile(document: SchemaDocument) -> Result<RootSet, CompileRootError> {
        let parsed = document.parse();
        let lane = document.revision().lane();
        let mut set = RootSet::default();
        let (mut requests, mut notifications) = (Vec::new(), Vec::new());
        for key in root_keys(&parsed) {
            let gate_root = gate_root_schema(&parsed, &key, lane);
            let prechecks = gate_root.as_ref().map(|r| r.prechecks).unwrap_or_default();
            let (schema, reads) = match gate_root.map(|root| what_it_reads(root.schema)) {
                Some((schema, reads)) => (Some(schema), reads),
                None => (None, Reads::Message),
            };
            let validator = compile_schema::<TapeJson>(schema, &key)?;
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
                reads,
                explainer,
                prechecks,
            };
            match parse_root_key(&key).expect("root_keys lists roots only") {
                RootKind::Request(method) => requests.push((method.into(), root)),
                RootKind::Notification(method) => notifications.push((method.into(), root)),
                RootKind::Result => set.result = Some(root),
                RootKind::Error => set.error = Some(root),
            }
        }
        set.requests = Methods::new(requests);
        set.notifications = Methods::new(notifications);
        Ok(set)
    }

    /// The root for a message, with the method as the gate holds it.
    pub fn select(&self, kind: RootKind<'_>) -> Option<(Option<&str>, &Root)> {
        match kind {
            RootKind::Request(method) => self
                .requests
                .get(method)
                .map(|(name, root)| (Some(name), root)),
            RootKind::Notification(method) => self
                .notifications
                .get(method)
                .map(|(name, root)| (Some(name), root)),
            RootKind::Result => self.result.as_ref().map(|r| (None, r)),
            RootKind::Error => self.error.as_ref().map(|r| (None, r)),
        }
    }
}

/// The root `key` of `document` as the gate validates it on `lane`: inlined
/// (`inlined_root_schema`), and without the checks that the stages before
/// the schema have already made on every message that reaches this root,
/// or that the gate makes itself just before the verdict ([`Prechecks`]).
/// Those are:
/// - a request's `id` is a string or an integer (classify: anything else
///   is an unidentified request, refused there);
/// - a request's or notification's `method` is the root's own (dispatch
///   chose the root by it);
/// - on the modern lane, a request whose `params` is an object has a
///   `_meta` object with a string protocol version and an object of client
///   capabilities (the lane's protocol-fields check, which refuses with
///   `-32602` otherwise), so `_meta`'s `"type": "object"` goes too;
/// - a request or notification is an object (classify: anything else is
///   refused there), so its root's `"type": "object"` goes;
/// - `jsonrpc` is `"2.0"`, `params` is present, is an object and holds the
///   method's named member as a string (prechecks: classify and the header
///   binding read all four).
///
/// Why: every keyword is one more validator call per message; these take
/// about a fifth of the schema verdict of a `tools/call`. A keyword is left
/// out only where it says exactly what those stages hold (the same type,
/// the same constant), so a schema that says more keeps it; and the
/// verdicts are those of the schema as written for every message that gets
/// this far (the conformance tests hold them equal on every case). Error
/// answers are explained from the schema as written.
pub fn gate_root_schema(document: &Value, key: &str, lane: Lane) -> Option<GateRoot> {
    let mut schema = inlined_root_schema(document, key)?;
    let mut prechecks = Prechecks::default();
    let (id_proven, method) = match parse_root_key(key)? {
        RootKind::Request(method) => (true, method),
        RootKind::Notification(method) => (false, method),
        RootKind::Result | RootKind::Error => return Some(GateRoot { schema, prechecks }),
    };
    let proven_method = serde_json::json!({ "const": method });
    let proven_id = serde_json::json!({ "type": ["string", "integer"] });
    let mut members = vec![("method", &proven_method)];
    if id_proven {
        members.push(("id", &proven_id));
    }
    drop_proven(&mut schema, &members);
    drop_object_type(&mut schema);
    prechecks.jsonrpc = drop_required_exactly(
        &mut schema,
        "jsonrpc",
        &serde_json::json!({ "const": "2.0" }),
    );
    if let Some(member) = name_member(method).filter(|_| requires(&schema, "params"))
        && let Some(params) = schema.pointer_mut("/properties/params")
    {
        prechecks.named =
            drop_required_exactly(params, member, &serde_json::json!({ "type": "string" }));
    }
    // Only the `required` entry and the type: the property's schema says
    // more.
    prechecks.params = requires(&schema, "params");
    drop_required(&mut schema, &["params"]);
    if let Some(params) = schema.pointer_mut("/properties/params") {
        prechecks.params_object = drop_object_type(params);
    }
    if id_proven
        && lane == Lane::Modern
        && let Some(params) = schema.pointer_mut("/properties/params")
    {
        drop_proven(
            params,
            &[("_meta", &serde_json::json!({ "type": "object" }))],
        );
        // Only the two protocol fields, and that `_meta` is an object:
        // `_meta`'s own schema says more.
        if let Some(meta) = params.pointer_mut("/properties/_meta") {
            let string = serde_json::json!({ "type": "string" });
            drop_proven(meta, &[(META_PROTOCOL_VERSION, &string)]);
            drop_required(meta, &[META_PROTOCOL_VERSION, META_CLIENT_CAPABILITIES]);
            drop_object_type(meta);
        }
    }
    Some(GateRoot { schema, prechecks })
}

/// What the gate compiles of a root (from [`gate_root_schema`]) and which
/// value of a message it reads: `params`' schema as a root of its own, its
/// document's `$defs` and `$schema` beside it, when the root says nothing
/// else (only `properties` with `params` alone: no `required`, no `type`,
/// nothing about other members) and `params`' schema refers only into
/// `$defs`; then a message holds the root exactly when it has no `params`
/// or its `params` holds that schema. Otherwise the root, unchanged.
pub fn what_it_reads(schema: Value) -> (Value, Reads) {
    match params_only(schema) {
        Ok(params) => (params, Reads::Params),
        Err(schema) => (schema, Reads::Message),
    }
}

/// [`what_it_reads`]: `Ok` with `params`' schema, or `Err` with `schema`.
fn params_only(schema: Value) -> Result<Value, Value> {
    let Value::Object(root) = &schema else {
        return Err(schema);
    };
    let says_nothing_else = root.keys().all(|keyword| {
        matches!(
            keyword.as_str(),
            "properties" | "$defs" | "$schema" | "$comment"
        )
    });
    let params = root
        .get("properties")
        .and_then(Value::as_object)
        .filter(|properties| properties.len() == 1)
        .and_then(|properties| properties.get("params"));
    // Every reference, in `params`' schema and in `$defs`, resolves alike
    // from either root.
    let defs_stay = root.get("$defs").is_none_or(refers_into_defs);
    let Some(Value::Object(params)) =
        params.filter(|params| says_nothing_else && defs_stay && refers_into_defs(params))
    else {
        return Err(schema);
    };
    if ["$defs", "$id", "$schema"]
        .iter()
        .any(|keyword| params.contains_key(*keyword))
    {
        return Err(schema);
    }
    let mut own = params.clone();
    for keyword in ["$defs", "$schema"] {
        if let Some(value) = root.get(keyword) {
            own.insert(keyword.to_owned(), value.clone());
        }
    }
    Ok(Value::Object(own))
}

/// Whether every `$ref` in `schema` (and every `$id`, `$anchor` and
/// dynamic reference, which would move where one resolves) is a plain
/// reference into the document's `$defs`, or there are none.
fn refers_into_defs(schema: &Value) -> bool {
    match schema {
        Value::Object(object) => object
            .iter()
            .all(|(keyword, value)| match keyword.as_str() {
                "$ref" => value
                    .as_str()
                    .is_some_and(|target| target.starts_with("#/$defs/")),
                "$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef" => false,
                _ => refers_into_defs(value),
            }),
        Value::Array(items) => items.iter().all(refers_into_defs),
        _ => true,
    }
}

/// Leaves out a schema's `"type": "object"` (where the stages before have
/// proven the instance an object, or a precheck will); whether it did.
fn drop_object_type(schema: &mut Value) -> bool {
    schema
        .as_object_mut()
        .filter(|object| object.get("type") == Some(&Value::from("object")))
        .and_then(|object| object.remove("type"))
        .is_some()
}

/// Whether an object schema lists `name` in `required`.
fn requires(schema: &Value, name: &str) -> bool {
    schema
        .get("required")
        .and_then(Value::as_array)
        .is_some_and(|required| required.iter().any(|item| item == name))
}

/// Leaves member `name` out of an object schema when the schema requires it
/// and its property schema is exactly `held` (a precheck will hold it);
/// whether it did.
fn drop_required_exactly(schema: &mut Value, name: &str, held: &Value) -> bool {
    let exactly = requires(schema, name)
        && schema
            .get("properties")
            .and_then(|properties| properties.get(name))
            == Some(held);
    if exactly {
        drop_proven(schema, &[(name, held)]);
    }
    exactly
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
    use jsonschema::json::SerdeJson;
    use serde_json::json;

    #[test]
    fn the_method_table_finds_each_name_and_no_other() {
        let names = [
            "ping",
            "tools/call",
            "tools/list",
            "initialize",
            "resources/templates/list",
            "",
        ];
        let table = Methods::new(
            names
                .iter()
                .enumerate()
                .map(|(at, name)| (Box::from(*name), at))
                .collect(),
        );
        for (at, name) in names.iter().enumerate() {
            assert_eq!(table.get(name), Some((*name, &at)), "{name:?}");
        }
        // Same length, one byte off at either end or in the middle; a
        // length no entry has; longer than every entry.
        for absent in [
            "tools/calm",
            "uools/call",
            "tools-call",
            "pong",
            "tools",
            "resources/templates/listx",
            "resources/templates/list/and/more",
        ] {
            assert_eq!(table.get(absent), None, "{absent:?}");
        }
        assert_eq!(Methods::<u8>::default().get("ping"), None);
    }

    #[test]
    fn a_method_given_twice_keeps_its_later_value() {
        let table = Methods::new(vec![
            (Box::from("tools/call"), 1),
            (Box::from("ping"), 2),
            (Box::from("tools/call"), 3),
        ]);
        assert_eq!(table.get("tools/call"), Some(("tools/call", &3)));
        assert_eq!(table.get("ping"), Some(("ping", &2)));
    }

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

    fn gate_root(document: &Value, key: &str, lane: Lane) -> GateRoot {
        gate_root_schema(document, key, lane).unwrap()
    }

    #[test]
    fn a_request_root_leaves_out_its_id_and_method_and_the_modern_protocol_fields() {
        let GateRoot { schema, prechecks } =
            gate_root(&document(), "request:tools/call", Lane::Modern);
        assert_eq!(schema.get("required"), None);
        assert_eq!(schema.get("type"), None);
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["params"]);
        let params = &schema["properties"]["params"];
        assert_eq!(params.get("required"), None);
        let meta = &params["properties"]["_meta"];
        // What the protocol-fields check does not hold stays.
        assert_eq!(meta["required"], json!(["x"]));
        assert_eq!(meta.get("type"), None);
        let meta_names: Vec<&String> = meta["properties"].as_object().unwrap().keys().collect();
        assert_eq!(meta_names, [META_CLIENT_CAPABILITIES]);
        assert_eq!(
            prechecks,
            Prechecks {
                jsonrpc: true,
                named: true,
                params: true,
                params_object: true
            }
        );
    }

    #[test]
    fn the_legacy_lane_keeps_the_protocol_fields() {
        let GateRoot { schema, prechecks } =
            gate_root(&document(), "request:tools/call", Lane::Legacy);
        assert_eq!(schema.get("required"), None);
        let params = &schema["properties"]["params"];
        assert_eq!(params["required"], json!(["_meta"]));
        assert_eq!(
            params["properties"]["_meta"],
            document()["$defs"]["request:tools/call"]["properties"]["params"]["properties"]["_meta"]
        );
        assert!(
            prechecks.jsonrpc && prechecks.named && prechecks.params && prechecks.params_object
        );
        assert_eq!(params.get("type"), None);
    }

    #[test]
    fn a_property_that_says_more_than_the_stages_hold_stays() {
        // A notification's method schema here also bounds its length, and a
        // notification's id is not the classify stage's to hold.
        let GateRoot { schema, prechecks } = gate_root(
            &document(),
            "notification:notifications/initialized",
            Lane::Modern,
        );
        assert_eq!(schema.get("required"), None);
        let names: Vec<&String> = schema["properties"].as_object().unwrap().keys().collect();
        assert_eq!(names, ["id", "method"]);
        assert_eq!(
            prechecks,
            Prechecks {
                jsonrpc: true,
                named: false,
                params: false,
                params_object: false
            }
        );
    }

    #[test]
    fn a_precheck_is_set_only_where_the_root_requires_exactly_its_fact() {
        let mut document = document();
        let root = &mut document["$defs"]["request:tools/call"];
        root["properties"]["jsonrpc"] = json!({"enum": ["2.0"]});
        root["properties"]["params"]["properties"]["name"] =
            json!({"type": "string", "minLength": 1});
        let GateRoot { schema, prechecks } =
            gate_root(&document, "request:tools/call", Lane::Modern);
        assert_eq!(
            prechecks,
            Prechecks {
                params: true,
                params_object: true,
                ..Prechecks::default()
            }
        );
        assert_eq!(schema["required"], json!(["jsonrpc"]));
        assert_eq!(schema["properties"]["params"]["required"], json!(["name"]));
        // Not required: nothing to hold either.
        let mut document = self::document();
        document["$defs"]["request:tools/call"]["required"] = json!(["id", "method"]);
        let GateRoot { schema, prechecks } =
            gate_root(&document, "request:tools/call", Lane::Modern);
        assert!(!prechecks.jsonrpc && !prechecks.named && !prechecks.params);
        assert!(prechecks.params_object);
        assert_eq!(schema["properties"]["jsonrpc"], json!({"const": "2.0"}));
    }

    #[test]
    fn a_member_of_a_closed_object_stays_named() {
        let mut document = document();
        document["$defs"]["request:tools/call"]["additionalProperties"] = json!(false);
        let GateRoot { schema, prechecks } =
            gate_root(&document, "request:tools/call", Lane::Modern);
        assert_eq!(schema["properties"]["id"], json!(true));
        assert_eq!(schema["properties"]["jsonrpc"], json!(true));
        assert!(prechecks.jsonrpc);
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
    fn a_root_that_says_only_what_params_holds_reads_params_alone() {
        let mut document = document();
        document["$defs"]["request:tools/call"]["properties"]["params"]["properties"]["tag"] =
            json!({"$ref": "#/$defs/RequestId"});
        let schema = gate_root(&document, "request:tools/call", Lane::Modern).schema;
        let whole = compile_schema::<SerdeJson>(Some(schema.clone()), "x").unwrap();
        let (own, reads) = what_it_reads(schema.clone());
        assert_eq!(reads, Reads::Params);
        assert_eq!(
            own["properties"],
            schema["properties"]["params"]["properties"]
        );
        assert_eq!(own["$defs"], schema["$defs"]);
        let params = compile_schema::<SerdeJson>(Some(own), "x").unwrap();
        for message in [
            json!({"params": {"_meta": {"x": 1}, "tag": "t"}}),
            json!({"params": {"_meta": {"x": 1}, "tag": 1.5}}),
            json!({"params": {"_meta": {}}}),
            json!({"params": {"_meta": 3}}),
            json!({"params": 1}),
            json!({"id": 1, "other": {"_meta": 3}}),
        ] {
            let read = message.get("params");
            assert_eq!(
                read.is_none_or(|params_value| params.is_valid(params_value)),
                whole.is_valid(&message),
                "{message}"
            );
        }
    }

    #[test]
    fn a_root_that_says_more_than_params_schema_reads_the_whole_message() {
        let base = gate_root(&document(), "request:tools/call", Lane::Modern).schema;
        assert_eq!(what_it_reads(base.clone()).1, Reads::Params);
        let mut variants = Vec::new();
        for (keyword, value) in [
            ("required", json!(["params"])),
            ("type", json!("object")),
            ("additionalProperties", json!(false)),
            ("minProperties", json!(2)),
        ] {
            let mut schema = base.clone();
            schema[keyword] = value;
            variants.push(schema);
        }
        let mut schema = base.clone();
        schema["properties"]["id"] = json!({"type": "integer"});
        variants.push(schema);
        // References that would resolve elsewhere from another root.
        let mut schema = base.clone();
        schema["properties"]["params"]["properties"]["p"] = json!({"$ref": "#/properties/params"});
        variants.push(schema);
        let mut schema = base.clone();
        schema["properties"]["params"]["$id"] = json!("urn:example:params");
        variants.push(schema);
        let mut schema = base.clone();
        schema["properties"]["params"]["$defs"] = json!({"Own": {}});
        variants.push(schema);
        let mut schema = base.clone();
        schema["properties"]["params"]["$schema"] =
            json!("http://json-schema.org/draft-07/schema#");
        variants.push(schema);
        let mut schema = base;
        schema["$defs"]["Back"] = json!({"$ref": "#/properties/params"});
        variants.push(schema);
        for schema in variants {
            assert_eq!(
                what_it_reads(schema.clone()),
                (schema.clone(), Reads::Message),
                "{schema}"
            );
        }
        // A notification's root here says what `id` and `method` hold.
        let notification = gate_root(
            &document(),
            "notification:notifications/initialized",
            Lane::Modern,
        )
        .schema;
        assert_eq!(what_it_reads(notification).1, Reads::Message);
    }

    #[test]
    fn answer_roots_are_only_inlined() {
        let GateRoot { schema, prechecks } =
            gate_root(&document(), "response:result", Lane::Legacy);
        assert_eq!(prechecks, Prechecks::default());
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
                let gate_root = gate_root_schema(&parsed, &key, lane);
                assert!(gate_root.is_some(), "{key}");
                compile_schema::<TapeJson>(gate_root.map(|r| r.schema), &key).unwrap();
            }
        }
        // The modern `tools/call` root, the call every gate sees most, reads
        // `params` alone.
        let roots = RootSet::compile(SchemaDocument::Mcp2026_07_28).unwrap();
        let (_, root) = roots.select(RootKind::Request("tools/call")).unwrap();
        assert_eq!(root.reads, Reads::Params);
    }
}
