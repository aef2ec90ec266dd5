//! Handles on the nodes of a parsed tape.
//!
//! simd-json's tape is a preorder list of nodes: an object is its header
//! (`len` members, `count` nodes below it) followed by key, value, key,
//! value…; an array its header followed by its elements; a scalar one node.
//! A subtree is therefore a contiguous slice, and skipping one costs a single
//! read of its header.

use serde_json::{Map, Number, Value};
use simd_json::{Node, StaticNode};

use super::Source;
use super::subtree::Subtree;
use super::wide::Literal;

/// The kind of a JSON value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NodeKind {
    Null,
    Bool,
    Number,
    String,
    Array,
    Object,
}

/// A handle on one node of a parsed document: the node's subtree (a slice of
/// the tape starting at the node) and the document it belongs to.
#[derive(Clone, Copy)]
pub struct TapeNode<'p> {
    /// The node followed by the rest of its subtree, nothing more.
    nodes: Subtree<'p>,
    source: &'p Source,
}

/// A number as the tape holds it.
///
/// It answers like `serde_json::Number` parsed from the same text: a number
/// written with a fraction or an exponent, or beyond 64 bits, is a float and
/// gives no `u64`/`i64`.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TapeNumber<'p> {
    I64(i64),
    U64(u64),
    F64(f64),
    /// An integer literal beyond 64 bits that its float (what it compares
    /// as) does not hold exactly, kept as written. Its magnitude is 2^63 or
    /// more, so the float decides it exactly against any bound or value of
    /// smaller magnitude; against a larger one only the text can.
    Wide(WideNumber<'p>),
}

/// A [`TapeNumber::Wide`]: where its float and text are kept. (One
/// pointer, so that a `TapeNumber` stays two words, returned in registers
/// by the backend's `as_number` on every number the validator reads.)
#[derive(Clone, Copy)]
pub struct WideNumber<'p>(&'p Literal);

impl<'p> WideNumber<'p> {
    /// The float it was read as.
    pub fn value(&self) -> f64 {
        self.0.value
    }

    /// The literal as the body writes it.
    pub fn text(&self) -> &'p str {
        &self.0.text
    }
}

impl PartialEq for WideNumber<'_> {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl std::fmt::Debug for WideNumber<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WideNumber({})", self.text())
    }
}

impl<'p> TapeNode<'p> {
    /// The node at `index` of `tape`.
    pub(super) fn at(tape: &'p [Node<'p>], index: usize, source: &'p Source) -> Self {
        let (nodes, _) = Subtree::split(&tape[index..]).expect("a subtree of the tape");
        TapeNode { nodes, source }
    }

    /// A node that holds just a string, backed by `holder` (a one-node tape).
    pub(super) fn detached(holder: &'p [Node<'p>; 1]) -> Self {
        let (nodes, _) = Subtree::split(holder).expect("one node");
        TapeNode {
            nodes,
            source: Source::detached(),
        }
    }

    fn head(&self) -> &'p Node<'p> {
        self.nodes.head()
    }

    pub(super) fn source(&self) -> &'p Source {
        self.source
    }

    /// Address of this node in memory: unique among the nodes alive at once.
    pub(super) fn address(&self) -> usize {
        self.nodes.nodes().as_ptr() as usize
    }

    /// Which JSON type the node holds.
    pub fn kind(&self) -> NodeKind {
        match self.head() {
            Node::String(_) => NodeKind::String,
            Node::Object { .. } => NodeKind::Object,
            Node::Array { .. } => NodeKind::Array,
            Node::Static(StaticNode::Null) => NodeKind::Null,
            Node::Static(StaticNode::Bool(_)) => NodeKind::Bool,
            Node::Static(_) => NodeKind::Number,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&'p str> {
        match self.head() {
            Node::String(string) => Some(string),
            _ => None,
        }
    }

    /// The boolean, if this is one.
    pub fn as_bool(&self) -> Option<bool> {
        match self.head() {
            Node::Static(StaticNode::Bool(value)) => Some(*value),
            _ => None,
        }
    }

    /// Whether this is `null`.
    pub fn is_null(&self) -> bool {
        matches!(self.head(), Node::Static(StaticNode::Null))
    }

    /// The number, if this is one.
    pub fn as_number(&self) -> Option<TapeNumber<'p>> {
        match *self.head() {
            Node::Static(StaticNode::I64(value)) => Some(TapeNumber::I64(value)),
            Node::Static(StaticNode::U64(value)) => Some(TapeNumber::U64(value)),
            Node::Static(StaticNode::F64(value)) => Some(match self.wide_literal(value) {
                Some(wide) => TapeNumber::Wide(wide),
                None => TapeNumber::F64(value),
            }),
            _ => None,
        }
    }

    /// This float as a [`WideNumber`] if it was read from an integer
    /// literal beyond 64 bits that it does not hold exactly. A float below
    /// 2^63, or a document without such a literal, costs one comparison.
    #[inline]
    fn wide_literal(&self, value: f64) -> Option<WideNumber<'p>> {
        if !super::wide::may_be_wide(value) || self.source.wide.is_empty() {
            return None;
        }
        let source: &'p Source = self.source;
        source
            .wide_at(source.index_of(self.address())?)
            .map(WideNumber)
    }

    /// Whether this value holds, at any depth, an integer literal beyond
    /// 64 bits that its float does not hold exactly
    /// (`TapeNumber::Wide`).
    pub fn holds_wide_integer(&self) -> bool {
        if self.source.wide.is_empty() {
            return false;
        }
        self.source
            .index_of(self.address())
            .is_some_and(|index| self.source.holds_wide(index, self.nodes.nodes().len()))
    }

    /// A non-negative number written as an integer (like `serde_json`:
    /// `1.0` gives `None`; see [`TapeNode::is_integer`]).
    pub fn as_u64(&self) -> Option<u64> {
        self.as_number().and_then(|number| number.as_u64())
    }

    /// A number written as an integer that fits `i64` (like `serde_json`).
    pub fn as_i64(&self) -> Option<i64> {
        self.as_number().and_then(|number| number.as_i64())
    }

    /// Any number, as `f64`.
    pub fn as_f64(&self) -> Option<f64> {
        self.as_number().map(|number| number.as_f64())
    }

    /// A number with an integral value, as JSON Schema 2020-12's `integer`
    /// type means it: `1.0` and `1e2` are integers, so is an integer beyond
    /// 64 bits (held as a float).
    pub fn is_integer(&self) -> bool {
        self.as_number().is_some_and(|number| number.is_integer())
    }

    /// The value of member `key`; `None` if this is not an object or has no
    /// such member.
    pub fn get(&self, key: &str) -> Option<TapeNode<'p>> {
        self.members()
            .find(|(name, _)| same_text(name, key))
            .map(|(_, value)| value)
    }

    /// The members of an object in document order; empty for anything else.
    pub fn members(&self) -> Members<'p> {
        match self.head() {
            Node::Object { len, .. } => Members {
                rest: self.nodes.below(),
                remaining: *len,
                source: self.source,
            },
            _ => Members {
                rest: &[],
                remaining: 0,
                source: self.source,
            },
        }
    }

    /// The elements of an array in order; empty for anything else.
    pub fn elements(&self) -> Elements<'p> {
        match self.head() {
            Node::Array { len, .. } => Elements {
                rest: self.nodes.below(),
                remaining: *len,
                source: self.source,
            },
            _ => Elements {
                rest: &[],
                remaining: 0,
                source: self.source,
            },
        }
    }

    /// Element `index` of an array; `None` past its end or for anything
    /// else. Direct where every element is a scalar (one node each), else
    /// a skip over the elements before it.
    pub fn element(&self, index: usize) -> Option<TapeNode<'p>> {
        if let Some(items) = self.scalar_elements() {
            let (element, _) = Subtree::split(items.get(index..)?)?;
            return Some(TapeNode {
                nodes: element,
                source: self.source,
            });
        }
        self.elements().nth(index)
    }

    /// An array's elements as tape nodes, when none is an array or an
    /// object (each element is then exactly one node).
    pub(super) fn scalar_elements(&self) -> Option<&'p [Node<'p>]> {
        match *self.head() {
            Node::Array { len, count } if len == count => self.nodes.below().get(..len),
            _ => None,
        }
    }

    /// Members of an object or elements of an array; 0 for a scalar.
    pub fn len(&self) -> usize {
        match self.head() {
            Node::Object { len, .. } | Node::Array { len, .. } => *len,
            _ => 0,
        }
    }

    /// Whether [`TapeNode::len`] is 0.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// The value as a `serde_json::Value` (cold path: it allocates the
    /// whole subtree). Iterative, so any depth is safe.
    pub fn to_value(&self) -> Value {
        subtree_to_value(self.nodes.nodes())
    }

    /// Equality under JSON Schema's rules (numbers compare mathematically,
    /// object members in any order) against a schema value.
    pub fn equals_value(&self, expected: &Value) -> bool {
        all_pairs_equal((*self, expected), |(node, value), pending| {
            match (node.head(), value) {
                (Node::String(left), Value::String(right)) => same_text(left, right),
                (Node::Static(StaticNode::Null), Value::Null) => true,
                (Node::Static(StaticNode::Bool(left)), Value::Bool(right)) => left == right,
                (Node::Array { len, .. }, Value::Array(items)) => {
                    *len == items.len() && {
                        pending.extend(node.elements().zip(items));
                        true
                    }
                }
                (Node::Object { len, .. }, Value::Object(members)) => {
                    // Keys are unique on both sides (duplicates are refused
                    // at parse time), so equal lengths and every tape member
                    // found equal mean equal objects.
                    *len == members.len()
                        && node.members().all(|(name, child)| match members.get(name) {
                            Some(other) => {
                                pending.push((child, other));
                                true
                            }
                            None => false,
                        })
                }
                (Node::Static(_), Value::Number(right)) => match node.as_number() {
                    // Inexact as a float and beyond 64 bits: equal to no
                    // number a schema value holds.
                    Some(TapeNumber::Wide(..)) => false,
                    Some(left) => jsonschema::json::cmp::equal_numbers(&left, right),
                    None => false,
                },
                _ => false,
            }
        })
    }

    /// Equality of two tape nodes under JSON Schema's rules.
    pub fn equals_node(&self, other: &TapeNode<'_>) -> bool {
        // Big objects would make the member lookups below quadratic; compare
        // those through values (cold: only `uniqueItems` gets here).
        const WALK_LIMIT: usize = 16;
        all_pairs_equal((*self, *other), |(left, right), pending| {
            match (left.head(), right.head()) {
                (Node::String(a), Node::String(b)) => a == b,
                (Node::Static(StaticNode::Null), Node::Static(StaticNode::Null)) => true,
                (Node::Static(StaticNode::Bool(a)), Node::Static(StaticNode::Bool(b))) => a == b,
                (Node::Array { len: a, .. }, Node::Array { len: b, .. }) => {
                    a == b && {
                        pending.extend(left.elements().zip(right.elements()));
                        true
                    }
                }
                (Node::Object { len: a, .. }, Node::Object { len: b, .. }) => {
                    if a != b {
                        false
                    } else if *a > WALK_LIMIT {
                        jsonschema::json::cmp::equal(&left.to_value(), &right.to_value())
                    } else {
                        left.members().all(|(name, child)| match right.get(name) {
                            Some(other) => {
                                pending.push((child, other));
                                true
                            }
                            None => false,
                        })
                    }
                }
                (Node::Static(_), Node::Static(_)) => match (left.as_number(), right.as_number()) {
                    // JSON writes an integer one way (no leading zeros), so
                    // two such literals are equal when their texts are.
                    (Some(TapeNumber::Wide(a)), Some(TapeNumber::Wide(b))) => a == b,
                    (Some(TapeNumber::Wide(..)), _) | (_, Some(TapeNumber::Wide(..))) => false,
                    (Some(a), Some(b)) => jsonschema::json::cmp::equal_numbers(&a, &b.to_number()),
                    _ => false,
                },
                _ => false,
            }
        })
    }
}

/// Whether `first` and every pair of children its comparison defers are
/// equal: `equal` compares one pair's own values and pushes the pairs of
/// their children onto the stack it is given. Iterative, so any depth is
/// safe; it stops at the first unequal pair.
#[inline(always)]
fn all_pairs_equal<P>(first: P, mut equal: impl FnMut(P, &mut Vec<P>) -> bool) -> bool {
    let mut pending = Vec::new();
    let mut pair = first;
    loop {
        if !equal(pair, &mut pending) {
            return false;
        }
        match pending.pop() {
            Some(next) => pair = next,
            None => return true,
        }
    }
}

impl std::fmt::Debug for TapeNode<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "TapeNode({})", self.to_value())
    }
}

impl TapeNumber<'_> {
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            TapeNumber::I64(value) => u64::try_from(value).ok(),
            TapeNumber::U64(value) => Some(value),
            TapeNumber::F64(_) | TapeNumber::Wide(..) => None,
        }
    }

    pub fn as_i64(&self) -> Option<i64> {
        match *self {
            TapeNumber::I64(value) => Some(value),
            TapeNumber::U64(value) => i64::try_from(value).ok(),
            TapeNumber::F64(_) | TapeNumber::Wide(..) => None,
        }
    }

    pub fn as_f64(&self) -> f64 {
        match *self {
            TapeNumber::I64(value) => value as f64,
            TapeNumber::U64(value) => value as f64,
            TapeNumber::F64(value) => value,
            TapeNumber::Wide(wide) => wide.value(),
        }
    }

    /// Integral value (drafts 6 and later: `1.0` is an integer).
    pub fn is_integer(&self) -> bool {
        match *self {
            TapeNumber::I64(_) | TapeNumber::U64(_) | TapeNumber::Wide(..) => true,
            TapeNumber::F64(value) => value.fract() == 0.0,
        }
    }

    /// The number as `serde_json` holds it (an integer beyond 64 bits as
    /// its float, as `serde_json` reads one). Parsing refuses non-finite
    /// floats, so every tape number has one.
    pub fn to_number(self) -> Number {
        match self {
            TapeNumber::I64(value) => Number::from(value),
            TapeNumber::U64(value) => Number::from(value),
            TapeNumber::F64(value) => Number::from_f64(value).unwrap_or_else(|| Number::from(0)),
            TapeNumber::Wide(wide) => {
                Number::from_f64(wide.value()).unwrap_or_else(|| Number::from(0))
            }
        }
    }
}

/// Up to this many names, a name is looked up by reading them in order
/// with [`same_text`] rather than by a hash table or a binary search: most
/// differ from it in length, which costs less than hashing or ordering it.
pub(crate) const SHORT_LIST: usize = 16;

/// Whether two texts are equal: what `==` says, inline for the short
/// texts that member names and enum values are. (`==` calls `memcmp` once
/// the lengths agree, which costs more than the comparison itself.)
#[inline(always)]
pub(crate) fn same_text(a: &str, b: &str) -> bool {
    same_bytes(a.as_bytes(), b.as_bytes())
}

/// [`same_text`] for bytes.
#[inline(always)]
pub(crate) fn same_bytes(a: &[u8], b: &[u8]) -> bool {
    let n = a.len();
    if n != b.len() {
        return false;
    }
    // Two loads from each end overlap in the middle and cover every byte.
    let four =
        |s: &[u8], at: usize| u32::from_le_bytes(s[at..at + 4].try_into().expect("four bytes"));
    let eight =
        |s: &[u8], at: usize| u64::from_le_bytes(s[at..at + 8].try_into().expect("eight bytes"));
    match n {
        0 => true,
        1..=3 => a[0] == b[0] && a[n / 2] == b[n / 2] && a[n - 1] == b[n - 1],
        4..=7 => four(a, 0) == four(b, 0) && four(a, n - 4) == four(b, n - 4),
        8..=16 => eight(a, 0) == eight(b, 0) && eight(a, n - 8) == eight(b, n - 8),
        // Namespaced names (`io.modelcontextprotocol/…`): eight bytes at a
        // time, the last eight read from the end.
        17..=64 => {
            let mut at = 0;
            while at + 8 < n {
                if eight(a, at) != eight(b, at) {
                    return false;
                }
                at += 8;
            }
            eight(a, n - 8) == eight(b, n - 8)
        }
        _ => a == b,
    }
}

/// Iterator over an object's members.
#[derive(Clone)]
pub struct Members<'p> {
    /// Key, value, key, value… of the members not yet visited.
    rest: &'p [Node<'p>],
    remaining: usize,
    source: &'p Source,
}

impl<'p> Iterator for Members<'p> {
    type Item = (&'p str, TapeNode<'p>);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let [Node::String(name), after_name @ ..] = self.rest else {
            unreachable!("an object member is a string key and a value on the tape")
        };
        let Some((value, rest)) = Subtree::split(after_name) else {
            unreachable!("an object member's value is on the tape")
        };
        self.rest = rest;
        Some((
            name,
            TapeNode {
                nodes: value,
                source: self.source,
            },
        ))
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Members<'_> {}

/// Iterator over an array's elements.
#[derive(Clone)]
pub struct Elements<'p> {
    rest: &'p [Node<'p>],
    remaining: usize,
    source: &'p Source,
}

impl<'p> Iterator for Elements<'p> {
    type Item = TapeNode<'p>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let Some((element, rest)) = Subtree::split(self.rest) else {
            unreachable!("an array's element is on the tape")
        };
        self.rest = rest;
        Some(TapeNode {
            nodes: element,
            source: self.source,
        })
    }

    fn size_hint(&self) -> (usize, Option<usize>) {
        (self.remaining, Some(self.remaining))
    }
}

impl ExactSizeIterator for Elements<'_> {}

/// A container being rebuilt as a value.
enum Frame {
    Array {
        items: Vec<Value>,
        remaining: usize,
    },
    Object {
        members: Map<String, Value>,
        key: Option<String>,
        remaining: usize,
    },
}

/// The subtree `nodes` (a node and everything below it) as a value; one pass
/// over the tape with an explicit stack.
pub(super) fn subtree_to_value(nodes: &[Node<'_>]) -> Value {
    let mut stack: Vec<Frame> = Vec::new();
    for node in nodes {
        if let Some(Frame::Object {
            key: key @ None, ..
        }) = stack.last_mut()
        {
            if let Node::String(name) = node {
                *key = Some((*name).to_owned());
            }
            continue;
        }
        let mut value = match *node {
            Node::String(string) => Value::String(string.to_owned()),
            Node::Static(StaticNode::Null) => Value::Null,
            Node::Static(StaticNode::Bool(value)) => Value::Bool(value),
            Node::Static(StaticNode::I64(value)) => Value::from(value),
            Node::Static(StaticNode::U64(value)) => Value::from(value),
            Node::Static(StaticNode::F64(value)) => {
                Number::from_f64(value).map_or(Value::Null, Value::Number)
            }
            Node::Array { len, .. } if len > 0 => {
                stack.push(Frame::Array {
                    items: Vec::with_capacity(len),
                    remaining: len,
                });
                continue;
            }
            Node::Array { .. } => Value::Array(Vec::new()),
            Node::Object { len, .. } if len > 0 => {
                stack.push(Frame::Object {
                    members: Map::new(),
                    key: None,
                    remaining: len,
                });
                continue;
            }
            Node::Object { .. } => Value::Object(Map::new()),
        };
        // Place the value, closing every container it completes.
        loop {
            let done = match stack.last_mut() {
                None => return value,
                Some(Frame::Array { items, remaining }) => {
                    items.push(value);
                    *remaining -= 1;
                    *remaining == 0
                }
                Some(Frame::Object {
                    members,
                    key,
                    remaining,
                }) => {
                    members.insert(key.take().unwrap_or_default(), value);
                    *remaining -= 1;
                    *remaining == 0
                }
            };
            if !done {
                break;
            }
            value = match stack.pop() {
                Some(Frame::Array { items, .. }) => Value::Array(items),
                Some(Frame::Object { members, .. }) => Value::Object(members),
                None => unreachable!("the frame just completed is on the stack"),
            };
        }
    }
    // Only a truncated subtree ends here; a tape subtree always completes.
    Value::Null
}

#[cfg(test)]
mod tests {
    use super::{TapeNumber, same_text};

    #[test]
    fn a_tape_number_is_two_words() {
        assert_eq!(std::mem::size_of::<TapeNumber<'_>>(), 16);
    }

    #[test]
    fn same_text_is_equality_at_every_length_and_position() {
        for len in 0..80 {
            let a: String = (0..len)
                .map(|i| char::from(b'a' + (i % 26) as u8))
                .collect();
            assert!(same_text(&a, &a.clone()), "{len}");
            for at in 0..len {
                let mut b = a.clone().into_bytes();
                b[at] = b'Z';
                let b = String::from_utf8(b).unwrap();
                assert!(!same_text(&a, &b), "{len} at {at}");
            }
            assert!(!same_text(&a, &format!("{a}a")), "{len} and longer");
        }
    }
}
