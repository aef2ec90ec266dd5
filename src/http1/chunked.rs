//! Chunked transfer coding (RFC 9112, 7.1): the one decoder both sides
//! use, the chunk size line, and the encoding of a chunk.
//!
//! The decoder is incremental and owns no buffer: [`Decoder::step`] looks
//! at the bytes not yet decoded and says what the next of them are (chunk
//! framing to skip, chunk data to take, or not enough yet), so the server
//! can move the data down in place over the framing while the forwarder
//! copies it out as it arrives. Its verdict never depends on how the bytes
//! arrive: a line is looked for within its bound only, and trailers are
//! counted by whole lines.

use super::{is_bad_ctl, trim_ows};

/// The longest chunk size line (size, extensions, line end) accepted.
pub const MAX_CHUNK_LINE: usize = 4096;
/// The most bytes of trailer section accepted (trailers are dropped): a
/// peer that keeps sending them holds its message open, unfinished.
pub const MAX_TRAILERS: usize = 8192;

/// Why a chunked body cannot be decoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChunkError {
    /// Not valid chunked framing, or a line or trailers over their bounds.
    Malformed,
    /// The decoded body would grow over the decoder's limit.
    TooLarge,
}

/// How strictly a side reads the framing: a client's request is held to
/// the grammar, an upstream's answer is taken as upstreams send it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Rules {
    /// Lines end in CRLF only, chunk extensions and trailer lines hold no
    /// control bytes, and a trailer line is a field (`name: value`). Else
    /// a bare LF ends a line and trailers are dropped unread.
    pub strict: bool,
    /// The most hex digits a chunk size may have.
    pub max_size_digits: usize,
    /// The longest trailer line.
    pub max_trailer_line: usize,
}

impl Rules {
    /// A client's request (the server).
    pub const REQUEST: Rules = Rules {
        strict: true,
        max_size_digits: 16,
        max_trailer_line: MAX_TRAILERS,
    };
    /// An upstream's answer (the forwarder).
    pub const ANSWER: Rules = Rules {
        strict: false,
        max_size_digits: 15,
        max_trailer_line: MAX_CHUNK_LINE,
    };
}

/// What the next bytes not yet decoded are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// This many bytes of framing (size line, line end, trailer): skipped.
    Framing(usize),
    /// This many bytes of chunk data: the caller takes them.
    Data(usize),
    /// Not enough bytes to say: the caller reads more.
    More,
    /// The body and its trailers are complete; what follows is not its.
    Done,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Size,
    Data(u64),
    DataEnd,
    Trailer,
    Done,
}

/// An incremental chunked decoder.
#[derive(Debug, Clone)]
pub struct Decoder {
    state: State,
    rules: Rules,
    /// The most decoded bytes accepted.
    limit: u64,
    /// Decoded bytes so far.
    decoded: u64,
    /// Trailer bytes so far (whole lines).
    trailer_bytes: usize,
}

impl Decoder {
    /// A decoder at the start of a body, refusing one that decodes to
    /// more than `limit` bytes (checked at each chunk's size line).
    pub fn new(rules: Rules, limit: u64) -> Decoder {
        Decoder {
            state: State::Size,
            rules,
            limit,
            decoded: 0,
            trailer_bytes: 0,
        }
    }

    pub fn is_done(&self) -> bool {
        self.state == State::Done
    }

    /// What the start of `avail` (the bytes not yet decoded) is. After a
    /// `Framing(n)` or `Data(n)` the caller has used those `n` bytes and
    /// calls again with what follows them.
    pub fn step(&mut self, avail: &[u8]) -> Result<Step, ChunkError> {
        match self.state {
            State::Done => Ok(Step::Done),
            State::Size => {
                let Some((line, used)) = self.line(avail, MAX_CHUNK_LINE, MAX_CHUNK_LINE)? else {
                    return Ok(Step::More);
                };
                let size = chunk_size(line, self.rules)?;
                self.state = if size == 0 {
                    State::Trailer
                } else if self.decoded.saturating_add(size) > self.limit {
                    return Err(ChunkError::TooLarge);
                } else {
                    State::Data(size)
                };
                Ok(Step::Framing(used))
            }
            State::Data(remaining) => {
                let n = (avail.len() as u64).min(remaining) as usize;
                if n == 0 {
                    return Ok(Step::More);
                }
                self.decoded += n as u64;
                self.state = match remaining - n as u64 {
                    0 => State::DataEnd,
                    left => State::Data(left),
                };
                Ok(Step::Data(n))
            }
            State::DataEnd => match avail {
                [b'\r', b'\n', ..] => {
                    self.state = State::Size;
                    Ok(Step::Framing(2))
                }
                [] | [b'\r'] => Ok(Step::More),
                _ => Err(ChunkError::Malformed),
            },
            State::Trailer => {
                let left = MAX_TRAILERS - self.trailer_bytes;
                let Some((line, used)) = self.line(avail, self.rules.max_trailer_line, left)?
                else {
                    return Ok(Step::More);
                };
                self.trailer_bytes += used;
                if self.trailer_bytes > MAX_TRAILERS {
                    return Err(ChunkError::Malformed);
                }
                if line.is_empty() {
                    self.state = State::Done;
                } else if self.rules.strict
                    && (!line.contains(&b':') || line.iter().any(|&b| is_bad_ctl(b)))
                {
                    return Err(ChunkError::Malformed);
                }
                Ok(Step::Framing(used))
            }
        }
    }

    /// The line at the start of `avail` without its end, and the bytes it
    /// takes with its end; `None` while it is not whole. Its end is looked
    /// for within `max` bytes only, so a longer line is refused however it
    /// arrives; so is a partial line already over `left`.
    fn line<'a>(
        &self,
        avail: &'a [u8],
        max: usize,
        left: usize,
    ) -> Result<Option<(&'a [u8], usize)>, ChunkError> {
        let window = &avail[..avail.len().min(max)];
        let Some(nl) = memchr::memchr(b'\n', window) else {
            return if avail.len() >= max || avail.len() > left {
                Err(ChunkError::Malformed)
            } else {
                Ok(None)
            };
        };
        let line = match avail[..nl].strip_suffix(b"\r") {
            Some(line) => line,
            None if self.rules.strict => return Err(ChunkError::Malformed),
            None => &avail[..nl],
        };
        Ok(Some((line, nl + 1)))
    }
}

/// The size a chunk size line (its end stripped) names: hex digits, then
/// optional whitespace and nothing or `;` extensions (not interpreted).
pub fn chunk_size(line: &[u8], rules: Rules) -> Result<u64, ChunkError> {
    let digits = line.iter().take_while(|b| b.is_ascii_hexdigit()).count();
    if digits == 0 || digits > rules.max_size_digits {
        return Err(ChunkError::Malformed);
    }
    let rest = &line[digits..];
    let rest = if rules.strict {
        trim_ows(rest)
    } else {
        rest.trim_ascii()
    };
    if !rest.is_empty() && (rest[0] != b';' || rules.strict && rest.iter().any(|&b| is_bad_ctl(b)))
    {
        return Err(ChunkError::Malformed);
    }
    Ok(line[..digits].iter().fold(0u64, |n, &b| {
        (n << 4) | u64::from((b as char).to_digit(16).unwrap_or(0))
    }))
}

/// Appends `data` to `out` as one chunk (nothing for no data: an empty
/// chunk would end the body).
pub fn encode_chunk(out: &mut Vec<u8>, data: &[u8]) {
    if data.is_empty() {
        return;
    }
    let mut digits = [0u8; 16];
    let mut i = digits.len();
    let mut n = data.len();
    loop {
        i -= 1;
        digits[i] = b"0123456789abcdef"[n & 0xf];
        n >>= 4;
        if n == 0 {
            break;
        }
    }
    out.extend_from_slice(&digits[i..]);
    out.extend_from_slice(b"\r\n");
    out.extend_from_slice(data);
    out.extend_from_slice(b"\r\n");
}

/// The last chunk and the empty trailer section: the end of a body.
pub const LAST_CHUNK: &[u8] = b"0\r\n\r\n";

#[cfg(test)]
mod tests {
    use super::*;

    /// `wire` decoded in reads of `read` bytes by copying the data out.
    fn decode(wire: &[u8], read: usize, rules: Rules) -> Result<Vec<u8>, ChunkError> {
        let mut d = Decoder::new(rules, u64::MAX);
        let (mut pending, mut out) = (Vec::new(), Vec::new());
        for piece in wire.chunks(read.max(1)) {
            pending.extend_from_slice(piece);
            let mut at = 0;
            loop {
                match d.step(&pending[at..])? {
                    Step::Framing(n) => at += n,
                    Step::Data(n) => {
                        out.extend_from_slice(&pending[at..at + n]);
                        at += n;
                    }
                    Step::More | Step::Done => break,
                }
            }
            pending.drain(..at);
        }
        assert!(d.is_done());
        Ok(out)
    }

    #[test]
    fn a_body_decodes_alike_across_any_split() {
        let wire = b"5;ext=1\r\nhello\r\n1\r\n \r\n5\r\nworld\r\n0\r\nTrailer: x\r\n\r\n";
        for rules in [Rules::REQUEST, Rules::ANSWER] {
            for read in 1..wire.len() {
                assert_eq!(decode(wire, read, rules).unwrap(), b"hello world");
            }
        }
    }

    #[test]
    fn a_request_is_held_to_the_grammar_an_answer_is_taken_as_sent() {
        for wire in [
            &b"3\nabc\r\n0\r\n\r\n"[..],
            b"1;\x01\r\nx\r\n0\r\n\r\n",
            b"1\r\nx\r\n0\r\nbad\r\n\r\n",
        ] {
            assert_eq!(decode(wire, 64, Rules::REQUEST), Err(ChunkError::Malformed));
            assert_eq!(
                decode(wire, 64, Rules::ANSWER).unwrap().len(),
                wire[0] as usize - b'0' as usize
            );
        }
    }

    #[test]
    fn the_limit_is_checked_at_the_size_line() {
        let mut d = Decoder::new(Rules::REQUEST, 6);
        assert_eq!(d.step(b"7\r\n"), Err(ChunkError::TooLarge));
    }

    #[test]
    fn chunks_encode_to_what_decodes() {
        let mut out = Vec::new();
        encode_chunk(&mut out, &[b'a'; 300]);
        encode_chunk(&mut out, b"");
        out.extend_from_slice(LAST_CHUNK);
        assert!(out.starts_with(b"12c\r\n"));
        assert_eq!(decode(&out, 7, Rules::REQUEST).unwrap(), [b'a'; 300]);
    }
}
