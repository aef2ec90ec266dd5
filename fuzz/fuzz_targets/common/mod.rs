//! What every gate target asserts about a verdict: one verdict, counted
//! once; a rejection is a well-formed, bounded JSON-RPC answer.
#![allow(dead_code)]

use std::sync::{Mutex, OnceLock};

use mcpgate::unstable::distill::{ECHO_BOUND, MAX_LOCATIONS, MAX_PROBLEMS};
use mcpgate::unstable::reject::codes::DataKey;
use mcpgate::unstable::reject::dialect::{MAX_EXAMPLE_BYTES, MAX_EXAMPLES, MAX_HINTS};
use mcpgate::unstable::reject::envelope::MAX_MESSAGE_BYTES;
use mcpgate::unstable::reject::{Dialect, Rejecter, TABLE, row};
use mcpgate::unstable::server::http::{FrameLimits, frame_request};
use mcpgate::unstable::service::http_error_reason;
use mcpgate::unstable::service::wire::WirePolicy;
use mcpgate::{
    Catalog, CatalogOptions, Gate, GateConfig, Reason, Rejection, RequestHeaders, Verdict,
};
use serde_json::Value;

/// A small body limit keeps executions fast and makes 413 reachable.
pub const BODY_LIMIT: usize = 64 * 1024;

/// The gate, with the project's test catalog (realistic tools, three of
/// them refused at registration) so that the value gate is reached.
pub fn gate() -> &'static Gate {
    static GATE: OnceLock<Gate> = OnceLock::new();
    GATE.get_or_init(|| {
        let gate = Gate::new(GateConfig::builder().body_limit(BODY_LIMIT).build())
            .expect("the protocol roots compile");
        // From the fuzz crate or from the main crate's tests.
        let here = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
        let path = [
            here.join("tests/catalog/tools.json"),
            here.join("../tests/catalog/tools.json"),
        ]
        .into_iter()
        .find(|p| p.is_file())
        .expect("tests/catalog/tools.json");
        let catalog =
            Catalog::from_file(&path, &CatalogOptions::default()).expect("the test catalog");
        gate.set_catalog(catalog);
        gate
    })
}

/// The tools of the test catalog a call can name.
pub const TOOLS: [&str; 6] = [
    "search_orders",
    "create_shipment",
    "get_account",
    "send_message",
    "echo",
    "broken_default",
];

/// The longest a client-derived text may be once cut (`…` is 3 bytes).
pub const ECHO_MAX: usize = ECHO_BOUND + 3;
/// `message` is bounded on its own, after its parts were cut.
pub const MESSAGE_MAX: usize = MAX_MESSAGE_BYTES + 3;

/// The largest answer the envelope can hold. Every string is at most
/// `ECHO_MAX` bytes of text (the message `MESSAGE_MAX`), and JSON escaping
/// writes at most 6 bytes per byte (`\u00XX`); per string, 2 quotes and up
/// to 32 bytes of key, punctuation and the like. The strings: the message,
/// the id, header/expected/received/requested, the supported revisions
/// (fewer than 8), and `MAX_LOCATIONS` locations of one path and
/// `MAX_PROBLEMS` problems plus one "and N more". Plus 256 bytes of fixed
/// envelope (`jsonrpc`, `code`, `total`, braces).
pub const ANSWER_MAX: usize = {
    let per_string = 6 * ECHO_MAX + 2 + 32;
    let strings = 1 + 4 + 8 + MAX_LOCATIONS * (1 + MAX_PROBLEMS + 1);
    256 + 6 * MESSAGE_MAX + 2 + strings * per_string
};

/// Checks `gate().check(headers, body)` and everything its answer must be.
pub fn check(headers: &(impl RequestHeaders + ?Sized), body: &[u8]) {
    check_with(gate(), headers, body);
}

/// [`check`] on `gate`.
pub fn check_with(gate: &Gate, headers: &(impl RequestHeaders + ?Sized), body: &[u8]) {
    // The counts are read before and after: one check at a time (the tests
    // replaying inputs run on several threads).
    static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let before: u64 = TABLE
        .iter()
        .map(|r| gate.rejections().count(r.reason))
        .sum();
    let verdict = gate.check(headers, body);
    let after: u64 = TABLE
        .iter()
        .map(|r| gate.rejections().count(r.reason))
        .sum();
    match verdict {
        Verdict::Allow(allowed) => {
            assert_eq!(after, before, "an allowed message was counted as refused");
            // What is let through is JSON another parser reads too: the
            // upstream will parse it.
            let value: Value = serde_json::from_slice(body).unwrap_or_else(|e| {
                panic!(
                    "allowed, but serde_json refuses it ({e}): {:?}",
                    String::from_utf8_lossy(body)
                )
            });
            assert_eq!(value["jsonrpc"], "2.0");
            if let Some(method) = allowed.method {
                assert_eq!(value["method"].as_str(), Some(method));
            }
        }
        Verdict::Reject(rejection) => {
            assert_eq!(after, before + 1, "a rejection must be counted once");
            check_rejection(&rejection, body);
        }
    }
}

/// A rejection's answer: the status the row and the id echo say, the row's code, a JSON-RPC error
/// envelope with data keys from the row, every string within its bound,
/// and the whole answer within [`ANSWER_MAX`].
pub fn check_rejection(rejection: &Rejection, body: &[u8]) {
    let row = row(rejection.reason);
    assert!(
        rejection.body.len() <= ANSWER_MAX,
        "{} bytes > {ANSWER_MAX}",
        rejection.body.len()
    );
    let answer: Value = serde_json::from_slice(&rejection.body).unwrap_or_else(|e| {
        panic!(
            "the answer is not JSON ({e}): {:?}",
            String::from_utf8_lossy(&rejection.body)
        )
    });
    let object = answer.as_object().expect("the answer is an object");
    assert_eq!(object.get("jsonrpc"), Some(&Value::from("2.0")));
    match object.get("id") {
        Some(Value::Null | Value::String(_)) => {}
        Some(Value::Number(n)) => assert!(n.is_i64() || n.is_u64(), "id {n}"),
        other => panic!("id {other:?}"),
    }
    if let Some(Value::String(id)) = object.get("id") {
        assert!(id.len() <= ECHO_BOUND, "an echoed id over the bound");
    }
    // The row's status, but 200 for a request's refusal (its id echoed)
    // the row answers 400, unless the revision ties it to 400 (its code, or
    // missing `_meta` protocol fields).
    let echoed = object.get("id").is_some_and(|id| !id.is_null());
    let bound_to_400 = [-32020, -32021, -32022].contains(&row.condition.code())
        || rejection.reason == Reason::ProtocolField;
    let status = match echoed && row.status == 400 && !bound_to_400 {
        true => 200,
        false => row.status,
    };
    assert_eq!(rejection.status, status, "{:?}", rejection.reason);
    // The tool dialect answers 200 with a result; nothing else does.
    if let Some(result) = object.get("result") {
        assert_eq!(row.dialect, Dialect::Tool);
        assert_eq!(rejection.status, 200);
        assert!(!object.contains_key("error"));
        assert!(
            rejection.body.len() <= TOOL_ANSWER_MAX,
            "{} bytes",
            rejection.body.len()
        );
        check_tool_result(result);
        return;
    }
    assert_eq!(row.dialect, Dialect::Error);
    for key in object.keys() {
        assert!(matches!(key.as_str(), "jsonrpc" | "id" | "error"), "{key}");
    }
    let error = object["error"].as_object().expect("error is an object");
    assert_eq!(
        error["code"].as_i64(),
        Some(i64::from(row.condition.code()))
    );
    let message = error["message"].as_str().expect("message is a string");
    assert!(message.len() <= MESSAGE_MAX, "message of {}", message.len());
    assert!(!message.contains(['\n', '\r']));
    for key in error.keys() {
        assert!(matches!(key.as_str(), "code" | "message" | "data"), "{key}");
    }
    if let Some(data) = error.get("data") {
        let data = data.as_object().expect("data is an object");
        assert!(!data.is_empty());
        for (key, value) in data {
            let key = DataKey::parse(key).unwrap_or_else(|| panic!("data key {key}"));
            assert!(
                row.data.contains(&key),
                "{key:?} is not on {:?}'s row",
                row.reason
            );
            strings_within_bound(value);
        }
        if let Some(errors) = data.get("errors") {
            let errors = errors.as_array().expect("errors is an array");
            assert!(errors.len() <= MAX_LOCATIONS);
            for location in errors {
                let problems = location["problems"].as_array().expect("problems");
                assert!(problems.len() <= MAX_PROBLEMS + 1);
            }
        }
    }
    // A body over the limit is refused before anything reads it.
    if body.len() > BODY_LIMIT {
        assert_eq!(rejection.reason, Reason::BodyTooLarge);
    }
}

/// The largest tool-dialect answer: the summary (a `message`), then per
/// detail (10 locations of 11 problems) a line in the text and an object
/// of a path, a pointer and an issue (client-derived, each within
/// `ECHO_MAX`) and fixed words; the hints, once in the text and once in
/// the envelope; the examples; 1 KiB of fixed envelope.
pub const TOOL_ANSWER_MAX: usize = {
    let per_string = 6 * ECHO_MAX + 2 + 32;
    let details = MAX_LOCATIONS * (MAX_PROBLEMS + 1);
    1024 + 2 * (6 * MESSAGE_MAX + 2)
        + details * (5 * per_string + 160)
        + 2 * MAX_HINTS * per_string
        + MAX_EXAMPLES * (MAX_EXAMPLE_BYTES + 1)
};

/// A tool-dialect result: `isError`, the text, the envelope's fields and
/// their bounds.
fn check_tool_result(result: &Value) {
    assert_eq!(result["isError"], Value::Bool(true));
    assert!(result["content"][0]["text"].is_string());
    let envelope = result["structuredContent"]
        .as_object()
        .expect("an envelope");
    assert_eq!(envelope["error_kind"], "mcp_input_validation");
    assert_eq!(envelope["retryable"], false);
    assert_eq!(envelope["_envelope_version"], 1);
    let tool = envelope["tool"].as_str().expect("tool");
    assert!(!tool.is_empty() && tool.len() <= ECHO_MAX);
    assert!(
        envelope["summary"]
            .as_str()
            .is_some_and(|s| s.len() <= MESSAGE_MAX)
    );
    let code = envelope["error_code"].as_str().expect("error_code");
    assert!(code.starts_with("SCHEMA_"));
    let details = envelope["details"].as_array().expect("details");
    assert!(!details.is_empty() && details.len() <= MAX_LOCATIONS * (MAX_PROBLEMS + 1));
    for detail in details {
        for key in [
            "path",
            "pointer",
            "issue",
            "received_type",
            "keyword",
            "error_code",
        ] {
            let text = detail[key]
                .as_str()
                .unwrap_or_else(|| panic!("detail {key}"));
            assert!(text.len() <= ECHO_MAX, "{key} of {} bytes", text.len());
        }
    }
    let hints = envelope["hints"].as_array().expect("hints");
    assert!(hints.len() <= MAX_HINTS);
    strings_within_bound(&envelope["hints"]);
    assert!(
        envelope["examples"]
            .as_array()
            .is_some_and(|e| e.len() <= MAX_EXAMPLES)
    );
}

fn strings_within_bound(value: &Value) {
    match value {
        Value::String(s) => assert!(s.len() <= ECHO_MAX, "a string of {} bytes", s.len()),
        Value::Array(items) => items.iter().for_each(strings_within_bound),
        Value::Object(members) => {
            for (key, value) in members {
                assert!(key.len() <= ECHO_MAX);
                strings_within_bound(value);
            }
        }
        _ => {}
    }
}

/// Modern-lane headers for `body`: the version, and `Mcp-Method`/`Mcp-Name`
/// read from the body when it says them (so binding passes and the later
/// stages are reached).
pub fn modern_headers(body: &[u8]) -> Vec<(&'static str, Vec<u8>)> {
    let mut headers = vec![("MCP-Protocol-Version", b"2026-07-28".to_vec())];
    let Ok(value) = serde_json::from_slice::<Value>(body) else {
        return headers;
    };
    if let Some(method) = value.get("method").and_then(Value::as_str) {
        headers.push(("Mcp-Method", method.as_bytes().to_vec()));
        let member = mcpgate::unstable::gate::binding::name_member(method);
        if let Some(name) = member.and_then(|m| value["params"].get(m)?.as_str()) {
            headers.push(("Mcp-Name", header_value(name)));
        }
    }
    headers
}

/// `text` as a header value: as is when it is visible ASCII, else in the
/// base64 sentinel the binding stage decodes.
pub fn header_value(text: &str) -> Vec<u8> {
    use base64::Engine as _;
    if text
        .bytes()
        .all(|b| b == b'\t' || (b' '..=b'~').contains(&b))
    {
        text.as_bytes().to_vec()
    } else {
        let encoded = base64::engine::general_purpose::STANDARD.encode(text);
        format!("=?base64?{encoded}?=").into_bytes()
    }
}

/// The `http` target: the two first bytes pick the read size and the
/// limits, the rest is a raw request. Framed, it never has a body over the
/// limit or a head over its bounds, is the same request whatever the read
/// size, and a refusal answers a 4xx of the rejection table; a framed
/// request then goes through the wire checks and the gate as the server
/// sends it, with [`check`]'s assertions.
pub fn check_framing(data: &[u8]) {
    let [read_size, variant, raw @ ..] = data else {
        return;
    };
    // Small limits reach every limit; the defaults are what is served.
    let limits = match variant % 3 {
        0 => FrameLimits {
            max_headers: 64,
            max_head_bytes: 16 * 1024,
            body_limit: 4 * 1024 * 1024,
        },
        1 => FrameLimits {
            max_headers: 4,
            max_head_bytes: 256,
            body_limit: 64,
        },
        _ => FrameLimits {
            max_headers: 1,
            max_head_bytes: 64,
            body_limit: 0,
        },
    };
    let whole = frame_request(raw, raw.len(), limits);
    let split = frame_request(raw, usize::from(*read_size).max(1), limits);
    match &whole {
        Ok(Some(framed)) => {
            assert!(framed.body.len() <= limits.body_limit);
            assert!(framed.head_len <= limits.max_head_bytes);
            assert!(framed.headers.len() <= limits.max_headers);
            assert!(framed.consumed <= raw.len());
            assert!(framed.head_len + framed.body.len() <= framed.consumed);
            // What the server does next with it: the wire checks of the
            // head, then the gate on the body with the headers as sent.
            let headers = framed.headers.as_slice();
            if let Err(refusal) = WirePolicy::default().check(headers) {
                let row = row(refusal.reason);
                assert_eq!(row.rejecter, Rejecter::Wire);
                assert!((400..500).contains(&row.status));
            }
            check(headers, &framed.body);
        }
        Ok(None) => {}
        Err(error) => {
            let status = row(http_error_reason(*error)).status;
            assert!((400..500).contains(&status), "{error:?} answers {status}");
        }
    }
    // Where the reads split the input changes nothing the request says.
    match (&whole, &split) {
        (Ok(a), Ok(b)) => assert_eq!(a, b),
        (Err(_), Err(_)) => {}
        (a, b) => panic!("whole: {a:?}, in reads of {read_size}: {b:?}"),
    }
}
