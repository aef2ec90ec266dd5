//! `format`, asserted only where the explainer's options say so (tool input
//! roots): decided by the gate's own check where it has one (the one a
//! validator built with its formats would call), else by a tiny jsonschema
//! validator; the text names the format only.

use jsonschema::Validator;
use jsonschema::json::{Json, Node};
use serde_json::{Map, Value, json};

use super::super::Keyword;
use super::super::build::Build;
use super::super::formats;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

/// How a format is decided.
enum Check<F: Json> {
    /// The gate's own check, called directly: a validator would call it
    /// for a string only, through its dispatch.
    Own(formats::FormatCheck),
    Delegated(Validator<F>),
}

pub(crate) struct FormatKw<F: Json> {
    check: Check<F>,
    /// The format's name, for the hint that names it.
    name: String,
    text: String,
}

impl<F: Json> FormatKw<F> {
    pub fn compile(b: &Build<'_, F>, schema: &Map<String, Value>) -> Option<FormatKw<F>> {
        if !b.assert_formats {
            return None;
        }
        let name = schema.get("format")?.as_str()?;
        let check = match formats::own_check(name) {
            Some(check) => Check::Own(check),
            None => Check::Delegated(b.leaf(json!({ "format": name }), true)?),
        };
        Some(FormatKw {
            check,
            name: name.to_owned(),
            text: texts::format(name),
        })
    }

    /// The format's name, as the schema writes it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let valid = match &self.check {
            // `format` says nothing of a value that is not a string.
            Check::Own(check) => instance.as_string().is_none_or(|text| check(&text)),
            Check::Delegated(validator) => validator.is_valid(instance.clone()),
        };
        if !valid {
            w.report(instance, Keyword::Format, Msg::Schema(&self.text));
        }
    }
}
