//! Putting a task behind the tasks already queued on its worker.
//!
//! A connection that has just answered tries its next read at once, and
//! under load that read finds nothing: the client has not had the answer
//! yet. On the epoll driver that costs a `recvfrom` that fails and a wait
//! for the socket's next readiness (monoio keeps a socket readable until a
//! read fails). A connection that first lets the other ready connections
//! run (their answers take a few µs each) often finds its next request
//! there, and reads it with one call.
//!
//! monoio puts a task that wakes itself at the front of the queue, so a
//! plain yield runs again at once; here a pump task, woken at the back of
//! the queue, wakes the waiting tasks, which then run after everything
//! that was queued before them.

use std::cell::{Cell, RefCell};
use std::future::{Future, poll_fn};
use std::task::{Poll, Waker};

/// One per worker: the tasks waiting their turn and the pump's waker.
#[derive(Default)]
pub(crate) struct Later {
    waiting: RefCell<Vec<Waker>>,
    /// The list being woken (kept to reuse its allocation).
    spare: RefCell<Vec<Waker>>,
    pump: Cell<Option<Waker>>,
}

impl Later {
    /// Completes once every task queued on this worker now has run.
    /// (Before the pump's first poll, it completes at the pump's first
    /// poll.)
    pub(crate) fn after_queued(&self) -> impl Future<Output = ()> + '_ {
        let mut queued = false;
        poll_fn(move |cx| {
            if queued {
                return Poll::Ready(());
            }
            queued = true;
            self.waiting.borrow_mut().push(cx.waker().clone());
            if let Some(pump) = self.pump.take() {
                pump.wake();
            }
            Poll::Pending
        })
    }

    /// The pump, run as a task of its own for the worker's life: each time
    /// it is woken it wakes the tasks waiting then.
    pub(crate) async fn pump(&self) {
        poll_fn(|cx| {
            std::mem::swap(
                &mut *self.waiting.borrow_mut(),
                &mut *self.spare.borrow_mut(),
            );
            for waker in self.spare.borrow_mut().drain(..) {
                waker.wake();
            }
            self.pump.set(Some(cx.waker().clone()));
            Poll::<()>::Pending
        })
        .await
    }
}

#[cfg(test)]
mod tests {
    use std::cell::RefCell;
    use std::rc::Rc;

    use super::Later;

    /// Tasks queued before a waiting task run before it resumes.
    #[test]
    fn a_waiting_task_resumes_after_the_tasks_queued_before_it() {
        let mut rt = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new()
            .build()
            .unwrap();
        let order = rt.block_on(async {
            let later = Rc::new(Later::default());
            let order = Rc::new(RefCell::new(Vec::new()));
            let pump = later.clone();
            monoio::spawn(async move { pump.pump().await });
            let (l, o) = (later.clone(), order.clone());
            let waiting = monoio::spawn(async move {
                o.borrow_mut().push("waiting: before");
                l.after_queued().await;
                o.borrow_mut().push("waiting: after");
            });
            for name in ["other 1", "other 2"] {
                let o = order.clone();
                monoio::spawn(async move { o.borrow_mut().push(name) });
            }
            waiting.await;
            Rc::try_unwrap(order).unwrap().into_inner()
        });
        assert_eq!(
            order,
            ["waiting: before", "other 1", "other 2", "waiting: after"]
        );
    }
}
