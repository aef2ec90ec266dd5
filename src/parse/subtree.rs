//! A node of the tape with everything below it: never empty, so its head
//! is read without a bounds check. That check ran on every access the
//! schema validators make.
//!
//! The one constructor, [`Subtree::split`], checks the bounds once; the
//! unchecked reads rely on nothing else. Debug builds check them again.

use simd_json::Node;

/// A subtree: its head node first, then every node below it.
#[derive(Clone, Copy)]
pub(super) struct Subtree<'p>(&'p [Node<'p>]);

impl<'p> Subtree<'p> {
    /// The subtree headed by the first of `nodes`, and the nodes after it;
    /// `None` when `nodes` is empty or ends before the subtree does.
    #[inline(always)]
    pub(super) fn split(nodes: &'p [Node<'p>]) -> Option<(Self, &'p [Node<'p>])> {
        let head = nodes.first()?;
        // At least the head, whatever the header says.
        let (tree, rest) = nodes.split_at_checked(span(head).max(1))?;
        Some((Subtree(tree), rest))
    }

    /// The head node.
    #[inline(always)]
    pub(super) fn head(self) -> &'p Node<'p> {
        debug_assert!(!self.0.is_empty());
        // SAFETY: `split`, the only constructor, makes a slice of at least
        // one node, so index 0 is in bounds.
        unsafe { self.0.get_unchecked(0) }
    }

    /// The nodes below the head.
    #[inline(always)]
    pub(super) fn below(self) -> &'p [Node<'p>] {
        debug_assert!(!self.0.is_empty());
        // SAFETY: as in `head`: the slice has at least one node, so `1..`
        // is in bounds (and empty for a scalar).
        unsafe { self.0.get_unchecked(1..) }
    }

    /// The head and every node below it.
    pub(super) fn nodes(self) -> &'p [Node<'p>] {
        self.0
    }
}

/// Number of tape nodes the subtree starting with `node` takes (wrapping
/// to 0 for a header that claims all of memory, which no tape holds).
pub(super) fn span(node: &Node<'_>) -> usize {
    match node {
        Node::Object { count, .. } | Node::Array { count, .. } => count.wrapping_add(1),
        _ => 1,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use simd_json::StaticNode;

    #[test]
    fn a_subtree_takes_its_header_count_and_never_less_than_one_node() {
        let tape = [
            Node::Array { len: 2, count: 2 },
            Node::Static(StaticNode::Null),
            Node::String("x"),
            Node::String("after"),
        ];
        let (tree, rest) = Subtree::split(&tape).unwrap();
        assert_eq!(tree.nodes().len(), 3);
        assert_eq!(tree.below().len(), 2);
        assert_eq!(rest, &tape[3..]);
        let (scalar, rest) = Subtree::split(&tape[1..]).unwrap();
        assert_eq!((scalar.nodes().len(), scalar.below().len()), (1, 0));
        assert_eq!(rest.len(), 2);
        // A header that claims more than the tape holds; one whose count
        // wraps the span to zero still keeps its head.
        assert!(Subtree::split(&tape[..2]).is_none());
        assert!(Subtree::split(&[]).is_none());
        let boundless = [Node::Object {
            len: 0,
            count: usize::MAX,
        }];
        let (tree, _) = Subtree::split(&boundless).unwrap();
        assert_eq!(tree.nodes().len(), 1);
    }
}
