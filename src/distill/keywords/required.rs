//! `required` and `dependentRequired`: problems at the object, naming the
//! missing property (a schema word).

use jsonschema::json::{Json, Node, Object};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;
use crate::parse::same_text;

/// A property that must be present, and its text.
type Needed<F> = (<F as Json>::PreparedKey, String);

/// Most `required` names one pass over an object's members checks at once
/// (one bit each).
const MAX_SCANNED: usize = 64;

pub(crate) struct RequiredKw<F: Json> {
    required: Vec<Needed<F>>,
    /// The names of `required`, in its order, for the one-pass check.
    names: Vec<Box<str>>,
    dependent: Vec<(F::PreparedKey, Vec<Needed<F>>)>,
}

impl<F: Json> RequiredKw<F> {
    pub fn compile(schema: &Map<String, Value>) -> Option<RequiredKw<F>> {
        // The names are distinct: the schema was checked against the
        // metaschema, whose `required` has `uniqueItems`.
        let names: Vec<Box<str>> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .map(Box::from)
            .collect();
        let required: Vec<_> = names
            .iter()
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
            names,
            dependent,
        })
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(object) = instance.as_object() else {
            return;
        };
        let count = self.required.len();
        let members = object.len();
        if count > 1
            && count <= MAX_SCANNED
            && members <= F::KEYS_PER_LOOKUP * count
            && members <= 2 * count
        {
            // Where a lookup reads the members in order (the tape) and the
            // names are at least half the members, one pass over them
            // finds every required name at once (a few names among many
            // members are found sooner one by one).
            let mut present = 0u64;
            for (name, _) in object.members() {
                if let Some(at) = self
                    .names
                    .iter()
                    .position(|needed| same_text(needed, name.as_ref()))
                {
                    present |= 1 << at;
                }
            }
            for (at, (_, text)) in self.required.iter().enumerate() {
                if present & (1 << at) == 0 {
                    w.report(instance, Keyword::Required, Msg::Schema(text));
                }
            }
        } else {
            for (key, text) in &self.required {
                if object.get(key).is_none() {
                    w.report(instance, Keyword::Required, Msg::Schema(text));
                }
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
