//! The fast path's tape writes, kept here to be audited: appending a node
//! into room reserved before the parse, without `Vec::push`'s capacity
//! check and length store at every node (the tape is behind a reference,
//! so each push would write its length back to memory).

use simd_json::Node;

/// Appends nodes to a tape, into room reserved when it is made. The nodes
/// become the tape's when [`TapeWriter::finish`] is given it back; until
/// then the tape is empty (a parse that gives up leaves it so).
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

    /// Nodes written so far.
    #[inline(always)]
    pub(super) fn len(&self) -> usize {
        self.len
    }

    /// Appends `node`; `None`, with nothing written, when the room is full.
    #[inline(always)]
    pub(super) fn push(&mut self, node: Node<'a>) -> Option<()> {
        if self.len == self.room {
            return None;
        }
        // SAFETY: `len < room`, so the slot lies inside the reservation.
        unsafe { self.slots.add(self.len).write(node) };
        self.len += 1;
        Some(())
    }

    /// Replaces the node at `index`, one written already.
    #[inline(always)]
    pub(super) fn set(&mut self, index: usize, node: Node<'a>) {
        assert!(index < self.len, "node {index} of {}", self.len);
        // SAFETY: `index < len <= room`. The old node is `Copy`, so
        // overwriting it drops nothing.
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

#[cfg(test)]
mod tests {
    use super::*;
    use simd_json::StaticNode;

    #[test]
    fn the_tape_holds_what_was_written_and_no_more_than_its_room() {
        let mut tape = vec![Node::Static(StaticNode::Null); 5];
        let mut writer = TapeWriter::new(&mut tape, 3);
        assert_eq!(writer.push(Node::Array { len: 0, count: 0 }), Some(()));
        assert_eq!(writer.push(Node::String("a")), Some(()));
        assert_eq!(writer.push(Node::String("b")), Some(()));
        assert_eq!(writer.push(Node::String("c")), None, "past the room");
        writer.set(0, Node::Array { len: 2, count: 2 });
        assert_eq!(writer.len(), 3);
        assert!(tape.is_empty(), "the nodes are the tape's once finished");
        writer.finish(&mut tape);
        assert_eq!(
            tape,
            [
                Node::Array { len: 2, count: 2 },
                Node::String("a"),
                Node::String("b")
            ]
        );
        // Not finished, a writer leaves the tape empty.
        TapeWriter::new(&mut tape, 8)
            .push(Node::String("x"))
            .unwrap();
        assert!(tape.is_empty());
    }

    #[test]
    #[should_panic(expected = "the tape it was made for")]
    fn a_writer_finishes_only_its_own_tape() {
        let (mut mine, mut other) = (Vec::new(), Vec::new());
        let mut writer = TapeWriter::new(&mut mine, 4);
        TapeWriter::new(&mut other, 4);
        writer.push(Node::String("x")).unwrap();
        writer.finish(&mut other);
    }

    #[test]
    #[should_panic(expected = "node 1 of 1")]
    fn only_a_written_node_can_be_replaced() {
        let mut tape = Vec::new();
        let mut writer = TapeWriter::new(&mut tape, 4);
        writer.push(Node::String("x")).unwrap();
        writer.set(1, Node::String("y"));
    }
}
