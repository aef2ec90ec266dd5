//! `jsonschema`'s custom-representation backend over the tape.
//!
//! Build with `jsonschema::options_for::<TapeJson>()` and validate
//! `document.root()`. Verdicts are those of the default `serde_json`
//! backend (checked differentially in `tests/tape_backend.rs`).

use std::borrow::Cow;
use std::sync::OnceLock;

use jsonschema::json::{Array, Json, JsonNumber, Node, NodeIdentity, Object};
use jsonschema::types::JsonType;
use jsonschema_value::LazyInstance;
use serde_json::Value;

use super::Source;
use super::node::{Elements, Members, TapeNode, TapeNumber};

/// The tape representation for `jsonschema`.
pub struct TapeJson;

impl Json for TapeJson {
    type Node<'a> = TapeNode<'a>;
    type PreparedKey = Box<str>;
    type StringBuffer = ();

    // A lookup walks the members, so one members pass never costs more than
    // the lookups it replaces, however big the object. (Divided so that the
    // validator's `KEYS_PER_LOOKUP * count`, count at most 16, cannot overflow.)
    const KEYS_PER_LOOKUP: usize = usize::MAX / 16;
    // A tape is a tree: no node is its own descendant.
    const ACYCLIC: bool = true;

    fn prepare_key(key: &str) -> Box<str> {
        key.into()
    }

    fn with_string_node<T>((): &mut (), string: &str, f: impl FnOnce(TapeNode<'_>) -> T) -> T {
        let holder = [simd_json::Node::String(string)];
        f(TapeNode::detached(&holder))
    }
}

impl JsonNumber for TapeNumber<'_> {
    fn as_u64(&self) -> Option<u64> {
        TapeNumber::as_u64(self)
    }

    fn as_i64(&self) -> Option<i64> {
        TapeNumber::as_i64(self)
    }

    fn as_f64(&self) -> Option<f64> {
        Some(TapeNumber::as_f64(self))
    }

    fn as_str(&self) -> Cow<'_, str> {
        match *self {
            // The only form that holds its value exactly.
            TapeNumber::Wide(wide) => Cow::Borrowed(wide.text()),
            _ => Cow::Owned(TapeNumber::to_number(*self).to_string()),
        }
    }

    fn to_number(&self) -> Cow<'_, serde_json::Number> {
        Cow::Owned(TapeNumber::to_number(*self))
    }

    fn is_integer(&self) -> bool {
        TapeNumber::is_integer(self)
    }

    fn is_written_as_integer(&self) -> bool {
        // Answer as `serde_json::Number` does for the same value (draft 4).
        JsonNumber::is_written_as_integer(&TapeNumber::to_number(*self))
    }
}

impl<'a> Node<'a, TapeJson> for TapeNode<'a> {
    type Object = TapeObject<'a>;
    type Array = TapeArray<'a>;
    type Number = TapeNumber<'a>;

    fn as_object(&self) -> Option<TapeObject<'a>> {
        (self.kind() == super::NodeKind::Object).then_some(TapeObject(*self))
    }

    fn as_array(&self) -> Option<TapeArray<'a>> {
        (self.kind() == super::NodeKind::Array).then_some(TapeArray(*self))
    }

    fn as_string(&self) -> Option<Cow<'a, str>> {
        TapeNode::as_str(self).map(Cow::Borrowed)
    }

    fn as_number(&self) -> Option<TapeNumber<'a>> {
        TapeNode::as_number(self)
    }

    fn as_boolean(&self) -> Option<bool> {
        TapeNode::as_bool(self)
    }

    fn is_null(&self) -> bool {
        TapeNode::is_null(self)
    }

    fn json_type(&self) -> JsonType {
        match self.kind() {
            super::NodeKind::Null => JsonType::Null,
            super::NodeKind::Bool => JsonType::Boolean,
            super::NodeKind::Number => JsonType::Number,
            super::NodeKind::String => JsonType::String,
            super::NodeKind::Array => JsonType::Array,
            super::NodeKind::Object => JsonType::Object,
        }
    }

    fn string_length(&self) -> Option<u64> {
        TapeNode::as_str(self).map(|string| string.chars().count() as u64)
    }

    fn string_length_within(&self, min: u64, max: u64) -> Option<bool> {
        let string = TapeNode::as_str(self)?;
        // A code point takes one to four bytes, so the count lies in
        // `ceil(bytes / 4)..=bytes`.
        let bytes = string.len() as u64;
        let fewest = bytes.div_ceil(4);
        if bytes < min || fewest > max {
            return Some(false);
        }
        if min <= fewest && bytes <= max {
            return Some(true);
        }
        Some((min..=max).contains(&(string.chars().count() as u64)))
    }

    fn equals_value(&self, expected: &Value) -> bool {
        TapeNode::equals_value(self, expected)
    }

    fn to_value(&self) -> Cow<'a, Value> {
        Cow::Owned(TapeNode::to_value(self))
    }

    fn lazy_value(&self) -> LazyInstance<'a> {
        let source: &'a Source = self.source();
        match source.index_of(self.address()) {
            Some(tag) => LazyInstance::Deferred {
                bytes: source.body(),
                tag,
                make: Source::rebuild,
                cell: OnceLock::new(),
            },
            // A detached name node: one string, cheap to build now.
            None => LazyInstance::Ready(Cow::Owned(TapeNode::to_value(self))),
        }
    }

    fn identity(&self) -> Option<NodeIdentity> {
        // Every live node has its own address: tape nodes one slot each of
        // the tape, name nodes their own one-node holder.
        Some(NodeIdentity::new(self.address()))
    }
}

/// An object node, for the backend.
#[derive(Clone, Copy)]
pub struct TapeObject<'a>(TapeNode<'a>);

impl<'a> Object<'a, TapeJson> for TapeObject<'a> {
    type Node = TapeNode<'a>;
    type MemberName = &'a str;
    type MembersIter = Members<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn get(&self, key: &Box<str>) -> Option<TapeNode<'a>> {
        self.0.get(key)
    }

    fn members(&self) -> Members<'a> {
        self.0.members()
    }
}

/// An array node, for the backend.
#[derive(Clone, Copy)]
pub struct TapeArray<'a>(TapeNode<'a>);

/// Whether `items` are distinct, decided as text where they are strings:
/// `Some(false)` at the first two equal strings, `Some(true)` when all are
/// distinct strings, `None` at an element that is not a string.
fn strings_unique<'t>(items: &[simd_json::Node<'t>]) -> Option<bool> {
    let text = |item: &simd_json::Node<'t>| -> Option<&'t str> {
        match item {
            simd_json::Node::String(text) => Some(text),
            _ => None,
        }
    };
    for (at, item) in items.iter().enumerate() {
        let item = text(item)?;
        for later in &items[at + 1..] {
            if text(later)? == item {
                return Some(false);
            }
        }
    }
    Some(true)
}

/// Arrays up to this size compare their elements pairwise (as `jsonschema`'s
/// own `is_unique` does); larger ones go through values and its hashing.
const PAIRWISE_UNIQUE_LIMIT: usize = 15;

impl<'a> Array<'a, TapeJson> for TapeArray<'a> {
    type Node = TapeNode<'a>;
    type ElementsIter = Elements<'a>;

    fn len(&self) -> usize {
        self.0.len()
    }

    fn elements(&self) -> Elements<'a> {
        self.0.elements()
    }

    fn is_unique(&self) -> bool {
        let len = self.0.len();
        if len <= 1 {
            return true;
        }
        if len <= PAIRWISE_UNIQUE_LIMIT {
            // Strings side by side (enum values, ids: the usual case)
            // compare as text, straight off the tape.
            if let Some(items) = self.0.scalar_elements()
                && let Some(unique) = strings_unique(items)
            {
                return unique;
            }
            // Each element against the ones after it, read off the tape
            // again (no copy of the elements to set up).
            let mut rest = self.0.elements();
            while let Some(item) = rest.next() {
                if rest.clone().any(|later| later.equals_node(&item)) {
                    return false;
                }
            }
            return true;
        }
        let values: Vec<Value> = self.0.elements().map(|item| item.to_value()).collect();
        jsonschema::json::unique::is_unique(&values)
    }
}
