//! `prefixItems`, `items`, `contains` (with `minContains`/`maxContains`),
//! `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`. An item that
//! `items: false` (or a `false` prefix) refuses is reported at the item.

use jsonschema::Validator;
use jsonschema::json::{Array, Json, Node};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::build::Build;
use super::super::texts::{self, Msg};
use super::super::walk::{EmptyAccepted, OnFalse, Shape, Walker};
use super::NodeId;
use super::counts::{self, Counts, as_count};
use super::unevaluated::{Reading, Unevaluated};

const ON_ITEMS: OnFalse = OnFalse::new(Keyword::Items, texts::ITEM_NOT_ALLOWED);
const ON_PREFIX: OnFalse = OnFalse::new(Keyword::Items, texts::PREFIX_ITEM_FALSE);
const ON_UNEVALUATED: OnFalse = OnFalse::new(Keyword::UnevaluatedItems, texts::UNEVALUATED_ITEM);

struct Contains<F: Json> {
    validator: Validator<F>,
    min: u64,
    max: Option<u64>,
    min_text: String,
    max_text: String,
}

/// Which items the applicators of a node evaluate, read statically.
struct Evaluated<F: Json> {
    prefix: usize,
    contains: Vec<Validator<F>>,
}

// Derived, it would ask `F: Default`.
impl<F: Json> Default for Evaluated<F> {
    fn default() -> Self {
        Evaluated {
            prefix: 0,
            contains: Vec::new(),
        }
    }
}

impl<F: Json> Reading<F> for Evaluated<F> {
    const KEY: &'static str = "unevaluatedItems";
    const KEYWORD: Keyword = Keyword::UnevaluatedItems;
    const REFUSED: &'static str = texts::UNEVALUATED_ITEMS;

    fn read(&mut self, b: &Build<'_, F>, object: &Map<String, Value>) -> bool {
        if let Some(prefix) = object.get("prefixItems").and_then(Value::as_array) {
            self.prefix = self.prefix.max(prefix.len());
        }
        match object.get("items") {
            Some(Value::Array(list)) => self.prefix = self.prefix.max(list.len()),
            Some(_) => return true,
            None => {}
        }
        if let Some(contains) = object.get("contains")
            && let Some(validator) = b.sub(contains)
        {
            self.contains.push(validator);
        }
        false
    }
}

pub(crate) struct ItemsKw<F: Json> {
    prefix: Vec<NodeId>,
    items: Option<NodeId>,
    /// Which empty containers `items` accepts.
    items_empty: EmptyAccepted,
    /// Whether `items` is a leaf, checked in place (set by
    /// [`ItemsKw::link`]).
    items_leaf: bool,
    contains: Option<Contains<F>>,
    counts: Counts,
    unique: bool,
    unevaluated: Option<Unevaluated<F, Evaluated<F>>>,
}

impl<F: Json> ItemsKw<F> {
    pub fn compile(
        b: &mut Build<'_, F>,
        pointer: &str,
        schema: &Map<String, Value>,
    ) -> Option<ItemsKw<F>> {
        let mut prefix: Vec<NodeId> = Vec::new();
        let mut items = None;
        let mut items_empty = EmptyAccepted::default();
        if let Some(list) = schema.get("prefixItems").and_then(Value::as_array) {
            for i in 0..list.len() {
                prefix.push(b.child(pointer, &["prefixItems", &i.to_string()]));
            }
        }
        match schema.get("items") {
            // The array form of older drafts reads as `prefixItems`.
            Some(Value::Array(list)) if prefix.is_empty() => {
                for i in 0..list.len() {
                    prefix.push(b.child(pointer, &["items", &i.to_string()]));
                }
            }
            Some(Value::Array(_)) | None => {}
            Some(value) => {
                items = Some(b.child(pointer, &["items"]));
                items_empty = b.empty_accepted(value);
            }
        }
        let contains = schema.get("contains").and_then(|value| {
            let validator = b.sub(value)?;
            let min = schema.get("minContains").and_then(as_count).unwrap_or(1);
            let max = schema.get("maxContains").and_then(as_count);
            Some(Contains {
                validator,
                min,
                max,
                min_text: texts::min_contains(min),
                max_text: texts::max_contains(max.unwrap_or(0)),
            })
        });
        let counts = Counts::compile(schema, &counts::ITEMS);
        let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
        let unevaluated = Unevaluated::compile(b, pointer, schema);
        if prefix.is_empty()
            && items.is_none()
            && contains.is_none()
            && counts.is_empty()
            && !unique
            && unevaluated.is_none()
        {
            return None;
        }
        Some(ItemsKw {
            prefix,
            items,
            items_empty,
            items_leaf: false,
            contains,
            counts,
            unique,
            unevaluated,
        })
    }

    /// Reads, once every node is built, whether `items` is a leaf
    /// (`shapes`, indexed by node).
    pub fn link(&mut self, shapes: &[Shape]) {
        self.items_leaf = self
            .items
            .is_some_and(|id| matches!(shapes.get(id as usize), Some(Shape::Leaf)));
    }

    /// The bound of `keyword` (`minItems` or `maxItems`).
    pub fn limit(&self, keyword: Keyword) -> Option<u64> {
        self.counts.limit(&counts::ITEMS, keyword)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(array) = instance.as_array() else {
            return;
        };
        let length = array.len() as u64;
        self.counts.check(w, instance, &counts::ITEMS, |low, high| {
            !(low..=high).contains(&length)
        });
        if self.unique && !array.is_unique() {
            w.report(
                instance,
                Keyword::UniqueItems,
                Msg::Static(texts::UNIQUE_ITEMS),
            );
        }
        if let Some(contains) = &self.contains {
            let mut matching = 0u64;
            for element in array.elements() {
                if contains.validator.is_valid(element) {
                    matching += 1;
                }
            }
            if matching < contains.min {
                w.report(instance, Keyword::Contains, Msg::Schema(&contains.min_text));
            }
            if contains.max.is_some_and(|max| matching > max) {
                w.report(instance, Keyword::Contains, Msg::Schema(&contains.max_text));
            }
        }
        if !self.prefix.is_empty() || self.items.is_some() || self.unevaluated.is_some() {
            let typed = self
                .items
                .and_then(|id| Some((id, w.typed(id, self.items_empty)?)));
            for (index, element) in array.elements().enumerate() {
                if w.exhausted {
                    return;
                }
                match typed {
                    Some((id, typed)) if index >= self.prefix.len() => {
                        w.typed_element(index, id, typed, &element, ON_ITEMS)
                    }
                    _ => self.check_element(w, index, &element),
                }
            }
        }
    }

    fn check_element<'a>(&self, w: &mut Walker<'_, 'a, F>, index: usize, element: &F::Node<'a>) {
        if let Some(id) = self.prefix.get(index) {
            w.walk_element(index, *id, element, ON_PREFIX);
            return;
        }
        if let Some(id) = self.items {
            if self.items_leaf {
                w.leaf_element(index, id, element, ON_ITEMS);
            } else {
                w.walk_element(index, id, element, ON_ITEMS);
            }
            return;
        }
        if let Some(unevaluated) = &self.unevaluated {
            let evaluated = &unevaluated.evaluated;
            if unevaluated.all
                || index < evaluated.prefix
                || evaluated
                    .contains
                    .iter()
                    .any(|validator| validator.is_valid(element.clone()))
            {
                return;
            }
            w.walk_element(index, unevaluated.node, element, ON_UNEVALUATED);
        }
    }

    pub fn check_unevaluated_fallback<'a>(
        &self,
        w: &mut Walker<'_, 'a, F>,
        instance: &F::Node<'a>,
    ) {
        if let Some(unevaluated) = &self.unevaluated
            && instance.as_array().is_some()
        {
            unevaluated.fallback(w, instance);
        }
    }
}
