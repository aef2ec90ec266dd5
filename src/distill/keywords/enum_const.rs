//! `enum` and `const`: equality as jsonschema has it (numbers compare
//! mathematically, `1 == 1.0`), through the node's own `equals_value`.

use jsonschema::json::{Json, Node};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

pub(crate) struct EnumConstKw {
    constant: Option<(Value, String)>,
    allowed: Option<(Vec<Value>, String)>,
}

impl EnumConstKw {
    pub fn compile(schema: &Map<String, Value>) -> Option<EnumConstKw> {
        let constant = schema
            .get("const")
            .map(|value| (value.clone(), texts::constant(value)));
        let allowed = schema
            .get("enum")
            .and_then(Value::as_array)
            .map(|values| (values.clone(), texts::one_of_values(values)));
        if constant.is_none() && allowed.is_none() {
            return None;
        }
        Some(EnumConstKw { constant, allowed })
    }

    /// The values `enum` allows.
    pub fn allowed(&self) -> Option<&[Value]> {
        self.allowed.as_ref().map(|(values, _)| values.as_slice())
    }

    pub fn check<'a, F: Json>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        if let Some((value, text)) = &self.constant
            && !instance.equals_value(value)
        {
            w.report(instance, Keyword::Const, Msg::Schema(text));
        }
        if let Some((values, text)) = &self.allowed
            && !values.iter().any(|value| instance.equals_value(value))
        {
            w.report(instance, Keyword::Enum, Msg::Schema(text));
        }
    }
}
