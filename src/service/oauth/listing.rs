//! A relayed `tools/list` answer cut down to the tools a caller's scopes
//! allow (`oauth_tool_scopes`): the answer is held whole (at most the body
//! limit), as JSON or as an event stream, and each JSON-RPC message in it
//! (each element of a batch) that is a result with `tools` loses the tools
//! the caller may not call. What cannot be read as messages is never
//! relayed: a whole answer is refused, a stream's event left out.
//! The catalog the gateway learns reads the answer as the upstream sent it.

use serde::de;
use serde_json::Value;

/// The answer without the tools `permitted` refuses; `None` when a
/// message in it cannot be read (the caller gets no answer rather than an
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
    // A reader drops a byte order mark opening the stream: so does this,
    // or the first event's data would be taken for another field.
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
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
    // Each event is written anew from what was read of it: its data
    // filtered, a line per data line, and only the other lines a reader
    // takes in (comments, `event`, `id`, `retry`): a field a lax reader
    // might take for data is not relayed.
    for event in text.split_inclusive("\n\n") {
        let mut data: Option<String> = None;
        let mut other = String::new();
        for line in event.lines() {
            let (name, value) = line.split_once(':').unwrap_or((line, ""));
            match name {
                "data" => {
                    let data = match &mut data {
                        Some(data) => {
                            data.push('\n');
                            data
                        }
                        None => data.insert(String::new()),
                    };
                    data.push_str(value.strip_prefix(' ').unwrap_or(value));
                }
                "" if line.is_empty() => {}
                "" | "event" | "id" | "retry" => {
                    other.push_str(line);
                    other.push('\n');
                }
                _ => {}
            }
        }
        out.extend_from_slice(other.as_bytes());
        if let Some(data) = data {
            for line in filter_message(data.as_bytes(), permitted)?.split(|&b| b == b'\n') {
                out.extend_from_slice(b"data: ");
                out.extend_from_slice(line);
                out.push(b'\n');
            }
        } else if other.is_empty() {
            continue;
        }
        out.extend_from_slice(if event.ends_with("\n\n") { b"\n" } else { b"" });
    }
    Some(out)
}

/// One JSON-RPC message, or a batch of them, without the tools
/// `permitted` refuses; `None` for what cannot be read as such: not JSON,
/// an object holding a key twice (the caller might read the other one),
/// a batch element that is not an object, a `result.tools` that is not a
/// list. A message with no `result.tools` passes as it came; one with
/// tools is written anew from what was read.
fn filter_message(message: &[u8], permitted: &dyn Fn(&str) -> bool) -> Option<Vec<u8>> {
    let mut de = serde_json::Deserializer::from_slice(message);
    let mut value = de::DeserializeSeed::deserialize(Strict, &mut de).ok()?;
    de.end().ok()?;
    let mut filtered = false;
    match &mut value {
        Value::Array(batch) => {
            for element in batch {
                filtered |= filter_result(element.as_object_mut()?, permitted)?;
            }
        }
        Value::Object(object) => filtered = filter_result(object, permitted)?,
        _ => return None,
    }
    if !filtered {
        return Some(message.to_vec());
    }
    serde_json::to_vec(&value).ok()
}

/// Drops the refused tools from a message's `result.tools`: whether it
/// has a list of tools; `None` when `tools` is there and not a list.
fn filter_result(
    message: &mut serde_json::Map<String, Value>,
    permitted: &dyn Fn(&str) -> bool,
) -> Option<bool> {
    let Some(tools) = message
        .get_mut("result")
        .and_then(Value::as_object_mut)
        .and_then(|result| result.get_mut("tools"))
    else {
        return Some(false);
    };
    tools.as_array_mut()?.retain(|tool| {
        tool.get("name")
            .and_then(Value::as_str)
            .is_some_and(permitted)
    });
    Some(true)
}

/// Reads JSON as a [`Value`], refusing an object that holds a key twice
/// (`Value` would keep the last, and a caller's parser may keep the
/// first).
struct Strict;

impl<'de> de::DeserializeSeed<'de> for Strict {
    type Value = Value;

    fn deserialize<D: de::Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        deserializer.deserialize_any(self)
    }
}

impl<'de> de::Visitor<'de> for Strict {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("JSON without a repeated key")
    }

    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::from(v))
    }

    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    fn visit_seq<A: de::SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut list = Vec::new();
        while let Some(element) = seq.next_element_seed(Strict)? {
            list.push(element);
        }
        Ok(Value::Array(list))
    }

    fn visit_map<A: de::MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut object = serde_json::Map::new();
        while let Some(key) = map.next_key::<String>()? {
            if object.contains_key(&key) {
                return Err(de::Error::custom("a key held twice"));
            }
            let value = map.next_value_seed(Strict)?;
            object.insert(key, value);
        }
        Ok(Value::Object(object))
    }
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
    fn a_batch_is_filtered_element_by_element_and_what_cannot_be_read_is_refused() {
        let batch = br#"[{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"secret"},{"name":"open"}]}},{"jsonrpc":"2.0","method":"notifications/progress"},{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"secret","description":"hidden"}]}}]"#;
        let out: Value =
            serde_json::from_slice(&filter_tools(batch, false, &only_public).unwrap()).unwrap();
        assert_eq!(out[0]["result"]["tools"], json!([{"name": "open"}]));
        assert_eq!(out[1]["method"], "notifications/progress");
        assert_eq!(out[2]["result"]["tools"], json!([]));
        let event = format!("data: {}\n\n", String::from_utf8_lossy(batch));
        let out = filter_tools(event.as_bytes(), true, &only_public).unwrap();
        assert!(!String::from_utf8_lossy(&out).contains("secret"));
        for unreadable in [
            &br#"[{"result":{"tools":[{"name":"secret"}]}},"x"]"#[..],
            br#"[[{"result":{"tools":[{"name":"secret"}]}}]]"#,
            br#"{"result":{"tools":{"secret":{"name":"secret"}}}}"#,
            br#""{\"result\":{\"tools\":[{\"name\":\"secret\"}]}}""#,
        ] {
            assert_eq!(filter_tools(unreadable, false, &only_public), None);
        }
        // A key held twice, whichever: the caller might read the other one.
        for twice in [
            &br#"{"id":1,"result":{"tools":[{"name":"secret"}]},"result":{}}"#[..],
            br#"{"id":1,"result":{"tools":[{"name":"secret"}],"tools":[]}}"#,
            br#"[{"id":1,"result":{},"id":2}]"#,
        ] {
            assert_eq!(filter_tools(twice, false, &only_public), None);
        }
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
        let bom = "\u{feff}data: {\"id\":2,\"result\":{\"tools\":[{\"name\":\"secret\"}]}}\n\n";
        let out =
            String::from_utf8(filter_tools(bom.as_bytes(), true, &only_public).unwrap()).unwrap();
        assert_eq!(out, "data: {\"id\":2,\"result\":{\"tools\":[]}}\n\n");
        // Only what a reader reads is relayed; data over lines stays so.
        let fields = "x-data: {\"name\":\"secret\"}\n: keep\nevent: e\ndata: {\"id\":1,\n\
                      data: \"result\":{}}\n\nx-only: secret\n\n";
        let out = String::from_utf8(filter_tools(fields.as_bytes(), true, &only_public).unwrap())
            .unwrap();
        assert_eq!(
            out,
            ": keep\nevent: e\ndata: {\"id\":1,\ndata: \"result\":{}}\n\n"
        );
    }
}
