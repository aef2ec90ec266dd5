//! `prefixItems`, `items`, `contains` (with `minContains`/`maxContains`),
//! `minItems`, `maxItems`, `uniqueItems`, `unevaluatedItems`. An item that
//! `items: false` (or a `false` prefix) refuses is reported at the item.

use jsonschema::Validator;
use jsonschema::json::{Array, Json, Node};
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::build::{Build, STATIC_DEPTH};
use super::super::texts::{self, Msg};
use super::super::walk::{EmptyAccepted, OnFalse, Shape, Walker};
use super::NodeId;
use super::string::as_count;

const ON_ITEMS: OnFalse = OnFalse {
    keyword: Keyword::Items,
    text: texts::ITEM_NOT_ALLOWED,
};
const ON_PREFIX: OnFalse = OnFalse {
    keyword: Keyword::Items,
    text: texts::PREFIX_ITEM_FALSE,
};
const ON_UNEVALUATED: OnFalse = OnFalse {
    keyword: Keyword::UnevaluatedItems,
    text: texts::UNEVALUATED_ITEM,
};

struct Contains<F: Json> {
    validator: Validator<F>,
    min: u64,
    max: Option<u64>,
    min_text: String,
    max_text: String,
}

/// Which items the applicators of a node evaluate, read statically.
struct Evaluated<F: Json> {
    all: bool,
    prefix: usize,
    contains: Vec<Validator<F>>,
}

struct Unevaluated<F: Json> {
    node: NodeId,
    evaluated: Evaluated<F>,
    whole: Option<Validator<F>>,
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
    min: Option<(u64, String)>,
    max: Option<(u64, String)>,
    unique: bool,
    unevaluated: Option<Unevaluated<F>>,
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
        let min = schema
            .get("minItems")
            .and_then(as_count)
            .map(|n| (n, texts::min_items(n)));
        let max = schema
            .get("maxItems")
            .and_then(as_count)
            .map(|n| (n, texts::max_items(n)));
        let unique = schema.get("uniqueItems") == Some(&Value::Bool(true));
        let unevaluated = schema.get("unevaluatedItems").map(|_| {
            let mut evaluated = Evaluated {
                all: false,
                prefix: 0,
                contains: Vec::new(),
            };
            gather(b, &Value::Object(schema.clone()), &mut evaluated, 0, true);
            Unevaluated {
                node: b.child(pointer, &["unevaluatedItems"]),
                evaluated,
                whole: b.sub(&Value::Object(schema.clone())),
            }
        });
        if prefix.is_empty()
            && items.is_none()
            && contains.is_none()
            && min.is_none()
            && max.is_none()
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
            min,
            max,
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
        let bound = match keyword {
            Keyword::MinItems => &self.min,
            Keyword::MaxItems => &self.max,
            _ => return None,
        };
        bound.as_ref().map(|(limit, _)| *limit)
    }

    pub fn check<'a>(&self, w: &mut Walker<'_, 'a, F>, instance: &F::Node<'a>) {
        let Some(array) = instance.as_array() else {
            return;
        };
        let length = array.len() as u64;
        if let Some((min, text)) = &self.min
            && length < *min
        {
            w.report(instance, Keyword::MinItems, Msg::Schema(text));
        }
        if let Some((max, text)) = &self.max
            && length > *max
        {
            w.report(instance, Keyword::MaxItems, Msg::Schema(text));
        }
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
            if evaluated.all
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
            && !Walker::<F>::valid(unevaluated.whole.as_ref(), instance)
        {
            w.report(
                instance,
                Keyword::UnevaluatedItems,
                Msg::Static(texts::UNEVALUATED_ITEMS),
            );
        }
    }
}

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
    if let Some(prefix) = object.get("prefixItems").and_then(Value::as_array) {
        into.prefix = into.prefix.max(prefix.len());
    }
    match object.get("items") {
        Some(Value::Array(list)) => into.prefix = into.prefix.max(list.len()),
        Some(_) => {
            into.all = true;
            return;
        }
        None => {}
    }
    if !top && object.contains_key("unevaluatedItems") {
        into.all = true;
        return;
    }
    if let Some(contains) = object.get("contains")
        && let Some(validator) = b.sub(contains)
    {
        into.contains.push(validator);
    }
    for branch in b.in_place_applicators(object) {
        gather(b, branch, into, depth + 1, false);
    }
}
