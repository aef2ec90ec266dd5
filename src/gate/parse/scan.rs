//! The fast path's two unchecked steps, kept here to be audited together:
//! finding where a string stops, sixteen bytes at a time (SSE2, which every
//! x86-64 processor has), and slicing the text between two quotes.
//!
//! The scan is checked in debug builds against its plain definition; the
//! slice checks its preconditions always.

/// Position of the first `"`, `\` or control character (below 0x20) at or
/// after `from`, if there is one.
#[inline(always)]
pub(super) fn string_stop(bytes: &[u8], from: usize) -> Option<usize> {
    #[cfg(target_arch = "x86_64")]
    let from = {
        let mut from = from;
        while let Some(chunk) = bytes.get(from..from + 16) {
            let found = stops_in_16(chunk.try_into().ok()?);
            if found != 0 {
                let stop = from + found.trailing_zeros() as usize;
                debug_assert!(is_stop(bytes[stop]));
                debug_assert!(!bytes[from..stop].iter().any(|&byte| is_stop(byte)));
                return Some(stop);
            }
            from += 16;
        }
        from
    };
    let rest = bytes.get(from..)?;
    rest.iter()
        .position(|&byte| is_stop(byte))
        .map(|offset| from + offset)
}

fn is_stop(byte: u8) -> bool {
    byte == b'"' || byte == b'\\' || byte < 0x20
}

/// A bit per byte of `chunk` that stops a string.
#[cfg(target_arch = "x86_64")]
#[inline(always)]
fn stops_in_16(chunk: &[u8; 16]) -> u32 {
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
        _mm_movemask_epi8(_mm_or_si128(_mm_or_si128(quote, backslash), control)) as u32
    }
}

/// `text[start..end]`, where the bytes at `start - 1` and `end` are quotes
/// (panics otherwise: the function is safe to call, so it checks what its
/// `unsafe` relies on; the caller has just read both bytes, so the checks
/// cost next to nothing).
#[inline(always)]
pub(super) fn between_quotes(text: &str, start: usize, end: usize) -> &str {
    let bytes = text.as_bytes();
    assert!(start >= 1 && start <= end && end < bytes.len());
    assert!(bytes[start - 1] == b'"' && bytes[end] == b'"');
    // SAFETY: in bounds by the first assertion. Both ends are char
    // boundaries by the second: the byte before `start` and the byte at
    // `end` are ASCII quotes, and an ASCII byte is never inside a UTF-8
    // sequence.
    unsafe { text.get_unchecked(start..end) }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_stop_byte_is_found_at_every_offset() {
        for stop in [b'"', b'\\', 0x00, 0x0A, 0x1F] {
            for at in 0..48 {
                let mut bytes = vec![b'x'; 48];
                bytes[at] = stop;
                assert_eq!(string_stop(&bytes, 0), Some(at), "{stop:#x} at {at}");
            }
        }
        let plain: Vec<u8> = (0x20..=0xFF).filter(|&byte| !is_stop(byte)).collect();
        assert_eq!(string_stop(&plain, 0), None);
        assert_eq!(string_stop(b"ab\"", 3), None);
        assert_eq!(string_stop(b"ab\"", 9), None);
    }
}
