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
/// a time. The nodes become the tape's when [`TapeWriter::finish`] is
/// given it back; until then the tape is empty (a parse that gives up
/// leaves it so).
///
/// Invariant: `len <= room`, `room` slots of the allocation at `slots` are
/// reserved, and the first `len` of them hold nodes this writer wrote.
pub(super) struct TapeWriter<'a> {
    /// The tape's allocation.
    slots: *mut Node<'a>,
    len: usize,
    room: usize,
}

impl<'a> TapeWriter<'a> {
    /// A writer at the start of `tape` (emptied) with room for `room`
    /// nodes.
    pub(super) fn new(tape: &mut Vec<Node<'a>>, room: usize) -> Self {
        tape.clear();
        tape.reserve(room);
        TapeWriter {
            slots: tape.as_mut_ptr(),
            len: 0,
            room,
        }
    }

    /// Room for one turn of the parse: a value (or the header of an array
    /// or object) and then the key after it. `None` when the room lacks two
    /// nodes: one check per turn rather than one per node.
    #[inline(always)]
    pub(super) fn turn(&mut self) -> Option<Turn<'_, 'a>> {
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

    /// Makes the nodes written `tape`'s: the tape this writer was made
    /// for, not written to or grown since.
    pub(super) fn finish(self, tape: &mut Vec<Node<'a>>) {
        assert!(
            tape.as_mut_ptr() == self.slots && tape.is_empty() && self.room <= tape.capacity(),
            "a tape writer is finished on the tape it was made for"
        );
        // SAFETY: the tape's allocation is the one written (the same
        // address, and the tape still empty, so not grown since); its first
        // `len` slots hold nodes written by `push`, and `len <= room <=
        // capacity`.
        unsafe { tape.set_len(self.len) };
    }
}

/// Room for two more nodes (invariant: `len + 2 <= room`).
pub(super) struct Turn<'w, 'a> {
    writer: &'w mut TapeWriter<'a>,
}

impl<'w, 'a> Turn<'w, 'a> {
    /// Nodes written so far.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.writer.len
    }

    /// Appends `node`, leaving room for one more.
    #[inline(always)]
    pub(super) fn push(self, node: Node<'a>) -> Last<'w, 'a> {
        let writer = self.writer;
        // SAFETY: `len + 2 <= room` (the invariant).
        unsafe { writer.write(writer.len, node) };
        writer.len += 1;
        Last { writer }
    }
}

/// Room for one more node (invariant: `len + 1 <= room`), and the nodes
/// written so far to be finished.
pub(super) struct Last<'w, 'a> {
    writer: &'w mut TapeWriter<'a>,
}

impl<'a> Last<'_, 'a> {
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
        assert!(tape.is_empty(), "the nodes are the tape's once finished");
        writer.finish(&mut tape);
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

    #[test]
    #[should_panic(expected = "the tape it was made for")]
    fn a_writer_finishes_only_its_own_tape() {
        let (mut mine, mut other) = (Vec::new(), Vec::new());
        let mut writer = TapeWriter::new(&mut mine, 4);
        TapeWriter::new(&mut other, 4);
        writer.turn().unwrap().push(Node::String("x"));
        writer.finish(&mut other);
    }
}
