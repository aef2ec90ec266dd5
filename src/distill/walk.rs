//! The walk: one schema node applied to one instance node at a time, with a
//! borrowed path stack, a frame cap and a step budget.

use std::borrow::Cow;

use jsonschema::json::{Array, Json, Node, Object};
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
    pub const PLAIN: OnFalse = OnFalse::new(Keyword::False, texts::FALSE_SCHEMA);

    pub const fn new(keyword: Keyword, text: &'static str) -> OnFalse {
        OnFalse { keyword, text }
    }
}

/// A member's schema node, and its shape (filled by [`keywords::link`]
/// once the node table is complete): a member whose node says only
/// `type`, or only keywords of a value's own (a leaf), is checked in
/// place ([`Walker::member`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct MemberNode {
    pub node: NodeId,
    pub shape: Shape,
}

/// What a node says, as far as checking it in place goes.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) enum Shape {
    /// Only `type`: these types.
    OnlyTypes(TypeMask),
    /// Only keywords of the value's own ([`ObjNode::is_leaf`]).
    ///
    /// [`ObjNode::is_leaf`]: keywords::ObjNode::is_leaf
    Leaf,
    /// Anything else: walked.
    #[default]
    Walked,
}

impl MemberNode {
    pub fn new(node: NodeId) -> Self {
        MemberNode {
            node,
            shape: Shape::Walked,
        }
    }

    /// Reads the shape of its node from `shapes`, indexed by node.
    pub fn link(&mut self, shapes: &[Shape]) {
        self.shape = shapes.get(self.node as usize).copied().unwrap_or_default();
    }
}

/// An element check [`Walker::typed_element`] makes in place.
#[derive(Clone, Copy)]
pub(crate) struct Typed {
    /// The types admitted: a value of another type is reported here.
    mask: TypeMask,
    /// The admitted types whose every value the node accepts; a value of
    /// another admitted type is walked unless it is an accepted empty.
    settled: TypeMask,
    /// Whether the types are an `anyOf`'s branches (reported as the `anyOf`).
    any_of: bool,
    empty: EmptyAccepted,
}

/// Whether a schema accepts `{}` and `[]`, asked of jsonschema once when
/// the explainer is built: an empty element it accepts needs no walk, and
/// a body of them (the leaves of a recursive tree) costs no more to
/// explain than to validate.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct EmptyAccepted {
    pub object: bool,
    pub array: bool,
}

impl EmptyAccepted {
    fn accepts<'a, F: Json>(self, value: &F::Node<'a>) -> bool {
        (self.object && value.as_object().is_some_and(|object| object.len() == 0))
            || (self.array && value.as_array().is_some_and(|array| array.len() == 0))
    }
}

pub(crate) struct Walker<'e, 'a, F: Json> {
    pub nodes: &'e [SchemaNode<F>],
    pub path: SmallVec<[Tok<'a>; 32]>,
    /// The shortest the path has been since the last report: the tokens
    /// before it are the last report's (see [`Collector::path_kept`]).
    kept: usize,
    pub out: &'e mut Collector,
    pub frames: usize,
    pub steps: u64,
    pub exhausted: bool,
    pub buf: F::StringBuffer,
    /// The outermost combinator the walk is inside (see [`Problem::via`]).
    ///
    /// [`Problem::via`]: super::Problem::via
    pub via: Option<Keyword>,
    /// The node whose keywords are being checked: a problem is reported
    /// as that node's ([`FoundProblem::node`]).
    ///
    /// [`FoundProblem::node`]: super::FoundProblem::node
    node: NodeId,
    /// The token of the leaf being checked in place ([`Walker::leaf`]),
    /// pushed onto the path only when a problem is reported there: most
    /// leaves pass, and the push and pop cost more than their check.
    pending: Option<Tok<'a>>,
}

impl<'e, 'a, F: Json> Walker<'e, 'a, F> {
    pub fn new(nodes: &'e [SchemaNode<F>], out: &'e mut Collector) -> Self {
        Walker {
            nodes,
            path: SmallVec::new(),
            kept: 0,
            out,
            frames: 0,
            steps: 0,
            exhausted: false,
            buf: F::StringBuffer::default(),
            via: None,
            node: 0,
            pending: None,
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
                let outer = std::mem::replace(&mut self.node, id);
                self.frames += 1;
                keywords::check(self, node, instance);
                self.frames -= 1;
                self.node = outer;
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
        self.pop();
    }

    /// Applies `member`'s node to the member `name` of the current object:
    /// by [`Walker::walk_member`], or in place when the node says only
    /// `type` or is a leaf (the same step and reports without the walk's
    /// dispatch, which costs more than the check itself; near the step
    /// budget or the frame cap the member is walked). Inline: out of line,
    /// the call cost about a fifth of what the in-place check saves.
    #[inline(always)]
    pub fn member(
        &mut self,
        name: Cow<'a, str>,
        member: MemberNode,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        match member.shape {
            Shape::OnlyTypes(mask) => self.typed_member(name, member.node, mask, value, on_false),
            Shape::Leaf => self.leaf(Tok::Key(name), member.node, value, on_false),
            Shape::Walked => self.walk_member(name, member.node, value, on_false),
        }
    }

    /// Applies leaf node `id` ([`Shape::Leaf`]) to element `index` of the
    /// current array, in place as [`Walker::member`] checks a leaf member.
    pub fn leaf_element(
        &mut self,
        index: usize,
        id: NodeId,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        self.leaf(Tok::Index(index), id, value, on_false);
    }

    /// The in-place check of a leaf at `token` under the current path:
    /// its node's keywords, with the walk's step and frame, without its
    /// dispatch; near the step budget or the frame cap, walked. (Out of
    /// line, as [`Walker::typed_member`].)
    #[inline(never)]
    fn leaf(&mut self, token: Tok<'a>, id: NodeId, value: &F::Node<'a>, on_false: OnFalse) {
        if self.exhausted {
            return;
        }
        let nodes = self.nodes;
        // The frame as the walk counts it, with `token` on the path.
        let (true, SchemaNode::Object(node)) = (
            self.steps < STEP_BUDGET && self.frames + self.path.len() + 1 < MAX_FRAMES,
            &nodes[id as usize],
        ) else {
            self.path.push(token);
            self.walk(id, value, on_false);
            self.pop();
            return;
        };
        self.steps += 1;
        let outer = std::mem::replace(&mut self.node, id);
        debug_assert!(self.pending.is_none(), "a leaf's check holds no other");
        self.pending = Some(token);
        keywords::check_leaf(self, node, value);
        // Still pending: nothing was reported, and the path never held it.
        if self.pending.take().is_none() {
            self.pop();
        }
        self.node = outer;
    }

    /// The in-place check of [`Walker::member`]. (Out of line, so that the
    /// member loop that calls it keeps its size.)
    #[inline(never)]
    fn typed_member(
        &mut self,
        name: Cow<'a, str>,
        id: NodeId,
        mask: TypeMask,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        if self.exhausted {
            return;
        }
        if self.steps + 1 > STEP_BUDGET || self.frames + self.path.len() + 2 >= MAX_FRAMES {
            self.walk_member(name, id, value, on_false);
            return;
        }
        self.steps += 1;
        let found = type_bit::<F>(value);
        if mask.admits(found) {
            return;
        }
        self.path.push(Tok::Key(name));
        let received = type_name(found);
        let msg = Msg::Type {
            expected: mask,
            found: received,
        };
        self.emit(received, Keyword::Type, self.via, msg, id);
        self.pop();
    }

    /// How node `id` can be checked on an array's elements in place
    /// ([`Walker::typed_element`]): by type when all it says is `type`, or
    /// is an `anyOf` (a branch that says only `type` settles its types; a
    /// type no branch admits is reported at once), and by `empty` for an
    /// empty object or array. `None` when nothing is checked in place.
    pub fn typed(&self, id: NodeId, empty: EmptyAccepted) -> Option<Typed> {
        let SchemaNode::Object(node) = &self.nodes[id as usize] else {
            return None;
        };
        if let Some(mask) = node.only_types() {
            return Some(Typed {
                mask,
                settled: mask,
                any_of: false,
                empty,
            });
        }
        if let Some((mask, branches)) = node.only_any_of() {
            let mut settled = TypeMask::default();
            for (branch, _) in branches {
                if let SchemaNode::Object(branch) = &self.nodes[branch as usize]
                    && let Some(types) = branch.only_types()
                {
                    settled = settled.union(types);
                }
            }
            return Some(Typed {
                mask,
                settled,
                any_of: true,
                empty,
            });
        }
        (empty.object || empty.array).then_some(Typed {
            mask: TypeMask::ALL,
            settled: TypeMask::default(),
            any_of: false,
            empty,
        })
    }

    /// [`Walker::walk_element`] for a node [`Walker::typed`] described: the
    /// same steps and report without the walk's dispatch (a body full of
    /// wrong items pays it once per item) where the type or an accepted
    /// empty decides; otherwise, and near the step budget or the frame
    /// cap, the element is walked.
    pub fn typed_element(
        &mut self,
        index: usize,
        id: NodeId,
        typed: Typed,
        value: &F::Node<'a>,
        on_false: OnFalse,
    ) {
        if self.exhausted {
            return;
        }
        // The node and, for an `anyOf`, the branch walked into.
        if self.steps + 2 > STEP_BUDGET || self.frames + self.path.len() + 3 >= MAX_FRAMES {
            self.walk_element(index, id, value, on_false);
            return;
        }
        let found = type_bit::<F>(value);
        if typed.mask.admits(found) {
            if typed.settled.admits(found) || typed.empty.accepts::<F>(value) {
                self.steps += 1 + u64::from(typed.any_of);
            } else {
                self.walk_element(index, id, value, on_false);
            }
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
        self.emit(received, keyword, via, msg, id);
        self.pop();
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
        self.pop();
    }

    /// Records a problem at the current path. Cold, and so out of line:
    /// each keyword's check keeps its reporting arm apart from the code a
    /// valid value runs through, which keeps the walk's code compact.
    #[cold]
    #[inline(never)]
    pub fn report(&mut self, instance: &F::Node<'a>, keyword: Keyword, msg: Msg<'_>) {
        self.emit(
            received_type::<F>(instance),
            keyword,
            self.via,
            msg,
            self.node,
        );
    }

    fn emit(
        &mut self,
        received_type: &'static str,
        keyword: Keyword,
        via: Option<Keyword>,
        msg: Msg<'_>,
        node: NodeId,
    ) {
        if let Some(token) = self.pending.take() {
            self.path.push(token);
        }
        self.out.path_kept(self.kept);
        self.out
            .report(&self.path, received_type, keyword, via, msg, node);
        self.kept = self.path.len();
    }

    fn pop(&mut self) {
        self.path.pop();
        self.kept = self.kept.min(self.path.len());
    }

    /// Records a problem at member `name` of the current object (cold, as
    /// [`Walker::report`]).
    #[cold]
    #[inline(never)]
    pub fn report_member(
        &mut self,
        name: Cow<'a, str>,
        value: &F::Node<'a>,
        keyword: Keyword,
        msg: Msg<'_>,
    ) {
        self.path.push(Tok::Key(name));
        self.report(value, keyword, msg);
        self.pop();
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
