//! Every problem text the explainer writes, in one place. Texts name schema
//! words (keywords, bounds, property names from `required`, allowed values)
//! and never anything that was sent; every text is cut at the echo bound.

use std::fmt::Write;

use serde_json::Value;

use super::keywords::type_::TypeMask;
use super::path::{cut_at_echo_bound, within_echo_bound};

/// A problem, before its text is rendered: the collector renders only the
/// problems of the locations it reports.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Msg<'s> {
    /// A fixed text.
    Static(&'static str),
    /// A text rendered from the schema when the explainer was built.
    Schema(&'s str),
    /// An `enum` refused the value: its text, and the position among the
    /// allowed values of one the sent text equals but for ASCII case.
    NotAllowed {
        text: &'s str,
        case_twin: Option<u16>,
    },
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
pub(crate) const WIDE_INTEGER: &str =
    "value is an integer beyond 64 bits, which is not compared exactly with this bound";
pub(crate) const WIDE_INTEGER_HELD: &str =
    "value is an integer beyond 64 bits, refused where the schema compares numbers that large";
pub(crate) const ONE_OF_SEVERAL: &str = "value matches more than one alternative";
pub(crate) const NOT: &str = "value must not match the schema in 'not'";
pub(crate) const TOO_DEEP: &str = "value is nested too deeply to be checked";
pub(crate) const BUDGET: &str = "value could not be fully checked";

/// `and N more`, the entry closing a location's capped problem list.
pub(crate) fn and_more_into(out: &mut String, count: usize) {
    out.push_str("and ");
    out.push_str(itoa::Buffer::new().format(count));
    out.push_str(" more");
}

/// Appends a problem's text to `out`, cut at the echo bound as
/// [`cut_at_echo_bound`] cuts it; no allocation once `out` has room.
pub(crate) fn render_into(out: &mut String, msg: &Msg<'_>) {
    let start = out.len();
    match msg {
        Msg::Static(text) => out.push_str(text),
        Msg::Schema(text) | Msg::NotAllowed { text, .. } => out.push_str(text),
        Msg::Type { expected, found } => {
            out.push_str("expected ");
            type_list(out, *expected, "or");
            out.push_str(", found ");
            out.push_str(found);
        }
        Msg::NoAlternative { types } => {
            out.push_str("value matches none of the allowed alternatives");
            for (i, name) in types.names().enumerate() {
                out.push_str(if i == 0 {
                    "; expected one of the types: "
                } else {
                    ", "
                });
                out.push_str(name);
            }
        }
        Msg::Unsatisfied(keyword) => {
            out.push_str("value does not satisfy '");
            out.push_str(keyword);
            out.push('\'');
        }
    }
    let (kept, cut) = within_echo_bound(&out[start..]);
    if cut {
        out.truncate(start + kept.len());
        out.push('…');
    }
}

/// `string`, `string or null`, `string, array or object`.
fn type_list(out: &mut String, mask: TypeMask, last: &str) {
    let count = mask.names().count();
    if count == 0 {
        out.push_str("nothing");
    }
    for (i, name) in mask.names().enumerate() {
        if i > 0 {
            out.push_str(if i + 1 == count { " " } else { ", " });
            if i + 1 == count {
                out.push_str(last);
                out.push(' ');
            }
        }
        out.push_str(name);
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
