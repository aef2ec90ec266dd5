//! Duplicate object keys, found in one pass over the tape.

use std::hash::BuildHasher;
use std::hash::RandomState;

use simd_json::{Node, StaticNode};

use super::subtree::span;

/// Objects with at most this many members compare their keys pairwise:
/// most pairs differ in length and cost one comparison, cheaper than a
/// seeded hash of every key up to here; 16 rather than 8 because
/// `tools/call` arguments often hold ten or so members.
const PAIRWISE_LIMIT: usize = 16;
const EMPTY: usize = usize::MAX;

/// What the pass over the tape found wrong, if anything.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Defect {
    DuplicateKey,
    /// A float that is not finite (a literal beyond `f64`'s range).
    NonFinite,
}

/// An open-addressing set of key positions, reused across documents, for
/// objects too big to compare pairwise. Seeded per parser so that no fixed
/// set of keys collides (hash flooding).
pub(super) struct KeyTable {
    slots: Vec<usize>,
    hasher: RandomState,
}

impl KeyTable {
    pub(super) fn new() -> Self {
        KeyTable {
            slots: Vec::new(),
            hasher: RandomState::new(),
        }
    }

    /// The first defect of the document, in one pass linear in its size:
    /// every object's keys are visited once (skipping values by their node
    /// counts), and the pass itself visits every node once. `wide` is set
    /// when a float of the tape may be an integer literal beyond 64 bits
    /// ([`super::wide::may_be_wide`]).
    pub(super) fn check(&mut self, tape: &[Node<'_>], wide: &mut bool) -> Option<Defect> {
        for (at, node) in tape.iter().enumerate() {
            match node {
                Node::Object { len, .. } if *len > 1 && self.has_duplicate(tape, at, *len) => {
                    return Some(Defect::DuplicateKey);
                }
                Node::Static(StaticNode::F64(value)) => {
                    if !value.is_finite() {
                        return Some(Defect::NonFinite);
                    }
                    *wide |= super::wide::may_be_wide(*value);
                }
                _ => {}
            }
        }
        None
    }

    /// Whether any of the objects whose headers are at `objects` has a
    /// duplicate key: what [`KeyTable::check`] finds in a tape without a
    /// non-finite float, when `objects` lists every object that may repeat
    /// a key.
    pub(super) fn any_duplicate_in(&mut self, tape: &[Node<'_>], objects: &[u32]) -> bool {
        objects.iter().any(|&at| {
            let at = at as usize;
            match tape[at] {
                Node::Object { len, .. } => self.has_duplicate(tape, at, len),
                _ => unreachable!("the fast path lists object headers"),
            }
        })
    }

    fn has_duplicate(&mut self, tape: &[Node<'_>], at: usize, len: usize) -> bool {
        let keys = Keys {
            tape,
            next: at + 1,
            remaining: len,
        };
        if len <= PAIRWISE_LIMIT {
            let mut seen: [&str; PAIRWISE_LIMIT] = [""; PAIRWISE_LIMIT];
            for (count, (_, key)) in keys.enumerate() {
                if seen[..count].contains(&key) {
                    return true;
                }
                seen[count] = key;
            }
            return false;
        }
        let size = (len * 2).next_power_of_two();
        let mask = size - 1;
        self.slots.clear();
        self.slots.resize(size, EMPTY);
        for (position, key) in keys {
            let mut slot = (self.hasher.hash_one(key) as usize) & mask;
            loop {
                match self.slots[slot] {
                    EMPTY => {
                        self.slots[slot] = position;
                        break;
                    }
                    other if key_at(tape, other) == key => return true,
                    _ => slot = (slot + 1) & mask,
                }
            }
        }
        false
    }
}

fn key_at<'t>(tape: &[Node<'t>], position: usize) -> &'t str {
    match tape[position] {
        Node::String(key) => key,
        _ => unreachable!("an object member's key is a string on the tape"),
    }
}

/// The keys of one object with their tape positions.
struct Keys<'a, 't> {
    tape: &'a [Node<'t>],
    next: usize,
    remaining: usize,
}

impl<'t> Iterator for Keys<'_, 't> {
    type Item = (usize, &'t str);

    fn next(&mut self) -> Option<Self::Item> {
        if self.remaining == 0 {
            return None;
        }
        self.remaining -= 1;
        let position = self.next;
        let key = key_at(self.tape, position);
        self.next = position + 1 + span(&self.tape[position + 1]);
        Some((position, key))
    }
}
