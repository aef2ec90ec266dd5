//! `date-time` (RFC 3339 as `jsonschema` reads it): a plain timestamp
//! decided in one pass.
//!
//! `jsonschema`'s own check looks for the `T` first and then reads the date
//! and the time apart. Here every field sits at a fixed place, so a timestamp
//! `YYYY-MM-DDTHH:MM:SS[.fraction](Z|±HH:MM)` with a second below 60 is
//! read in one go. A leap second (its rules depend on the offset) and every
//! text this pass does not accept go to `jsonschema`'s own check.

use std::sync::LazyLock;

use super::builtin;
use crate::parse::words::{HIGHS, ONES, word_at};

/// Whether `text` is a `date-time` as `jsonschema` has it.
pub fn is_date_time(text: &str) -> bool {
    is_plain_date_time(text.as_bytes()) || builtin_date_time(text)
}

/// `jsonschema`'s own `date-time` check, for everything
/// [`is_plain_date_time`] does not accept. Kept out of line.
#[cold]
#[inline(never)]
fn builtin_date_time(text: &str) -> bool {
    static BUILTIN: LazyLock<jsonschema::Validator> =
        LazyLock::new(|| builtin::compile("date-time"));
    builtin::verdict(&BUILTIN, text)
}

/// `YYYY-MM-DDTHH:MM:SS`: the part every plain timestamp starts with.
const SECONDS_END: usize = 19;

/// The digit bytes of the words a timestamp's head is read as: bytes 0–7
/// (`YYYY-MM-`), 8–15 (`DDTHH:MM`) and 16–19 (`:SS` and one more).
const DIGITS: [u64; 3] = [0x00FF_FF00_FFFF_FFFF, 0xFFFF_00FF_FF00_FFFF, 0x00FF_FF00];
/// The bit that lowercases the `T` (set at its byte only: set at a `-` or
/// `:`, a control byte would pass for one).
const LOWER: [u64; 3] = [0, 0x0000_0000_0020_0000, 0];
/// Its fixed bytes, the `T` lowercased.
const FIXED_MASK: [u64; 3] = [0xFF00_00FF_0000_0000, 0x0000_FF00_00FF_0000, 0x0000_00FF];
const FIXED: [u64; 3] = [
    u64::from_le_bytes(*b"\0\0\0\0-\0\0-"),
    u64::from_le_bytes(*b"\0\0t\0\0:\0\0"),
    u32::from_le_bytes(*b":\0\0\0") as u64,
];

/// A valid timestamp with no leap second. `false` only means "not decided
/// here". The head is read as three words: its fixed bytes and its digits
/// are each checked by one comparison per word.
fn is_plain_date_time(bytes: &[u8]) -> bool {
    let Some(head) = bytes.first_chunk::<20>() else {
        // 19 bytes or fewer: no room for an offset.
        return false;
    };
    let words = [
        word_at(head, 0),
        word_at(head, 8),
        u64::from(u32::from_le_bytes(head[16..].try_into().expect("4 bytes"))),
    ];
    let mut wrong = 0;
    let mut values = [0; 3];
    for (n, &w) in words.iter().enumerate() {
        wrong |= ((w | LOWER[n]) & FIXED_MASK[n]) ^ FIXED[n];
        // Each digit byte less '0' below ten: no high bit after adding
        // 0x76, nor before (a byte 0x80 or above).
        let value = (w ^ (ONES * 0x30)) & DIGITS[n];
        wrong |= (value.wrapping_add(ONES * 0x76) | value) & DIGITS[n] & HIGHS;
        values[n] = value;
    }
    if wrong != 0 {
        return false;
    }
    // The two digits from byte `at` of `word` as a number.
    let two = |word: u64, at: u32| ((word >> (8 * at)) & 0xF) * 10 + ((word >> (8 * at + 8)) & 0xF);
    let [date, time, seconds] = values;
    let year = two(date, 0) * 100 + two(date, 2);
    let (month, day) = (two(date, 5), two(time, 0));
    let (hour, minute, second) = (two(time, 3), two(time, 6), two(seconds, 1));
    if !(1..=12).contains(&month)
        || day == 0
        || day > u64::from(days_in_month(year as u16, month as u8))
        || hour > 23
        || minute > 59
        || second > 59
    {
        return false;
    }
    let mut rest = &bytes[SECONDS_END..];
    if let [b'.', fraction @ ..] = rest {
        let digits = fraction.iter().take_while(|b| b.is_ascii_digit()).count();
        if digits == 0 {
            return false;
        }
        rest = &fraction[digits..];
    }
    match rest {
        [b'Z' | b'z'] => true,
        [b'+' | b'-', h1, h2, b':', m1, m2] => {
            two_digits(*h1, *h2).is_some_and(|hours| hours <= 23)
                && two_digits(*m1, *m2).is_some_and(|minutes| minutes <= 59)
        }
        _ => false,
    }
}

/// Two ASCII digits as a number.
fn two_digits(tens: u8, ones: u8) -> Option<u8> {
    let (tens, ones) = (tens.wrapping_sub(b'0'), ones.wrapping_sub(b'0'));
    (tens < 10 && ones < 10).then(|| tens * 10 + ones)
}

fn days_in_month(year: u16, month: u8) -> u8 {
    match month {
        2 if year.is_multiple_of(4) && (!year.is_multiple_of(100) || year.is_multiple_of(400)) => {
            29
        }
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_timestamps_are_decided_in_one_pass() {
        for text in [
            "2026-01-01T00:00:00Z",
            "2026-12-31t23:59:59z",
            "2024-02-29T12:00:00Z",
            "2000-02-29T12:00:00Z",
            "2026-07-28T10:20:30.123456789Z",
            "2026-07-28T10:20:30+05:30",
            "2026-07-28T10:20:30.5-23:59",
            "0000-01-01T00:00:00Z",
        ] {
            assert!(is_plain_date_time(text.as_bytes()), "{text}");
            assert!(builtin_date_time(text), "{text}");
        }
    }

    #[test]
    fn every_other_form_gets_the_builtin_verdict() {
        for (text, valid) in [
            // Leap seconds: only at 23:59:60 in UTC.
            ("2026-06-30T23:59:60Z", true),
            ("2026-06-30T12:00:60Z", false),
            ("2026-06-30T23:59:60+00:00", true),
            ("2026-07-01T01:29:60+01:30", true),
            ("2026-06-30T22:59:60-01:00", true),
            ("2026-06-30T23:59:60-01:00", false),
            ("2023-02-29T12:00:00Z", false),
            ("1900-02-29T12:00:00Z", false),
            ("2026-04-31T12:00:00Z", false),
            ("2026-00-10T12:00:00Z", false),
            ("2026-13-10T12:00:00Z", false),
            ("2026-01-00T12:00:00Z", false),
            ("2026-01-01T24:00:00Z", false),
            ("2026-01-01T23:60:00Z", false),
            ("2026-01-01T12:00:00", false),
            ("2026-01-01T12:00:00.Z", false),
            ("2026-01-01T12:00:00+24:00", false),
            ("2026-01-01T12:00:00+01:60", false),
            ("2026-01-01T12:00:00+0100", false),
            ("2026-01-01 12:00:00Z", false),
            ("2026-01-01T12:00Z", false),
            ("26-01-01T12:00:00Z", false),
            ("2026-1-01T12:00:00Z", false),
            ("2026-01-01T12:00:00ZZ", false),
            ("२०२६-01-01T12:00:00Z", false),
            ("", false),
        ] {
            assert!(!is_plain_date_time(text.as_bytes()), "{text}");
            assert_eq!(is_date_time(text), valid, "{text}");
            assert_eq!(builtin_date_time(text), valid, "{text}");
        }
    }

    #[test]
    fn any_ascii_byte_anywhere_in_a_timestamp_gets_the_builtin_verdict() {
        for base in ["2026-07-28T10:20:30Z", "2024-02-29t23:59:59+05:30"] {
            for at in 0..base.len() {
                for byte in 0..0x80u8 {
                    let mut bytes = base.as_bytes().to_vec();
                    bytes[at] = byte;
                    let text = std::str::from_utf8(&bytes).expect("ASCII");
                    assert_eq!(is_date_time(text), builtin_date_time(text), "{text:?}");
                }
            }
        }
    }

    proptest! {
        #[test]
        fn any_text_gets_the_builtin_verdict(text in "[0-9Tt:.+zZ\\- ]{0,32}") {
            prop_assert_eq!(is_date_time(&text), builtin_date_time(&text), "{:?}", text);
        }

        #[test]
        fn timestamp_shaped_text_gets_the_builtin_verdict(
            year in 0u32..10_000,
            month in 0u32..14,
            day in 0u32..33,
            hour in 0u32..26,
            minute in 0u32..62,
            second in 0u32..62,
            fraction in "(\\.[0-9]{0,4})?",
            offset in "[Zz]|[+-][0-2][0-9]:[0-6][0-9]|",
            separator in "[Tt ]",
        ) {
            let text = format!(
                "{year:04}-{month:02}-{day:02}{separator}{hour:02}:{minute:02}:{second:02}{fraction}{offset}"
            );
            if is_plain_date_time(text.as_bytes()) {
                prop_assert!(builtin_date_time(&text), "{:?}", text);
            }
            prop_assert_eq!(is_date_time(&text), builtin_date_time(&text), "{:?}", text);
        }
    }
}
