//! `required` and `dependentRequired`: problems at the object, naming the
//! missing property (a schema word).

use jsonschema::json::{Json, Node, Object};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

/// A property that must be present, and its text.
type Needed<F> = (<F as Json>::PreparedKey, String);

pub(crate) struct RequiredKw<F: Json> {
    required: Vec<Needed<F>>,
    dependent: Vec<(F::PreparedKey, Vec<Needed<F>>)>,
}

impl<F: Json> RequiredKw<F> {
    pub fn compile(schema: &Map<String, Value>) -> Option<RequiredKw<F>> {
        let required: Vec<_> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(|name| (F::prepare_key(name), texts::required(name)))
            .collect();
        let dependent: Vec<_> = schema
            .get("dependentRequired")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(present, names)| {
                let names: Vec<_> = names
                    .as_array()?
                    .iter()
                    .filter_map(Value::as_str)
                    .map(|name| {
                        (
                            F::prepare_key(name),
                            texts::dependent_required(name, present),
                        )
                    })
                    .collect();
                Some((F::prepare_key(present), names))
            })
            .collect();
        if required.is_empty() && dependent.is_empty() {
            return None;
        }
        Some(RequiredKw {
            required,
            dependent,
        })
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(object) = instance.as_object() else {
            return;
        };
        for (key, text) in &self.required {
            if object.get(key).is_none() {
                w.report(instance, Keyword::Required, Msg::Schema(text));
            }
        }
        for (present, names) in &self.dependent {
            if object.get(present).is_none() {
                continue;
            }
            for (key, text) in names {
                if object.get(key).is_none() {
                    w.report(instance, Keyword::DependentRequired, Msg::Schema(text));
                }
            }
        }
    }
}
