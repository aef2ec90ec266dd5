//! `$ref`: a `#/…` pointer within the root resolves to the node interned
//! at that pointer (cycles close on themselves); any other reference is
//! delegated to a validator compiled against the root.

use jsonschema::Validator;
use jsonschema::json::Json;
use serde_json::{Map, Value, json};

use super::super::Keyword;
use super::super::build::{Build, local_pointer};
use super::super::texts::Msg;
use super::super::walk::{OnFalse, Walker};
use super::NodeId;

pub(crate) enum RefKw<F: Json> {
    Node(NodeId),
    Delegated(Validator<F>),
}

impl<F: Json> RefKw<F> {
    pub fn compile(b: &mut Build<'_, F>, schema: &Map<String, Value>) -> Option<RefKw<F>> {
        let reference = schema.get("$ref")?.as_str()?;
        if let Some(pointer) = local_pointer(reference)
            && b.root.pointer(&pointer).is_some()
        {
            return Some(RefKw::Node(b.intern(pointer)));
        }
        b.sub(&json!({ "$ref": reference })).map(RefKw::Delegated)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        match self {
            RefKw::Node(id) => w.walk(*id, instance, OnFalse::PLAIN),
            RefKw::Delegated(validator) => {
                if !validator.is_valid(instance.clone()) {
                    w.report(instance, Keyword::Other, Msg::Unsatisfied("$ref"));
                }
            }
        }
    }
}
