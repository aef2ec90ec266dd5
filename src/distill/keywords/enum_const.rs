//! `enum` and `const`: equality as jsonschema has it (numbers compare
//! mathematically, `1 == 1.0`), through the node's own `equals_value`.

use jsonschema::json::{Json, Node};
use serde_json::{Map, Value};

use super::super::texts::{self, Msg};
use super::super::walk::Walker;
use super::super::{Keyword, MAX_COMPARED};
use crate::parse::same_text;

pub(crate) struct EnumConstKw {
    constant: Option<(Value, String)>,
    allowed: Option<(Vec<Value>, String)>,
    /// An `enum` of strings only (the usual kind): its values as text, so
    /// that a value is compared as text, not as a JSON value.
    strings: Option<Box<[Box<str>]>>,
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
        let strings = allowed.as_ref().and_then(|(values, _)| {
            values
                .iter()
                .map(|value| value.as_str().map(Box::from))
                .collect::<Option<Box<[Box<str>]>>>()
        });
        Some(EnumConstKw {
            constant,
            allowed,
            strings,
        })
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
        if let Some((values, text)) = &self.allowed {
            let allowed = match &self.strings {
                // Only a string can equal a string.
                Some(strings) => instance
                    .as_string()
                    .is_some_and(|sent| strings.iter().any(|s| same_text(s, &sent))),
                None => values.iter().any(|value| instance.equals_value(value)),
            };
            if !allowed {
                let case_twin = case_twin::<F>(values, instance);
                w.report(instance, Keyword::Enum, Msg::NotAllowed { text, case_twin });
            }
        }
    }
}

/// The position among `values` of a string a refused string `instance`
/// equals but for ASCII case (no other can equal it exactly, or it would
/// not be refused), within [`MAX_COMPARED`] bytes.
#[cold]
fn case_twin<'a, F: Json>(values: &[Value], instance: &F::Node<'a>) -> Option<u16> {
    let sent = instance.as_string()?;
    let at = values.iter().position(|value| {
        value.as_str().is_some_and(|allowed| {
            allowed.len() <= MAX_COMPARED && allowed.eq_ignore_ascii_case(&sent)
        })
    })?;
    u16::try_from(at).ok()
}
