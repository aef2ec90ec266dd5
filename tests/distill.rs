//! The explainer from the outside: every text per keyword, no echo of sent
//! data, ordering, bounds, the 100,000-wrong-items body (time and peak heap),
//! MCP-shaped answers, and a property test against jsonschema's verdict.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, Instant};

use jsonschema::json::SerdeJson;
use mcpgate::unstable::distill::{
    Collector, Distilled, ECHO_BOUND, ExplainOptions, Explainer, Keyword, MAX_LOCATIONS,
    MAX_PROBLEMS, PathToken, summary_line,
};
use mcpgate::unstable::protocol::{RootKind, SchemaDocument, root_schema};
use proptest::prelude::*;
use serde_json::{Value, json};

// A counting allocator: counts only on a thread that asked to be measured.

struct Counting;

static CURRENT: AtomicI64 = AtomicI64::new(0);
static PEAK: AtomicI64 = AtomicI64::new(0);

thread_local! {
    static MEASURED: Cell<bool> = const { Cell::new(false) };
}

fn measured() -> bool {
    MEASURED.try_with(Cell::get).unwrap_or(false)
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        if measured() {
            let now =
                CURRENT.fetch_add(layout.size() as i64, Ordering::Relaxed) + layout.size() as i64;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        if measured() {
            CURRENT.fetch_sub(layout.size() as i64, Ordering::Relaxed);
        }
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        if measured() {
            let delta = new_size as i64 - layout.size() as i64;
            let now = CURRENT.fetch_add(delta, Ordering::Relaxed) + delta;
            PEAK.fetch_max(now, Ordering::Relaxed);
        }
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Runs `f` on this thread with the allocator counting; returns its result
/// and the peak extra heap in bytes.
fn peak_heap<T>(f: impl FnOnce() -> T) -> (T, i64) {
    static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());
    let _guard = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    CURRENT.store(0, Ordering::SeqCst);
    PEAK.store(0, Ordering::SeqCst);
    MEASURED.with(|m| m.set(true));
    let result = f();
    MEASURED.with(|m| m.set(false));
    (result, PEAK.load(Ordering::SeqCst))
}

// Helpers.

fn explainer(schema: &Value) -> Explainer<SerdeJson> {
    Explainer::new(
        schema,
        ExplainOptions {
            assert_formats: true,
        },
    )
    .expect("schema builds")
}

fn explain_with(explainer: &Explainer<SerdeJson>, instance: &Value) -> Distilled {
    let mut collector = Collector::new();
    explainer.explain(instance, &mut collector);
    collector.finish()
}

fn explain(schema: &Value, instance: &Value) -> Distilled {
    let validator = jsonschema::options()
        .should_validate_formats(true)
        .build(schema)
        .unwrap();
    assert!(
        !validator.is_valid(instance),
        "test instance must be invalid: {schema} {instance}"
    );
    explain_with(&explainer(schema), instance)
}

fn pointers(d: &Distilled) -> Vec<&str> {
    d.locations.iter().map(|l| l.pointer.as_str()).collect()
}

fn problems_at<'d>(d: &'d Distilled, pointer: &str) -> Vec<(Keyword, &'d str)> {
    d.locations
        .iter()
        .find(|l| l.pointer == pointer)
        .unwrap_or_else(|| panic!("no location {pointer:?} in {d:#?}"))
        .problems
        .iter()
        .map(|p| (p.keyword, p.text.as_str()))
        .collect()
}

fn assert_bounds(d: &Distilled) {
    assert!(d.locations.len() <= MAX_LOCATIONS);
    assert!(d.total >= d.locations.len());
    for location in &d.locations {
        assert!(
            location.pointer.len() <= ECHO_BOUND + 3,
            "{}",
            location.pointer.len()
        );
        assert!(!location.problems.is_empty());
        assert!(location.problems.len() <= MAX_PROBLEMS + 1);
        for problem in &location.problems {
            assert!(problem.text.len() <= ECHO_BOUND + 3, "{:?}", problem.text);
        }
    }
    let mut sorted = d.locations.clone();
    sorted.dedup_by(|a, b| a.pointer == b.pointer);
    assert_eq!(sorted.len(), d.locations.len(), "locations are distinct");
}

// Every text per keyword.

#[test]
fn a_bound_refuses_exactly_the_numbers_its_validator_refuses() {
    // Integer bounds are compared without the validator: at the edges of
    // u64, i64 and f64's exact integers, and with floats beside them, the
    // walk reports a bound exactly where jsonschema's validator refuses.
    let limits = [
        json!(0),
        json!(5),
        json!(-3),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(9_007_199_254_740_993_u64),
        json!(2.5),
    ];
    let instances = [
        json!(0),
        json!(-0.0),
        json!(4.999_999_999),
        json!(5),
        json!(5.0),
        json!(-3),
        json!(-3.000_000_1),
        json!(u64::MAX),
        json!(18_446_744_073_709_551_615.0),
        json!(i64::MIN),
        json!(-9_223_372_036_854_775_808.0),
        json!(9_007_199_254_740_992_u64),
        json!(9_007_199_254_740_993_u64),
        json!(9_007_199_254_740_992.0),
        json!(1e300),
        json!(-1e300),
        json!("5"),
    ];
    for keyword in ["minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum"] {
        for limit in &limits {
            assert_explained_exactly_where_refused(&json!({ keyword: limit }), &instances);
        }
    }
}

#[test]
fn an_enum_of_strings_refuses_exactly_the_values_its_validator_refuses() {
    // Compared as text: a string equal to one of them, and nothing else.
    let instances = [
        json!("Pending"),
        json!("pending"),
        json!("Pending "),
        json!(""),
        json!("日本"),
        json!("a\"b"),
        json!(1),
        json!(null),
        json!(["Pending"]),
        json!({"Pending": 1}),
    ];
    for schema in [
        json!({"enum": ["Pending", "Shipped", "", "日本", "a\"b"]}),
        json!({"enum": ["Pending", 1]}),
        json!({"enum": []}),
    ] {
        assert_explained_exactly_where_refused(&schema, &instances);
    }
}

/// Holds that the walk of `schema` reports a problem for exactly the
/// `instances` jsonschema's validator of it refuses.
fn assert_explained_exactly_where_refused(schema: &Value, instances: &[Value]) {
    let validator = jsonschema::draft202012::new(schema).unwrap();
    let explainer = explainer(schema);
    for instance in instances {
        let refused = explain_with(&explainer, instance).total > 0;
        assert_eq!(
            refused,
            !validator.is_valid(instance),
            "{schema} against {instance}"
        );
    }
}

#[test]
fn every_keyword_has_its_own_text() {
    let cases: Vec<(Value, Value, &str, Keyword, &str)> = vec![
        (
            json!({"type": "string"}),
            json!(1),
            "",
            Keyword::Type,
            "expected string, found integer",
        ),
        (
            json!({"type": ["string", "null"]}),
            json!(1.5),
            "",
            Keyword::Type,
            "expected null or string, found number",
        ),
        (
            json!({"required": ["name"]}),
            json!({}),
            "",
            Keyword::Required,
            "missing required property 'name'",
        ),
        (
            json!({"properties": {"a": {"type": "integer"}}, "additionalProperties": false}),
            json!({"a": 1, "extra": 2}),
            "/extra",
            Keyword::AdditionalProperties,
            "property is not allowed by additionalProperties",
        ),
        (
            json!({"propertyNames": {"maxLength": 3}}),
            json!({"long-name": 1}),
            "/long-name",
            Keyword::PropertyNames,
            "property name is not allowed by propertyNames",
        ),
        (
            json!({"patternProperties": {"^x": false}}),
            json!({"xa": 1}),
            "/xa",
            Keyword::False,
            "property is not allowed by patternProperties",
        ),
        (
            json!({"properties": {"a": true}, "unevaluatedProperties": false}),
            json!({"a": 1, "b": 2}),
            "/b",
            Keyword::UnevaluatedProperties,
            "property is not allowed by unevaluatedProperties",
        ),
        (
            json!({"dependentRequired": {"a": ["b"]}}),
            json!({"a": 1}),
            "",
            Keyword::DependentRequired,
            "property 'b' is required when 'a' is present",
        ),
        (
            json!({"enum": ["a", "b", "c"]}),
            json!("d"),
            "",
            Keyword::Enum,
            "value is not one of the allowed values: \"a\", \"b\", \"c\"",
        ),
        (
            json!({"const": "2.0"}),
            json!("1.0"),
            "",
            Keyword::Const,
            "value must be the constant \"2.0\"",
        ),
        (
            json!({"minimum": 0}),
            json!(-1),
            "",
            Keyword::Minimum,
            "value is lower than minimum 0",
        ),
        (
            json!({"maximum": 100}),
            json!(101),
            "",
            Keyword::Maximum,
            "value is higher than maximum 100",
        ),
        (
            json!({"exclusiveMinimum": 0}),
            json!(0),
            "",
            Keyword::ExclusiveMinimum,
            "value must be greater than 0",
        ),
        (
            json!({"exclusiveMaximum": 10}),
            json!(10),
            "",
            Keyword::ExclusiveMaximum,
            "value must be less than 10",
        ),
        (
            json!({"multipleOf": 3}),
            json!(7),
            "",
            Keyword::MultipleOf,
            "value is not a multiple of 3",
        ),
        (
            json!({"multipleOf": 0.3}),
            json!(1.7e308),
            "",
            Keyword::MultipleOf,
            "value could not be checked against multipleOf",
        ),
        (
            json!({"minLength": 3}),
            json!("ab"),
            "",
            Keyword::MinLength,
            "value is shorter than minLength 3",
        ),
        (
            json!({"maxLength": 2}),
            json!("abc"),
            "",
            Keyword::MaxLength,
            "value is longer than maxLength 2",
        ),
        (
            json!({"pattern": "^[a-z]+$"}),
            json!("A1"),
            "",
            Keyword::Pattern,
            "value does not match the pattern '^[a-z]+$'",
        ),
        (
            json!({"format": "date"}),
            json!("not a date"),
            "",
            Keyword::Format,
            "value does not respect the 'date' format",
        ),
        (
            json!({"minItems": 1}),
            json!([]),
            "",
            Keyword::MinItems,
            "value has fewer items than minItems 1",
        ),
        (
            json!({"maxItems": 1}),
            json!([1, 2]),
            "",
            Keyword::MaxItems,
            "value has more items than maxItems 1",
        ),
        (
            json!({"uniqueItems": true}),
            json!([1, 1.0]),
            "",
            Keyword::UniqueItems,
            "value must contain unique items",
        ),
        (
            json!({"contains": {"type": "string"}}),
            json!([1]),
            "",
            Keyword::Contains,
            "value must contain at least 1 matching items ('contains')",
        ),
        (
            json!({"contains": {"type": "string"}, "maxContains": 1}),
            json!(["a", "b"]),
            "",
            Keyword::Contains,
            "value must contain at most 1 matching items ('contains')",
        ),
        (
            json!({"prefixItems": [true], "items": false}),
            json!([1, 2]),
            "/1",
            Keyword::Items,
            "item is not allowed by items",
        ),
        (
            json!({"prefixItems": [true], "unevaluatedItems": false}),
            json!([1, 2]),
            "/1",
            Keyword::UnevaluatedItems,
            "item is not allowed by unevaluatedItems",
        ),
        (
            json!({"minProperties": 1}),
            json!({}),
            "",
            Keyword::MinProperties,
            "value has fewer properties than minProperties 1",
        ),
        (
            json!({"maxProperties": 0}),
            json!({"a": 1}),
            "",
            Keyword::MaxProperties,
            "value has more properties than maxProperties 0",
        ),
        (
            json!({"anyOf": [{"type": "string"}, {"type": "array"}]}),
            json!(1),
            "",
            Keyword::AnyOf,
            "value matches none of the allowed alternatives; expected one of the types: string, array",
        ),
        (
            json!({"oneOf": [{"type": "integer"}, {"minimum": 0}]}),
            json!(1),
            "",
            Keyword::OneOf,
            "value matches more than one alternative",
        ),
        (
            json!({"not": {"type": "string"}}),
            json!("a"),
            "",
            Keyword::Not,
            "value must not match the schema in 'not'",
        ),
        (
            json!(false),
            json!(1),
            "",
            Keyword::False,
            "no value is allowed here",
        ),
        (
            json!({"if": {"type": "string"}, "then": {"minLength": 2}, "else": {"minimum": 5}}),
            json!(1),
            "",
            Keyword::Minimum,
            "value is lower than minimum 5",
        ),
        (
            json!({"allOf": [{"minimum": 2}, {"maximum": 0}]}),
            json!(1),
            "",
            Keyword::Maximum,
            "value is higher than maximum 0",
        ),
        (
            json!({"dependentSchemas": {"a": {"required": ["b"]}}}),
            json!({"a": 1}),
            "",
            Keyword::Required,
            "missing required property 'b'",
        ),
    ];
    for (schema, instance, pointer, keyword, text) in cases {
        let d = explain(&schema, &instance);
        assert_bounds(&d);
        let found = problems_at(&d, pointer);
        assert!(
            found.contains(&(keyword, text)),
            "{schema} on {instance}: expected {keyword:?} {text:?} at {pointer:?}, got {found:?}"
        );
    }
}

#[test]
fn formats_are_annotations_unless_asserted() {
    let schema = json!({"type": "object", "properties": {"d": {"format": "date"}, "n": {"type": "integer"}}});
    let instance = json!({"d": "nope", "n": "x"});
    let explainer = Explainer::<SerdeJson>::new(
        &schema,
        ExplainOptions {
            assert_formats: false,
        },
    )
    .unwrap();
    let d = explain_with(&explainer, &instance);
    assert_eq!(pointers(&d), ["/n"]);
}

// No echo.

#[test]
fn no_text_or_pointer_quotes_a_long_sent_value() {
    let long = "Z".repeat(1 << 20);
    let digits = "9".repeat(300);
    let big: Value = serde_json::from_str(&digits).unwrap_or(json!(1e300));
    let schemas_and_instances: Vec<(Value, Value)> = vec![
        (json!({"type": "integer"}), json!(long)),
        (json!({"maxLength": 3}), json!(long)),
        (json!({"pattern": "^a"}), json!(long)),
        (json!({"format": "date"}), json!(long)),
        (json!({"enum": ["a", "b"]}), json!(long)),
        (json!({"const": "a"}), json!(long)),
        (json!({"maximum": 5}), big.clone()),
        (json!({"multipleOf": 7}), big.clone()),
        (json!({"type": "string"}), big.clone()),
        (json!({"const": 1}), big.clone()),
        (
            json!({"additionalProperties": false}),
            json!({ long.clone(): 1 }),
        ),
        (
            json!({"propertyNames": {"maxLength": 3}}),
            json!({ long.clone(): 1 }),
        ),
        (
            json!({"additionalProperties": {"type": "integer"}}),
            json!({ long.clone(): long.clone() }),
        ),
        (
            json!({"properties": {"a": {"required": ["x"]}}}),
            json!({"a": { long.clone(): big.clone() }}),
        ),
        (
            json!({"anyOf": [{"type": "integer"}, {"type": "null"}]}),
            json!(long),
        ),
        (
            json!({"uniqueItems": true}),
            json!([long.clone(), long.clone()]),
        ),
        (
            json!({"items": {"type": "object", "additionalProperties": false}}),
            json!([{ long.clone(): 1 }]),
        ),
    ];
    for (schema, instance) in schemas_and_instances {
        let d = explain(&schema, &instance);
        assert!(d.total >= 1, "{schema}");
        assert_bounds(&d);
        for location in &d.locations {
            assert!(!location.pointer.contains(&"Z".repeat(ECHO_BOUND + 1)));
            for problem in &location.problems {
                assert!(
                    !problem.text.contains("ZZZZ"),
                    "{schema}: {:?}",
                    problem.text
                );
                assert!(
                    !problem.text.contains("99999"),
                    "{schema}: {:?}",
                    problem.text
                );
            }
        }
        let line = summary_line("Invalid params", &d);
        assert!(line.len() <= 3 * ECHO_BOUND + 64, "{}", line.len());
        // Only the pointer (a location, cut at the echo bound) may carry sent bytes.
        assert!(
            !line.contains(&"Z".repeat(ECHO_BOUND + 1)) && !line.contains("99999"),
            "{line}"
        );
    }
}

#[test]
fn a_long_schema_word_is_cut_at_the_echo_bound() {
    let name = "n".repeat(1000);
    let schema = json!({"required": [name], "enum": [{"a": "b".repeat(500)}, 2]});
    let d = explain(&schema, &json!({}));
    assert_bounds(&d);
    assert!(
        d.locations[0]
            .problems
            .iter()
            .all(|p| p.text.ends_with('…'))
    );
}

// Ordering.

#[test]
fn locations_sort_by_tokens_with_indices_numeric() {
    let schema = json!({"properties": {"a": {"minItems": 20, "items": {"type": "string"}}}});
    let mut items: Vec<Value> = (0..11).map(|i| json!(i)).collect();
    items[1] = json!("ok");
    let d = explain(&schema, &json!({"a": items}));
    assert_eq!(
        pointers(&d),
        [
            "/a", "/a/0", "/a/2", "/a/3", "/a/4", "/a/5", "/a/6", "/a/7", "/a/8", "/a/9"
        ]
    );
    assert_eq!(d.total, 11);
    let items: Vec<Value> = (0..11).map(|_| json!(0)).collect();
    let d = explain(&json!({"items": {"type": "string"}}), &json!(items));
    assert!(pointers(&d).ends_with(&["/8", "/9"]), "{:?}", pointers(&d));
}

#[test]
fn keys_sort_bytewise() {
    let schema = json!({"additionalProperties": {"type": "string"}});
    let d = explain(&schema, &json!({"b": 1, "B": 1, "a": 1, "10": 1, "9": 1}));
    assert_eq!(pointers(&d), ["/10", "/9", "/B", "/a", "/b"]);
}

// Bounds.

#[test]
fn twenty_five_wrong_locations_report_ten_and_count_all() {
    let schema = json!({"additionalProperties": {"type": "string"}});
    let instance: serde_json::Map<String, Value> =
        (0..25).map(|i| (format!("k{i:02}"), json!(i))).collect();
    let d = explain(&schema, &Value::Object(instance));
    assert_eq!(d.locations.len(), 10);
    assert_eq!(d.total, 25);
    assert_eq!(d.problem_count, 25);
    assert_eq!(pointers(&d)[0], "/k00");
}

#[test]
fn thirty_problems_at_one_location_read_ten_and_20_more() {
    let required: Vec<String> = (0..30).map(|i| format!("p{i:02}")).collect();
    let d = explain(&json!({"required": required}), &json!({}));
    assert_eq!(d.total, 1);
    let problems = &d.locations[0].problems;
    assert_eq!(problems.len(), 11);
    assert_eq!(problems[0].text, "missing required property 'p00'");
    assert_eq!(problems[10].text, "and 20 more");
    assert_eq!(problems[10].keyword, Keyword::Other);
}

#[test]
fn problems_from_revisiting_branches_merge_and_dedupe() {
    let schema =
        json!({"allOf": [{"type": "object", "required": ["a"]}, {"required": ["a", "b"]}]});
    let d = explain(&schema, &json!({}));
    assert_eq!(
        problems_at(&d, ""),
        [
            (Keyword::Required, "missing required property 'a'"),
            (Keyword::Required, "missing required property 'b'")
        ]
    );
    assert_eq!(d.problem_count, 2);
}

// The body at the limit full of wrong items.

/// Items whose schema only says `type`, or is a leaf (`minLength` here),
/// are checked in place rather than walked: the answer is the walk's, at
/// every depth up to the frame cap (an item schema that says more, a
/// `not` here, is walked).
#[test]
fn items_checked_in_place_are_explained_as_the_walk_explains_them() {
    let nested = |leaf: Value, depth: usize| {
        (0..depth).fold(leaf, |inner, _| json!({"type": "array", "items": inner}))
    };
    let instance = |depth: usize| {
        (0..depth).fold(json!([1, "a", null, 2.5, [], "b", 3]), |inner, _| {
            json!([inner])
        })
    };
    let optional = json!({"anyOf": [{"type": "string"}, {"type": "null"}, {"type": "number"}]});
    let optional_walked = json!({"anyOf": [{"type": "string"}, {"type": "null"}, {"type": "number", "minimum": -1e9}]});
    let walked_string = json!({"type": "string", "minLength": 0, "not": {"const": "never sent"}});
    for (item, walked_item) in [
        (json!({"type": "string"}), walked_string.clone()),
        (json!({"type": "string", "minLength": 0}), walked_string),
        (optional, optional_walked),
    ] {
        for depth in [0, 1, 2, 60, 120, 124, 125, 126, 127, 128, 130, 140] {
            let typed = nested(json!({"type": "array", "items": item}), depth);
            let walked = nested(json!({"type": "array", "items": walked_item}), depth);
            let sent = instance(depth);
            let explained = explain_with(&explainer(&typed), &sent);
            assert_eq!(
                explained,
                explain_with(&explainer(&walked), &sent),
                "{item} at depth {depth}"
            );
            assert!(explained.total >= 1, "depth {depth}: {explained:?}");
            if depth == 127 && item["type"] == "string" {
                // The frame cap falls on the items themselves, valid or not.
                assert_eq!(explained.total, 7, "{explained:?}");
                assert_eq!(
                    explained.locations[0].problems[0].text,
                    "value is nested too deeply to be checked"
                );
            }
        }
    }
    let flat = explain(
        &json!({"items": {"type": "string"}}),
        &json!([1, "a", null]),
    );
    assert_eq!(pointers(&flat), ["/0", "/2"]);
    assert_eq!(
        problems_at(&flat, "/0"),
        [(Keyword::Type, "expected string, found integer")]
    );
}

/// Elements are checked in place where their type or an accepted empty
/// decides: an `anyOf` whose branches do not all say only `type` (a
/// recursive node or `null`), and the empty leaves of such a tree. The
/// answer is the walk's: the same schema with the items as `prefixItems`,
/// which are always walked, at every depth up to the frame cap.
#[test]
fn elements_checked_in_place_are_explained_as_the_walk_explains_them() {
    let item = json!({"anyOf": [{"$ref": "#/$defs/node"}, {"type": "null"}]});
    let leaves = json!([{}, 1, null, [], {"children": [2, {}]}, {"other": 1}, {}, "x"]);
    let tree = |children: Value| {
        json!({"$defs": {"node": {"type": "object", "additionalProperties": false,
            "properties": {"children": children}}}, "$ref": "#/$defs/node"})
    };
    let in_place = explainer(&tree(json!({"type": "array", "items": item})));
    let walked = explainer(&tree(
        json!({"type": "array", "prefixItems": vec![item; 8]}),
    ));
    for depth in [0, 1, 2, 20, 47, 48, 49, 50, 51, 52, 53, 54, 60, 130] {
        let sent = (0..depth).fold(
            json!({"children": leaves}),
            |inner, _| json!({"children": [inner]}),
        );
        let explained = explain_with(&in_place, &sent);
        assert_eq!(explained, explain_with(&walked, &sent), "depth {depth}");
        assert!(explained.total >= 1, "depth {depth}: {explained:?}");
        let too_deep = explained
            .locations
            .iter()
            .flat_map(|location| &location.problems)
            .any(|problem| problem.text == "value is nested too deeply to be checked");
        assert_eq!(too_deep, depth >= 50, "depth {depth}: {explained:?}");
    }
    let flat = explain_with(&in_place, &json!({"children": leaves}));
    assert_eq!(
        pointers(&flat),
        [
            "/children/1",
            "/children/3",
            "/children/4/children/0",
            "/children/5/other",
            "/children/7"
        ]
    );
    assert_eq!(
        problems_at(&flat, "/children/1"),
        [(
            Keyword::AnyOf,
            "value matches none of the allowed alternatives; expected one of the types: null, object"
        )]
    );
}

fn wrong_items(n: usize) -> Value {
    json!({"items": (0..n).map(|i| json!(i)).collect::<Vec<_>>()})
}

fn wrong_objects(n: usize) -> Value {
    json!({"items": (0..n).map(|i| json!({"id": i})).collect::<Vec<_>>()})
}

fn timed(explainer: &Explainer<SerdeJson>, instance: &Value) -> (Distilled, Duration, i64) {
    let mut collector = Collector::new();
    let start = Instant::now();
    let (d, peak) = peak_heap(|| {
        explainer.explain(instance, &mut collector);
        collector.finish()
    });
    (d, start.elapsed(), peak)
}

fn check_scaling(name: &str, schema: Value, make: fn(usize) -> Value) {
    let explainer = explainer(&schema);
    let validator = jsonschema::validator_for(&schema).unwrap();
    let small = make(10_000);
    let large = make(100_000);
    assert!(!validator.is_valid(&large));
    let (d_small, t_small, _) = timed(&explainer, &small);
    let (d, t_large, peak) = timed(&explainer, &large);
    println!(
        "{name}: 10k in {t_small:?}, 100k in {t_large:?} (x{:.1}); peak extra heap {:.2} MiB",
        t_large.as_secs_f64() / t_small.as_secs_f64().max(1e-9),
        peak as f64 / (1024.0 * 1024.0)
    );
    assert_eq!(d_small.total, 10_000);
    assert_eq!(d.total, 100_000);
    assert_eq!(
        pointers(&d),
        (0..10).map(|i| format!("/items/{i}")).collect::<Vec<_>>()
    );
    assert!(peak < 64 << 20, "peak extra heap {peak} bytes");
    // Linear, with room for a noisy machine.
    assert!(
        t_large < t_small * 40 + Duration::from_millis(200),
        "{t_small:?} vs {t_large:?}"
    );
}

#[test]
fn a_hundred_thousand_wrong_items_cost_linear_time_and_bounded_heap() {
    check_scaling(
        "wrong items",
        json!({"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}}),
        wrong_items,
    );
}

#[test]
fn a_hundred_thousand_wrong_items_under_any_of_stay_bounded() {
    check_scaling(
        "wrong items under anyOf",
        json!({"anyOf": [
            {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "string"}}}, "required": ["items"]},
            {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "boolean"}}}, "required": ["items"]}
        ]}),
        wrong_items,
    );
}

#[test]
fn a_hundred_thousand_wrong_objects_under_any_of_stay_bounded() {
    check_scaling(
        "wrong objects under anyOf",
        json!({"anyOf": [
            {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["name"], "properties": {"id": {"type": "integer"}}}}}},
            {"type": "object", "properties": {"items": {"type": "array", "items": {"type": "object", "required": ["title"], "properties": {"title": {"type": "string"}}}}}}
        ]}),
        wrong_objects,
    );
}

// MCP-shaped checks.

fn meta_2026() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": {}
    })
}

fn protocol_explain(document: SchemaDocument, key: &str, instance: &Value) -> Distilled {
    let schema = root_schema(&document.parse(), key).expect("root exists");
    let validator = jsonschema::draft202012::new(&schema).unwrap();
    assert!(
        !validator.is_valid(instance),
        "{instance} must be invalid for {key}"
    );
    let explainer = Explainer::<SerdeJson>::new(
        &schema,
        ExplainOptions {
            assert_formats: false,
        },
    )
    .unwrap();
    let d = explain_with(&explainer, instance);
    assert!(d.total >= 1);
    assert_bounds(&d);
    d
}

fn tools_call(params: Value) -> Value {
    json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params})
}

#[test]
fn a_tools_call_without_a_name_misses_it_at_params() {
    let key = RootKind::Request("tools/call").key();
    let d = protocol_explain(
        SchemaDocument::Mcp2026_07_28,
        &key,
        &tools_call(json!({"_meta": meta_2026()})),
    );
    assert_eq!(pointers(&d), ["/params"]);
    assert_eq!(
        problems_at(&d, "/params"),
        [(Keyword::Required, "missing required property 'name'")]
    );
    assert_eq!(
        summary_line("Invalid params", &d),
        "Invalid params: missing required property 'name' at /params"
    );
}

#[test]
fn a_wrong_jsonrpc_version_is_a_const_problem() {
    let key = RootKind::Request("tools/call").key();
    let mut message = tools_call(json!({"_meta": meta_2026(), "name": "echo"}));
    message["jsonrpc"] = json!("1.0");
    let d = protocol_explain(SchemaDocument::Mcp2026_07_28, &key, &message);
    assert_eq!(pointers(&d), ["/jsonrpc"]);
    assert_eq!(
        problems_at(&d, "/jsonrpc"),
        [(Keyword::Const, "value must be the constant \"2.0\"")]
    );
}

#[test]
fn params_as_a_string_is_a_type_problem() {
    let key = RootKind::Request("tools/call").key();
    let d = protocol_explain(
        SchemaDocument::Mcp2026_07_28,
        &key,
        &tools_call(json!("oops")),
    );
    assert_eq!(pointers(&d), ["/params"]);
    assert_eq!(
        problems_at(&d, "/params"),
        [(Keyword::Type, "expected object, found string")]
    );
    assert_eq!(d.locations[0].received_type, "string");
}

#[test]
fn the_flag_tells_params_problems_from_envelope_problems() {
    fn in_params(first: Option<PathToken<'_>>, _: usize, _: Keyword) -> bool {
        matches!(first, Some(PathToken::Key("params")))
    }
    let key = RootKind::Request("tools/call").key();
    let schema = root_schema(&SchemaDocument::Mcp2026_07_28.parse(), &key).unwrap();
    let explainer = Explainer::<SerdeJson>::new(&schema, ExplainOptions::default()).unwrap();
    let mut collector = Collector::with_flag(in_params);
    explainer.explain(&tools_call(json!({"_meta": meta_2026()})), &mut collector);
    assert!(collector.finish().flagged);
    let mut message = tools_call(json!({"_meta": meta_2026(), "name": "echo"}));
    message["jsonrpc"] = json!("1.0");
    explainer.explain(&message, &mut collector);
    assert!(!collector.finish().flagged);
}

#[test]
fn an_unknown_content_block_type_names_the_alternatives() {
    let result = json!({
        "model": "m", "role": "assistant",
        "content": {"type": "video", "url": "x"}
    });
    let d = protocol_explain(
        SchemaDocument::Mcp2025_11_25,
        "CreateMessageResult",
        &result,
    );
    assert_eq!(pointers(&d), ["/content/type"], "{d:#?}");
    let problems = problems_at(&d, "/content/type");
    assert_eq!(problems.len(), 1, "{problems:?}");
    assert_eq!(problems[0].0, Keyword::AnyOf);
    assert!(
        problems[0].1.contains("\"text\"") && problems[0].1.contains("\"image\""),
        "{problems:?}"
    );
    assert!(!problems[0].1.contains("video"));
}

#[test]
fn a_content_block_of_a_known_type_reports_only_its_branch() {
    let result = json!({
        "model": "m", "role": "assistant",
        "content": {"type": "image", "data": 5}
    });
    let d = protocol_explain(
        SchemaDocument::Mcp2025_11_25,
        "CreateMessageResult",
        &result,
    );
    assert_eq!(pointers(&d), ["/content", "/content/data"], "{d:#?}");
    assert_eq!(
        problems_at(&d, "/content"),
        [(Keyword::Required, "missing required property 'mimeType'")]
    );
}

#[test]
fn content_of_a_wrong_type_names_the_allowed_types() {
    let result = json!({"model": "m", "role": "assistant", "content": "text"});
    let d = protocol_explain(
        SchemaDocument::Mcp2025_11_25,
        "CreateMessageResult",
        &result,
    );
    assert_eq!(
        problems_at(&d, "/content"),
        [(
            Keyword::AnyOf,
            "value matches none of the allowed alternatives; expected one of the types: array, object"
        )]
    );
}

// Property test: whenever jsonschema says invalid, the walk finds a problem
// and the distilled output respects every bound.

fn arb_json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        (-1e6f64..1e6).prop_map(Value::from),
        "[a-z0-9/~._-]{0,12}".prop_map(Value::from),
        Just(json!("2.0")),
        Just(json!("text")),
        Just(json!("tools/call")),
    ];
    leaf.prop_recursive(4, 48, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::from),
            prop::collection::btree_map(
                prop_oneof![
                    "[a-z]{1,6}".prop_map(String::from),
                    Just("jsonrpc".to_owned()),
                    Just("id".to_owned()),
                    Just("method".to_owned()),
                    Just("params".to_owned()),
                    Just("name".to_owned()),
                    Just("type".to_owned()),
                    Just("content".to_owned()),
                ],
                inner,
                0..6
            )
            .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn keyword_rich_schemas() -> Vec<Value> {
    vec![
        json!({
            "type": "object",
            "required": ["name"],
            "properties": {
                "name": {"type": "string", "minLength": 1, "maxLength": 8, "pattern": "^[a-z]"},
                "id": {"type": ["integer", "string"], "minimum": 0, "multipleOf": 2},
                "type": {"enum": ["text", "image"]},
                "params": {"type": "array", "items": {"type": "number", "exclusiveMaximum": 100}, "uniqueItems": true, "maxItems": 3}
            },
            "additionalProperties": {"type": ["string", "null"]},
            "propertyNames": {"maxLength": 5},
            "dependentRequired": {"id": ["type"]},
            "minProperties": 1
        }),
        json!({
            "oneOf": [
                {"type": "object", "properties": {"type": {"const": "text"}, "text": {"type": "string"}}, "required": ["type", "text"]},
                {"type": "object", "properties": {"type": {"const": "image"}, "data": {"type": "string"}}, "required": ["type", "data"]},
                {"type": "array", "prefixItems": [{"type": "string"}], "items": false, "contains": {"type": "string"}},
                {"type": "integer", "not": {"const": 3}}
            ]
        }),
        json!({
            "$defs": {"node": {"type": "object", "properties": {"content": {"$ref": "#/$defs/list"}}, "unevaluatedProperties": false, "allOf": [{"properties": {"id": true}}]},
                       "list": {"type": "array", "items": {"anyOf": [{"$ref": "#/$defs/node"}, {"type": "string", "format": "date"}]}}},
            "$ref": "#/$defs/node",
            "if": {"required": ["id"]}, "then": {"properties": {"id": {"type": "integer"}}}, "else": {"properties": {"name": {"const": "x"}}}
        }),
    ]
}

fn check_property(
    validator: &jsonschema::Validator,
    explainer: &Explainer<SerdeJson>,
    instance: &Value,
) -> Result<(), TestCaseError> {
    if validator.is_valid(instance) {
        return Ok(());
    }
    let d = explain_with(explainer, instance);
    prop_assert!(d.total >= 1, "no problem found for {}", instance);
    prop_assert!(d.problem_count >= d.locations.len());
    assert_bounds(&d);
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_invalid_instance_of_a_keyword_rich_schema_is_explained(instance in arb_json()) {
        thread_local! {
            static BUILT: Vec<(jsonschema::Validator, Explainer<SerdeJson>)> = keyword_rich_schemas()
                .iter()
                .map(|s| (
                    jsonschema::options().should_validate_formats(true).build(s).unwrap(),
                    explainer(s),
                ))
                .collect();
        }
        BUILT.with(|built| {
            for (validator, explainer) in built {
                check_property(validator, explainer, &instance)?;
            }
            Ok::<(), TestCaseError>(())
        })?;
    }

    #[test]
    fn every_invalid_message_for_a_protocol_root_is_explained(
        instance in arb_json(),
        method in prop_oneof![Just("tools/call"), Just("tools/list"), Just("prompts/get"), Just("resources/read")],
        params in arb_json(),
    ) {
        thread_local! {
            static BUILT: Vec<(String, jsonschema::Validator, Explainer<SerdeJson>)> = SchemaDocument::ALL
                .iter()
                .flat_map(|document| {
                    let parsed = document.parse();
                    mcpgate::unstable::protocol::root_keys(&parsed)
                        .into_iter()
                        .map(move |key| {
                            let schema = root_schema(&parsed, &key).unwrap();
                            (
                                key,
                                jsonschema::draft202012::new(&schema).unwrap(),
                                Explainer::new(&schema, ExplainOptions::default()).unwrap(),
                            )
                        })
                        .collect::<Vec<_>>()
                })
                .collect();
        }
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        BUILT.with(|built| {
            for (_, validator, explainer) in built {
                check_property(validator, explainer, &instance)?;
                check_property(validator, explainer, &message)?;
            }
            Ok::<(), TestCaseError>(())
        })?;
    }
}
