//! The least a server can do per request, as a floor for the load
//! benchmarks' ratios: one thread, each connection's bytes read as they
//! come and answered `204` for every request head that ended in what was
//! read. No HTTP parsing beyond that count, no body read by length, no
//! date header: only the kernel's work for a keep-alive request and its
//! answer, by either of the gateway's drivers:
//!
//! - `epoll` (the default): level-triggered, one `recv` when a connection
//!   is readable and one `send`, `epoll_wait` shared;
//! - `uring`: io_uring (`IORING_SETUP_COOP_TASKRUN`, as the gateway sets
//!   it), a `recv` always pending on each connection, a `send` and the
//!   next `recv` submitted together, one `io_uring_enter` per turn.
//!
//! Only for a load generator that sends requests whose bodies hold no
//! blank line (wrk with a compact JSON body): a head ends at the first
//! `\r\n\r\n`, counted across reads.
//!
//! Usage: floor-baseline 127.0.0.1:PORT [epoll|uring]

use std::io;
use std::net::TcpListener;
use std::os::fd::AsRawFd;

const ANSWER: &[u8] = b"HTTP/1.1 204 No Content\r\n\r\n";
const HEAD_END: &[u8] = b"\r\n\r\n";
/// The most answers one send carries (wrk pipelines at most 16); a read
/// that owes more sends them in turns.
const MOST_HEADS: usize = 64;

fn main() -> io::Result<()> {
    let mut args = std::env::args().skip(1);
    let address = args.next().unwrap_or_else(|| "127.0.0.1:8091".to_owned());
    let uring = match args.next().as_deref() {
        None | Some("epoll") => false,
        Some("uring") => true,
        Some(other) => {
            eprintln!("unknown driver {other:?} (expected epoll or uring)");
            std::process::exit(2);
        }
    };
    let listener = TcpListener::bind(&address)?;
    listener.set_nonblocking(true)?;
    println!("listening on {}", listener.local_addr()?);
    if uring {
        uring_loop(&listener)
    } else {
        epoll_loop(&listener)
    }
}

fn epoll_loop(listener: &TcpListener) -> io::Result<()> {
    let listen_fd = listener.as_raw_fd();
    // Safety: plain system calls on descriptors this thread owns; every
    // pointer passed is to a live local buffer of the length given.
    unsafe {
        let epoll = check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?;
        add(epoll, listen_fd)?;
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        let mut buffer = vec![0u8; 64 * 1024];
        let answers = ANSWER.repeat(MOST_HEADS);
        // Per descriptor: how many bytes of HEAD_END the last read ended in.
        let mut matched: Vec<u8> = Vec::new();
        loop {
            let ready = libc::epoll_wait(epoll, events.as_mut_ptr(), events.len() as i32, -1);
            if ready < 0 {
                let error = io::Error::last_os_error();
                if error.kind() == io::ErrorKind::Interrupted {
                    continue;
                }
                return Err(error);
            }
            for event in &events[..ready as usize] {
                let fd = event.u64 as i32;
                if fd == listen_fd {
                    loop {
                        let conn = libc::accept4(
                            listen_fd,
                            std::ptr::null_mut(),
                            std::ptr::null_mut(),
                            libc::SOCK_NONBLOCK | libc::SOCK_CLOEXEC,
                        );
                        if conn < 0 {
                            break;
                        }
                        no_delay(conn);
                        if matched.len() <= conn as usize {
                            matched.resize(conn as usize + 1, 0);
                        }
                        matched[conn as usize] = 0;
                        add(epoll, conn)?;
                    }
                    continue;
                }
                let read = libc::recv(fd, buffer.as_mut_ptr().cast(), buffer.len(), 0);
                if read > 0 {
                    let heads = count_heads(&buffer[..read as usize], &mut matched[fd as usize]);
                    for owed in owed(&answers, heads) {
                        libc::send(fd, owed.as_ptr().cast(), owed.len(), libc::MSG_NOSIGNAL);
                    }
                } else if read == 0
                    || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock
                {
                    libc::close(fd);
                }
            }
        }
    }
}

/// The `uring` driver: per connection a buffer and a pending `recv`; each
/// completed read's answers are sent as the epoll loop sends them.
fn uring_loop(listener: &TcpListener) -> io::Result<()> {
    use io_uring::{IoUring, opcode, types};
    const ACCEPT: u64 = 0;
    const RECV: u64 = 1;
    const SEND: u64 = 2;
    const READ_SIZE: usize = 16 * 1024;
    let listen_fd = listener.as_raw_fd();
    let mut builder = IoUring::builder();
    builder.setup_coop_taskrun();
    let mut ring = builder.build(1024)?;
    let answers = ANSWER.repeat(MOST_HEADS);
    // Per descriptor: its read buffer and how much of HEAD_END it ended in.
    let mut buffers: Vec<Vec<u8>> = Vec::new();
    let mut matched: Vec<u8> = Vec::new();
    let accept = opcode::Accept::new(
        types::Fd(listen_fd),
        std::ptr::null_mut(),
        std::ptr::null_mut(),
    )
    .build()
    .user_data(ACCEPT);
    // Safety (each push): the entry's descriptors stay open and its buffers
    // (a connection's read buffer, `answers`) stay put until its completion,
    // which this loop waits for before it frees or reuses them.
    unsafe { ring.submission().push(&accept) }.expect("the ring has room");
    let mut completed = Vec::with_capacity(1024);
    let mut submit = Vec::<io_uring::squeue::Entry>::with_capacity(8);
    loop {
        ring.submit_and_wait(1)?;
        completed.clear();
        completed.extend(
            ring.completion()
                .map(|c: io_uring::cqueue::Entry| (c.user_data(), c.result())),
        );
        for &(data, result) in &completed {
            let (fd, kind) = ((data >> 2) as i32, data & 3);
            submit.clear();
            match kind {
                ACCEPT => {
                    if result >= 0 {
                        let conn = result;
                        no_delay(conn);
                        if buffers.len() <= conn as usize {
                            buffers.resize_with(conn as usize + 1, Vec::new);
                            matched.resize(conn as usize + 1, 0);
                        }
                        buffers[conn as usize] = vec![0; READ_SIZE];
                        matched[conn as usize] = 0;
                        submit.push(recv(conn, &mut buffers[conn as usize]));
                    }
                    submit.push(accept.clone());
                }
                RECV if result > 0 => {
                    let heads = count_heads(
                        &buffers[fd as usize][..result as usize],
                        &mut matched[fd as usize],
                    );
                    for owed in owed(&answers, heads) {
                        let send =
                            opcode::Send::new(types::Fd(fd), owed.as_ptr(), owed.len() as u32)
                                .build()
                                .user_data(((fd as u64) << 2) | SEND);
                        submit.push(send);
                    }
                    submit.push(recv(fd, &mut buffers[fd as usize]));
                }
                RECV => {
                    // The end of the stream, or an error: no operation
                    // reads into the buffer any more (a pending send holds
                    // only `answers` and its own reference to the socket).
                    // Safety: the descriptor is this loop's own.
                    unsafe { libc::close(fd) };
                    buffers[fd as usize] = Vec::new();
                }
                _ => {}
            }
            for entry in &submit {
                // Safety: as above.
                while unsafe { ring.submission().push(entry) }.is_err() {
                    ring.submit()?;
                }
            }
        }
    }

    fn recv(fd: i32, buffer: &mut [u8]) -> io_uring::squeue::Entry {
        opcode::Recv::new(types::Fd(fd), buffer.as_mut_ptr(), buffer.len() as u32)
            .build()
            .user_data(((fd as u64) << 2) | RECV)
    }
}

/// How many request heads end in `bytes`, given that the bytes before
/// ended in `matched` bytes of [`HEAD_END`]; `matched` is left as this
/// read's.
fn count_heads(bytes: &[u8], matched: &mut u8) -> usize {
    let mut heads = 0;
    let mut state = *matched as usize;
    for &byte in bytes {
        state = if byte == HEAD_END[state] {
            state + 1
        } else if byte == b'\r' {
            1
        } else {
            0
        };
        if state == HEAD_END.len() {
            heads += 1;
            state = 0;
        }
    }
    *matched = state as u8;
    heads
}

/// The answers `heads` request heads are owed, as the sends that carry
/// them: each a prefix of `answers` ([`MOST_HEADS`] answers back to back),
/// none when no head ended.
fn owed(answers: &[u8], heads: usize) -> impl Iterator<Item = &[u8]> {
    (0..heads)
        .step_by(MOST_HEADS)
        .map(move |sent| &answers[..(heads - sent).min(MOST_HEADS) * ANSWER.len()])
}

/// `TCP_NODELAY` on an accepted connection, as hyper sets it.
fn no_delay(fd: i32) {
    let on: libc::c_int = 1;
    // Safety: `on` lives across the call.
    unsafe {
        libc::setsockopt(
            fd,
            libc::IPPROTO_TCP,
            libc::TCP_NODELAY,
            (&on as *const libc::c_int).cast(),
            size_of::<libc::c_int>() as libc::socklen_t,
        );
    }
}

unsafe fn add(epoll: i32, fd: i32) -> io::Result<()> {
    let mut event = libc::epoll_event {
        events: libc::EPOLLIN as u32,
        u64: fd as u64,
    };
    // Safety: `event` lives across the call.
    check(unsafe { libc::epoll_ctl(epoll, libc::EPOLL_CTL_ADD, fd, &mut event) }).map(|_| ())
}

fn check(result: i32) -> io::Result<i32> {
    if result < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(result)
    }
}

#[cfg(test)]
mod tests {
    use super::{ANSWER, MOST_HEADS, count_heads, owed};

    #[test]
    fn heads_are_counted_across_reads() {
        let mut matched = 0;
        assert_eq!(
            count_heads(b"POST / HTTP/1.1\r\nA: b\r\n\r\n{}", &mut matched),
            1
        );
        assert_eq!(matched, 0);
        assert_eq!(count_heads(b"POST / HTTP/1.1\r\n\r", &mut matched), 0);
        assert_eq!(matched, 3);
        assert_eq!(count_heads(b"\n{}GET / HTTP/1.1\r\n\r\n", &mut matched), 2);
        assert_eq!(count_heads(b"\r\r\n\r\n", &mut matched), 1);
    }

    #[test]
    fn owed_answers_come_in_sends_of_at_most_most_heads() {
        let answers = ANSWER.repeat(MOST_HEADS);
        let sends = |heads| owed(&answers, heads).map(<[u8]>::len).collect::<Vec<_>>();
        assert_eq!(sends(0), Vec::<usize>::new());
        assert_eq!(sends(1), [ANSWER.len()]);
        assert_eq!(
            sends(MOST_HEADS + 3),
            [MOST_HEADS * ANSWER.len(), 3 * ANSWER.len()]
        );
    }
}
