//! `properties`, `patternProperties`, `additionalProperties`,
//! `propertyNames`, `unevaluatedProperties`, `minProperties`,
//! `maxProperties`, `dependentSchemas`. A refused member is reported at the
//! member's location, naming the keyword and never the key.

use jsonschema::Validator;
use jsonschema::json::{Json, Node, Object};
use serde_json::{Map, Value};

use crate::parse::{SHORT_LIST, same_text};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::{MemberNode, OnFalse, Shape, Walker};
use super::NodeId;
use super::counts::{self, Counts};
use super::unevaluated::{Reading, Unevaluated};

const ON_PROPERTY: OnFalse = OnFalse::new(Keyword::False, texts::PROPERTY_FALSE);
const ON_PATTERN: OnFalse = OnFalse::new(Keyword::False, texts::PATTERN_PROPERTY);
const ON_ADDITIONAL: OnFalse =
    OnFalse::new(Keyword::AdditionalProperties, texts::ADDITIONAL_PROPERTY);
const ON_UNEVALUATED: OnFalse =
    OnFalse::new(Keyword::UnevaluatedProperties, texts::UNEVALUATED_PROPERTY);

/// Which members the applicators of a node evaluate, read statically.
struct Evaluated<F: Json> {
    /// Sorted.
    names: Vec<String>,
    patterns: Vec<Validator<F>>,
}

// Derived, it would ask `F: Default`.
impl<F: Json> Default for Evaluated<F> {
    fn default() -> Self {
        Evaluated {
            names: Vec::new(),
            patterns: Vec::new(),
        }
    }
}

impl<F: Json> Reading<F> for Evaluated<F> {
    const KEY: &'static str = "unevaluatedProperties";
    const KEYWORD: Keyword = Keyword::UnevaluatedProperties;
    const REFUSED: &'static str = texts::UNEVALUATED_PROPERTIES;
    const BESIDE: &'static [&'static str] = &["dependentSchemas"];

    fn read(&mut self, b: &Build<'_, F>, object: &Map<String, Value>) -> bool {
        if object.contains_key("additionalProperties") {
            return true;
        }
        if let Some(properties) = object.get("properties").and_then(Value::as_object) {
            self.names.extend(properties.keys().cloned());
        }
        if let Some(patterns) = object.get("patternProperties").and_then(Value::as_object) {
            for pattern in patterns.keys() {
                if let Some(validator) = b.pattern(pattern) {
                    self.patterns.push(validator);
                }
            }
        }
        false
    }

    fn finish(&mut self) {
        self.names.sort();
    }
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
    unevaluated: Option<Unevaluated<F, Evaluated<F>>>,
    counts: Counts,
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
                let validator = b.pattern(pattern)?;
                Some((validator, b.child(pointer, &["patternProperties", pattern])))
            })
            .collect();
        let additional = schema
            .get("additionalProperties")
            .map(|_| MemberNode::new(b.child(pointer, &["additionalProperties"])));
        let names = schema.get("propertyNames").and_then(|value| b.sub(value));
        let unevaluated = Unevaluated::compile(b, pointer, schema);
        let counts = Counts::compile(schema, &counts::PROPERTIES);
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
            && counts.is_empty()
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
            counts,
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
        self.counts
            .check(w, instance, &counts::PROPERTIES, |low, high| {
                !(low..=high).contains(&count)
            });
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
            && !unevaluated.all
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
        {
            unevaluated.fallback(w, instance);
        }
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
