//! Where a JSON Schema 2020-12 document holds subschemas: one table of the
//! keywords, and a walk over every subschema with its pointer.

use serde_json::{Map, Value};

/// How a keyword holds subschemas.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Holds {
    /// The keyword's value is a schema.
    One,
    /// An array of schemas.
    List,
    /// An object whose member values are schemas.
    Map,
}

/// How a subschema applies to the instance its parent applies to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Applies {
    /// To a member or an item of the instance.
    Child,
    /// To the instance itself, as one part of the parent (`allOf`, `then`).
    InPlace,
    /// Not as a constraint of its own: a condition, a negation, a
    /// definition used only through `$ref`.
    Aside,
}

/// Every subschema keyword of 2020-12 (and draft-7's `definitions`).
pub const KEYWORDS: [(&str, Holds, Applies); 19] = [
    ("properties", Holds::Map, Applies::Child),
    ("patternProperties", Holds::Map, Applies::Child),
    ("additionalProperties", Holds::One, Applies::Child),
    ("unevaluatedProperties", Holds::One, Applies::Child),
    ("propertyNames", Holds::One, Applies::Aside),
    ("items", Holds::One, Applies::Child),
    ("prefixItems", Holds::List, Applies::Child),
    ("contains", Holds::One, Applies::Child),
    ("unevaluatedItems", Holds::One, Applies::Child),
    ("allOf", Holds::List, Applies::InPlace),
    ("anyOf", Holds::List, Applies::InPlace),
    ("oneOf", Holds::List, Applies::InPlace),
    ("then", Holds::One, Applies::InPlace),
    ("else", Holds::One, Applies::InPlace),
    ("dependentSchemas", Holds::Map, Applies::InPlace),
    ("if", Holds::One, Applies::Aside),
    ("not", Holds::One, Applies::Aside),
    ("$defs", Holds::Map, Applies::Aside),
    ("definitions", Holds::Map, Applies::Aside),
];

/// Nesting followed at most (deeper subschemas are not visited).
pub const MAX_DEPTH: usize = 64;

/// One visited subschema.
pub struct Visit<'s> {
    pub schema: &'s Value,
    /// RFC 6901 pointer from the document root.
    pub pointer: String,
    /// Whether it is reached from the root through `properties` members
    /// only (the root itself included).
    pub through_properties: bool,
    /// The member names of that `properties` chain.
    pub property_path: Vec<&'s str>,
}

/// Calls `visit` for the root and every subschema below it.
pub fn walk<'s>(root: &'s Value, mut visit: impl FnMut(&Visit<'s>)) {
    let start = Visit {
        schema: root,
        pointer: String::new(),
        through_properties: true,
        property_path: Vec::new(),
    };
    walk_from(&start, 0, &mut visit);
}

fn walk_from<'s>(at: &Visit<'s>, depth: usize, visit: &mut impl FnMut(&Visit<'s>)) {
    visit(at);
    let Some(object) = at.schema.as_object() else {
        return;
    };
    if depth >= MAX_DEPTH {
        return;
    }
    for (keyword, holds, _) in KEYWORDS {
        let Some(value) = object.get(keyword) else {
            continue;
        };
        let base = format!("{}/{}", at.pointer, escape(keyword));
        let mut step = |schema: &'s Value, pointer: String, member: Option<&'s str>| {
            let through = at.through_properties && keyword == "properties";
            let mut property_path = Vec::new();
            if through {
                property_path.extend_from_slice(&at.property_path);
                property_path.extend(member);
            }
            let next = Visit {
                schema,
                pointer,
                through_properties: through,
                property_path,
            };
            walk_from(&next, depth + 1, visit);
        };
        match holds {
            Holds::One => step(value, base, None),
            Holds::List => {
                for (i, item) in value.as_array().into_iter().flatten().enumerate() {
                    step(item, format!("{base}/{i}"), None);
                }
            }
            Holds::Map => {
                for (name, item) in value.as_object().into_iter().flatten() {
                    step(item, format!("{base}/{}", escape(name)), Some(name));
                }
            }
        }
    }
}

/// Whether `keyword` holds subschemas applied in place (the table's
/// `InPlace` rows; references are the caller's to add).
pub fn applies_in_place(keyword: &str) -> bool {
    KEYWORDS
        .iter()
        .any(|&(name, _, applies)| applies == Applies::InPlace && name == keyword)
}

/// The subschemas `schema` applies in place (`allOf`'s, `then`, ...; not
/// `$ref`'s target, which takes resolving), in the table's order.
pub fn in_place(schema: &Map<String, Value>) -> impl Iterator<Item = &Value> {
    KEYWORDS
        .iter()
        .filter(|(_, _, applies)| *applies == Applies::InPlace)
        .filter_map(|(keyword, holds, _)| Some((schema.get(*keyword)?, *holds)))
        .flat_map(|(value, holds)| {
            let one = (holds == Holds::One).then_some(value);
            let list = value.as_array().filter(|_| holds == Holds::List);
            let map = value.as_object().filter(|_| holds == Holds::Map);
            one.into_iter()
                .chain(list.into_iter().flatten())
                .chain(map.into_iter().flat_map(Map::values))
        })
}

/// A pointer token for `name`.
pub fn escape(name: &str) -> String {
    name.replace('~', "~0").replace('/', "~1")
}

/// The local target of a `$ref` (`#` or `#/...`), if it resolves.
pub fn resolve<'s>(root: &'s Value, reference: &str) -> Option<&'s Value> {
    root.pointer(&crate::distill::local_pointer(reference)?)
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn in_place_gives_the_parts_applied_in_place_in_table_order() {
        let schema = json!({
            "$ref": "#/$defs/r",
            "else": {"title": "else"},
            "properties": {"p": {"title": "child"}},
            "dependentSchemas": {"d": {"title": "dependent"}},
            "allOf": [{"title": "all 0"}, {"title": "all 1"}],
            "not": {"title": "aside"},
            "anyOf": {"title": "not a list"},
            "then": {"title": "then"},
        });
        let titles: Vec<&str> = in_place(schema.as_object().unwrap())
            .map(|part| part["title"].as_str().unwrap())
            .collect();
        assert_eq!(titles, ["all 0", "all 1", "then", "else", "dependent"]);
        let mut applying: Vec<&str> = schema
            .as_object()
            .unwrap()
            .keys()
            .map(String::as_str)
            .filter(|key| applies_in_place(key))
            .collect();
        applying.sort_unstable();
        assert_eq!(
            applying,
            ["allOf", "anyOf", "dependentSchemas", "else", "then"]
        );
    }

    #[test]
    fn the_walk_sees_every_subschema_and_the_properties_chain() {
        let schema = json!({
            "properties": {"a": {"properties": {"b": {"type": "string"}}},
                           "c": {"items": {"type": "integer"}}},
            "allOf": [{"properties": {"d": {}}}]
        });
        let mut seen = Vec::new();
        walk(&schema, |visit| {
            seen.push((
                visit.pointer.clone(),
                visit.through_properties,
                visit.property_path.join("."),
            ))
        });
        assert!(seen.contains(&("/properties/a/properties/b".into(), true, "a.b".into())));
        assert!(seen.contains(&("/properties/c/items".into(), false, "".into())));
        assert!(seen.contains(&("/allOf/0/properties/d".into(), false, "".into())));
    }

    #[test]
    fn local_references_resolve_with_escapes() {
        let schema = json!({"$defs": {"a/b": {"type": "string"}, "c%d": {"type": "integer"}}});
        assert_eq!(
            resolve(&schema, "#/$defs/a~1b"),
            Some(&json!({"type": "string"}))
        );
        assert_eq!(
            resolve(&schema, "#/$defs/c%25d"),
            Some(&json!({"type": "integer"}))
        );
        assert_eq!(resolve(&schema, "other.json#/x"), None);
    }
}
