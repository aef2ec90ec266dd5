//! Editing a relayed event stream: the one event that carries the
//! JSON-RPC response is handed to the service and relayed as it edited it;
//! every other event, and everything after the response, passes as it
//! came. Events are held only until they are whole, and one longer than the
//! limit ends the editing: what was held and what follows pass as they are.

use crate::parse::span::value_at;

/// What the service made of a response event's data.
pub(super) enum Edit {
    /// The data to relay instead.
    Edited(Vec<u8>),
    /// Relay it as it came.
    Unchanged,
}

/// The state of one stream's editing.
pub(super) struct EventEditor {
    held: Vec<u8>,
    /// The response is out (or will not be edited): the rest passes.
    passing: bool,
    limit: usize,
}

impl EventEditor {
    pub(super) fn new(limit: usize) -> EventEditor {
        EventEditor {
            held: Vec::new(),
            passing: false,
            limit,
        }
    }

    /// Takes the next piece of the stream into `out`: the whole events in
    /// it, the response edited by `edit` (handed its data, or `None` when
    /// the event was too long to hold).
    pub(super) fn feed(
        &mut self,
        piece: &[u8],
        out: &mut Vec<u8>,
        edit: &mut impl FnMut(Option<&[u8]>) -> Edit,
    ) {
        if self.passing {
            out.extend_from_slice(piece);
            return;
        }
        self.held.extend_from_slice(piece);
        while let Some(end) = event_end(&self.held) {
            let rest = self.held.split_off(end);
            let event = std::mem::replace(&mut self.held, rest);
            let data = event_data(&event);
            let is_response = value_at(&data, &["result"])
                .or_else(|| value_at(&data, &["error"]))
                .is_some();
            if !is_response {
                out.extend_from_slice(&event);
                continue;
            }
            self.passing = true;
            match edit(Some(&data)) {
                Edit::Edited(edited) => write_edited(out, &event, &edited),
                Edit::Unchanged => out.extend_from_slice(&event),
            }
            out.append(&mut self.held);
            return;
        }
        if self.held.len() > self.limit {
            self.passing = true;
            let _ = edit(None);
            out.append(&mut self.held);
        }
    }

    /// What is left held at the end of the stream.
    pub(super) fn finish(&mut self, out: &mut Vec<u8>) {
        out.append(&mut self.held);
    }
}

/// Where the first whole event of `held` ends (after its blank line).
fn event_end(held: &[u8]) -> Option<usize> {
    let lf = held.windows(2).position(|w| w == b"\n\n").map(|i| i + 2);
    let crlf = held
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .map(|i| i + 4);
    match (lf, crlf) {
        (Some(a), Some(b)) => Some(a.min(b)),
        (a, b) => a.or(b),
    }
}

fn lines(event: &[u8]) -> impl Iterator<Item = &[u8]> {
    event
        .split(|&b| b == b'\n')
        .map(|line| line.strip_suffix(b"\r").unwrap_or(line))
        .filter(|line| !line.is_empty())
}

fn data_line(line: &[u8]) -> Option<&[u8]> {
    let data = line.strip_prefix(b"data:")?;
    Some(data.strip_prefix(b" ").unwrap_or(data))
}

/// The event's `data` lines joined with `\n`.
fn event_data(event: &[u8]) -> Vec<u8> {
    let mut data = Vec::new();
    for (n, line) in lines(event).filter_map(data_line).enumerate() {
        if n > 0 {
            data.push(b'\n');
        }
        data.extend_from_slice(line);
    }
    data
}

/// The event with its data replaced by `edited`, its other fields as they
/// came.
fn write_edited(out: &mut Vec<u8>, event: &[u8], edited: &[u8]) {
    let mut written = false;
    for line in lines(event) {
        if data_line(line).is_none() {
            out.extend_from_slice(line);
            out.push(b'\n');
        } else if !written {
            written = true;
            for data in edited.split(|&b| b == b'\n') {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(data.strip_suffix(b"\r").unwrap_or(data));
                out.push(b'\n');
            }
        }
    }
    out.push(b'\n');
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(pieces: &[&[u8]], limit: usize) -> (Vec<u8>, Vec<Option<Vec<u8>>>) {
        let mut editor = EventEditor::new(limit);
        let mut out = Vec::new();
        let mut seen = Vec::new();
        let mut edit = |data: Option<&[u8]>| {
            seen.push(data.map(<[u8]>::to_vec));
            Edit::Edited(b"{\"result\":{\"edited\":true}}".to_vec())
        };
        for piece in pieces {
            editor.feed(piece, &mut out, &mut edit);
        }
        editor.finish(&mut out);
        (out, seen)
    }

    #[test]
    fn only_the_response_event_is_edited_whatever_the_pieces() {
        let stream: &[u8] = b"event: message\r\ndata: {\"method\":\"notifications/progress\"}\r\n\r\nid: 7\nevent: message\ndata: {\"id\":1,\ndata: \"result\":{}}\n\ndata: {\"after\":1}\n\n";
        let expected: &[u8] = b"event: message\r\ndata: {\"method\":\"notifications/progress\"}\r\n\r\nid: 7\nevent: message\ndata: {\"result\":{\"edited\":true}}\n\ndata: {\"after\":1}\n\n";
        let (whole, seen) = run(&[stream], 1 << 20);
        assert_eq!(
            String::from_utf8_lossy(&whole),
            String::from_utf8_lossy(expected)
        );
        assert_eq!(seen, [Some(b"{\"id\":1,\n\"result\":{}}".to_vec())]);
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(run(&bytes, 1 << 20).0, expected);
    }

    #[test]
    fn an_event_longer_than_the_limit_passes_as_it_came() {
        let stream: &[u8] = b"data: {\"id\":1,\"result\":{\"text\":\"xxxxxxxxxxxxxxxx\"}}\n\n";
        let (out, seen) = run(&[&stream[..20], &stream[20..]], 16);
        assert_eq!(out, stream);
        assert_eq!(seen, [None]);
        // An error answer is the response too, and is not edited.
        let error: &[u8] = b"data: {\"id\":1,\"error\":{\"code\":1}}\n\n";
        let mut editor = EventEditor::new(1 << 20);
        let mut out = Vec::new();
        editor.feed(error, &mut out, &mut |_| Edit::Unchanged);
        assert_eq!(out, error);
    }
}
