//! `minLength`, `maxLength` (code points, as jsonschema counts them) and
//! `pattern` (ECMA regex, decided by a tiny jsonschema validator).

use jsonschema::Validator;
use jsonschema::json::{Json, Node};
use serde_json::{Map, Value, json};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

pub(crate) struct StringKw<F: Json> {
    min_length: Option<(u64, String)>,
    max_length: Option<(u64, String)>,
    pattern: Option<(Validator<F>, String)>,
}

impl<F: Json> StringKw<F> {
    pub fn compile(b: &Build<'_, F>, schema: &Map<String, Value>) -> Option<StringKw<F>> {
        let min_length = schema
            .get("minLength")
            .and_then(as_count)
            .map(|n| (n, texts::min_length(n)));
        let max_length = schema
            .get("maxLength")
            .and_then(as_count)
            .map(|n| (n, texts::max_length(n)));
        let pattern = schema.get("pattern").and_then(Value::as_str).and_then(|p| {
            let validator = b.leaf(json!({ "pattern": p }), false)?;
            Some((validator, texts::pattern(p)))
        });
        if min_length.is_none() && max_length.is_none() && pattern.is_none() {
            return None;
        }
        Some(StringKw {
            min_length,
            max_length,
            pattern,
        })
    }

    /// The bound of `keyword` (`minLength` or `maxLength`).
    pub fn limit(&self, keyword: Keyword) -> Option<u64> {
        let bound = match keyword {
            Keyword::MinLength => &self.min_length,
            Keyword::MaxLength => &self.max_length,
            _ => return None,
        };
        bound.as_ref().map(|(limit, _)| *limit)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        if !instance.is_string() {
            return;
        }
        if let Some((min, text)) = &self.min_length
            && instance.string_length_within(*min, u64::MAX) == Some(false)
        {
            w.report(instance, Keyword::MinLength, Msg::Schema(text));
        }
        if let Some((max, text)) = &self.max_length
            && instance.string_length_within(0, *max) == Some(false)
        {
            w.report(instance, Keyword::MaxLength, Msg::Schema(text));
        }
        if let Some((validator, text)) = &self.pattern
            && !validator.is_valid(instance.clone())
        {
            w.report(instance, Keyword::Pattern, Msg::Schema(text));
        }
    }
}

/// A non-negative integer bound (`3` or `3.0`).
pub(crate) fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}
