//! The HTTP/1.1 wire format both sides of the gateway speak: the server
//! reading its clients' requests and the forwarder reading the upstream's
//! answers. Header field helpers here, chunked transfer coding in
//! [`chunked`]. No I/O and no policy: each side keeps its own limits on
//! heads and bodies and maps [`chunked::ChunkError`] to its own errors.

pub mod chunked;

/// `v` without the optional whitespace (spaces and tabs) around it.
pub fn trim_ows(mut v: &[u8]) -> &[u8] {
    while let [b' ' | b'\t', rest @ ..] = v {
        v = rest;
    }
    while let [rest @ .., b' ' | b'\t'] = v {
        v = rest;
    }
    v
}

/// A `Content-Length` value: digits only (no sign, no list), at most 19
/// of them so that it fits a u64 without an overflow check.
pub fn content_length(v: &[u8]) -> Option<u64> {
    let v = trim_ows(v);
    if v.is_empty() || v.len() > 19 || !v.iter().all(u8::is_ascii_digit) {
        return None;
    }
    Some(v.iter().fold(0u64, |n, &d| n * 10 + u64::from(d - b'0')))
}

/// Whether a `Transfer-Encoding` value is exactly `chunked`: the only
/// coding either side relays; anything else (gzip, lists) is a framing a
/// gateway must not guess at.
pub fn is_chunked_coding(v: &[u8]) -> bool {
    trim_ows(v).eq_ignore_ascii_case(b"chunked")
}

/// Whether a `Connection` value lists `token`.
pub fn lists_token(v: &[u8], token: &[u8]) -> bool {
    v.split(|&b| b == b',')
        .any(|t| trim_ows(t).eq_ignore_ascii_case(token))
}

/// A control byte a field value may not hold (HTAB aside).
pub fn is_bad_ctl(b: u8) -> bool {
    (b < 0x20 && b != b'\t') || b == 0x7f
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn field_values_are_read_alike_on_both_sides() {
        assert_eq!(content_length(b" 42\t"), Some(42));
        for bad in [&b""[..], b"-1", b"1,1", b"+1", b"99999999999999999999"] {
            assert_eq!(content_length(bad), None, "{bad:?}");
        }
        assert!(is_chunked_coding(b" Chunked "));
        assert!(!is_chunked_coding(b"gzip, chunked"));
        assert!(lists_token(b"foo, Close", b"close"));
        assert!(!lists_token(b"closed", b"close"));
    }
}
