//! The fast path's tape writes, kept here to be audited: nodes written
//! into room reserved before the parse, the room checked once per turn of
//! the parse (a value and the key after it) rather than by `Vec::push` at
//! every node, and no length stored back at every node (the tape is
//! behind a reference, so each push would write its length to memory).
//!
//! The types hold the count: [`TapeWriter::turn`] checks room for two
//! nodes and gives a [`Turn`]; its `push` gives a [`Last`], whose `push`
//! ends the turn. No path writes a third node on one check.

use simd_json::Node;

/// Appends nodes to a tape, into room reserved when it is made, a turn at
/// a time. The nodes become the tape's at [`TapeWriter::finish`]; until
/// then the tape is empty (a parse that gives up leaves it so).
///
/// Invariant: `len <= room <= tape.capacity()`, `slots` is the tape's
/// allocation, and its first `len` slots hold nodes this writer wrote. The
/// writer borrows the tape for its whole life, so nothing else can grow,
/// shrink or free the allocation under it.
pub(super) struct TapeWriter<'t, 'a> {
    tape: &'t mut Vec<Node<'a>>,
    /// The tape's allocation.
    slots: *mut Node<'a>,
    len: usize,
    room: usize,
}

impl<'t, 'a> TapeWriter<'t, 'a> {
    /// A writer at the start of `tape` (emptied) with room for `room`
    /// nodes.
    pub(super) fn new(tape: &'t mut Vec<Node<'a>>, room: usize) -> Self {
        tape.clear();
        tape.reserve(room);
        let slots = tape.as_mut_ptr();
        TapeWriter {
            tape,
            slots,
            len: 0,
            room,
        }
    }

    /// Room for one turn of the parse: a value (or the header of an array
    /// or object) and then the key after it. `None` when the room lacks two
    /// nodes: one check per turn rather than one per node.
    #[inline(always)]
    pub(super) fn turn(&mut self) -> Option<Turn<'_, 't, 'a>> {
        (self.room - self.len >= 2).then_some(Turn { writer: self })
    }

    /// Writes `node` at `index`.
    ///
    /// SAFETY: `index < room`.
    #[inline(always)]
    unsafe fn write(&mut self, index: usize, node: Node<'a>) {
        debug_assert!(index < self.room);
        // SAFETY: `index < room` (the caller's promise), so the slot lies
        // inside the reservation. A node is `Copy`: overwriting one drops
        // nothing.
        unsafe { self.slots.add(index).write(node) };
    }

    /// Makes the nodes written the tape's.
    pub(super) fn finish(self) {
        debug_assert!(self.tape.is_empty() && self.room <= self.tape.capacity());
        // SAFETY: the tape's first `len` slots hold nodes written through
        // `slots`, its allocation (borrowed since, so unchanged), and
        // `len <= room <= capacity`.
        unsafe { self.tape.set_len(self.len) };
    }
}

/// Room for two more nodes (invariant: `len + 2 <= room`).
pub(super) struct Turn<'w, 't, 'a> {
    writer: &'w mut TapeWriter<'t, 'a>,
}

impl<'w, 't, 'a> Turn<'w, 't, 'a> {
    /// Nodes written so far.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.writer.len
    }

    /// Appends `node`, leaving room for one more.
    #[inline(always)]
    pub(super) fn push(self, node: Node<'a>) -> Last<'w, 't, 'a> {
        let writer = self.writer;
        // SAFETY: `len + 2 <= room` (the invariant).
        unsafe { writer.write(writer.len, node) };
        writer.len += 1;
        Last { writer }
    }
}

/// Room for one more node (invariant: `len + 1 <= room`), and the nodes
/// written so far to be finished.
pub(super) struct Last<'w, 't, 'a> {
    writer: &'w mut TapeWriter<'t, 'a>,
}

impl<'a> Last<'_, '_, 'a> {
    /// Nodes written so far.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.writer.len
    }

    /// Appends `node`: the turn's last.
    #[inline(always)]
    pub(super) fn push(self, node: Node<'a>) {
        // SAFETY: `len + 1 <= room` (the invariant).
        unsafe { self.writer.write(self.writer.len, node) };
        self.writer.len += 1;
    }

    /// Replaces the node at `index`, one written already.
    #[inline(always)]
    pub(super) fn set(&mut self, index: usize, node: Node<'a>) {
        assert!(
            index < self.writer.len,
            "node {index} of {}",
            self.writer.len
        );
        // SAFETY: `index < len <= room`.
        unsafe { self.writer.write(index, node) };
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simd_json::StaticNode;

    #[test]
    fn the_tape_holds_what_was_written_and_no_more_than_its_room() {
        let mut tape = vec![Node::Static(StaticNode::Null); 5];
        let mut writer = TapeWriter::new(&mut tape, 3);
        let mut last = writer
            .turn()
            .unwrap()
            .push(Node::Array { len: 0, count: 0 });
        assert_eq!(last.len(), 1);
        last.set(0, Node::Array { len: 2, count: 2 });
        last.push(Node::String("a"));
        assert!(writer.turn().is_none(), "one node of room left, not two");
        assert_eq!(writer.len, 2);
        assert!(
            writer.tape.is_empty(),
            "the nodes are the tape's once finished"
        );
        writer.finish();
        assert_eq!(tape, [Node::Array { len: 2, count: 2 }, Node::String("a")]);
        // Not finished, a writer leaves the tape empty.
        TapeWriter::new(&mut tape, 8)
            .turn()
            .unwrap()
            .push(Node::String("x"));
        assert!(tape.is_empty());
    }

    #[test]
    #[should_panic(expected = "node 1 of 1")]
    fn only_a_written_node_can_be_replaced() {
        let mut tape = Vec::new();
        let mut writer = TapeWriter::new(&mut tape, 4);
        let mut last = writer.turn().unwrap().push(Node::String("x"));
        last.set(1, Node::String("y"));
    }
}
