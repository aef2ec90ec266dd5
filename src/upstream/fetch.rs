//! Learning the catalog from the upstream (ARCHITECTURE.md, "The value gate"): its `tools/list`,
//! every page (`nextCursor`), off the request path. A plain blocking
//! HTTP/1.1 exchange per page (`Connection: close`, no content coding),
//! answers read as JSON or as an SSE stream. The 2026-07-28 lane is asked
//! first; an upstream that refuses it is asked on the 2025-11-25 lane
//! (initialize, session, `tools/list`, session deleted).

use std::io::{Read, Write};
use std::net::TcpStream;
use std::time::Duration;

use serde_json::{Value, json};

use crate::upstream::answer::{BodyState, Parsed, parse_head};
use crate::upstream::{NO_CONTENT_CODING, UpstreamConfig};

/// The largest answer read (bytes).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Pages followed at most.
pub const MAX_PAGES: usize = 100;

/// What the upstream listed.
#[derive(Debug, Clone)]
pub struct Listed {
    pub tools: Vec<Value>,
    /// The `ttlMs` of the last page, if it gave one.
    pub ttl: Option<Duration>,
}

/// The upstream's whole tool list.
pub fn list_tools(endpoint: &UpstreamConfig, timeout: Duration) -> Result<Listed, String> {
    match list_modern(endpoint, timeout) {
        Ok(listed) => Ok(listed),
        Err(modern) => list_legacy(endpoint, timeout)
            .map_err(|legacy| format!("2026-07-28: {modern}; 2025-11-25: {legacy}")),
    }
}

fn list_modern(endpoint: &UpstreamConfig, timeout: Duration) -> Result<Listed, String> {
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    for page in 0..MAX_PAGES {
        let mut params = json!({"_meta": {
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {},
            "io.modelcontextprotocol/clientInfo": {"name": "mcpgate", "version": env!("CARGO_PKG_VERSION")}
        }});
        if let Some(cursor) = &cursor {
            params["cursor"] = json!(cursor);
        }
        let id = page as u64 + 1;
        let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params});
        let answer = exchange(
            endpoint,
            "POST",
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            Some(&body),
            timeout,
        )?;
        let result = answer.result(id)?;
        collect_page(&result, &mut tools, &mut cursor)?;
        if cursor.is_none() {
            let ttl = result
                .get("ttlMs")
                .and_then(Value::as_u64)
                .map(Duration::from_millis);
            return Ok(Listed { tools, ttl });
        }
    }
    Err(format!("more than {MAX_PAGES} pages"))
}

fn list_legacy(endpoint: &UpstreamConfig, timeout: Duration) -> Result<Listed, String> {
    const REVISION: &str = "2025-11-25";
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": REVISION, "capabilities": {},
        "clientInfo": {"name": "mcpgate", "version": env!("CARGO_PKG_VERSION")}}});
    let answer = exchange(endpoint, "POST", &[], Some(&initialize), timeout)?;
    answer.result(1)?;
    let session = answer.header("mcp-session-id").map(str::to_owned);
    let mut headers: Vec<(&str, &str)> = vec![("MCP-Protocol-Version", REVISION)];
    if let Some(session) = &session {
        headers.push(("Mcp-Session-Id", session));
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    exchange(endpoint, "POST", &headers, Some(&initialized), timeout)?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let outcome = (|| {
        for page in 0..MAX_PAGES {
            let id = page as u64 + 2;
            let mut body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            if let Some(cursor) = &cursor {
                body["params"] = json!({"cursor": cursor});
            }
            let result = exchange(endpoint, "POST", &headers, Some(&body), timeout)?.result(id)?;
            collect_page(&result, &mut tools, &mut cursor)?;
            if cursor.is_none() {
                return Ok(());
            }
        }
        Err(format!("more than {MAX_PAGES} pages"))
    })();
    if session.is_some() {
        // The session is ours to end; a failure here changes nothing.
        let _ = exchange(endpoint, "DELETE", &headers, None, timeout);
    }
    outcome.map(|()| Listed { tools, ttl: None })
}

fn collect_page(
    result: &Value,
    tools: &mut Vec<Value>,
    cursor: &mut Option<String>,
) -> Result<(), String> {
    let page = result
        .get("tools")
        .and_then(Value::as_array)
        .ok_or("the result has no tools array")?;
    tools.extend(page.iter().cloned());
    *cursor = result
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(())
}

/// One answer, read whole.
struct Answer {
    status: u16,
    /// `Name: value\r\n` lines, as [`crate::upstream::AnswerHead`] keeps them.
    headers: Vec<u8>,
    event_stream: bool,
    body: Vec<u8>,
}

impl Answer {
    fn header(&self, name: &str) -> Option<&str> {
        std::str::from_utf8(&self.headers)
            .ok()?
            .split("\r\n")
            .filter_map(|line| line.split_once(':'))
            .find(|(n, _)| n.trim().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.trim())
    }

    /// The `result` of the JSON-RPC answer with `id`, from a JSON body or
    /// the SSE stream's `data:` messages.
    fn result(&self, id: u64) -> Result<Value, String> {
        if !(200..300).contains(&self.status) {
            return Err(format!("HTTP {}", self.status));
        }
        let messages: Vec<Value> = if self.event_stream {
            crate::gate::sse::event_data(&self.body)
                .iter()
                .filter_map(|data| serde_json::from_str(data).ok())
                .collect()
        } else {
            vec![serde_json::from_slice(&self.body).map_err(|e| format!("not JSON: {e}"))?]
        };
        let answer = messages
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .ok_or("no answer to the request")?;
        if let Some(error) = answer.get("error") {
            return Err(format!(
                "JSON-RPC error {}",
                error.get("code").unwrap_or(&Value::Null)
            ));
        }
        answer
            .get("result")
            .cloned()
            .ok_or_else(|| "an answer without result".to_owned())
    }
}

fn exchange(
    endpoint: &UpstreamConfig,
    method: &str,
    headers: &[(&str, &str)],
    body: Option<&Value>,
    timeout: Duration,
) -> Result<Answer, String> {
    let mut stream =
        TcpStream::connect_timeout(&endpoint.addr, timeout).map_err(|e| format!("connect: {e}"))?;
    stream.set_read_timeout(Some(timeout)).ok();
    stream.set_write_timeout(Some(timeout)).ok();
    let body = body.map(|b| b.to_string()).unwrap_or_default();
    let mut request = format!(
        "{method} {} HTTP/1.1\r\nHost: {}\r\nConnection: close\r\nAccept: application/json, text/event-stream\r\n{NO_CONTENT_CODING}",
        endpoint.path, endpoint.authority
    );
    if method == "POST" {
        request.push_str(&format!(
            "Content-Type: application/json\r\nContent-Length: {}\r\n",
            body.len()
        ));
    }
    for (name, value) in headers {
        request.push_str(&format!("{name}: {value}\r\n"));
    }
    request.push_str("\r\n");
    request.push_str(&body);
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("send: {e}"))?;
    read_answer(&mut stream)
}

/// Reads one answer: its head, then its body de-framed by the forwarder's
/// own reader, until the framing says it ended (or, for a body delimited
/// by the close, the close).
fn read_answer(stream: &mut impl Read) -> Result<Answer, String> {
    let mut raw = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut eof = false;
    let mut fill = |raw: &mut Vec<u8>, eof: &mut bool| -> Result<(), String> {
        let n = stream.read(&mut buf).map_err(|e| format!("read: {e}"))?;
        *eof = n == 0;
        raw.extend_from_slice(&buf[..n]);
        if raw.len() > MAX_ANSWER_BYTES {
            return Err(format!("answer over {MAX_ANSWER_BYTES} bytes"));
        }
        Ok(())
    };
    let mut at = 0;
    let (head, mut used) = loop {
        match parse_head(&raw[at..]).map_err(|_| "not an HTTP answer")? {
            Parsed::Final(head, length) => break (head, at + length),
            Parsed::Interim(length) => at += length,
            Parsed::Partial if eof => return Err("an incomplete answer".into()),
            Parsed::Partial => fill(&mut raw, &mut eof)?,
        }
    };
    let mut body = Vec::new();
    let mut state = BodyState::new(head.framing);
    loop {
        used += state
            .take(&raw[used..], &mut body)
            .map_err(|_| "a malformed body")?;
        if state.is_done() {
            break;
        }
        if eof {
            state.at_eof().map_err(|_| "an answer cut short")?;
            break;
        }
        fill(&mut raw, &mut eof)?;
    }
    Ok(Answer {
        status: head.status,
        headers: head.headers,
        event_stream: head.event_stream,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A scripted upstream on 127.0.0.1: one connection per answer in
    /// `answers`; returns the requests it read.
    fn upstream(answers: Vec<String>) -> (UpstreamConfig, std::thread::JoinHandle<Vec<String>>) {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let endpoint =
            UpstreamConfig::parse(&format!("http://{}/mcp", listener.local_addr().unwrap()))
                .unwrap();
        let handle = std::thread::spawn(move || {
            let mut seen = Vec::new();
            for answer in answers {
                let (mut stream, _) = listener.accept().unwrap();
                let mut request = Vec::new();
                let mut buf = [0u8; 4096];
                // Read the head, then the body its Content-Length names.
                loop {
                    let n = stream.read(&mut buf).unwrap();
                    request.extend_from_slice(&buf[..n]);
                    let text = String::from_utf8_lossy(&request).to_string();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("Content-Length: "))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                    if n == 0 {
                        break;
                    }
                }
                seen.push(String::from_utf8_lossy(&request).to_string());
                stream.write_all(answer.as_bytes()).unwrap();
            }
            seen
        });
        (endpoint, handle)
    }

    fn json_answer(status: u16, body: &str) -> String {
        format!(
            "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        )
    }

    #[test]
    fn a_modern_upstream_is_listed_page_by_page_with_its_ttl() {
        let (endpoint, seen) = upstream(vec![
            json_answer(
                200,
                r#"{"jsonrpc":"2.0","id":1,"result":{"tools":[{"name":"a"}],"nextCursor":"p2"}}"#,
            ),
            json_answer(
                200,
                r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"b"}],"ttlMs":30000}}"#,
            ),
        ]);
        let listed = list_tools(&endpoint, Duration::from_secs(5)).unwrap();
        assert_eq!(listed.tools.len(), 2);
        assert_eq!(listed.ttl, Some(Duration::from_secs(30)));
        let seen = seen.join().unwrap();
        // Read as JSON: no page may come back compressed.
        assert!(seen.iter().all(|r| {
            r.contains("MCP-Protocol-Version: 2026-07-28")
                && r.contains("Accept-Encoding: identity")
        }));
        assert!(seen[0].contains("Mcp-Method: tools/list"));
        assert!(seen[1].contains(r#""cursor":"p2""#));
    }

    #[test]
    fn an_upstream_that_refuses_the_modern_lane_is_asked_in_a_session() {
        let sse = |body: &str| {
            format!(
                "HTTP/1.1 200 OK\r\nContent-Type: text/event-stream\r\nMcp-Session-Id: s-1\r\n\r\nevent: message\ndata: {body}\n\n"
            )
        };
        let (endpoint, seen) = upstream(vec![
            json_answer(
                400,
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32000,"message":"Bad Request"}}"#,
            ),
            sse(r#"{"jsonrpc":"2.0","id":1,"result":{"protocolVersion":"2025-11-25"}}"#),
            "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n".to_owned(),
            sse(r#"{"jsonrpc":"2.0","id":2,"result":{"tools":[{"name":"echo"}]}}"#),
            "HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n".to_owned(),
        ]);
        let listed = list_tools(&endpoint, Duration::from_secs(5)).unwrap();
        assert_eq!(listed.tools[0]["name"], "echo");
        let seen = seen.join().unwrap();
        assert!(seen[3].contains("MCP-Protocol-Version: 2025-11-25"));
        assert!(seen[3].contains("Mcp-Session-Id: s-1"));
        assert!(seen[4].starts_with("DELETE /mcp"));
    }

    #[test]
    fn an_sse_answer_gives_its_data_messages() {
        let mut raw =
            b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_vec();
        for chunk in [
            "id: 1\ndata: \n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,",
            "\"result\":{\"tools\":[]}}\n\n",
        ] {
            raw.extend_from_slice(format!("{:x}\r\n{chunk}\r\n", chunk.len()).as_bytes());
        }
        raw.extend_from_slice(b"0\r\n\r\n");
        let answer = read_answer(&mut &raw[..]).unwrap();
        assert_eq!(answer.result(2).unwrap(), json!({"tools": []}));
        assert!(answer.result(3).is_err());
    }
}
