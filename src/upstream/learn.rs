//! Learning the catalog from the upstream (ARCHITECTURE.md, "The value gate"): its `tools/list`
//! asked at start and again by its `ttlMs`, or sooner when a call names a
//! tool the catalog lacks ([`Relearn`]), on a thread of its own, off the
//! request path.
//!
//! The listing: every page (`nextCursor`), one blocking exchange per page
//! through `ureq` (the client the JWKS is fetched with too; no content
//! coding), answers read as JSON or as an SSE stream. The 2026-07-28 lane
//! is asked first; an upstream that refuses it is asked on the 2025-11-25
//! lane (initialize, session, `tools/list`, session deleted).

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{Value, json};

use super::UpstreamConfig;
use crate::catalog::{Catalog, CatalogOptions, CatalogSource, Relearn};

/// The largest answer read (bytes).
pub const MAX_ANSWER_BYTES: usize = 16 * 1024 * 1024;
/// Pages followed at most.
pub const MAX_PAGES: usize = 100;

/// Why the upstream's tool list could not be read.
#[derive(Debug, thiserror::Error)]
pub enum ListError {
    /// Neither lane gave the list.
    #[error("2026-07-28: {modern}; 2025-11-25: {legacy}")]
    Lanes {
        modern: Box<ListError>,
        legacy: Box<ListError>,
    },
    /// No answer: the connection, the request or the answer failed.
    #[error("{0}")]
    Exchange(ureq::Error),
    #[error("answer over {MAX_ANSWER_BYTES} bytes")]
    TooLarge,
    #[error("HTTP {0}")]
    Status(u16),
    #[error("not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("no answer to the request")]
    NoAnswer,
    /// The JSON-RPC error's code.
    #[error("JSON-RPC error {0}")]
    JsonRpc(Value),
    #[error("an answer without result")]
    NoResult,
    #[error("the result has no tools array")]
    NoTools,
    #[error("more than {MAX_PAGES} pages")]
    TooManyPages,
}

impl From<ureq::Error> for ListError {
    fn from(error: ureq::Error) -> ListError {
        match error {
            ureq::Error::BodyExceedsLimit(_) => ListError::TooLarge,
            error => ListError::Exchange(error),
        }
    }
}

/// How often the upstream's catalog is asked for again: its `ttlMs`, held
/// between these bounds; without one, [`DEFAULT_REFRESH`].
pub const MIN_REFRESH: Duration = Duration::from_secs(5);
pub const MAX_REFRESH: Duration = Duration::from_secs(3600);
pub const DEFAULT_REFRESH: Duration = Duration::from_secs(60);

/// The upstream's catalog, registered, and when to ask again.
pub fn learn(
    endpoint: &UpstreamConfig,
    options: &CatalogOptions,
    timeout: Duration,
) -> Result<(Catalog, Duration, Vec<Value>), ListError> {
    let listed = list_tools(endpoint, timeout)?;
    let catalog = Catalog::register(&listed.tools, CatalogSource::Upstream, options);
    Ok((catalog, refresh_after(&listed), listed.tools))
}

/// When to list again: the listing's `ttlMs`, held within the bounds.
fn refresh_after(listed: &Listed) -> Duration {
    listed
        .ttl
        .map_or(DEFAULT_REFRESH, |ttl| ttl.clamp(MIN_REFRESH, MAX_REFRESH))
}

/// Learns the upstream's catalog again and again on a thread of its own,
/// off the request path: after `first` (the previous listing's refresh
/// time), then each listing's own, or sooner when `relearn` asks (a call
/// named a tool the catalog lacks), but never twice within
/// [`MIN_REFRESH`]. A failed attempt keeps the catalog in service and is
/// retried with a growing pause, never shorter than [`MIN_REFRESH`], up
/// to 60 seconds. The thread lives until its route is retired at a
/// reload ([`Relearn::retire`]).
pub fn keep_learning(
    endpoint: UpstreamConfig,
    options: CatalogOptions,
    timeout: Duration,
    first: Duration,
    listed: Option<Vec<Value>>,
    relearn: Arc<Relearn>,
    install: impl Fn(Catalog) + Send + 'static,
) -> std::io::Result<std::thread::JoinHandle<()>> {
    std::thread::Builder::new()
        .name("mcpgate-catalog".into())
        .spawn(move || {
            relearn.register_learner();
            let mut wait = first;
            let mut backoff = Duration::from_secs(1);
            // The caller has just asked (at start).
            let mut last = Instant::now();
            // The tools last listed: a listing that repeats them is not
            // registered again, and is logged at debug only.
            let mut previous = listed;
            loop {
                relearn.sleep(wait);
                if relearn.is_retired() {
                    return;
                }
                std::thread::sleep(MIN_REFRESH.saturating_sub(last.elapsed()));
                last = Instant::now();
                match list_tools(&endpoint, timeout) {
                    Ok(listed) => {
                        wait = refresh_after(&listed);
                        backoff = Duration::from_secs(1);
                        if previous.as_ref() == Some(&listed.tools) {
                            tracing::debug!(
                                target: "mcpgate::catalog",
                                tools = listed.tools.len(),
                                "the upstream's catalog listed again, unchanged"
                            );
                            continue;
                        }
                        let catalog =
                            Catalog::register(&listed.tools, CatalogSource::Upstream, &options);
                        catalog.log_in_service("catalog learned from the upstream");
                        install(catalog);
                        previous = Some(listed.tools);
                    }
                    Err(reason) => {
                        tracing::warn!(
                            target: "mcpgate::catalog",
                            reason = %reason,
                            "the upstream's tools/list could not be read; the catalog in service stays"
                        );
                        wait = backoff;
                        backoff = (backoff * 2).min(Duration::from_secs(60));
                    }
                }
            }
        })
}

/// What the upstream listed.
#[derive(Debug, Clone)]
pub struct Listed {
    pub tools: Vec<Value>,
    /// The `ttlMs` of the last page, if it gave one.
    pub ttl: Option<Duration>,
}

/// The upstream's whole tool list.
pub fn list_tools(endpoint: &UpstreamConfig, timeout: Duration) -> Result<Listed, ListError> {
    let client = Client::new(endpoint, timeout);
    match list_modern(&client) {
        Ok(listed) => Ok(listed),
        Err(modern) => list_legacy(&client).map_err(|legacy| ListError::Lanes {
            modern: Box::new(modern),
            legacy: Box::new(legacy),
        }),
    }
}

fn list_modern(client: &Client) -> Result<Listed, ListError> {
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
        let answer = client.exchange(
            &[
                ("MCP-Protocol-Version", "2026-07-28"),
                ("Mcp-Method", "tools/list"),
            ],
            Some(&body),
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
    Err(ListError::TooManyPages)
}

fn list_legacy(client: &Client) -> Result<Listed, ListError> {
    const REVISION: &str = "2025-11-25";
    let initialize = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": REVISION, "capabilities": {},
        "clientInfo": {"name": "mcpgate", "version": env!("CARGO_PKG_VERSION")}}});
    let answer = client.exchange(&[], Some(&initialize))?;
    answer.result(1)?;
    let session = answer.session;
    let mut headers: Vec<(&str, &str)> = vec![("MCP-Protocol-Version", REVISION)];
    if let Some(session) = &session {
        headers.push(("Mcp-Session-Id", session));
    }
    let initialized = json!({"jsonrpc": "2.0", "method": "notifications/initialized"});
    client.exchange(&headers, Some(&initialized))?;
    let mut tools = Vec::new();
    let mut cursor: Option<String> = None;
    let outcome = (|| {
        for page in 0..MAX_PAGES {
            let id = page as u64 + 2;
            let mut body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/list"});
            if let Some(cursor) = &cursor {
                body["params"] = json!({"cursor": cursor});
            }
            let result = client.exchange(&headers, Some(&body))?.result(id)?;
            collect_page(&result, &mut tools, &mut cursor)?;
            if cursor.is_none() {
                return Ok(());
            }
        }
        Err(ListError::TooManyPages)
    })();
    if session.is_some() {
        // The session is ours to end; a failure here changes nothing.
        let _ = client.exchange(&headers, None);
    }
    outcome.map(|()| Listed { tools, ttl: None })
}

fn collect_page(
    result: &Value,
    tools: &mut Vec<Value>,
    cursor: &mut Option<String>,
) -> Result<(), ListError> {
    let page = result
        .get("tools")
        .and_then(Value::as_array)
        .ok_or(ListError::NoTools)?;
    tools.extend(page.iter().cloned());
    *cursor = result
        .get("nextCursor")
        .and_then(Value::as_str)
        .map(str::to_owned);
    Ok(())
}

/// The upstream's endpoint, asked through `ureq`.
struct Client {
    agent: ureq::Agent,
    url: String,
}

impl Client {
    /// `timeout` bounds the connection, and each read and write.
    fn new(endpoint: &UpstreamConfig, timeout: Duration) -> Client {
        let agent = ureq::Agent::config_builder()
            .timeout_connect(Some(timeout))
            .timeout_per_read(Some(timeout))
            .timeout_per_write(Some(timeout))
            // Every status is read (the 2025 lane is asked on a 4xx), a
            // redirect is not followed, and the upstream is reached as
            // the forwarder reaches it: with no proxy.
            .http_status_as_error(false)
            .max_redirects(0)
            .proxy(None)
            // One connection per exchange, as the session's DELETE ends it.
            .max_idle_connections(0)
            .user_agent(concat!("mcpgate/", env!("CARGO_PKG_VERSION")))
            .tls_config(listing_tls(endpoint))
            .build()
            .into();
        Client {
            agent,
            url: endpoint.listing_url(),
        }
    }

    /// A POST of `body`, or a DELETE without one; the answer read whole.
    fn exchange(
        &self,
        headers: &[(&str, &str)],
        body: Option<&Value>,
    ) -> Result<Answer, ListError> {
        let mut answer = match body {
            Some(body) => {
                let mut request = self
                    .agent
                    .post(&self.url)
                    .header("Content-Type", "application/json");
                request = common_headers(request, headers);
                request.send(body.to_string())?
            }
            None => common_headers(self.agent.delete(&self.url), headers).call()?,
        };
        let header = |name: &str| {
            answer
                .headers()
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::trim)
        };
        let event_stream = header("content-type").is_some_and(|v| {
            v.split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .eq_ignore_ascii_case("text/event-stream")
        });
        let session = header("mcp-session-id").map(str::to_owned);
        let status = answer.status().as_u16();
        let body = answer
            .body_mut()
            .with_config()
            .limit(MAX_ANSWER_BYTES as u64)
            .read_to_vec()?;
        Ok(Answer {
            status,
            session,
            event_stream,
            body,
        })
    }
}

/// The forwarder's roots: `upstream_ca_file`'s certificates alone, or
/// Mozilla's (ureq's default, the same list).
fn listing_tls(endpoint: &UpstreamConfig) -> ureq::tls::TlsConfig {
    let tls = ureq::tls::TlsConfig::builder();
    match endpoint.tls.as_ref().and_then(|tls| tls.ca.as_ref()) {
        Some(ca) => {
            let certs = ca
                .iter()
                .map(|c| ureq::tls::Certificate::from_der(c).to_owned());
            tls.root_certs(ureq::tls::RootCerts::Specific(Arc::new(certs.collect())))
        }
        None => tls.root_certs(ureq::tls::RootCerts::WebPki),
    }
    .build()
}

/// What every exchange sends: the media types a client of the endpoint
/// accepts, no content coding (the answer is read as JSON), and the lane's
/// own `headers`.
fn common_headers<B>(
    mut request: ureq::RequestBuilder<B>,
    headers: &[(&str, &str)],
) -> ureq::RequestBuilder<B> {
    request = request
        .header("Accept", "application/json, text/event-stream")
        .header("Accept-Encoding", "identity");
    for (name, value) in headers {
        request = request.header(*name, *value);
    }
    request
}

/// One answer, read whole.
struct Answer {
    status: u16,
    /// Its `Mcp-Session-Id`.
    session: Option<String>,
    event_stream: bool,
    body: Vec<u8>,
}

impl Answer {
    /// The `result` of the JSON-RPC answer with `id`, from a JSON body or
    /// the SSE stream's `data:` messages.
    fn result(&self, id: u64) -> Result<Value, ListError> {
        if !(200..300).contains(&self.status) {
            return Err(ListError::Status(self.status));
        }
        let messages: Vec<Value> = if self.event_stream {
            crate::gate::sse::event_data(&self.body)
                .iter()
                .filter_map(|data| serde_json::from_str(data).ok())
                .collect()
        } else {
            vec![serde_json::from_slice(&self.body).map_err(ListError::NotJson)?]
        };
        let answer = messages
            .into_iter()
            .find(|m| m.get("id") == Some(&json!(id)))
            .ok_or(ListError::NoAnswer)?;
        if let Some(error) = answer.get("error") {
            return Err(ListError::JsonRpc(
                error.get("code").cloned().unwrap_or(Value::Null),
            ));
        }
        answer.get("result").cloned().ok_or(ListError::NoResult)
    }
}

#[cfg(test)]
mod tests {
    use std::io::{Read, Write};

    use super::*;

    /// A scripted upstream on 127.0.0.1: one connection per answer in
    /// `answers`; returns the requests it read, lowercased.
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
                    let text = String::from_utf8_lossy(&request).to_ascii_lowercase();
                    if let Some(end) = text.find("\r\n\r\n") {
                        let length = text
                            .lines()
                            .find_map(|l| l.strip_prefix("content-length: "))
                            .map_or(0, |v| v.trim().parse::<usize>().unwrap());
                        if request.len() >= end + 4 + length {
                            break;
                        }
                    }
                    if n == 0 {
                        break;
                    }
                }
                seen.push(String::from_utf8_lossy(&request).to_ascii_lowercase());
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
            r.contains("mcp-protocol-version: 2026-07-28")
                && r.contains("accept-encoding: identity")
                && r.contains("accept: application/json, text/event-stream")
        }));
        assert!(seen[0].contains("mcp-method: tools/list"));
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
        assert!(seen[3].contains("mcp-protocol-version: 2025-11-25"));
        assert!(seen[3].contains("mcp-session-id: s-1"));
        assert!(seen[4].starts_with("delete /mcp"));
    }

    #[test]
    fn a_chunked_sse_answer_gives_its_data_messages() {
        let mut raw =
            "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ntransfer-encoding: chunked\r\n\r\n"
                .to_owned();
        for chunk in [
            "id: 1\ndata: \n\n",
            "event: message\ndata: {\"jsonrpc\":\"2.0\",\"id\":2,",
            "\"result\":{\"tools\":[]}}\n\n",
        ] {
            raw.push_str(&format!("{:x}\r\n{chunk}\r\n", chunk.len()));
        }
        raw.push_str("0\r\n\r\n");
        let (endpoint, seen) = upstream(vec![raw]);
        let answer = Client::new(&endpoint, Duration::from_secs(5))
            .exchange(&[], Some(&json!({})))
            .unwrap();
        seen.join().unwrap();
        assert_eq!(answer.result(2).unwrap(), json!({"tools": []}));
        assert!(matches!(answer.result(3), Err(ListError::NoAnswer)));
    }

    #[test]
    fn failures_read_as_before() {
        let (endpoint, seen) = upstream(vec![json_answer(503, "{}"), json_answer(503, "{}")]);
        let error = list_tools(&endpoint, Duration::from_secs(5)).unwrap_err();
        seen.join().unwrap();
        assert_eq!(
            error.to_string(),
            "2026-07-28: HTTP 503; 2025-11-25: HTTP 503"
        );
    }
}
