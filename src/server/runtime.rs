//! Thread-per-core workers: one monoio runtime per thread, each with its own
//! `SO_REUSEPORT` listener on the same address (the kernel spreads new
//! connections over them), its own buffers, and nothing shared on the
//! request path but the `Arc` of the service.
//!
//! Shutdown ([`ShutdownSignal::trigger`], or SIGTERM/SIGINT under [`serve`]):
//! every worker stops accepting at once and closes its listener; connections
//! waiting for a request are closed; a request being read or handled is
//! finished and answered with `Connection: close`. A worker exits when its
//! last connection is closed or `shutdown_grace` has passed, whichever comes
//! first; `serve_until` returns when all have exited. The start and the
//! end of a shutdown are logged (INFO), the end with the connections it
//! closed and how long it took.

use std::io::{self, Write};
use std::net::SocketAddr;
use std::os::unix::net::UnixStream as StdUnixStream;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock, mpsc};
use std::thread;
use std::time::Duration;

use monoio::io::AsyncReadRent;
use monoio::net::{TcpListener, UnixStream};
use monoio::time::Instant;
use socket2::{Domain, Protocol, Socket, Type};

use super::http::{Limits, Pools, Worker, serve_connection, serve_tls_connection};
use super::{IoDriver, ServerConfig, Service};
use crate::upstream::UpstreamConfig;

/// Starts a graceful shutdown of the servers it was given to. Cloneable and
/// usable from any thread; triggering twice is harmless, and triggering
/// before the server starts makes it stop as soon as it is up.
#[derive(Clone, Default)]
pub struct ShutdownSignal {
    inner: Arc<SignalInner>,
}

#[derive(Default)]
struct SignalInner {
    triggered: AtomicBool,
    /// When the shutdown was first asked for: its end is logged with the
    /// time it took.
    started: OnceLock<std::time::Instant>,
    next_id: AtomicU64,
    /// One socket per running worker; a byte written wakes it.
    wakers: Mutex<Vec<(u64, StdUnixStream)>>,
}

impl ShutdownSignal {
    /// A signal not yet triggered.
    pub fn new() -> ShutdownSignal {
        ShutdownSignal::default()
    }

    /// Starts the shutdown.
    pub fn trigger(&self) {
        self.start(None);
    }

    /// Starts the shutdown, logging it (with the signal that asked for it)
    /// the first time only.
    fn start(&self, signal: Option<i32>) {
        self.inner.started.get_or_init(std::time::Instant::now);
        if !self.inner.triggered.swap(true, Ordering::SeqCst) {
            match signal {
                Some(signal) => tracing::info!(signal, "shutting down gracefully"),
                None => tracing::info!("shutting down gracefully"),
            }
        }
        let wakers = self.inner.wakers.lock().unwrap_or_else(|e| e.into_inner());
        for (_, w) in wakers.iter() {
            let _ = (&*w).write(&[1]);
        }
    }

    /// Whether the shutdown has started.
    pub fn is_triggered(&self) -> bool {
        self.inner.triggered.load(Ordering::SeqCst)
    }

    fn register(&self, waker: StdUnixStream) -> u64 {
        let id = self.inner.next_id.fetch_add(1, Ordering::Relaxed);
        let mut wakers = self.inner.wakers.lock().unwrap_or_else(|e| e.into_inner());
        if self.is_triggered() {
            let _ = (&waker).write(&[1]);
        }
        wakers.push((id, waker));
        id
    }

    fn unregister(&self, id: u64) {
        let mut wakers = self.inner.wakers.lock().unwrap_or_else(|e| e.into_inner());
        wakers.retain(|(i, _)| *i != id);
    }
}

impl std::fmt::Debug for ShutdownSignal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ShutdownSignal")
            .field("triggered", &self.is_triggered())
            .finish()
    }
}

/// Serves until SIGTERM or SIGINT, then shuts down gracefully and returns
/// `Ok`. A second signal during the shutdown exits the process at once
/// (status 130).
pub fn serve<S: Service>(config: ServerConfig, service: Arc<S>) -> io::Result<()> {
    use signal_hook::consts::{SIGINT, SIGTERM};
    let shutdown = ShutdownSignal::new();
    let mut signals = signal_hook::iterator::Signals::new([SIGTERM, SIGINT])?;
    let handle = signals.handle();
    let trigger = shutdown.clone();
    let watcher = thread::Builder::new()
        .name("mcpgate-signals".into())
        .spawn(move || {
            let mut forever = signals.forever();
            if let Some(sig) = forever.next() {
                trigger.start(Some(sig));
            }
            if let Some(sig) = forever.next() {
                tracing::warn!(signal = sig, "second signal: exiting now");
                std::process::exit(130);
            }
        })?;
    let result = serve_until(config, service, shutdown);
    handle.close();
    let _ = watcher.join();
    result
}

/// Serves until `shutdown` is triggered, then shuts down gracefully and
/// returns `Ok`. Errors: binding the address, starting a worker (io_uring
/// refused by the kernel is reported as such; there is no silent switch to
/// epoll), or a worker failing.
///
/// Once every worker listens, `config.on_listening` is called with the bound
/// address (port 0 resolved) and the address is logged.
pub fn serve_until<S: Service>(
    config: ServerConfig,
    service: Arc<S>,
    shutdown: ShutdownSignal,
) -> io::Result<()> {
    let workers = config.workers.max(1);
    refuse_if_served(config.listen)?;
    let first = bind_listener(config.listen)?;
    let addr = first.local_addr()?;
    let mut listeners = vec![first];
    for _ in 1..workers {
        listeners.push(bind_listener(addr)?);
    }
    let limits = Limits::from_config(&config);
    let tls = config.tls.as_ref().map(|certs| certs.server_config());

    let (ready_tx, ready_rx) = mpsc::channel::<io::Result<()>>();
    let mut handles = Vec::with_capacity(workers);
    let mut aborts = Vec::with_capacity(workers);
    let mut ids = Vec::with_capacity(workers);
    let mut failure: Option<io::Error> = None;
    for (i, listener) in listeners.into_iter().enumerate() {
        let started = (|| {
            let (wake_rx, wake_tx) = StdUnixStream::pair()?;
            wake_rx.set_nonblocking(true)?;
            wake_tx.set_nonblocking(true)?;
            let abort = wake_tx.try_clone()?;
            let service = service.clone();
            let ready = ready_tx.clone();
            let driver = config.io_driver;
            let grace = config.shutdown_grace;
            let signal = shutdown.clone();
            let upstream = config.upstream.clone();
            let tls = tls.clone();
            let handle = thread::Builder::new()
                .name(format!("mcpgate-worker-{i}"))
                .spawn(move || {
                    run_worker(WorkerStart {
                        driver,
                        listener,
                        wake: wake_rx,
                        service,
                        limits,
                        grace,
                        ready,
                        signal,
                        upstream,
                        tls,
                    })
                })?;
            Ok::<_, io::Error>((handle, abort, wake_tx))
        })();
        match started {
            Ok((handle, abort, wake_tx)) => {
                handles.push(handle);
                aborts.push(abort);
                ids.push(shutdown.register(wake_tx));
            }
            Err(e) => {
                failure = Some(e);
                break;
            }
        }
    }
    drop(ready_tx);
    for _ in 0..handles.len() {
        match ready_rx.recv() {
            Ok(Ok(())) => {}
            Ok(Err(e)) => {
                failure.get_or_insert(e);
            }
            Err(_) => {
                failure
                    .get_or_insert_with(|| io::Error::other("a worker thread died while starting"));
                break;
            }
        }
    }
    match &failure {
        None => {
            tracing::info!(%addr, workers, driver = %config.io_driver, "listening");
            if let Some(cb) = &config.on_listening {
                cb(addr);
            }
        }
        Some(_) => {
            for a in &aborts {
                let _ = (&*a).write(&[1]);
            }
        }
    }
    let mut result = Ok(());
    let mut closed = Closed::default();
    for h in handles {
        match h.join() {
            Ok(Ok(worker)) => {
                closed.connections += worker.connections;
                closed.cut += worker.cut;
            }
            Ok(Err(e)) => {
                if result.is_ok() {
                    result = Err(e);
                }
            }
            Err(_) => result = Err(io::Error::other("a worker thread panicked")),
        }
    }
    for id in ids {
        shutdown.unregister(id);
    }
    match failure {
        Some(e) => Err(e),
        None => {
            if let (Ok(()), Some(started)) = (&result, shutdown.inner.started.get()) {
                tracing::info!(
                    connections = closed.connections,
                    cut = closed.cut,
                    ms = started.elapsed().as_millis() as u64,
                    "shut down: every connection closed"
                );
            }
            result
        }
    }
}

/// What a worker's shutdown closed.
#[derive(Default)]
struct Closed {
    /// Connections open when the shutdown began, those taken from the
    /// backlog included: each finished its request or was closed.
    connections: usize,
    /// Of these, the ones still open when `shutdown_grace` was over.
    cut: usize,
}

/// Fails when another socket already listens on `addr`. The workers'
/// `SO_REUSEPORT` would let a second gateway of the same user bind it too
/// and take a share of its connections; a socket bound without that option
/// is refused (`EADDRINUSE`) while any other listens there, so a probe
/// bound so, then closed, tells. Port 0 needs none: the kernel picks a port
/// no socket holds, never one shared through `SO_REUSEPORT`.
fn refuse_if_served(addr: SocketAddr) -> io::Result<()> {
    if addr.port() == 0 {
        return Ok(());
    }
    let probe = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    // A port held only by closed connections (`TIME_WAIT`) is free to use.
    probe.set_reuse_address(true)?;
    match probe.bind(&addr.into()) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::AddrInUse => Err(io::Error::new(
            io::ErrorKind::AddrInUse,
            format!("another process is serving {addr}"),
        )),
        Err(e) => Err(io::Error::new(e.kind(), format!("cannot bind {addr}: {e}"))),
    }
}

fn bind_listener(addr: SocketAddr) -> io::Result<std::net::TcpListener> {
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP))?;
    socket.set_reuse_address(true)?;
    socket.set_reuse_port(true)?;
    socket.set_nonblocking(true)?;
    socket
        .bind(&addr.into())
        .map_err(|e| io::Error::new(e.kind(), format!("cannot bind {addr}: {e}")))?;
    socket.listen(1024)?;
    Ok(socket.into())
}

/// A worker's io_uring runtime. Its ring posts completions when the
/// worker next enters the kernel (`IORING_SETUP_COOP_TASKRUN`) instead of
/// interrupting the worker to post each one: a worker enters the kernel at
/// every turn anyway, so the interruptions only cost it, most where workers
/// share their cores (`benches/README.md`, "Which driver"). A kernel older
/// than 5.19 refuses the flag; the ring is then built without it.
pub(super) fn uring_runtime()
-> io::Result<monoio::Runtime<monoio::time::TimeDriver<monoio::IoUringDriver>>> {
    let build = |ring: io_uring::Builder| {
        monoio::RuntimeBuilder::<monoio::IoUringDriver>::new()
            .uring_builder(ring)
            .enable_timer()
            .build()
    };
    let mut cooperative = io_uring::IoUring::builder();
    cooperative.setup_coop_taskrun();
    match build(cooperative) {
        Err(e) if e.raw_os_error() == Some(libc::EINVAL) => build(io_uring::IoUring::builder()),
        built => built,
    }
}

fn uring_unavailable(e: io::Error) -> io::Error {
    io::Error::new(
        e.kind(),
        format!("io_uring is unavailable here ({e}); start with --io-driver epoll"),
    )
}

/// What a worker thread starts with.
struct WorkerStart<S> {
    driver: IoDriver,
    listener: std::net::TcpListener,
    wake: StdUnixStream,
    service: Arc<S>,
    limits: Limits,
    grace: Duration,
    ready: mpsc::Sender<io::Result<()>>,
    signal: ShutdownSignal,
    upstream: Option<Arc<UpstreamConfig>>,
    tls: Option<Arc<rustls::ServerConfig>>,
}

fn run_worker<S: Service>(start: WorkerStart<S>) -> io::Result<Closed> {
    match start.driver {
        IoDriver::Uring => {
            let rt = uring_runtime();
            match rt {
                Ok(mut rt) => rt.block_on(worker_main(start)),
                Err(e) => {
                    let _ = start.ready.send(Err(uring_unavailable(e)));
                    Ok(Closed::default())
                }
            }
        }
        IoDriver::Epoll => {
            let rt = monoio::RuntimeBuilder::<monoio::LegacyDriver>::new()
                .enable_timer()
                .build();
            match rt {
                Ok(mut rt) => rt.block_on(worker_main(start)),
                Err(e) => {
                    let _ = start.ready.send(Err(io::Error::new(
                        e.kind(),
                        format!("cannot start the epoll driver: {e}"),
                    )));
                    Ok(Closed::default())
                }
            }
        }
    }
}

async fn worker_main<S: Service>(start: WorkerStart<S>) -> io::Result<Closed> {
    let setup = (|| {
        start.listener.set_nonblocking(true)?;
        // A second descriptor of the listener, to take in what is already
        // queued when the shutdown comes.
        let backlog = start.listener.try_clone()?;
        Ok::<_, io::Error>((
            TcpListener::from_std(start.listener)?,
            backlog,
            UnixStream::from_std(start.wake)?,
        ))
    })();
    let (listener, backlog, mut wake) = match setup {
        Ok(x) => x,
        Err(e) => {
            let e = match start.driver {
                IoDriver::Uring => uring_unavailable(e),
                IoDriver::Epoll => e,
            };
            let _ = start.ready.send(Err(e));
            return Ok(Closed::default());
        }
    };
    let _ = start.ready.send(Ok(()));
    drop(start.ready);

    let worker = Rc::new(Worker::new(
        start.service,
        start.limits,
        start.signal,
        Pools::new(start.upstream),
        start.tls.map(monoio_rustls::TlsAcceptor::from),
    ));
    {
        // The reclaim task gives the parse buffers back after a burst.
        crate::gate::hold_thread_scratch();
        let reclaim = worker.clone();
        monoio::spawn(async move { reclaim.reclaim.run().await });
    }
    if worker.limits.defer_idle_read {
        let pump = worker.clone();
        monoio::spawn(async move { pump.later.pump().await });
    }
    let accept = async {
        loop {
            match listener.accept().await {
                Ok((stream, _)) => {
                    // At the limit, room is made once a client is here, not
                    // before: the connection idle longest is closed for it;
                    // with every one busy, it waits for one to close.
                    if worker.open() >= worker.limits.max_open {
                        worker.service.on_connection_limit();
                        if !worker.close_idlest() {
                            tracing::warn!(
                                open = worker.open(),
                                "connection limit reached (max_connections) with every connection busy; new connections wait until one closes"
                            );
                        }
                        worker.room().await;
                    }
                    spawn_connection(stream, &worker);
                }
                Err(e) => {
                    // Out of descriptors (or memory): back off instead of
                    // spinning; other errors concern one connection only.
                    let scarce = matches!(
                        e.raw_os_error(),
                        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
                    );
                    tracing::warn!(error = %e, "accept failed");
                    if scarce {
                        monoio::time::sleep(Duration::from_millis(50)).await;
                    }
                }
            }
        }
    };
    monoio::select! {
        _ = accept => {}
        _ = wake.read(vec![0u8; 8]) => {}
    }
    let deadline = Instant::now() + start.grace.min(Duration::from_secs(365 * 24 * 3600));
    worker.begin_shutdown();
    let mut closed = Closed {
        connections: worker.open(),
        cut: 0,
    };
    // Stop accepting. Connections the kernel already completed are taken in
    // first (closing the listener would reset them): they are served if
    // their request has arrived, closed otherwise.
    while let Ok((stream, _)) = backlog.accept() {
        let adopted = stream
            .set_nonblocking(true)
            .and_then(|()| monoio::net::TcpStream::from_std(stream));
        if let Ok(stream) = adopted {
            closed.connections += 1;
            spawn_connection(stream, &worker);
        }
    }
    drop(backlog);
    drop(listener);
    while worker.open() > 0 && Instant::now() < deadline {
        monoio::time::sleep(Duration::from_millis(5)).await;
    }
    if worker.open() > 0 {
        closed.cut = worker.open();
        tracing::warn!(
            open = worker.open(),
            "shutdown grace over; closing the remaining connections"
        );
        worker.cut_connections();
        let cut = Instant::now() + Duration::from_millis(500);
        while worker.open() > 0 && Instant::now() < cut {
            monoio::time::sleep(Duration::from_millis(5)).await;
        }
    }
    Ok(closed)
}

/// A task for an accepted connection, over TLS when the listener serves it.
fn spawn_connection<S: Service>(stream: monoio::net::TcpStream, worker: &Rc<Worker<S>>) {
    match worker.tls {
        None => drop(monoio::spawn(serve_connection(stream, worker.clone()))),
        Some(_) => drop(monoio::spawn(serve_tls_connection(stream, worker.clone()))),
    }
}
