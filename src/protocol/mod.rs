//! The MCP protocol schemas in `priv/` (one JSON Schema 2020-12 document per
//! schema revision, embedded in the binary) and the one rule that names the
//! root validating a message.
//!
//! Naming rule (also stated in each document's `$comment`): a client request
//! with method `M` is validated by `$defs["request:M"]`, a client
//! notification by `$defs["notification:M"]`, and — on the legacy lane only —
//! a client's answer to a server request by `$defs["response:result"]` or
//! `$defs["response:error"]`. Every other key is a shared definition.

use std::fmt;

use serde_json::Value;

/// A protocol revision the gateway can serve.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Revision {
    /// 2026-07-28: stateless, `_meta` protocol fields on every request.
    V2026_07_28,
    /// 2025-11-25: initialize handshake, sessions owned by the upstream.
    V2025_11_25,
    /// 2025-06-18, validated with the 2025-11-25 document (a superset for
    /// client-sent messages).
    V2025_06_18,
    /// 2025-03-26, the revision a request without `MCP-Protocol-Version`
    /// is taken to speak; validated with the 2025-11-25 document.
    V2025_03_26,
}

/// The two families of revisions, each with its own transport rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Lane {
    /// 2026-07-28: every request stands alone, its revision and
    /// capabilities in `_meta`, its method and name mirrored in headers.
    Modern,
    /// The 2025 revisions: an initialize handshake, sessions the upstream
    /// owns, a client's answers to server requests.
    Legacy,
}

/// One schema document in `priv/`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum SchemaDocument {
    /// `priv/mcp-2026-07-28.json`: the modern lane.
    Mcp2026_07_28,
    /// `priv/mcp-2025-11-25.json`: every revision of the legacy lane.
    Mcp2025_11_25,
}

impl Revision {
    /// Every revision the gateway can serve, newest first (a gate serves
    /// them all unless its configuration narrows them).
    pub const ALL: [Revision; 4] = [
        Revision::V2026_07_28,
        Revision::V2025_11_25,
        Revision::V2025_06_18,
        Revision::V2025_03_26,
    ];

    /// The revision assumed when a request names none (per the transport spec).
    pub const DEFAULT_WITHOUT_HEADER: Revision = Revision::V2025_03_26;

    /// The revision as written in `MCP-Protocol-Version`, e.g. `"2026-07-28"`.
    pub fn as_str(self) -> &'static str {
        match self {
            Revision::V2026_07_28 => "2026-07-28",
            Revision::V2025_11_25 => "2025-11-25",
            Revision::V2025_06_18 => "2025-06-18",
            Revision::V2025_03_26 => "2025-03-26",
        }
    }

    /// The revision `text` names (`None`: not one served).
    pub fn parse(text: &str) -> Option<Revision> {
        Revision::ALL.into_iter().find(|r| r.as_str() == text)
    }

    /// The lane whose transport rules the revision follows.
    pub fn lane(self) -> Lane {
        match self {
            Revision::V2026_07_28 => Lane::Modern,
            _ => Lane::Legacy,
        }
    }
}

impl fmt::Display for Revision {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

impl SchemaDocument {
    /// Both documents.
    pub const ALL: [SchemaDocument; 2] =
        [SchemaDocument::Mcp2026_07_28, SchemaDocument::Mcp2025_11_25];

    /// The revision the document was written for.
    pub fn revision(self) -> Revision {
        match self {
            SchemaDocument::Mcp2026_07_28 => Revision::V2026_07_28,
            SchemaDocument::Mcp2025_11_25 => Revision::V2025_11_25,
        }
    }

    /// The document's text, as embedded from `priv/`.
    pub fn text(self) -> &'static str {
        match self {
            SchemaDocument::Mcp2026_07_28 => include_str!("../../priv/mcp-2026-07-28.json"),
            SchemaDocument::Mcp2025_11_25 => include_str!("../../priv/mcp-2025-11-25.json"),
        }
    }

    /// The parsed document. The embedded text is checked by the tests, so a
    /// parse failure here is a build defect, not a runtime condition.
    pub fn parse(self) -> Value {
        serde_json::from_str(self.text()).expect("priv/ schema documents are valid JSON")
    }
}

/// What a client-sent message is, as far as choosing its root goes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RootKind<'a> {
    /// A request with this method.
    Request(&'a str),
    /// A notification with this method.
    Notification(&'a str),
    /// A client's result for a server request (legacy lane).
    Result,
    /// A client's error answer to a server request (legacy lane).
    Error,
}

impl RootKind<'_> {
    /// The `$defs` key of the root, by the naming rule.
    pub fn key(&self) -> String {
        match self {
            RootKind::Request(method) => format!("{REQUEST_PREFIX}{method}"),
            RootKind::Notification(method) => format!("{NOTIFICATION_PREFIX}{method}"),
            RootKind::Result => RESULT_KEY.to_owned(),
            RootKind::Error => ERROR_KEY.to_owned(),
        }
    }
}

const REQUEST_PREFIX: &str = "request:";
const NOTIFICATION_PREFIX: &str = "notification:";
const RESULT_KEY: &str = "response:result";
const ERROR_KEY: &str = "response:error";

/// A root's `$defs` key read back into what it validates; `None` for a
/// shared definition.
pub fn parse_root_key(key: &str) -> Option<RootKind<'_>> {
    if let Some(method) = key.strip_prefix(REQUEST_PREFIX) {
        Some(RootKind::Request(method))
    } else if let Some(method) = key.strip_prefix(NOTIFICATION_PREFIX) {
        Some(RootKind::Notification(method))
    } else if key == RESULT_KEY {
        Some(RootKind::Result)
    } else if key == ERROR_KEY {
        Some(RootKind::Error)
    } else {
        None
    }
}

/// The keys of every root in a parsed document, in document order.
pub fn root_keys(document: &Value) -> Vec<String> {
    document["$defs"]
        .as_object()
        .map(|defs| {
            defs.keys()
                .filter(|key| parse_root_key(key).is_some())
                .cloned()
                .collect()
        })
        .unwrap_or_default()
}

/// A schema that validates exactly the root `key` of `document`: the
/// document with a top-level `$ref` to that root, so that every `$ref`
/// inside resolves against the same `$defs`. `None` if there is no such root.
pub fn root_schema(document: &Value, key: &str) -> Option<Value> {
    document["$defs"].get(key)?;
    let mut schema = document.clone();
    let object = schema.as_object_mut()?;
    object.insert(
        "$ref".to_owned(),
        Value::String(format!("#/$defs/{}", escape_pointer_token(key))),
    );
    Some(schema)
}

/// The same verdicts as [`root_schema`], with every bare `$ref` to a shared
/// definition replaced by a copy of that definition (except where a
/// definition refers to itself, directly or not, which stays a `$ref`), and
/// `"type": "string"` left out beside a string `const` (which implies it).
/// Why: each `$ref` and each keyword is one more validator to call for
/// every value that passes it; a `tools/call` is validated with 10 fewer
/// calls. The copies change no verdict: these documents use no `$id`,
/// anchors, dynamic references or `unevaluated*` keywords, the only things
/// that could tell a copy from a reference. (Error answers are explained
/// from the schema as written, so they name the keywords it has.)
pub fn inlined_root_schema(document: &Value, key: &str) -> Option<Value> {
    let mut root = document["$defs"].get(key)?.clone();
    let mut open = vec![format!("#/$defs/{}", escape_pointer_token(key))];
    inline_refs(&mut root, document, &mut open);
    let Value::Object(object) = &mut root else {
        return root_schema(document, key);
    };
    for name in ["$schema", "$defs"] {
        if let Some(value) = document.get(name) {
            object.insert(name.to_owned(), value.clone());
        }
    }
    Some(root)
}

/// Replaces each bare `{"$ref": "#/$defs/…"}` below `schema` by the
/// (inlined) schema it points to in `document`, unless that reference is in
/// `open` (being inlined already), and drops a `"type": "string"` that a
/// string `const` implies. Keywords whose values are data, not schemas, are
/// left alone.
fn inline_refs(schema: &mut Value, document: &Value, open: &mut Vec<String>) {
    match schema {
        Value::Object(object) => {
            if object.len() == 1
                && let Some(reference) = object.get("$ref").and_then(Value::as_str)
                && let Some(pointer) = reference
                    .strip_prefix('#')
                    .filter(|pointer| pointer.starts_with("/$defs/"))
                && !open.iter().any(|being| being == reference)
                && let Some(target) = document.pointer(pointer)
            {
                let mut copy = target.clone();
                open.push(reference.to_owned());
                inline_refs(&mut copy, document, open);
                open.pop();
                *schema = copy;
                return;
            }
            if object.get("const").is_some_and(Value::is_string)
                && object.get("type").and_then(Value::as_str) == Some("string")
            {
                object.remove("type");
            }
            for (keyword, value) in object.iter_mut() {
                if !matches!(
                    keyword.as_str(),
                    "const" | "enum" | "default" | "examples" | "$defs"
                ) {
                    inline_refs(value, document, open);
                }
            }
        }
        Value::Array(items) => {
            for item in items {
                inline_refs(item, document, open);
            }
        }
        _ => {}
    }
}

/// Compiles the root `key` of `document` for serde_json instances, as the
/// gate compiles it (with its `$ref`s inlined).
pub fn compile_root(
    document: &Value,
    key: &str,
) -> Result<jsonschema::Validator, CompileRootError> {
    compile_root_for::<jsonschema::json::SerdeJson>(document, key)
}

/// Compiles the root `key` of `document` for instances in the JSON
/// representation `F`, with its `$ref`s inlined ([`inlined_root_schema`]).
/// Formats stay annotations, as the specification's own schema leaves them.
pub fn compile_root_for<F: jsonschema::json::Json>(
    document: &Value,
    key: &str,
) -> Result<jsonschema::Validator<F>, CompileRootError> {
    compile_schema(inlined_root_schema(document, key), key)
}

/// Compiles the root `key` of `document` as written ([`root_schema`]), for
/// serde_json instances: what a user would build with `jsonschema` alone
/// (the benches' baseline), and the reference the inlined roots are held to.
pub fn compile_root_as_written(
    document: &Value,
    key: &str,
) -> Result<jsonschema::Validator, CompileRootError> {
    compile_schema(root_schema(document, key), key)
}

/// Compiles `schema`, the root `key` in some form (`None`: there is no
/// such root), for instances in the JSON representation `F`.
pub fn compile_schema<F: jsonschema::json::Json>(
    schema: Option<Value>,
    key: &str,
) -> Result<jsonschema::Validator<F>, CompileRootError> {
    let schema = schema.ok_or_else(|| CompileRootError::NoSuchRoot {
        key: key.to_owned(),
    })?;
    jsonschema::options_for::<F>()
        .with_draft(jsonschema::Draft::Draft202012)
        .build(&schema)
        .map_err(|error| CompileRootError::Invalid {
            key: key.to_owned(),
            reason: error.to_string(),
        })
}

/// A root that could not be compiled. The embedded documents' roots all
/// compile (the tests hold it), so [`crate::Gate::new`] meeting one is a
/// build defect, not a configuration to fix.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CompileRootError {
    /// The document has no root by this name.
    NoSuchRoot {
        /// The `$defs` key asked for.
        key: String,
    },
    /// The root is there but `jsonschema` refuses it.
    Invalid {
        /// The `$defs` key of the root.
        key: String,
        /// What `jsonschema` said.
        reason: String,
    },
}

impl fmt::Display for CompileRootError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CompileRootError::NoSuchRoot { key } => write!(f, "no root named {key:?}"),
            CompileRootError::Invalid { key, reason } => {
                write!(f, "root {key:?} does not compile: {reason}")
            }
        }
    }
}

impl std::error::Error for CompileRootError {}

/// RFC 6901 escaping of one reference token (`~` then `/`), as used inside a
/// `$ref` fragment.
fn escape_pointer_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_document_parses_and_every_root_compiles() {
        for document in SchemaDocument::ALL {
            let parsed = document.parse();
            let keys = root_keys(&parsed);
            assert!(!keys.is_empty(), "{document:?} has no roots");
            for key in keys {
                compile_root(&parsed, &key).unwrap_or_else(|e| panic!("{document:?}: {e}"));
            }
        }
    }

    #[test]
    fn no_document_uses_a_keyword_that_could_tell_an_inlined_ref_from_a_ref() {
        fn walk(value: &Value, found: &mut Vec<String>) {
            match value {
                Value::Object(object) => {
                    for (keyword, inner) in object {
                        if matches!(
                            keyword.as_str(),
                            "$id" | "$anchor" | "$dynamicRef" | "$dynamicAnchor" | "$recursiveRef"
                        ) || keyword.starts_with("unevaluated")
                        {
                            found.push(keyword.clone());
                        }
                        walk(inner, found);
                    }
                }
                Value::Array(items) => items.iter().for_each(|item| walk(item, found)),
                _ => {}
            }
        }
        for document in SchemaDocument::ALL {
            let mut found = Vec::new();
            walk(&document.parse(), &mut found);
            assert_eq!(found, Vec::<String>::new(), "{document:?}");
        }
    }

    #[test]
    fn inlining_leaves_only_recursive_refs_drops_implied_types_and_keeps_data_untouched() {
        let document = serde_json::json!({"$defs": {
            "request:x": {"properties": {
                "a": {"$ref": "#/$defs/A"},
                "tree": {"$ref": "#/$defs/Tree"},
                "c": {"const": {"$ref": "#/$defs/A"}},
                "s": {"$ref": "#/$defs/A", "minLength": 1},
                "k": {"const": "2.0", "type": "string"},
                "n": {"const": 2, "type": "integer"}
            }},
            "A": {"type": "string"},
            "Tree": {"type": "array", "items": {"$ref": "#/$defs/Tree"}}
        }});
        let inlined = inlined_root_schema(&document, "request:x").unwrap();
        let properties = &inlined["properties"];
        assert_eq!(properties["a"], serde_json::json!({"type": "string"}));
        assert_eq!(
            properties["tree"],
            serde_json::json!({"type": "array", "items": {"$ref": "#/$defs/Tree"}})
        );
        assert_eq!(
            properties["c"]["const"],
            serde_json::json!({"$ref": "#/$defs/A"})
        );
        assert_eq!(properties["s"]["$ref"], "#/$defs/A");
        assert_eq!(properties["k"], serde_json::json!({"const": "2.0"}));
        assert_eq!(
            properties["n"],
            serde_json::json!({"const": 2, "type": "integer"})
        );
        assert_eq!(inlined["$defs"], document["$defs"]);
    }

    #[test]
    fn root_key_round_trips_through_the_naming_rule() {
        for kind in [
            RootKind::Request("tools/call"),
            RootKind::Notification("notifications/cancelled"),
            RootKind::Result,
            RootKind::Error,
        ] {
            assert_eq!(parse_root_key(&kind.key()), Some(kind));
        }
        assert_eq!(parse_root_key("CallToolRequestParams"), None);
    }

    #[test]
    fn a_missing_root_is_named_in_the_error() {
        let parsed = SchemaDocument::Mcp2026_07_28.parse();
        let error = compile_root(&parsed, "request:initialize").unwrap_err();
        assert_eq!(
            error,
            CompileRootError::NoSuchRoot {
                key: "request:initialize".into()
            }
        );
    }

    #[test]
    fn the_tools_call_root_refuses_a_call_without_a_name() {
        let parsed = SchemaDocument::Mcp2026_07_28.parse();
        let root = compile_root(&parsed, &RootKind::Request("tools/call").key()).unwrap();
        let meta = serde_json::json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {}
        });
        let good = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"_meta": meta, "name":"echo"}});
        let bad = serde_json::json!({"jsonrpc":"2.0","id":1,"method":"tools/call",
            "params":{"_meta": meta}});
        assert!(root.is_valid(&good));
        assert!(!root.is_valid(&bad));
    }

    #[test]
    fn revisions_map_to_their_lane() {
        assert_eq!(Revision::parse("2026-07-28"), Some(Revision::V2026_07_28));
        assert_eq!(Revision::parse("2024-11-05"), None);
        assert_eq!(Revision::V2026_07_28.lane(), Lane::Modern);
        assert_eq!(Revision::V2025_03_26.lane(), Lane::Legacy);
        assert_eq!(Revision::DEFAULT_WITHOUT_HEADER.lane(), Lane::Legacy);
    }
}
