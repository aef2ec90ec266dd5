//! The fast path's unchecked steps, kept here to be audited together:
//! reading a padded copy of the body without a bounds check at each byte
//! ([`Cursor`]), finding where a string stops sixteen bytes at a time
//! (SSE2, which every x86-64 processor has), and taking the bytes of an
//! ASCII string as text without checking them again. The same scan finds,
//! for the writer of refusals, the next byte a JSON string must escape
//! (`escape_stop`).
//!
//! The scan is checked in debug builds against its plain definition; text
//! is taken only from bytes this module's own scan found ASCII; and every
//! read without a bounds check is of a cursor's padded copy, at a position
//! the cursor's invariant keeps inside it.

/// Zero bytes after the body in a cursor's copy. No JSON body holds a zero
/// byte, and every string scan stops at one, so the parse takes nothing at
/// the body's end; and from any position up to the end, a sixteen-byte
/// step and the longest literal (`false`) stay inside the copy.
const PADDING: usize = 16;

/// A reader over a padded copy of a body, for the fast path.
///
/// Invariant: `at <= len`, and `bytes` is the body's `len` bytes followed by
/// [`PADDING`] zeros. Every method keeps it: the cursor only moves past
/// bytes it has read and found not zero, and a byte that is not zero lies
/// before `len` (the byte at `len` is zero). So a read at `at`, and a read
/// of sixteen bytes from any position up to `len`, stays inside `bytes`.
///
/// It is `Copy` and passed by value to the steps kept out of line, so that
/// its position stays in a register rather than in memory.
#[derive(Clone, Copy)]
pub(super) struct Cursor<'a> {
    bytes: &'a [u8],
    len: usize,
    at: usize,
}

impl<'a> Cursor<'a> {
    /// A cursor at the start of `body`, copied into `buffer` and padded.
    pub(super) fn new(buffer: &'a mut Vec<u8>, body: &[u8]) -> Cursor<'a> {
        buffer.clear();
        buffer.reserve(body.len() + PADDING);
        buffer.extend_from_slice(body);
        buffer.extend_from_slice(&[0; PADDING]);
        Cursor {
            bytes: buffer,
            len: body.len(),
            at: 0,
        }
    }

    /// The position in the body.
    #[inline(always)]
    pub(super) fn at(&self) -> usize {
        self.at
    }

    /// The body's length.
    #[inline(always)]
    pub(super) fn body_len(&self) -> usize {
        self.len
    }

    /// Whether the whole body has been read.
    #[inline(always)]
    pub(super) fn at_end(&self) -> bool {
        self.at == self.len
    }

    /// The byte at the cursor: 0 at the body's end.
    #[inline(always)]
    pub(super) fn peek(&self) -> u8 {
        debug_assert!(self.at <= self.len && self.len + PADDING == self.bytes.len());
        // SAFETY: `at <= len < bytes.len()` (the invariant).
        unsafe { *self.bytes.get_unchecked(self.at) }
    }

    /// Moves past `byte` when it is the byte at the cursor. (For a constant
    /// `byte` the test against zero is free, and after a `match` on
    /// [`Cursor::peek`] the whole test is.)
    #[inline(always)]
    pub(super) fn eat(&mut self, byte: u8) -> bool {
        if byte != 0 && self.peek() == byte {
            // A byte that is not zero lies before `len`: the invariant holds.
            self.at += 1;
            return true;
        }
        false
    }

    /// Moves past `word` when the body goes on with it.
    #[inline(always)]
    pub(super) fn eat_word<const N: usize>(&mut self, word: &[u8; N]) -> bool {
        const { assert!(N <= PADDING) };
        // SAFETY: `at <= len`, so `at + N <= len + PADDING = bytes.len()`.
        let here = unsafe { self.bytes.get_unchecked(self.at..self.at + N) };
        // Equal to a word without zeros: each of its bytes lies before `len`.
        let hit = here == word && !word.contains(&0);
        self.at += if hit { N } else { 0 };
        hit
    }

    /// Moves past the decimal digit at the cursor and gives its value.
    #[inline(always)]
    pub(super) fn eat_digit(&mut self) -> Option<u64> {
        let digit = self.peek().wrapping_sub(b'0');
        // A digit is not zero: the invariant holds.
        (digit < 10).then(|| {
            self.at += 1;
            u64::from(digit)
        })
    }

    /// Moves past JSON whitespace.
    #[inline(always)]
    pub(super) fn skip_whitespace(&mut self) {
        // Compact JSON, what clients send, has none: one comparison.
        loop {
            let byte = self.peek();
            if byte > b' ' || !matches!(byte, b' ' | b'\n' | b'\r' | b'\t') {
                break;
            }
            // Whitespace is not zero: the invariant holds.
            self.at += 1;
        }
    }

    /// The body's bytes from `from` to the cursor (`None` when `from` is
    /// past it).
    pub(super) fn read_since(&self, from: usize) -> Option<&'a [u8]> {
        self.bytes.get(from..self.at)
    }

    /// The string whose opening quote is at the cursor, when it has no
    /// escape and no control character and its text is UTF-8: its text,
    /// with the cursor moved past its closing quote. `None` otherwise (and
    /// when it has no end), the cursor then somewhere in the body.
    ///
    /// This is where the fast path checks UTF-8: the rest of a body it
    /// takes is structural ASCII, so a body whose strings pass is valid
    /// UTF-8 whole. An ASCII string (the common case) is checked by the
    /// same sixteen-byte scan that finds its end; one with other bytes is
    /// checked with `str::from_utf8`.
    #[inline(always)]
    pub(super) fn string(&mut self) -> Option<&'a str> {
        if !self.eat(b'"') {
            return None;
        }
        let start = self.at;
        let stop = self.stop_at_or_after::<true>(start);
        // SAFETY: `stop_at_or_after` gives a position at or after `start`
        // and at most `len`, so it indexes `bytes` and `start..stop` is a
        // range of it.
        let (stop_byte, between) = unsafe {
            (
                *self.bytes.get_unchecked(stop),
                self.bytes.get_unchecked(start..stop),
            )
        };
        match stop_byte {
            b'"' => {
                debug_assert!(between.is_ascii());
                // SAFETY: the scan with `NON_ASCII` stops at the first byte
                // of 0x80 or above, so every byte before `stop` is ASCII,
                // and ASCII is UTF-8.
                let text = unsafe { std::str::from_utf8_unchecked(between) };
                // A quote is not zero, so `stop < len`.
                self.at = stop + 1;
                Some(text)
            }
            0x80.. => {
                let (text, end) = self.non_ascii_string(start, stop)?;
                // A quote is not zero, so `end < len`.
                self.at = end + 1;
                Some(text)
            }
            _ => None,
        }
    }

    /// The rest of [`Cursor::string`] for a string with a byte of 0x80 or
    /// above at `from`: its text and the position of its closing quote
    /// (kept out of line: the scan's loop stays small where it runs for
    /// every string).
    #[inline(never)]
    fn non_ascii_string(self, start: usize, from: usize) -> Option<(&'a str, usize)> {
        let end = self.stop_at_or_after::<false>(from);
        if self.bytes[end] != b'"' {
            return None;
        }
        let text = std::str::from_utf8(&self.bytes[start..end]).ok()?;
        Some((text, end))
    }

    /// Position of the first `"`, `\` or control character at or after
    /// `from` (`from <= len`), or with `NON_ASCII` also of the first byte
    /// of 0x80 or above: at most `len`, where the padding's zero is one.
    #[inline(always)]
    fn stop_at_or_after<const NON_ASCII: bool>(&self, from: usize) -> usize {
        debug_assert!(from <= self.len);
        let mut at = from;
        #[cfg(target_arch = "x86_64")]
        loop {
            // SAFETY: `at <= len` (it starts there, and see below), so the
            // sixteen bytes from `at` end by `len + PADDING = bytes.len()`.
            let chunk = unsafe { &*self.bytes.as_ptr().add(at).cast::<[u8; 16]>() };
            let found = stops_in_16::<NON_ASCII>(chunk);
            if found != 0 {
                let stop = at + found.trailing_zeros() as usize;
                debug_assert!(stop <= self.len && is_stop::<NON_ASCII>(self.bytes[stop]));
                debug_assert!(
                    !self.bytes[from..stop]
                        .iter()
                        .any(|&byte| is_stop::<NON_ASCII>(byte))
                );
                return stop;
            }
            // No stop among these sixteen bytes, and the zero at `len` is
            // one: `len` lies past them, so `at + 16 <= len`.
            at += 16;
        }
        #[cfg(not(target_arch = "x86_64"))]
        {
            while !is_stop::<NON_ASCII>(self.bytes[at]) {
                at += 1;
            }
            at
        }
    }
}

/// Position of the first byte JSON escapes inside a string (`"`, `\`, or
/// a control character below 0x20) at or after `from`: where a writer of
/// JSON strings stops copying. `None` if there is none.
pub(crate) fn escape_stop(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut rest = bytes.get(from..)?;
    // Where `rest` starts in `bytes`.
    let at = |rest: &[u8]| bytes.len() - rest.len();
    #[cfg(target_arch = "x86_64")]
    while let Some((chunk, tail)) = rest.split_first_chunk::<16>() {
        let found = stops_in_16::<false>(chunk);
        if found != 0 {
            let stop = at(rest) + found.trailing_zeros() as usize;
            debug_assert!(is_stop::<false>(bytes[stop]));
            debug_assert!(!bytes[from..stop].iter().any(|&byte| is_stop::<false>(byte)));
            return Some(stop);
        }
        rest = tail;
    }
    #[cfg(target_arch = "x86_64")]
    if !rest.is_empty() {
        // The last few bytes in one more step: short texts (an escaped
        // key, a code) are all tail.
        let tail = at(rest);
        if let Some(start) = bytes.len().checked_sub(16) {
            // The last sixteen bytes, read again from before the tail: the
            // bits of the bytes scanned already are shifted out.
            let chunk = bytes[start..].first_chunk::<16>()?;
            let found = stops_in_16::<false>(chunk) >> (tail - start);
            return (found != 0).then(|| tail + found.trailing_zeros() as usize);
        }
        // Padded with a byte that never stops the scan, copied in fixed
        // sizes (a copy of a length known only at run time is a call).
        let mut padded = [b' '; 16];
        let n = rest.len();
        if n >= 8 {
            padded[..8].copy_from_slice(&rest[..8]);
            padded[n - 8..n].copy_from_slice(&rest[n - 8..]);
        } else if n >= 4 {
            padded[..4].copy_from_slice(&rest[..4]);
            padded[n - 4..n].copy_from_slice(&rest[n - 4..]);
        } else {
            for (slot, &byte) in padded.iter_mut().zip(rest) {
                *slot = byte;
            }
        }
        let found = stops_in_16::<false>(&padded);
        return (found != 0).then(|| tail + found.trailing_zeros() as usize);
    }
    rest.iter()
        .position(|&byte| is_stop::<false>(byte))
        .map(|offset| at(rest) + offset)
}

fn is_stop<const NON_ASCII: bool>(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20 || (NON_ASCII && byte >= 0x80)
}

/// A bit per byte of `chunk` that [`is_stop`].
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops_in_16<const NON_ASCII: bool>(chunk: &[u8; 16]) -> u32 {
    use std::arch::x86_64::{
        _mm_cmpeq_epi8, _mm_loadu_si128, _mm_min_epu8, _mm_movemask_epi8, _mm_or_si128,
        _mm_set1_epi8,
    };
    // SAFETY: SSE2 is part of the x86-64 baseline, so these instructions
    // exist on every processor this code runs on; the load reads the 16
    // bytes of `chunk` and nothing else, and needs no alignment.
    unsafe {
        let bytes = _mm_loadu_si128(chunk.as_ptr().cast());
        let quote = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'"' as i8));
        let backslash = _mm_cmpeq_epi8(bytes, _mm_set1_epi8(b'\\' as i8));
        // Unsigned byte <= 0x1F exactly where min(byte, 0x1F) == byte.
        let control = _mm_cmpeq_epi8(_mm_min_epu8(bytes, _mm_set1_epi8(0x1F)), bytes);
        let mut stops = _mm_or_si128(_mm_or_si128(quote, backslash), control);
        if NON_ASCII {
            // The mask takes each byte's top bit: set exactly from 0x80.
            stops = _mm_or_si128(stops, bytes);
        }
        _mm_movemask_epi8(stops) as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Where the cursor's scan stops in `bytes` from `from`, or `None`
    /// when it stops at the padding.
    fn cursor_stop<const NON_ASCII: bool>(bytes: &[u8], from: usize) -> Option<usize> {
        let mut buffer = Vec::new();
        let cursor = Cursor::new(&mut buffer, bytes);
        let stop = cursor.stop_at_or_after::<NON_ASCII>(from);
        (stop < bytes.len()).then_some(stop)
    }

    #[test]
    fn every_stop_byte_is_found_at_every_offset() {
        // 48 bytes are whole sixteen-byte steps; the others end in a tail,
        // which the escape scan reads again from before it (17 and more) or
        // pads (below 16), and the cursor reads into its padding.
        for len in [48, 45, 33, 17, 16, 15, 9, 8, 7, 5, 4, 3, 1] {
            for stop_byte in [b'"', b'\\', 0x00, 0x0A, 0x1F, 0x80, 0xC3, 0xFF] {
                for at in 0..len {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = stop_byte;
                    let plain_stop = (stop_byte < 0x80).then_some(at);
                    // From every offset up to the stop and past it.
                    for from in 0..=len {
                        let found = (from <= at).then_some(at);
                        let context = format!("{stop_byte:#x} at {at} of {len} from {from}");
                        assert_eq!(cursor_stop::<true>(&bytes, from), found, "{context}");
                        let plain = plain_stop.filter(|_| from <= at);
                        assert_eq!(cursor_stop::<false>(&bytes, from), plain, "{context}");
                        assert_eq!(escape_stop(&bytes, from), plain, "{context}");
                    }
                }
            }
        }
        let plain: Vec<u8> = (0x20..=0xFF)
            .filter(|&byte| !is_stop::<false>(byte))
            .collect();
        assert_eq!(escape_stop(&plain, 0), None);
        assert_eq!(cursor_stop::<false>(&plain, 0), None);
        let first_non_ascii = plain.iter().position(|&byte| byte >= 0x80);
        assert_eq!(cursor_stop::<true>(&plain, 0), first_non_ascii);
        assert_eq!(escape_stop(b"ab\"", 3), None);
        assert_eq!(escape_stop(b"ab\"", 9), None);
    }

    #[test]
    fn a_string_is_text_only_when_its_bytes_are_utf8() {
        for (body, expected) in [
            (&b"\"plain\" "[..], Some(("plain", 7))),
            (
                "\"caf\u{e9} \u{1F600}\"".as_bytes(),
                Some(("caf\u{e9} \u{1F600}", 12)),
            ),
            (b"\"caf\xC3\"", None),
            (b"\"\xFF\xFE\"", None),
            (b"\"\xC3\xA9\\n\"", None),
            (b"\"no end", None),
            (b"\"\xC3\xA9 no end", None),
            (b"\"", None),
            (b"x\"", None),
        ] {
            let mut buffer = Vec::new();
            let mut cursor = Cursor::new(&mut buffer, body);
            let text = cursor.string();
            assert_eq!(text.map(|text| (text, cursor.at())), expected, "{body:?}");
        }
        // Long strings cross the sixteen-byte steps on either path.
        let long = format!("\"{}\u{e9}{}\"", "a".repeat(37), "b".repeat(21));
        let mut buffer = Vec::new();
        let mut cursor = Cursor::new(&mut buffer, long.as_bytes());
        assert_eq!(cursor.string().map(str::len), Some(60));
        assert!(cursor.at_end());
    }

    #[test]
    fn the_cursor_never_moves_past_the_body() {
        let mut buffer = Vec::new();
        let mut cursor = Cursor::new(&mut buffer, b"tru");
        assert!(!cursor.eat_word(b"true"));
        assert!(cursor.eat_word(b"tr"));
        assert!(!cursor.eat(b'x'));
        assert!(cursor.eat(b'u'));
        assert!(cursor.at_end());
        assert_eq!(cursor.peek(), 0);
        // Nothing moves it on from the end: not a zero asked for, not
        // whitespace, not a digit, not a string.
        assert!(!cursor.eat(0));
        assert!(!cursor.eat_word(b"\0\0"));
        cursor.skip_whitespace();
        assert_eq!(cursor.eat_digit(), None);
        assert_eq!(cursor.string(), None);
        assert!(cursor.at_end());
        assert_eq!(cursor.read_since(1), Some(&b"ru"[..]));
        assert_eq!(cursor.read_since(4), None);

        let mut buffer = Vec::new();
        let mut cursor = Cursor::new(&mut buffer, b" \t\r\n7");
        cursor.skip_whitespace();
        assert_eq!(cursor.eat_digit(), Some(7));
        assert!(cursor.at_end());
    }
}
