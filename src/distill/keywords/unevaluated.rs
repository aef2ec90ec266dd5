//! What `unevaluatedItems` and `unevaluatedProperties` share: the items or
//! members a node's in-place applicators evaluate, read statically once
//! when the explainer is built (every branch counts, valid or not), and
//! the node's whole validator for where that reading finds nothing.

use jsonschema::Validator;
use jsonschema::json::Json;
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::build::{Build, STATIC_DEPTH};
use super::super::texts::Msg;
use super::super::walk::Walker;
use super::NodeId;

/// What one schema object evaluates of its own, for one `unevaluated*`
/// keyword.
pub(crate) trait Reading<F: Json>: Default {
    /// The `unevaluated*` keyword.
    const KEY: &'static str;
    /// The keyword and text of the fallback's problem.
    const KEYWORD: Keyword;
    const REFUSED: &'static str;
    /// Keywords whose subschemas apply to the same instance besides the
    /// in-place applicators (`dependentSchemas`).
    const BESIDE: &'static [&'static str] = &[];

    /// Adds what `object` evaluates itself; `true` where that is every
    /// item or member.
    fn read(&mut self, b: &Build<'_, F>, object: &Map<String, Value>) -> bool;

    /// Readies what was read for the walk's lookups.
    fn finish(&mut self) {}
}

pub(crate) struct Unevaluated<F: Json, E> {
    pub node: NodeId,
    /// Some applicator evaluates every item or member.
    pub all: bool,
    pub evaluated: E,
    /// The whole node, for the fallback when the static reading finds
    /// nothing.
    whole: Option<Validator<F>>,
}

impl<F: Json, E: Reading<F>> Unevaluated<F, E> {
    pub fn compile(
        b: &mut Build<'_, F>,
        pointer: &str,
        schema: &Map<String, Value>,
    ) -> Option<Unevaluated<F, E>> {
        schema.get(E::KEY)?;
        let whole = Value::Object(schema.clone());
        let mut evaluated = E::default();
        let mut all = false;
        gather(b, &whole, &mut evaluated, &mut all, 0, true);
        evaluated.finish();
        Some(Unevaluated {
            node: b.child(pointer, &[E::KEY]),
            all,
            evaluated,
            whole: b.sub(&whole),
        })
    }

    /// Reports the keyword at `instance` where the node's own validator
    /// refuses it (when the static reading found nothing to report).
    pub fn fallback<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        if !Walker::<F>::valid(self.whole.as_ref(), instance) {
            w.report(instance, E::KEYWORD, Msg::Static(E::REFUSED));
        }
    }
}

/// Collects what the applicators of `schema` evaluate. `top` leaves the
/// node's own `unevaluated*` out.
fn gather<F: Json, E: Reading<F>>(
    b: &Build<'_, F>,
    schema: &Value,
    into: &mut E,
    all: &mut bool,
    depth: usize,
    top: bool,
) {
    if depth > STATIC_DEPTH || *all {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    // A nested `unevaluated*` evaluates whatever its own node leaves.
    if (!top && object.contains_key(E::KEY)) || into.read(b, object) {
        *all = true;
        return;
    }
    let beside = E::BESIDE
        .iter()
        .filter_map(|key| object.get(*key)?.as_object())
        .flat_map(Map::values);
    for branch in b.in_place_applicators(object).chain(beside) {
        gather(b, branch, into, all, depth + 1, false);
    }
}
