//! `minLength`, `maxLength` (code points, as jsonschema counts them) and
//! `pattern` (ECMA regex, decided by a tiny jsonschema validator).

use jsonschema::Validator;
use jsonschema::json::{Json, Node};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;
use super::counts::{self, Counts};

pub(crate) struct StringKw<F: Json> {
    length: Counts,
    pattern: Option<(Validator<F>, String)>,
}

impl<F: Json> StringKw<F> {
    pub fn compile(b: &Build<'_, F>, schema: &Map<String, Value>) -> Option<StringKw<F>> {
        let length = Counts::compile(schema, &counts::LENGTH);
        let pattern = schema.get("pattern").and_then(Value::as_str).and_then(|p| {
            let validator = b.pattern(p)?;
            Some((validator, texts::pattern(p)))
        });
        if length.is_empty() && pattern.is_none() {
            return None;
        }
        Some(StringKw { length, pattern })
    }

    /// The bound of `keyword` (`minLength` or `maxLength`).
    pub fn limit(&self, keyword: Keyword) -> Option<u64> {
        self.length.limit(&counts::LENGTH, keyword)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        if !instance.is_string() {
            return;
        }
        self.length
            .check(w, instance, &counts::LENGTH, |low, high| {
                instance.string_length_within(low, high) == Some(false)
            });
        if let Some((validator, text)) = &self.pattern
            && !validator.is_valid(instance.clone())
        {
            w.report(instance, Keyword::Pattern, Msg::Schema(text));
        }
    }
}
