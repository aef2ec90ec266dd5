//! HTTP/1.1 connection handling: one task per connection on its worker's
//! runtime, one read buffer and one output buffer per connection.
//!
//! - The read buffer holds the head, then the body right after it (chunked
//!   bodies are decoded in place), then whatever the client pipelined. It
//!   grows to at most `max_head_bytes + body_limit + 16 KiB`, and shrinks
//!   back when the connection goes idle.
//! - Requests already in the buffer are answered in order without reading;
//!   answers are gathered in the output buffer and written with one write
//!   before the connection next reads (or closes), so a pipelined batch
//!   costs one write. Bodies over 64 KiB are written on their own.
//! - On epoll, a connection that has answered everything it read lets the
//!   other ready connections run before it reads again (`server::later`):
//!   under load its next request has then often arrived.
//! - The common request (head and `Content-Length` body in one read) is
//!   parsed once; a body that needs more reads has its head parsed again
//!   afterwards (the head borrows the buffer the body is read into).
//! - Timeouts: `idle_timeout` while waiting for the first byte of a request
//!   on a kept-alive connection (`read_timeout` on a new one: a connection
//!   that never sends a byte is held no longer than a head may take);
//!   then `read_timeout` for the whole head, and again for the whole body
//!   (each a deadline, not a per-read timeout, so a dribbling client cannot
//!   stretch it); `read_timeout` also bounds each write. A timeout, EOF or
//!   error while reading closes the connection without an answer.
//! - Closing after a refused body (an `HttpError`, or `on_head` refusing a
//!   body that has not all arrived): the write side is shut down and what
//!   the client still sends is read and dropped for up to
//!   `min(read_timeout, 2 s)`, so the answer is not lost to a TCP reset.

mod events;
pub(crate) mod parse;
mod relay;

pub use self::parse::{FrameLimits, frame_request};

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io;
use std::os::fd::{AsRawFd, RawFd};
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::pin::Pin;
use std::rc::Rc;
use std::sync::{Arc, Weak};
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use bytes::Bytes;
use monoio::buf::IoBufMut;
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio::time::Instant;
use monoio_rustls::{ServerTlsStream, TlsAcceptor};

use self::parse::{ChunkedDecoder, ConnHeader, Framing, HeadMeta, with_head};
use crate::server::later::Later;
use crate::server::reclaim::Reclaim;
use crate::server::{
    Forward, Head, HttpError, IoDriver, Reply, Response, ServerConfig, Service, ShutdownSignal,
};
use crate::upstream::{Pool, UpstreamConfig, encode_request};

/// First capacity of a connection's read buffer.
const INITIAL_BUF: usize = 4096;
/// Read buffers larger than this are shrunk when the connection goes idle.
const KEEP_BUF: usize = 64 * 1024;
/// The read buffer of a connection whose reads fill it (a client that
/// pipelines, or sends large heads): fewer reads per request.
const FULL_READ_BUF: usize = 16 * 1024;
/// How long a connection that sent a body over [`KEEP_BUF`] waits after
/// its answer before its next request is read.
const LARGE_BODY_PAUSE: Duration = Duration::from_millis(1);
/// Below this much free room, the buffer is compacted or grown before a read.
const MIN_READ: usize = 1024;
/// Room beyond head + body: the partial chunk line or trailer line being
/// decoded, and a read's worth of space.
const BODY_SLACK: usize = 16 * 1024;
/// Bodies up to this size are copied into the output buffer (one write).
const INLINE_BODY: usize = 64 * 1024;
/// The longest a closing connection keeps draining what the client sends.
const LINGER_MAX: Duration = Duration::from_secs(2);

/// The limits a connection enforces, copied out of [`ServerConfig`].
#[derive(Debug, Clone, Copy)]
pub(crate) struct Limits {
    pub body_limit: usize,
    pub max_headers: usize,
    pub max_head_bytes: usize,
    pub idle_timeout: Duration,
    pub read_timeout: Duration,
    /// This worker's share of `max_connections` (rounded up, at least 1).
    pub max_open: usize,
    /// A connection that has answered lets the other ready connections go
    /// before its next read (epoll only: see [`Later`]; on io_uring the
    /// read is a submitted operation that waits in the kernel).
    pub defer_idle_read: bool,
}

impl Limits {
    pub(crate) fn from_config(c: &ServerConfig) -> Limits {
        // Deadlines are `now + timeout`: keep them far from overflowing.
        const FOREVER: Duration = Duration::from_secs(365 * 24 * 3600);
        Limits {
            body_limit: c.body_limit,
            max_headers: c.max_headers,
            max_head_bytes: c.max_head_bytes,
            idle_timeout: c.idle_timeout.min(FOREVER),
            read_timeout: c.read_timeout.min(FOREVER),
            max_open: c.max_connections.div_ceil(c.workers.max(1)).max(1),
            defer_idle_read: c.io_driver == IoDriver::Epoll,
        }
    }
}

/// What the connections of one worker share (single-threaded: no locks).
pub(crate) struct Worker<S> {
    pub service: Arc<S>,
    pub limits: Limits,
    /// Set when the worker stops accepting: answers say `Connection: close`
    /// and connections close instead of waiting for another request.
    pub shutting_down: Cell<bool>,
    /// The descriptors of the connections open on this worker, each with
    /// its [`IdleMark`]: the shutdown ends those waits, the accept loop at
    /// `max_open` closes the one idle longest, and the end of the grace
    /// cuts every connection.
    conns: RefCell<HashMap<RawFd, Rc<IdleMark>>>,
    /// The mark the next connection to go idle gets.
    idle_order: Cell<u64>,
    /// The accept loop, waiting for a connection to close (at `max_open`).
    room: Cell<Option<Waker>>,
    /// The signal itself: an answer produced before this worker saw the
    /// wake-up (it was busy in the service) already says `close`.
    pub signal: ShutdownSignal,
    /// This worker's connections to the upstreams.
    pub upstream: Pools,
    /// Where a connection that has answered waits for the other ready
    /// connections before its next read (its pump runs on the worker).
    pub later: Later,
    /// Collects the heap after large buffers were released (its task runs
    /// on the worker).
    pub reclaim: Reclaim,
    /// TLS on the listener: every connection is accepted through it.
    pub tls: Option<TlsAcceptor>,
}

impl<S: Service> Worker<S> {
    pub(crate) fn new(
        service: Arc<S>,
        limits: Limits,
        signal: ShutdownSignal,
        upstream: Pools,
        tls: Option<TlsAcceptor>,
    ) -> Worker<S> {
        Worker {
            tls,
            signal,
            upstream,
            service,
            limits,
            shutting_down: Cell::new(false),
            conns: RefCell::new(HashMap::new()),
            idle_order: Cell::new(0),
            room: Cell::new(None),
            later: Later::default(),
            reclaim: Reclaim::default(),
        }
    }

    /// Stop: connections waiting for a request close now, the others after
    /// their current answer.
    ///
    /// A connection waiting for a request has its read side shut: its read
    /// then ends with what already arrived (that request is served), or
    /// with the end of input. (Rather than a cancellable read: registering
    /// one costs every request a keyed hash inside monoio; a flag costs two
    /// stores.)
    pub(crate) fn begin_shutdown(&self) {
        self.shutting_down.set(true);
        for (&fd, idle) in self.conns.borrow().iter() {
            if idle.is_idle() {
                // Open: see `cut_connections`.
                crate::sock::shutdown_read(fd);
            }
        }
    }
}

impl<S: Service> Worker<S> {
    /// Connections open on this worker.
    pub(crate) fn open(&self) -> usize {
        self.conns.borrow().len()
    }

    /// Ready once the worker holds fewer than `max_open` connections. Until
    /// then new connections wait in the listener's backlog: the memory the
    /// connections hold stays bounded, and none is refused.
    pub(crate) fn room(&self) -> impl Future<Output = ()> + '_ {
        std::future::poll_fn(|cx| {
            if self.open() < self.limits.max_open {
                Poll::Ready(())
            } else {
                self.room.set(Some(cx.waker().clone()));
                Poll::Pending
            }
        })
    }

    /// The mark of a connection that goes idle now (never 0).
    fn next_idle_order(&self) -> u64 {
        let order = self.idle_order.get() + 1;
        self.idle_order.set(order);
        order
    }

    /// At `max_open`: ends the wait of the connection idle longest (its
    /// read side is shut, so a request that has just arrived is still
    /// served, and it closes after), so that a new client is served while
    /// the slots are held by connections that send nothing. `false` when
    /// every connection is busy with a request.
    pub(crate) fn close_idlest(&self) -> bool {
        let conns = self.conns.borrow();
        let idlest = conns
            .iter()
            .filter(|(_, mark)| mark.is_idle())
            .min_by_key(|(_, mark)| mark.0.get());
        let Some((&fd, mark)) = idlest else {
            return false;
        };
        mark.0.set(0);
        // Open: see `cut_connections`.
        crate::sock::shutdown_read(fd);
        true
    }

    /// The grace is over: shuts down every connection still open, so that
    /// whatever it waits for fails now and its task ends (closing it).
    pub(crate) fn cut_connections(&self) {
        for &fd in self.conns.borrow().keys() {
            // Open: a descriptor leaves the set in the same synchronous
            // drop, on this thread, that closes its stream.
            crate::sock::shutdown_both(fd);
        }
    }
}

/// Whether a connection waits for a request, and since when: 0 while it
/// is busy, else its place in the order its worker's connections went idle
/// (the smallest has waited longest).
#[derive(Default)]
pub(crate) struct IdleMark(Cell<u64>);

impl IdleMark {
    fn is_idle(&self) -> bool {
        self.0.get() != 0
    }
}

/// Registers the connection (its descriptor and idle mark) with the worker
/// for as long as its task lives (also when the task is dropped at the end
/// of the shutdown grace).
struct OpenGuard<S: Service> {
    worker: Rc<Worker<S>>,
    fd: RawFd,
    idle: Rc<IdleMark>,
}

impl<S: Service> OpenGuard<S> {
    fn new(worker: Rc<Worker<S>>, fd: RawFd) -> OpenGuard<S> {
        // Idle from the start: a connection accepted in a burst may wait
        // for its task's first poll, and it has sent nothing yet either.
        let idle = Rc::new(IdleMark::default());
        idle.0.set(worker.next_idle_order());
        worker.conns.borrow_mut().insert(fd, idle.clone());
        worker.service.on_connection(true);
        OpenGuard { worker, fd, idle }
    }
}

impl<S: Service> Drop for OpenGuard<S> {
    fn drop(&mut self) {
        self.worker.conns.borrow_mut().remove(&self.fd);
        self.worker.service.on_connection(false);
        if let Some(accept) = self.worker.room.take() {
            accept.wake();
        }
    }
}

/// Serves one accepted connection until it closes. The connection counts
/// as open from this call (not from the task's first poll), so that the
/// accept loop sees it at once.
pub(crate) fn serve_connection<S: Service>(
    stream: TcpStream,
    worker: Rc<Worker<S>>,
) -> impl Future<Output = ()> {
    let guard = OpenGuard::new(worker, stream.as_raw_fd());
    async move {
        let _ = stream.set_nodelay(true);
        serve_io(stream, &guard).await;
    }
}

/// [`serve_connection`] on a listener that serves TLS: the handshake
/// first, bounded by `read_timeout` like a request's head (and ended by
/// the shutdown like a wait for one), then the same requests over it. A
/// client that does not speak TLS fails the handshake and is closed.
pub(crate) fn serve_tls_connection<S: Service>(
    stream: TcpStream,
    worker: Rc<Worker<S>>,
) -> impl Future<Output = ()> {
    let guard = OpenGuard::new(worker, stream.as_raw_fd());
    async move {
        let _ = stream.set_nodelay(true);
        let (Some(acceptor), Ok(watch)) = (&guard.worker.tls, crate::sock::watcher(&stream)) else {
            return;
        };
        let limit = guard.worker.limits.read_timeout;
        let tls = match within(limit, acceptor.accept(stream)).await {
            Ok(Ok(tls)) => tls,
            Ok(Err(e)) => {
                tracing::debug!(error = %e, "TLS handshake with a client failed; closed");
                return;
            }
            Err(TimedOut) => return,
        };
        serve_io(TlsClient { tls, watch }, &guard).await;
    }
}

async fn serve_io<S: Service, IO: ClientIo>(stream: IO, guard: &OpenGuard<S>) {
    let mut conn = Conn {
        stream,
        buf: Vec::with_capacity(INITIAL_BUF),
        start: 0,
        out: Vec::with_capacity(512),
        worker: &guard.worker,
        idle: &guard.idle,
        fresh: true,
        filled: false,
        pool: None,
    };
    conn.run().await;
    if conn.buf.capacity() > KEEP_BUF {
        // Closed holding a large body (refused, or cut short).
        drop(conn.buf);
        guard.worker.reclaim.released();
    }
}

/// A client connection's bytes: the socket itself, or TLS over it.
pub(crate) trait ClientIo: AsyncReadRent + AsyncWriteRent {
    /// The socket, watched for the client going away during a forward.
    fn socket(&self) -> &TcpStream;
    /// Appends the request bytes that can be had right now, without
    /// waiting: the count, 0 when the client closed.
    fn recv_now(&mut self, buf: &mut Vec<u8>) -> io::Result<usize>;
}

impl ClientIo for TcpStream {
    fn socket(&self) -> &TcpStream {
        self
    }

    fn recv_now(&mut self, buf: &mut Vec<u8>) -> io::Result<usize> {
        crate::sock::recv_now(self, buf)
    }
}

/// A TLS connection, and a second descriptor of its socket to watch (the
/// TLS stream owns the first and lends it to no one).
pub(crate) struct TlsClient {
    tls: ServerTlsStream<TcpStream>,
    watch: TcpStream,
}

impl ClientIo for TlsClient {
    fn socket(&self) -> &TcpStream {
        &self.watch
    }

    /// Records cannot be decrypted without waiting for the rest of them:
    /// a TLS connection the shutdown finds idle is closed.
    fn recv_now(&mut self, _: &mut Vec<u8>) -> io::Result<usize> {
        Ok(0)
    }
}

impl AsyncReadRent for TlsClient {
    fn read<T: IoBufMut>(&mut self, buf: T) -> impl Future<Output = monoio::BufResult<usize, T>> {
        self.tls.read(buf)
    }

    fn readv<T: monoio::buf::IoVecBufMut>(
        &mut self,
        buf: T,
    ) -> impl Future<Output = monoio::BufResult<usize, T>> {
        self.tls.readv(buf)
    }
}

impl AsyncWriteRent for TlsClient {
    fn write<T: monoio::buf::IoBuf>(
        &mut self,
        buf: T,
    ) -> impl Future<Output = monoio::BufResult<usize, T>> {
        self.tls.write(buf)
    }

    fn writev<T: monoio::buf::IoVecBuf>(
        &mut self,
        buf: T,
    ) -> impl Future<Output = monoio::BufResult<usize, T>> {
        self.tls.writev(buf)
    }

    fn flush(&mut self) -> impl Future<Output = io::Result<()>> {
        self.tls.flush()
    }

    fn shutdown(&mut self) -> impl Future<Output = io::Result<()>> {
        self.tls.shutdown()
    }
}

pin_project_lite::pin_project! {
    /// `fut` bounded by `limit`, with the timer armed only if the first
    /// poll does not finish it. On epoll a write to a socket with room, or a
    /// read of a request that is already there, finishes in that poll, and
    /// then costs neither a clock read nor a timer (monoio's timer entry is
    /// 512 bytes to set up). The deadline runs from that first poll.
    struct Within<F> {
        #[pin]
        fut: F,
        #[pin]
        timer: Option<monoio::time::Sleep>,
        limit: Duration,
    }
}

/// [`Within`] ran out of time.
struct TimedOut;

fn within<F: Future>(limit: Duration, fut: F) -> Within<F> {
    Within {
        fut,
        timer: None,
        limit,
    }
}

impl<F: Future> Future for Within<F> {
    type Output = Result<F::Output, TimedOut>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let mut this = self.project();
        if let Poll::Ready(out) = this.fut.poll(cx) {
            return Poll::Ready(Ok(out));
        }
        if this.timer.is_none() {
            this.timer.set(Some(monoio::time::sleep(*this.limit)));
        }
        match this.timer.as_pin_mut().map(|timer| timer.poll(cx)) {
            Some(Poll::Pending) => Poll::Pending,
            _ => Poll::Ready(Err(TimedOut)),
        }
    }
}

/// The next thing to do with the bytes buffered from `start`.
enum Step<P> {
    /// The head is not complete yet.
    Partial,
    /// The connection layer refuses the request.
    Error(HttpError),
    /// Answered without reading more.
    Respond(Answered),
    /// Accepted by `on_head`; the body still has to be read.
    Body(HeadMeta),
    /// To forward: `request` is what goes upstream (encoded while the head
    /// was at hand). `consumed` as for `Respond`.
    Forward {
        /// Boxed: the step is held while a connection awaits its answer,
        /// and this is its largest part.
        forward: Box<(Forward<P>, Option<Rc<Pool>>)>,
        request: Bytes,
        consumed: usize,
        meta: HeadMeta,
    },
}

/// A request answered without reading more. `consumed`: bytes of this
/// request (head and body) from `start`; `keep_alive: false` closes,
/// `linger` drains a body that was not read.
struct Answered {
    resp: Response,
    consumed: usize,
    keep_alive: bool,
    linger: bool,
    meta: HeadMeta,
}

impl Answered {
    /// Its bytes taken from the buffer at `start`: what `Conn::answer`
    /// sends.
    fn taken(self, start: &mut usize) -> (Response, bool, bool, HeadMeta) {
        *start += self.consumed;
        (self.resp, self.keep_alive, self.linger, self.meta)
    }
}

/// A worker's upstream pools: the server's own, and one per upstream the
/// service names ([`Service::upstream`]).
pub struct Pools {
    default: Option<Rc<Pool>>,
    /// Each pool with the service's `Arc` it was made for: the `Weak`
    /// keeps that address from naming another upstream while the entry
    /// lives; an entry whose upstream left service is dropped when the
    /// next one is added.
    named: RefCell<Vec<(Weak<UpstreamConfig>, Rc<Pool>)>>,
}

impl Pools {
    pub fn new(default: Option<Arc<UpstreamConfig>>) -> Pools {
        Pools {
            default: default.map(|config| Rc::new(Pool::new(config))),
            named: RefCell::default(),
        }
    }

    /// The pool of `named`, or the server's own: a short scan, a count of
    /// this thread's own.
    pub fn get(&self, named: Option<&Arc<UpstreamConfig>>) -> Option<Rc<Pool>> {
        let Some(config) = named else {
            return self.default.clone();
        };
        let found = self.named.borrow().iter().find_map(|(weak, pool)| {
            std::ptr::eq(weak.as_ptr(), Arc::as_ptr(config)).then(|| pool.clone())
        });
        Some(found.unwrap_or_else(|| self.add(config)))
    }

    #[cold]
    fn add(&self, config: &Arc<UpstreamConfig>) -> Rc<Pool> {
        let mut named = self.named.borrow_mut();
        named.retain(|(weak, _)| weak.strong_count() > 0);
        // The pool's own copy: it does not keep the service's alive.
        let pool = Rc::new(Pool::new(Arc::new((**config).clone())));
        named.push((Arc::downgrade(config), pool.clone()));
        pool
    }
}

/// The step for the service's reply to a whole request.
fn reply_step<S: Service>(
    head: &Head<'_>,
    body: &[u8],
    worker: &Worker<S>,
    consumed: usize,
    meta: HeadMeta,
) -> Step<S::Pending> {
    let service = &*worker.service;
    match service.on_request(head, body) {
        Reply::Full(mut resp) => {
            service.finish_answer(head, &mut resp);
            Step::Respond(Answered {
                resp,
                consumed,
                keep_alive: meta.keep_alive,
                linger: false,
                meta,
            })
        }
        Reply::Forward(forward) => {
            let pool = worker
                .upstream
                .get(worker.service.upstream(&forward.pending));
            let request = pool.as_ref().map_or_else(Bytes::new, |pool| {
                pool.encoded(|out| {
                    let mut client = head.client_request();
                    if let Some(len) = forward.session_id {
                        client.session_id =
                            head.header("Mcp-Session-Id").and_then(|v| v.get(..len));
                    }
                    encode_request(
                        out,
                        pool.config(),
                        client,
                        forward.body.as_deref().unwrap_or(body),
                        forward.withhold,
                        &forward.set_headers,
                    )
                })
            });
            Step::Forward {
                forward: Box::new((forward, pool)),
                request,
                consumed,
                meta,
            }
        }
    }
}

/// How a read ended when it did not bring bytes.
enum ReadEnd {
    Closed,
}

impl From<io::Error> for ReadEnd {
    fn from(_: io::Error) -> Self {
        ReadEnd::Closed
    }
}

struct Conn<'w, S: Service, IO> {
    stream: IO,
    /// Request bytes; `start..` is not yet consumed.
    buf: Vec<u8>,
    start: usize,
    /// Answers not yet written.
    out: Vec<u8>,
    worker: &'w Worker<S>,
    /// Marked while waiting for a request (the shutdown, or the accept
    /// loop at `max_open`, ends that wait).
    idle: &'w IdleMark,
    /// No byte has arrived yet: the first wait is bounded by
    /// `read_timeout`, not `idle_timeout`.
    fresh: bool,
    /// The last read filled all the room it had: more was waiting.
    filled: bool,
    /// The pool of the request being forwarded.
    pool: Option<Rc<Pool>>,
}

/// Runs a service call; a panic becomes a 500 that closes the connection.
fn guarded<P>(f: impl FnOnce() -> Step<P>) -> Step<P> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(step) => step,
        Err(_) => panic_step(),
    }
}

fn panic_step<P>() -> Step<P> {
    tracing::error!("the service panicked; answering 500 and closing the connection");
    let mut resp = Response::empty(500);
    resp.close = true;
    Step::Respond(Answered {
        resp,
        consumed: 0,
        keep_alive: false,
        linger: true,
        meta: HeadMeta::NONE,
    })
}

impl<S: Service, IO: ClientIo> Conn<'_, S, IO> {
    async fn run(&mut self) {
        // Err: the connection is done (closed by the peer, timed out, or
        // closed by us after an answer).
        while let Ok(()) = self.one_request().await {}
    }

    /// Reads, answers and consumes one request.
    async fn one_request(&mut self) -> Result<(), ReadEnd> {
        let limits = self.worker.limits;
        let mut head_deadline: Option<Instant> = None;
        let step = loop {
            if self.buf.len() > self.start {
                let step = self.decide();
                if !matches!(step, Step::Partial) {
                    break step;
                }
                let deadline =
                    *head_deadline.get_or_insert_with(|| Instant::now() + limits.read_timeout);
                self.room_for_head();
                self.flush().await?;
                self.read_some(deadline).await?;
            } else {
                self.flush().await?;
                self.buf.clear();
                self.start = 0;
                if self.filled && self.buf.capacity() < FULL_READ_BUF {
                    // Empty: growing copies nothing.
                    self.buf.reserve_exact(FULL_READ_BUF);
                } else if self.buf.capacity() > KEEP_BUF {
                    self.buf.shrink_to(INITIAL_BUF);
                    self.worker.reclaim.released();
                    // A body this large held the worker for a while, and
                    // the connections that became ready meanwhile are known
                    // only once the driver is polled: parking on a timer
                    // polls it, so they are served before this connection's
                    // next body (a worker finishes the body it holds, no
                    // more, however fast a client sends the next).
                    monoio::time::sleep(LARGE_BODY_PAUSE).await;
                }
                // Under load the answer just written has not reached the
                // client yet: let the other ready connections go first, so
                // the read more often finds the next request.
                if limits.defer_idle_read && !self.worker.shutting_down.get() {
                    self.worker.later.after_queued().await;
                }
                // Checked after the wait: a shutdown that began during it
                // found this connection not yet idle.
                if self.worker.shutting_down.get() {
                    // A connection the shutdown found before its first
                    // request: serve what already arrived, close otherwise.
                    self.read_ready_now()?;
                } else {
                    self.read_idle().await?;
                }
                // The head's deadline is set by its first partial parse,
                // just after this read: a whole request costs no clock read.
                head_deadline = None;
            }
        };
        // The rarer or longer paths (a refusal, a body still to read, a
        // forward) are boxed: each connection's task is as large as its
        // largest state, and it is held for as long as the connection is
        // open (see the connection-task size test).
        match step {
            Step::Partial => unreachable!("a partial head reads more"),
            Step::Respond(answered) => {
                // Not an async fn of its own: the connection task would
                // hold its arguments besides `answer`'s.
                let (resp, keep_alive, linger, meta) = answered.taken(&mut self.start);
                self.answer(resp, keep_alive, linger, meta).await
            }
            Step::Body(meta) => Box::pin(self.read_body_and_answer(meta)).await,
            step => Box::pin(self.take_step(step)).await,
        }
    }

    /// Answers a whole request's step, its bytes taken from the buffer.
    async fn take_step(&mut self, step: Step<S::Pending>) -> Result<(), ReadEnd> {
        match step {
            Step::Respond(answered) => {
                // Not an async fn of its own: the connection task would
                // hold its arguments besides `answer`'s.
                let (resp, keep_alive, linger, meta) = answered.taken(&mut self.start);
                self.answer(resp, keep_alive, linger, meta).await
            }
            Step::Forward {
                forward,
                request,
                consumed,
                meta,
            } => {
                self.start += consumed;
                let (forward, pool) = *forward;
                self.pool = pool;
                self.forward(forward, request, meta).await
            }
            Step::Error(e) => self.refuse(e).await,
            Step::Partial | Step::Body(_) => unreachable!("not a whole request's step"),
        }
    }

    /// Parses the head at `start` and, when the whole request is already
    /// buffered, answers it.
    fn decide(&self) -> Step<S::Pending> {
        let limits = self.worker.limits;
        let service = &*self.worker.service;
        let bytes = &self.buf[self.start..];
        guarded(|| {
            let decided = with_head(
                bytes,
                limits.max_headers,
                limits.max_head_bytes,
                |head, meta| {
                    let avail = (bytes.len() - meta.head_len) as u64;
                    if let Some(mut resp) = service.on_head(head) {
                        service.finish_answer(head, &mut resp);
                        // Refused before the body: skip a body that is all here,
                        // otherwise close (draining) rather than read it.
                        let here = match meta.framing {
                            Framing::None => Some(0),
                            Framing::Length(n) if n <= avail => Some(n as usize),
                            _ => None,
                        };
                        return match here {
                            Some(n) => Step::Respond(Answered {
                                resp,
                                consumed: meta.head_len + n,
                                keep_alive: meta.keep_alive,
                                linger: false,
                                meta,
                            }),
                            None => Step::Respond(Answered {
                                resp,
                                consumed: bytes.len(),
                                keep_alive: false,
                                linger: true,
                                meta,
                            }),
                        };
                    }
                    match meta.framing {
                        Framing::None => reply_step(head, &[], self.worker, meta.head_len, meta),
                        Framing::Length(n) if n > limits.body_limit as u64 => {
                            Step::Error(HttpError::BodyTooLarge {
                                limit: limits.body_limit,
                            })
                        }
                        Framing::Length(n) if n <= avail => {
                            let end = meta.head_len + n as usize;
                            let body = &bytes[meta.head_len..end];
                            reply_step(head, body, self.worker, end, meta)
                        }
                        Framing::Length(_) | Framing::Chunked => Step::Body(meta),
                    }
                },
            );
            match decided {
                Ok(Some(step)) => step,
                Ok(None) => Step::Partial,
                Err(e) => Step::Error(e),
            }
        })
    }

    /// Reads the body of an accepted head (after `100 Continue` if asked),
    /// then answers.
    async fn read_body_and_answer(&mut self, meta: HeadMeta) -> Result<(), ReadEnd> {
        let limits = self.worker.limits;
        self.compact();
        if meta.expect_continue && self.buf.len() == meta.head_len {
            self.out.extend_from_slice(b"HTTP/1.1 100 Continue\r\n\r\n");
        }
        self.flush().await?;
        let deadline = Instant::now() + limits.read_timeout;
        let (body_end, next) = match meta.framing {
            Framing::Length(n) => {
                let need = meta.head_len + n as usize;
                if self.buf.capacity() < need {
                    self.buf.reserve_exact(need - self.buf.len());
                }
                while self.buf.len() < need {
                    self.read_some(deadline).await?;
                }
                (need, need)
            }
            Framing::Chunked => {
                let mut dec = ChunkedDecoder::new(meta.head_len, limits.body_limit);
                let cap_max = limits.max_head_bytes + limits.body_limit + BODY_SLACK;
                loop {
                    match dec.decode(&mut self.buf) {
                        Ok(true) => break,
                        Ok(false) => {}
                        Err(e) => return self.refuse(e).await,
                    }
                    // Move the undecoded tail down to the end of the body.
                    dec.compact(&mut self.buf);
                    let spare = self.buf.capacity() - self.buf.len();
                    if spare < MIN_READ {
                        let want = (self.buf.capacity() * 2)
                            .max(self.buf.len() + MIN_READ)
                            .min(cap_max);
                        self.buf.reserve_exact(want.saturating_sub(self.buf.len()));
                    }
                    self.read_some(deadline).await?;
                }
                debug_assert!(dec.is_done());
                (dec.write, dec.read)
            }
            Framing::None => (meta.head_len, meta.head_len),
        };
        // The head is parsed again: it borrows the buffer the body was read
        // into.
        let bytes = &self.buf[..body_end];
        let step = guarded(|| {
            match with_head(
                bytes,
                limits.max_headers,
                limits.max_head_bytes,
                |head, again| {
                    let body = &bytes[again.head_len..];
                    reply_step(head, body, self.worker, next, meta)
                },
            ) {
                Ok(Some(step)) => step,
                _ => Step::Error(HttpError::BadRequest),
            }
        });
        // After `compact`, `start` is 0: `next` counts from it.
        self.take_step(step).await
    }

    /// Answers an `HttpError` and closes.
    async fn refuse(&mut self, e: HttpError) -> Result<(), ReadEnd> {
        let service = &*self.worker.service;
        let resp = catch_unwind(AssertUnwindSafe(|| service.on_http_error(e)))
            .unwrap_or_else(|_| Response::empty(500));
        self.answer(resp, false, true, HeadMeta::NONE).await
    }

    /// Queues an answer; closes the connection after it when it must.
    async fn answer(
        &mut self,
        resp: Response,
        keep_alive: bool,
        linger: bool,
        meta: HeadMeta,
    ) -> Result<(), ReadEnd> {
        let close = !keep_alive
            || resp.close
            || self.worker.shutting_down.get()
            || self.worker.signal.is_triggered();
        let conn = ConnHeader::of(close, meta.http10);
        let with_body = parse::encode_head(&mut self.out, &resp, conn, meta.head_method);
        if with_body {
            if resp.body.len() <= INLINE_BODY {
                self.out.extend_from_slice(&resp.body);
            } else {
                self.flush().await?;
                match within(
                    self.worker.limits.read_timeout,
                    self.stream.write_all(resp.body),
                )
                .await
                {
                    Ok((Ok(_), _)) => {}
                    _ => return Err(ReadEnd::Closed),
                }
            }
        }
        if self.out.len() > INLINE_BODY {
            self.flush().await?;
        }
        if close {
            self.flush().await?;
            if linger {
                self.linger().await;
            }
            return Err(ReadEnd::Closed);
        }
        Ok(())
    }

    /// Writes the queued answers.
    async fn flush(&mut self) -> Result<(), ReadEnd> {
        if self.out.is_empty() {
            return Ok(());
        }
        let out = std::mem::take(&mut self.out);
        match within(self.worker.limits.read_timeout, self.stream.write_all(out)).await {
            Ok((res, mut out)) => {
                out.clear();
                self.out = out;
                res.map(|_| ()).map_err(ReadEnd::from)
            }
            Err(_) => Err(ReadEnd::Closed),
        }
    }

    /// Shuts the write side and drops what the client still sends, for a
    /// short while, so that the answer is not destroyed by a reset.
    async fn linger(&mut self) {
        let _ = self.stream.shutdown().await;
        let deadline = Instant::now() + self.worker.limits.read_timeout.min(LINGER_MAX);
        let mut scratch = std::mem::take(&mut self.buf);
        scratch.clear();
        scratch.reserve(INITIAL_BUF);
        loop {
            match monoio::time::timeout_at(deadline, self.stream.read(scratch)).await {
                Ok((Ok(n), b)) if n > 0 => {
                    self.worker.service.on_bytes_in(n);
                    scratch = b;
                    scratch.clear();
                }
                _ => break,
            }
        }
    }

    /// Moves the unconsumed bytes to the front of the buffer.
    fn compact(&mut self) {
        if self.start > 0 {
            self.buf.copy_within(self.start.., 0);
            self.buf.truncate(self.buf.len() - self.start);
            self.start = 0;
        }
    }

    /// Makes room to read more of a head: compacts, or grows the buffer up
    /// to a little over `max_head_bytes` (the parse refuses beyond that).
    fn room_for_head(&mut self) {
        // A client that keeps the buffer full (pipelining) is read in
        // larger pieces; its buffer rarely drains, so it grows here.
        let grow = self.filled && self.buf.capacity() < FULL_READ_BUF;
        if !grow && self.buf.capacity() - self.buf.len() >= MIN_READ {
            return;
        }
        self.compact();
        if grow {
            // Only the partial head is left: growing copies little.
            self.buf.reserve_exact(FULL_READ_BUF - self.buf.len());
            return;
        }
        let max = self.worker.limits.max_head_bytes + MIN_READ;
        let cap = self.buf.capacity();
        if cap - self.buf.len() < MIN_READ && cap < max {
            let want = (cap * 2).min(max);
            self.buf.reserve_exact(want - self.buf.len());
        }
    }

    /// Reads what the client sends next into the free room of the buffer.
    async fn read_some(&mut self, deadline: Instant) -> Result<usize, ReadEnd> {
        let buf = std::mem::take(&mut self.buf);
        let len = buf.len();
        if buf.capacity() == len {
            // No room (cannot happen with the limits honoured): give up.
            return Err(ReadEnd::Closed);
        }
        let room = buf.capacity() - len;
        match monoio::time::timeout_at(deadline, self.stream.read(buf.slice_mut(len..))).await {
            Ok((res, slice)) => {
                self.buf = slice.into_inner();
                self.got(res, room)
            }
            // Timed out: the buffer went with the cancelled read; the
            // connection closes.
            Err(_) => Err(ReadEnd::Closed),
        }
    }

    /// Waits for the first bytes of the next request (the buffer is empty);
    /// ended by the worker's shutdown, which shuts the read side: a request
    /// that is already here is still read (and served), else the read ends.
    async fn read_idle(&mut self) -> Result<usize, ReadEnd> {
        let buf = std::mem::take(&mut self.buf);
        let limits = self.worker.limits;
        let wait = if self.fresh {
            limits.read_timeout
        } else {
            limits.idle_timeout
        };
        self.idle.0.set(self.worker.next_idle_order());
        let room = buf.capacity() - buf.len();
        let read = within(wait, self.stream.read(buf)).await;
        self.idle.0.set(0);
        self.fresh = false;
        match read {
            Ok((res, buf)) => {
                self.buf = buf;
                self.got(res, room)
            }
            Err(_) => Err(ReadEnd::Closed),
        }
    }

    /// Takes what the socket holds right now, without waiting.
    fn read_ready_now(&mut self) -> Result<usize, ReadEnd> {
        if self.buf.capacity() - self.buf.len() < MIN_READ {
            self.buf.reserve(MIN_READ);
        }
        match self.stream.recv_now(&mut self.buf) {
            Ok(n) if n > 0 => {
                self.worker.service.on_bytes_in(n);
                Ok(n)
            }
            _ => Err(ReadEnd::Closed),
        }
    }

    fn got(&mut self, res: io::Result<usize>, room: usize) -> Result<usize, ReadEnd> {
        match res {
            Ok(0) => Err(ReadEnd::Closed),
            Ok(n) => {
                self.filled = n == room;
                self.worker.service.on_bytes_in(n);
                Ok(n)
            }
            Err(e) => Err(e.into()),
        }
    }
}
