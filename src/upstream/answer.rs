//! Reading the upstream's answer: its head (httparse), then its body as
//! it arrives — `Content-Length`, chunked (decoded by the one chunked
//! decoder, [`crate::http1::chunked`], re-framed for the client by the
//! connection layer) or delimited by the close.

use super::{connection_tokens, is_hop_by_hop};
use crate::http1::chunked::{self, ChunkError, Rules, Step};
use crate::http1::{content_length, is_chunked_coding, lists_token};

/// The most headers an upstream answer may carry.
const MAX_ANSWER_HEADERS: usize = 128;
/// The longest head accepted from the upstream.
pub const MAX_ANSWER_HEAD: usize = 64 * 1024;

/// The upstream sent something that is not a valid HTTP/1.x answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Malformed;

/// How the body of an answer is delimited.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyFraming {
    /// No body (1xx, 204, 304, or `Content-Length: 0`).
    None,
    /// `Content-Length`: this many bytes.
    Length(u64),
    /// `Transfer-Encoding: chunked`.
    Chunked,
    /// Until the upstream closes the connection.
    UntilClose,
}

/// An answer's head, as the client will see it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AnswerHead {
    pub status: u16,
    /// The end-to-end headers, each `Name: value\r\n`, in the upstream's
    /// order; framing and hop-by-hop headers left out (the connection
    /// layer writes its own).
    pub headers: Vec<u8>,
    pub framing: BodyFraming,
    /// The upstream keeps the connection open after this answer.
    pub keep_alive: bool,
    /// `Content-Type: text/event-stream`.
    pub event_stream: bool,
}

/// What the bytes at the start of a buffer hold.
#[derive(Debug)]
pub enum Parsed {
    /// Not a whole head yet.
    Partial,
    /// An interim (1xx) answer of this many bytes: skipped.
    Interim(usize),
    /// The final answer's head and its length.
    Final(AnswerHead, usize),
}

/// Parses an answer head at the start of `buf`. `Err`: not HTTP/1.x, an
/// invalid or conflicting framing, or a head over `MAX_ANSWER_HEAD`.
pub fn parse_head(buf: &[u8]) -> Result<Parsed, Malformed> {
    let mut storage = [httparse::EMPTY_HEADER; MAX_ANSWER_HEADERS];
    let mut answer = httparse::Response::new(&mut storage);
    let len = match answer.parse(buf) {
        // Over the bound even when whole: the verdict does not hang on
        // whether the head came in one read.
        Ok(httparse::Status::Complete(len)) if len <= MAX_ANSWER_HEAD => len,
        Ok(httparse::Status::Partial) if buf.len() <= MAX_ANSWER_HEAD => {
            return Ok(Parsed::Partial);
        }
        _ => return Err(Malformed),
    };
    let (Some(status), Some(version)) = (answer.code, answer.version) else {
        return Err(Malformed);
    };
    if status == 101 {
        // Never asked for: nothing to relay it as.
        return Err(Malformed);
    }
    if (100..200).contains(&status) {
        return Ok(Parsed::Interim(len));
    }
    let named = connection_tokens(answer.headers.iter().map(|h| (h.name.as_bytes(), h.value)));
    let mut length: Option<u64> = None;
    let mut chunked = false;
    let mut close = version == 0;
    let mut event_stream = false;
    let mut accel = false;
    let mut headers = Vec::with_capacity(256);
    for h in answer.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(b"content-length") {
            let n = content_length(h.value).ok_or(Malformed)?;
            if length.is_some_and(|old| old != n) {
                return Err(Malformed);
            }
            length = Some(n);
            continue;
        }
        if name.eq_ignore_ascii_case(b"transfer-encoding") {
            // Only chunked is understood; anything else cannot be relayed.
            if chunked || !is_chunked_coding(h.value) {
                return Err(Malformed);
            }
            chunked = true;
            continue;
        }
        if name.eq_ignore_ascii_case(b"connection") {
            if lists_token(h.value, b"close") {
                close = true;
            } else if version == 0 && lists_token(h.value, b"keep-alive") {
                close = false;
            }
        }
        if is_hop_by_hop(name) || named.iter().any(|t| t.eq_ignore_ascii_case(name)) {
            continue;
        }
        if name.eq_ignore_ascii_case(b"content-type") {
            let media = h.value.split(|&b| b == b';').next().unwrap_or_default();
            event_stream = media
                .trim_ascii()
                .eq_ignore_ascii_case(b"text/event-stream");
        }
        accel |= name.eq_ignore_ascii_case(b"x-accel-buffering");
        headers.extend_from_slice(name);
        headers.extend_from_slice(b": ");
        headers.extend_from_slice(h.value);
        headers.extend_from_slice(b"\r\n");
    }
    if event_stream && !accel {
        // Proxies in front of the gateway must not hold events back.
        headers.extend_from_slice(b"X-Accel-Buffering: no\r\n");
    }
    // HTTP/1.0 has no transfer coding (RFC 9112, 6.1): its framing is
    // faulty, so the answer is relayed as decoded and the connection is
    // not used again, whatever the upstream said of keeping it.
    close |= chunked && version == 0;
    let framing = if status == 204 || status == 304 {
        BodyFraming::None
    } else if chunked {
        if length.is_some() {
            return Err(Malformed);
        }
        BodyFraming::Chunked
    } else {
        match length {
            Some(0) => BodyFraming::None,
            Some(n) => BodyFraming::Length(n),
            None => BodyFraming::UntilClose,
        }
    };
    Ok(Parsed::Final(
        AnswerHead {
            status,
            headers,
            framing,
            keep_alive: !close && framing != BodyFraming::UntilClose,
            event_stream,
        },
        len,
    ))
}

/// Where a body being read stands.
#[derive(Debug)]
pub enum BodyState {
    /// This many bytes still to come.
    Length(u64),
    /// Within a chunked body: where its chunk lines stand.
    Chunked(chunked::Decoder),
    /// Everything until the upstream closes the connection.
    UntilClose,
    /// The body is complete.
    Done,
}

impl BodyState {
    /// The start of a body delimited by `framing`.
    pub fn new(framing: BodyFraming) -> BodyState {
        match framing {
            BodyFraming::None | BodyFraming::Length(0) => BodyState::Done,
            BodyFraming::Length(n) => BodyState::Length(n),
            BodyFraming::Chunked => {
                BodyState::Chunked(chunked::Decoder::new(Rules::ANSWER, u64::MAX))
            }
            BodyFraming::UntilClose => BodyState::UntilClose,
        }
    }

    /// Whether the whole body has been taken.
    pub fn is_done(&self) -> bool {
        matches!(self, BodyState::Done)
    }

    /// Takes body bytes from `input`, appending the data to `out`; returns
    /// how many bytes of `input` it used (an incomplete chunk line is left).
    pub fn take(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<usize, Malformed> {
        match self {
            BodyState::Done => Ok(0),
            BodyState::UntilClose => {
                out.extend_from_slice(input);
                Ok(input.len())
            }
            BodyState::Length(remaining) => {
                let n = (input.len() as u64).min(*remaining) as usize;
                out.extend_from_slice(&input[..n]);
                *remaining -= n as u64;
                if *remaining == 0 {
                    *self = BodyState::Done;
                }
                Ok(n)
            }
            BodyState::Chunked(chunks) => {
                let mut at = 0;
                loop {
                    match chunks
                        .step(&input[at..])
                        .map_err(|_: ChunkError| Malformed)?
                    {
                        Step::Framing(n) => at += n,
                        Step::Data(n) => {
                            out.extend_from_slice(&input[at..at + n]);
                            at += n;
                        }
                        Step::More => return Ok(at),
                        Step::Done => {
                            *self = BodyState::Done;
                            return Ok(at);
                        }
                    }
                }
            }
        }
    }

    /// The upstream closed the connection: the end of a close-delimited
    /// body, a truncated one otherwise.
    pub fn at_eof(&mut self) -> Result<(), Malformed> {
        match self {
            BodyState::UntilClose | BodyState::Done => {
                *self = BodyState::Done;
                Ok(())
            }
            _ => Err(Malformed),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http1::chunked::{MAX_CHUNK_LINE, MAX_TRAILERS as MAX_ANSWER_TRAILERS};

    fn head(text: &str) -> (AnswerHead, usize) {
        match parse_head(text.as_bytes()).unwrap() {
            Parsed::Final(h, n) => (h, n),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_head_keeps_end_to_end_headers_and_reads_the_framing() {
        let text = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 5\r\nConnection: X-Hop\r\nX-Hop: 1\r\nMcp-Session-Id: s\r\n\r\nhello";
        let (h, n) = head(text);
        assert_eq!(n, text.len() - "hello".len());
        assert_eq!(h.framing, BodyFraming::Length(5));
        assert!(h.keep_alive && !h.event_stream);
        assert_eq!(
            h.headers,
            b"Content-Type: application/json\r\nMcp-Session-Id: s\r\n"
        );
        let (h, _) = head(
            "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n",
        );
        assert_eq!(h.framing, BodyFraming::Chunked);
        assert!(h.event_stream);
        assert!(
            String::from_utf8(h.headers)
                .unwrap()
                .ends_with("X-Accel-Buffering: no\r\n")
        );
        let (h, _) = head("HTTP/1.1 200 OK\r\n\r\n");
        assert_eq!(h.framing, BodyFraming::UntilClose);
        assert!(!h.keep_alive);
        let (h, _) =
            head("HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
        assert_eq!(h.framing, BodyFraming::None);
        assert!(!h.keep_alive);
        let (h, _) =
            head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nTransfer-Encoding: chunked\r\n\r\n");
        assert_eq!(h.framing, BodyFraming::Chunked);
        assert!(
            !h.keep_alive,
            "a chunked HTTP/1.0 answer is the connection's last"
        );
        let (h, _) = head("HTTP/1.0 200 OK\r\nConnection: keep-alive\r\nContent-Length: 0\r\n\r\n");
        assert!(h.keep_alive);
        assert!(matches!(
            parse_head(b"HTTP/1.1 100 Continue\r\n\r\n"),
            Ok(Parsed::Interim(25))
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nContent-"),
            Ok(Parsed::Partial)
        ));
        let mut long = b"HTTP/1.1 200 OK\r\nX-Pad: ".to_vec();
        long.resize(MAX_ANSWER_HEAD + 1, b'p');
        long.extend_from_slice(b"\r\n\r\n");
        assert!(parse_head(&long).is_err(), "a head over the bound, whole");
        assert!(parse_head(&long[..MAX_ANSWER_HEAD + 1]).is_err(), "in part");
        for bad in [
            "SSH-2.0\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\n",
            "HTTP/1.1 200 OK\r\nContent-Length: 1\r\nTransfer-Encoding: chunked\r\n\r\n",
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n",
        ] {
            assert!(parse_head(bad.as_bytes()).is_err(), "{bad}");
        }
    }

    #[test]
    fn chunked_bodies_are_decoded_across_any_split() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n";
        for split in 0..wire.len() {
            let mut state = BodyState::new(BodyFraming::Chunked);
            let mut out = Vec::new();
            let mut pending = wire[..split].to_vec();
            let used = state.take(&pending, &mut out).unwrap();
            pending.drain(..used);
            pending.extend_from_slice(&wire[split..]);
            let used = state.take(&pending, &mut out).unwrap();
            assert_eq!(used, pending.len(), "split {split}");
            assert!(state.is_done(), "split {split}");
            assert_eq!(out, b"hello world");
        }
        let mut state = BodyState::new(BodyFraming::Chunked);
        assert!(state.take(b"zz\r\n", &mut Vec::new()).is_err());
    }

    /// A chunked body fed in reads of `read` bytes: its data, once whole.
    fn decode(wire: &[u8], read: usize) -> Result<Vec<u8>, Malformed> {
        let mut state = BodyState::new(BodyFraming::Chunked);
        let (mut pending, mut out) = (Vec::new(), Vec::new());
        for piece in wire.chunks(read) {
            pending.extend_from_slice(piece);
            let used = state.take(&pending, &mut out)?;
            pending.drain(..used);
        }
        assert!(state.is_done());
        Ok(out)
    }

    #[test]
    fn a_chunk_line_over_the_bound_is_refused_however_it_arrives() {
        let long = format!("1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(MAX_CHUNK_LINE));
        let short = format!("1;{}\r\nx\r\n0\r\n\r\n", "e".repeat(MAX_CHUNK_LINE - 4));
        for read in [1, 100, MAX_CHUNK_LINE, 2 * MAX_CHUNK_LINE] {
            assert_eq!(decode(long.as_bytes(), read), Err(Malformed), "read {read}");
            assert_eq!(decode(short.as_bytes(), read).unwrap(), b"x", "read {read}");
        }
    }

    #[test]
    fn trailers_over_their_bound_are_refused_however_they_arrive() {
        // Lines of 1,000 bytes each (CRLF included); the final empty line
        // counts its 2 bytes too.
        let line = format!("X-T: {}\r\n", "t".repeat(1000 - 7));
        let with = |lines: usize| format!("1\r\nx\r\n0\r\n{}\r\n", line.repeat(lines));
        let (within, over) = (with(8), with(9));
        for read in [1, 7, 1000, MAX_ANSWER_TRAILERS + 1] {
            assert_eq!(
                decode(within.as_bytes(), read).unwrap(),
                b"x",
                "read {read}"
            );
            assert_eq!(decode(over.as_bytes(), read), Err(Malformed), "read {read}");
        }
    }

    #[test]
    fn a_length_body_ends_at_its_length() {
        let mut state = BodyState::new(BodyFraming::Length(3));
        let mut out = Vec::new();
        assert_eq!(state.take(b"abcdef", &mut out).unwrap(), 3);
        assert!(state.is_done());
        assert_eq!(out, b"abc");
        assert!(BodyState::new(BodyFraming::Length(3)).at_eof().is_err());
        assert!(BodyState::new(BodyFraming::UntilClose).at_eof().is_ok());
    }
}
