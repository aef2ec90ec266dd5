//! `allOf`, `anyOf`, `oneOf`, `not`, `if`/`then`/`else`.
//!
//! An `anyOf`/`oneOf` that the value fails is never reported as such when its
//! branches can be: only the branches whose `type` admits the value are
//! walked, and among object branches discriminated by a `const` property
//! (content blocks by `type`), only those whose constant the value carries.
//! When no branch is left, one problem names what was allowed.

use std::borrow::Cow;

use jsonschema::Validator;
use jsonschema::json::{Json, Node, Object};
use serde_json::{Map, Value};
use smallvec::SmallVec;

use super::super::Keyword;
use super::super::build::{Build, STATIC_DEPTH};
use super::super::texts::{self, Msg};
use super::super::walk::{OnFalse, Walker};
use super::NodeId;
use super::type_::{TypeMask, type_bit};

struct Branch<F: Json> {
    node: NodeId,
    validator: Option<Validator<F>>,
    /// The types the branch can admit (`None`: any).
    types: Option<TypeMask>,
    /// Properties the branch pins to one value.
    consts: Vec<(F::PreparedKey, Value)>,
    /// The branch's value of the discriminating property, if there is one.
    discriminant: Option<Value>,
    /// Properties the branch requires (read statically).
    required: Vec<F::PreparedKey>,
}

impl<F: Json> Branch<F> {
    /// Whether the branch can admit a value of type bit `found`.
    fn admits(&self, found: u8) -> bool {
        self.types.is_none_or(|types| types.admits(found))
    }
}

struct Discriminator<F: Json> {
    name: String,
    key: F::PreparedKey,
    not_one_of: String,
    missing: String,
}

struct Alternatives<F: Json> {
    keyword: Keyword,
    branches: Vec<Branch<F>>,
    types: TypeMask,
    discriminator: Option<Discriminator<F>>,
}

pub(crate) struct CombinatorsKw<F: Json> {
    all_of: Vec<NodeId>,
    any_of: Option<Alternatives<F>>,
    one_of: Option<Alternatives<F>>,
    not: Option<Validator<F>>,
    condition: Option<(Validator<F>, Option<NodeId>, Option<NodeId>)>,
}

impl<F: Json> CombinatorsKw<F> {
    pub fn compile(
        b: &mut Build<'_, F>,
        pointer: &str,
        schema: &Map<String, Value>,
    ) -> Option<CombinatorsKw<F>> {
        let all_of: Vec<NodeId> = schema
            .get("allOf")
            .and_then(Value::as_array)
            .map(|list| {
                (0..list.len())
                    .map(|i| b.child(pointer, &["allOf", &i.to_string()]))
                    .collect()
            })
            .unwrap_or_default();
        let any_of = Alternatives::compile(b, pointer, schema, "anyOf", Keyword::AnyOf);
        let one_of = Alternatives::compile(b, pointer, schema, "oneOf", Keyword::OneOf);
        let not = schema.get("not").and_then(|value| b.sub(value));
        let condition = schema.get("if").and_then(|value| {
            let validator = b.sub(value)?;
            let then = schema.get("then").map(|_| b.child(pointer, &["then"]));
            let otherwise = schema.get("else").map(|_| b.child(pointer, &["else"]));
            Some((validator, then, otherwise))
        });
        if all_of.is_empty()
            && any_of.is_none()
            && one_of.is_none()
            && not.is_none()
            && condition.is_none()
        {
            return None;
        }
        Some(CombinatorsKw {
            all_of,
            any_of,
            one_of,
            not,
            condition,
        })
    }

    /// The branches of an `anyOf` that is all there is, each with the
    /// types it can admit (`None`: any), and the types they admit together.
    pub fn only_any_of(
        &self,
    ) -> Option<(
        TypeMask,
        impl Iterator<Item = (NodeId, Option<TypeMask>)> + '_,
    )> {
        let alone = self.all_of.is_empty()
            && self.one_of.is_none()
            && self.not.is_none()
            && self.condition.is_none();
        let any_of = self.any_of.as_ref().filter(|_| alone)?;
        let branches = any_of
            .branches
            .iter()
            .map(|branch| (branch.node, branch.types));
        Some((any_of.types, branches))
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        // One branch is a wrapper (`allOf: [{$ref}]`), not a combination.
        if self.all_of.len() > 1 {
            w.inside(Keyword::AllOf, |w| {
                for id in &self.all_of {
                    w.walk(*id, instance, OnFalse::PLAIN);
                }
            });
        } else if let Some(id) = self.all_of.first() {
            w.walk(*id, instance, OnFalse::PLAIN);
        }
        if let Some(alternatives) = &self.any_of {
            alternatives.check(w, instance);
        }
        if let Some(alternatives) = &self.one_of {
            alternatives.check(w, instance);
        }
        if let Some(validator) = &self.not
            && validator.is_valid(instance.clone())
        {
            w.report(instance, Keyword::Not, Msg::Static(texts::NOT));
        }
        if let Some((validator, then, otherwise)) = &self.condition {
            let next = if validator.is_valid(instance.clone()) {
                then
            } else {
                otherwise
            };
            if let Some(id) = next {
                w.walk(*id, instance, OnFalse::PLAIN);
            }
        }
    }
}

impl<F: Json> Alternatives<F> {
    fn compile(
        b: &mut Build<'_, F>,
        pointer: &str,
        schema: &Map<String, Value>,
        name: &str,
        keyword: Keyword,
    ) -> Option<Alternatives<F>> {
        let list = schema.get(name)?.as_array()?;
        let mut branches = Vec::with_capacity(list.len());
        let mut types = TypeMask::default();
        let mut pinned: Vec<Vec<(String, Value)>> = Vec::with_capacity(list.len());
        for (i, value) in list.iter().enumerate() {
            let branch_types = static_types(b, value, 0);
            types = types.union(branch_types.unwrap_or(TypeMask::ALL));
            let mut consts = Vec::new();
            gather_consts(b, value, &mut consts);
            let mut required = Vec::new();
            gather_required(b, value, &mut required);
            branches.push(Branch {
                node: b.child(pointer, &[name, &i.to_string()]),
                validator: b.sub(value),
                types: branch_types,
                consts: consts
                    .iter()
                    .map(|(key, value)| (F::prepare_key(key), value.clone()))
                    .collect(),
                discriminant: None,
                required: required.iter().map(|key| F::prepare_key(key)).collect(),
            });
            pinned.push(consts);
        }
        let discriminator = find_discriminator(&branches, &pinned).map(|name| {
            let mut allowed: Vec<&Value> = Vec::new();
            for (branch, consts) in branches.iter_mut().zip(&pinned) {
                if let Some((_, value)) = consts.iter().find(|(key, _)| *key == name) {
                    branch.discriminant = Some(value.clone());
                    if !allowed.contains(&value) {
                        allowed.push(value);
                    }
                }
            }
            Discriminator {
                key: F::prepare_key(&name),
                not_one_of: texts::one_of_values(allowed),
                missing: texts::required(&name),
                name,
            }
        });
        Some(Alternatives {
            keyword,
            branches,
            types,
            discriminator,
        })
    }

    fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let found = type_bit::<F>(instance);
        let admits = |branch: &&Branch<F>| branch.admits(found);
        if self.branches.iter().filter(admits).nth(1).is_none() {
            // At most one branch admits the value's type: the alternatives
            // hold exactly when that branch does, which the walk into it
            // finds. Asking its validator first would go over the value
            // twice, and at every level of a recursive schema again.
            w.inside(self.keyword, |w| self.explain(w, instance, found));
            return;
        }
        let mut valid = 0;
        for branch in self.branches.iter().filter(admits) {
            if Walker::<F>::valid(branch.validator.as_ref(), instance) {
                valid += 1;
                if self.keyword == Keyword::AnyOf || valid > 1 {
                    break;
                }
            }
        }
        match (self.keyword, valid) {
            (Keyword::AnyOf, 0) | (Keyword::OneOf, 0) => {}
            (Keyword::OneOf, n) if n > 1 => {
                w.report(instance, Keyword::OneOf, Msg::Static(texts::ONE_OF_SEVERAL));
                return;
            }
            _ => return,
        }
        w.inside(self.keyword, |w| self.explain(w, instance, found));
    }

    /// Why no branch (of a `oneOf`: no single branch) admits `instance`,
    /// whose type bit is `found`.
    fn explain<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>, found: u8) {
        let mut candidates: SmallVec<[&Branch<F>; 8]> = self
            .branches
            .iter()
            .filter(|branch| branch.admits(found))
            .collect();
        if candidates.is_empty() {
            w.report(
                instance,
                self.keyword,
                Msg::NoAlternative { types: self.types },
            );
            return;
        }
        if candidates.len() > 1
            && let Some(object) = instance.as_object()
        {
            if let Some(discriminator) = &self.discriminator
                && candidates
                    .iter()
                    .all(|branch| branch.discriminant.is_some())
            {
                let Some(value) = object.get(&discriminator.key) else {
                    w.report(
                        instance,
                        Keyword::Required,
                        Msg::Schema(&discriminator.missing),
                    );
                    return;
                };
                candidates.retain(|branch| {
                    branch
                        .discriminant
                        .as_ref()
                        .is_some_and(|expected| value.equals_value(expected))
                });
                if candidates.is_empty() {
                    w.report_member(
                        Cow::Owned(discriminator.name.clone()),
                        &value,
                        self.keyword,
                        Msg::Schema(&discriminator.not_one_of),
                    );
                    return;
                }
            }
            if candidates.len() > 1 {
                let matching: SmallVec<[&Branch<F>; 8]> = candidates
                    .iter()
                    .copied()
                    .filter(|branch| {
                        branch.consts.iter().all(|(key, expected)| {
                            object
                                .get(key)
                                .is_none_or(|value| value.equals_value(expected))
                        })
                    })
                    .collect();
                if !matching.is_empty() {
                    candidates = matching;
                }
            }
            // Of several object shapes, the ones whose required members
            // are all there are what the sender meant: a sampling result
            // with a bad content block is not also a missing elicitation
            // `action`.
            if candidates.len() > 1 {
                let complete: SmallVec<[&Branch<F>; 8]> = candidates
                    .iter()
                    .copied()
                    .filter(|branch| branch.required.iter().all(|key| object.get(key).is_some()))
                    .collect();
                if !complete.is_empty() {
                    candidates = complete;
                }
            }
        }
        for branch in candidates {
            w.walk(branch.node, instance, OnFalse::PLAIN);
        }
    }
}

/// A property every object branch (at least two) pins to a constant.
fn find_discriminator<F: Json>(
    branches: &[Branch<F>],
    pinned: &[Vec<(String, Value)>],
) -> Option<String> {
    let objects: Vec<usize> = branches
        .iter()
        .enumerate()
        .filter(|(_, branch)| branch.admits(TypeMask::OBJECT))
        .map(|(i, _)| i)
        .collect();
    if objects.len() < 2 {
        return None;
    }
    let first = &pinned[objects[0]];
    first
        .iter()
        .map(|(key, _)| key)
        .find(|key| {
            objects
                .iter()
                .all(|&i| pinned[i].iter().any(|(other, _)| other == *key))
        })
        .cloned()
}

/// The types a schema can admit, read statically (`None`: any).
pub(crate) fn static_types<F: Json>(
    b: &Build<'_, F>,
    value: &Value,
    depth: usize,
) -> Option<TypeMask> {
    if depth > STATIC_DEPTH {
        return None;
    }
    let object = match value {
        Value::Bool(false) => return Some(TypeMask::default()),
        Value::Object(object) => object,
        _ => return None,
    };
    let mut mask: Option<TypeMask> = object.get("type").and_then(TypeMask::from_keyword);
    let mut meet = |other: Option<TypeMask>| {
        mask = match (mask, other) {
            (None, other) => other,
            (some, None) => some,
            (Some(a), Some(c)) => Some(a.intersect(c)),
        };
    };
    if let Some(constant) = object.get("const") {
        meet(Some(TypeMask::of_value(constant)));
    }
    if let Some(values) = object.get("enum").and_then(Value::as_array) {
        meet(Some(values.iter().fold(TypeMask::default(), |acc, v| {
            acc.union(TypeMask::of_value(v))
        })));
    }
    if let Some(target) = b.ref_target(object) {
        meet(static_types(b, target, depth + 1));
    }
    for branch in object
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        meet(static_types(b, branch, depth + 1));
    }
    for keyword in ["anyOf", "oneOf"] {
        if let Some(list) = object.get(keyword).and_then(Value::as_array) {
            let mut union = Some(TypeMask::default());
            for branch in list {
                union = match (union, static_types(b, branch, depth + 1)) {
                    (Some(a), Some(c)) => Some(a.union(c)),
                    _ => None,
                };
            }
            meet(union);
        }
    }
    mask
}

/// Calls `visit` with a schema and every schema it takes on statically
/// through `$ref` and `allOf`.
fn for_each_static_part<F: Json>(
    b: &Build<'_, F>,
    value: &Value,
    depth: usize,
    visit: &mut impl FnMut(&Map<String, Value>),
) {
    if depth > STATIC_DEPTH {
        return;
    }
    let Some(object) = value.as_object() else {
        return;
    };
    visit(object);
    if let Some(target) = b.ref_target(object) {
        for_each_static_part(b, target, depth + 1, visit);
    }
    for branch in object
        .get("allOf")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
    {
        for_each_static_part(b, branch, depth + 1, visit);
    }
}

/// Properties a schema pins to one value (`const`, or a one-value `enum`).
fn gather_consts<F: Json>(b: &Build<'_, F>, value: &Value, out: &mut Vec<(String, Value)>) {
    for_each_static_part(b, value, 0, &mut |object| {
        for (key, schema) in object
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
        {
            let schema = b.resolve(schema);
            let pinned = schema.get("const").or_else(|| {
                schema
                    .get("enum")
                    .and_then(Value::as_array)
                    .filter(|values| values.len() == 1)
                    .map(|values| &values[0])
            });
            if let Some(pinned) = pinned
                && !out.iter().any(|(existing, _)| existing == key)
            {
                out.push((key.clone(), pinned.clone()));
            }
        }
    });
}

/// Properties a schema requires.
fn gather_required<F: Json>(b: &Build<'_, F>, value: &Value, out: &mut Vec<String>) {
    for_each_static_part(b, value, 0, &mut |object| {
        for key in object
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
        {
            if !out.iter().any(|existing| existing == key) {
                out.push(key.to_owned());
            }
        }
    });
}
