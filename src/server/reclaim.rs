//! Giving memory back to the system after a large message.
//!
//! A body near the limit grows a connection's read buffer and the worker's
//! parse buffers to several times its size. The connection's buffer is
//! released once the body is answered (`KEEP_BUF`); the parse buffers are
//! kept for the next large body of a burst and released here, with the
//! heap (`gate::Scratch::KEEP_BODY`, `gate::hold_thread_scratch`). mimalloc, the
//! binary's allocator, keeps freed pages and returns them only during
//! later allocator work on the same thread, and an idle worker does none:
//! a burst of large bodies would keep its peak for good. So a worker that
//! released a large buffer asks its reclaim task to collect the thread's
//! heap a short while later: once per burst, never per request.

use std::cell::Cell;
use std::future::poll_fn;
use std::task::{Poll, Waker};
use std::time::Duration;

/// How long after the first large release the heap is collected: a burst
/// of large messages is collected once, after it.
const SETTLE: Duration = Duration::from_millis(200);

/// One per worker.
#[derive(Default)]
pub(crate) struct Reclaim {
    due: Cell<bool>,
    task: Cell<Option<Waker>>,
}

impl Reclaim {
    /// A large buffer was released on this worker.
    pub(crate) fn released(&self) {
        if !self.due.replace(true)
            && let Some(task) = self.task.take()
        {
            task.wake();
        }
    }

    /// The reclaim task, for the worker's life.
    pub(crate) async fn run(&self) {
        loop {
            poll_fn(|cx| {
                if self.due.get() {
                    Poll::Ready(())
                } else {
                    self.task.set(Some(cx.waker().clone()));
                    Poll::Pending
                }
            })
            .await;
            monoio::time::sleep(SETTLE).await;
            self.due.set(false);
            crate::gate::release_thread_scratch();
            collect_thread_heap();
        }
    }
}

/// Returns this thread's free mimalloc pages to the system. Harmless
/// where mimalloc is not the global allocator (an embedder's choice): its
/// heap for this thread is then empty.
#[allow(unsafe_code)]
fn collect_thread_heap() {
    // SAFETY: `mi_collect` takes no pointers and may be called from any
    // thread at any time; it frees only pages that hold no live block.
    unsafe { libmimalloc_sys::mi_collect(true) };
}
