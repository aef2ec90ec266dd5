//! Schema nodes, one family of keywords per file: each family compiles its
//! part of a node (at `Explainer::new`) and checks it against an instance
//! (while explaining).

pub(crate) mod combinators;
pub(crate) mod counts;
pub(crate) mod enum_const;
pub(crate) mod format;
pub(crate) mod items;
pub(crate) mod numeric;
pub(crate) mod other;
pub(crate) mod properties;
pub(crate) mod reference;
pub(crate) mod required;
pub(crate) mod string;
pub(crate) mod type_;
pub(crate) mod unevaluated;

use jsonschema::json::Json;
use serde_json::Value;

use super::build::Build;
use super::walk::{Shape, Walker};

/// Index of a node in the explainer's table.
pub(crate) type NodeId = u32;

pub(crate) enum SchemaNode<F: Json> {
    True,
    False,
    Object(Box<ObjNode<F>>),
}

/// The keywords of one schema object, by family.
pub(crate) struct ObjNode<F: Json> {
    pub types: Option<type_::TypeKw>,
    pub enum_const: Option<enum_const::EnumConstKw>,
    pub reference: Option<reference::RefKw<F>>,
    pub required: Option<required::RequiredKw<F>>,
    pub properties: Option<Box<properties::PropertiesKw<F>>>,
    pub items: Option<Box<items::ItemsKw<F>>>,
    pub numeric: Option<numeric::NumericKw<F>>,
    pub string: Option<string::StringKw<F>>,
    pub format: Option<format::FormatKw<F>>,
    pub combinators: Option<Box<combinators::CombinatorsKw<F>>>,
    pub other: Option<other::OtherKw<F>>,
}

impl<F: Json> ObjNode<F> {
    /// The types this node admits when `type` is all it says.
    pub fn only_types(&self) -> Option<type_::TypeMask> {
        let types = self.types.as_ref()?;
        (self.combinators.is_none() && self.says_no_more()).then_some(types.mask)
    }

    /// The branches of this node's `anyOf` when it says nothing else
    /// (see [`combinators::CombinatorsKw::only_any_of`]).
    pub fn only_any_of(
        &self,
    ) -> Option<(
        type_::TypeMask,
        impl Iterator<Item = (NodeId, Option<type_::TypeMask>)> + '_,
    )> {
        let combinators = self.combinators.as_ref()?;
        if self.types.is_some() || !self.says_no_more() {
            return None;
        }
        combinators.only_any_of()
    }

    /// Whether the node holds only keywords of a value's own (`type`,
    /// `enum`, `const`, the numeric, string and format keywords): nothing
    /// that walks into the value or applies another schema, so that
    /// [`check_leaf`] checks all it says.
    pub fn is_leaf(&self) -> bool {
        let ObjNode {
            types: _,
            enum_const: _,
            numeric: _,
            string: _,
            format: _,
            reference,
            required,
            properties,
            items,
            combinators,
            other,
        } = self;
        reference.is_none()
            && required.is_none()
            && properties.is_none()
            && items.is_none()
            && combinators.is_none()
            && other.is_none()
    }

    /// Whether the node says nothing besides `type` and the combinators.
    fn says_no_more(&self) -> bool {
        let ObjNode {
            types: _,
            combinators: _,
            enum_const,
            reference,
            required,
            properties,
            items,
            numeric,
            string,
            format,
            other,
        } = self;
        enum_const.is_none()
            && reference.is_none()
            && required.is_none()
            && properties.is_none()
            && items.is_none()
            && numeric.is_none()
            && string.is_none()
            && format.is_none()
            && other.is_none()
    }
}

/// Completes what each node reads of the nodes it points to, once the
/// table holds them all.
pub(crate) fn link<F: Json>(nodes: &mut [SchemaNode<F>]) {
    let shapes: Vec<Shape> = nodes
        .iter()
        .map(|node| match node {
            SchemaNode::Object(node) => match node.only_types() {
                Some(mask) => Shape::OnlyTypes(mask),
                None if node.is_leaf() => Shape::Leaf,
                None => Shape::Walked,
            },
            _ => Shape::Walked,
        })
        .collect();
    for node in nodes {
        if let SchemaNode::Object(node) = node {
            if let Some(properties) = &mut node.properties {
                properties.link(&shapes);
            }
            if let Some(items) = &mut node.items {
                items.link(&shapes);
            }
        }
    }
}

/// Compiles the schema `value` found at `pointer`.
pub(crate) fn compile<F: Json>(
    b: &mut Build<'_, F>,
    pointer: &str,
    value: &Value,
) -> SchemaNode<F> {
    let Some(schema) = value.as_object() else {
        return match value {
            Value::Bool(false) => SchemaNode::False,
            _ => SchemaNode::True,
        };
    };
    SchemaNode::Object(Box::new(ObjNode {
        types: type_::TypeKw::compile(schema),
        enum_const: enum_const::EnumConstKw::compile(schema),
        reference: reference::RefKw::compile(b, schema),
        required: required::RequiredKw::compile(schema),
        properties: properties::PropertiesKw::compile(b, pointer, schema).map(Box::new),
        items: items::ItemsKw::compile(b, pointer, schema).map(Box::new),
        numeric: numeric::NumericKw::compile(b, schema),
        string: string::StringKw::compile(b, schema),
        format: format::FormatKw::compile(b, schema),
        combinators: combinators::CombinatorsKw::compile(b, pointer, schema).map(Box::new),
        other: other::OtherKw::compile(b, schema),
    }))
}

/// Checks the keywords a leaf node ([`ObjNode::is_leaf`]) can hold
/// against `instance`. Inline: [`check`] begins with it.
#[inline(always)]
pub(crate) fn check_leaf<'a, F: Json>(
    w: &mut Walker<'_, 'a, F>,
    node: &ObjNode<F>,
    instance: &F::Node<'a>,
) {
    let type_ok = node.types.as_ref().is_none_or(|t| t.check(w, instance));
    if type_ok && let Some(kw) = &node.enum_const {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.numeric {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.string {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.format {
        kw.check(w, instance);
    }
}

/// Checks every keyword of `node` against `instance`: a leaf's first
/// (the collector orders what it keeps, not the checks).
pub(crate) fn check<'a, F: Json>(
    w: &mut Walker<'_, 'a, F>,
    node: &ObjNode<F>,
    instance: &F::Node<'a>,
) {
    check_leaf(w, node, instance);
    if let Some(kw) = &node.required {
        kw.check(w, instance);
    }
    let before = w.out.emitted();
    if let Some(kw) = &node.properties {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.items {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.reference {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.combinators {
        kw.check(w, instance);
    }
    if let Some(kw) = &node.other {
        kw.check(w, instance);
    }
    // `unevaluated*` are read statically; where that finds nothing but the
    // node's own validator refuses the value, say so at the location.
    if w.out.emitted() == before {
        if let Some(kw) = &node.properties {
            kw.check_unevaluated_fallback(w, instance);
        }
        if let Some(kw) = &node.items {
            kw.check_unevaluated_fallback(w, instance);
        }
    }
}
