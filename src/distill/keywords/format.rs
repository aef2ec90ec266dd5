//! `format`, asserted only where the explainer's options say so (tool input
//! roots), decided by a tiny jsonschema validator; the text names the
//! format only.

use jsonschema::Validator;
use jsonschema::json::Json;
use serde_json::{Map, Value, json};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

pub(crate) struct FormatKw<F: Json> {
    validator: Validator<F>,
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
        let validator = b.leaf(json!({ "format": name }), true)?;
        Some(FormatKw {
            validator,
            name: name.to_owned(),
            text: texts::format(name),
        })
    }

    /// The format's name, as the schema writes it.
    pub fn name(&self) -> &str {
        &self.name
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        if !self.validator.is_valid(instance.clone()) {
            w.report(instance, Keyword::Format, Msg::Schema(&self.text));
        }
    }
}
