//! Registration: everything a call needs, built once per tool. A tool that
//! fails any step is refused with one reason and never reaches the catalog.

use jsonschema::Validator;
use serde_json::Value;

use super::header_params::{self, HeaderParam, HeaderParamError};
use super::keys::KeySet;
use super::subschemas;
use super::{CatalogOptions, close};
use crate::distill::{ExplainOptions, Explainer, cut_at_echo_bound, formats};
use crate::parse::{ParseLimits, Parser, TapeJson};
use crate::reject::dialect::examples_json;

/// A tool ready for calls.
pub struct Tool {
    /// Shared with the answers watched for it (no copy per call).
    pub name: std::sync::Arc<str>,
    /// The input root: the tool's `inputSchema`, closed, formats asserted.
    pub input: Validator<TapeJson>,
    /// The input root's error path.
    pub explainer: Explainer<TapeJson>,
    /// The input root as JSON, for hints (property names, allowed values).
    pub schema: Value,
    /// Whether some schema in `schema` may apply another in place (a key
    /// such as `allOf`, `then` or `$ref` anywhere): the hints look for the
    /// schemas a location has only then.
    pub applies_in_place: bool,
    /// Whether a call without `arguments` passes (as `{}` would).
    pub accepts_no_arguments: bool,
    /// Arguments mirrored in `Mcp-Param-*` headers.
    pub header_params: Vec<HeaderParam>,
    /// The top-level keys the schema names, for pre-flight normalization.
    pub keys: KeySet,
    /// The output root (`outputSchema`, formats as annotations), for
    /// answers watched on their way back (read with serde_json).
    pub output: Option<jsonschema::Validator>,
    /// The schema's own `examples` of valid input, as the envelope sends
    /// them (`reject::dialect::examples_json`).
    pub examples: Box<[u8]>,
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.name)
            .field("header_params", &self.header_params)
            .finish_non_exhaustive()
    }
}

/// Why a tool is refused at registration: its text is the reason the log
/// line and [`Refused`](super::Refused) give.
#[derive(Debug, thiserror::Error)]
pub enum RegisterError {
    #[error("name is missing or not a non-empty string")]
    Name,
    #[error("inputSchema is missing or not an object schema (type \"object\")")]
    NotObjectSchema,
    #[error(transparent)]
    HeaderParam(#[from] HeaderParamError),
    /// What compiling the input root said, on one line.
    #[error("inputSchema: {0}")]
    InputSchema(String),
    /// What compiling the output root said, on one line.
    #[error("outputSchema: {0}")]
    OutputSchema(String),
    /// A `default` its own schema refuses, at this pointer.
    #[error("the default at {at} is refused by its own schema")]
    Default { at: String },
    /// A tool registered before it has the same name.
    #[error("another tool of the catalog has this name")]
    DuplicateName,
}

/// Builds one tool from its definition (a `Tool` of `tools/list`).
pub fn register(definition: &Value, options: &CatalogOptions) -> Result<Tool, RegisterError> {
    let name = definition
        .get("name")
        .and_then(Value::as_str)
        .filter(|name| !name.is_empty())
        .ok_or(RegisterError::Name)?;
    let input = definition
        .get("inputSchema")
        .filter(|schema| schema.get("type").and_then(Value::as_str) == Some("object"))
        .ok_or(RegisterError::NotObjectSchema)?;
    let header_params = header_params::read(input)?;
    let schema = if options.close_objects {
        close::close(input)
    } else {
        input.clone()
    };
    let validator = compile_input(&schema)?;
    let explainer = Explainer::new(
        &schema,
        ExplainOptions {
            assert_formats: true,
        },
    )
    .map_err(|e| RegisterError::InputSchema(e.reason))?;
    check_defaults(&schema)?;
    let output = match definition.get("outputSchema") {
        Some(output) => Some(compile_output(output)?),
        None => None,
    };
    let mut parser = Parser::default();
    let accepts_no_arguments = parser
        .parse(b"{}", ParseLimits { max_depth: 1 })
        .is_ok_and(|empty| validator.is_valid(empty.root()));
    let closed = ["additionalProperties", "unevaluatedProperties"]
        .iter()
        .any(|keyword| schema.get(*keyword) == Some(&Value::Bool(false)));
    let keys = KeySet::read(input, closed);
    let examples = examples_json(
        input
            .get("examples")
            .and_then(Value::as_array)
            .map_or(&[][..], Vec::as_slice),
    );
    Ok(Tool {
        name: name.into(),
        input: validator,
        explainer,
        applies_in_place: applies_in_place(&schema),
        schema,
        accepts_no_arguments,
        header_params,
        keys,
        output,
        examples,
    })
}

/// Whether a key that applies a schema in place (one the subschema table
/// says so of, or `$ref`) occurs anywhere in `schema`, at any depth (a
/// property of that name too: it only costs the search).
fn applies_in_place(schema: &Value) -> bool {
    let in_place = |key: &str| key == "$ref" || subschemas::applies_in_place(key);
    match schema {
        Value::Object(members) => members
            .iter()
            .any(|(key, value)| in_place(key) || applies_in_place(value)),
        Value::Array(items) => items.iter().any(applies_in_place),
        _ => false,
    }
}

/// Compiles a tool's input root: JSON Schema 2020-12 unless it names its
/// own `$schema`; formats asserted, an unknown format refused.
fn compile_input(schema: &Value) -> Result<Validator<TapeJson>, RegisterError> {
    let mut options = formats::with_own_formats(jsonschema::options_for::<TapeJson>())
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options
        .build(schema)
        .map_err(|e| RegisterError::InputSchema(compile_text(&e)))
}

/// The output root: formats are annotations (the gateway watches answers,
/// it does not judge them by format).
fn compile_output(schema: &Value) -> Result<jsonschema::Validator, RegisterError> {
    let mut options = jsonschema::options().should_validate_formats(false);
    if schema.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options
        .build(schema)
        .map_err(|e| RegisterError::OutputSchema(compile_text(&e)))
}

/// Every `default` must pass its own schema (closed, formats asserted): a
/// default the gate would refuse is a broken tool.
fn check_defaults(schema: &Value) -> Result<(), RegisterError> {
    let mut refusal = None;
    subschemas::walk(schema, |visit| {
        if refusal.is_some() {
            return;
        }
        let Some(default) = visit.schema.get("default") else {
            return;
        };
        let Some(validator) = default_validator(schema, visit.schema) else {
            return;
        };
        if !validator.is_valid(default) {
            let at = if visit.pointer.is_empty() {
                "(root)".to_owned()
            } else {
                cut_at_echo_bound(&visit.pointer).into_owned()
            };
            refusal = Some(RegisterError::Default { at });
        }
    });
    refusal.map_or(Ok(()), Err)
}

/// A validator for one subschema of `root`, with the root's definitions in
/// reach of its `$ref`s. `None` when it cannot be built on its own (a
/// reference into the root's other parts): that default goes unchecked.
fn default_validator(root: &Value, subschema: &Value) -> Option<jsonschema::Validator> {
    let mut standalone = subschema.clone();
    if let (Some(object), Some(root)) = (standalone.as_object_mut(), root.as_object()) {
        for key in ["$defs", "definitions", "$schema"] {
            if let Some(value) = root.get(key) {
                object.entry(key).or_insert_with(|| value.clone());
            }
        }
    }
    let mut options = jsonschema::options()
        .should_validate_formats(true)
        .should_ignore_unknown_formats(false);
    if standalone.get("$schema").is_none() {
        options = options.with_draft(jsonschema::Draft::Draft202012);
    }
    options.build(&standalone).ok()
}

/// A schema compiler's message on one line, cut at the echo bound.
fn compile_text(error: &impl std::fmt::Display) -> String {
    cut_at_echo_bound(&one_line(&error.to_string())).into_owned()
}

fn one_line(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::applies_in_place;

    #[test]
    fn a_schema_applies_in_place_where_any_of_its_schemas_may() {
        let flat = json!({"type": "object", "properties": {"a": {"type": "array",
            "items": {"enum": [{"x": 1}]}}}, "required": ["a"]});
        assert!(!applies_in_place(&flat));
        for part in [
            json!({"allOf": [{}]}),
            json!({"anyOf": [{}]}),
            json!({"oneOf": [{}]}),
            json!({"if": {}, "then": {}}),
            json!({"if": {}, "else": {}}),
            json!({"$ref": "#"}),
            // Applied in place though a hint does not follow it: the flag
            // only has to cover what hints follow.
            json!({"dependentSchemas": {"b": {}}}),
        ] {
            let mut deep = flat.clone();
            deep["properties"]["a"]["items"] = part.clone();
            assert!(applies_in_place(&deep), "{part}");
        }
        // A property of such a name is read as one (the search only costs).
        assert!(applies_in_place(&json!({"properties": {"$ref": {}}})));
    }
}
