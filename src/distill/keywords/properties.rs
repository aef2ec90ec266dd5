//! `properties`, `patternProperties`, `additionalProperties`,
//! `propertyNames`, `unevaluatedProperties`, `minProperties`,
//! `maxProperties`, `dependentSchemas`. A refused member is reported at the
//! member's location, naming the keyword and never the key.

use jsonschema::Validator;
use jsonschema::json::{Json, Node, Object};
use serde_json::{Map, Value, json};

use crate::parse::{SHORT_LIST, same_text};

use super::super::Keyword;
use super::super::build::{Build, STATIC_DEPTH};
use super::super::texts::{self, Msg};
use super::super::walk::{MemberNode, OnFalse, Shape, Walker};
use super::NodeId;
use super::string::as_count;

const ON_PROPERTY: OnFalse = OnFalse {
    keyword: Keyword::False,
    text: texts::PROPERTY_FALSE,
};
const ON_PATTERN: OnFalse = OnFalse {
    keyword: Keyword::False,
    text: texts::PATTERN_PROPERTY,
};
const ON_ADDITIONAL: OnFalse = OnFalse {
    keyword: Keyword::AdditionalProperties,
    text: texts::ADDITIONAL_PROPERTY,
};
const ON_UNEVALUATED: OnFalse = OnFalse {
    keyword: Keyword::UnevaluatedProperties,
    text: texts::UNEVALUATED_PROPERTY,
};

/// Which members the applicators of a node evaluate, read statically (every
/// branch counts, valid or not).
struct Evaluated<F: Json> {
    all: bool,
    names: Vec<String>,
    patterns: Vec<Validator<F>>,
}

struct Unevaluated<F: Json> {
    node: NodeId,
    evaluated: Evaluated<F>,
    /// The whole node, for the fallback when the static reading finds
    /// nothing.
    whole: Option<Validator<F>>,
}

/// A member `properties` names.
struct Property {
    name: Box<str>,
    member: MemberNode,
}

pub(crate) struct PropertiesKw<F: Json> {
    /// Sorted by name.
    properties: Vec<Property>,
    /// Where each name of a short `properties` is, found in one step.
    index: Option<NameIndex>,
    patterns: Vec<(Validator<F>, NodeId)>,
    additional: Option<MemberNode>,
    names: Option<Validator<F>>,
    unevaluated: Option<Unevaluated<F>>,
    min: Option<(u64, String)>,
    max: Option<(u64, String)>,
    dependent: Vec<(F::PreparedKey, NodeId)>,
}

impl<F: Json> PropertiesKw<F> {
    pub fn compile(
        b: &mut Build<'_, F>,
        pointer: &str,
        schema: &Map<String, Value>,
    ) -> Option<PropertiesKw<F>> {
        let mut properties: Vec<Property> = schema
            .get("properties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, _)| Property {
                name: name.as_str().into(),
                member: MemberNode::new(b.child(pointer, &["properties", name])),
            })
            .collect();
        properties.sort_by(|a, c| by_length_then_bytes(&a.name, &c.name));
        let index = NameIndex::new(&properties);
        let patterns: Vec<_> = schema
            .get("patternProperties")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .filter_map(|(pattern, _)| {
                let validator = b.leaf(json!({ "pattern": pattern }), false)?;
                Some((validator, b.child(pointer, &["patternProperties", pattern])))
            })
            .collect();
        let additional = schema
            .get("additionalProperties")
            .map(|_| MemberNode::new(b.child(pointer, &["additionalProperties"])));
        let names = schema.get("propertyNames").and_then(|value| b.sub(value));
        let unevaluated = schema.get("unevaluatedProperties").map(|_| {
            let mut evaluated = Evaluated {
                all: false,
                names: Vec::new(),
                patterns: Vec::new(),
            };
            gather(b, &Value::Object(schema.clone()), &mut evaluated, 0, true);
            evaluated.names.sort();
            Unevaluated {
                node: b.child(pointer, &["unevaluatedProperties"]),
                evaluated,
                whole: b.sub(&Value::Object(schema.clone())),
            }
        });
        let min = schema
            .get("minProperties")
            .and_then(as_count)
            .map(|n| (n, texts::min_properties(n)));
        let max = schema
            .get("maxProperties")
            .and_then(as_count)
            .map(|n| (n, texts::max_properties(n)));
        let dependent: Vec<_> = schema
            .get("dependentSchemas")
            .and_then(Value::as_object)
            .into_iter()
            .flatten()
            .map(|(name, _)| {
                (
                    F::prepare_key(name),
                    b.child(pointer, &["dependentSchemas", name]),
                )
            })
            .collect();
        if properties.is_empty()
            && patterns.is_empty()
            && additional.is_none()
            && names.is_none()
            && unevaluated.is_none()
            && min.is_none()
            && max.is_none()
            && dependent.is_empty()
        {
            return None;
        }
        Some(PropertiesKw {
            properties,
            index,
            patterns,
            additional,
            names,
            unevaluated,
            min,
            max,
            dependent,
        })
    }

    /// Reads, once every node is built, the shape of each member node
    /// (`shapes`, indexed by node).
    pub fn link(&mut self, shapes: &[Shape]) {
        let members = self
            .properties
            .iter_mut()
            .map(|property| &mut property.member);
        for member in members.chain(&mut self.additional) {
            member.link(shapes);
        }
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(object) = instance.as_object() else {
            return;
        };
        let count = object.len() as u64;
        if let Some((min, text)) = &self.min
            && count < *min
        {
            w.report(instance, Keyword::MinProperties, Msg::Schema(text));
        }
        if let Some((max, text)) = &self.max
            && count > *max
        {
            w.report(instance, Keyword::MaxProperties, Msg::Schema(text));
        }
        let per_member = !self.properties.is_empty()
            || !self.patterns.is_empty()
            || self.additional.is_some()
            || self.names.is_some()
            || self.unevaluated.is_some();
        if per_member {
            for (name, value) in object.members() {
                if w.exhausted {
                    return;
                }
                self.check_member(w, name.into(), &value);
            }
        }
        for (key, id) in &self.dependent {
            if object.get(key).is_some() {
                w.walk(*id, instance, OnFalse::PLAIN);
            }
        }
    }

    /// The checks of one member `name` of an object (what [`Self::check`]
    /// runs for each).
    pub fn check_member<'a>(
        &self,
        w: &mut Walker<'_, 'a, F>,
        name: std::borrow::Cow<'a, str>,
        value: &F::Node<'a>,
    ) {
        let mut matched = false;
        if let Some(found) = self.property(&name) {
            matched = true;
            w.member(
                name.clone(),
                self.properties[found].member,
                value,
                ON_PROPERTY,
            );
        }
        for (validator, id) in &self.patterns {
            if w.name_valid(validator, &name) {
                matched = true;
                w.walk_member(name.clone(), *id, value, ON_PATTERN);
            }
        }
        if !matched && let Some(member) = self.additional {
            w.member(name.clone(), member, value, ON_ADDITIONAL);
        }
        if let Some(validator) = &self.names
            && !w.name_valid(validator, &name)
        {
            w.report_member(
                name.clone(),
                value,
                Keyword::PropertyNames,
                Msg::Static(texts::PROPERTY_NAME),
            );
        }
        if let Some(unevaluated) = &self.unevaluated
            && !unevaluated.evaluated.all
            && !matched
            && self.additional.is_none()
            && unevaluated
                .evaluated
                .names
                .binary_search_by(|candidate| candidate.as_str().cmp(&*name))
                .is_err()
            && !unevaluated
                .evaluated
                .patterns
                .iter()
                .any(|validator| w.name_valid(validator, &name))
        {
            w.walk_member(name, unevaluated.node, value, ON_UNEVALUATED);
        }
    }

    /// Whether `properties` names `name`.
    pub fn names(&self, name: &str) -> bool {
        self.property(name).is_some()
    }

    /// Where `name` is in `properties`. (Inline: the call costs about as
    /// much as the indexed lookup.)
    #[inline(always)]
    fn property(&self, name: &str) -> Option<usize> {
        if let Some(index) = &self.index {
            let at = index.candidate(name)?;
            return same_text(&self.properties[at].name, name).then_some(at);
        }
        if self.properties.len() <= SHORT_LIST {
            return self
                .properties
                .iter()
                .position(|property| same_text(&property.name, name));
        }
        self.properties
            .binary_search_by(|property| by_length_then_bytes(&property.name, name))
            .ok()
    }

    /// Whether this node's own `properties` or `patternProperties` hold
    /// member `name`.
    fn evaluates_itself<'a>(&self, w: &mut Walker<'_, 'a, F>, name: &str) -> bool {
        self.property(name).is_some()
            || self
                .patterns
                .iter()
                .any(|(validator, _)| w.name_valid(validator, name))
    }

    /// When the static reading of `unevaluatedProperties` found nothing and
    /// the node still refuses the value.
    pub fn check_unevaluated_fallback<'a>(
        &self,
        w: &mut Walker<'_, 'a, F>,
        instance: &F::Node<'a>,
    ) {
        // Members this node's own `properties` and `patternProperties`
        // hold are evaluated: an object of only those (a tree's empty leaf,
        // say) cannot be refused for unevaluated ones, so its validator is
        // not asked.
        if let Some(unevaluated) = &self.unevaluated
            && let Some(object) = instance.as_object()
            && object.members().any(|(name, _)| {
                let name: std::borrow::Cow<'a, str> = name.into();
                !self.evaluates_itself(w, &name)
            })
            && !Walker::<F>::valid(unevaluated.whole.as_ref(), instance)
        {
            w.report(
                instance,
                Keyword::UnevaluatedProperties,
                Msg::Static(texts::UNEVALUATED_PROPERTIES),
            );
        }
    }
}

/// Collects what the applicators of `schema` evaluate. `top` leaves the
/// node's own `unevaluatedProperties` out.
fn gather<F: Json>(
    b: &Build<'_, F>,
    schema: &Value,
    into: &mut Evaluated<F>,
    depth: usize,
    top: bool,
) {
    if depth > STATIC_DEPTH || into.all {
        return;
    }
    let Some(object) = schema.as_object() else {
        return;
    };
    if let Some(properties) = object.get("properties").and_then(Value::as_object) {
        into.names.extend(properties.keys().cloned());
    }
    if let Some(patterns) = object.get("patternProperties").and_then(Value::as_object) {
        for pattern in patterns.keys() {
            if let Some(validator) = b.leaf(json!({ "pattern": pattern }), false) {
                into.patterns.push(validator);
            }
        }
    }
    if object.contains_key("additionalProperties")
        || (!top && object.contains_key("unevaluatedProperties"))
    {
        into.all = true;
        return;
    }
    for branch in b.in_place_applicators(object) {
        gather(b, branch, into, depth + 1, false);
    }
    for branch in object
        .get("dependentSchemas")
        .and_then(Value::as_object)
        .into_iter()
        .flat_map(|m| m.values())
    {
        gather(b, branch, into, depth + 1, false);
    }
}

/// A table of the names of a short `properties` by a hash of their length
/// and three of their bytes, with a multiplier chosen when the schema is
/// compiled so that no two names share a slot: a member is looked up with
/// one hash and one comparison, not a scan of the names. (A scan compares
/// the lengths of about half the names before it finds one; the walk looks
/// up every member of every object it checks.) `None` where no multiplier
/// tried parts the names, or for more names than [`SHORT_LIST`]: a scan or
/// a binary search then.
struct NameIndex {
    multiplier: u64,
    /// A property's position in `properties`, or [`NameIndex::EMPTY`].
    slots: [u8; NameIndex::SLOTS],
}

impl NameIndex {
    const SLOTS: usize = 64;
    const EMPTY: u8 = u8::MAX;
    /// Multipliers tried: with at most sixteen names in 64 slots, one of
    /// the first few parts them unless two names agree in all the hash
    /// reads.
    const TRIES: u64 = 64;

    fn new(properties: &[Property]) -> Option<NameIndex> {
        if properties.len() > SHORT_LIST {
            return None;
        }
        (0..Self::TRIES).find_map(|n| {
            // Odd multipliers (an odd number times an odd constant) spread
            // over the 64 bits.
            let multiplier = (2 * n + 1).wrapping_mul(0x9E37_79B9_7F4A_7C15);
            let mut slots = [Self::EMPTY; Self::SLOTS];
            for (position, property) in properties.iter().enumerate() {
                let slot = &mut slots[Self::slot(&property.name, multiplier)];
                if *slot != Self::EMPTY {
                    return None;
                }
                *slot = u8::try_from(position).ok()?;
            }
            Some(NameIndex { multiplier, slots })
        })
    }

    /// The one position `name` can have in `properties`; `None` when no
    /// name there can be it.
    #[inline(always)]
    fn candidate(&self, name: &str) -> Option<usize> {
        let at = self.slots[Self::slot(name, self.multiplier)];
        (at != Self::EMPTY).then_some(usize::from(at))
    }

    #[inline(always)]
    fn slot(name: &str, multiplier: u64) -> usize {
        let bytes = name.as_bytes();
        let byte = |at: usize| u64::from(bytes.get(at).copied().unwrap_or(0));
        let length = bytes.len();
        let key = length as u64
            ^ (byte(0) << 16)
            ^ (byte(length / 2) << 24)
            ^ (byte(length.wrapping_sub(1)) << 32);
        // The top six bits of the product: one of 64 slots.
        (key.wrapping_mul(multiplier) >> 58) as usize
    }
}

/// The order `properties` is kept in: by length, then bytewise. A member
/// looked up is mostly told apart by its length alone, without comparing
/// its bytes (the walk looks up every member of every object).
fn by_length_then_bytes(a: &str, b: &str) -> std::cmp::Ordering {
    a.len()
        .cmp(&b.len())
        .then_with(|| a.as_bytes().cmp(b.as_bytes()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sorted(names: &[&str]) -> Vec<Property> {
        let mut properties: Vec<Property> = names
            .iter()
            .map(|name| Property {
                name: (*name).into(),
                member: MemberNode::new(0),
            })
            .collect();
        properties.sort_by(|a, c| by_length_then_bytes(&a.name, &c.name));
        properties
    }

    #[test]
    fn a_short_properties_list_finds_each_name_in_one_step_and_no_other() {
        let properties = sorted(&[
            "marketplaceIds",
            "region",
            "createdAfter",
            "createdBefore",
            "statuses",
            "buyerEmail",
            "filters",
            "pageSize",
            "nextToken",
            "includeItems",
            "",
            "a",
            "b",
            "ab",
            "ba",
            "é",
        ]);
        let index = NameIndex::new(&properties).expect("sixteen distinct names are parted");
        for (at, property) in properties.iter().enumerate() {
            assert_eq!(
                index.candidate(&property.name),
                Some(at),
                "{}",
                property.name
            );
        }
        for absent in [
            "Region",
            "regions",
            "pagesize",
            "aa",
            "c",
            "createdAfte",
            "ü",
        ] {
            assert!(
                index
                    .candidate(absent)
                    .is_none_or(|at| !same_text(&properties[at].name, absent)),
                "{absent}"
            );
        }
    }

    #[test]
    fn names_the_hash_cannot_part_and_long_lists_are_not_indexed() {
        // Same length, and the same first, middle and last bytes.
        assert!(NameIndex::new(&sorted(&["abcd", "azcd"])).is_none());
        let many: Vec<String> = (0..=SHORT_LIST).map(|n| format!("key{n}")).collect();
        let many: Vec<&str> = many.iter().map(String::as_str).collect();
        assert!(NameIndex::new(&sorted(&many)).is_none());
        assert!(NameIndex::new(&sorted(&many[..SHORT_LIST])).is_some());
    }
}
