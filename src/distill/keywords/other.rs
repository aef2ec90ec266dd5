//! Every keyword not read structurally (and not an annotation): compiled on
//! its own against the root and reported as `value does not satisfy
//! '<keyword>'` when it refuses the value.

use jsonschema::Validator;
use jsonschema::json::Json;
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::Msg;
use super::super::walk::Walker;

/// Keywords read structurally elsewhere, or annotations.
const KNOWN: &[&str] = &[
    // core and annotations
    "$schema",
    "$id",
    "$anchor",
    "$dynamicAnchor",
    "$comment",
    "$defs",
    "definitions",
    "$vocabulary",
    "title",
    "description",
    "default",
    "examples",
    "readOnly",
    "writeOnly",
    "deprecated",
    "contentMediaType",
    "contentEncoding",
    "contentSchema",
    "$ref",
    // read structurally
    "type",
    "enum",
    "const",
    "required",
    "dependentRequired",
    "properties",
    "patternProperties",
    "additionalProperties",
    "propertyNames",
    "unevaluatedProperties",
    "minProperties",
    "maxProperties",
    "dependentSchemas",
    "prefixItems",
    "items",
    "contains",
    "minContains",
    "maxContains",
    "minItems",
    "maxItems",
    "uniqueItems",
    "unevaluatedItems",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "multipleOf",
    "minLength",
    "maxLength",
    "pattern",
    "format",
    "allOf",
    "anyOf",
    "oneOf",
    "not",
    "if",
    "then",
    "else",
];

pub(crate) struct OtherKw<F: Json> {
    keywords: Vec<(String, Validator<F>)>,
}

impl<F: Json> OtherKw<F> {
    pub fn compile(b: &Build<'_, F>, schema: &Map<String, Value>) -> Option<OtherKw<F>> {
        let keywords: Vec<_> = schema
            .iter()
            .filter(|(key, _)| !KNOWN.contains(&key.as_str()) && !key.starts_with("x-"))
            .filter_map(|(key, value)| {
                let mut alone = Map::new();
                alone.insert(key.clone(), value.clone());
                let validator = b.sub(&Value::Object(alone))?;
                Some((key.clone(), validator))
            })
            .collect();
        (!keywords.is_empty()).then_some(OtherKw { keywords })
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        for (keyword, validator) in &self.keywords {
            if !validator.is_valid(instance.clone()) {
                w.report(instance, Keyword::Other, Msg::Unsatisfied(keyword));
            }
        }
    }
}
