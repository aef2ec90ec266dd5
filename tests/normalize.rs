//! Pre-flight normalization of `tools/call` arguments (the envelope
//! contract's "Pre-flight argument normalization"): what each event kind
//! does to the forwarded message, what is left alone, and what a refused
//! call tells in `_meta.normalized`. The ignored twins
//! (`against_reference::…`) hold every envelope and every event list to
//! the contract's schema as well (`tests/support/mod.rs`).

mod support;

use mcpgate::unstable::reject::normalized::{EventKind, MAX_EVENTS};
use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, Reason, Verdict};
use serde_json::{Value, json};
use support::*;

fn gate_with(config: GateConfig, catalog: Catalog) -> Gate {
    let gate = Gate::new(config).unwrap();
    gate.set_catalog(catalog);
    gate
}

fn meta_on() -> GateConfig {
    GateConfig::builder().normalization_meta(true).build()
}

/// A tool with an array property, a header-mirrored one, a nested object
/// and two properties one key could mean.
fn catalog(close_objects: bool) -> Catalog {
    Catalog::from_json(
        &json!([{"name": "orders", "inputSchema": {"type": "object",
            "properties": {
                "marketplaceIds": {"type": "array", "items": {"type": "string"}},
                "region": {"type": "string", "x-mcp-header": "Region"},
                "tags": {"type": ["array", "string"]},
                "filters": {"type": "object", "properties": {"currency": {"type": "string"}}},
                "id": {"type": "string"},
                "ID": {"type": "string"}},
            "required": ["marketplaceIds"]}}]),
        CatalogSource::File,
        &CatalogOptions { close_objects },
    )
    .unwrap()
}

fn body_of(arguments: Value) -> (Vec<(String, String)>, Vec<u8>) {
    let message = tools_call(json!("c-1"), "orders", arguments);
    (
        modern_headers(&message),
        serde_json::to_vec(&message).unwrap(),
    )
}

/// The verdict on a call of `orders` with `arguments` (as text, so that
/// its bytes are exactly these) and extra headers.
fn check<'g>(gate: &'g Gate, arguments: &str, extra: &[(&str, &str)]) -> (Vec<u8>, Verdict<'g>) {
    let (mut headers, _) = body_of(json!({}));
    headers.extend(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    let meta = serde_json::to_string(&meta()).unwrap();
    let body = format!(
        r#"{{"jsonrpc":"2.0", "id":"c-1","method":"tools/call","params":{{"_meta":{meta},"name":"orders","arguments":{arguments} }} }}"#
    )
    .into_bytes();
    let verdict = gate.check(headers.as_slice(), &body);
    (body, verdict)
}

/// The events as forwarded alongside an allowed call, each checked
/// against the contract's schema.
fn events(normalized: Option<&bytes::Bytes>) -> Value {
    let events: Value = normalized.map_or(json!([]), |n| serde_json::from_slice(n).unwrap());
    check_events(&events);
    events
}

/// `_meta.normalized` is valid in an envelope of the contract.
fn check_events(events: &Value) {
    let envelope = json!({"error_kind": "mcp_input_validation", "tool": "orders",
        "summary": "s", "details": [], "hints": [], "examples": [],
        "error_code": "SCHEMA_REQUIRED", "retryable": false, "_envelope_version": 1,
        "_meta": {"normalized": events}});
    if let Some(schema) = envelope_schema() {
        let errors: Vec<String> = schema
            .iter_errors(&envelope)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?} in {events}");
    }
    for event in events.as_array().unwrap() {
        let kind = event["kind"].as_str().unwrap();
        assert!(EventKind::ALL.iter().any(|k| k.as_str() == kind), "{kind}");
    }
}

/// The forwarded message's arguments, having checked that every byte
/// around them is as sent.
fn forwarded_arguments(sent: &[u8], forward: &[u8]) -> Value {
    let text = std::str::from_utf8(sent).unwrap();
    let start = text.find(r#""arguments":"#).unwrap() + r#""arguments":"#.len();
    let tail = " } }";
    assert_eq!(&forward[..start], &sent[..start]);
    assert!(forward.ends_with(tail.as_bytes()));
    let message: Value = serde_json::from_slice(forward).unwrap();
    message["params"]["arguments"].clone()
}

fn allow<'g>(verdict: Verdict<'g>) -> mcpgate::Allowed<'g> {
    match verdict {
        Verdict::Allow(allowed) => allowed,
        Verdict::Reject(rejection) => {
            panic!("refused: {}", String::from_utf8_lossy(&rejection.body))
        }
    }
}

/// The envelope of a tool-dialect refusal, checked against the contract.
fn envelope(verdict: Verdict<'_>) -> Value {
    let Verdict::Reject(rejection) = verdict else {
        panic!("allowed")
    };
    assert_eq!(rejection.reason, Reason::InvalidArguments);
    let answer: Value = serde_json::from_slice(&rejection.body).unwrap();
    let envelope = answer["result"]["structuredContent"].clone();
    assert_own_envelope(&envelope);
    if let Some(schema) = envelope_schema() {
        let errors: Vec<String> = schema
            .iter_errors(&envelope)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?} in {envelope}");
    }
    envelope
}

#[test]
fn a_miscased_key_is_renamed_and_a_scalar_for_an_array_wrapped_in_the_forwarded_message() {
    let gate = gate_with(GateConfig::default(), catalog(true));
    let (sent, verdict) = check(&gate, r#"{"MarketplaceIds": "A", "tags": "t"}"#, &[]);
    let allowed = allow(verdict);
    let forward = allowed.forward.as_ref().expect("re-encoded");
    assert_eq!(
        forwarded_arguments(&sent, forward),
        json!({"marketplaceIds": ["A"], "tags": "t"})
    );
    assert_eq!(
        events(allowed.normalized.as_ref()),
        json!([
            {"kind": "renamed", "from": "MarketplaceIds", "to": "marketplaceIds", "reason": "schema_canonical_key"},
            {"kind": "coerced", "field": "marketplaceIds", "from_type": "string", "to_type": "array", "reason": "schema_wants_array"}
        ])
    );
    // A scalar of any type, under its canonical name or as sent.
    let (sent, verdict) = check(&gate, r#"{"marketplaceIds": ["A"], "Tags": true}"#, &[]);
    let allowed = allow(verdict);
    assert_eq!(
        forwarded_arguments(&sent, allowed.forward.as_ref().unwrap()),
        json!({"marketplaceIds": ["A"], "tags": [true]})
    );
    let gate = gate_with(meta_on(), catalog(true));
    let (_, verdict) = check(&gate, r#"{"marketplaceIds": 7}"#, &[]);
    let envelope = envelope(verdict);
    assert_eq!(envelope["details"][0]["path"], "marketplaceIds[0]");
    assert_eq!(
        envelope["_meta"]["normalized"],
        json!([{"kind": "coerced", "field": "marketplaceIds", "from_type": "integer", "to_type": "array", "reason": "schema_wants_array"}])
    );
}

#[test]
fn an_alias_beside_its_canonical_key_is_dropped() {
    let gate = gate_with(GateConfig::default(), catalog(true));
    let (sent, verdict) = check(
        &gate,
        r#"{"MARKETPLACEIDS": ["B"], "marketplaceIds": ["A"], "MarketplaceIds": ["C"]}"#,
        &[],
    );
    let allowed = allow(verdict);
    assert_eq!(
        forwarded_arguments(&sent, allowed.forward.as_ref().unwrap()),
        json!({"marketplaceIds": ["A"]})
    );
    assert_eq!(
        events(allowed.normalized.as_ref()),
        json!([
            {"kind": "dropped_alias", "from": "MARKETPLACEIDS", "canonical": "marketplaceIds", "reason": "canonical_key_present"},
            {"kind": "dropped_alias", "from": "MarketplaceIds", "canonical": "marketplaceIds", "reason": "canonical_key_present"}
        ])
    );
    // Two aliases and no canonical key: the first is renamed, the second
    // dropped, so that the forwarded object has no key twice.
    let (sent, verdict) = check(
        &gate,
        r#"{"MarketplaceIds": ["C"], "MARKETPLACEIDS": ["B"]}"#,
        &[],
    );
    let allowed = allow(verdict);
    assert_eq!(
        forwarded_arguments(&sent, allowed.forward.as_ref().unwrap()),
        json!({"marketplaceIds": ["C"]})
    );
    let kinds: Vec<String> = events(allowed.normalized.as_ref())
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(kinds, ["renamed", "dropped_alias"]);
}

#[test]
fn an_ambiguous_key_is_left_alone_and_refused_as_unknown() {
    let gate = gate_with(meta_on(), catalog(true));
    let (_, verdict) = check(&gate, r#"{"marketplaceIds": ["A"], "Id": "x"}"#, &[]);
    let envelope = envelope(verdict);
    assert_eq!(envelope["error_code"], "SCHEMA_ADDITIONAL_PROPERTIES");
    assert_eq!(
        envelope["_meta"]["normalized"],
        json!([{"kind": "unknown_field_rejected", "field": "Id", "reason": "ambiguous_schema_match"}])
    );
    // Each of the two it could mean is taken as sent.
    let (_, verdict) = check(
        &gate,
        r#"{"marketplaceIds": ["A"], "id": "x", "ID": "y"}"#,
        &[],
    );
    let allowed = allow(verdict);
    assert_eq!((allowed.forward, allowed.normalized), (None, None));
}

#[test]
fn an_unknown_key_is_rejected_under_strict_unknown_fields_and_passed_through_without() {
    let strict = gate_with(meta_on(), catalog(true));
    let (_, verdict) = check(&strict, r#"{"marketplaceIds": ["A"], "colour": 1}"#, &[]);
    let envelope = envelope(verdict);
    assert_eq!(envelope["error_code"], "SCHEMA_ADDITIONAL_PROPERTIES");
    assert_eq!(
        envelope["_meta"]["normalized"],
        json!([{"kind": "unknown_field_rejected", "field": "colour", "reason": "no_schema_match"}])
    );
    let open = gate_with(meta_on(), catalog(false));
    let (_, verdict) = check(&open, r#"{"marketplaceIds": ["A"], "colour": 1}"#, &[]);
    let allowed = allow(verdict);
    // Nothing changed: forwarded as sent, the event told.
    assert!(allowed.forward.is_none());
    assert_eq!(
        events(allowed.normalized.as_ref()),
        json!([{"kind": "unknown_field_passed_through", "field": "colour", "reason": "no_schema_match"}])
    );
}

#[test]
fn nested_objects_are_not_normalized() {
    let gate = gate_with(GateConfig::default(), catalog(true));
    let (_, verdict) = check(
        &gate,
        r#"{"marketplaceIds": ["A"], "filters": {"Currency": "EUR"}}"#,
        &[],
    );
    let envelope = envelope(verdict);
    assert_eq!(envelope["error_code"], "SCHEMA_ADDITIONAL_PROPERTIES");
    assert_eq!(envelope["details"][0]["path"], "filters.Currency");
    assert!(envelope.get("_meta").is_none(), "meta is off by default");
}

#[test]
fn a_renamed_header_argument_is_bound_to_its_header_as_forwarded() {
    let gate = gate_with(GateConfig::default(), catalog(true));
    let arguments = r#"{"marketplaceIds": ["A"], "Region": "NA"}"#;
    let (sent, verdict) = check(&gate, arguments, &[("Mcp-Param-Region", "NA")]);
    let allowed = allow(verdict);
    assert_eq!(
        forwarded_arguments(&sent, allowed.forward.as_ref().unwrap()),
        json!({"marketplaceIds": ["A"], "region": "NA"})
    );
    // The forwarded `region` needs its header, as a call that sent it so.
    let (_, verdict) = check(&gate, arguments, &[]);
    let Verdict::Reject(rejection) = verdict else {
        panic!("allowed without Mcp-Param-Region")
    };
    assert_eq!(rejection.reason, Reason::ParamHeaderMismatch);
    let (_, verdict) = check(&gate, arguments, &[("Mcp-Param-Region", "EU")]);
    let Verdict::Reject(rejection) = verdict else {
        panic!("allowed with a header that does not mirror region")
    };
    assert_eq!(rejection.reason, Reason::ParamHeaderMismatch);
}

#[test]
fn an_unchanged_call_is_forwarded_as_sent_with_no_events() {
    let gate = gate_with(meta_on(), catalog(true));
    let (_, verdict) = check(&gate, r#"{"marketplaceIds": ["A"], "tags": "t"}"#, &[]);
    let allowed = allow(verdict);
    assert_eq!((allowed.forward, allowed.normalized), (None, None));
    // A refusal normalization had nothing to do with carries no `_meta`.
    let (_, verdict) = check(&gate, r#"{"marketplaceIds": [1]}"#, &[]);
    assert!(envelope(verdict).get("_meta").is_none());
}

#[test]
fn a_scalar_for_an_array_is_wrapped_beside_other_wrong_values_under_names_as_sent() {
    // Every key named as the schema names it; beside the scalar sent for
    // an array, values of a wrong type and content the schema refuses, at
    // the arguments' members and deeper: normalization still wraps it,
    // and the call is refused for the rest.
    let gate = gate_with(meta_on(), catalog(true));
    let (_, verdict) = check(
        &gate,
        r#"{"marketplaceIds": "A", "region": 5, "filters": {"currency": 1}}"#,
        &[],
    );
    let refused = envelope(verdict);
    assert_eq!(
        detail_field(&refused, "path"),
        ["filters.currency", "region"]
    );
    assert_eq!(
        refused["_meta"]["normalized"],
        json!([{"kind": "coerced", "field": "marketplaceIds", "from_type": "string", "to_type": "array", "reason": "schema_wants_array"}])
    );
    // Without the scalar, nothing is told.
    let (_, verdict) = check(
        &gate,
        r#"{"marketplaceIds": ["A"], "region": 5, "filters": {"currency": 1}}"#,
        &[],
    );
    assert!(envelope(verdict).get("_meta").is_none());
}

#[test]
fn a_normalized_call_refused_tells_what_was_done_only_with_meta_on() {
    for meta in [false, true] {
        let gate = gate_with(
            GateConfig::builder().normalization_meta(meta).build(),
            catalog(true),
        );
        let (_, verdict) = check(&gate, r#"{"MarketplaceIds": 5, "colour": 1}"#, &[]);
        let envelope = envelope(verdict);
        // The unknown key answers first (the re-encoded arguments are
        // checked: `marketplaceIds` is there).
        assert_eq!(envelope["error_code"], "SCHEMA_ADDITIONAL_PROPERTIES");
        if meta {
            let events = envelope["_meta"]["normalized"].clone();
            check_events(&events);
            let kinds: Vec<&str> = events
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["kind"].as_str().unwrap())
                .collect();
            assert_eq!(kinds, ["renamed", "coerced", "unknown_field_rejected"]);
        } else {
            assert!(envelope.get("_meta").is_none());
        }
    }
}

#[test]
fn normalization_off_leaves_the_call_to_the_value_gate() {
    let gate = gate_with(
        GateConfig::builder().normalization(false).build(),
        catalog(true),
    );
    let (_, verdict) = check(&gate, r#"{"MarketplaceIds": "A"}"#, &[]);
    assert_eq!(envelope(verdict)["error_code"], "SCHEMA_REQUIRED");
}

#[test]
fn a_hostile_call_lists_a_bounded_number_of_events() {
    let gate = gate_with(meta_on(), catalog(true));
    let keys: Vec<String> = (0..5000).map(|n| format!("\"k{n}\": {n}")).collect();
    let arguments = format!(r#"{{"marketplaceIds": ["A"], {}}}"#, keys.join(","));
    let (_, verdict) = check(&gate, &arguments, &[]);
    let envelope = envelope(verdict);
    assert_eq!(
        envelope["_meta"]["normalized"].as_array().unwrap().len(),
        MAX_EVENTS
    );
}

proptest::proptest! {
    #![proptest_config(proptest::prelude::ProptestConfig::with_cases(200))]

    /// Whatever keys and values are sent, the verdict comes without a
    /// panic, and a re-encoded message is JSON whose arguments name each
    /// property they match case aside as the schema does.
    #[test]
    fn any_arguments_are_normalized_into_a_message_that_parses(
        members in proptest::collection::vec(
            (
                proptest::prop_oneof![
                    proptest::prelude::Just("marketplaceIds".to_owned()),
                    proptest::prelude::Just("MARKETPLACEIDS".to_owned()),
                    proptest::prelude::Just("Tags".to_owned()),
                    proptest::prelude::Just("iD".to_owned()),
                    "[a-zA-Z\\\\\"é]{0,6}",
                ],
                proptest::prop_oneof![
                    proptest::prelude::Just(json!("A")),
                    proptest::prelude::Just(json!(["A"])),
                    proptest::prelude::Just(json!(1.5)),
                    proptest::prelude::Just(json!(null)),
                    proptest::prelude::Just(json!({"Currency": [true]})),
                ],
            ),
            0..8,
        ),
        strict in proptest::bool::ANY,
    ) {
        let gate = &GATES[usize::from(strict)];
        let mut arguments = serde_json::Map::new();
        for (key, value) in members {
            arguments.insert(key, value);
        }
        let (headers, body) = body_of(Value::Object(arguments));
        if let Verdict::Allow(allowed) = gate.check(headers.as_slice(), &body)
            && let Some(forward) = allowed.forward
        {
            let message: Value = serde_json::from_slice(&forward).unwrap();
            let properties = ["marketplaceIds", "region", "tags", "filters", "id", "ID"];
            for key in message["params"]["arguments"].as_object().unwrap().keys() {
                let matching: Vec<&&str> = properties
                    .iter()
                    .filter(|p| p.to_lowercase() == key.to_lowercase())
                    .collect();
                if let [property] = matching.as_slice() {
                    proptest::prop_assert_eq!(**property, key.as_str());
                }
            }
        }
    }
}

/// The gates the property runs through: open, then closed objects.
static GATES: std::sync::LazyLock<[Gate; 2]> =
    std::sync::LazyLock::new(|| [false, true].map(|strict| gate_with(meta_on(), catalog(strict))));

against_reference!(
    a_miscased_key_is_renamed_and_a_scalar_for_an_array_wrapped_in_the_forwarded_message,
    an_alias_beside_its_canonical_key_is_dropped,
    an_ambiguous_key_is_left_alone_and_refused_as_unknown,
    an_unknown_key_is_rejected_under_strict_unknown_fields_and_passed_through_without,
    nested_objects_are_not_normalized,
    an_unchanged_call_is_forwarded_as_sent_with_no_events,
    a_scalar_for_an_array_is_wrapped_beside_other_wrong_values_under_names_as_sent,
    a_normalized_call_refused_tells_what_was_done_only_with_meta_on,
    normalization_off_leaves_the_call_to_the_value_gate,
    a_hostile_call_lists_a_bounded_number_of_events,
);
