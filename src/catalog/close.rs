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

use serde_json::{Map, Value};

use super::subschemas::{Applies, Holds, KEYWORDS, MAX_DEPTH, resolve};

/// Keywords that make a schema a composition of parts applied in place.
const COMPOSING: [&str; 8] = [
    "$ref",
    "$dynamicRef",
    "allOf",
    "anyOf",
    "oneOf",
    "then",
    "else",
    "dependentSchemas",
];

/// `root` closed against unknown keys.
pub fn close(root: &Value) -> Value {
    let mut closed = root.clone();
    close_node(&mut closed, root, false, 0);
    closed
}

/// `partial`: the node is one part of a composition (or a definition used
/// through `$ref`), closed where it is used.
fn close_node(node: &mut Value, root: &Value, partial: bool, depth: usize) {
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
            Holds::One => close_node(value, root, part, depth + 1),
            Holds::List => {
                for item in value.as_array_mut().into_iter().flatten() {
                    close_node(item, root, part, depth + 1);
                }
            }
            Holds::Map => {
                for item in value.as_object_mut().into_iter().flatten() {
                    close_node(item.1, root, part, depth + 1);
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
    if COMPOSING.iter().any(|k| object.contains_key(*k)) {
        if declares_properties(object, root, 0) {
            object.insert("unevaluatedProperties".into(), Value::Bool(false));
        }
    } else if object.contains_key("properties") || object.contains_key("patternProperties") {
        object.insert("additionalProperties".into(), Value::Bool(false));
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
    for keyword in ["allOf", "anyOf", "oneOf"] {
        if object
            .get(keyword)
            .and_then(Value::as_array)
            .is_some_and(|list| list.iter().any(part))
        {
            return true;
        }
    }
    if ["then", "else"]
        .iter()
        .any(|k| object.get(*k).is_some_and(part))
    {
        return true;
    }
    if object
        .get("dependentSchemas")
        .and_then(Value::as_object)
        .is_some_and(|map| map.values().any(part))
    {
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
            "properties": {"ref": {"$ref": "#/$defs/base"}, "text": {"$ref": "#/$defs/s"}}
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
}
