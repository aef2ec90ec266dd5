//! Closing a tool's input schema against unknown keys (ARCHITECTURE.md, "The value gate"): where
//! an object schema declares its properties and says nothing about others,
//! others are refused. What a schema says explicitly (`additionalProperties`
//! or `unevaluatedProperties`, `true` or a schema) is respected.
//!
//! A schema composed of parts (`allOf`, `anyOf`, `oneOf`, `$ref`, `then`,
//! `else`, `dependentSchemas`) is closed once, where it is used, with
//! `unevaluatedProperties: false`, which sees the properties every part
//! evaluates; the parts themselves stay open, or `{"allOf": [A, B]}` would
//! refuse B's properties in A and A's in B. Conditions (`if`), negations
//! (`not`) and `propertyNames` are left as written: closing them would
//! change what they mean.
//!
//! Where one part alone can evaluate an object's properties (a lone `$ref`,
//! or the only branch of an `anyOf`/`oneOf` that admits objects, the others
//! typed otherwise), closing that part with `additionalProperties: false`
//! means the same as closing the site, and costs far less: the validator
//! checks `unevaluatedProperties` by validating every applicable branch
//! again, at every level of a recursive schema. A part reached by `$ref` is
//! shared, so the closed copy is a twin under the root's `$defs` and only
//! the sites closed this way point to it.

use serde_json::{Map, Value};

use super::subschemas::{Applies, Holds, KEYWORDS, MAX_DEPTH, applies_in_place, in_place, resolve};

/// Whether `object` is a composition of parts applied in place: it holds a
/// reference or a keyword the subschema table says applies in place.
fn composes(object: &Map<String, Value>) -> bool {
    object
        .keys()
        .any(|key| matches!(key.as_str(), "$ref" | "$dynamicRef") || applies_in_place(key))
}

/// Where closed twins of shared definitions are kept in the root.
const TWINS_IN: &str = "$defs";

/// The name of the `n`th closed twin under `$defs`.
fn twin_name(n: usize) -> String {
    format!("mcpgate-closed-{n}")
}

/// Definitions whose closed twin a site points to: (pointer of the
/// definition, name of its twin).
#[derive(Default)]
struct Twins(Vec<(String, String)>);

impl Twins {
    /// The reference to `pointer`'s twin, named on first use.
    fn reference(&mut self, pointer: &str, root: &Value) -> String {
        let name = match self.0.iter().find(|(p, _)| p == pointer) {
            Some((_, name)) => name.clone(),
            None => {
                let taken = |name: &str| root.get(TWINS_IN).and_then(|d| d.get(name)).is_some();
                let mut n = self.0.len();
                while taken(&twin_name(n)) {
                    n += 1;
                }
                let name = twin_name(n);
                self.0.push((pointer.to_owned(), name.clone()));
                name
            }
        };
        format!("#/{TWINS_IN}/{name}")
    }

    /// Adds each twin: its definition as closed, refusing other keys.
    fn add_to(self, closed: &mut Value) {
        let made: Vec<(String, Value)> = self
            .0
            .into_iter()
            .filter_map(|(pointer, name)| {
                let mut twin = closed.pointer(&pointer)?.clone();
                twin.as_object_mut()?
                    .insert("additionalProperties".into(), Value::Bool(false));
                Some((name, twin))
            })
            .collect();
        if made.is_empty() {
            return;
        }
        let Some(root) = closed.as_object_mut() else {
            return;
        };
        let defs = root
            .entry(TWINS_IN)
            .or_insert_with(|| Value::Object(Map::new()));
        if let Some(defs) = defs.as_object_mut() {
            defs.extend(made);
        }
    }
}

/// `root` closed against unknown keys.
pub fn close(root: &Value) -> Value {
    let mut closed = root.clone();
    let mut twins = Twins::default();
    close_node(&mut closed, root, false, 0, &mut twins);
    twins.add_to(&mut closed);
    closed
}

/// `partial`: the node is one part of a composition (or a definition used
/// through `$ref`), closed where it is used.
fn close_node(node: &mut Value, root: &Value, partial: bool, depth: usize, twins: &mut Twins) {
    if depth >= MAX_DEPTH {
        return;
    }
    let Some(object) = node.as_object_mut() else {
        return;
    };
    for (keyword, holds, applies) in KEYWORDS {
        if matches!(keyword, "if" | "not" | "propertyNames") {
            continue;
        }
        let Some(value) = object.get_mut(keyword) else {
            continue;
        };
        let part = applies != Applies::Child;
        match holds {
            Holds::One => close_node(value, root, part, depth + 1, twins),
            Holds::List => {
                for item in value.as_array_mut().into_iter().flatten() {
                    close_node(item, root, part, depth + 1, twins);
                }
            }
            Holds::Map => {
                for item in value.as_object_mut().into_iter().flatten() {
                    close_node(item.1, root, part, depth + 1, twins);
                }
            }
        }
    }
    if partial
        || object.contains_key("additionalProperties")
        || object.contains_key("unevaluatedProperties")
    {
        return;
    }
    if composes(object) {
        if declares_properties(object, root, 0) && !close_the_one_part(object, root, twins) {
            object.insert("unevaluatedProperties".into(), Value::Bool(false));
        }
    } else if object.contains_key("properties") || object.contains_key("patternProperties") {
        object.insert("additionalProperties".into(), Value::Bool(false));
    }
}

/// Keywords of a composing site that do not evaluate properties besides its
/// parts: any other keyword (its own `properties`, `allOf`, `if`, …) could,
/// and the site is closed as a whole.
const SITE_EVALUATES: [&str; 11] = [
    "properties",
    "patternProperties",
    "additionalProperties",
    "unevaluatedProperties",
    "allOf",
    "if",
    "then",
    "else",
    "dependentSchemas",
    "$dynamicRef",
    "$recursiveRef",
];

/// Closes the one part of a composing site that can evaluate an object's
/// properties in place of the site, when there is exactly one: a lone
/// `$ref`, or one branch of an `anyOf`/`oneOf` whose other branches admit
/// no object. Says whether it did.
fn close_the_one_part(site: &mut Map<String, Value>, root: &Value, twins: &mut Twins) -> bool {
    if SITE_EVALUATES.iter().any(|k| site.contains_key(*k)) {
        return false;
    }
    let composed: Vec<&str> = ["$ref", "anyOf", "oneOf"]
        .into_iter()
        .filter(|k| site.contains_key(*k))
        .collect();
    match composed.as_slice() {
        ["$ref"] => close_through_ref(site, root, twins),
        [branches @ ("anyOf" | "oneOf")] => {
            let Some(branches) = site.get_mut(*branches).and_then(Value::as_array_mut) else {
                return false;
            };
            let mut objects = branches
                .iter()
                .enumerate()
                .filter(|(_, b)| admits_objects(b));
            let (Some((one, _)), None) = (objects.next(), objects.next()) else {
                return false;
            };
            let Some(branch) = branches[one].as_object_mut() else {
                return false;
            };
            if branch.contains_key("$ref") {
                branch.keys().all(|k| NOTES.contains(&k.as_str()))
                    && close_through_ref(branch, root, twins)
            } else if closes_alone(branch) {
                branch.insert("additionalProperties".into(), Value::Bool(false));
                true
            } else {
                false
            }
        }
        _ => false,
    }
}

/// Keywords beside a branch's `$ref` that say nothing about the instance.
const NOTES: [&str; 5] = ["$ref", "$comment", "title", "description", "deprecated"];

/// Points `site`'s `$ref` to the closed twin of the definition it names,
/// when that definition closes alone.
fn close_through_ref(site: &mut Map<String, Value>, root: &Value, twins: &mut Twins) -> bool {
    let Some(pointer) = site
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(crate::distill::local_pointer)
    else {
        return false;
    };
    // The root holds every twin; a twin of it would hold them again.
    if pointer.is_empty() {
        return false;
    }
    let Some(definition) = root.pointer(&pointer).and_then(Value::as_object) else {
        return false;
    };
    if !closes_alone(definition) || names_a_base(definition) {
        return false;
    }
    site.insert(
        "$ref".into(),
        Value::String(twins.reference(&pointer, root)),
    );
    true
}

/// Keywords that make a part's evaluated properties more than those its
/// `properties` and `patternProperties` name, or that a copy of it could
/// not keep.
const PART_EVALUATES: [&str; 11] = [
    "additionalProperties",
    "unevaluatedProperties",
    "if",
    "then",
    "else",
    "$defs",
    "definitions",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$recursiveAnchor",
];

/// Whether a part evaluates exactly the properties it names, so that
/// `additionalProperties: false` on it refuses what the site would.
fn closes_alone(part: &Map<String, Value>) -> bool {
    (part.contains_key("properties") || part.contains_key("patternProperties"))
        && !composes(part)
        && !PART_EVALUATES.iter().any(|k| part.contains_key(*k))
}

/// Whether anything inside sets a base URI or an anchor a copy would
/// duplicate.
fn names_a_base(part: &Map<String, Value>) -> bool {
    part.iter().any(|(key, value)| {
        matches!(
            key.as_str(),
            "$id" | "id" | "$anchor" | "$dynamicAnchor" | "$recursiveAnchor"
        ) && value.is_string()
            || match value {
                Value::Object(inner) => names_a_base(inner),
                Value::Array(items) => items.iter().filter_map(Value::as_object).any(names_a_base),
                _ => false,
            }
    })
}

/// Whether a branch may accept an object: only a `type` that names no
/// `object`, or `false`, says it cannot.
fn admits_objects(branch: &Value) -> bool {
    match branch {
        Value::Bool(admits) => *admits,
        Value::Object(branch) => match branch.get("type") {
            Some(Value::String(name)) => name == "object",
            Some(Value::Array(names)) => names.iter().any(|n| n == "object"),
            _ => true,
        },
        _ => true,
    }
}

/// Whether a schema, or a part applied in place, names properties: a free
/// form object (`{"type": "object"}`) stays free.
fn declares_properties(object: &Map<String, Value>, root: &Value, depth: usize) -> bool {
    if object.contains_key("properties") || object.contains_key("patternProperties") {
        return true;
    }
    if depth >= 16 {
        return false;
    }
    let part = |value: &Value| {
        value
            .as_object()
            .is_some_and(|o| declares_properties(o, root, depth + 1))
    };
    if in_place(object).any(part) {
        return true;
    }
    object
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
        .is_some_and(part)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn an_object_with_properties_is_closed_and_nested_ones_too() {
        let closed = close(&json!({
            "type": "object",
            "properties": {"a": {"type": "object", "properties": {"b": {}}},
                           "list": {"type": "array", "items": {"properties": {"c": {}}}}}
        }));
        assert_eq!(closed["additionalProperties"], false);
        assert_eq!(closed["properties"]["a"]["additionalProperties"], false);
        assert_eq!(
            closed["properties"]["list"]["items"]["additionalProperties"],
            false
        );
    }

    #[test]
    fn what_the_schema_says_is_respected_and_free_objects_stay_free() {
        let closed = close(&json!({
            "properties": {"open": {"properties": {"x": {}}, "additionalProperties": true},
                           "map": {"type": "object", "additionalProperties": {"type": "string"}},
                           "free": {"type": "object"}}
        }));
        assert_eq!(closed["properties"]["open"]["additionalProperties"], true);
        assert_eq!(
            closed["properties"]["map"]["additionalProperties"],
            json!({"type": "string"})
        );
        assert!(
            closed["properties"]["free"]
                .get("additionalProperties")
                .is_none()
        );
    }

    #[test]
    fn a_composition_is_closed_where_used_and_its_parts_stay_open() {
        let closed = close(&json!({
            "$defs": {"base": {"properties": {"id": {}}}},
            "allOf": [{"$ref": "#/$defs/base"}, {"properties": {"name": {}}}],
            "properties": {"ref": {"$ref": "#/$defs/base", "properties": {"more": {}}},
                           "text": {"$ref": "#/$defs/s"}}
        }));
        assert_eq!(closed["unevaluatedProperties"], false);
        assert!(closed.get("additionalProperties").is_none());
        assert!(closed["allOf"][1].get("additionalProperties").is_none());
        assert!(
            closed["$defs"]["base"]
                .get("additionalProperties")
                .is_none()
        );
        assert_eq!(closed["properties"]["ref"]["unevaluatedProperties"], false);
        // A reference to no object schema is left alone.
        assert!(
            closed["properties"]["text"]
                .get("unevaluatedProperties")
                .is_none()
        );
    }

    #[test]
    fn a_lone_reference_points_to_a_closed_twin_and_the_definition_stays_open() {
        let closed = close(&json!({
            "type": "object",
            "$defs": {"node": {"type": "object", "properties": {"children": {"type": "array",
                "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}}}},
            "properties": {"root": {"$ref": "#/$defs/node"}, "again": {"$ref": "#/$defs/node"}}
        }));
        let twin = "#/$defs/mcpgate-closed-0";
        assert_eq!(closed["properties"]["root"], json!({"$ref": twin}));
        assert_eq!(closed["properties"]["again"], json!({"$ref": twin}));
        let node = &closed["$defs"]["node"];
        assert!(node.get("additionalProperties").is_none());
        let items = &closed["$defs"]["mcpgate-closed-0"]["properties"]["children"]["items"];
        assert_eq!(items["anyOf"][0], json!({"$ref": twin}));
        assert!(items.get("unevaluatedProperties").is_none());
        assert_eq!(
            closed["$defs"]["mcpgate-closed-0"]["additionalProperties"],
            false
        );
        assert!(closed["$defs"].get("mcpgate-closed-1").is_none());
    }

    #[test]
    fn a_site_with_two_parts_that_admit_objects_is_closed_as_a_whole() {
        let closed = close(&json!({
            "type": "object",
            "$defs": {"a": {"properties": {"a": {}}}, "with_id": {"$id": "x", "properties": {"b": {}}}},
            "properties": {
                "two": {"anyOf": [{"$ref": "#/$defs/a"}, {"properties": {"b": {}}}]},
                "untyped": {"oneOf": [{"$ref": "#/$defs/a"}, {"minimum": 1}]},
                "inline": {"oneOf": [{"properties": {"c": {}}}, {"type": ["string", "null"]}]},
                "based": {"$ref": "#/$defs/with_id"},
                "itself": {"$ref": "#"}
            }
        }));
        let properties = &closed["properties"];
        for site in ["two", "untyped", "based", "itself"] {
            assert_eq!(properties[site]["unevaluatedProperties"], false, "{site}");
        }
        assert_eq!(
            properties["inline"]["oneOf"][0]["additionalProperties"],
            false
        );
        assert!(properties["inline"].get("unevaluatedProperties").is_none());
        assert!(closed["$defs"].get("mcpgate-closed-0").is_none());
    }

    /// What a twin refuses is what the site closed as a whole refuses.
    #[test]
    fn closing_the_one_part_refuses_what_closing_the_site_would() {
        let schema = json!({
            "type": "object",
            "$defs": {"node": {"type": "object", "properties": {"id": {"type": "integer"},
                "children": {"type": "array",
                "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]}}},
                "patternProperties": {"^x-": {"type": "string"}}}},
            "properties": {"root": {"$ref": "#/$defs/node"},
                "pick": {"oneOf": [{"type": "integer"}, {"properties": {"k": {}}, "required": ["k"]}]}}
        });
        let mut whole = schema.clone();
        whole["additionalProperties"] = json!(false);
        whole["properties"]["root"]["unevaluatedProperties"] = json!(false);
        whole["properties"]["pick"]["unevaluatedProperties"] = json!(false);
        whole["$defs"]["node"]["properties"]["children"]["items"]["unevaluatedProperties"] =
            json!(false);
        let twins = jsonschema::validator_for(&close(&schema)).unwrap();
        let whole = jsonschema::validator_for(&whole).unwrap();
        for instance in [
            json!({"root": {"id": 1, "children": [null, {"id": 2, "x-a": "s"}]}}),
            json!({"root": {"id": 1, "children": [{"children": [{"other": 1}]}]}}),
            json!({"root": {"children": [{"x-a": 1}]}}),
            json!({"root": {"extra": true}}),
            json!({"root": [], "pick": 3}),
            json!({"pick": {"k": 1}}),
            json!({"pick": {"k": 1, "z": 2}}),
            json!({"pick": {"z": 2}}),
            json!({"other": 1}),
        ] {
            assert_eq!(
                twins.is_valid(&instance),
                whole.is_valid(&instance),
                "{instance}"
            );
        }
    }
}
