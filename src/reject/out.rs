//! Where a refusal is written (ARCHITECTURE.md, "Per-worker memory"): a
//! per-thread output buffer the answers are written into and handed out of
//! as [`Bytes`], and a per-thread arena for the texts built on the way.
//! A server worker is one thread, so per thread is per worker.
//!
//! The buffer is split at each answer: the answer's `Bytes` shares its
//! allocation, and once that is dropped (the transport wrote it out) the
//! next answer reclaims the same bytes, so a worker answering refusal
//! after refusal allocates nothing. An answer kept alive only makes the
//! next one take fresh bytes.

use std::cell::RefCell;

use bumpalo::Bump;
use bytes::{Bytes, BytesMut};

/// Room made before each answer: more than most answers take, so that
/// several follow one another before the buffer is reclaimed.
const OUT_ROOM: usize = 4 * 1024;

/// An arena grown past this by one message is dropped after it instead of
/// kept for the next.
const ARENA_KEEP: usize = 64 * 1024;

thread_local! {
    static OUT: RefCell<BytesMut> = RefCell::new(BytesMut::new());
    static ARENA: RefCell<Bump> = RefCell::new(Bump::new());
}

/// The bytes `write` writes, from this thread's output buffer.
pub(crate) fn answer(write: impl FnOnce(&mut BytesMut)) -> Bytes {
    OUT.with(|out| match out.try_borrow_mut() {
        Ok(mut out) => {
            out.reserve(OUT_ROOM);
            write(&mut out);
            out.split().freeze()
        }
        // Only if `write` itself refused something: a buffer of its own.
        Err(_) => {
            let mut own = BytesMut::new();
            write(&mut own);
            own.freeze()
        }
    })
}

/// Runs `build` with this thread's arena, reset when it returns: the texts
/// of one refusal (messages, hints) live there until its answer is
/// written.
pub(crate) fn with_arena<R>(build: impl FnOnce(&Bump) -> R) -> R {
    ARENA.with(|arena| match arena.try_borrow_mut() {
        Ok(mut arena) => {
            let result = build(&arena);
            if arena.allocated_bytes() > ARENA_KEEP {
                *arena = Bump::new();
            } else {
                arena.reset();
            }
            result
        }
        // Nested: an arena of its own.
        Err(_) => build(&Bump::new()),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_answer_dropped_gives_its_bytes_to_the_next() {
        let first = answer(|out| out.extend_from_slice(b"first"));
        let address = first.as_ptr();
        drop(first);
        let mut kept = Vec::new();
        for _ in 0..OUT_ROOM {
            let next = answer(|out| out.extend_from_slice(b"next"));
            assert_eq!(&next[..], b"next");
            kept.push(next.as_ptr());
        }
        assert!(kept.contains(&address), "the buffer was never reclaimed");
    }

    #[test]
    fn an_answer_kept_stays_as_written() {
        let kept = answer(|out| out.extend_from_slice(b"kept"));
        for _ in 0..100 {
            drop(answer(|out| out.extend_from_slice(&[b'x'; 1000])));
        }
        assert_eq!(&kept[..], b"kept");
    }
}
