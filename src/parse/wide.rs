//! Integer literals beyond 64 bits whose `f64` is not their value.
//!
//! simd-json holds an integer beyond 64 bits as the nearest `f64`
//! (`big-int-as-float`): `100000000000000000001` reads as `1e20`. A Python,
//! Ruby or Go upstream may read it exactly, so where the schema compares
//! numbers at that magnitude the two readings could disagree. Such a
//! literal is found here and kept with its text (`Source::wide`), for the
//! verdict and the explanation to tell it apart (`TapeNumber::Wide`).
//!
//! Only the bodies simd-json parses can hold one (the fast path declines
//! integers of 18 digits or more), and only when its tape holds a float of
//! magnitude 2^63 or more: the common body costs one comparison per float.

use simd_json::{Node, StaticNode};

/// 2^63: the least magnitude an integer beyond 64 bits rounds to.
const WIDE: f64 = 9_223_372_036_854_775_808.0;

/// 2^128: magnitudes from here on are not compared as `u128`.
const PAST_U128: f64 = 340_282_366_920_938_463_463_374_607_431_768_211_456.0;

/// Whether a float of the tape may have been read from an integer literal
/// beyond 64 bits.
#[inline(always)]
pub(super) fn may_be_wide(value: f64) -> bool {
    value.abs() >= WIDE
}

/// An integer literal of the body beyond 64 bits that its `f64` does not
/// hold exactly: its node's index on the tape, that float and its text
/// (a copy: a `TapeNumber` then refers to it with one pointer, and only a
/// body holding such a literal pays for it).
#[derive(Clone, Debug, PartialEq)]
pub struct Literal {
    pub(super) index: usize,
    pub(super) value: f64,
    pub(super) text: Box<str>,
}

/// Appends to `out`, in tape order, every integer literal of `body` that
/// `tape` (its simd-json tape) holds as an inexact float. The body parsed,
/// so its tokens stand in tape order: one node per `{`, `[`, string,
/// number and word, none for the rest.
pub(super) fn find(body: &[u8], tape: &[Node<'_>], out: &mut Vec<Literal>) {
    let mut index = 0;
    let mut at = 0;
    while at < body.len() {
        match body[at] {
            b'{' | b'[' => {
                index += 1;
                at += 1;
            }
            b'"' => {
                at += 1;
                while let Some(&byte) = body.get(at) {
                    at += if byte == b'\\' { 2 } else { 1 };
                    if byte == b'"' {
                        break;
                    }
                }
                index += 1;
            }
            b'-' | b'0'..=b'9' => {
                let start = at;
                while body
                    .get(at)
                    .is_some_and(|b| matches!(b, b'-' | b'+' | b'.' | b'e' | b'E' | b'0'..=b'9'))
                {
                    at += 1;
                }
                if let Some(&Node::Static(StaticNode::F64(value))) = tape.get(index)
                    && may_be_wide(value)
                    && !exact(&body[start..at], value)
                {
                    out.push(Literal {
                        index,
                        value,
                        text: String::from_utf8_lossy(&body[start..at]).into(),
                    });
                }
                index += 1;
            }
            b't' | b'n' => {
                at += 4;
                index += 1;
            }
            b'f' => {
                at += 5;
                index += 1;
            }
            _ => at += 1,
        }
    }
}

/// Whether `literal` is not an integer literal, or is one `value` (its
/// `f64`) holds exactly. A literal past 128 bits counts as inexact: none
/// is exact but a power of two's multiple, and treating one as inexact
/// only refuses it where the schema compares numbers that large.
fn exact(literal: &[u8], value: f64) -> bool {
    if literal.iter().any(|b| matches!(b, b'.' | b'e' | b'E')) {
        return true;
    }
    let digits = literal.strip_prefix(b"-").unwrap_or(literal);
    let mut magnitude: u128 = 0;
    for &digit in digits {
        let Some(next) = magnitude
            .checked_mul(10)
            .and_then(|m| m.checked_add(u128::from(digit - b'0')))
        else {
            return false;
        };
        magnitude = next;
    }
    let rounded = value.abs();
    rounded < PAST_U128 && rounded as u128 == magnitude
}

#[cfg(test)]
mod tests {
    use super::*;

    fn found(body: &str) -> Vec<(usize, String)> {
        let mut copy = body.as_bytes().to_vec();
        let tape = simd_json::to_tape(&mut copy).unwrap();
        let mut out = Vec::new();
        find(body.as_bytes(), &tape.0, &mut out);
        out.iter().map(|l| (l.index, l.text.to_string())).collect()
    }

    #[test]
    fn inexact_integer_literals_are_found_at_their_tape_index() {
        let body = r#"{"a\"{[":[true,false,null,1e20],"n":100000000000000000001,"m":[-99999999999999999999999,100000000000000000000,18446744073709551616,1.5e30]}"#;
        assert_eq!(
            found(body),
            [
                (8, "100000000000000000001".to_owned()),
                (11, "-99999999999999999999999".to_owned()),
            ]
        );
    }

    #[test]
    fn exactness_is_decided_on_the_whole_literal() {
        assert!(exact(b"100000000000000000000", 1e20));
        assert!(!exact(b"100000000000000000001", 1e20));
        assert!(exact(b"-9223372036854775808", -9_223_372_036_854_775_808.0));
        assert!(!exact(
            b"-9223372036854775809",
            -9_223_372_036_854_775_808.0
        ));
        assert!(exact(b"1e300", 1e300));
        // u128::MAX rounds to 2^128, which no `u128` holds.
        assert!(!exact(
            b"340282366920938463463374607431768211455",
            PAST_U128
        ));
        assert!(!exact(&[b'1'; 60], 1.111_111_111_111_111e59));
    }
}
