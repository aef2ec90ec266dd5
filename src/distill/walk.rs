//! The walk: one schema node applied to one instance node at a time, with a
//! borrowed path stack, a frame cap and a step budget.

use std::borrow::Cow;

use jsonschema::json::Json;
use smallvec::SmallVec;

use super::collect::Collector;
use super::keywords::type_::{TypeMask, received_type, type_bit, type_name};
use super::keywords::{self, NodeId, SchemaNode};
use super::path::Tok;
use super::texts::{self, Msg};
use super::{Keyword, MAX_FRAMES, STEP_BUDGET};

/// What a `false` schema means where it is met.
#[derive(Debug, Clone, Copy)]
pub(crate) struct OnFalse {
    pub keyword: Keyword,
    pub text: &'static str,
}

impl OnFalse {
    pub const PLAIN: OnFalse = OnFalse {
        keyword: Keyword::False,
        text: texts::FALSE_SCHEMA,
    };
}

/// An element check [`Walker::typed_element`] makes in place.
#[derive(Clone, Copy)]
pub(crate) struct Typed {
    /// The types admitted.
    mask: TypeMask,
    /// Whether they are an `anyOf`'s branches (reported as the `anyOf`).
    any_of: bool,
}

/// Never read: a typed node is an object, not `false`.
const ON_TYPED: OnFalse = OnFalse::PLAIN;

pub(crate) struct Walker<'e, 'a, F: Json> {
    pub nodes: &'e [SchemaNode<F>],
    pub path: SmallVec<[Tok<'a>; 32]>,
    pub out: &'e mut Collector,
    pub frames: usize,
    pub steps: u64,
    pub exhausted: bool,
    pub buf: F::StringBuffer,
    /// The outermost combinator the walk is inside (see [`Problem::via`]).
    ///
    /// [`Problem::via`]: super::Problem::via
    pub via: Option<Keyword>,
}

impl<'e, 'a, F: Json> Walker<'e, 'a, F> {
    pub fn new(nodes: &'e [SchemaNode<F>], out: &'e mut Collector) -> Self {
        Walker {
            nodes,
            path: SmallVec::new(),
            out,
            frames: 0,
            steps: 0,
            exhausted: false,
            buf: F::StringBuffer::default(),
            via: None,
        }
    }

    /// Applies node `id` to `instance` at the current path.
    pub fn walk(&mut self, id: NodeId, instance: &F::Node<'a>, on_false: OnFalse) {
        if self.exhausted {
            return;
        }
        self.steps += 1;
        if self.steps > STEP_BUDGET {
            self.exhausted = true;
            self.report(instance, Keyword::Other, Msg::Static(texts::BUDGET));
            return;
        }
        if self.frames + self.path.len() >= MAX_FRAMES {
            self.report(instance, Keyword::Other, Msg::Static(texts::TOO_DEEP));
            return;
        }
        let nodes = self.nodes;
        match &nodes[id as usize] {
            SchemaNode::True => {}
            SchemaNode::False => {
                self.report(instance, on_false.keyword, Msg::Static(on_false.text))
            }
            SchemaNode::Object(node) => {
                self.frames += 1;
                keywords::check(self, node, instance);
                self.frames -= 1;
            }
        }
    }

    /// Applies node `id` to the member `name` of the current object.
    pub fn walk_member(
        &mut self,
        name: Cow<'a, str>,
        id: NodeId,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        self.path.push(Tok::Key(name));
        self.walk(id, value, on_false);
        self.path.pop();
    }

    /// How node `id` can be checked on an array's elements in place
    /// ([`Walker::typed_element`]): when all it says is `type`, or an
    /// `anyOf` of branches that say only `type`.
    pub fn typed(&self, id: NodeId) -> Option<Typed> {
        let SchemaNode::Object(node) = &self.nodes[id as usize] else {
            return None;
        };
        if let Some(mask) = node.only_types() {
            return Some(Typed {
                mask,
                any_of: false,
            });
        }
        let branches = node.only_any_of()?;
        let mut mask = TypeMask::default();
        for branch in branches {
            let SchemaNode::Object(branch) = &self.nodes[branch as usize] else {
                return None;
            };
            mask = mask.union(branch.only_types()?);
        }
        Some(Typed { mask, any_of: true })
    }

    /// [`Walker::walk_element`] for a node [`Walker::typed`] described:
    /// the same steps and report without the walk's dispatch (a body full
    /// of wrong items pays it once per item). Near the step budget or the
    /// frame cap, the element is walked.
    pub fn typed_element(&mut self, index: usize, id: NodeId, typed: Typed, value: &F::Node<'a>) {
        if self.exhausted {
            return;
        }
        // The node and, for an `anyOf`, the branch walked into.
        if self.steps + 2 > STEP_BUDGET || self.frames + self.path.len() + 3 >= MAX_FRAMES {
            self.walk_element(index, id, value, ON_TYPED);
            return;
        }
        let found = type_bit::<F>(value);
        if typed.mask.admits(found) {
            self.steps += 1 + u64::from(typed.any_of);
            return;
        }
        self.steps += 1;
        self.path.push(Tok::Index(index));
        let received = type_name(found);
        let (keyword, via, msg) = if typed.any_of {
            let msg = Msg::NoAlternative { types: typed.mask };
            (Keyword::AnyOf, self.via.or(Some(Keyword::AnyOf)), msg)
        } else {
            let msg = Msg::Type {
                expected: typed.mask,
                found: received,
            };
            (Keyword::Type, self.via, msg)
        };
        self.out.report(&self.path, received, keyword, via, msg);
        self.path.pop();
    }

    /// Applies node `id` to element `index` of the current array.
    pub fn walk_element(
        &mut self,
        index: usize,
        id: NodeId,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        self.path.push(Tok::Index(index));
        self.walk(id, value, on_false);
        self.path.pop();
    }

    /// Records a problem at the current path.
    pub fn report(&mut self, instance: &F::Node<'a>, keyword: Keyword, msg: Msg<'_>) {
        self.out.report(
            &self.path,
            received_type::<F>(instance),
            keyword,
            self.via,
            msg,
        );
    }

    /// Records a problem at member `name` of the current object.
    pub fn report_member(
        &mut self,
        name: Cow<'a, str>,
        value: &F::Node<'a>,
        keyword: Keyword,
        msg: Msg<'_>,
    ) {
        self.path.push(Tok::Key(name));
        self.report(value, keyword, msg);
        self.path.pop();
    }

    /// Runs `f` inside `combinator` (the outermost one sticks).
    pub fn inside(&mut self, combinator: Keyword, f: impl FnOnce(&mut Self)) {
        let outer = self.via;
        self.via = outer.or(Some(combinator));
        f(self);
        self.via = outer;
    }

    /// Whether an instance is valid by a delegated validator (absent: not).
    pub fn valid(validator: Option<&jsonschema::Validator<F>>, instance: &F::Node<'a>) -> bool {
        validator.is_some_and(|v| v.is_valid(instance.clone()))
    }

    /// Whether a member name is valid by a delegated validator.
    pub fn name_valid(&mut self, validator: &jsonschema::Validator<F>, name: &str) -> bool {
        F::with_string_node(&mut self.buf, name, |node| validator.is_valid(node))
    }
}
