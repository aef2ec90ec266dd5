//! The pure parts of the connection layer: the request head, in-place
//! chunked decoding, and response encoding. No I/O here.

use std::mem::MaybeUninit;

use crate::gate::fields::check_fields;
use crate::http1::chunked::{self, ChunkError, Step};
use crate::http1::{self, is_chunked_coding, trim_ows};
use crate::server::{Head, HttpError, MAX_HEADERS_CAP, Response};

/// How the body of a request is framed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Framing {
    /// No body (neither `Content-Length` nor `Transfer-Encoding`).
    None,
    Length(u64),
    Chunked,
}

/// What the connection layer keeps of a head once it is parsed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct HeadMeta {
    /// Bytes of the head, blank line included.
    pub head_len: usize,
    pub framing: Framing,
    /// The client allows the connection to stay open after this request.
    pub keep_alive: bool,
    pub expect_continue: bool,
    pub http10: bool,
    /// A `HEAD` request: the answer carries no body.
    pub head_method: bool,
}

impl HeadMeta {
    /// For an answer to no head the connection could read (a refusal, a
    /// panic): it closes.
    pub(crate) const NONE: HeadMeta = HeadMeta {
        head_len: 0,
        framing: Framing::None,
        keep_alive: false,
        expect_continue: false,
        http10: false,
        head_method: false,
    };
}

/// Parses the head at the start of `buf` and hands it to `f`.
/// `Ok(None)`: the head is not complete yet (and not over the limits).
pub(crate) fn with_head<R>(
    buf: &[u8],
    max_headers: usize,
    max_head_bytes: usize,
    f: impl FnOnce(&Head<'_>, HeadMeta) -> R,
) -> Result<Option<R>, HttpError> {
    let mut storage = [const { MaybeUninit::<httparse::Header<'_>>::uninit() }; MAX_HEADERS_CAP];
    let n = max_headers.clamp(1, MAX_HEADERS_CAP);
    let mut req = httparse::Request::new(&mut []);
    let head_len = match req.parse_with_uninit_headers(buf, &mut storage[..n]) {
        Ok(httparse::Status::Complete(len)) => len,
        Ok(httparse::Status::Partial) => {
            return if buf.len() > max_head_bytes {
                Err(HttpError::HeadTooLarge)
            } else {
                Ok(None)
            };
        }
        Err(httparse::Error::TooManyHeaders) => return Err(HttpError::HeadTooLarge),
        Err(_) => return Err(HttpError::BadRequest),
    };
    if head_len > max_head_bytes {
        return Err(HttpError::HeadTooLarge);
    }
    let (Some(method), Some(target), Some(version)) = (req.method, req.path, req.version) else {
        return Err(HttpError::BadRequest);
    };
    let http10 = version == 0;
    // The absolute form (`http://host/path`, sent to proxies) names the
    // same path.
    let target = absolute_form_path(target);
    // A byte search: `split_once('?')` and its char searcher cost more on
    // every request.
    let (path, query) = match target.bytes().position(|b| b == b'?') {
        Some(at) => (&target[..at], Some(&target[at + 1..])),
        None => (target, None),
    };

    let mut content_length: Option<u64> = None;
    let mut transfer_encoding = false;
    let mut conn_close = false;
    let mut conn_keep_alive = false;
    let mut expect_continue = false;
    for h in req.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let v = http1::content_length(h.value).ok_or(HttpError::BadRequest)?;
            if content_length.is_some_and(|old| old != v) {
                return Err(HttpError::BadRequest);
            }
            content_length = Some(v);
        } else if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only one, and only exactly `chunked`: anything else (gzip,
            // lists, repeats) is a framing a gateway must not guess at.
            if transfer_encoding || !is_chunked_coding(h.value) {
                return Err(HttpError::BadRequest);
            }
            transfer_encoding = true;
        } else if name.eq_ignore_ascii_case(b"connection") {
            // One pass over the tokens: this is on every request that
            // names its connection.
            for token in h.value.split(|&b| b == b',') {
                let token = trim_ows(token);
                conn_close |= token.eq_ignore_ascii_case(b"close");
                conn_keep_alive |= token.eq_ignore_ascii_case(b"keep-alive");
            }
        } else if name.eq_ignore_ascii_case(b"expect") {
            expect_continue |= trim_ows(h.value).eq_ignore_ascii_case(b"100-continue");
        }
    }
    // Either framing alone, never both; and no transfer coding on
    // HTTP/1.0, which has none (RFC 9112, 6.1: its framing is faulty).
    // A sender or a proxy before us that took such a body by its length,
    // or as unframed 1.0 bytes, would read the next request where this one
    // decodes a chunk, so the two sides would disagree on where each ends.
    if transfer_encoding && (content_length.is_some() || http10) {
        return Err(HttpError::BadRequest);
    }
    let seen = check_fields(req.headers, http10).map_err(HttpError::Field)?;
    let framing = match (transfer_encoding, content_length) {
        (true, _) => Framing::Chunked,
        (false, Some(0)) | (false, None) => Framing::None,
        (false, Some(n)) => Framing::Length(n),
    };
    let meta = HeadMeta {
        head_len,
        framing,
        keep_alive: if http10 {
            conn_keep_alive && !conn_close
        } else {
            !conn_close
        },
        expect_continue: expect_continue && !http10,
        http10,
        head_method: method == "HEAD",
    };
    let head = Head {
        method,
        path,
        query,
        headers: req.headers,
        content_length,
        chunked: transfer_encoding,
        http10,
        seen,
    };
    Ok(Some(f(&head, meta)))
}

fn absolute_form_path(target: &str) -> &str {
    let scheme = |s: &str| {
        target
            .get(..s.len())
            .is_some_and(|p| p.eq_ignore_ascii_case(s))
    };
    let rest = if scheme("http://") {
        &target[7..]
    } else if scheme("https://") {
        &target[8..]
    } else {
        return target;
    };
    match rest.find(['/', '?']) {
        Some(i) if rest.as_bytes()[i] == b'/' => &rest[i..],
        _ => "/",
    }
}

/// Decodes a chunked body in place with the one chunked decoder
/// ([`crate::http1::chunked`]): chunk data is moved down over the framing,
/// so the decoded body ends up contiguous right after the head and the
/// buffer never needs more than the decoded body plus one partial line.
#[derive(Debug)]
pub(crate) struct ChunkedDecoder {
    chunks: chunked::Decoder,
    limit: usize,
    /// End of the decoded body so far.
    pub write: usize,
    /// Start of the raw bytes not yet decoded.
    pub read: usize,
}

impl ChunkedDecoder {
    /// The body starts at `body_start` of the buffer.
    pub(crate) fn new(body_start: usize, limit: usize) -> ChunkedDecoder {
        ChunkedDecoder {
            chunks: chunked::Decoder::new(chunked::Rules::REQUEST, limit as u64),
            limit,
            write: body_start,
            read: body_start,
        }
    }

    pub(crate) fn is_done(&self) -> bool {
        self.chunks.is_done()
    }

    /// Moves the undecoded tail (`read..`) down to the end of the decoded
    /// body, so the next read appends right after it.
    pub(crate) fn compact(&mut self, buf: &mut Vec<u8>) {
        let pending = buf.len() - self.read;
        buf.copy_within(self.read.., self.write);
        buf.truncate(self.write + pending);
        self.read = self.write;
    }

    /// Decodes what `buf` holds from `self.read` on. `Ok(true)` when the
    /// body (and its trailers) are complete: the body is
    /// `body_start..self.write` and whatever follows `self.read` is the next
    /// request. `Ok(false)`: more bytes are needed; the undecoded tail
    /// (`self.read..`) is then at most one partial line.
    pub(crate) fn decode(&mut self, buf: &mut [u8]) -> Result<bool, HttpError> {
        loop {
            let step = self.chunks.step(&buf[self.read..]).map_err(|e| match e {
                ChunkError::Malformed => HttpError::BadRequest,
                ChunkError::TooLarge => HttpError::BodyTooLarge { limit: self.limit },
            })?;
            match step {
                Step::Framing(n) => self.read += n,
                Step::Data(n) => {
                    buf.copy_within(self.read..self.read + n, self.write);
                    self.read += n;
                    self.write += n;
                }
                Step::More => return Ok(false),
                Step::Done => return Ok(true),
            }
        }
    }
}

/// The limits [`frame_request`] applies (those of [`crate::server::ServerConfig`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct FrameLimits {
    /// The most headers a head may have.
    pub max_headers: usize,
    /// The largest head, blank line included (bytes).
    pub max_head_bytes: usize,
    /// The largest body, after de-chunking (bytes).
    pub body_limit: usize,
}

/// One request as the connection layer frames it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Framed {
    /// Bytes of the head, blank line included.
    pub head_len: usize,
    pub method: String,
    pub path: String,
    /// The headers as parsed, in order.
    pub headers: Vec<(String, Vec<u8>)>,
    /// The body, de-chunked.
    pub body: Vec<u8>,
    /// Bytes of the input this request took (head, framed body, trailers).
    pub consumed: usize,
    pub keep_alive: bool,
}

/// The connection layer's framing of the first request in `raw`, without a
/// socket: `raw` arrives in reads of `read_size` bytes; the head is parsed
/// after each read until it is complete, then the body is taken by
/// `Content-Length` or decoded in place as chunked (the tail compacted
/// between reads, as the connection does), and the head is parsed again
/// over the buffer the body was read into. `Ok(None)`: `raw` ends before
/// the request does. For the fuzz target and tests: the connection itself
/// runs the same functions around its reads.
pub fn frame_request(
    raw: &[u8],
    read_size: usize,
    limits: FrameLimits,
) -> Result<Option<Framed>, HttpError> {
    let read_size = read_size.max(1);
    let mut reads = raw.chunks(read_size);
    let mut buf: Vec<u8> = Vec::new();
    let meta = loop {
        if let Some(meta) = with_head(&buf, limits.max_headers, limits.max_head_bytes, |_, m| m)? {
            break meta;
        }
        match reads.next() {
            Some(read) => buf.extend_from_slice(read),
            None => return Ok(None),
        }
    };
    let (body_end, consumed_in_buf) = match meta.framing {
        Framing::None => (meta.head_len, meta.head_len),
        Framing::Length(n) if n > limits.body_limit as u64 => {
            return Err(HttpError::BodyTooLarge {
                limit: limits.body_limit,
            });
        }
        Framing::Length(n) => {
            let need = meta.head_len + n as usize;
            while buf.len() < need {
                match reads.next() {
                    Some(read) => buf.extend_from_slice(read),
                    None => return Ok(None),
                }
            }
            (need, need)
        }
        Framing::Chunked => {
            let mut dec = ChunkedDecoder::new(meta.head_len, limits.body_limit);
            loop {
                if dec.decode(&mut buf)? {
                    break;
                }
                dec.compact(&mut buf);
                match reads.next() {
                    Some(read) => buf.extend_from_slice(read),
                    None => return Ok(None),
                }
            }
            (dec.write, dec.read)
        }
    };
    // What the buffer holds past this request came from the input as is.
    let unread: usize = reads.map(<[u8]>::len).sum();
    let consumed = raw.len() - unread - (buf.len() - consumed_in_buf);
    let bytes = &buf[..body_end];
    let framed = with_head(
        bytes,
        limits.max_headers,
        limits.max_head_bytes,
        |head, meta| Framed {
            head_len: meta.head_len,
            method: head.method.to_owned(),
            path: head.path.to_owned(),
            headers: head
                .headers
                .iter()
                .map(|h| (h.name.to_owned(), h.value.to_vec()))
                .collect(),
            body: bytes[meta.head_len..].to_vec(),
            consumed,
            keep_alive: meta.keep_alive,
        },
    )?;
    // The connection answers 400 when the head does not parse again.
    framed.map(Some).ok_or(HttpError::BadRequest)
}

/// The reason phrase written for a status.
pub(crate) fn reason(status: u16) -> &'static str {
    match status {
        100 => "Continue",
        101 => "Switching Protocols",
        200 => "OK",
        201 => "Created",
        202 => "Accepted",
        204 => "No Content",
        206 => "Partial Content",
        301 => "Moved Permanently",
        302 => "Found",
        304 => "Not Modified",
        307 => "Temporary Redirect",
        308 => "Permanent Redirect",
        400 => "Bad Request",
        401 => "Unauthorized",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        417 => "Expectation Failed",
        421 => "Misdirected Request",
        422 => "Unprocessable Content",
        429 => "Too Many Requests",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        501 => "Not Implemented",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        _ => "Status",
    }
}

/// Whether a response with this status carries a body (and a length).
pub(crate) fn has_body(status: u16) -> bool {
    !(100..200).contains(&status) && status != 204 && status != 304
}

/// How the connection goes on after a response.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ConnHeader {
    /// Nothing to say (HTTP/1.1 keep-alive).
    None,
    /// `Connection: close`.
    Close,
    /// `Connection: keep-alive` (an HTTP/1.0 client that asked for it).
    KeepAlive,
}

impl ConnHeader {
    /// What an answer says of its connection: it closes, or an HTTP/1.0
    /// client is told it stays open.
    pub(crate) fn of(close: bool, http10: bool) -> ConnHeader {
        if close {
            ConnHeader::Close
        } else if http10 {
            ConnHeader::KeepAlive
        } else {
            ConnHeader::None
        }
    }
}

/// Appends the status line and headers of `resp` to `out`; appends the body
/// too when `with_body` (else the caller writes it). Returns whether the
/// response has a body to write.
pub(crate) fn encode_head(
    out: &mut Vec<u8>,
    resp: &Response,
    conn: ConnHeader,
    head_method: bool,
) -> bool {
    let status = if (100..1000).contains(&resp.status) {
        resp.status
    } else {
        500
    };
    out.extend_from_slice(b"HTTP/1.1 ");
    out.extend_from_slice(&[
        b'0' + (status / 100) as u8,
        b'0' + (status / 10 % 10) as u8,
        b'0' + (status % 10) as u8,
        b' ',
    ]);
    out.extend_from_slice(reason(status).as_bytes());
    out.extend_from_slice(b"\r\n");
    let body = has_body(status);
    if body {
        out.extend_from_slice(b"Content-Length: ");
        let mut digits = [0u8; 20];
        let mut i = digits.len();
        let mut n = resp.body.len();
        loop {
            i -= 1;
            digits[i] = b'0' + (n % 10) as u8;
            n /= 10;
            if n == 0 {
                break;
            }
        }
        out.extend_from_slice(&digits[i..]);
        out.extend_from_slice(b"\r\n");
        if let Some(ct) = resp.content_type.filter(|ct| header_safe(ct)) {
            out.extend_from_slice(b"Content-Type: ");
            out.extend_from_slice(ct.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    for (name, value) in &resp.headers {
        if header_safe(name) && header_safe(value) && !name.is_empty() {
            out.extend_from_slice(name.as_bytes());
            out.extend_from_slice(b": ");
            out.extend_from_slice(value.as_bytes());
            out.extend_from_slice(b"\r\n");
        }
    }
    match conn {
        ConnHeader::None => {}
        ConnHeader::Close => out.extend_from_slice(b"Connection: close\r\n"),
        ConnHeader::KeepAlive => out.extend_from_slice(b"Connection: keep-alive\r\n"),
    }
    out.extend_from_slice(b"\r\n");
    body && !head_method && !resp.body.is_empty()
}

fn header_safe(v: &str) -> bool {
    !v.bytes().any(|b| b == b'\r' || b == b'\n')
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::chunked::MAX_CHUNK_LINE;

    fn meta(buf: &[u8]) -> Result<Option<HeadMeta>, HttpError> {
        with_head(buf, 64, 16 * 1024, |_, m| m)
    }

    #[test]
    fn a_complete_head_is_parsed_with_its_framing() {
        let raw = b"POST /mcp?x=1 HTTP/1.1\r\nHost: a\r\ncontent-length: 5\r\n\r\nhello";
        let got = with_head(raw, 64, 16 * 1024, |h, m| {
            assert_eq!(h.method, "POST");
            assert_eq!(h.path, "/mcp");
            assert_eq!(h.query, Some("x=1"));
            assert_eq!(h.header("HOST"), Some(&b"a"[..]));
            assert_eq!(h.content_length, Some(5));
            m
        })
        .unwrap()
        .unwrap();
        assert_eq!(got.head_len, raw.len() - 5);
        assert_eq!(got.framing, Framing::Length(5));
        assert!(got.keep_alive);
    }

    #[test]
    fn the_absolute_form_names_its_path() {
        let raw = b"POST http://example.com:8080/mcp?a=b HTTP/1.1\r\nHost: h\r\n\r\n";
        let (path, query) = with_head(raw, 8, 1024, |h, _| {
            (h.path.to_string(), h.query.map(str::to_string))
        })
        .unwrap()
        .unwrap();
        assert_eq!((path.as_str(), query.as_deref()), ("/mcp", Some("a=b")));
        let path = with_head(
            b"GET HTTP://h HTTP/1.1\r\nHost: h\r\n\r\n",
            8,
            1024,
            |h, _| h.path.to_string(),
        );
        assert_eq!(path.unwrap().unwrap(), "/");
    }

    #[test]
    fn the_head_refuses_a_repeated_singleton_and_a_missing_host() {
        use crate::gate::FieldError;
        assert_eq!(
            meta(b"POST / HTTP/1.1\r\nHost: a\r\nhost: b\r\n\r\n"),
            Err(HttpError::Field(FieldError::Repeated("Host")))
        );
        assert_eq!(
            meta(b"POST / HTTP/1.1\r\nContent-Length: 0\r\n\r\n"),
            Err(HttpError::Field(FieldError::MissingHost))
        );
        assert!(matches!(meta(b"POST / HTTP/1.0\r\n\r\n"), Ok(Some(_))));
    }

    #[test]
    fn a_partial_head_asks_for_more() {
        assert_eq!(meta(b"POST /mcp HTTP/1.1\r\nHost: a\r\n"), Ok(None));
    }

    #[test]
    fn framing_errors_are_bad_requests() {
        for raw in [
            &b"POST / HTTP/1.1\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n"[..],
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip, chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: gzip\r\n\r\n",
            b"POST / HTTP/1.1\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.0\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.0\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: -1\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 1,1\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            b"POST / HTTP/1.1\r\nContent-Length: 99999999999999999999\r\n\r\n",
            b"POST / HTTP/2.0\r\n\r\n",
            b"PO ST / HTTP/1.1\r\n\r\n",
        ] {
            assert_eq!(
                meta(raw),
                Err(HttpError::BadRequest),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
    }

    #[test]
    fn limits_on_the_head_are_head_too_large() {
        let mut raw = b"GET / HTTP/1.1\r\n".to_vec();
        for i in 0..65 {
            raw.extend_from_slice(format!("x-{i}: y\r\n").as_bytes());
        }
        raw.extend_from_slice(b"\r\n");
        assert_eq!(meta(&raw), Err(HttpError::HeadTooLarge));
        let long = format!("GET / HTTP/1.1\r\nx: {}\r\n", "a".repeat(20_000));
        assert_eq!(meta(long.as_bytes()), Err(HttpError::HeadTooLarge));
        let long = format!("GET / HTTP/1.1\r\nx: {}\r\n\r\n", "a".repeat(20_000));
        assert_eq!(meta(long.as_bytes()), Err(HttpError::HeadTooLarge));
    }

    #[test]
    fn keep_alive_follows_the_version_and_connection_header() {
        let m = |raw: &[u8]| meta(raw).unwrap().unwrap().keep_alive;
        assert!(m(b"GET / HTTP/1.1\r\nHost: h\r\n\r\n"));
        assert!(!m(
            b"GET / HTTP/1.1\r\nHost: h\r\nConnection: Close\r\n\r\n"
        ));
        assert!(!m(
            b"GET / HTTP/1.1\r\nHost: h\r\nConnection: foo, close\r\n\r\n"
        ));
        assert!(!m(b"GET / HTTP/1.0\r\n\r\n"));
        assert!(m(b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n"));
    }

    fn dechunk(raw: &[u8], limit: usize) -> Result<(Vec<u8>, Vec<u8>), HttpError> {
        let mut buf = raw.to_vec();
        let mut d = ChunkedDecoder::new(0, limit);
        if !d.decode(&mut buf)? {
            return Err(HttpError::BadRequest);
        }
        Ok((buf[..d.write].to_vec(), buf[d.read..].to_vec()))
    }

    #[test]
    fn chunked_bodies_decode_in_place() {
        let (body, rest) = dechunk(
            b"5\r\nhello\r\n1;a=b\r\n \r\n6\r\nworld!\r\n0\r\n\r\nNEXT",
            100,
        )
        .unwrap();
        assert_eq!(body, b"hello world!");
        assert_eq!(rest, b"NEXT");
        let (body, rest) = dechunk(
            b"A ; ext=\"q\"\r\n0123456789\r\n0\r\nX-T: 1\r\nY: 2\r\n\r\n",
            100,
        )
        .unwrap();
        assert_eq!(body, b"0123456789");
        assert!(rest.is_empty());
    }

    #[test]
    fn chunked_bodies_decode_across_reads_byte_by_byte() {
        let raw = b"3\r\nabc\r\n10\r\n0123456789abcdef\r\n0\r\nT: v\r\n\r\nGET";
        let mut buf = Vec::new();
        let mut d = ChunkedDecoder::new(0, 100);
        let mut done = false;
        for &b in raw.iter() {
            // As the connection does: the undecoded tail moves down to the
            // end of the body before more bytes are appended.
            d.compact(&mut buf);
            buf.push(b);
            if d.decode(&mut buf).unwrap() {
                done = true;
                break;
            }
        }
        assert!(done);
        assert_eq!(&buf[..d.write], b"abc0123456789abcdef");
    }

    #[test]
    fn malformed_chunk_framing_is_a_bad_request() {
        for raw in [
            &b"x\r\nabc\r\n0\r\n\r\n"[..],
            b"\r\n",
            b"3 x\r\nabc\r\n0\r\n\r\n",
            b"3\nabc\r\n0\r\n\r\n",
            b"3\r\nabcd\r\n0\r\n\r\n",
            b"11111111111111111\r\n",
            b"-1\r\n",
            b"0\r\nbad trailer\r\n\r\n",
        ] {
            assert_eq!(
                dechunk(raw, 1 << 20).map(|_| ()),
                Err(HttpError::BadRequest),
                "{}",
                String::from_utf8_lossy(raw)
            );
        }
        let long = format!("1;{}\r\n", "e".repeat(MAX_CHUNK_LINE));
        assert_eq!(
            dechunk(long.as_bytes(), 100).map(|_| ()),
            Err(HttpError::BadRequest)
        );
        let partial = "1".repeat(MAX_CHUNK_LINE);
        let mut d = ChunkedDecoder::new(0, 100);
        assert_eq!(
            d.decode(&mut partial.into_bytes()),
            Err(HttpError::BadRequest)
        );
    }

    #[test]
    fn a_chunked_body_over_the_limit_is_refused_at_the_chunk_size() {
        assert_eq!(
            dechunk(b"4\r\nabcd\r\n4\r\nefgh\r\n0\r\n\r\n", 6).map(|_| ()),
            Err(HttpError::BodyTooLarge { limit: 6 })
        );
        assert!(dechunk(b"3\r\nabc\r\n3\r\ndef\r\n0\r\n\r\n", 6).is_ok());
        let mut d = ChunkedDecoder::new(0, 6);
        assert_eq!(
            d.decode(&mut b"ffffffff\r\n".to_vec()),
            Err(HttpError::BodyTooLarge { limit: 6 })
        );
    }

    #[test]
    fn framing_is_the_same_whatever_the_read_size() {
        let limits = FrameLimits {
            max_headers: 8,
            max_head_bytes: 1024,
            body_limit: 64,
        };
        let raw = b"POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\nT: 1\r\n\r\nNEXT";
        let whole = frame_request(raw, raw.len(), limits).unwrap().unwrap();
        assert_eq!(whole.body, b"abcde");
        assert_eq!(whole.consumed, raw.len() - 4);
        assert_eq!(
            (whole.method.as_str(), whole.path.as_str()),
            ("POST", "/mcp")
        );
        for size in 1..raw.len() {
            assert_eq!(
                frame_request(raw, size, limits),
                Ok(Some(whole.clone())),
                "{size}"
            );
        }
        let length = b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\n\r\nabcdef";
        let framed = frame_request(length, 2, limits).unwrap().unwrap();
        assert_eq!(
            (framed.body.as_slice(), framed.consumed),
            (&b"abc"[..], length.len() - 3)
        );
        assert_eq!(
            frame_request(&length[..length.len() - 4], 2, limits),
            Ok(None)
        );
        assert_eq!(
            frame_request(
                b"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 65\r\n\r\n",
                5,
                limits
            ),
            Err(HttpError::BodyTooLarge { limit: 64 })
        );
    }

    #[test]
    fn responses_carry_length_type_and_connection() {
        let mut out = Vec::new();
        let mut r = Response::json(200, b"{}".to_vec());
        r.headers.push(("X-A", "1".to_string()));
        r.headers.push(("X-Bad", "1\r\nInjected: yes".to_string()));
        assert!(encode_head(&mut out, &r, ConnHeader::Close, false));
        assert_eq!(
            out,
            b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Type: application/json\r\nX-A: 1\r\nConnection: close\r\n\r\n"
        );
        out.clear();
        assert!(!encode_head(
            &mut out,
            &Response::json(204, b"x".to_vec()),
            ConnHeader::None,
            false
        ));
        assert_eq!(out, b"HTTP/1.1 204 No Content\r\n\r\n");
        out.clear();
        assert!(!encode_head(
            &mut out,
            &Response::empty(413),
            ConnHeader::KeepAlive,
            false
        ));
        assert_eq!(
            out,
            b"HTTP/1.1 413 Content Too Large\r\nContent-Length: 0\r\nConnection: keep-alive\r\n\r\n"
        );
    }
}
