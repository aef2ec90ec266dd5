//! Editing a relayed event stream: the one event that carries the
//! JSON-RPC response is handed to the service and relayed as it edited it;
//! every other event, and everything after the response, passes as it
//! came. Events are held only until they are whole, and one longer than the
//! limit ends the editing: what was held and what follows pass as they are.
//!
//! A stream of many responses (a 2025 lane's GET stream, which replays a
//! resumed request's answers) is edited response after response instead
//! ([`EventEditor::every_response`]): there every event that carries data
//! is handed to the service, whatever the data looks like (a batch, or
//! something that is no JSON at all, is the service's to read or refuse),
//! and is only relayed as the service made it; one it refuses, any event
//! longer than the limit, and an event the stream does not end are left
//! out, the events around them relayed.
//!
//! The one response event is also the first whose data is a batch (an
//! array): the service cannot add to it, and counts that. A byte order
//! mark opening the stream is dropped, as an event stream reader drops it:
//! otherwise the first event's data would be read here as another field.
//! On a stream of answers every event relayed is written anew from what
//! was read of it, with only the lines a reader takes in (comments and the
//! fields `event`, `id`, `retry`, `data`): a line split at a lone CR, or a
//! field a lax reader might take for data, cannot carry what was not
//! filtered.

use crate::parse::span::value_at;

/// What the service made of a response event's data.
pub(super) enum Edit {
    /// The data to relay instead.
    Edited(Vec<u8>),
    /// Relay it as it came.
    Unchanged,
    /// Leave the event out.
    Dropped,
}

/// The state of one stream's editing.
pub(super) struct EventEditor {
    held: Vec<u8>,
    /// The response is out (or will not be edited): the rest passes.
    passing: bool,
    limit: usize,
    /// Every response is edited, not only the first.
    every: bool,
    /// An event over the limit is being left out, up to its end.
    skipping: bool,
    /// The stream's first bytes were looked at for a byte order mark.
    started: bool,
}

const BOM: &[u8] = b"\xEF\xBB\xBF";

impl EventEditor {
    pub(super) fn new(limit: usize) -> EventEditor {
        EventEditor {
            held: Vec::new(),
            passing: false,
            limit,
            every: false,
            skipping: false,
            started: false,
        }
    }

    /// An editor that hands every response event to the service, and
    /// leaves out one it cannot hold.
    pub(super) fn every_response(limit: usize) -> EventEditor {
        EventEditor {
            every: true,
            ..EventEditor::new(limit)
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
        if !self.started {
            if self.held.len() < BOM.len() && BOM.starts_with(&self.held) {
                // Not yet known to be one.
                return;
            }
            self.started = true;
            if self.held.starts_with(BOM) {
                self.held.drain(..BOM.len());
            }
        }
        while let Some(end) = event_end(&self.held) {
            let rest = self.held.split_off(end);
            let event = std::mem::replace(&mut self.held, rest);
            if std::mem::take(&mut self.skipping) {
                // The end of the event left out.
                continue;
            }
            if self.every && event.len() > self.limit {
                // As if it had come in pieces: too long to hold.
                let _ = edit(None);
                continue;
            }
            let data = event_data(&event);
            let is_response = if self.every {
                lines(&event).any(|line| data_line(line).is_some())
            } else {
                data.trim_ascii_start().starts_with(b"[")
                    || value_at(&data, &["result"])
                        .or_else(|| value_at(&data, &["error"]))
                        .is_some()
            };
            // On a stream of answers, what is relayed is written anew from
            // what was read here: a reader reads nothing else.
            if !is_response {
                if self.every {
                    write_event(out, &event, None, true);
                } else {
                    out.extend_from_slice(&event);
                }
                continue;
            }
            match edit(Some(&data)) {
                Edit::Edited(edited) => write_event(out, &event, Some(&edited), self.every),
                Edit::Unchanged if self.every => write_event(out, &event, Some(&data), true),
                Edit::Unchanged => out.extend_from_slice(&event),
                Edit::Dropped => {}
            }
            if !self.every {
                self.passing = true;
                out.append(&mut self.held);
                return;
            }
        }
        if !self.skipping && self.held.len() > self.limit {
            let _ = edit(None);
            if self.every {
                self.skipping = true;
            } else {
                self.passing = true;
                out.append(&mut self.held);
            }
        }
        if self.skipping {
            // Only a blank line's worth is kept, to find its end across
            // pieces.
            let kept = self.held.len().saturating_sub(3);
            self.held.drain(..kept);
        }
    }

    /// What is left held at the end of the stream.
    pub(super) fn finish(&mut self, out: &mut Vec<u8>) {
        if self.every {
            // An event the stream did not end is not known to be no
            // response: it is left out.
            self.held.clear();
        } else {
            out.append(&mut self.held);
        }
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

/// The event's lines as a reader splits them (at CRLF, LF or a lone CR),
/// blank ones left out.
fn lines(event: &[u8]) -> impl Iterator<Item = &[u8]> {
    event
        .split(|&b| b == b'\n')
        .flat_map(|line| line.split(|&b| b == b'\r'))
        .filter(|line| !line.is_empty())
}

fn data_line(line: &[u8]) -> Option<&[u8]> {
    if line == b"data" {
        // A field without a colon has an empty value.
        return Some(b"");
    }
    let data = line.strip_prefix(b"data:")?;
    Some(data.strip_prefix(b" ").unwrap_or(data))
}

/// A line a reader takes in: a comment, or a field it knows. Any other
/// is ignored by a reader that keeps to the format, and might be taken
/// for data by one that does not.
fn read_by_a_reader(line: &[u8]) -> bool {
    let name = line.split(|&b| b == b':').next().unwrap_or_default();
    matches!(name, b"" | b"event" | b"id" | b"retry" | b"data")
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

/// The event written anew from its lines: its data replaced by `data`
/// (none: an event without data), other lines as they came; with
/// `only_read`, only the lines a reader takes in. Nothing when no line is
/// left.
fn write_event(out: &mut Vec<u8>, event: &[u8], data: Option<&[u8]>, only_read: bool) {
    let start = out.len();
    let mut written = false;
    for line in lines(event) {
        if data_line(line).is_none() {
            if !only_read || read_by_a_reader(line) {
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        } else if !written && let Some(data) = data {
            written = true;
            for data in data.split(|&b| b == b'\n') {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(data.strip_suffix(b"\r").unwrap_or(data));
                out.push(b'\n');
            }
        }
    }
    if out.len() > start {
        out.push(b'\n');
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// What `editor` relays of `pieces`, each response handed to `edit`.
    fn relay(
        mut editor: EventEditor,
        pieces: &[&[u8]],
        mut edit: impl FnMut(Option<&[u8]>) -> Edit,
    ) -> Vec<u8> {
        let mut out = Vec::new();
        for piece in pieces {
            editor.feed(piece, &mut out, &mut edit);
        }
        editor.finish(&mut out);
        out
    }

    /// `stream` relayed as `expected`, whole and byte by byte.
    #[track_caller]
    fn assert_relays(run: impl Fn(&[&[u8]]) -> Vec<u8>, stream: &[u8], expected: &[u8]) {
        assert_eq!(
            String::from_utf8_lossy(&run(&[stream])),
            String::from_utf8_lossy(expected)
        );
        let bytes: Vec<&[u8]> = stream.chunks(1).collect();
        assert_eq!(run(&bytes), expected);
    }

    fn run(pieces: &[&[u8]], limit: usize) -> (Vec<u8>, Vec<Option<Vec<u8>>>) {
        let mut seen = Vec::new();
        let out = relay(EventEditor::new(limit), pieces, |data| {
            seen.push(data.map(<[u8]>::to_vec));
            Edit::Edited(b"{\"result\":{\"edited\":true}}".to_vec())
        });
        (out, seen)
    }

    #[test]
    fn only_the_response_event_is_edited_whatever_the_pieces() {
        let stream: &[u8] = b"event: message\r\ndata: {\"method\":\"notifications/progress\"}\r\n\r\nid: 7\nevent: message\ndata: {\"id\":1,\ndata: \"result\":{}}\n\ndata: {\"after\":1}\n\n";
        let expected: &[u8] = b"event: message\r\ndata: {\"method\":\"notifications/progress\"}\r\n\r\nid: 7\nevent: message\ndata: {\"result\":{\"edited\":true}}\n\ndata: {\"after\":1}\n\n";
        assert_relays(|pieces| run(pieces, 1 << 20).0, stream, expected);
        let (_, seen) = run(&[stream], 1 << 20);
        assert_eq!(seen, [Some(b"{\"id\":1,\n\"result\":{}}".to_vec())]);
    }

    /// Every event with data handed over: `secret` ones dropped, requests
    /// and notifications as they came, the others marked.
    fn run_every(pieces: &[&[u8]], limit: usize) -> (Vec<u8>, usize) {
        let mut seen = 0;
        let out = relay(EventEditor::every_response(limit), pieces, |data| {
            seen += 1;
            match data.map(String::from_utf8_lossy) {
                Some(data) if data.contains("secret") => Edit::Dropped,
                Some(data) if data.contains("method") => Edit::Unchanged,
                Some(_) => Edit::Edited(b"{\"result\":{\"edited\":true}}".to_vec()),
                None => Edit::Dropped,
            }
        });
        (out, seen)
    }

    #[test]
    fn on_a_stream_of_answers_every_response_is_edited_whatever_the_pieces() {
        let stream: &[u8] = b"data: {\"method\":\"ping\"}\n\nid: 1\ndata: {\"id\":1,\"result\":{}}\n\ndata: {\"id\":2,\"result\":\"secret\"}\r\n\r\ndata: {\"id\":3,\"error\":{}}\n\n: comment\nretry: 5\n\ndata: {\"method\":\"after\"}\n\n";
        let expected: &[u8] = b"data: {\"method\":\"ping\"}\n\nid: 1\ndata: {\"result\":{\"edited\":true}}\n\ndata: {\"result\":{\"edited\":true}}\n\n: comment\nretry: 5\n\ndata: {\"method\":\"after\"}\n\n";
        assert_relays(|pieces| run_every(pieces, 1 << 20).0, stream, expected);
        // Every event with data, responses or not; the comment is not one.
        assert_eq!(run_every(&[stream], 1 << 20).1, 5);
    }

    #[test]
    fn on_a_stream_of_answers_a_batch_or_what_is_no_json_is_handed_over_too() {
        let stream: &[u8] = b"\xEF\xBB\xBFdata: [{\"id\":1,\"result\":{\"tools\":[\"secret\"]}}]\n\ndata: [\n\ndata:\"secret\"\n\ndata: {\"method\":\"after\"}\n\n";
        let mut seen = Vec::new();
        let run = |pieces: &[&[u8]], seen: &mut Vec<Vec<u8>>| {
            relay(EventEditor::every_response(1 << 20), pieces, |data| {
                let data = data.unwrap_or_default().to_vec();
                let verdict = if data.starts_with(b"{") {
                    Edit::Unchanged
                } else {
                    Edit::Dropped
                };
                seen.push(data);
                verdict
            })
        };
        assert_relays(
            |pieces| run(pieces, &mut Vec::new()),
            stream,
            b"data: {\"method\":\"after\"}\n\n",
        );
        run(&[stream], &mut seen);
        assert_eq!(seen.len(), 4);
        assert!(seen[0].starts_with(b"[{"));
    }

    #[test]
    fn on_a_stream_of_answers_only_what_a_reader_reads_is_relayed() {
        // A lone CR ends a line: `data` is the event's second field. A
        // field no reader knows is left out, comments and known fields kept.
        let stream: &[u8] = b"id: 1\rdata: {\"id\":1,\"result\":\"secret\"}\n\nx-data: secret\n: keep\nretry: 5\n\nx-only: secret\n\n";
        let expected: &[u8] = b": keep\nretry: 5\n\n";
        assert_relays(|pieces| run_every(pieces, 1 << 20).0, stream, expected);
    }

    #[test]
    fn a_batch_is_the_response_event_the_service_is_handed() {
        let stream: &[u8] =
            b"data: {\"method\":\"ping\"}\n\ndata: [{\"id\":1,\"result\":{}}]\n\ndata: {\"id\":1,\"result\":{}}\n\n";
        let (out, seen) = run(&[stream], 1 << 20);
        assert_eq!(seen, [Some(b"[{\"id\":1,\"result\":{}}]".to_vec())]);
        assert!(String::from_utf8_lossy(&out).ends_with("data: {\"id\":1,\"result\":{}}\n\n"));
    }

    #[test]
    fn on_a_stream_of_answers_an_event_over_the_limit_is_left_out_and_the_rest_relayed() {
        let long = format!("data: {{\"id\":1,\"result\":\"{}\"}}\n\n", "x".repeat(100));
        let stream = format!("{long}data: {{\"method\":\"next\"}}\n\n{long}");
        for size in [1, 7, 64, stream.len()] {
            let pieces: Vec<&[u8]> = stream.as_bytes().chunks(size).collect();
            let (out, _) = run_every(&pieces, 32);
            assert_eq!(out, b"data: {\"method\":\"next\"}\n\n", "pieces of {size}");
        }
        // An event the stream does not end is not relayed either.
        let (out, _) = run_every(&[b"data: {\"id\":1,\"result\":{}}\n"], 1 << 20);
        assert!(out.is_empty());
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
