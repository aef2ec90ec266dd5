//! Reading an event stream (`text/event-stream`) whole: the `data` of each
//! event, its lines joined with `\n` as the SSE format says. Used where an
//! answer is read after it was relayed (watching answers, learning the
//! catalog), never on the relay path.

/// The `data` of every event of `stream` that has any.
pub fn event_data(stream: &[u8]) -> Vec<String> {
    let text = String::from_utf8_lossy(stream).replace("\r\n", "\n");
    text.split("\n\n")
        .map(|event| {
            event
                .lines()
                .filter_map(|line| line.strip_prefix("data:"))
                .map(|data| data.strip_prefix(' ').unwrap_or(data))
                .collect::<Vec<_>>()
                .join("\n")
        })
        .filter(|data| !data.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_events_data_lines_are_joined_and_other_fields_ignored() {
        let stream =
            b"event: message\r\ndata: {\"a\":1}\r\n\r\n: comment\nid: 2\ndata:{\"b\":\ndata: 2}\n\nretry: 10\n\n";
        assert_eq!(event_data(stream), ["{\"a\":1}", "{\"b\":\n2}"]);
    }
}
