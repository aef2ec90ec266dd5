//! `x-mcp-header` annotations (2026-07-28 Streamable HTTP, "custom headers
//! from tool parameters"): a property of a tool's input may ask that its
//! value travel also as an `Mcp-Param-{Name}` header. The rules for an
//! annotation, checked at registration (a tool breaking any is refused):
//! the name is a non-empty HTTP token (`1*tchar`, so no space, `:`, CR or
//! LF), case-insensitively unique in the schema; the property's type is
//! `string`, `integer` or `boolean` (not `number`); and the property is
//! reached from the root through `properties` only (not under `items`, a
//! combinator, a condition or a definition).

use serde_json::Value;

use super::subschemas;
use crate::distill::cut_at_echo_bound;

/// The annotation keyword.
pub const ANNOTATION: &str = "x-mcp-header";
/// The prefix of the header an annotated argument travels in.
pub const HEADER_PREFIX: &str = "Mcp-Param-";

/// The type of an annotated parameter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ParamKind {
    String,
    Integer,
    Boolean,
}

/// One annotated parameter of a tool.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HeaderParam {
    /// `Mcp-Param-{Name}`, as the annotation spells it.
    pub header: String,
    /// Member names from `arguments` down to the parameter.
    pub path: Vec<String>,
    pub kind: ParamKind,
}

/// Why an annotation refuses its tool; `at` is the annotated schema's
/// pointer, cut at the echo bound.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum HeaderParamError {
    /// Under `items`, a combinator, a condition or a definition.
    #[error("{ANNOTATION} at {at} is not on a property reached through properties")]
    NotOnProperty { at: String },
    /// Not a non-empty HTTP token.
    #[error("{ANNOTATION} at {at} is not a header name (a non-empty HTTP token)")]
    NotHeaderName { at: String },
    /// `number`, an object, an array or more than one type.
    #[error("{ANNOTATION} at {at} annotates a parameter that is not a string, integer or boolean")]
    NotScalar { at: String },
    /// Another annotation names the same header.
    #[error("{ANNOTATION} at {at} repeats a header name (names are case-insensitive)")]
    Repeated { at: String },
}

/// Every annotation of `schema`, or why the tool is refused.
pub fn read(schema: &Value) -> Result<Vec<HeaderParam>, HeaderParamError> {
    let mut params: Vec<HeaderParam> = Vec::new();
    let mut refusal = None;
    subschemas::walk(schema, |visit| {
        if refusal.is_some() {
            return;
        }
        let Some(annotation) = visit.schema.get(ANNOTATION) else {
            return;
        };
        let at = cut_at_echo_bound(&visit.pointer).into_owned();
        let at = if at.is_empty() { "(root)".into() } else { at };
        if !visit.through_properties || visit.property_path.is_empty() {
            refusal = Some(HeaderParamError::NotOnProperty { at });
            return;
        }
        let Some(name) = annotation.as_str().filter(|n| is_token(n)) else {
            refusal = Some(HeaderParamError::NotHeaderName { at });
            return;
        };
        let Some(kind) = kind_of(visit.schema) else {
            refusal = Some(HeaderParamError::NotScalar { at });
            return;
        };
        let header = format!("{HEADER_PREFIX}{name}");
        if params
            .iter()
            .any(|p| p.header.eq_ignore_ascii_case(&header))
        {
            refusal = Some(HeaderParamError::Repeated { at });
            return;
        }
        params.push(HeaderParam {
            header,
            path: visit.property_path.iter().map(|s| s.to_string()).collect(),
            kind,
        });
    });
    match refusal {
        Some(reason) => Err(reason),
        None => Ok(params),
    }
}

/// The parameter's one primitive type (`null` may join it: a null value
/// is sent without its header).
fn kind_of(schema: &Value) -> Option<ParamKind> {
    let named = |name: &str| match name {
        "string" => Some(ParamKind::String),
        "integer" => Some(ParamKind::Integer),
        "boolean" => Some(ParamKind::Boolean),
        _ => None,
    };
    match schema.get("type")? {
        Value::String(name) => named(name),
        Value::Array(names) => {
            let mut kinds = names
                .iter()
                .filter(|n| n.as_str() != Some("null"))
                .map(|n| n.as_str().and_then(named));
            let first = kinds.next()??;
            kinds.next().is_none().then_some(first)
        }
        _ => None,
    }
}

/// RFC 9110 `token`: one or more `tchar`.
pub(crate) fn is_token(name: &str) -> bool {
    !name.is_empty()
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b))
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    #[test]
    fn annotations_on_properties_at_any_depth_are_read() {
        let params = read(&json!({"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"},
            "account": {"type": "object", "properties": {
                "id": {"type": ["integer", "null"], "x-mcp-header": "Account-Id"}}}
        }}))
        .unwrap();
        assert_eq!(params.len(), 2);
        let account = params.iter().find(|p| p.header == "Mcp-Param-Account-Id");
        assert_eq!(account.unwrap().path, ["account", "id"]);
        assert_eq!(account.unwrap().kind, ParamKind::Integer);
    }

    #[test]
    fn broken_annotations_refuse_the_tool_with_a_reason() {
        let cases = [
            (
                json!({"properties": {"a": {"type": "number", "x-mcp-header": "A"}}}),
                "not a string",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A B"}}}),
                "header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A\r\nX: y"}}}),
                "header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": ""}}}),
                "header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": 3}}}),
                "header name",
            ),
            (
                json!({"properties": {"a": {"type": "string", "x-mcp-header": "A"},
                                   "b": {"type": "string", "x-mcp-header": "a"}}}),
                "repeats",
            ),
            (
                json!({"properties": {"a": {"type": "array", "items": {"type": "string", "x-mcp-header": "A"}}}}),
                "reached through properties",
            ),
            (
                json!({"anyOf": [{"properties": {"a": {"type": "string", "x-mcp-header": "A"}}}]}),
                "reached through properties",
            ),
            (
                json!({"properties": {"a": {"x-mcp-header": "A"}}}),
                "not a string",
            ),
        ];
        for (schema, expected) in cases {
            let reason = read(&schema).unwrap_err().to_string();
            assert!(reason.contains(expected), "{schema}: {reason}");
            assert!(!reason.contains('\n'));
        }
    }
}
