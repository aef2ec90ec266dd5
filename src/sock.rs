//! The transport's one module of `unsafe`: a socket peeked at, read or shut down by its
//! descriptor, beside monoio (which offers no `AsFd` to borrow it safely).
//!
//! Each function takes the stream that owns the descriptor, or states what
//! keeps it open, so that the descriptor cannot be closed (and its number
//! reused) while it is used here.

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, RawFd};

use monoio::net::TcpStream;

/// What the socket holds, looked at without taking it.
pub(crate) enum Peek {
    /// The peer closed its side (or the socket failed).
    Closed,
    /// Bytes wait to be read.
    Data,
    /// Nothing yet.
    Nothing,
}

/// Looks at `stream`'s next byte without taking it and without waiting.
pub(crate) fn peek(stream: &TcpStream) -> Peek {
    // `stream` owns the descriptor and is borrowed for the whole call.
    peek_fd(stream.as_raw_fd())
}

/// [`peek`] on the socket of a stream that wraps it (TLS), by descriptor.
///
/// The caller must hold `fd` open: it borrows the stream that owns it for
/// the call.
pub(crate) fn peek_fd(fd: RawFd) -> Peek {
    // SAFETY: the descriptor is open for the call (the caller's contract).
    let fd = unsafe { BorrowedFd::borrow_raw(fd) };
    let mut byte = [std::mem::MaybeUninit::<u8>::uninit()];
    match socket2::SockRef::from(&fd)
        .recv_with_flags(&mut byte, libc::MSG_PEEK | libc::MSG_DONTWAIT)
    {
        Ok(0) => Peek::Closed,
        Ok(_) => Peek::Data,
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Peek::Nothing,
        Err(_) => Peek::Closed,
    }
}

/// A second descriptor of `stream`'s socket, as a stream of its own: to
/// watch a socket that another stream (TLS) owns and lends no one.
pub(crate) fn watcher(stream: &TcpStream) -> io::Result<TcpStream> {
    // SAFETY: `stream` owns the descriptor and is borrowed for longer
    // than `fd`.
    let fd = unsafe { BorrowedFd::borrow_raw(stream.as_raw_fd()) };
    TcpStream::from_std(std::net::TcpStream::from(fd.try_clone_to_owned()?))
}

/// Appends what `stream` holds right now to `buf`, without waiting: the
/// count, 0 when the peer closed.
pub(crate) fn recv_now(stream: &TcpStream, buf: &mut Vec<u8>) -> io::Result<usize> {
    // SAFETY: `stream` owns the descriptor and is borrowed for longer
    // than `fd`.
    let fd = unsafe { BorrowedFd::borrow_raw(stream.as_raw_fd()) };
    let len = buf.len();
    let n = socket2::SockRef::from(&fd)
        .recv_with_flags(buf.spare_capacity_mut(), libc::MSG_DONTWAIT)?;
    debug_assert!(len + n <= buf.capacity());
    // SAFETY: recv initialised the first `n` bytes of the spare capacity.
    unsafe { buf.set_len(len + n) };
    Ok(n)
}

/// Shuts down the read side of `fd` (it stays open): a read waiting on it
/// takes what already arrived, then ends.
///
/// The caller must hold `fd` open, as for [`shutdown_both`].
pub(crate) fn shutdown_read(fd: RawFd) {
    // SAFETY: as in `shutdown_both`.
    unsafe { libc::shutdown(fd, libc::SHUT_RD) };
}

/// Shuts down both directions of `fd` (it stays open).
///
/// The caller must hold `fd` open: the worker removes a descriptor from its
/// set in the same synchronous drop, on the same thread, that closes its
/// stream, so a descriptor in the set is never closed or reused yet.
pub(crate) fn shutdown_both(fd: RawFd) {
    // SAFETY: shutdown(2) on an open descriptor (the caller's contract)
    // touches no memory and does not close it.
    unsafe { libc::shutdown(fd, libc::SHUT_RDWR) };
}
