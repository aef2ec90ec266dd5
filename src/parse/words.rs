//! Bytes eight at a time, in safe code: the bit tests on a `u64` of eight
//! bytes that the checks of short texts beside the parse share (an
//! answer's printable text, a mirrored header, a hint's braces, a
//! timestamp), so each is written once.

/// One in each byte of a word.
pub(crate) const ONES: u64 = 0x0101_0101_0101_0101;
/// The high bit of each byte of a word.
pub(crate) const HIGHS: u64 = 0x8080_8080_8080_8080;

/// The eight bytes at `at` of `bytes` as one word (the first in the low
/// byte).
#[inline(always)]
pub(crate) fn word_at(bytes: &[u8], at: usize) -> u64 {
    u64::from_le_bytes(bytes[at..at + 8].try_into().expect("eight bytes"))
}

/// The words of `bytes`, eight or more of them, the last read from eight
/// before the end (overlapping the one before it): every byte is in a
/// word, some in two, which a test of "any byte" does not mind.
#[inline(always)]
pub(crate) fn overlapping_words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    debug_assert!(bytes.len() >= 8, "{} bytes", bytes.len());
    let last = bytes.len() - 8;
    (0..bytes.len())
        .step_by(8)
        .map(move |at| word_at(bytes, at.min(last)))
}

/// The high bit of each byte of `word` below `n` (the classic
/// has-less-than test). The lowest flag is always exact: a false flag
/// needs a borrow from a true one below it. A byte of 0x80 or more is
/// never flagged.
#[inline(always)]
pub(crate) fn below(word: u64, n: u8) -> u64 {
    word.wrapping_sub(ONES * u64::from(n)) & !word & HIGHS
}

/// The high bit of each byte of `word` equal to `byte` (lowest flag
/// exact, as [`below`]'s).
#[inline(always)]
pub(crate) fn equal(word: u64, byte: u8) -> u64 {
    below(word ^ (ONES * u64::from(byte)), 1)
}

/// Nonzero when a byte of `word` is not printable ASCII (a control
/// character, 0x7f, or 0x80 and above).
#[inline(always)]
pub(crate) fn unprintable(word: u64) -> u64 {
    (word & HIGHS) | below(word, 0x20) | equal(word, 0x7f)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_test_flags_a_word_exactly_when_a_byte_of_it_matches() {
        for at in 0..8 {
            for byte in 0..=255u8 {
                let mut bytes = *b"abcdefgh";
                bytes[at] = byte;
                let word = word_at(&bytes, 0);
                assert_eq!(below(word, 0x20) != 0, byte < 0x20, "{byte:#x} at {at}");
                assert_eq!(equal(word, b'{') != 0, byte == b'{', "{byte:#x} at {at}");
                assert_eq!(
                    unprintable(word) != 0,
                    !(0x20..0x7f).contains(&byte),
                    "{byte:#x} at {at}"
                );
            }
        }
    }

    #[test]
    fn overlapping_words_cover_every_byte() {
        for len in 8usize..40 {
            let bytes: Vec<u8> = (0..len as u8).collect();
            let words: Vec<u64> = overlapping_words(&bytes).collect();
            assert_eq!(words.len(), len.div_ceil(8), "{len}");
            for &byte in &bytes {
                assert!(words.iter().any(|&w| equal(w, byte) != 0), "{len} {byte}");
            }
        }
    }
}
