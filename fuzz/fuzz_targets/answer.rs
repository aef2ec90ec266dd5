//! Any bytes as an upstream's answer, read as the gateway reads one: the
//! head parsed from a buffer that grows by reads of a size the input picks
//! (1xx answers skipped), then the body taken piece by piece. Never a
//! panic; the head a client is sent carries only well-formed end-to-end
//! header lines (no line break inside one, no framing or hop-by-hop header
//! passed on, so an upstream cannot split it or frame it twice); the head
//! and the body's data are the same whatever the reads' sizes, and so is a
//! refusal; a length-framed body never yields more than its length.
#![no_main]

use libfuzzer_sys::fuzz_target;
use mcpgate::unstable::gate::sse::event_data;
use mcpgate::unstable::upstream::answer::{BodyFraming, BodyState, Malformed, Parsed, parse_head};
use mcpgate::unstable::upstream::is_hop_by_hop;

/// The head as the pool reads it: parsed again after each read of `read`
/// bytes; an interim answer is skipped without reading. `None`: the bytes
/// end before a final head. `Some(Err)`: refused.
fn read_head(
    wire: &[u8],
    read: usize,
) -> Option<Result<(BodyFraming, Vec<u8>, bool, usize), Malformed>> {
    let (mut start, mut end) = (0, read.min(wire.len()));
    loop {
        match parse_head(&wire[start..end]) {
            Ok(Parsed::Partial) if end == wire.len() => return None,
            Ok(Parsed::Partial) => end = (end + read).min(wire.len()),
            Ok(Parsed::Interim(n)) => {
                assert!(
                    n > 0 && start + n <= end,
                    "an interim answer is within what was read"
                );
                start += n;
            }
            Ok(Parsed::Final(head, n)) => {
                assert!(start + n <= end, "a head is within what was read");
                return Some(Ok((
                    head.framing,
                    head.headers,
                    head.event_stream,
                    start + n,
                )));
            }
            Err(e) => return Some(Err(e)),
        }
    }
}

/// The body's data as the relay takes it, from reads of `read` bytes:
/// `(data, complete)`, or the refusal.
fn read_body(framing: BodyFraming, wire: &[u8], read: usize) -> Result<(Vec<u8>, bool), Malformed> {
    let mut state = BodyState::new(framing);
    let (mut pending, mut data) = (Vec::new(), Vec::new());
    for piece in wire.chunks(read.max(1)) {
        if state.is_done() {
            break;
        }
        pending.extend_from_slice(piece);
        let used = state.take(&pending, &mut data)?;
        assert!(used <= pending.len());
        pending.drain(..used);
    }
    if !state.is_done() {
        // The upstream closed here: the end of a close-delimited body.
        return state.at_eof().map(|()| (data, false));
    }
    Ok((data, true))
}

/// Every line of the headers passed on is `Name: value\r\n` with a token
/// for a name and no line break in the value, and none of them frames the
/// answer or concerns only the upstream's connection.
fn assert_headers_safe(headers: &[u8]) {
    assert!(
        headers.is_empty() || headers.ends_with(b"\r\n"),
        "{headers:?}"
    );
    for line in headers.split(|&b| b == b'\n').filter(|l| !l.is_empty()) {
        let line = line
            .strip_suffix(b"\r")
            .expect("every header line ends with CRLF");
        assert!(
            !line.contains(&b'\r'),
            "a bare CR inside a header line: {line:?}"
        );
        let colon = line
            .iter()
            .position(|&b| b == b':')
            .expect("a header line has a colon");
        let name = &line[..colon];
        assert!(!name.is_empty(), "an empty header name: {line:?}");
        assert!(
            name.iter()
                .all(|&b| b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)),
            "a header name that is not a token: {line:?}"
        );
        assert!(
            !is_hop_by_hop(name) && !name.eq_ignore_ascii_case(b"content-length"),
            "a framing or hop-by-hop header passed on: {line:?}"
        );
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&pick, wire)) = data.split_first() else {
        return;
    };
    // Reads of 1..=64 bytes, against the whole input read at once.
    let read = usize::from(pick % 64) + 1;
    let whole = read_head(wire, wire.len().max(1));
    assert_eq!(
        read_head(wire, read),
        whole,
        "the head depends on the reads' sizes"
    );
    let Some(Ok((framing, headers, event_stream, at))) = whole else {
        return;
    };
    assert_headers_safe(&headers);
    if event_stream {
        assert!(
            headers
                .windows(18)
                .any(|w| w.eq_ignore_ascii_case(b"x-accel-buffering:")),
            "an event stream goes out with X-Accel-Buffering"
        );
    }

    let rest = &wire[at..];
    let at_once = read_body(framing, rest, rest.len());
    let in_pieces = read_body(framing, rest, read);
    assert_eq!(at_once, in_pieces, "the body depends on the reads' sizes");
    if let Ok((body, complete)) = &at_once {
        assert!(body.len() <= rest.len(), "more data than bytes read");
        match framing {
            BodyFraming::None => assert!(body.is_empty() && *complete),
            BodyFraming::Length(n) => {
                assert_eq!(body.len() as u64, n, "a length body ends at its length");
                assert!(*complete);
            }
            BodyFraming::Chunked => assert!(*complete, "a chunked body ends at its last chunk"),
            BodyFraming::UntilClose => assert_eq!(body.as_slice(), rest),
        }
        if event_stream {
            // What the watch and the catalog read of a stream.
            for event in event_data(body) {
                assert!(!event.is_empty());
            }
        }
    }
});
