//! The walk: one schema node applied to one instance node at a time, with a
//! borrowed path stack, a frame cap and a step budget.

use std::borrow::Cow;

use jsonschema::json::Json;
use smallvec::SmallVec;

use super::collect::Collector;
use super::keywords::type_::received_type;
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
