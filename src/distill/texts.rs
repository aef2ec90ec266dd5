//! Every problem text the explainer writes, in one place. Texts name schema
//! words (keywords, bounds, property names from `required`, allowed values)
//! and never anything that was sent; every text is cut at the echo bound.

use std::fmt::Write;

use serde_json::Value;

use super::keywords::type_::TypeMask;
use super::path::cut_at_echo_bound;

/// A problem, before its text is rendered: the collector renders only the
/// problems of the locations it reports.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Msg<'s> {
    /// A fixed text.
    Static(&'static str),
    /// A text rendered from the schema when the explainer was built.
    Schema(&'s str),
    /// `type` refused the value.
    Type {
        expected: TypeMask,
        found: &'static str,
    },
    /// No alternative of an `anyOf`/`oneOf` admits the value's type.
    NoAlternative { types: TypeMask },
    /// A keyword checked by a delegated validator, with no text of its own.
    Unsatisfied(&'s str),
}

pub(crate) const FALSE_SCHEMA: &str = "no value is allowed here";
pub(crate) const ADDITIONAL_PROPERTY: &str = "property is not allowed by additionalProperties";
pub(crate) const PATTERN_PROPERTY: &str = "property is not allowed by patternProperties";
pub(crate) const UNEVALUATED_PROPERTY: &str = "property is not allowed by unevaluatedProperties";
pub(crate) const UNEVALUATED_PROPERTIES: &str =
    "value has properties not allowed by unevaluatedProperties";
pub(crate) const PROPERTY_NAME: &str = "property name is not allowed by propertyNames";
pub(crate) const PROPERTY_FALSE: &str = "property is not allowed by properties";
pub(crate) const ITEM_NOT_ALLOWED: &str = "item is not allowed by items";
pub(crate) const PREFIX_ITEM_FALSE: &str = "item is not allowed by prefixItems";
pub(crate) const UNEVALUATED_ITEM: &str = "item is not allowed by unevaluatedItems";
pub(crate) const UNEVALUATED_ITEMS: &str = "value has items not allowed by unevaluatedItems";
pub(crate) const UNIQUE_ITEMS: &str = "value must contain unique items";
pub(crate) const MULTIPLE_OF_OVERFLOW: &str = "value could not be checked against multipleOf";
pub(crate) const ONE_OF_SEVERAL: &str = "value matches more than one alternative";
pub(crate) const NOT: &str = "value must not match the schema in 'not'";
pub(crate) const TOO_DEEP: &str = "value is nested too deeply to be checked";
pub(crate) const BUDGET: &str = "value could not be fully checked";

/// `and N more`, the entry closing a location's capped problem list.
pub(crate) fn and_more(count: usize) -> String {
    format!("and {count} more")
}

/// Renders a problem's text, cut at the echo bound.
pub(crate) fn render(msg: &Msg<'_>) -> String {
    let text = match msg {
        Msg::Static(text) => return cut_at_echo_bound(text).into_owned(),
        Msg::Schema(text) => return cut_at_echo_bound(text).into_owned(),
        Msg::Type { expected, found } => {
            format!("expected {}, found {found}", type_list(*expected, "or"))
        }
        Msg::NoAlternative { types } => {
            if types.is_empty() {
                "value matches none of the allowed alternatives".to_owned()
            } else {
                let mut text =
                    "value matches none of the allowed alternatives; expected one of the types: "
                        .to_owned();
                for (i, name) in types.names().enumerate() {
                    if i > 0 {
                        text.push_str(", ");
                    }
                    text.push_str(name);
                }
                text
            }
        }
        Msg::Unsatisfied(keyword) => format!("value does not satisfy '{keyword}'"),
    };
    cut_at_echo_bound(&text).into_owned()
}

/// `string`, `string or null`, `string, array or object`.
fn type_list(mask: TypeMask, last: &str) -> String {
    let names: Vec<&str> = mask.names().collect();
    match names.len() {
        0 => "nothing".to_owned(),
        1 => names[0].to_owned(),
        n => format!("{} {last} {}", names[..n - 1].join(", "), names[n - 1]),
    }
}

/// Renders a schema value compactly, never longer than a little past the
/// echo bound (the caller cuts the whole text).
fn schema_value(value: &Value, out: &mut String) {
    let rendered = serde_json::to_string(value).unwrap_or_default();
    out.push_str(&cut_at_echo_bound(&rendered));
}

// Texts rendered from the schema when the explainer is built.

pub(crate) fn required(property: &str) -> String {
    cut(format!(
        "missing required property '{}'",
        cut_at_echo_bound(property)
    ))
}

/// The property a [`required`] text names, unless the text was cut.
pub(crate) fn required_property(text: &str) -> Option<&str> {
    text.strip_prefix("missing required property '")?
        .strip_suffix('\'')
}

pub(crate) fn dependent_required(property: &str, present: &str) -> String {
    cut(format!(
        "property '{}' is required when '{}' is present",
        cut_at_echo_bound(property),
        cut_at_echo_bound(present)
    ))
}

pub(crate) fn constant(value: &Value) -> String {
    let mut text = "value must be the constant ".to_owned();
    schema_value(value, &mut text);
    cut(text)
}

pub(crate) fn one_of_values<'v>(values: impl IntoIterator<Item = &'v Value>) -> String {
    let mut text = "value is not one of the allowed values: ".to_owned();
    for (i, value) in values.into_iter().enumerate() {
        if text.len() > super::ECHO_BOUND {
            break;
        }
        if i > 0 {
            text.push_str(", ");
        }
        schema_value(value, &mut text);
    }
    cut(text)
}

pub(crate) fn minimum(bound: &Value) -> String {
    bound_text("value is lower than minimum ", bound)
}

pub(crate) fn maximum(bound: &Value) -> String {
    bound_text("value is higher than maximum ", bound)
}

pub(crate) fn exclusive_minimum(bound: &Value) -> String {
    bound_text("value must be greater than ", bound)
}

pub(crate) fn exclusive_maximum(bound: &Value) -> String {
    bound_text("value must be less than ", bound)
}

pub(crate) fn multiple_of(bound: &Value) -> String {
    bound_text("value is not a multiple of ", bound)
}

pub(crate) fn min_length(bound: u64) -> String {
    format!("value is shorter than minLength {bound}")
}

pub(crate) fn max_length(bound: u64) -> String {
    format!("value is longer than maxLength {bound}")
}

pub(crate) fn min_items(bound: u64) -> String {
    format!("value has fewer items than minItems {bound}")
}

pub(crate) fn max_items(bound: u64) -> String {
    format!("value has more items than maxItems {bound}")
}

pub(crate) fn min_properties(bound: u64) -> String {
    format!("value has fewer properties than minProperties {bound}")
}

pub(crate) fn max_properties(bound: u64) -> String {
    format!("value has more properties than maxProperties {bound}")
}

pub(crate) fn min_contains(bound: u64) -> String {
    format!("value must contain at least {bound} matching items ('contains')")
}

pub(crate) fn max_contains(bound: u64) -> String {
    format!("value must contain at most {bound} matching items ('contains')")
}

pub(crate) fn pattern(pattern: &str) -> String {
    cut(format!(
        "value does not match the pattern '{}'",
        cut_at_echo_bound(pattern)
    ))
}

pub(crate) fn format(format: &str) -> String {
    cut(format!(
        "value does not respect the '{}' format",
        cut_at_echo_bound(format)
    ))
}

fn bound_text(prefix: &str, bound: &Value) -> String {
    let mut text = prefix.to_owned();
    let _ = write!(text, "{}", cut_at_echo_bound(&bound.to_string()));
    cut(text)
}

fn cut(text: String) -> String {
    match cut_at_echo_bound(&text) {
        std::borrow::Cow::Borrowed(_) => text,
        std::borrow::Cow::Owned(cut) => cut,
    }
}
