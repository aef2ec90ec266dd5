//! The least a server can do per request, as a floor for the load
//! benchmarks' ratios: one thread, level-triggered epoll, each readable
//! connection read once and answered `204` for every request head that
//! ended in what it read. No HTTP parsing beyond that count, no body read
//! by length, no date header: only the system calls a keep-alive request
//! and its answer take (one `recv`, one `send`, `epoll_wait` shared).
//!
//! Only for a load generator that sends requests whose bodies hold no
//! blank line (wrk with a compact JSON body): a head ends at the first
//! `\r\n\r\n`, counted across reads.
//!
//! Usage: floor-baseline 127.0.0.1:PORT

use std::io;
use std::net::TcpListener;
use std::os::fd::AsRawFd;

const ANSWER: &[u8] = b"HTTP/1.1 204 No Content\r\n\r\n";
const HEAD_END: &[u8] = b"\r\n\r\n";

fn main() -> io::Result<()> {
    let address = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8091".to_owned());
    let listener = TcpListener::bind(&address)?;
    listener.set_nonblocking(true)?;
    println!("listening on {}", listener.local_addr()?);
    let listen_fd = listener.as_raw_fd();
    // Safety: plain system calls on descriptors this thread owns; every
    // pointer passed is to a live local buffer of the length given.
    unsafe {
        let epoll = check(libc::epoll_create1(libc::EPOLL_CLOEXEC))?;
        add(epoll, listen_fd)?;
        let mut events = vec![libc::epoll_event { events: 0, u64: 0 }; 64];
        let mut buffer = vec![0u8; 64 * 1024];
        let mut answers = Vec::with_capacity(ANSWER.len() * 64);
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
                        let on: libc::c_int = 1;
                        libc::setsockopt(
                            conn,
                            libc::IPPROTO_TCP,
                            libc::TCP_NODELAY,
                            (&on as *const libc::c_int).cast(),
                            size_of::<libc::c_int>() as libc::socklen_t,
                        );
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
                    answers.clear();
                    for _ in 0..heads {
                        answers.extend_from_slice(ANSWER);
                    }
                    if !answers.is_empty() {
                        libc::send(fd, answers.as_ptr().cast(), answers.len(), libc::MSG_NOSIGNAL);
                    }
                } else if read == 0 || io::Error::last_os_error().kind() != io::ErrorKind::WouldBlock
                {
                    libc::close(fd);
                }
            }
        }
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
    use super::count_heads;

    #[test]
    fn heads_are_counted_across_reads() {
        let mut matched = 0;
        assert_eq!(count_heads(b"POST / HTTP/1.1\r\nA: b\r\n\r\n{}", &mut matched), 1);
        assert_eq!(matched, 0);
        assert_eq!(count_heads(b"POST / HTTP/1.1\r\n\r", &mut matched), 0);
        assert_eq!(matched, 3);
        assert_eq!(count_heads(b"\n{}GET / HTTP/1.1\r\n\r\n", &mut matched), 2);
        assert_eq!(count_heads(b"\r\r\n\r\n", &mut matched), 1);
    }
}
