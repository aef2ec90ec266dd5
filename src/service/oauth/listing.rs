//! A relayed `tools/list` answer cut down to the tools a caller's scopes
//! allow (`oauth_tool_scopes`): the answer is held whole (at most the body
//! limit), as JSON or as an event stream, and each JSON-RPC message in it
//! that is a result with `tools` loses the tools the caller may not call.
//! The catalog the gateway learns reads the answer as the upstream sent it.

use serde_json::Value;

/// The answer without the tools `permitted` refuses; `None` when a
/// message in it is not JSON (the caller gets no answer rather than an
/// unfiltered one).
pub fn filter_tools(
    body: &[u8],
    event_stream: bool,
    permitted: &dyn Fn(&str) -> bool,
) -> Option<Vec<u8>> {
    if !event_stream {
        return filter_message(body, permitted);
    }
    let text = std::str::from_utf8(body).ok()?;
    // Lines may end in CRLF, LF or CR (the event stream format).
    let normalized;
    let text = if text.contains('\r') {
        normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        &normalized
    } else {
        text
    };
    let mut out = Vec::with_capacity(body.len());
    // Events are separated by a blank line; a `data` field may span lines.
    for event in text.split_inclusive("\n\n") {
        let mut data = String::new();
        let mut other = String::new();
        for line in event.lines() {
            match line.strip_prefix("data:") {
                Some(rest) => {
                    if !data.is_empty() {
                        data.push('\n');
                    }
                    data.push_str(rest.strip_prefix(' ').unwrap_or(rest));
                }
                None if !line.is_empty() => {
                    other.push_str(line);
                    other.push('\n');
                }
                None => {}
            }
        }
        if data.is_empty() {
            out.extend_from_slice(event.as_bytes());
            continue;
        }
        out.extend_from_slice(other.as_bytes());
        out.extend_from_slice(b"data: ");
        out.extend_from_slice(&filter_message(data.as_bytes(), permitted)?);
        out.extend_from_slice(if event.ends_with("\n\n") {
            b"\n\n"
        } else {
            b"\n"
        });
    }
    Some(out)
}

fn filter_message(message: &[u8], permitted: &dyn Fn(&str) -> bool) -> Option<Vec<u8>> {
    let mut value: Value = serde_json::from_slice(message).ok()?;
    let Some(tools) = value
        .get_mut("result")
        .and_then(|r| r.get_mut("tools"))
        .and_then(Value::as_array_mut)
    else {
        return Some(message.to_vec());
    };
    tools.retain(|tool| {
        tool.get("name")
            .and_then(Value::as_str)
            .is_some_and(permitted)
    });
    serde_json::to_vec(&value).ok()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn only_public(name: &str) -> bool {
        name != "secret"
    }

    #[test]
    fn a_json_answer_loses_the_tools_the_caller_may_not_call() {
        let answer = json!({"jsonrpc": "2.0", "id": 1, "result": {"tools": [
            {"name": "secret", "inputSchema": {}}, {"name": "open", "inputSchema": {}}
        ], "nextCursor": "c"}});
        let out = filter_tools(&serde_json::to_vec(&answer).unwrap(), false, &only_public).unwrap();
        let out: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            out["result"]["tools"],
            json!([{"name": "open", "inputSchema": {}}])
        );
        assert_eq!(out["result"]["nextCursor"], "c");
        // An error answer passes as it is; a body that is not JSON is not sent.
        let error = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-1,"message":"x"}}"#;
        assert_eq!(filter_tools(error, false, &only_public).unwrap(), error);
        assert_eq!(filter_tools(b"{\"result\":", false, &only_public), None);
    }

    #[test]
    fn an_event_stream_is_filtered_event_by_event() {
        let stream = "event: message\nid: 1\ndata: {\"jsonrpc\":\"2.0\",\"method\":\"notifications/progress\"}\n\n\
                      data: {\"jsonrpc\":\"2.0\",\"id\":1,\n\
                      data: \"result\":{\"tools\":[{\"name\":\"secret\"},{\"name\":\"open\"}]}}\n\n";
        let out = String::from_utf8(filter_tools(stream.as_bytes(), true, &only_public).unwrap())
            .unwrap();
        let events: Vec<&str> = out.split_inclusive("\n\n").collect();
        assert_eq!(events.len(), 2, "{out}");
        // Not a result with tools: as it was.
        assert_eq!(events[0], stream.split_inclusive("\n\n").next().unwrap());
        let data: Value = serde_json::from_str(events[1].strip_prefix("data: ").unwrap()).unwrap();
        assert_eq!(data["result"]["tools"], json!([{"name": "open"}]));
        assert_eq!(data["id"], 1);
        assert_eq!(filter_tools(b"data: [\n\n", true, &only_public), None);
        let crlf = "data: {\"id\":2,\"result\":{\"tools\":[{\"name\":\"secret\"}]}}\r\n\r\n\
                    data: {\"id\":3,\"result\":{}}\r\n\r\n";
        let out =
            String::from_utf8(filter_tools(crlf.as_bytes(), true, &only_public).unwrap()).unwrap();
        assert!(!out.contains("secret") && out.contains("\"id\":3"), "{out}");
    }
}
