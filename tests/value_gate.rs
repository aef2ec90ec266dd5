//! The value gate: tool arguments against the catalog's input roots,
//! answered in the tool dialect with the error envelope of the contract in
//! `../shared/oracles/openbridge-envelope/`. The contract's schema and
//! mapping and the official `CallToolResult` are reference data: the
//! project's own assertions on every answer run without them, and the
//! ignored twins (`against_reference::…`) hold the same answers to them
//! (`tests/support/mod.rs`).

#[path = "support/bodies.rs"]
mod bodies;
mod support;

use std::collections::BTreeSet;

use mcpgate::unstable::distill::{Distilled, ECHO_BOUND, MAX_LOCATIONS};
use mcpgate::unstable::gate::value::{self, ExplainCost, ValueGate};
use mcpgate::unstable::parse::{ParseLimits, Parser};
use mcpgate::unstable::reject::codes::{TOOL_ERROR_CODES, TOOL_ERROR_FALLBACK};
use mcpgate::{
    Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, Reason, UnknownTools, Verdict,
};
use serde_json::{Value, json};
use support::*;

fn gate() -> Gate {
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(test_catalog());
    gate
}

/// The verdict on a modern-lane call, with `extra` headers.
fn call_with<'g>(
    gate: &'g Gate,
    tool: &str,
    arguments: Value,
    extra: &[(&str, &str)],
) -> Verdict<'g> {
    let message = tools_call(json!("c-1"), tool, arguments);
    let mut headers = modern_headers(&message);
    headers.extend(extra.iter().map(|(n, v)| (n.to_string(), v.to_string())));
    gate.check(headers.as_slice(), &serde_json::to_vec(&message).unwrap())
}

fn call<'g>(gate: &'g Gate, tool: &str, arguments: Value) -> Verdict<'g> {
    call_with(gate, tool, arguments, &[])
}

/// The answer to a refused call, checked against the contract's schema and
/// the official `CallToolResult`; returns the whole JSON-RPC answer.
fn refused(verdict: Verdict<'_>) -> (Reason, u16, Value) {
    let Verdict::Reject(rejection) = verdict else {
        panic!("allowed")
    };
    let answer: Value = serde_json::from_slice(&rejection.body).unwrap();
    (rejection.reason, rejection.status, answer)
}

fn envelope_of(verdict: Verdict<'_>) -> Value {
    let (reason, status, answer) = refused(verdict);
    assert_eq!(reason, Reason::InvalidArguments, "{answer}");
    assert_eq!(status, 200);
    check_tool_answer(&answer, MODERN);
    answer["result"]["structuredContent"].clone()
}

fn check_tool_answer(answer: &Value, revision: &str) {
    if reference_checks() {
        let spec = official_spec();
        let official = read_json(&spec.join(revision).join("schema.json"));
        let result = mcpgate::unstable::protocol::root_schema(&official, "CallToolResult").unwrap();
        let result = jsonschema::draft202012::new(&result).unwrap();
        assert!(
            result.is_valid(&answer["result"]),
            "not a {revision} CallToolResult: {answer}"
        );
    }
    assert_eq!(answer["jsonrpc"], "2.0");
    assert_eq!(answer["id"], json!("c-1"));
    assert_eq!(answer["result"]["isError"], true);
    // Only the 2026-07-28 lane has `resultType`.
    let result_type = (revision == MODERN).then_some("complete");
    assert_eq!(
        answer["result"]["resultType"].as_str(),
        result_type,
        "{answer}"
    );
    assert_eq!(answer["result"]["content"][0]["type"], "text");
    let envelope = &answer["result"]["structuredContent"];
    assert_own_envelope(envelope);
    if let Some(schema) = envelope_schema() {
        let errors: Vec<String> = schema
            .iter_errors(envelope)
            .map(|e| e.to_string())
            .collect();
        assert!(errors.is_empty(), "{errors:?} in {envelope}");
    }
    assert_eq!(envelope["error_kind"], "mcp_input_validation");
    assert_eq!(envelope["retryable"], false);
    assert_eq!(envelope["_envelope_version"], 1);
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(text.starts_with(envelope["summary"].as_str().unwrap()));
}

fn codes(envelope: &Value) -> Vec<&str> {
    detail_field(envelope, "error_code")
}

fn paths(envelope: &Value) -> Vec<&str> {
    detail_field(envelope, "path")
}

fn valid_order_search() -> Value {
    bodies::search_orders_arguments()
}

#[test]
fn valid_calls_of_every_realistic_tool_are_allowed() {
    let gate = gate();
    let valid = [
        (
            "search_orders",
            valid_order_search(),
            vec![("Mcp-Param-Region", "NA")],
        ),
        (
            "create_shipment",
            json!({"orderId": "123-1234567-1234567",
                   "lines": [{"sku": "A-1", "quantity": 2, "packSize": 12}],
                   "shipTo": {"name": "Ada", "line1": "1 Main St", "city": "Berlin", "country": "DE"},
                   "carrier": {"type": "fedex", "account": "123456"},
                   "insured": true, "shipDate": "2026-12-01"}),
            vec![],
        ),
        (
            "get_account",
            json!({"accountId": 42, "verbose": true, "owner": {"team": "ops"}}),
            vec![
                ("Mcp-Param-Account-Id", "42"),
                ("Mcp-Param-Verbose", "true"),
                ("Mcp-Param-Team", "ops"),
            ],
        ),
        (
            "send_message",
            json!({"to": "ada@example.com", "subject": "Hi", "text": "Hello", "priority": 2}),
            vec![],
        ),
        ("echo", json!({"anything": [1, {"goes": null}]}), vec![]),
    ];
    for (tool, arguments, headers) in valid {
        let verdict = call_with(&gate, tool, arguments, &headers);
        assert!(matches!(verdict, Verdict::Allow(_)), "{tool}: {verdict:?}");
    }
}

#[test]
fn the_code_table_has_a_hint_and_an_upper_snake_code_for_each_keyword() {
    // Our own: one entry per keyword, each code in UPPER_SNAKE_CASE.
    let keywords: BTreeSet<&str> = TOOL_ERROR_CODES.iter().map(|c| c.keyword).collect();
    assert_eq!(keywords.len(), TOOL_ERROR_CODES.len());
    for code in TOOL_ERROR_CODES.iter().chain([&TOOL_ERROR_FALLBACK]) {
        assert!(is_upper_snake(code.code), "{}", code.code);
        assert!(!code.hint.is_empty(), "{}", code.code);
    }
}

#[test]
#[ignore = "needs ../shared (the error-envelope oracle)"]
fn the_code_table_is_the_contracts_mapping() {
    let oracle = envelope_oracle();
    let mapping = read_json(&oracle.join("schemas/jsonschema_error_codes.json"));
    let entries = mapping["mapping"].as_object().unwrap();
    assert_eq!(entries.len(), TOOL_ERROR_CODES.len());
    for code in TOOL_ERROR_CODES {
        let entry = &entries[code.keyword];
        assert_eq!(entry["error_code"], code.code, "{}", code.keyword);
        assert_eq!(entry["summary_template"], code.summary, "{}", code.keyword);
        assert_eq!(entry["hint"], code.hint, "{}", code.keyword);
    }
    assert_eq!(mapping["fallback"]["error_code"], TOOL_ERROR_FALLBACK.code);
    assert_eq!(mapping["fallback"]["hint"], TOOL_ERROR_FALLBACK.hint);
}

#[test]
fn every_error_code_is_produced_by_a_call_breaking_its_keyword() {
    let gate = gate();
    let with = |change: Value| {
        let mut arguments = valid_order_search();
        for (key, value) in change.as_object().unwrap() {
            arguments[key] = value.clone();
        }
        arguments
    };
    let shipment = |change: Value| {
        let mut arguments = json!({"orderId": "123-1234567-1234567",
            "lines": [{"sku": "A-1", "quantity": 2}],
            "shipTo": {"name": "Ada", "line1": "1 Main St", "city": "Berlin", "country": "DE"}});
        for (key, value) in change.as_object().unwrap() {
            arguments[key] = value.clone();
        }
        arguments
    };
    let cases = [
        (
            "SCHEMA_TYPE_MISMATCH",
            "search_orders",
            with(json!({"pageSize": "ten"})),
            "pageSize",
        ),
        (
            "SCHEMA_REQUIRED",
            "search_orders",
            json!({"region": "NA"}),
            "marketplaceIds",
        ),
        (
            "SCHEMA_MAX_ITEMS",
            "search_orders",
            with(json!({"marketplaceIds": ["a", "b", "c", "d", "e", "f"]})),
            "marketplaceIds",
        ),
        (
            "SCHEMA_MIN_ITEMS",
            "search_orders",
            with(json!({"marketplaceIds": []})),
            "marketplaceIds",
        ),
        (
            "SCHEMA_MAX_LENGTH",
            "search_orders",
            with(json!({"nextToken": "x".repeat(600)})),
            "nextToken",
        ),
        (
            "SCHEMA_MIN_LENGTH",
            "search_orders",
            with(json!({"marketplaceIds": [""]})),
            "marketplaceIds[0]",
        ),
        (
            "SCHEMA_MAXIMUM",
            "search_orders",
            with(json!({"pageSize": 500})),
            "pageSize",
        ),
        (
            "SCHEMA_MINIMUM",
            "search_orders",
            with(json!({"pageSize": 0})),
            "pageSize",
        ),
        (
            "SCHEMA_ENUM_MISMATCH",
            "search_orders",
            with(json!({"region": "XX"})),
            "region",
        ),
        (
            "SCHEMA_PATTERN_MISMATCH",
            "create_shipment",
            shipment(json!({"orderId": "12"})),
            "orderId",
        ),
        (
            "SCHEMA_FORMAT_INVALID",
            "search_orders",
            with(json!({"createdAfter": "yesterday"})),
            "createdAfter",
        ),
        (
            "SCHEMA_ADDITIONAL_PROPERTIES",
            "search_orders",
            with(json!({"colour": "red"})),
            "colour",
        ),
        (
            "SCHEMA_ONE_OF_FAILED",
            "create_shipment",
            shipment(json!({"carrier": {"type": "dhl"}})),
            "carrier.type",
        ),
        (
            "SCHEMA_ANY_OF_FAILED",
            "send_message",
            json!({"to": true, "text": "hi"}),
            "to",
        ),
        (
            "SCHEMA_ALL_OF_FAILED",
            "send_message",
            json!({"to": 7, "text": 5}),
            "text",
        ),
        (
            "SCHEMA_UNIQUE_ITEMS",
            "search_orders",
            with(json!({"statuses": ["Pending", "Pending"]})),
            "statuses",
        ),
        (
            "SCHEMA_CONST_MISMATCH",
            "create_shipment",
            shipment(json!({"insured": false})),
            "insured",
        ),
        (
            "SCHEMA_MULTIPLE_OF",
            "create_shipment",
            shipment(json!({"lines": [{"sku": "A", "quantity": 1, "packSize": 7}]})),
            "lines[0].packSize",
        ),
        (
            "SCHEMA_VALIDATION_FAILED",
            "search_orders",
            with(json!({"filters": {"currency": "USD", "minTotal": 2e6}})),
            "filters.minTotal",
        ),
    ];
    let mut produced = BTreeSet::new();
    for (code, tool, arguments, path) in cases {
        let envelope = envelope_of(call(&gate, tool, arguments));
        assert_eq!(envelope["error_code"], code, "{envelope}");
        assert_eq!(paths(&envelope)[0], path, "{envelope}");
        assert_eq!(codes(&envelope)[0], code);
        produced.insert(code);
    }
    let mut expected: BTreeSet<&str> = TOOL_ERROR_CODES.iter().map(|c| c.code).collect();
    expected.insert(TOOL_ERROR_FALLBACK.code);
    assert_eq!(produced, expected);
}

#[test]
fn the_gates_report_missing_properties_then_unknown_keys_then_values() {
    let gate = gate();
    // All three kinds of problem: only the missing property is reported.
    let envelope = envelope_of(call(
        &gate,
        "search_orders",
        json!({"region": "NA", "colour": 1, "pageSize": "x", "filters": {}}),
    ));
    // Only the arguments' own properties: `filters.currency` is part of
    // the value of `filters`, answered with the values.
    assert_eq!(paths(&envelope), ["marketplaceIds"]);
    assert!(codes(&envelope).iter().all(|c| *c == "SCHEMA_REQUIRED"));
    assert_eq!(envelope["total"], 1);
    // Required present: the unknown keys, every one of them.
    let envelope = envelope_of(call(
        &gate,
        "search_orders",
        json!({"marketplaceIds": ["A"], "region": "NA", "colour": 1, "size": 2,
               "pageSize": "x", "filters": {"currency": "USD", "tint": 3}}),
    ));
    assert_eq!(paths(&envelope), ["colour", "filters.tint", "size"]);
    // Then the values.
    let envelope = envelope_of(call(
        &gate,
        "search_orders",
        json!({"marketplaceIds": [1], "region": "NA", "pageSize": "x"}),
    ));
    assert_eq!(paths(&envelope), ["marketplaceIds[0]", "pageSize"]);
}

#[test]
fn a_required_key_inside_a_property_is_answered_with_the_other_value_problems() {
    let gate = Gate::new(GateConfig::default()).unwrap();
    let catalog = Catalog::from_json(
        &json!([{"name": "book_flight", "inputSchema": {"type": "object",
            "properties": {
                "from": {"type": "string", "pattern": "^[A-Z]{3}$"},
                "to": {"type": "string"},
                "seats": {"type": "integer", "maximum": 9},
                "passengers": {"type": "array", "items": {"type": "object",
                    "properties": {"name": {"type": "string"}, "age": {"type": "integer"}},
                    "required": ["name"]}}},
            "required": ["from", "to", "passengers"]}}]),
        CatalogSource::File,
        &CatalogOptions::default(),
    )
    .unwrap();
    gate.set_catalog(catalog);
    let envelope = envelope_of(call(
        &gate,
        "book_flight",
        json!({"from": "SEAX", "to": 5, "seats": 100, "passengers": [{"age": "x"}]}),
    ));
    // Sorted by location: a missing key where it is missing from.
    assert_eq!(envelope["total"], 5);
    assert_eq!(
        paths(&envelope),
        [
            "from",
            "passengers[0].name",
            "passengers[0].age",
            "seats",
            "to"
        ],
        "{envelope}"
    );
    let mut codes = codes(&envelope);
    codes.sort_unstable();
    assert_eq!(
        codes,
        [
            "SCHEMA_MAXIMUM",
            "SCHEMA_PATTERN_MISMATCH",
            "SCHEMA_REQUIRED",
            "SCHEMA_TYPE_MISMATCH",
            "SCHEMA_TYPE_MISMATCH"
        ]
    );
    // A top-level property missing still answers alone.
    let envelope = envelope_of(call(
        &gate,
        "book_flight",
        json!({"from": "SEAX", "seats": 100, "passengers": [{"age": "x"}]}),
    ));
    assert_eq!(paths(&envelope), ["to"]);
}

#[test]
fn hints_name_near_misses_case_slips_allowed_values_and_missing_properties() {
    let gate = gate();
    let hints = |tool: &str, arguments: Value| -> Vec<String> {
        let envelope = envelope_of(call(&gate, tool, arguments));
        let hints: Vec<String> = envelope["hints"]
            .as_array()
            .unwrap()
            .iter()
            .map(|h| h.as_str().unwrap().to_owned())
            .collect();
        assert!(hints.len() <= 5);
        hints
    };
    let base = json!({"marketplaceIds": ["A"], "region": "NA"});
    let mut typo = base.clone();
    typo["pageSise"] = json!(10);
    assert_eq!(
        hints("search_orders", typo),
        ["Unknown key 'pageSise': did you mean 'pageSize'?"]
    );
    // A case slip is renamed by normalization; without it, the hint.
    let mut cased = base.clone();
    cased["PageSize"] = json!(10);
    let plain = Gate::new(GateConfig::builder().normalization(false).build()).unwrap();
    plain.set_catalog(test_catalog());
    assert_eq!(
        envelope_of(call(&plain, "search_orders", cased))["hints"],
        json!([
            "Key 'PageSize' differs from the property 'pageSize' only in case: use 'pageSize'."
        ])
    );
    let mut region = base.clone();
    region["region"] = json!("eu");
    assert_eq!(
        hints("search_orders", region),
        ["Use 'EU' for region: allowed values are case-sensitive."]
    );
    let mut region = base.clone();
    region["region"] = json!("Mars");
    assert_eq!(
        hints("search_orders", region),
        ["Set region to one of: NA, EU, FE."]
    );
    assert_eq!(
        hints(
            "search_orders",
            json!({"marketplaceIds": ["A"], "reigon": "NA"})
        ),
        ["Key 'reigon' is not a property: did you mean the required 'region'?"]
    );
    assert_eq!(
        hints("search_orders", json!({"marketplaceIds": ["A"]})),
        ["Include region in the request body."]
    );
    let mut limit = base;
    limit["pageSize"] = json!(1000);
    assert_eq!(
        hints("search_orders", limit),
        ["Use a value at most 100 for pageSize."]
    );
}

#[test]
fn an_enum_hint_lists_the_values_of_the_enum_that_refused_the_value() {
    // Two enums applied in place: "off" passes the first and not the
    // second, so the hint lists the second's values, never the one sent.
    let catalog = Catalog::from_json(
        &json!([{"name": "fan", "inputSchema": {"type": "object",
            "properties": {"mode": {"allOf": [
                {"enum": ["fast", "slow", "off"]},
                {"enum": ["fast", "slow"]}]}}}}]),
        CatalogSource::File,
        &CatalogOptions::default(),
    )
    .unwrap();
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(catalog);
    let envelope = envelope_of(call(&gate, "fan", json!({"mode": "off"})));
    assert_eq!(
        envelope["hints"],
        json!(["Set mode to one of: fast, slow."])
    );
    // A case slip of one of them names it.
    let envelope = envelope_of(call(&gate, "fan", json!({"mode": "SLOW"})));
    assert_eq!(
        envelope["hints"],
        json!(["Use 'slow' for mode: allowed values are case-sensitive."])
    );
}

#[test]
fn a_limit_or_format_hint_names_the_bound_of_the_schema_that_refused_the_value() {
    // Two schemas applied in place: the value passes the first's bound and
    // not the second's, so the hint names the second's, never a bound the
    // value already meets.
    let catalog = Catalog::from_json(
        &json!([{"name": "dial", "inputSchema": {"type": "object",
            "properties": {
                "level": {"allOf": [{"minimum": 0}, {"minimum": 5}]},
                "tag": {"allOf": [{"maxLength": 10}, {"maxLength": 3}]},
                "ids": {"allOf": [{"minItems": 0}, {"minItems": 2}]},
                "at": {"allOf": [{"format": "email"}, {"format": "date"}]}}}}]),
        CatalogSource::File,
        &CatalogOptions::default(),
    )
    .unwrap();
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(catalog);
    let hints = |arguments| envelope_of(call(&gate, "dial", arguments))["hints"].clone();
    assert_eq!(
        hints(json!({"level": 3})),
        json!(["Use a value at least 5 for level."])
    );
    assert_eq!(
        hints(json!({"tag": "abcd"})),
        json!(["Shorten tag to at most 3 characters."])
    );
    assert_eq!(
        hints(json!({"ids": [1]})),
        json!(["Provide at least 2 items in ids."])
    );
    assert_eq!(
        hints(json!({"at": "a@example.com"})),
        json!(["Provide a valid date for at."])
    );
    // A format says nothing of a value that is not a string.
    let envelope = envelope_of(call(&gate, "dial", json!({"at": 5, "level": 3})));
    assert_eq!(detail_field(&envelope, "path"), ["level"], "{envelope}");
}

#[test]
fn a_detail_points_at_its_location_as_rfc_6901_writes_it_cut_past_the_echo_bound() {
    let catalog = Catalog::from_json(
        &json!([{"name": "bag", "inputSchema": {"type": "object",
            "additionalProperties": {"type": "integer"}}}]),
        CatalogSource::File,
        &CatalogOptions::default(),
    )
    .unwrap();
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(catalog);
    let long = "k".repeat(3 * ECHO_BOUND);
    let mut arguments = json!({"a~/b": "x", "~é//": "y", "plain": "z"});
    arguments[&long] = json!("w");
    let envelope = envelope_of(call(&gate, "bag", arguments));
    let pointers = detail_field(&envelope, "pointer");
    assert_eq!(pointers.len(), 4, "{pointers:?}");
    for expected in ["/a~0~1b", "/~0é~1~1", "/plain"] {
        assert!(pointers.contains(&expected), "{expected} in {pointers:?}");
    }
    let cut = pointers.iter().find(|p| p.starts_with("/kkk")).unwrap();
    assert!(cut.ends_with('…') && cut.len() <= ECHO_BOUND + 8, "{cut}");
}

#[test]
fn an_unknown_tool_is_refused_naming_it_or_forwarded_by_policy() {
    let gate = gate();
    let (reason, status, answer) = refused(call(&gate, "search_order", json!({})));
    assert_eq!((reason, status), (Reason::UnknownTool, 200));
    assert_eq!(answer["error"]["code"], -32602);
    assert_eq!(
        answer["error"]["message"],
        "Unknown tool: search_order; did you mean 'search_orders'?"
    );
    assert_eq!(answer["id"], "c-1");
    check_error(OfficialError::load(MODERN).as_ref(), &answer);

    let forwarding = Gate::new(
        GateConfig::builder()
            .unknown_tools(UnknownTools::Forward)
            .build(),
    )
    .unwrap();
    forwarding.set_catalog(test_catalog());
    assert!(matches!(
        call(&forwarding, "search_order", json!({})),
        Verdict::Allow(_)
    ));
    // A name a loose matcher reads as a tool of the catalog is checked as
    // that tool, not forwarded unchecked.
    for spelling in ["Search_Orders", " SEARCH_ORDERS "] {
        let (reason, _, _) = refused(call(
            &forwarding,
            spelling,
            json!({"marketplaceIds": ["A"], "region": "XX"}),
        ));
        assert_eq!(reason, Reason::InvalidArguments, "{spelling:?}");
    }
    let alike = Gate::new(
        GateConfig::builder()
            .unknown_tools(UnknownTools::Forward)
            .build(),
    )
    .unwrap();
    let tools = json!([{"name": "Drop", "inputSchema": {"type": "object"}},
        {"name": "drop", "inputSchema": {"type": "object"}}]);
    alike.set_catalog(
        Catalog::from_json(&tools, CatalogSource::File, &CatalogOptions::default()).unwrap(),
    );
    assert!(matches!(call(&alike, "drop", json!({})), Verdict::Allow(_)));
    // Either of two tools: not let through.
    let (reason, _, _) = refused(call(&alike, "DROP", json!({})));
    assert_eq!(reason, Reason::UnknownTool);
    // Without a catalog every call goes to the upstream.
    let bare = Gate::new(GateConfig::default()).unwrap();
    assert!(matches!(
        call(&bare, "anything", json!({"x": 1})),
        Verdict::Allow(_)
    ));
}

#[test]
fn a_gate_awaiting_its_catalog_refuses_calls_503_until_it_is_set() {
    let awaiting = Gate::new(GateConfig::builder().await_catalog(true).build()).unwrap();
    let (reason, status, answer) = refused(call(&awaiting, "echo", json!({})));
    assert_eq!((reason, status), (Reason::CatalogUnknown, 503));
    assert_eq!(answer["error"]["code"], -32603);
    assert_eq!(answer["id"], "c-1");
    check_error(OfficialError::load(MODERN).as_ref(), &answer);
    // Other methods are not held.
    let list = json!({"jsonrpc":"2.0","id":2,"method":"tools/list","params":{"_meta": meta()}});
    assert!(matches!(
        awaiting.check(
            modern_headers(&list).as_slice(),
            &serde_json::to_vec(&list).unwrap()
        ),
        Verdict::Allow(_)
    ));
    awaiting.set_catalog(test_catalog());
    assert!(matches!(
        call(&awaiting, "echo", json!({})),
        Verdict::Allow(_)
    ));
    let (reason, _, _) = refused(call(&awaiting, "nope", json!({})));
    assert_eq!(reason, Reason::UnknownTool);
    // The operator's opt-out: forwarded unchecked until the catalog is known.
    let forwarding = Gate::new(
        GateConfig::builder()
            .await_catalog(true)
            .unknown_tools(UnknownTools::Forward)
            .build(),
    )
    .unwrap();
    assert!(matches!(
        call(&forwarding, "echo", json!({})),
        Verdict::Allow(_)
    ));
}

#[test]
fn a_broken_tool_is_refused_at_registration_while_its_neighbours_serve() {
    let catalog = test_catalog();
    let refused_tools: Vec<(&str, &str)> = catalog
        .refused()
        .iter()
        .map(|r| (r.tool.as_str(), r.reason.as_str()))
        .collect();
    assert_eq!(refused_tools.len(), 3, "{refused_tools:?}");
    assert!(refused_tools[0].0 == "broken_pattern" && refused_tools[0].1.contains("inputSchema"));
    assert!(refused_tools[1].0 == "broken_default" && refused_tools[1].1.contains("default"));
    assert!(refused_tools[2].0 == "broken_header" && refused_tools[2].1.contains("x-mcp-header"));
    assert_eq!(catalog.len(), 5);
    let gate = gate();
    let (reason, _, _) = refused(call(&gate, "broken_default", json!({})));
    assert_eq!(reason, Reason::UnknownTool);
    assert!(matches!(call(&gate, "echo", json!({})), Verdict::Allow(_)));
}

#[test]
fn a_hundred_thousand_wrong_items_give_a_bounded_answer() {
    let gate = gate();
    let fields: Vec<Value> = (0..100_000).map(Value::from).collect();
    let message = tools_call(
        json!("c-1"),
        "get_account",
        json!({"accountId": 1, "fields": fields}),
    );
    let mut headers = modern_headers(&message);
    headers.push(("Mcp-Param-Account-Id".into(), "1".into()));
    let body = serde_json::to_vec(&message).unwrap();
    let Verdict::Reject(rejection) = gate.check(headers.as_slice(), &body) else {
        panic!("allowed")
    };
    assert!(
        rejection.body.len() < 8 * 1024,
        "{} bytes",
        rejection.body.len()
    );
    let answer: Value = serde_json::from_slice(&rejection.body).unwrap();
    check_tool_answer(&answer, MODERN);
    let envelope = &answer["result"]["structuredContent"];
    assert_eq!(envelope["total"], 100_000);
    assert_eq!(envelope["details"].as_array().unwrap().len(), 10);
    assert_eq!(paths(envelope)[9], "fields[9]");
    let text = answer["result"]["content"][0]["text"].as_str().unwrap();
    assert!(
        text.contains("and problems at 99990 more locations"),
        "{text}"
    );
}

#[test]
fn no_answer_quotes_a_sent_value_beyond_the_echo_bound() {
    let gate = gate();
    let huge = "k".repeat(1 << 20);
    let mut unknown_key = json!({"marketplaceIds": ["A"], "region": "NA"});
    unknown_key[&huge] = json!(1);
    let mut huge_value = json!({"marketplaceIds": ["A"], "region": "NA"});
    huge_value["nextToken"] = json!(huge.clone());
    for arguments in [unknown_key, huge_value] {
        let (_, _, answer) = refused(call(&gate, "search_orders", arguments));
        check_tool_answer(&answer, MODERN);
        assert_no_long_run(&answer, &huge);
    }
    let (_, _, answer) = refused(call(&gate, &huge, json!({})));
    assert_no_long_run(&answer, &huge);
}

/// No run of the sent text longer than the echo bound appears anywhere.
fn assert_no_long_run(answer: &Value, sent: &str) {
    let text = answer.to_string();
    assert!(
        !text.contains(&sent[..ECHO_BOUND + 1]),
        "a sent value beyond the echo bound"
    );
    assert!(text.len() < 16 * 1024, "{} bytes", text.len());
}

#[test]
fn mcp_param_headers_sent_on_a_2025_lane_are_held_to_the_arguments_but_not_required() {
    let gate = gate();
    let message = json!({"jsonrpc":"2.0","id":"l-1","method":"tools/call",
        "params":{"name":"get_account","arguments":{"accountId": 42}}});
    let body = serde_json::to_vec(&message).unwrap();
    let with = |extra: &[(&str, &str)]| {
        let mut headers = legacy_headers();
        headers.extend(extra.iter().map(|&(n, v)| (n.to_owned(), v.to_owned())));
        gate.check(headers.as_slice(), &body)
    };
    assert!(matches!(with(&[]), Verdict::Allow(_)));
    assert!(matches!(
        with(&[("Mcp-Param-Account-Id", "42")]),
        Verdict::Allow(_)
    ));
    for (extra, data) in [
        (
            ("Mcp-Param-Account-Id", "7"),
            json!({"header": "Mcp-Param-Account-Id", "expected": "42", "received": "7"}),
        ),
        (
            ("Mcp-Param-Verbose", "true"),
            json!({"header": "Mcp-Param-Verbose", "received": "true"}),
        ),
    ] {
        let (reason, status, answer) = refused(with(&[extra]));
        assert_eq!(
            (reason, status),
            (Reason::ParamHeaderMismatch, 400),
            "{answer}"
        );
        assert_eq!(answer["error"]["data"], data);
        assert_eq!(answer["id"], "l-1");
    }
}

#[test]
fn mcp_param_headers_must_mirror_the_annotated_arguments() {
    let gate = gate();
    let arguments = json!({"accountId": 42, "verbose": false, "owner": {"team": "ops"}});
    let all = [
        ("Mcp-Param-Account-Id", "42"),
        ("Mcp-Param-Verbose", "false"),
        ("Mcp-Param-Team", "=?base64?b3Bz?="),
    ];
    assert!(matches!(
        call_with(&gate, "get_account", arguments.clone(), &all),
        Verdict::Allow(_)
    ));
    // Integers compare numerically.
    let mut numeric = all;
    numeric[0].1 = "42.0";
    assert!(matches!(
        call_with(&gate, "get_account", arguments.clone(), &numeric),
        Verdict::Allow(_)
    ));
    let mismatch = |headers: &[(&str, &str)], arguments: Value| {
        let (reason, status, answer) = refused(call_with(&gate, "get_account", arguments, headers));
        assert_eq!(
            (reason, status),
            (Reason::ParamHeaderMismatch, 400),
            "{answer}"
        );
        assert_eq!(answer["error"]["code"], -32020);
        check_error(OfficialError::load(MODERN).as_ref(), &answer);
        answer["error"]["data"].clone()
    };
    assert_eq!(
        mismatch(&all[1..], arguments.clone()),
        json!({"header": "Mcp-Param-Account-Id", "expected": "42"})
    );
    let mut differs = all;
    differs[1].1 = "true";
    assert_eq!(
        mismatch(&differs, arguments.clone()),
        json!({"header": "Mcp-Param-Verbose", "expected": "false", "received": "true"})
    );
    let mut injected = all;
    injected[2].1 = "ops\r\nX-Evil: 1";
    assert_eq!(
        mismatch(&injected, arguments.clone())["header"],
        "Mcp-Param-Team"
    );
    // A header no annotation of the tool names: nothing would check it.
    let mut unrelated = all.to_vec();
    unrelated.push(("Mcp-Param-Unrelated", "anything"));
    assert_eq!(
        mismatch(&unrelated, arguments.clone()),
        json!({"header": "Mcp-Param-Unrelated", "received": "anything"})
    );
    // A header for an argument that is null or absent.
    let null_team = json!({"accountId": 42, "verbose": false, "owner": {"team": null}});
    assert_eq!(
        mismatch(&all, null_team),
        json!({"header": "Mcp-Param-Team", "received": "=?base64?b3Bz?="})
    );
    // The legacy lane has no such headers.
    let message = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "get_account", "arguments": {"accountId": 42}}});
    let verdict = gate.check(
        legacy_headers().as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    );
    assert!(matches!(verdict, Verdict::Allow(_)), "{verdict:?}");
}

#[test]
fn closing_objects_is_a_registration_option() {
    let open = Catalog::from_file(
        &catalog_path(),
        &CatalogOptions {
            close_objects: false,
        },
    )
    .unwrap();
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(open);
    let mut arguments = json!({"marketplaceIds": ["A"], "region": "NA", "colour": "red"});
    assert!(matches!(
        call_with(
            &gate,
            "search_orders",
            arguments.clone(),
            &[("Mcp-Param-Region", "NA")]
        ),
        Verdict::Allow(_)
    ));
    arguments["pageSize"] = json!(0);
    assert_eq!(
        envelope_of(call(&gate, "search_orders", arguments))["error_code"],
        "SCHEMA_MINIMUM"
    );
}

#[test]
fn a_call_without_arguments_is_checked_as_an_empty_object() {
    let gate = gate();
    let mut message = tools_call(json!("c-1"), "search_orders", json!({}));
    message["params"]
        .as_object_mut()
        .unwrap()
        .remove("arguments");
    let body = serde_json::to_vec(&message).unwrap();
    let envelope = envelope_of(gate.check(modern_headers(&message).as_slice(), &body));
    assert_eq!(paths(&envelope), ["marketplaceIds", "region"]);
    let mut message = tools_call(json!("c-1"), "echo", json!({}));
    message["params"]
        .as_object_mut()
        .unwrap()
        .remove("arguments");
    let body = serde_json::to_vec(&message).unwrap();
    assert!(matches!(
        gate.check(modern_headers(&message).as_slice(), &body),
        Verdict::Allow(_)
    ));
}

#[test]
fn the_legacy_lane_gets_the_dialect_of_its_revision() {
    let gate = gate();
    let message = json!({"jsonrpc": "2.0", "id": "c-1", "method": "tools/call",
        "params": {"name": "search_orders", "arguments": {"region": "NA"}}});
    let verdict = gate.check(
        legacy_headers().as_slice(),
        &serde_json::to_vec(&message).unwrap(),
    );
    let (reason, _, answer) = refused(verdict);
    assert_eq!(reason, Reason::InvalidArguments);
    assert!(answer["result"].get("resultType").is_none());
    check_tool_answer(&answer, "2025-11-25");
}

#[test]
fn a_catalog_swapped_in_serves_the_next_call() {
    let gate = gate();
    assert!(matches!(call(&gate, "echo", json!({})), Verdict::Allow(_)));
    let catalog = Catalog::from_json(
        &json!([{"name": "echo", "inputSchema": {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}}]),
        CatalogSource::Upstream,
        &CatalogOptions::default(),
    )
    .unwrap();
    gate.set_catalog(catalog);
    assert_eq!(
        envelope_of(call(&gate, "echo", json!({})))["error_code"],
        "SCHEMA_REQUIRED"
    );
    let (reason, _, _) = refused(call(&gate, "search_orders", valid_order_search()));
    assert_eq!(reason, Reason::UnknownTool);
}

/// The text of `get_account` arguments whose `fields` hold `count` copies
/// of `item`.
fn fields_arguments(count: usize, item: &str) -> String {
    format!(
        r#"{{"accountId":1,"fields":[{}]}}"#,
        vec![item; count].join(",")
    )
}

/// A 2026-07-28 `tools/call` of `tool` with `arguments` spliced in as text,
/// and its headers.
fn raw_call(tool: &str, arguments: &str) -> (Vec<(String, String)>, Vec<u8>) {
    let message = tools_call(json!("c-1"), tool, json!({}));
    let headers = modern_headers(&message);
    let text = serde_json::to_string(&message).unwrap();
    let (head, tail) = text.split_once(r#""arguments":{}"#).unwrap();
    let body = format!(r#"{head}"arguments":{arguments}{tail}"#);
    (headers, body.into_bytes())
}

/// The value gate's explanation of `arguments` against `tool` of the test
/// catalog, with what it cost.
fn explained(tool: &str, arguments: &str) -> ((Distilled, ValueGate), ExplainCost) {
    let catalog = test_catalog();
    let tool = mcpgate::unstable::catalog::tool(&catalog, tool).unwrap();
    let mut parser = Parser::new();
    let parsed = parser
        .parse(arguments.as_bytes(), ParseLimits::default())
        .unwrap();
    value::explain_counted(tool, Some(parsed.root()))
}

#[test]
fn a_body_at_the_limit_full_of_wrong_items_is_explained_in_one_walk_rendering_ten_locations() {
    // `1,` is the densest wrong item: about two million of them.
    let count = (GateConfig::default().body_limit - 512) / 2;
    let arguments = fields_arguments(count, "1");
    let ((distilled, stage), cost) = explained("get_account", &arguments);
    assert_eq!(stage, ValueGate::Values);
    assert_eq!(distilled.total, count);
    assert_eq!(distilled.locations.len(), MAX_LOCATIONS);
    // One walk, one problem per item (linear), texts for the ten reported
    // locations only (constant).
    assert_eq!(
        cost,
        ExplainCost {
            walks: 1,
            problems: count,
            rendered: MAX_LOCATIONS
        }
    );

    let gate = gate();
    let (mut headers, body) = raw_call("get_account", &arguments);
    headers.push(("Mcp-Param-Account-Id".into(), "1".into()));
    assert!(body.len() <= GateConfig::default().body_limit);
    let (reason, status, answer) = refused(gate.check(headers.as_slice(), &body));
    assert_eq!((reason, status), (Reason::InvalidArguments, 200));
    check_tool_answer(&answer, MODERN);
    let envelope = &answer["result"]["structuredContent"];
    assert_eq!(envelope["total"], count);
    assert_eq!(envelope["details"].as_array().unwrap().len(), MAX_LOCATIONS);
    assert_eq!(paths(envelope)[..2], ["fields[0]", "fields[1]"]);
    assert_eq!(answer["result"]["isError"], true);
}

#[test]
fn items_with_unknown_keys_at_the_limit_are_counted_in_one_walk() {
    let item = r#"{"sku":"A-1","quantity":2,"colour":"red"}"#;
    let count = (GateConfig::default().body_limit - 512) / (item.len() + 1);
    let arguments = format!(
        r#"{{"orderId":"123-1234567-1234567","shipTo":{{"name":"Ada","line1":"1 Main St","city":"Berlin","country":"DE"}},"lines":[{}]}}"#,
        vec![item; count].join(",")
    );
    let ((distilled, stage), cost) = explained("create_shipment", &arguments);
    assert_eq!(stage, ValueGate::UnknownKeys);
    assert_eq!(distilled.total, count);
    assert_eq!(distilled.locations.len(), MAX_LOCATIONS);
    assert_eq!(distilled.locations[0].pointer, "/lines/0/colour");
    assert_eq!(cost.walks, 1);
    assert_eq!(cost.problems, count);
    assert_eq!(cost.rendered, MAX_LOCATIONS);
}

/// A gate whose catalog holds `bodies::shaped_tools`.
fn shaped_gate() -> Gate {
    let gate = Gate::new(GateConfig::default()).unwrap();
    let tools = bodies::shaped_tools();
    gate.set_catalog(
        Catalog::from_json(&tools, CatalogSource::File, &CatalogOptions::default()).unwrap(),
    );
    gate
}

#[test]
fn a_wrong_leaf_deep_in_a_recursive_tree_is_named_alone() {
    let gate = shaped_gate();
    let mut leaves: Vec<Value> = vec![json!({}); 1000];
    leaves.push(json!(1));
    leaves.push(json!({"children": [null, {"children": []}, "x"]}));
    let mut tree = json!({ "children": leaves });
    // Deep enough to hold the answer's paths within the echo bound.
    for _ in 0..5 {
        tree = json!({"children": [null, tree]});
    }
    let envelope = envelope_of(call(&gate, "tree", json!({ "root": tree })));
    let above = "root".to_owned() + &".children[1]".repeat(5);
    assert_eq!(envelope["total"], 2, "{envelope}");
    assert_eq!(
        paths(&envelope),
        [
            format!("{above}.children[1000]"),
            format!("{above}.children[1001].children[2]")
        ]
    );
    let valid = json!({"root": {"children": [null, {"children": [{}, null]}]}});
    assert!(matches!(call(&gate, "tree", valid), Verdict::Allow(_)));
}

#[test]
fn optional_items_of_the_wrong_type_name_what_was_allowed() {
    let gate = shaped_gate();
    let envelope = envelope_of(call(
        &gate,
        "tag",
        json!({"tags": ["a", null, 3, "b", {"x": 1}]}),
    ));
    assert_eq!(envelope["total"], 2, "{envelope}");
    assert_eq!(paths(&envelope), ["tags[2]", "tags[4]"]);
    let issue = envelope["details"][0]["issue"].as_str().unwrap();
    assert!(
        issue.contains("string") && issue.contains("null"),
        "{issue}"
    );
}

/// A tool whose schema compares numbers beyond 64 bits (every bound
/// 10^20), and one whose bounds are small.
fn wide_gate() -> Gate {
    let tools: Value = serde_json::from_str(
        r#"[{"name": "measure", "inputSchema": {"type": "object", "properties": {
              "max": {"type": "integer", "maximum": 100000000000000000000},
              "min": {"type": "integer", "minimum": 100000000000000000000},
              "xmax": {"type": "integer", "exclusiveMaximum": 100000000000000000000},
              "neg": {"type": "integer", "minimum": -100000000000000000000},
              "c": {"const": 100000000000000000000},
              "e": {"enum": [100000000000000000000, 5]},
              "even": {"type": "integer", "multipleOf": 2},
              "free": {"type": "integer"}}}},
            {"name": "count", "inputSchema": {"type": "object", "properties": {
              "n": {"type": "integer", "maximum": 10},
              "tag": {"type": "integer"}}}}]"#,
    )
    .unwrap();
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(
        Catalog::from_json(&tools, CatalogSource::File, &CatalogOptions::default()).unwrap(),
    );
    gate
}

/// The verdict on a call of `tool` whose `arguments` are the exact bytes
/// `arguments`.
fn raw_verdict<'g>(gate: &'g Gate, tool: &str, arguments: &str) -> Verdict<'g> {
    let (headers, body) = raw_call(tool, arguments);
    gate.check(headers.as_slice(), &body)
}

#[test]
fn integers_beyond_64_bits_are_judged_by_their_exact_value_against_bounds_as_large() {
    let gate = wide_gate();
    // Each first literal reads as the same float as the second (or as the
    // bound), and lies on the other side of the bound or is not equal to it.
    let cases = [
        (
            "max",
            "100000000000000000001",
            "100000000000000000000",
            "maximum",
        ),
        (
            "min",
            "99999999999999999999",
            "100000000000000000000",
            "minimum",
        ),
        (
            "xmax",
            "99999999999999999999",
            "99999999999999983616",
            "exclusiveMaximum",
        ),
        (
            "neg",
            "-100000000000000000001",
            "-100000000000000000000",
            "minimum",
        ),
        (
            "c",
            "100000000000000000001",
            "100000000000000000000",
            "const",
        ),
        (
            "e",
            "100000000000000000001",
            "100000000000000000000",
            "enum",
        ),
        (
            "even",
            "18446744073709551617",
            "18446744073709551616",
            "multipleOf",
        ),
    ];
    for (name, refused_literal, allowed_literal, keyword) in cases {
        let refused = format!(r#"{{"{name}":{refused_literal}}}"#);
        let envelope = envelope_of(raw_verdict(&gate, "measure", &refused));
        assert_eq!(
            envelope["details"][0]["path"], name,
            "{refused}: {envelope}"
        );
        assert_eq!(
            envelope["details"][0]["keyword"], keyword,
            "{refused}: {envelope}"
        );
        // The gateway's words, never the value sent.
        assert!(
            !envelope.to_string().contains(refused_literal),
            "{envelope}"
        );
        let allowed = format!(r#"{{"{name}":{allowed_literal}}}"#);
        assert!(
            matches!(raw_verdict(&gate, "measure", &allowed), Verdict::Allow(_)),
            "{allowed}"
        );
    }
    // A bound the float cannot be judged by is named as such.
    let envelope = envelope_of(raw_verdict(
        &gate,
        "measure",
        r#"{"max":100000000000000000001}"#,
    ));
    assert_eq!(
        envelope["details"][0]["issue"],
        "value is an integer beyond 64 bits, which is not compared exactly with this bound"
    );
}

#[test]
fn integers_beyond_64_bits_meet_small_bounds_exactly_and_are_refused_where_the_schema_compares_large_ones()
 {
    let gate = wide_gate();
    let envelope = envelope_of(raw_verdict(
        &gate,
        "count",
        r#"{"n":100000000000000000001}"#,
    ));
    assert_eq!(codes(&envelope), ["SCHEMA_MAXIMUM"], "{envelope}");
    let allowed = r#"{"tag":100000000000000000001,"n":-100000000000000000001}"#;
    assert!(matches!(
        raw_verdict(&gate, "count", allowed),
        Verdict::Allow(_)
    ));
    // Where the schema compares numbers that large, an inexact integer is
    // refused even where no such keyword applies to it (fail closed).
    let envelope = envelope_of(raw_verdict(
        &gate,
        "measure",
        r#"{"free":100000000000000000001}"#,
    ));
    assert_eq!(envelope["details"][0]["path"], "free", "{envelope}");
    assert_eq!(
        envelope["details"][0]["issue"],
        "value is an integer beyond 64 bits, refused where the schema compares numbers that large"
    );
}

against_reference!(
    every_error_code_is_produced_by_a_call_breaking_its_keyword,
    the_gates_report_missing_properties_then_unknown_keys_then_values,
    a_required_key_inside_a_property_is_answered_with_the_other_value_problems,
    hints_name_near_misses_case_slips_allowed_values_and_missing_properties,
    an_enum_hint_lists_the_values_of_the_enum_that_refused_the_value,
    a_limit_or_format_hint_names_the_bound_of_the_schema_that_refused_the_value,
    a_detail_points_at_its_location_as_rfc_6901_writes_it_cut_past_the_echo_bound,
    an_unknown_tool_is_refused_naming_it_or_forwarded_by_policy,
    a_gate_awaiting_its_catalog_refuses_calls_503_until_it_is_set,
    a_hundred_thousand_wrong_items_give_a_bounded_answer,
    no_answer_quotes_a_sent_value_beyond_the_echo_bound,
    mcp_param_headers_must_mirror_the_annotated_arguments,
    closing_objects_is_a_registration_option,
    a_call_without_arguments_is_checked_as_an_empty_object,
    the_legacy_lane_gets_the_dialect_of_its_revision,
    a_catalog_swapped_in_serves_the_next_call,
    a_body_at_the_limit_full_of_wrong_items_is_explained_in_one_walk_rendering_ten_locations,
    a_wrong_leaf_deep_in_a_recursive_tree_is_named_alone,
    optional_items_of_the_wrong_type_name_what_was_allowed,
    integers_beyond_64_bits_are_judged_by_their_exact_value_against_bounds_as_large,
    integers_beyond_64_bits_meet_small_bounds_exactly_and_are_refused_where_the_schema_compares_large_ones,
);
