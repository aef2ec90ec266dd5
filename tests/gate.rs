//! The gate as a library: official examples pass, every rejection-table
//! row is reachable and answered as its row says, every answer is a
//! well-formed envelope, and nothing of the request is echoed beyond the
//! echo bound.
//!
//! The official examples and schemas come from the reference folder
//! (`tests/support/mod.rs`): the tests that read it are ignored unless
//! asked for, and the project's own seeds, catalog and assertions run
//! without it.

mod support;

use std::collections::BTreeSet;

use mcpgate::unstable::reject::codes::DataKey;
use mcpgate::unstable::reject::{Dialect, Rejecter, TABLE};
use mcpgate::{Gate, GateConfig, Reason, RefusalStatus, Verdict};
use proptest::prelude::*;
use serde_json::{Value, json};
use support::*;

fn gate() -> Gate {
    Gate::new(GateConfig::default()).unwrap()
}

fn reject_body(verdict: &Verdict<'_>) -> Value {
    match verdict {
        Verdict::Reject(rejection) => serde_json::from_slice(&rejection.body).expect("a JSON body"),
        Verdict::Allow(allowed) => panic!("allowed: {allowed:?}"),
    }
}

#[test]
#[ignore = "needs ../shared (official MCP schemas)"]
fn every_official_client_example_is_allowed_on_the_modern_lane() {
    // Reference data: without it, `every_own_seed_is_allowed_on_its_lane`
    // still sends a message of each of these eleven methods.
    let examples = official_client_examples();
    let gate = gate();
    assert!(examples.len() >= 11);
    for (name, message) in examples {
        let body = serde_json::to_vec(&message).unwrap();
        match gate.check(modern_headers(&message).as_slice(), &body) {
            Verdict::Allow(allowed) => {
                assert_eq!(allowed.method, message["method"].as_str(), "{name}")
            }
            Verdict::Reject(r) => panic!("{name}: {}", String::from_utf8_lossy(&r.body)),
        }
    }
}

#[test]
fn every_own_seed_is_allowed_on_its_lane() {
    let gate = gate();
    for message in own_seeds("2026-07-28") {
        let body = serde_json::to_vec(&message).unwrap();
        let verdict = gate.check(modern_headers(&message).as_slice(), &body);
        assert!(
            matches!(verdict, Verdict::Allow(_)),
            "{message}: {verdict:?}"
        );
    }
    for message in own_seeds("2025-11-25") {
        let body = serde_json::to_vec(&message).unwrap();
        let verdict = gate.check(legacy_headers().as_slice(), &body);
        assert!(
            matches!(verdict, Verdict::Allow(_)),
            "{message}: {verdict:?}"
        );
    }
}

#[test]
fn every_rejection_row_is_reachable_answered_as_its_row_says_and_counted_once() {
    let gate = Gate::new(GateConfig::builder().body_limit(4096).build()).unwrap();
    gate.set_catalog(test_catalog());
    // A gate whose catalog is learned and not known yet.
    let awaiting = Gate::new(GateConfig::builder().await_catalog(true).build()).unwrap();
    // The official error schema and the envelope contract are checked on
    // top of the project's own assertions in this test's twin.
    let official = OfficialError::load(MODERN);
    let envelope = envelope_schema();
    let mut reached = 0;
    for row in TABLE.iter() {
        let Some((headers, body, id)) = scenario(row.reason) else {
            continue;
        };
        let gate = match row.reason {
            Reason::CatalogUnknown => &awaiting,
            _ => &gate,
        };
        let before: Vec<u64> = TABLE
            .iter()
            .map(|r| gate.rejections().count(r.reason))
            .collect();
        let verdict = gate.check(headers.as_slice(), &body);
        let Verdict::Reject(rejection) = &verdict else {
            panic!("{:?} allowed", row.reason)
        };
        assert_eq!(
            rejection.reason,
            row.reason,
            "{}",
            String::from_utf8_lossy(&rejection.body)
        );
        let answer = reject_body(&verdict);
        assert_eq!(answer["id"], id, "{:?}: id echo", row.reason);
        assert_eq!(
            rejection.status,
            answered_status(row.reason, &id),
            "{:?}",
            row.reason
        );
        if row.dialect == Dialect::Tool {
            assert_eq!(answer["result"]["isError"], json!(true));
            let content = &answer["result"]["structuredContent"];
            assert_own_envelope(content);
            if let Some(envelope) = &envelope {
                assert!(envelope.is_valid(content), "{content}");
            }
            assert_counted_once(gate, &before, row.reason);
            reached += 1;
            continue;
        }
        assert_eq!(
            answer["error"]["code"],
            json!(row.condition.code()),
            "{:?}",
            row.reason
        );
        check_error(official.as_ref(), &answer);
        let keys: BTreeSet<DataKey> = answer["error"]["data"]
            .as_object()
            .map(|d| {
                d.keys()
                    .map(|k| DataKey::parse(k).unwrap_or_else(|| panic!("unlisted data key {k}")))
                    .collect()
            })
            .unwrap_or_default();
        let row_keys: BTreeSet<DataKey> = row.data.iter().copied().collect();
        assert!(
            keys.is_subset(&row_keys),
            "{:?}: {keys:?} not within {row_keys:?}",
            row.reason
        );
        let required: BTreeSet<DataKey> = row_keys
            .iter()
            .copied()
            .filter(|k| *k != DataKey::Received)
            .collect();
        assert!(
            required.is_subset(&keys),
            "{:?}: {keys:?} lacks some of {required:?}",
            row.reason
        );
        assert_counted_once(gate, &before, row.reason);
        reached += 1;
    }
    // Every row but the wire stage's and the forwarder's.
    let server_only = TABLE
        .iter()
        .filter(|r| {
            matches!(r.rejecter, Rejecter::Wire | Rejecter::Forward)
                && r.reason != Reason::BodyTooLarge
        })
        .count();
    assert_eq!(reached, TABLE.len() - server_only);
}

#[test]
fn with_refusal_status_http_every_row_reached_is_answered_with_its_rows_status() {
    let config = |await_catalog| {
        GateConfig::builder()
            .body_limit(4096)
            .await_catalog(await_catalog)
            .refusal_status(RefusalStatus::Http)
            .build()
    };
    let gate = Gate::new(config(false)).unwrap();
    gate.set_catalog(test_catalog());
    let awaiting = Gate::new(config(true)).unwrap();
    let mut moved = Vec::new();
    for row in TABLE.iter() {
        let Some((headers, body, id)) = scenario(row.reason) else {
            continue;
        };
        let gate = match row.reason {
            Reason::CatalogUnknown => &awaiting,
            _ => &gate,
        };
        let Verdict::Reject(rejection) = gate.check(headers.as_slice(), &body) else {
            panic!("{:?} allowed", row.reason)
        };
        assert_eq!(rejection.reason, row.reason);
        assert_eq!(rejection.status, row.status, "{:?}", row.reason);
        if answered_status(row.reason, &id) != row.status {
            moved.push(row.name);
        }
    }
    // The rows the default answers otherwise: each a request's refusal.
    assert_eq!(
        moved,
        [
            "invalid_params",
            "invalid_request",
            "unknown_tool",
            "aliased_member"
        ]
    );
}

/// Exactly `reason`'s counter moved since `before`.
fn assert_counted_once(gate: &Gate, before: &[u64], reason: Reason) {
    for (other, count_before) in TABLE.iter().zip(before) {
        let expected = count_before + u64::from(other.reason == reason);
        assert_eq!(
            gate.rejections().count(other.reason),
            expected,
            "{:?} after {:?}",
            other.reason,
            reason
        );
    }
}

#[test]
fn a_missing_mcp_method_header_is_a_mismatch_without_received() {
    let gate = gate();
    let message = json!({"jsonrpc":"2.0","id":10,"method":"tools/list","params":{"_meta": meta()}});
    let headers = vec![("MCP-Protocol-Version".to_owned(), MODERN.to_owned())];
    let answer =
        reject_body(&gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap()));
    assert_eq!(answer["error"]["code"], json!(-32020));
    assert_eq!(
        answer["error"]["data"],
        json!({"header": "Mcp-Method", "expected": "tools/list"})
    );
    assert_eq!(answer["id"], json!(10));
}

#[test]
fn a_body_version_that_differs_from_the_header_is_a_header_mismatch() {
    let gate = gate();
    let message = json!({"jsonrpc":"2.0","id":13,"method":"tools/list","params":{"_meta": meta()}});
    let answer = reject_body(&gate.check(
        legacy_headers().as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["code"], json!(-32020));
    assert_eq!(
        answer["error"]["data"],
        json!({"header": "MCP-Protocol-Version", "expected": MODERN, "received": "2025-11-25"})
    );
}

#[test]
fn mirrored_headers_sent_on_a_2025_lane_are_held_to_the_body_but_not_required() {
    // The 2025 revisions have no `Mcp-Method`/`Mcp-Name`; one sent anyway
    // is what an intermediary behind the gateway may route or authorize by.
    let gate = gate();
    let legacy_call = json!({"jsonrpc":"2.0","id":21,"method":"tools/call",
        "params":{"name":"delete_file","arguments":{}}});
    let body = serde_json::to_vec(&legacy_call).unwrap();
    let with = |extra: &[(&str, &str)]| {
        let mut headers = legacy_headers();
        headers.extend(extra.iter().map(|&(n, v)| (n.to_owned(), v.to_owned())));
        headers
    };
    for (extra, header, expected, received) in [
        (
            &[("Mcp-Method", "tools/list")][..],
            "Mcp-Method",
            "tools/call",
            "tools/list",
        ),
        (
            &[("Mcp-Method", "tools/call"), ("Mcp-Name", "read_file")],
            "Mcp-Name",
            "delete_file",
            "read_file",
        ),
    ] {
        let answer = reject_body(&gate.check(with(extra).as_slice(), &body));
        assert_eq!(answer["error"]["code"], json!(-32020), "{extra:?}");
        assert_eq!(
            answer["error"]["data"],
            json!({"header": header, "expected": expected, "received": received})
        );
        assert_eq!(answer["id"], json!(21));
    }
    for extra in [
        &[][..],
        &[("Mcp-Method", "tools/call")],
        &[("Mcp-Method", "tools/call"), ("Mcp-Name", "delete_file")],
    ] {
        let verdict = gate.check(with(extra).as_slice(), &body);
        assert!(
            matches!(verdict, Verdict::Allow(_)),
            "{extra:?}: {verdict:?}"
        );
    }
}

#[test]
fn a_base64_mcp_name_is_decoded_before_comparison() {
    let gate = gate();
    let message = tools_call(json!(1), "tööl_unicode", json!({}));
    let mut headers = modern_headers(&message);
    headers.iter_mut().find(|(n, _)| n == "Mcp-Name").unwrap().1 =
        "=?base64?dMO2w7ZsX3VuaWNvZGU=?=".to_owned();
    let verdict = gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap());
    assert!(matches!(verdict, Verdict::Allow(_)), "{verdict:?}");
}

#[test]
fn a_missing_client_capabilities_field_is_named() {
    let gate = gate();
    let message = json!({"jsonrpc":"2.0","id":1,"method":"tools/list",
        "params":{"_meta":{"io.modelcontextprotocol/protocolVersion": MODERN}}});
    let answer = reject_body(&gate.check(
        modern_headers(&message).as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["code"], json!(-32602));
    let message_text = answer["error"]["message"].as_str().unwrap();
    assert!(
        message_text.contains("io.modelcontextprotocol/clientCapabilities"),
        "{message_text}"
    );
    assert_eq!(
        answer["error"]["data"]["errors"][0]["path"],
        json!("/params/_meta")
    );
}

#[test]
fn a_params_problem_is_invalid_params_and_an_envelope_problem_invalid_request() {
    let gate = gate();
    let mut message = tools_call(json!(1), "echo", json!({}));
    message["params"]["inputResponses"] = json!({"a": {"action": "maybe"}});
    let answer = reject_body(&gate.check(
        modern_headers(&message).as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let paths: Vec<&str> = answer["error"]["data"]["errors"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["path"].as_str().unwrap())
        .collect();
    assert!(
        paths
            .iter()
            .all(|p| p.starts_with("/params/inputResponses/a")),
        "{paths:?}"
    );

    let mut message = tools_call(json!(2), "echo", json!({}));
    message["params"] = json!("not an object");
    let answer = reject_body(&gate.check(
        modern_headers(&message).as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    assert_eq!(answer["id"], json!(2));
}

/// `jsonrpc` and `params.name` are checked by the gate before the root's
/// verdict (the root it compiles leaves them out); a message that fails
/// them gets the answer of the root as written, naming the member.
#[test]
fn a_wrong_jsonrpc_or_name_or_missing_params_is_refused_and_named_as_the_schema_says() {
    let gate = gate();
    let answer_to = |message: &Value| {
        reject_body(&gate.check(
            modern_headers(message).as_slice(),
            &serde_json::to_vec(message).unwrap(),
        ))
    };
    let paths = |answer: &Value| -> Vec<String> {
        answer["error"]["data"]["errors"]
            .as_array()
            .unwrap()
            .iter()
            .map(|e| e["path"].as_str().unwrap().to_owned())
            .collect()
    };
    for jsonrpc in [json!("1.0"), json!(2.0), Value::Null] {
        let mut message = tools_call(json!(1), "echo", json!({}));
        message["jsonrpc"] = jsonrpc.clone();
        let answer = answer_to(&message);
        assert_eq!(
            answer["error"]["code"],
            json!(-32600),
            "{jsonrpc}: {answer}"
        );
        assert_eq!(answer["id"], json!(1));
    }
    let mut message = tools_call(json!(2), "echo", json!({}));
    message.as_object_mut().unwrap().remove("jsonrpc");
    let answer = answer_to(&message);
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");

    let mut message = tools_call(json!(3), "echo", json!({}));
    message["params"]["name"] = json!(7);
    let mut headers = modern_headers(&message);
    headers.retain(|(name, _)| !name.eq_ignore_ascii_case("Mcp-Name"));
    let answer =
        reject_body(&gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap()));
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    assert_eq!(paths(&answer), ["/params/name"], "{answer}");

    let mut message = tools_call(json!(4), "echo", json!({}));
    message["params"].as_object_mut().unwrap().remove("name");
    let answer = answer_to(&message);
    assert_eq!(answer["error"]["code"], json!(-32602), "{answer}");
    let text = answer["error"]["message"].as_str().unwrap();
    assert!(text.contains("name"), "{text}");

    // No params at all: the root as written requires them.
    let mut message = tools_call(json!(5), "echo", json!({}));
    message.as_object_mut().unwrap().remove("params");
    let answer = answer_to(&message);
    assert_eq!(answer["error"]["code"], json!(-32600), "{answer}");
    assert_eq!(answer["id"], json!(5));
    let text = answer["error"]["message"].as_str().unwrap();
    assert!(text.contains("'params'"), "{text}");

    // Params that are not an object.
    for params in [json!([1]), json!("x"), Value::Null] {
        let mut message = tools_call(json!(6), "echo", json!({}));
        message["params"] = params.clone();
        let answer = answer_to(&message);
        assert_eq!(answer["error"]["code"], json!(-32600), "{params}: {answer}");
        assert_eq!(paths(&answer), ["/params"], "{answer}");
    }
}

#[test]
fn notifications_and_client_answers_are_allowed_without_an_id_to_echo() {
    let gate = gate();
    let note = json!({"jsonrpc":"2.0","method":"notifications/initialized"});
    let Verdict::Allow(allowed) = gate.check(
        legacy_headers().as_slice(),
        &serde_json::to_vec(&note).unwrap(),
    ) else {
        panic!("notification refused")
    };
    assert!(!allowed.expects_response());
    assert_eq!(allowed.id, None);
    let answer = json!({"jsonrpc":"2.0","id":"s1","result":{"roots":[]}});
    let verdict = gate.check(
        legacy_headers().as_slice(),
        &serde_json::to_vec(&answer).unwrap(),
    );
    assert!(matches!(verdict, Verdict::Allow(_)), "{verdict:?}");
}

/// Every kind of refusal, fed 1 MiB strings and 300-digit numbers: the
/// answer stays small and quotes none of it beyond the echo bound.
#[test]
fn no_answer_quotes_more_than_the_echo_bound() {
    let gate = gate();
    let huge = "q".repeat(1 << 20);
    let digits = "7".repeat(300);
    let mut cases: Vec<(Vec<(String, String)>, String)> = Vec::new();
    let modern_case = |message: Value| (modern_headers(&message), message.to_string());
    // Schema errors at many kinds of location.
    let mut bad = tools_call(json!(huge.clone()), &huge, json!({}));
    bad["params"]["requestState"] = json!(digits.parse::<f64>().unwrap());
    cases.push(modern_case(bad));
    let mut bad = tools_call(json!(1), "echo", json!({}));
    bad["params"][huge.as_str()] = json!(1);
    bad["params"]["inputResponses"] = json!({huge.clone(): {"action": huge.clone()}});
    cases.push(modern_case(bad));
    let mut bad = tools_call(json!(1), "echo", json!({}));
    bad["jsonrpc"] = json!(huge.clone());
    cases.push(modern_case(bad));
    // Header mismatch with huge values on both sides.
    let message = tools_call(json!(1), &huge, json!({}));
    let mut headers = modern_headers(&message);
    headers.iter_mut().find(|(n, _)| n == "Mcp-Name").unwrap().1 = format!("x{huge}");
    cases.push((headers, message.to_string()));
    // Unsupported versions, in the header and in the body.
    let message = json!({"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta": meta()}});
    let mut headers = modern_headers(&message);
    headers[0].1 = huge.clone();
    cases.push((headers, message.to_string()));
    // Unknown method, unidentified ids, malformed tails.
    cases.push((
        legacy_headers(),
        json!({"jsonrpc":"2.0","id":1,"method": huge.clone()}).to_string(),
    ));
    cases.push((
        legacy_headers(),
        format!(r#"{{"jsonrpc":"2.0","id":{digits},"method":"ping"}}"#),
    ));
    cases.push((
        legacy_headers(),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"ping","params":{{"{huge}":1,"{huge}":2}}}}"#),
    ));
    cases.push((
        legacy_headers(),
        format!(r#"{{"jsonrpc":"2.0","id":"{huge}","method":"ping" trailing"#),
    ));
    for (headers, body) in cases {
        let verdict = gate.check(headers.as_slice(), body.as_bytes());
        let Verdict::Reject(rejection) = &verdict else {
            panic!("allowed: {verdict:?}")
        };
        assert!(
            rejection.body.len() < 4096,
            "{} bytes: {:?}",
            rejection.body.len(),
            rejection.reason
        );
        let text = String::from_utf8_lossy(&rejection.body);
        assert!(
            !text.contains(&"q".repeat(129)),
            "{:?} quotes the huge string",
            rejection.reason
        );
        assert!(
            !text.contains(&"7".repeat(129)),
            "{:?} quotes the long number",
            rejection.reason
        );
        reject_body(&verdict);
    }
}

fn arbitrary_headers() -> impl Strategy<Value = Vec<(String, String)>> {
    prop_oneof![
        Just(vec![]),
        Just(legacy_headers()),
        Just(vec![
            ("MCP-Protocol-Version".to_owned(), MODERN.to_owned()),
            ("Mcp-Method".to_owned(), "tools/call".to_owned()),
            ("Mcp-Name".to_owned(), "echo".to_owned()),
        ]),
    ]
}

fn body_bytes() -> impl Strategy<Value = Vec<u8>> {
    let seeds: Vec<Vec<u8>> = own_seeds("2026-07-28")
        .into_iter()
        .chain(own_seeds("2025-11-25"))
        .map(|m| serde_json::to_vec(&m).unwrap())
        .collect();
    prop_oneof![
        proptest::collection::vec(any::<u8>(), 0..256),
        (
            proptest::sample::select(seeds),
            any::<proptest::sample::Index>(),
            proptest::collection::vec(any::<u8>(), 0..8)
        )
            .prop_map(|(mut seed, at, junk)| {
                let at = at.index(seed.len() + 1);
                let end = (at + junk.len()).min(seed.len());
                seed.splice(at..end, junk);
                seed
            }),
    ]
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 2000, ..ProptestConfig::default() })]

    /// Any byte string gets exactly one answer; a refusal is a well-formed
    /// JSON-RPC error envelope that the official schema accepts.
    #[test]
    fn any_byte_string_gets_exactly_one_well_formed_answer(headers in arbitrary_headers(), body in body_bytes()) {
        let gate = shared_gate();
        let official = shared_official();
        let before: u64 = TABLE.iter().map(|r| gate.rejections().count(r.reason)).sum();
        let verdict = gate.check(headers.as_slice(), &body);
        let after: u64 = TABLE.iter().map(|r| gate.rejections().count(r.reason)).sum();
        match &verdict {
            Verdict::Allow(_) => prop_assert_eq!(after, before),
            Verdict::Reject(rejection) => {
                prop_assert_eq!(after, before + 1);
                let answer: Value = serde_json::from_slice(&rejection.body).expect("JSON body");
                assert_own_error(&answer);
                if let Some(official) = official {
                    prop_assert!(official.check(&answer).is_ok(), "{:?}", official.check(&answer));
                }
                prop_assert!(rejection.body.len() < 4096);
            }
        }
    }
}

fn shared_gate() -> &'static Gate {
    static GATE: std::sync::OnceLock<Gate> = std::sync::OnceLock::new();
    GATE.get_or_init(gate)
}

/// Loaded once for all the cases of the twin (`None` in the test itself).
fn shared_official() -> Option<&'static OfficialError> {
    static OFFICIAL: std::sync::OnceLock<OfficialError> = std::sync::OnceLock::new();
    if !reference_checks() {
        return None;
    }
    Some(OFFICIAL.get_or_init(|| OfficialError::load(MODERN).unwrap()))
}

#[test]
fn a_bad_block_in_a_sampling_answer_is_not_also_a_missing_elicitation_action() {
    let gate = gate();
    let mut message = tools_call(json!(1), "echo", json!({}));
    message["params"]["inputResponses"] =
        json!({"a": {"role": "assistant", "content": {"type": "txt", "text": "x"}, "model": "m"}});
    let answer = reject_body(&gate.check(
        modern_headers(&message).as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["data"]["total"], 1, "{answer}");
    assert_eq!(
        answer["error"]["data"]["errors"][0]["path"],
        "/params/inputResponses/a/content/type"
    );
}

#[test]
fn string_ids_are_echoed_exactly_escaped_or_not() {
    let gate = gate();
    for id in [
        "plain-id",
        "quote\"d",
        "back\\slash",
        "tab\there",
        "ünïcode",
        "",
    ] {
        let mut message = tools_call(json!(id), "echo", json!({}));
        message["params"]["name"] = json!(5);
        let answer = reject_body(&gate.check(
            modern_headers(&message).as_slice(),
            &serde_json::to_vec(&message).unwrap(),
        ));
        assert_eq!(answer["id"], json!(id));
    }
}

#[test]
fn a_body_version_the_header_does_not_name_is_a_mismatch_even_when_unsupported() {
    let gate = gate();
    let mut message =
        json!({"jsonrpc":"2.0","id":14,"method":"tools/list","params":{"_meta": meta()}});
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let answer = reject_body(&gate.check(
        modern_headers(&message).as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    ));
    assert_eq!(answer["error"]["code"], json!(-32020));
    assert_eq!(answer["error"]["data"]["expected"], json!("v999.0.0"));
    assert_eq!(answer["error"]["data"]["received"], json!(MODERN));
}

#[test]
fn an_unsupported_version_lists_what_a_request_of_its_kind_can_name() {
    let gate = gate();
    // A per-request (`_meta`) client is told the per-request revisions.
    let mut message =
        json!({"jsonrpc":"2.0","id":15,"method":"tools/list","params":{"_meta": meta()}});
    message["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let headers = vec![
        ("MCP-Protocol-Version", "v999.0.0"),
        ("Mcp-Method", "tools/list"),
    ];
    let answer =
        reject_body(&gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap()));
    assert_eq!(answer["error"]["code"], json!(-32022));
    assert_eq!(answer["error"]["data"]["supported"], json!([MODERN]));
    assert_eq!(answer["error"]["data"]["requested"], json!("v999.0.0"));
    // Any other request, every revision served.
    let message = json!({"jsonrpc":"2.0","id":16,"method":"tools/list"});
    let answer =
        reject_body(&gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap()));
    assert_eq!(
        answer["error"]["data"]["supported"],
        json!(["2026-07-28", "2025-11-25", "2025-06-18", "2025-03-26"])
    );
}

against_reference!(
    every_rejection_row_is_reachable_answered_as_its_row_says_and_counted_once,
    any_byte_string_gets_exactly_one_well_formed_answer,
);
