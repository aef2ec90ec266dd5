//! The one place with `unsafe`: a tape allocation kept across parses.
//!
//! A tape's nodes borrow strings from the scratch buffer they were parsed
//! from, so their type carries that borrow's lifetime. The allocation must
//! outlive every parse, so it is stored with a `'static` lifetime that no
//! node in it ever actually has, and handed out again, emptied, with the
//! lifetime of the next parse. This is what `simd_json::Tape::reset` does for
//! an owned tape; here the tape stays in place so that a `Copy` document can
//! borrow it.

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
