//! Benches named `gate/<case>/<op>`: `check` is the whole gate (copy,
//! tape, duplicate keys, classify, lane, header binding, dispatch,
//! schema); `serde_jsonschema` is the baseline a user would write —
//! `serde_json::from_slice` plus `jsonschema` with the same root, compiled
//! as written; `serde_jsonschema_inlined` is that baseline given the root
//! with its `$ref`s inlined, to show what that step is worth on either
//! side; `tape_is_valid` is the root as the gate compiles it (inlined,
//! without what the stages before the schema hold, and over what it reads:
//! `params` alone for the modern `tools/call`) over a parsed tape.
//! `gate/tools-call/<tool>/<op>` adds the value gate: the tool's closed
//! input root from the project's test catalog, beside the baseline that
//! validates the message and then its arguments with the same two roots.
//! `value/wrong_items_4mib/check` is a `get_account` call at the body limit
//! whose `fields` hold integers where strings belong, refused by the value
//! gate; `value/valid_items_4mib/check`, the same size of strings, allowed,
//! is its same-run baseline.

#[path = "../tests/support/bodies.rs"]
mod bodies;
#[path = "support/value_gate.rs"]
mod value_gate;

use criterion::{BenchmarkId, Criterion, Throughput, black_box, criterion_group, criterion_main};
use mcpgate::unstable::gate::dispatch::{Reads, gate_root_schema, what_it_reads};
use mcpgate::unstable::parse::{ParseLimits, Parser, TapeJson};
use mcpgate::unstable::protocol::{
    RootKind, SchemaDocument, compile_root, compile_root_as_written, compile_schema,
};
use mcpgate::{Catalog, CatalogOptions, CatalogSource, Gate, GateConfig, Lane, Scratch, Verdict};
use serde_json::json;
use value_gate::{SearchOrders, tool_call};

#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn valid_calls(c: &mut Criterion) {
    let gate = Gate::new(GateConfig::default()).unwrap();
    let mut scratch = Scratch::default();
    let document = SchemaDocument::Mcp2026_07_28.parse();
    let key = RootKind::Request("tools/call").key();
    let baseline = compile_root_as_written(&document, &key).unwrap();
    let baseline_inlined = compile_root(&document, &key).unwrap();
    for (case, size) in [("tools_call_516b", 516), ("tools_call_20kb", 20 * 1024)] {
        let (headers, body) = bodies::tools_call_body(size);
        assert!(matches!(
            gate.check_with(&mut scratch, headers.as_slice(), &body),
            Verdict::Allow(_)
        ));
        let mut group = c.benchmark_group(format!("gate/{case}"));
        group.throughput(Throughput::Bytes(body.len() as u64));
        group.bench_function("check", |b| {
            b.iter(|| {
                matches!(
                    gate.check_with(&mut scratch, headers.as_slice(), black_box(&body)),
                    Verdict::Allow(_)
                )
            })
        });
        // The stages apart: parse alone (copy, tape, duplicate keys), and
        // the schema verdict alone over an already parsed tape.
        let mut parser = Parser::new();
        group.bench_function("parse", |b| {
            b.iter(|| {
                parser
                    .parse(black_box(&body), ParseLimits::default())
                    .is_ok()
            })
        });
        // The root as the gate compiles it (the body holds its prechecks),
        // given what it reads.
        let gate_root = gate_root_schema(&document, &key, Lane::Modern).unwrap();
        let (schema, reads) = what_it_reads(gate_root.schema);
        let tape_root = compile_schema::<TapeJson>(Some(schema), &key).unwrap();
        let mut parser = Parser::new();
        let parsed = parser.parse(&body, ParseLimits::default()).unwrap();
        let read = match reads {
            Reads::Message => parsed.root(),
            Reads::Params => parsed.root().get("params").unwrap(),
        };
        assert!(tape_root.is_valid(read));
        group.bench_function("tape_is_valid", |b| {
            b.iter(|| tape_root.is_valid(black_box(read)))
        });
        group.bench_function("serde_jsonschema", |b| {
            b.iter(|| {
                let value: serde_json::Value = serde_json::from_slice(black_box(&body)).unwrap();
                baseline.is_valid(&value)
            })
        });
        group.bench_function("serde_jsonschema_inlined", |b| {
            b.iter(|| {
                let value: serde_json::Value = serde_json::from_slice(black_box(&body)).unwrap();
                baseline_inlined.is_valid(&value)
            })
        });
        group.finish();
    }
}

fn invalid(c: &mut Criterion) {
    let gate = Gate::new(GateConfig::default()).unwrap();
    let mut scratch = Scratch::default();
    let (headers, _) = bodies::tools_call_body(516);
    let small = bodies::INVALID_SMALL;
    assert!(matches!(
        gate.check_with(&mut scratch, headers.as_slice(), small),
        Verdict::Reject(_)
    ));
    c.bench_function("gate/invalid_small/check", |b| {
        b.iter(|| {
            matches!(
                gate.check_with(&mut scratch, headers.as_slice(), black_box(small)),
                Verdict::Reject(_)
            )
        })
    });

    let listen = bodies::listen_headers();
    let mut group = c.benchmark_group("gate/wrong_items");
    group.sample_size(10);
    for count in [10_000usize, 100_000] {
        let body = bodies::wrong_items_body(count);
        group.throughput(Throughput::Elements(count as u64));
        group.bench_with_input(BenchmarkId::new("check", count), &body, |b, body| {
            b.iter(|| {
                matches!(
                    gate.check_with(&mut scratch, listen.as_slice(), black_box(body)),
                    Verdict::Reject(_)
                )
            })
        });
    }
    group.finish();
}

fn tools_call_values(c: &mut Criterion) {
    let case = SearchOrders::new();
    let mut scratch = Scratch::default();
    // Ten properties, two levels: the 10-property nested tool.
    let valid = bodies::search_orders_arguments();
    let mut invalid = valid.clone();
    invalid["pageSize"] = json!("fifty");
    invalid["filters"]["currency"] = json!("usd");
    invalid["colour"] = json!("red");
    let mut group = c.benchmark_group("gate/tools-call/search_orders");
    for (op, arguments, allowed) in [("valid", valid, true), ("invalid", invalid, false)] {
        let (headers, body) = tool_call("search_orders", arguments);
        let verdict = case
            .gate
            .check_with(&mut scratch, headers.as_slice(), &body);
        assert_eq!(matches!(verdict, Verdict::Allow(_)), allowed, "{verdict:?}");
        group.bench_function(format!("check_{op}"), |b| {
            b.iter(|| {
                matches!(
                    case.gate
                        .check_with(&mut scratch, headers.as_slice(), black_box(&body)),
                    Verdict::Allow(_)
                )
            })
        });
        group.bench_function(format!("serde_jsonschema_{op}"), |b| {
            b.iter(|| case.baseline(black_box(&body)))
        });
    }
    group.finish();
}

/// A call of about `size` bytes: `headers` and the body of `call` (from
/// `tool_call`) with its one empty array filled with copies of `item` and
/// ending with `last`.
fn filled(
    call: (Vec<(String, String)>, Vec<u8>),
    size: usize,
    item: &str,
    last: &str,
) -> (Vec<(String, String)>, Vec<u8>) {
    let (headers, skeleton) = call;
    let skeleton = String::from_utf8(skeleton).unwrap();
    let (head, tail) = skeleton.split_once("[]").unwrap();
    let count = (size - skeleton.len()) / (item.len() + 1);
    let mut items = vec![item; count - 1];
    items.push(last);
    (
        headers,
        format!("{head}[{}]{tail}", items.join(",")).into_bytes(),
    )
}

fn value_items(c: &mut Criterion) {
    let case = SearchOrders::new();
    // As a server worker keeps them through a burst of large bodies.
    let mut scratch = Scratch::holding_large();
    let limit = GateConfig::default().body_limit;
    let mut account = tool_call("get_account", json!({"accountId": 1, "fields": []}));
    // Its `accountId` travels as a header too.
    account
        .0
        .push(("Mcp-Param-Account-Id".to_owned(), "1".to_owned()));
    let shipment = tool_call(
        "create_shipment",
        json!({"orderId": "123-1234567-1234567", "lines": [],
            "shipTo": {"name": "A", "line1": "B", "city": "C", "country": "DE"}}),
    );
    for (name, call, item, allowed) in [
        ("wrong_items_4mib", &account, "1", false),
        ("valid_items_4mib", &account, "\"a\"", true),
        ("incomplete_lines_4mib", &shipment, "{}", false),
    ] {
        // The same size on every side (2M wrong items, 1M valid ones,
        // 1.4M lines missing two members each).
        let (headers, body) = filled(call.clone(), limit - 64, item, item);
        assert!(body.len() <= limit);
        let verdict = case
            .gate
            .check_with(&mut scratch, headers.as_slice(), &body);
        assert_eq!(matches!(verdict, Verdict::Allow(_)), allowed, "{name}");
        bench_check(c, name, &case.gate, &mut scratch, &headers, &body);
    }
}

/// A gate over `bodies::shaped_tools`, the shapes that cost the value
/// gate's explanation most.
fn shaped_tools() -> Gate {
    let gate = Gate::new(GateConfig::default()).unwrap();
    gate.set_catalog(
        Catalog::from_json(
            &bodies::shaped_tools(),
            CatalogSource::File,
            &CatalogOptions::default(),
        )
        .unwrap(),
    );
    gate
}

/// `value/<name>/check`, the whole gate over one large body.
fn bench_check(
    c: &mut Criterion,
    name: &str,
    gate: &Gate,
    scratch: &mut Scratch,
    headers: &[(String, String)],
    body: &[u8],
) {
    let mut group = c.benchmark_group(format!("value/{name}"));
    group.sample_size(10);
    group.throughput(Throughput::Bytes(body.len() as u64));
    group.bench_function("check", |b| {
        b.iter(|| {
            matches!(
                gate.check_with(scratch, headers, black_box(body)),
                Verdict::Allow(_)
            )
        })
    });
    group.finish();
}

fn value_shapes(c: &mut Criterion) {
    let gate = shaped_tools();
    let mut scratch = Scratch::holding_large();
    let limit = GateConfig::default().body_limit;
    // 25 levels of nodes, the last holding valid leaves and one wrong one
    // at the end (each level's alternatives hold the whole tree below), or
    // only wrong leaves (two million problems reported 52 tokens deep).
    let mut deep = json!({"children": []});
    for _ in 0..25 {
        deep = json!({"children": [deep]});
    }
    let tree = tool_call("tree", json!({ "root": deep }));
    let (tree_headers, tree_body) = filled(tree.clone(), limit - 64, "{}", "1");
    let (_, wrong_leaves_body) = filled(tree.clone(), limit - 64, "1", "1");
    let (_, valid_tree_body) = filled(tree, limit - 64, "{}", "{}");
    let (tag_headers, tag_body) =
        filled(tool_call("tag", json!({"tags": []})), limit - 64, "1", "1");
    for (name, headers, body, allowed) in [
        ("wrong_optional_items_4mib", &tag_headers, tag_body, false),
        (
            "deep_tree_one_wrong_leaf_4mib",
            &tree_headers,
            tree_body,
            false,
        ),
        (
            "deep_tree_wrong_leaves_4mib",
            &tree_headers,
            wrong_leaves_body,
            false,
        ),
        ("deep_tree_valid_4mib", &tree_headers, valid_tree_body, true),
    ] {
        assert!(body.len() <= limit);
        let verdict = gate.check_with(&mut scratch, headers.as_slice(), &body);
        assert_eq!(matches!(verdict, Verdict::Allow(_)), allowed, "{name}");
        bench_check(c, name, &gate, &mut scratch, headers, &body);
    }
}

criterion_group!(
    benches,
    valid_calls,
    invalid,
    tools_call_values,
    value_items,
    value_shapes
);
criterion_main!(benches);
