//! The top-level keys a tool's input schema names, read once at
//! registration for pre-flight normalization: each property with the JSON
//! types its schema admits, looked up as sent or case-insensitively
//! without allocating.

use std::hash::{Hash, Hasher};

use rustc_hash::{FxHashMap, FxHasher};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::subschemas::{in_place, resolve};
use crate::distill::TypeMask;
use crate::parse::{SHORT_LIST, same_text};

/// In-place parts (`allOf`, `$ref`, ...) followed at most, nested.
const MAX_PART_DEPTH: usize = 16;

/// One property the schema names at the top level.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Property {
    pub name: Box<str>,
    /// The JSON types its schema admits (every one when it does not say).
    pub(crate) admits: TypeMask,
}

/// What the schema names at the top level.
#[derive(Debug, Default)]
pub struct KeySet {
    properties: Vec<Property>,
    exact: FxHashMap<Box<str>, u32>,
    /// Properties by the hash of their lowercased name.
    folded: FxHashMap<u64, SmallVec<[u32; 2]>>,
    /// `patternProperties` somewhere at the top level: a key no property
    /// names may still be one the schema expects.
    pub patterns: bool,
    /// The tool's root refuses keys it does not name.
    pub closed: bool,
}

/// How a sent key relates to the schema's properties.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Match<'k> {
    /// A property of this very name.
    Exact(&'k Property, usize),
    /// One property, case aside.
    Folded(&'k Property, usize),
    /// More than one property, case aside.
    Ambiguous,
    /// None.
    Unknown,
}

impl KeySet {
    /// The top-level properties of `input` (the schema as the tool gives
    /// it, parts applied in place included); `closed`: the registered root
    /// refuses keys it does not name.
    pub fn read(input: &Value, closed: bool) -> KeySet {
        let mut keys = KeySet {
            closed,
            ..KeySet::default()
        };
        if let Some(object) = input.as_object() {
            keys.add_part(object, input, 0);
        }
        for (index, property) in keys.properties.iter().enumerate() {
            keys.exact.insert(property.name.clone(), index as u32);
            keys.folded
                .entry(folded_hash(&property.name))
                .or_default()
                .push(index as u32);
        }
        keys
    }

    fn add_part(&mut self, part: &Map<String, Value>, root: &Value, depth: usize) {
        if part.contains_key("patternProperties") {
            self.patterns = true;
        }
        if let Some(properties) = part.get("properties").and_then(Value::as_object) {
            for (name, schema) in properties {
                let admits = admitted(schema, root);
                match self.properties.iter_mut().find(|p| *p.name == **name) {
                    Some(known) => known.admits.0 |= admits.0,
                    None => self.properties.push(Property {
                        name: name.as_str().into(),
                        admits,
                    }),
                }
            }
        }
        if depth >= MAX_PART_DEPTH {
            return;
        }
        let mut parts: SmallVec<[&Value; 8]> = in_place(part).collect();
        parts.extend(
            part.get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| resolve(root, r)),
        );
        for next in parts {
            if let Some(next) = next.as_object() {
                self.add_part(next, root, depth + 1);
            }
        }
    }

    /// The properties: each part's in the order the schema document keeps
    /// them, the root's first.
    pub fn properties(&self) -> &[Property] {
        &self.properties
    }

    /// How `key` relates to the properties.
    pub fn lookup(&self, key: &str) -> Match<'_> {
        let exact = if self.properties.len() <= SHORT_LIST {
            self.properties
                .iter()
                .position(|property| same_text(&property.name, key))
        } else {
            self.exact.get(key).map(|&index| index as usize)
        };
        if let Some(index) = exact {
            return Match::Exact(&self.properties[index], index);
        }
        let Some(candidates) = self.folded.get(&folded_hash(key)) else {
            return Match::Unknown;
        };
        let mut found = candidates
            .iter()
            .map(|&i| i as usize)
            .filter(|&i| same_folded(&self.properties[i].name, key));
        match (found.next(), found.next()) {
            (Some(index), None) => Match::Folded(&self.properties[index], index),
            (Some(_), Some(_)) => Match::Ambiguous,
            _ => Match::Unknown,
        }
    }
}

/// The types a property's schema admits (its `type`, through one `$ref`).
fn admitted(schema: &Value, root: &Value) -> TypeMask {
    let schema = match schema.get("$ref").and_then(Value::as_str) {
        Some(reference) if schema.get("type").is_none() => {
            resolve(root, reference).unwrap_or(schema)
        }
        _ => schema,
    };
    schema
        .get("type")
        .and_then(TypeMask::from_keyword)
        .unwrap_or(TypeMask::ALL)
}

fn folded(text: &str) -> impl Iterator<Item = char> + '_ {
    text.chars().flat_map(char::to_lowercase)
}

fn same_folded(a: &str, b: &str) -> bool {
    folded(a).eq(folded(b))
}

fn folded_hash(text: &str) -> u64 {
    let mut hasher = FxHasher::default();
    for c in folded(text) {
        c.hash(&mut hasher);
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn keys_are_found_as_sent_or_case_aside_and_ambiguity_is_told() {
        let schema = json!({"type": "object",
            "$defs": {"ids": {"type": "array"}},
            "properties": {"marketplaceIds": {"$ref": "#/$defs/ids"}, "id": {}, "ID": {"type": "string"}},
            "allOf": [{"properties": {"text": {"type": ["string", "null"]}}}]});
        let keys = KeySet::read(&schema, true);
        let names: Vec<&str> = keys.properties().iter().map(|p| &*p.name).collect();
        assert_eq!(names, ["ID", "id", "marketplaceIds", "text"]);
        assert!(
            matches!(keys.lookup("marketplaceIds"), Match::Exact(p, 2) if p.admits.0 == TypeMask::ARRAY)
        );
        assert!(
            matches!(keys.lookup("MarketplaceIDS"), Match::Folded(p, 2) if *p.name == *"marketplaceIds")
        );
        assert!(
            matches!(keys.lookup("Text"), Match::Folded(p, 3) if p.admits.0 == TypeMask::STRING | TypeMask::NULL)
        );
        assert!(matches!(keys.lookup("ID"), Match::Exact(_, 0)));
        assert_eq!(keys.lookup("Id"), Match::Ambiguous);
        assert_eq!(keys.lookup("colour"), Match::Unknown);
        assert!(!keys.patterns);
        assert!(
            KeySet::read(
                &json!({"allOf": [{"patternProperties": {"^x": {}}}]}),
                false
            )
            .patterns
        );
    }

    #[test]
    fn a_long_list_of_keys_is_looked_up_as_a_short_one() {
        for count in [SHORT_LIST, SHORT_LIST + 1, 40] {
            let properties: Map<String, Value> =
                (0..count).map(|i| (format!("key{i}"), json!({}))).collect();
            let keys = KeySet::read(&json!({ "properties": properties }), true);
            assert_eq!(keys.properties().len(), count);
            for (i, property) in keys.properties().iter().enumerate() {
                let name = &*property.name;
                assert!(
                    matches!(keys.lookup(name), Match::Exact(p, at) if *p.name == *name && at == i),
                    "{name} of {count}"
                );
                assert!(
                    matches!(keys.lookup(&name.to_uppercase()), Match::Folded(_, at) if at == i),
                    "{name} of {count}, folded"
                );
            }
            assert_eq!(keys.lookup("key"), Match::Unknown, "{count}");
        }
    }
}
