//! The fast path's two unchecked steps, kept here to be audited together:
//! finding where a string stops, sixteen bytes at a time (SSE2, which every
//! x86-64 processor has), and taking the bytes of an ASCII string as text
//! without checking them again. The same scan finds, for the writer of
//! refusals, the next byte a JSON string must escape (`escape_stop`).
//!
//! The scan is checked in debug builds against its plain definition; the
//! text is taken only from bytes this module's own scan found ASCII, and
//! the stop byte and the text are read without a second bounds check only
//! at a position this module's own scan gave (within the body, at or after
//! the string's start).

/// The string whose opening quote is at `at`, when it has no escape and no
/// control character and its text is UTF-8: the text between the quotes
/// and the position after the closing one. `None` otherwise (and when it
/// has no end).
///
/// This is where the fast path checks UTF-8: the rest of a body it takes
/// is structural ASCII, so a body whose strings pass is valid UTF-8 whole.
/// An ASCII string (the common case) is checked by the same sixteen-byte
/// scan that finds its end; one with other bytes is checked with
/// `str::from_utf8`.
#[inline(always)]
pub(super) fn string_at(bytes: &[u8], at: usize) -> Option<(&str, usize)> {
    let start = at + 1;
    let stop = first_stop::<true, false>(bytes, start)?;
    debug_assert!(start <= stop && stop < bytes.len());
    // SAFETY: `first_stop` gives a position of `bytes` at or after the one
    // it was given (`start`), so `stop` indexes `bytes` and `start..stop`
    // is a range of it.
    let (stop_byte, between) =
        unsafe { (*bytes.get_unchecked(stop), bytes.get_unchecked(start..stop)) };
    match stop_byte {
        b'"' => {
            debug_assert!(between.is_ascii());
            // SAFETY: `first_stop::<true, _>` stops at the first byte of 0x80
            // or above, so every byte before `stop` is ASCII, and ASCII is
            // UTF-8.
            let text = unsafe { std::str::from_utf8_unchecked(between) };
            Some((text, stop + 1))
        }
        0x80.. => non_ascii_string(bytes, start, stop),
        _ => None,
    }
}

/// The rest of [`string_at`] for a string with a byte of 0x80 or above at
/// `from` (kept out of line: the scan's loop stays small where it runs for
/// every string).
#[inline(never)]
fn non_ascii_string(bytes: &[u8], start: usize, from: usize) -> Option<(&str, usize)> {
    let end = first_stop::<false, false>(bytes, from)?;
    if bytes[end] != b'"' {
        return None;
    }
    let text = std::str::from_utf8(&bytes[start..end]).ok()?;
    Some((text, end + 1))
}

/// Position of the first byte JSON escapes inside a string (`"`, `\`, or
/// a control character below 0x20) at or after `from`: where a writer of
/// JSON strings stops copying, found by the parse's own scan.
pub(crate) fn escape_stop(bytes: &[u8], from: usize) -> Option<usize> {
    first_stop::<false, true>(bytes, from)
}

/// Position of the first `"`, `\` or control character (below 0x20) at or
/// after `from`, or with `NON_ASCII` also of the first byte of 0x80 or
/// above; `None` if there is none.
#[inline(always)]
fn first_stop<const NON_ASCII: bool, const PADDED_TAIL: bool>(
    bytes: &[u8],
    from: usize,
) -> Option<usize> {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_mut))]
    let mut rest = bytes.get(from..)?;
    // Where `rest` starts in `bytes`.
    let at = |rest: &[u8]| bytes.len() - rest.len();
    #[cfg(target_arch = "x86_64")]
    while let Some((chunk, tail)) = rest.split_first_chunk::<16>() {
        let found = stops_in_16::<NON_ASCII>(chunk);
        if found != 0 {
            let stop = at(rest) + found.trailing_zeros() as usize;
            debug_assert!(is_stop::<NON_ASCII>(bytes[stop]));
            debug_assert!(
                !bytes[from..stop]
                    .iter()
                    .any(|&byte| is_stop::<NON_ASCII>(byte))
            );
            return Some(stop);
        }
        rest = tail;
    }
    #[cfg(target_arch = "x86_64")]
    if PADDED_TAIL && !rest.is_empty() {
        // The last few bytes in one more step: short texts (an escaped
        // key, a code) are all tail. (The parse's strings end inside the
        // body, and its loop is smaller without this.)
        let tail = at(rest);
        if let Some(start) = bytes.len().checked_sub(16) {
            // The last sixteen bytes, read again from before the tail: the
            // bits of the bytes scanned already are shifted out.
            let chunk = bytes[start..].first_chunk::<16>()?;
            let found = stops_in_16::<NON_ASCII>(chunk) >> (tail - start);
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
        let found = stops_in_16::<NON_ASCII>(&padded);
        return (found != 0).then(|| tail + found.trailing_zeros() as usize);
    }
    rest.iter()
        .position(|&byte| is_stop::<NON_ASCII>(byte))
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

    /// [`first_stop`] with and without the padded tail, which agree.
    fn stop<const NON_ASCII: bool>(bytes: &[u8], from: usize) -> Option<usize> {
        let plain = first_stop::<NON_ASCII, false>(bytes, from);
        assert_eq!(first_stop::<NON_ASCII, true>(bytes, from), plain);
        plain
    }

    #[test]
    fn every_stop_byte_is_found_at_every_offset() {
        // 48 bytes are whole sixteen-byte steps; the others end in a tail,
        // read again from before it (17 and more) or padded (below 16).
        for len in [48, 45, 33, 17, 16, 15, 9, 8, 7, 5, 4, 3, 1] {
            for stop_byte in [b'"', b'\\', 0x00, 0x0A, 0x1F, 0x80, 0xC3, 0xFF] {
                for at in 0..len {
                    let mut bytes = vec![b'x'; len];
                    bytes[at] = stop_byte;
                    let plain_stop = (stop_byte < 0x80).then_some(at);
                    // From every offset up to the stop and past it.
                    for from in 0..=len {
                        let found = (from <= at).then_some(at);
                        assert_eq!(
                            stop::<true>(&bytes, from),
                            found,
                            "{stop_byte:#x} at {at} of {len} from {from}"
                        );
                        assert_eq!(
                            stop::<false>(&bytes, from),
                            plain_stop.filter(|_| from <= at),
                            "{stop_byte:#x} at {at} of {len} from {from}"
                        );
                    }
                }
            }
        }
        let plain: Vec<u8> = (0x20..=0xFF)
            .filter(|&byte| !is_stop::<false>(byte))
            .collect();
        assert_eq!(stop::<false>(&plain, 0), None);
        let first_non_ascii = plain.iter().position(|&byte| byte >= 0x80);
        assert_eq!(stop::<true>(&plain, 0), first_non_ascii);
        assert_eq!(stop::<true>(b"ab\"", 3), None);
        assert_eq!(stop::<true>(b"ab\"", 9), None);
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
        ] {
            assert_eq!(string_at(body, 0), expected, "{body:?}");
        }
        // Long strings cross the sixteen-byte steps on either path.
        let long = format!("\"{}\u{e9}{}\"", "a".repeat(37), "b".repeat(21));
        assert_eq!(
            string_at(long.as_bytes(), 0).map(|(text, _)| text.len()),
            Some(60)
        );
    }
}
