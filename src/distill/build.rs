//! Building an explainer: schema nodes interned by JSON pointer (so `$ref`
//! cycles close on themselves), and the tiny jsonschema validators leaf checks
//! and branch checks are delegated to, all compiled here and never while
//! explaining.

use std::collections::HashMap;

use jsonschema::json::Json;
use jsonschema::{Draft, Registry, Validator};
use serde_json::{Map, Value, json};

use super::formats;
use super::keywords::{self, NodeId, SchemaNode};
use super::walk::EmptyAccepted;

/// The URI the root document is registered under, so that a delegated
/// subschema's `#/…` references still reach the root's definitions.
pub(crate) const ROOT_URI: &str = "urn:mcpgate:distill:root";

/// Frames of static analysis (following `$ref`s and applicators over the
/// schema) before giving up on a cycle.
pub(crate) const STATIC_DEPTH: usize = 24;

pub(crate) struct Build<'r, F: Json> {
    pub root: &'r Value,
    pub assert_formats: bool,
    registry: Option<Registry<'r>>,
    index: HashMap<String, NodeId>,
    nodes: Vec<Option<SchemaNode<F>>>,
    queue: Vec<(NodeId, String)>,
}

impl<'r, F: Json> Build<'r, F> {
    pub fn new(root: &'r Value, assert_formats: bool) -> Self {
        let registry = Registry::new()
            .draft(Draft::Draft202012)
            .add(ROOT_URI, root)
            .and_then(|builder| builder.prepare())
            .ok();
        Build {
            root,
            assert_formats,
            registry,
            index: HashMap::new(),
            nodes: Vec::new(),
            queue: Vec::new(),
        }
    }

    /// Builds every node reachable from the root; returns them indexed.
    pub fn run(mut self) -> Vec<SchemaNode<F>> {
        self.intern(String::new());
        while let Some((id, pointer)) = self.queue.pop() {
            let root = self.root;
            let node = match root.pointer(&pointer) {
                Some(value) => keywords::compile(&mut self, &pointer, value),
                None => SchemaNode::True,
            };
            self.nodes[id as usize] = Some(node);
        }
        let mut nodes: Vec<SchemaNode<F>> = self
            .nodes
            .into_iter()
            .map(|node| node.unwrap_or(SchemaNode::True))
            .collect();
        keywords::link(&mut nodes);
        nodes
    }

    /// The node for the subschema at `pointer` (RFC 6901, unescaped form of
    /// the document), built later if new. A subschema that only refers to
    /// another within the root is that other's node: the walk does not pay
    /// a frame for the reference.
    pub fn intern(&mut self, pointer: String) -> NodeId {
        let pointer = self.past_bare_refs(pointer);
        if let Some(id) = self.index.get(&pointer) {
            return *id;
        }
        let id = self.nodes.len() as NodeId;
        self.nodes.push(None);
        self.index.insert(pointer.clone(), id);
        self.queue.push((id, pointer));
        id
    }

    /// Where a chain of bare references starting at `pointer` ends.
    fn past_bare_refs(&self, mut pointer: String) -> String {
        for _ in 0..STATIC_DEPTH {
            let Some(target) = self
                .root
                .pointer(&pointer)
                .and_then(Value::as_object)
                .filter(|object| {
                    object
                        .keys()
                        .all(|key| BESIDE_A_BARE_REF.contains(&key.as_str()))
                })
                .and_then(|object| local_pointer(object.get("$ref")?.as_str()?))
                .filter(|target| self.root.pointer(target).is_some())
            else {
                break;
            };
            pointer = target;
        }
        pointer
    }

    /// The node for a child subschema: `parent` extended by `tokens`.
    pub fn child(&mut self, parent: &str, tokens: &[&str]) -> NodeId {
        let mut pointer = parent.to_owned();
        for token in tokens {
            pointer.push('/');
            pointer.push_str(&escape_token(token));
        }
        self.intern(pointer)
    }

    /// A standalone validator for a leaf keyword (no references).
    pub fn leaf(&self, schema: Value, formats: bool) -> Option<Validator<F>> {
        formats::with_own_formats(jsonschema::options_for::<F>())
            .with_draft(Draft::Draft202012)
            .should_validate_formats(formats)
            .build(&schema)
            .ok()
    }

    /// A validator for the ECMA regex `pattern` alone, as `pattern` and
    /// `patternProperties` read it.
    pub fn pattern(&self, pattern: &str) -> Option<Validator<F>> {
        self.leaf(json!({ "pattern": pattern }), false)
    }

    /// A validator for a subschema of the root, its `#…` references
    /// resolved against the root. Formats as the explainer's options say.
    pub fn sub(&self, value: &Value) -> Option<Validator<F>> {
        let schema = absolutize(value);
        let options = formats::with_own_formats(jsonschema::options_for::<F>())
            .with_draft(Draft::Draft202012)
            .should_validate_formats(self.assert_formats);
        match &self.registry {
            Some(registry) => options.with_registry(registry).build(&schema).ok(),
            None => options.build(&schema).ok(),
        }
    }

    /// Whether the subschema `value` accepts an empty object and an empty
    /// array, as jsonschema judges them (both `false` when it does not
    /// compile).
    pub fn empty_accepted(&self, value: &Value) -> EmptyAccepted {
        let schema = absolutize(value);
        let options = formats::with_own_formats(jsonschema::options())
            .with_draft(Draft::Draft202012)
            .should_validate_formats(self.assert_formats);
        let validator = match &self.registry {
            Some(registry) => options.with_registry(registry).build(&schema),
            None => options.build(&schema),
        };
        validator.map_or(EmptyAccepted::default(), |validator| EmptyAccepted {
            object: validator.is_valid(&Value::Object(Map::new())),
            array: validator.is_valid(&Value::Array(Vec::new())),
        })
    }

    /// `value` with its `$ref` chain followed within the root (static
    /// analysis only).
    pub fn resolve<'v>(&self, mut value: &'v Value) -> &'v Value
    where
        'r: 'v,
    {
        for _ in 0..STATIC_DEPTH {
            let Some(target) = value.as_object().and_then(|object| self.ref_target(object)) else {
                return value;
            };
            // A `$ref` beside other keywords still applies them; only a bare
            // reference is replaced by its target here.
            if value.as_object().is_some_and(|o| o.len() > 1) {
                return value;
            }
            value = target;
        }
        value
    }

    /// Where `object`'s `$ref` points, when that is within the root.
    pub fn ref_target(&self, object: &Map<String, Value>) -> Option<&'r Value> {
        let pointer = local_pointer(object.get("$ref")?.as_str()?)?;
        self.root.pointer(&pointer)
    }

    /// The subschemas that apply to the same instance as `object` (static
    /// analysis): its `$ref` target, the `allOf`/`anyOf`/`oneOf` branches
    /// and `if`/`then`/`else`.
    pub fn in_place_applicators<'v>(
        &self,
        object: &'v Map<String, Value>,
    ) -> impl Iterator<Item = &'v Value>
    where
        'r: 'v,
    {
        let branches = ["allOf", "anyOf", "oneOf"].into_iter().flat_map(|keyword| {
            object
                .get(keyword)
                .and_then(Value::as_array)
                .into_iter()
                .flatten()
        });
        let conditional = ["if", "then", "else"]
            .into_iter()
            .filter_map(|keyword| object.get(keyword));
        self.ref_target(object)
            .into_iter()
            .chain(branches)
            .chain(conditional)
    }
}

/// The keywords a `$ref` may have beside it and still be all its schema
/// says: none of them validates or moves the base URI.
const BESIDE_A_BARE_REF: [&str; 5] = ["$ref", "$schema", "$defs", "definitions", "$comment"];

/// The unescaped JSON pointer of a `#…` reference within the document, or
/// `None` for any other reference (anchors, other documents).
pub fn local_pointer(reference: &str) -> Option<String> {
    let fragment = reference.strip_prefix('#')?;
    let decoded = percent_decode(fragment)?;
    if decoded.is_empty() || decoded.starts_with('/') {
        Some(decoded)
    } else {
        None
    }
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_owned());
    }
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%' {
            let hex = text.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

/// RFC 6901 escaping of one token.
pub(crate) fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Keywords whose values are data, not schemas: left alone by
/// [`absolutize`].
const DATA_KEYWORDS: [&str; 4] = ["const", "enum", "default", "examples"];

/// A copy of `value` with every `#…` reference made absolute against
/// [`ROOT_URI`], so it resolves in the root document when compiled alone.
pub(crate) fn absolutize(value: &Value) -> Value {
    match value {
        Value::Object(members) => {
            let mut out = Map::new();
            for (key, member) in members {
                let rewritten = match (key.as_str(), member) {
                    ("$ref" | "$dynamicRef" | "$recursiveRef", Value::String(reference))
                        if reference.starts_with('#') =>
                    {
                        Value::String(format!("{ROOT_URI}{reference}"))
                    }
                    (keyword, _) if DATA_KEYWORDS.contains(&keyword) => member.clone(),
                    _ => absolutize(member),
                };
                out.insert(key.clone(), rewritten);
            }
            Value::Object(out)
        }
        Value::Array(items) => Value::Array(items.iter().map(absolutize).collect()),
        other => other.clone(),
    }
}
