//! A worker's connections to the upstream: kept alive between answers,
//! owned by the worker's thread (a `RefCell`, never borrowed across an
//! await), taken for one exchange and put back only when the answer was
//! read to its end.

use std::cell::RefCell;
use std::os::fd::{AsRawFd, RawFd};
use std::sync::Arc;
use std::time::Duration;

use bytes::{Bytes, BytesMut};
use monoio::BufResult;
use monoio::buf::{IoBuf, IoBufMut};
use monoio::buf::{IoVecBuf, IoVecBufMut};
use monoio::io::{AsyncReadRent, AsyncWriteRent, AsyncWriteRentExt};
use monoio::net::TcpStream;
use monoio::time::Instant;
use monoio_rustls::{ClientTlsStream, TlsConnector};

use super::answer::{AnswerHead, BodyState, Malformed, Parsed, parse_head};
use super::{Failure, UpstreamConfig};
use crate::sock::Peek;

/// Idle connections kept per worker; more are closed when put back.
const MAX_IDLE: usize = 64;
/// First capacity of a connection's read buffer.
const READ_BUF: usize = 16 * 1024;
/// Room the worker's request buffer starts with, and makes whenever it
/// needs a fresh allocation: requests are encoded into it one after
/// another, so a few usual ones share one allocation.
const REQUEST_ROOM: usize = 4 * 1024;

pub struct Pool {
    config: Arc<UpstreamConfig>,
    idle: RefCell<Vec<UpstreamConn>>,
    /// Requests are encoded here and split off as `Bytes`. Once every
    /// request split from an allocation has been written, the next
    /// reservation takes the same allocation back; while some are still
    /// in flight, a fresh one is made and the old one goes with them.
    requests: RefCell<BytesMut>,
}

/// One connection to the upstream and what was read from it but not used.
pub struct UpstreamConn {
    stream: Link,
    /// The socket under `stream` (it owns it): peeked at while idle.
    fd: RawFd,
    buf: Vec<u8>,
    /// `buf[pos..]` is not consumed yet.
    pos: usize,
}

/// A connection's bytes, in the clear or through TLS.
enum Link {
    Plain(TcpStream),
    /// Boxed: the TLS state is large, and a pooled connection is moved.
    Tls(Box<ClientTlsStream<TcpStream>>),
}

impl AsyncReadRent for Link {
    async fn read<T: IoBufMut>(&mut self, buf: T) -> BufResult<usize, T> {
        match self {
            Link::Plain(s) => s.read(buf).await,
            Link::Tls(s) => s.read(buf).await,
        }
    }

    async fn readv<T: IoVecBufMut>(&mut self, buf: T) -> BufResult<usize, T> {
        match self {
            Link::Plain(s) => s.readv(buf).await,
            Link::Tls(s) => s.readv(buf).await,
        }
    }
}

impl AsyncWriteRent for Link {
    async fn write<T: IoBuf>(&mut self, buf: T) -> BufResult<usize, T> {
        match self {
            Link::Plain(s) => s.write(buf).await,
            Link::Tls(s) => s.write(buf).await,
        }
    }

    async fn writev<T: IoVecBuf>(&mut self, buf: T) -> BufResult<usize, T> {
        match self {
            Link::Plain(s) => s.writev(buf).await,
            Link::Tls(s) => s.writev(buf).await,
        }
    }

    async fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Link::Plain(s) => s.flush().await,
            Link::Tls(s) => s.flush().await,
        }
    }

    async fn shutdown(&mut self) -> std::io::Result<()> {
        match self {
            Link::Plain(s) => s.shutdown().await,
            Link::Tls(s) => s.shutdown().await,
        }
    }
}

/// Why reading an answer's body stopped early.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyEnd {
    /// Nothing arrived for the idle timeout.
    Idle,
    /// Closed or broken before the body's end, or a framing error.
    Broken,
}

impl Pool {
    pub fn new(config: Arc<UpstreamConfig>) -> Pool {
        Pool {
            config,
            idle: RefCell::new(Vec::new()),
            requests: RefCell::new(BytesMut::with_capacity(REQUEST_ROOM)),
        }
    }

    /// A request encoded by `encode` into the worker's request buffer.
    pub fn encoded(&self, encode: impl FnOnce(&mut BytesMut)) -> Bytes {
        let mut requests = self.requests.borrow_mut();
        encode(&mut requests);
        let request = requests.split().freeze();
        if request.len() > REQUEST_ROOM {
            // A large body's allocation goes with its request, not kept.
            *requests = BytesMut::with_capacity(REQUEST_ROOM);
        }
        request
    }

    pub fn config(&self) -> &UpstreamConfig {
        &self.config
    }

    /// Sends `request` and reads the answer's head. A request is sent
    /// again, on a new connection, only when none of it can have reached
    /// the upstream (RFC 9110 §9.2.2): a pooled connection seen closed
    /// before writing, or whose first write failed. Once a byte has left,
    /// any failure is final: a `tools/call` the upstream may have run is
    /// never run twice.
    pub async fn exchange(&self, request: Bytes) -> Result<(UpstreamConn, AnswerHead), Failure> {
        let mut request = request;
        let pooled = self.idle.borrow_mut().pop();
        if let Some(conn) = pooled {
            if conn.looks_open() {
                match self.try_exchange(conn, request).await {
                    Attempt::Done(result) => return result,
                    Attempt::NotSent(back) => request = back,
                }
            }
            // The upstream closed it while idle: the others idle as long
            // are likely gone too.
            self.idle.borrow_mut().clear();
        }
        let conn = self.connect().await?;
        match self.try_exchange(conn, request).await {
            Attempt::Done(result) => result,
            Attempt::NotSent(_) => Err(Failure::Unreachable),
        }
    }

    /// Puts a connection whose answer was read to its end back.
    pub fn put_back(&self, mut conn: UpstreamConn) {
        let mut idle = self.idle.borrow_mut();
        if conn.pos == conn.buf.len() && idle.len() < MAX_IDLE {
            conn.buf.clear();
            conn.pos = 0;
            idle.push(conn);
        }
    }

    async fn connect(&self) -> Result<UpstreamConn, Failure> {
        // The connect timeout bounds the TLS handshake too.
        let deadline = Instant::now() + self.config.connect_timeout;
        let connect = TcpStream::connect_addr(self.config.addr);
        match monoio::time::timeout_at(deadline, connect).await {
            Ok(Ok(stream)) => {
                let _ = stream.set_nodelay(true);
                let fd = stream.as_raw_fd();
                let stream = match &self.config.tls {
                    None => Link::Plain(stream),
                    Some(tls) => Link::Tls(Box::new(self.handshake(tls, stream, deadline).await?)),
                };
                Ok(UpstreamConn {
                    stream,
                    fd,
                    buf: Vec::with_capacity(READ_BUF),
                    pos: 0,
                })
            }
            Ok(Err(e)) => {
                tracing::warn!(upstream = %self.config.url, error = %e, "cannot connect to the upstream");
                Err(Failure::Unreachable)
            }
            // Never connected: unreachable (502), like a refusal; 504 is
            // for an upstream that took the request and did not answer.
            Err(_) => {
                tracing::warn!(upstream = %self.config.url, "connecting to the upstream timed out");
                Err(Failure::Unreachable)
            }
        }
    }

    /// The TLS handshake on a new connection, before any byte of a
    /// request: a failure leaves nothing sent.
    async fn handshake(
        &self,
        tls: &super::UpstreamTls,
        stream: TcpStream,
        deadline: Instant,
    ) -> Result<ClientTlsStream<TcpStream>, Failure> {
        let connector = TlsConnector::from(tls.config.clone());
        let handshake = connector.connect(tls.name.clone(), stream);
        match monoio::time::timeout_at(deadline, handshake).await {
            Ok(Ok(stream)) => Ok(stream),
            Ok(Err(e)) => {
                let reason = super::tls::describe(&e.into());
                tracing::warn!(upstream = %self.config.url, %reason, "TLS with the upstream failed; nothing was sent");
                Err(Failure::Tls)
            }
            Err(_) => {
                tracing::warn!(upstream = %self.config.url, "the TLS handshake with the upstream timed out");
                Err(Failure::Unreachable)
            }
        }
    }

    async fn try_exchange(&self, mut conn: UpstreamConn, request: Bytes) -> Attempt {
        let deadline = Instant::now() + self.config.first_byte_timeout;
        // The first write alone: whether any byte left decides whether the
        // request may be sent again.
        let written = match monoio::time::timeout_at(deadline, conn.stream.write(request)).await {
            Ok((Ok(n), request)) if n > 0 => (n, request),
            Ok((_, request)) => return Attempt::NotSent(request),
            Err(_) => return Attempt::Done(Err(Failure::Timeout)),
        };
        let (n, request) = written;
        if n < request.len() {
            match monoio::time::timeout_at(deadline, conn.stream.write_all(request.slice(n..)))
                .await
            {
                Ok((Ok(_), _)) => {}
                Ok((Err(_), _)) => return Attempt::Done(Err(Failure::Unreachable)),
                Err(_) => return Attempt::Done(Err(Failure::Timeout)),
            }
        } else {
            // Written: its part of the request buffer is free again while
            // the answer is awaited.
            drop(request);
        }
        loop {
            match parse_head(&conn.buf[conn.pos..]) {
                Ok(Parsed::Final(head, len)) => {
                    conn.pos += len;
                    return Attempt::Done(Ok((conn, head)));
                }
                Ok(Parsed::Interim(len)) => conn.pos += len,
                Ok(Parsed::Partial) => match conn.fill(deadline).await {
                    Ok(n) if n > 0 => {}
                    Err(Fill::Timeout) => return Attempt::Done(Err(Failure::Timeout)),
                    Ok(_) | Err(Fill::Io) => {
                        tracing::warn!(upstream = %self.config.url, "the upstream closed the connection before answering; not sent again");
                        return Attempt::Done(Err(Failure::Unreachable));
                    }
                },
                Err(Malformed) => {
                    tracing::warn!(upstream = %self.config.url, "the upstream's answer is not HTTP/1.x");
                    return Attempt::Done(Err(Failure::BadAnswer));
                }
            }
        }
    }
}

enum Attempt {
    Done(Result<(UpstreamConn, AnswerHead), Failure>),
    /// No byte of the request left: the request, to send on another
    /// connection.
    NotSent(Bytes),
}

enum Fill {
    Timeout,
    Io,
}

impl UpstreamConn {
    /// An idle connection shows neither the upstream's close nor bytes it
    /// sent unasked (which would be read as the next answer).
    /// Over TLS, bytes there may be a record the upstream sent unasked
    /// (a close alert, a session ticket): the connection is not reused.
    fn looks_open(&self) -> bool {
        let peek = match &self.stream {
            Link::Plain(stream) => crate::sock::peek(stream),
            // `self` owns the stream that owns `fd`.
            Link::Tls(_) => crate::sock::peek_fd(self.fd),
        };
        matches!(peek, Peek::Nothing)
    }

    /// Reads more into the buffer; `Ok(0)`: the upstream closed.
    async fn fill(&mut self, deadline: Instant) -> Result<usize, Fill> {
        if self.pos > 0 {
            self.buf.drain(..self.pos);
            self.pos = 0;
        }
        if self.buf.capacity() - self.buf.len() < READ_BUF / 4 {
            self.buf.reserve(READ_BUF);
        }
        let buf = std::mem::take(&mut self.buf);
        let len = buf.len();
        match monoio::time::timeout_at(deadline, self.stream.read(buf.slice_mut(len..))).await {
            Ok((res, slice)) => {
                self.buf = slice.into_inner();
                res.map_err(|_| Fill::Io)
            }
            // The buffer went with the cancelled read: this connection is
            // not used again.
            Err(_) => Err(Fill::Timeout),
        }
    }

    /// Appends the body bytes already read to `out`, without reading.
    pub fn take_buffered(
        &mut self,
        body: &mut BodyState,
        out: &mut Vec<u8>,
    ) -> Result<(), BodyEnd> {
        if self.pos < self.buf.len() {
            let used = body
                .take(&self.buf[self.pos..], out)
                .map_err(|Malformed| BodyEnd::Broken)?;
            self.pos += used;
        }
        Ok(())
    }

    /// Appends the next part of the body to `out` (after what it holds),
    /// reading only when nothing is buffered. `Ok(true)`: more may come; `Ok(false)`: the
    /// body is complete (`out` may still hold its last part).
    pub async fn next_piece(
        &mut self,
        body: &mut BodyState,
        out: &mut Vec<u8>,
        idle: Duration,
    ) -> Result<bool, BodyEnd> {
        // `out` may hold earlier pieces (an answer held whole): only what
        // this call appends ends the wait.
        let start = out.len();
        loop {
            self.take_buffered(body, out)?;
            if body.is_done() {
                return Ok(false);
            }
            if out.len() > start {
                return Ok(true);
            }
            match self.fill(Instant::now() + idle).await {
                Ok(0) => {
                    body.at_eof().map_err(|Malformed| BodyEnd::Broken)?;
                    return Ok(false);
                }
                Ok(_) => {}
                Err(Fill::Timeout) => return Err(BodyEnd::Idle),
                Err(Fill::Io) => return Err(BodyEnd::Broken),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pool() -> Pool {
        Pool::new(Arc::new(
            UpstreamConfig::parse("http://127.0.0.1:9/mcp").unwrap(),
        ))
    }

    fn request(pool: &Pool, len: usize) -> Bytes {
        pool.encoded(|out| out.extend_from_slice(&vec![b'r'; len]))
    }

    #[test]
    fn requests_in_a_row_share_one_allocation() {
        let pool = pool();
        let first = request(&pool, 700);
        let second = request(&pool, 700);
        assert_eq!(second.as_ptr(), first.as_ptr().wrapping_add(700));
        assert_eq!(&second[..], &[b'r'; 700][..]);
    }

    #[test]
    fn the_allocation_is_taken_back_once_its_requests_are_written() {
        let pool = pool();
        let first = request(&pool, 700);
        let start = first.as_ptr();
        drop(first);
        // More than is left after the first: reclaimed from the start.
        let second = request(&pool, REQUEST_ROOM - 100);
        assert_eq!(second.as_ptr(), start);
    }

    #[test]
    fn a_request_in_flight_keeps_its_bytes_while_the_next_gets_fresh_room() {
        let pool = pool();
        let first = pool.encoded(|out| out.extend_from_slice(b"first"));
        let second = request(&pool, REQUEST_ROOM);
        assert_eq!(&first[..], b"first");
        assert_eq!(second.len(), REQUEST_ROOM);
        let first_range = first.as_ptr_range();
        assert!(!first_range.contains(&second.as_ptr()));
    }

    #[test]
    fn a_large_request_takes_its_allocation_with_it() {
        let pool = pool();
        let large = request(&pool, 64 * REQUEST_ROOM);
        let span = large.as_ptr() as usize..large.as_ptr() as usize + 65 * REQUEST_ROOM;
        drop(large);
        // The worker's buffer is a fresh one of the usual room.
        assert_eq!(pool.requests.borrow().capacity(), REQUEST_ROOM);
        let next = request(&pool, 700);
        assert!(!span.contains(&(next.as_ptr() as usize)));
    }
}
