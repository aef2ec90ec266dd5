//! `minimum`, `maximum`, `exclusiveMinimum`, `exclusiveMaximum`,
//! `multipleOf`: decided as the verdict decided them, so big numbers and
//! floats compare exactly alike. An integer bound is compared by the very
//! function jsonschema's validator for it calls (`jsonschema_value`'s
//! `numeric`), without the validator's dispatch; any other bound, and
//! `multipleOf`, by a tiny jsonschema validator. Texts name the bound only.
//! An integer beyond 64 bits that its float does not hold exactly is
//! reported at a bound of magnitude 2^63 or more and at a `multipleOf` that
//! does not divide its text, which its float may be judged otherwise by
//! (the gate refuses it wherever the schema has such a comparison:
//! `Explainer::compares_wide_integers`).

use jsonschema::Validator;
use jsonschema::json::{Json, JsonNumber, Node};
use jsonschema_value::numeric;
use serde_json::{Map, Value, json};

use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;
use super::super::{Keyword, divides_by_text, is_wide_integer, reaches_wide};

/// A bound keyword: its name, its keyword and its text.
type Kind = (&'static str, Keyword, fn(&Value) -> String);

/// How a bound is decided.
enum Decide<F: Json> {
    /// An integer bound (jsonschema's validator holds it as `u64` or
    /// `i64`, whichever the schema's number is first), compared directly.
    Integer(Integer),
    Delegated(Validator<F>),
}

#[derive(Clone, Copy)]
enum Integer {
    Unsigned(u64),
    Signed(i64),
}

impl Integer {
    /// Whether `number` stands on the allowed side of the bound of
    /// `keyword`, as jsonschema's validator of that keyword decides it.
    fn admits<N: JsonNumber>(self, keyword: Keyword, number: &N) -> bool {
        match (keyword, self) {
            (Keyword::Minimum, Integer::Unsigned(limit)) => numeric::ge(number, limit),
            (Keyword::Minimum, Integer::Signed(limit)) => numeric::ge(number, limit),
            (Keyword::Maximum, Integer::Unsigned(limit)) => numeric::le(number, limit),
            (Keyword::Maximum, Integer::Signed(limit)) => numeric::le(number, limit),
            (Keyword::ExclusiveMinimum, Integer::Unsigned(limit)) => numeric::gt(number, limit),
            (Keyword::ExclusiveMinimum, Integer::Signed(limit)) => numeric::gt(number, limit),
            (Keyword::ExclusiveMaximum, Integer::Unsigned(limit)) => numeric::lt(number, limit),
            (Keyword::ExclusiveMaximum, Integer::Signed(limit)) => numeric::lt(number, limit),
            _ => unreachable!("only the four bounds are compared directly"),
        }
    }
}

struct Bound<F: Json> {
    keyword: Keyword,
    decide: Decide<F>,
    text: String,
    /// The bound as the schema writes it, for the hint that names it.
    limit: Value,
    /// `multipleOf`'s divisor, to tell overflow from a plain miss.
    divisor: Option<f64>,
    /// Whether an integer beyond 64 bits may be judged otherwise by its
    /// float than by its exact value here: a bound its float may round to,
    /// or a `multipleOf` that does not divide its text.
    wide: bool,
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
            let integer = match bound.as_u64() {
                Some(limit) => Some(Integer::Unsigned(limit)),
                None => bound.as_i64().map(Integer::Signed),
            };
            let decide = match integer {
                Some(integer) if keyword != Keyword::MultipleOf => Decide::Integer(integer),
                _ => match b.leaf(json!({ name: bound }), false) {
                    Some(validator) => Decide::Delegated(validator),
                    None => continue,
                },
            };
            bounds.push(Bound {
                keyword,
                decide,
                text: text(bound),
                limit: bound.clone(),
                divisor: (keyword == Keyword::MultipleOf)
                    .then(|| bound.as_f64())
                    .flatten(),
                wide: match bound {
                    Value::Number(limit) if keyword != Keyword::MultipleOf => reaches_wide(limit),
                    _ => bound.as_f64().is_some_and(divides_by_text),
                },
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
        let wide = is_wide_integer(&number);
        for bound in &self.bounds {
            if wide && bound.wide {
                w.report(instance, bound.keyword, Msg::Static(texts::WIDE_INTEGER));
                continue;
            }
            let valid = match &bound.decide {
                Decide::Integer(integer) => integer.admits(bound.keyword, &number),
                Decide::Delegated(validator) => validator.is_valid(instance.clone()),
            };
            if valid {
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
