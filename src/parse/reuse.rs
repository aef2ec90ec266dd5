//! The parser's `unsafe` for lifetimes: what a parser keeps across parses
//! but borrows from one parse at a time.
//!
//! A tape's nodes borrow strings from the bytes they were parsed from, so
//! their type carries that borrow's lifetime. The allocation must outlive
//! every parse, so it is stored with a `'static` lifetime that no node in it
//! ever actually has, and handed out again, emptied, with the lifetime of the
//! next parse. This is what `simd_json::Tape::reset` does for an owned tape;
//! here the tape stays in place so that a `Copy` document can borrow it.
//!
//! The body being read is kept the same way ([`BodyStore`]): the document's
//! nodes reach it through the parser, for error instances rebuilt later.

use simd_json::Tape;

/// A tape allocation reused across parses.
///
/// Invariant: outside a borrow handed out by [`TapeStore::fill`], the tape is
/// never read. `fill` is the only way in, and it empties the tape first, so
/// no node stored under a borrow that has ended is ever observed.
pub(super) struct TapeStore {
    tape: Tape<'static>,
}

impl TapeStore {
    pub(super) fn new() -> Self {
        TapeStore {
            tape: Tape(Vec::new()),
        }
    }

    /// The tape, emptied, typed for the borrow `'a`.
    pub(super) fn fill<'a>(&'a mut self) -> &'a mut Tape<'a> {
        self.tape.0.clear();
        debug_assert!(self.tape.0.is_empty());
        let tape: *mut Tape<'static> = &mut self.tape;
        // SAFETY: `Tape<'static>` and `Tape<'a>` differ only in a lifetime, so
        // they have the same layout. The tape is empty, so no node in it claims
        // `'static` falsely at this point. Nodes written through the returned
        // borrow live at most `'a` but stay behind typed `'static` once the
        // borrow ends; that is sound because nothing reads them: the field is
        // private to this module, `fill` (which clears first) is the only
        // accessor, and `Node` is `Copy`, so dropping the vector never touches
        // the strings either.
        unsafe { &mut *tape.cast::<Tape<'a>>() }
    }
}

/// The body of the document being read, borrowed from the caller rather
/// than copied.
///
/// Invariant: [`BodyStore::get`] is only called through a borrow of the
/// parser taken by the parse that stored the body with [`BodyStore::set`],
/// during which the caller lends the body for at least as long. The parser
/// stores a body in every parse before handing out a document, and reads
/// it only through that document's nodes; a stale body is never read.
pub(super) struct BodyStore {
    body: &'static [u8],
}

impl BodyStore {
    pub(super) const fn empty() -> Self {
        BodyStore { body: &[] }
    }

    /// Keeps `body` for the parse that borrows the parser for `'a`.
    pub(super) fn set<'a>(&'a mut self, body: &'a [u8]) {
        // SAFETY: only the lifetime changes. The slice is read only through
        // `get`, which (by the invariant above) runs while the parse's
        // borrow `'a`, and with it the loan of `body`, is still alive; once
        // it ends the stored slice is dead data, overwritten by the next
        // `set` before any read.
        self.body = unsafe { std::mem::transmute::<&'a [u8], &'static [u8]>(body) };
    }

    /// The body stored by the parse whose document is being read.
    pub(super) fn get(&self) -> &[u8] {
        self.body
    }
}
