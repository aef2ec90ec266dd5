//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`: decided by tiny jsonschema validators (so big numbers and
//! floats compare exactly as the verdict did); texts name the bound only.

use jsonschema::Validator;
use jsonschema::json::{Json, JsonNumber, Node};
use serde_json::{Map, Value, json};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

/// A bound keyword: its name, its keyword and its text.
type Kind = (&'static str, Keyword, fn(&Value) -> String);

struct Bound<F: Json> {
    keyword: Keyword,
    validator: Validator<F>,
    text: String,
    /// The bound as the schema writes it, for the hint that names it.
    limit: Value,
    /// `multipleOf`'s divisor, to tell overflow from a plain miss.
    divisor: Option<f64>,
}

pub(crate) struct NumericKw<F: Json> {
    bounds: Vec<Bound<F>>,
}

impl<F: Json> NumericKw<F> {
    pub fn compile(b: &Build<'_, F>, schema: &Map<String, Value>) -> Option<NumericKw<F>> {
        let mut bounds = Vec::new();
        let kinds: [Kind; 5] = [
            ("minimum", Keyword::Minimum, texts::minimum),
            ("maximum", Keyword::Maximum, texts::maximum),
            (
                "exclusiveMinimum",
                Keyword::ExclusiveMinimum,
                texts::exclusive_minimum,
            ),
            (
                "exclusiveMaximum",
                Keyword::ExclusiveMaximum,
                texts::exclusive_maximum,
            ),
            ("multipleOf", Keyword::MultipleOf, texts::multiple_of),
        ];
        for (name, keyword, text) in kinds {
            let Some(bound) = schema.get(name).filter(|v| v.is_number()) else {
                continue;
            };
            let Some(validator) = b.leaf(json!({ name: bound }), false) else {
                continue;
            };
            bounds.push(Bound {
                keyword,
                validator,
                text: text(bound),
                limit: bound.clone(),
                divisor: (keyword == Keyword::MultipleOf)
                    .then(|| bound.as_f64())
                    .flatten(),
            });
        }
        (!bounds.is_empty()).then_some(NumericKw { bounds })
    }

    /// The bound of `keyword`, as the schema writes it.
    pub fn limit(&self, keyword: Keyword) -> Option<&Value> {
        let bound = self.bounds.iter().find(|bound| bound.keyword == keyword)?;
        Some(&bound.limit)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(number) = instance.as_number() else {
            return;
        };
        for bound in &self.bounds {
            if bound.validator.is_valid(instance.clone()) {
                continue;
            }
            let overflow = bound.divisor.is_some_and(|divisor| {
                let quotient = number.as_f64().map(|value| value / divisor);
                quotient.is_none_or(|q| !q.is_finite() || q.abs() >= 9_007_199_254_740_992.0)
            });
            let text = if overflow {
                Msg::Static(texts::MULTIPLE_OF_OVERFLOW)
            } else {
                Msg::Schema(&bound.text)
            };
            w.report(instance, bound.keyword, text);
        }
    }
}
