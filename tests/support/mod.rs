//! Shared by the gate tests: messages, headers and the official schemas.
//!
//! The official MCP schemas and examples and the error-envelope oracle are
//! reference data from outside the project, read from `../shared` (or
//! `MCPGATE_SHARED_DIR`). A fresh clone has no such folder, so no plain
//! test reads it: the comparisons with it are tests of their own, ignored
//! unless asked for (`cargo test -- --include-ignored`), and an ignored
//! test that runs without the folder fails, saying so. Where a test holds
//! every answer it gets to the reference data as well as to the project's
//! own assertions, its ignored twin ([`against_reference!`]) runs the same
//! body again with those checks on ([`reference_checks`]).
#![allow(dead_code)]

use std::cell::Cell;
use std::path::{Path, PathBuf};

use mcpgate::{Catalog, CatalogOptions, Reason};
use serde_json::{Value, json};

/// Where the reference data is looked for: `MCPGATE_SHARED_DIR`, else
/// `../shared` beside the manifest.
pub fn shared_dir() -> PathBuf {
    std::env::var_os("MCPGATE_SHARED_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared"))
}

/// `sub` of the reference folder; fails the test when it is absent (only
/// ignored tests get here, run on purpose).
fn reference(sub: &str, what: &str) -> PathBuf {
    let dir = shared_dir();
    let path = dir.join(sub);
    assert!(
        path.is_dir(),
        "{what} not found in {}: this test needs the reference folder (../shared, or \
         MCPGATE_SHARED_DIR); a plain `cargo test` leaves it out as ignored",
        dir.display()
    );
    path
}

/// `<shared>/mcp-spec`: the official schemas and examples.
pub fn official_spec() -> PathBuf {
    reference("mcp-spec", "official MCP schemas (mcp-spec/)")
}

/// `<shared>/oracles/openbridge-envelope`: the error-envelope contract.
pub fn envelope_oracle() -> PathBuf {
    reference(
        "oracles/openbridge-envelope",
        "the error-envelope oracle (oracles/openbridge-envelope/)",
    )
}

thread_local! {
    /// Set while a twin of [`against_reference!`] runs its test's body.
    static REFERENCE_CHECKS: Cell<bool> = const { Cell::new(false) };
}

/// Whether the running test holds what it checks to the reference data
/// too: only in the twins of [`against_reference!`], so a plain test never
/// reads the reference folder.
pub fn reference_checks() -> bool {
    REFERENCE_CHECKS.get()
}

/// Runs `test` with [`reference_checks`] on (for this thread, until it
/// returns or fails). Fails first when the reference data is absent, so
/// that a property test does not record the failure as a case of its own.
pub fn with_reference_checks(test: fn()) {
    official_spec();
    envelope_oracle();
    struct Off;
    impl Drop for Off {
        fn drop(&mut self) {
            REFERENCE_CHECKS.set(false);
        }
    }
    REFERENCE_CHECKS.set(true);
    let _off = Off;
    test();
}

/// For each test named, an ignored twin `against_reference::NAME` that runs
/// it again with its answers held to the reference data as well
/// ([`with_reference_checks`]). The tests themselves run on a fresh clone.
#[macro_export]
macro_rules! against_reference {
    ($($test:ident),+ $(,)?) => {
        mod against_reference {
            $(
                #[test]
                #[ignore = "needs ../shared (official MCP schemas, the error-envelope oracle)"]
                fn $test() {
                    $crate::support::with_reference_checks(super::$test);
                }
            )+
        }
    };
}

pub const MODERN: &str = "2026-07-28";

/// The project's catalog of realistic tools (three of them broken).
pub fn catalog_path() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/catalog/tools.json")
}

pub fn test_catalog() -> Catalog {
    Catalog::from_file(&catalog_path(), &CatalogOptions::default()).unwrap()
}

/// The error envelope's JSON Schema, from the contract's oracle, under
/// [`reference_checks`]; `None` otherwise.
pub fn envelope_schema() -> Option<jsonschema::Validator> {
    if !reference_checks() {
        return None;
    }
    let oracle = envelope_oracle();
    let schema = read_json(&oracle.join("schemas/error-envelope.schema.json"));
    Some(jsonschema::draft202012::new(&schema).unwrap())
}

/// An error code as the envelope spells them: `UPPER_SNAKE_CASE`.
pub fn is_upper_snake(code: &str) -> bool {
    code.starts_with(|c: char| c.is_ascii_uppercase())
        && code
            .chars()
            .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_')
}

/// One field of each detail of a tool-dialect envelope, in order.
pub fn detail_field<'e>(envelope: &'e Value, field: &str) -> Vec<&'e str> {
    envelope["details"]
        .as_array()
        .unwrap()
        .iter()
        .map(|detail| detail[field].as_str().unwrap())
        .collect()
}

/// What the project itself promises of the error envelope it writes in
/// `structuredContent` (src/reject/dialect.rs): checked whether or not the
/// contract's schema is at hand, so a fresh clone still holds the shape.
pub fn assert_own_envelope(envelope: &Value) {
    let text = |key: &str| {
        envelope[key]
            .as_str()
            .unwrap_or_else(|| panic!("{key} is not a string in {envelope}"))
    };
    assert_eq!(text("error_kind"), "mcp_input_validation", "{envelope}");
    assert!(!text("tool").is_empty(), "{envelope}");
    let summary = text("summary");
    assert!(!summary.is_empty() && !summary.contains('\n'), "{envelope}");
    assert!(is_upper_snake(text("error_code")), "{envelope}");
    assert_eq!(envelope["retryable"], false, "{envelope}");
    assert_eq!(envelope["_envelope_version"], 1, "{envelope}");
    assert!(envelope["total"].is_u64(), "{envelope}");
    let details = envelope["details"].as_array().expect("details");
    for detail in details {
        for key in [
            "path",
            "pointer",
            "issue",
            "received_type",
            "keyword",
            "error_code",
        ] {
            assert!(detail[key].is_string(), "{key} in {detail}");
        }
        assert!(is_upper_snake(detail["error_code"].as_str().unwrap()));
    }
    let hints = envelope["hints"].as_array().expect("hints");
    assert!(hints.iter().all(Value::is_string), "{envelope}");
    assert!(envelope["examples"].is_array(), "{envelope}");
}

/// What the project itself promises of a JSON-RPC error answer
/// (src/reject/envelope.rs): checked always, the official schema on top
/// when it is at hand.
pub fn assert_own_error(answer: &Value) {
    let object = answer.as_object().expect("an object");
    let mut keys: Vec<&str> = object.keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(keys, ["error", "id", "jsonrpc"], "{answer}");
    assert_eq!(answer["jsonrpc"], "2.0");
    assert!(
        answer["id"].is_null() || answer["id"].is_string() || answer["id"].is_number(),
        "{answer}"
    );
    assert!(answer["error"]["code"].is_i64(), "{answer}");
    assert!(answer["error"]["message"].is_string(), "{answer}");
    assert!(
        answer["error"].get("data").is_none_or(Value::is_object),
        "{answer}"
    );
}

pub fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": MODERN,
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

/// A valid 2026-07-28 tools/call.
pub fn tools_call(id: Value, name: &str, arguments: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"_meta": meta(), "name": name, "arguments": arguments}})
}

/// The headers a 2026-07-28 client sends with `message`.
pub fn modern_headers(message: &Value) -> Vec<(String, String)> {
    let mut headers = vec![("MCP-Protocol-Version".to_owned(), MODERN.to_owned())];
    if let Some(method) = message["method"].as_str() {
        headers.push(("Mcp-Method".to_owned(), method.to_owned()));
        let member = mcpgate::unstable::gate::binding::name_member(method);
        if let Some(value) = member.and_then(|m| message["params"][m].as_str()) {
            headers.push(("Mcp-Name".to_owned(), value.to_owned()));
        }
    }
    headers
}

pub fn legacy_headers() -> Vec<(String, String)> {
    vec![("MCP-Protocol-Version".to_owned(), "2025-11-25".to_owned())]
}

pub fn read_json(path: &Path) -> Value {
    serde_json::from_slice(&std::fs::read(path).unwrap()).unwrap()
}

/// Official `JSONRPCErrorResponse` of a revision, compiled. JSON-RPC 2.0
/// answers `"id": null` when the id cannot be told; the MCP schema has no
/// null id, so the check is made on the envelope without a null id (the
/// tests assert separately when the id is null).
pub struct OfficialError(jsonschema::Validator);

impl OfficialError {
    /// Under [`reference_checks`]; `None` otherwise.
    pub fn load(revision: &str) -> Option<Self> {
        if !reference_checks() {
            return None;
        }
        let spec = official_spec();
        let official = read_json(&spec.join(revision).join("schema.json"));
        let schema =
            mcpgate::unstable::protocol::root_schema(&official, "JSONRPCErrorResponse").unwrap();
        Some(OfficialError(
            jsonschema::draft202012::new(&schema).unwrap(),
        ))
    }

    pub fn check(&self, body: &Value) -> Result<(), String> {
        let mut body = body.clone();
        if body.get("id") == Some(&Value::Null) {
            body.as_object_mut().unwrap().remove("id");
        }
        match self.0.validate(&body) {
            Ok(()) => Ok(()),
            Err(e) => Err(format!("{e} in {body}")),
        }
    }
}

/// [`assert_own_error`], then the official schema's verdict when `official`
/// is at hand.
pub fn check_error(official: Option<&OfficialError>, answer: &Value) {
    assert_own_error(answer);
    if let Some(official) = official {
        official.check(answer).unwrap();
    }
}

/// Client-sent official examples of 2026-07-28, by directory name.
pub fn official_client_examples() -> Vec<(String, Value)> {
    let dir = official_spec().join("2026-07-28/examples");
    let names = [
        "CallToolRequest",
        "CompleteRequest",
        "DiscoverRequest",
        "GetPromptRequest",
        "ListPromptsRequest",
        "ListResourceTemplatesRequest",
        "ListResourcesRequest",
        "ReadResourceRequest",
        "SubscriptionsListenRequest",
        "ListToolsRequest",
        "CancelledNotification",
    ];
    let mut out = Vec::new();
    for name in names {
        let mut files: Vec<_> = std::fs::read_dir(dir.join(name))
            .unwrap()
            .map(|e| e.unwrap().path())
            .collect();
        files.sort();
        for file in files {
            out.push((
                format!("{name}/{}", file.file_name().unwrap().to_string_lossy()),
                read_json(&file),
            ));
        }
    }
    out
}

pub fn own_seeds(revision: &str) -> Vec<Value> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/conformance/seeds-{revision}.ndjson"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty())
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The status a refusal for `reason` answering `id` goes with (REFERENCE.md,
/// "HTTP status of a refusal"): a request's (its id echoed) refused 400
/// goes with 200, as MCP servers answer, unless its code is one the
/// 2026-07-28 schema ties to 400 or it lacks the `_meta` protocol fields
/// (400 by SEP-2575); every other answer, its row's status.
pub fn answered_status(reason: Reason, id: &Value) -> u16 {
    let row = mcpgate::unstable::reject::row(reason);
    let bound_to_400 =
        [-32020, -32021, -32022].contains(&row.condition.code()) || reason == Reason::ProtocolField;
    if !id.is_null() && row.status == 400 && !bound_to_400 {
        200
    } else {
        row.status
    }
}

/// One message that triggers `reason` through the gate, with the id its
/// answer must carry; `None` for the rows only a server reaches (the wire
/// stage's, the forwarder's: tests/serve.rs reaches every row over HTTP).
/// The match is exhaustive: a new row needs a decision here.
/// Headers, body, and the id the answer must carry.
pub type Scenario = (Vec<(String, String)>, Vec<u8>, Value);

pub fn scenario(reason: Reason) -> Option<Scenario> {
    Some(match reason {
        Reason::MethodNotAllowed
        | Reason::UnknownPath
        | Reason::UnknownSession
        | Reason::OriginNotAllowed
        | Reason::Unauthorized
        | Reason::UnsupportedMediaType
        | Reason::UnsupportedContentEncoding
        | Reason::NotAcceptable
        | Reason::HeadTooLarge
        | Reason::BadHttp
        | Reason::RepeatedHeader
        | Reason::MissingHost
        | Reason::NominatedHeader
        | Reason::BodyNotAllowed
        | Reason::NoUpstream
        | Reason::UpstreamUnreachable
        | Reason::UpstreamTimeout
        | Reason::UpstreamBadAnswer
        | Reason::TokenMissing
        | Reason::TokenInvalid
        | Reason::TokenExpired
        | Reason::WrongAudience
        | Reason::WrongIssuer
        | Reason::InsufficientScope
        | Reason::UnderscoredHeader
        | Reason::UnmirroredHeader
        | Reason::TokenInQuery => return None,
        gate_reason => message_for(gate_reason),
    })
}

fn message_for(reason: Reason) -> Scenario {
    let modern = |message: &Value| {
        (
            modern_headers(message),
            serde_json::to_vec(message).unwrap(),
        )
    };
    let list = |id: Value| json!({"jsonrpc":"2.0","id":id,"method":"tools/list","params":{"_meta": meta()}});
    match reason {
        Reason::BodyTooLarge => {
            let message = tools_call(json!(1), "echo", json!({"text": "x".repeat(8192)}));
            let (h, b) = modern(&message);
            (h, b, Value::Null)
        }
        Reason::MalformedJson => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":1,"#.to_vec(),
            Value::Null,
        ),
        Reason::Batch => (
            legacy_headers(),
            br#"[{"jsonrpc":"2.0","id":1,"method":"ping"}]"#.to_vec(),
            Value::Null,
        ),
        Reason::DuplicateKey => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":1,"id":2,"method":"ping"}"#.to_vec(),
            Value::Null,
        ),
        Reason::TooDeep => {
            let body = format!(
                r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"x":{}{}}}}}"#,
                "[".repeat(200),
                "]".repeat(200)
            );
            (legacy_headers(), body.into_bytes(), Value::Null)
        }
        Reason::UnidentifiedRequest => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":null,"method":"ping"}"#.to_vec(),
            Value::Null,
        ),
        Reason::UnknownMessage => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":4}"#.to_vec(),
            Value::Null,
        ),
        Reason::UnsupportedProtocolVersion => {
            let message = list(json!(7));
            let mut headers = modern_headers(&message);
            headers[0].1 = "1999-01-01".to_owned();
            (headers, serde_json::to_vec(&message).unwrap(), json!(7))
        }
        Reason::ProtocolField => {
            let message = json!({"jsonrpc":"2.0","id":"pf","method":"tools/list",
                "params":{"_meta":{"io.modelcontextprotocol/protocolVersion": MODERN}}});
            let (h, b) = modern(&message);
            (h, b, json!("pf"))
        }
        Reason::HeaderMismatch => {
            let message = tools_call(json!(9), "echo", json!({}));
            let (mut h, b) = modern(&message);
            h.iter_mut().find(|(n, _)| n == "Mcp-Name").unwrap().1 = "other".to_owned();
            (h, b, json!(9))
        }
        Reason::MethodNotFound => {
            let message =
                json!({"jsonrpc":"2.0","id":3,"method":"initialize","params":{"_meta": meta()}});
            let (h, b) = modern(&message);
            (h, b, json!(3))
        }
        Reason::MethodNotFoundLegacy => (
            legacy_headers(),
            br#"{"jsonrpc":"2.0","id":"m","method":"no/such"}"#.to_vec(),
            json!("m"),
        ),
        Reason::InvalidParams => {
            let mut message = tools_call(json!(11), "echo", json!({}));
            message["params"]["name"] = json!(5);
            let (h, b) = modern(&message);
            (h, b, json!(11))
        }
        Reason::InvalidRequest => {
            let mut message = list(json!(12));
            message["jsonrpc"] = json!("1.0");
            let (h, b) = modern(&message);
            (h, b, json!(12))
        }
        // The three rows of the value gate call tools of `test_catalog()`.
        Reason::ParamHeaderMismatch => {
            let message = tools_call(json!(21), "get_account", json!({"accountId": 42}));
            let (mut h, b) = modern(&message);
            h.push(("Mcp-Param-Account-Id".to_owned(), "43".to_owned()));
            (h, b, json!(21))
        }
        Reason::UnknownTool => {
            let message = tools_call(json!(22), "serch_orders", json!({}));
            let (h, b) = modern(&message);
            (h, b, json!(22))
        }
        Reason::InvalidArguments => {
            let message = tools_call(
                json!(23),
                "search_orders",
                json!({"marketplaceIds": ["A"], "region": "XX"}),
            );
            let (h, b) = modern(&message);
            (h, b, json!(23))
        }
        // Asked of a gate that awaits its catalog and has none yet.
        Reason::CatalogUnknown => {
            let message = tools_call(json!(24), "echo", json!({}));
            let (h, b) = modern(&message);
            (h, b, json!(24))
        }
        // `arguments` beside the same member in another case.
        Reason::AliasedMember => {
            let mut message = tools_call(json!(25), "echo", json!({}));
            message["params"]["Arguments"] = json!({"text": 1});
            let (h, b) = modern(&message);
            (h, b, json!(25))
        }
        other => unreachable!("{other:?} has no gate scenario"),
    }
}

/// Each named scenario (a function of the driver) as one test per io
/// driver: a gateway runs on io_uring by default where the kernel offers
/// it, and on epoll where not or when set.
#[macro_export]
macro_rules! on_each_driver {
    ($($name:ident),* $(,)?) => {
        mod on_epoll {
            $(#[test]
            fn $name() {
                super::$name("epoll");
            })*
        }
        mod on_uring {
            $(#[test]
            fn $name() {
                if !mcpgate::unstable::server::IoDriver::uring_offered() {
                    println!("note: io_uring refused here, not tested");
                    return;
                }
                super::$name("uring");
            })*
        }
    };
}
