//! Distilled errors (ARCHITECTURE.md, "Distilled errors"): for an instance a compiled JSON Schema
//! has already judged invalid (`is_valid` gives the verdict), a bounded walk
//! finds the causes and distills them.
//!
//! Why our own walk: `jsonschema`'s `iter_errors` is eager and held hundreds
//! of megabytes for a body of wrong items. This walk costs time linear in the
//! body (times a constant that depends on the schema) and bounded memory: the
//! ten reported locations are chosen while walking, without rendering or
//! allocating anything for a location that does not enter them, and distinct
//! locations are counted from the walk's order (see `distinct.rs`).
//!
//! The texts are ours (see `texts.rs`), one per keyword, and never quote
//! what was sent; leaf checks whose semantics are subtle (`pattern`,
//! `format`, numeric bounds, `multipleOf`) are delegated to tiny jsonschema
//! validators compiled once in [`Explainer::new`], and equality
//! (`const`/`enum`/`uniqueItems`) to the representation's own comparison, so
//! the explainer never disagrees with jsonschema on a leaf.

mod build;
mod collect;
mod distinct;
pub mod formats;
mod keywords;
pub(crate) use keywords::type_::TypeMask;
mod path;
mod texts;
mod walk;

use std::borrow::Cow;
use std::fmt;

use jsonschema::json::{Json, JsonNumber};
use serde_json::Value;

pub use build::local_pointer;
pub use collect::{
    Collector, Distilled, Found, FoundProblem, LocationReport, Problem, summary_line,
    write_summary_line,
};
pub use path::{PathToken, cut_at_echo_bound, within_echo_bound};

use crate::parse::{NodeKind, TapeNode};
use keywords::SchemaNode;
use walk::{OnFalse, Walker};

/// Locations reported at most; `total` counts them all.
pub const MAX_LOCATIONS: usize = 10;
/// Problems reported per location at most, then one `and N more`.
pub const MAX_PROBLEMS: usize = 10;
/// Bytes of any text or pointer before it is cut (at a UTF-8 boundary,
/// marked with `…`).
pub const ECHO_BOUND: usize = 128;
/// Bytes of a name or value compared with another for a near miss (a
/// case slip, a typo) at most: longer ones are not compared.
pub const MAX_COMPARED: usize = 64;
/// Schema frames plus instance depth before the walk stops descending and
/// reports one problem at that location.
pub const MAX_FRAMES: usize = 256;
/// Schema-node applications per `explain` before the walk stops (a guard
/// against schemas whose nested alternatives multiply the work).
pub const STEP_BUDGET: u64 = 1 << 24;

/// The property a `required` problem's text names (`None` for other texts
/// and for a name cut at the echo bound).
pub fn missing_property(keyword: Keyword, text: &str) -> Option<&str> {
    if keyword != Keyword::Required {
        return None;
    }
    texts::required_property(text)
}

/// How an explainer reads the schema.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ExplainOptions {
    /// Whether `format` is an assertion (tool input roots) or an annotation
    /// (protocol roots).
    pub assert_formats: bool,
}

/// The keyword a problem comes from: the JSON Schema keyword of the
/// variant's name unless its line says more.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Keyword {
    /// `type`.
    Type,
    /// `required`.
    Required,
    /// `additionalProperties`.
    AdditionalProperties,
    /// `unevaluatedProperties`.
    UnevaluatedProperties,
    /// `propertyNames`.
    PropertyNames,
    /// `dependentRequired`.
    DependentRequired,
    /// `enum`.
    Enum,
    /// `const`.
    Const,
    /// `minimum`.
    Minimum,
    /// `maximum`.
    Maximum,
    /// `exclusiveMinimum`.
    ExclusiveMinimum,
    /// `exclusiveMaximum`.
    ExclusiveMaximum,
    /// `multipleOf`.
    MultipleOf,
    /// `minLength`.
    MinLength,
    /// `maxLength`.
    MaxLength,
    /// `pattern`.
    Pattern,
    /// `format`.
    Format,
    /// `minItems`.
    MinItems,
    /// `maxItems`.
    MaxItems,
    /// `uniqueItems`.
    UniqueItems,
    /// `contains`.
    Contains,
    /// `items: false`, or an item past a `false` prefix.
    Items,
    /// `unevaluatedItems`.
    UnevaluatedItems,
    /// `minProperties`.
    MinProperties,
    /// `maxProperties`.
    MaxProperties,
    /// Only when no branch could be explored.
    AnyOf,
    /// Matches several branches, or (as `AnyOf`) none could be explored.
    OneOf,
    /// Never a problem's keyword: only `Problem::via`.
    AllOf,
    /// `not`.
    Not,
    /// A `false` schema.
    False,
    /// A keyword without a text of its own (a `$ref` left to jsonschema
    /// rather than walked, another keyword that refused the instance), or
    /// a walk that stopped (its step budget spent, its nesting too deep).
    Other,
}

impl Keyword {
    /// The JSON Schema keyword's name.
    pub fn as_str(&self) -> &'static str {
        match self {
            Keyword::Type => "type",
            Keyword::Required => "required",
            Keyword::AdditionalProperties => "additionalProperties",
            Keyword::UnevaluatedProperties => "unevaluatedProperties",
            Keyword::PropertyNames => "propertyNames",
            Keyword::DependentRequired => "dependentRequired",
            Keyword::Enum => "enum",
            Keyword::Const => "const",
            Keyword::Minimum => "minimum",
            Keyword::Maximum => "maximum",
            Keyword::ExclusiveMinimum => "exclusiveMinimum",
            Keyword::ExclusiveMaximum => "exclusiveMaximum",
            Keyword::MultipleOf => "multipleOf",
            Keyword::MinLength => "minLength",
            Keyword::MaxLength => "maxLength",
            Keyword::Pattern => "pattern",
            Keyword::Format => "format",
            Keyword::MinItems => "minItems",
            Keyword::MaxItems => "maxItems",
            Keyword::UniqueItems => "uniqueItems",
            Keyword::Contains => "contains",
            Keyword::Items => "items",
            Keyword::UnevaluatedItems => "unevaluatedItems",
            Keyword::MinProperties => "minProperties",
            Keyword::MaxProperties => "maxProperties",
            Keyword::AnyOf => "anyOf",
            Keyword::OneOf => "oneOf",
            Keyword::AllOf => "allOf",
            Keyword::Not => "not",
            Keyword::False => "false",
            Keyword::Other => "other",
        }
    }
}

impl fmt::Display for Keyword {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// Why an explainer could not be built: the schema does not compile.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ExplainBuildError {
    pub reason: String,
}

impl fmt::Display for ExplainBuildError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "schema cannot be explained: {}", self.reason)
    }
}

impl std::error::Error for ExplainBuildError {}

/// 2^63: an integer beyond 64 bits has at least this magnitude, and its
/// float too.
const WIDE: f64 = 9_223_372_036_854_775_808.0;

/// Whether `schema` holds, anywhere, a number of magnitude 2^63 or more (a
/// bound, a `const` or `enum` value, or any other) or a `multipleOf` that
/// is not a whole number up to 2^53 - 1.
///
/// An integer beyond 64 bits is held as its nearest float, of magnitude
/// 2^63 or more, and JSON Schema compares it with numbers (the bounds,
/// `const`, `enum`) and divides it (`multipleOf`). Against a number of
/// smaller magnitude the float stands on the same side as the exact value
/// and is never equal to it, so the verdict is exact; a whole divisor up
/// to 2^53 - 1 divides the literal as written (`jsonschema` reads the text
/// of an integer that large, which the tape keeps). Only a number as large,
/// or another divisor, can be judged otherwise. Reading the whole schema
/// (applied where it may be, inside `not` too) keeps the test sound
/// without deciding where each keyword applies.
pub fn compares_wide_integers(schema: &Value) -> bool {
    match schema {
        Value::Number(number) => reaches_wide(number),
        Value::Array(items) => items.iter().any(compares_wide_integers),
        Value::Object(members) => members.iter().any(|(key, value)| {
            (key == "multipleOf" && value.as_f64().is_some_and(divides_by_text))
                || compares_wide_integers(value)
        }),
        _ => false,
    }
}

/// Whether an integer beyond 64 bits, read as its float, may compare with
/// `number` otherwise than its exact value does: only a number it may
/// round to. Those lie at or past 2^64 and at or below -2^63, so every
/// `u64` (compared exactly, never as a float) is below them, and of the
/// `i64` only -2^63 is among them.
pub(crate) fn reaches_wide(number: &serde_json::Number) -> bool {
    if number.is_u64() {
        return false;
    }
    match number.as_i64() {
        Some(value) => value == i64::MIN,
        None => number.as_f64().is_some_and(|value| value.abs() >= WIDE),
    }
}

/// Whether a `multipleOf` of `divisor` may judge an integer beyond 64 bits
/// by its float: `jsonschema` divides the text of a large integer only by
/// a whole divisor up to 2^53 - 1.
pub(crate) fn divides_by_text(divisor: f64) -> bool {
    !(divisor > 0.0 && divisor.fract() == 0.0 && divisor <= 9_007_199_254_740_991.0)
}

/// Whether `number` is an integer literal beyond 64 bits that its float
/// does not hold exactly (the tape's `TapeNumber::Wide`; `serde_json`
/// without arbitrary precision has none).
pub(crate) fn is_wide_integer<N: JsonNumber>(number: &N) -> bool {
    number.as_u64().is_none()
        && number.as_i64().is_none()
        && number.as_f64().is_some_and(|value| value.abs() >= WIDE)
        && !number.as_str().contains(['.', 'e', 'E'])
}

/// Reports the first integer of `instance` beyond 64 bits that its float
/// does not hold exactly ([`is_wide_integer`]), at its location, as not
/// compared: what explains a refusal the verdict made for such an integer
/// alone ([`Explainer::compares_wide_integers`]) when the walk reached no
/// comparison of it.
pub fn report_wide_integer(instance: TapeNode<'_>, collector: &mut Collector) {
    let mut path: smallvec::SmallVec<[path::Tok<'_>; 32]> = smallvec::SmallVec::new();
    let mut node = instance;
    // Down through the one child that holds it, each time.
    'down: while node.holds_wide_integer() {
        if node.kind() == NodeKind::Number {
            collector.report(
                &path,
                "integer",
                Keyword::Other,
                None,
                texts::Msg::Static(texts::WIDE_INTEGER_HELD),
                0,
            );
            return;
        }
        for (name, value) in node.members() {
            if value.holds_wide_integer() {
                path.push(path::Tok::Key(Cow::Borrowed(name)));
                node = value;
                continue 'down;
            }
        }
        for (index, value) in node.elements().enumerate() {
            if value.holds_wide_integer() {
                path.push(path::Tok::Index(index));
                node = value;
                continue 'down;
            }
        }
        return;
    }
}

/// Explains why an instance fails a schema; built once per schema (at
/// registration), shared across threads.
pub struct Explainer<F: Json> {
    nodes: Vec<SchemaNode<F>>,
    /// Whether the schema compares numbers where an integer beyond 64 bits
    /// read as its float may be judged otherwise than by its exact value
    /// ([`compares_wide_integers`]).
    compares_wide: bool,
}

impl<F: Json> fmt::Debug for Explainer<F> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Explainer")
            .field("nodes", &self.nodes.len())
            .finish()
    }
}

/// What a schema node says for a problem's keyword ([`Explainer::schema_word`]).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SchemaWord<'e> {
    /// The values an `enum` allows, and the one the refused value equals
    /// but for ASCII case, if any.
    Values {
        allowed: &'e [Value],
        case_twin: Option<&'e str>,
    },
    /// A numeric bound, as the schema writes it.
    Number(&'e Value),
    /// A length or item-count bound.
    Count(u64),
    /// A format's name.
    Name(&'e str),
}

impl<F: Json> Explainer<F> {
    /// Builds the explainer for `schema` (draft 2020-12), compiling every
    /// delegated check now.
    pub fn new(schema: &Value, options: ExplainOptions) -> Result<Self, ExplainBuildError> {
        formats::with_own_formats(jsonschema::options_for::<F>())
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(options.assert_formats)
            .build(schema)
            .map_err(|error| ExplainBuildError {
                reason: error.to_string(),
            })?;
        let nodes = build::Build::<F>::new(schema, options.assert_formats).run();
        Ok(Explainer {
            nodes,
            compares_wide: compares_wide_integers(schema),
        })
    }

    /// Whether the schema's verdict on a value holding an integer literal
    /// beyond 64 bits that its float does not hold exactly may differ from
    /// the verdict on its exact value ([`compares_wide_integers`]): the
    /// gate then refuses such a value, and a walk of it reports each such
    /// comparison it reaches (`is_wide_integer`).
    pub fn compares_wide_integers(&self) -> bool {
        self.compares_wide
    }

    /// What the schema node that reported `problem` (found by this
    /// explainer) says for the problem's keyword, for the hint that names
    /// it: an `enum`'s values, a bound, a format. `None` for the other
    /// keywords, and for a problem no walk found.
    pub fn schema_word(&self, problem: &FoundProblem<'_>) -> Option<SchemaWord<'_>> {
        let SchemaNode::Object(node) = self.nodes.get(problem.node? as usize)? else {
            return None;
        };
        match problem.keyword {
            Keyword::Enum => {
                let allowed = node.enum_const.as_ref()?.allowed()?;
                let case_twin = problem
                    .case_twin
                    .and_then(|at| allowed.get(usize::from(at))?.as_str());
                Some(SchemaWord::Values { allowed, case_twin })
            }
            Keyword::Minimum | Keyword::Maximum => node
                .numeric
                .as_ref()?
                .limit(problem.keyword)
                .map(SchemaWord::Number),
            Keyword::MinLength | Keyword::MaxLength => node
                .string
                .as_ref()?
                .limit(problem.keyword)
                .map(SchemaWord::Count),
            Keyword::MinItems | Keyword::MaxItems => node
                .items
                .as_ref()?
                .limit(problem.keyword)
                .map(SchemaWord::Count),
            Keyword::Format => Some(SchemaWord::Name(node.format.as_ref()?.name())),
            _ => None,
        }
    }

    /// Walks `instance` (known invalid), feeding every problem into
    /// `collector`. Never panics; the walk depth and its work are capped.
    pub fn explain<'a>(&self, instance: F::Node<'a>, collector: &mut Collector) {
        self.walks(collector, |walker| {
            walker.walk(0, &instance, OnFalse::PLAIN)
        });
    }

    /// Explains an instance all of whose problems lie in its member `name`
    /// (`value`): what [`Explainer::explain`] feeds `collector`, from a walk
    /// of that member alone under what the root's `properties` say of it.
    /// For a caller that has proven every other keyword of the root holds
    /// for the instance (the gate's stages before the schema prove a
    /// request's envelope), without checking it again. The root's step and
    /// frame are counted as the whole walk counts them, so the caps stop
    /// at the same places. `false`, with nothing fed, when the root's
    /// `properties` do not name `name`.
    pub fn explain_member<'a>(
        &self,
        name: &'a str,
        value: F::Node<'a>,
        collector: &mut Collector,
    ) -> bool {
        let Some(SchemaNode::Object(root)) = self.nodes.first() else {
            return false;
        };
        let Some(properties) = root.properties.as_deref().filter(|p| p.names(name)) else {
            return false;
        };
        self.walks(collector, |walker| {
            // What `Walker::walk` takes for the root before its keywords.
            walker.steps = 1;
            walker.frames = 1;
            properties.check_member(walker, Cow::Borrowed(name), &value);
        });
        true
    }

    /// Runs `walk` on a fresh walker into `collector`, and again where the
    /// collector needs an exact count: the first walk counts locations in
    /// constant memory, exactly unless it reached one twice; then the
    /// count needs the locations' identities, kept only on the second.
    fn walks<'a>(&self, collector: &mut Collector, walk: impl Fn(&mut Walker<'_, 'a, F>)) {
        collector.start_walk();
        walk(&mut Walker::<F>::new(&self.nodes, collector));
        if collector.needs_exact_count() {
            collector.restart_exact();
            collector.start_walk();
            walk(&mut Walker::<F>::new(&self.nodes, collector));
        }
    }
}

#[cfg(test)]
mod tests {
    use jsonschema::json::SerdeJson;
    use serde_json::json;

    use super::*;

    fn explain(schema: Value, instance: Value) -> Distilled {
        let explainer = Explainer::<SerdeJson>::new(&schema, ExplainOptions::default()).unwrap();
        let mut collector = Collector::new();
        explainer.explain(&instance, &mut collector);
        collector.finish()
    }

    fn texts(d: &Distilled) -> Vec<(String, Vec<String>)> {
        d.locations
            .iter()
            .map(|l| {
                (
                    l.pointer.clone(),
                    l.problems.iter().map(|p| p.text.clone()).collect(),
                )
            })
            .collect()
    }

    #[test]
    fn an_explainer_is_send_and_sync() {
        fn assert<T: Send + Sync>() {}
        assert::<Explainer<SerdeJson>>();
    }

    #[test]
    fn a_wrong_type_names_expected_and_found() {
        let d = explain(json!({"type": "string"}), json!(3));
        assert_eq!(
            texts(&d),
            [("".into(), vec!["expected string, found integer".into()])]
        );
        assert_eq!(d.locations[0].received_type, "integer");
    }

    #[test]
    fn a_missing_property_is_reported_at_the_object() {
        let d = explain(
            json!({"type": "object", "properties": {"a": {"type": "object", "required": ["name"]}}}),
            json!({"a": {}}),
        );
        assert_eq!(
            texts(&d),
            [("/a".into(), vec!["missing required property 'name'".into()])]
        );
    }

    #[test]
    fn required_names_are_found_in_any_order_among_any_members() {
        let schema = json!({"required": ["a", "b"]});
        let tape_explainer =
            Explainer::<crate::parse::TapeJson>::new(&schema, ExplainOptions::default()).unwrap();
        let mut parser = crate::parse::Parser::new();
        for (instance, missing) in [
            (json!({"a": 1}), vec!["missing required property 'b'"]),
            (
                json!({}),
                vec![
                    "missing required property 'a'",
                    "missing required property 'b'",
                ],
            ),
            // More members than a one-pass check reads for so few names.
            (
                json!({"x": 1, "y": 2, "z": 3, "w": 4, "v": 5, "u": 6, "t": 7}),
                vec![
                    "missing required property 'a'",
                    "missing required property 'b'",
                ],
            ),
            (json!({"b": 1, "a": 2}), vec![]),
        ] {
            let expected: Vec<(String, Vec<String>)> = if missing.is_empty() {
                Vec::new()
            } else {
                vec![("".into(), missing.iter().map(|t| t.to_string()).collect())]
            };
            assert_eq!(texts(&explain(schema.clone(), instance.clone())), expected);
            let body = serde_json::to_vec(&instance).unwrap();
            let document = parser
                .parse(&body, crate::parse::ParseLimits::default())
                .unwrap();
            let mut collector = Collector::new();
            tape_explainer.explain(document.root(), &mut collector);
            assert_eq!(texts(&collector.finish()), expected, "{instance}");
        }
    }

    /// Each problem as (pointer, received type, keyword, text).
    fn reports(d: &Distilled) -> Vec<(String, String, String, String)> {
        d.locations
            .iter()
            .flat_map(|l| {
                l.problems.iter().map(|p| {
                    (
                        l.pointer.clone(),
                        l.received_type.to_owned(),
                        format!("{:?}", p.keyword),
                        p.text.clone(),
                    )
                })
            })
            .collect()
    }

    #[test]
    fn a_member_checked_in_place_is_reported_as_a_walked_one() {
        // Three nodes that refuse the same values: `type` alone and a leaf
        // (`minLength: 0` refuses nothing) are checked in place; a `not`
        // no value sent meets makes the third say more than a leaf, so its
        // member is walked.
        let only_type = |types: Value| json!({"type": types});
        let leaf = |types: Value| json!({"type": types, "minLength": 0});
        let walked =
            |types: Value| json!({"type": types, "minLength": 0, "not": {"const": "never sent"}});
        let schema = |member: &dyn Fn(Value) -> Value| {
            json!({"$defs": {"node": {"type": "object", "properties": {
                "name": member(json!("string")),
                "count": member(json!(["integer", "null"])),
                "ratio": member(json!("number")),
                "next": {"$ref": "#/$defs/node"}},
                "additionalProperties": member(json!("boolean"))}},
                "$ref": "#/$defs/node"})
        };
        let mut instance = json!({"name": 1, "count": 2.5, "ratio": 3, "extra": "x"});
        for _ in 0..3 {
            instance = json!({"name": "ok", "count": null, "next": instance, "flag": []});
        }
        let by_walk = reports(&explain(schema(&walked), instance.clone()));
        for member in [&only_type as &dyn Fn(Value) -> Value, &leaf] {
            let in_place = explain(schema(member), instance.clone());
            assert_eq!(reports(&in_place), by_walk);
            assert_eq!(in_place.total, 6, "{:?}", reports(&in_place));
        }
        // Deep enough to meet the frame cap: every way stops alike.
        for _ in 0..300 {
            instance = json!({"next": instance, "name": "deep"});
        }
        let by_walk = reports(&explain(schema(&walked), instance.clone()));
        assert!(
            by_walk
                .iter()
                .any(|(_, _, _, text)| text == texts::TOO_DEEP)
        );
        for member in [&only_type as &dyn Fn(Value) -> Value, &leaf] {
            assert_eq!(reports(&explain(schema(member), instance.clone())), by_walk);
        }
    }

    #[test]
    fn a_member_that_is_its_own_object_is_walked() {
        // The member's node is the object's own: read as it was built, it
        // says more than `type`.
        let schema = json!({"type": "object", "properties": {"self": {"$ref": "#"}}});
        let d = explain(schema, json!({"self": {"self": 1}}));
        assert_eq!(
            texts(&d),
            [(
                "/self/self".into(),
                vec!["expected object, found integer".into()]
            )]
        );
    }

    #[test]
    fn a_recursive_schema_is_walked() {
        let schema = json!({
            "$defs": {"tree": {"type": "object", "properties": {
                "value": {"type": "integer"},
                "children": {"type": "array", "items": {"$ref": "#/$defs/tree"}}}}},
            "$ref": "#/$defs/tree"
        });
        let d = explain(
            schema,
            json!({"children": [{"children": [{"value": "x"}]}]}),
        );
        assert_eq!(
            texts(&d),
            [(
                "/children/0/children/0/value".into(),
                vec!["expected integer, found string".into()]
            )]
        );
    }

    #[test]
    fn an_escaped_ref_resolves() {
        let schema = json!({"$defs": {"a/b": {"type": "string"}}, "$ref": "#/$defs/a~1b"});
        let d = explain(schema, json!(1));
        assert_eq!(d.total, 1);
    }

    #[test]
    fn one_pass_over_wrong_items_is_counted_in_one_walk() {
        let explainer = Explainer::<SerdeJson>::new(
            &json!({"items": {"type": "string"}}),
            ExplainOptions::default(),
        )
        .unwrap();
        let mut collector = Collector::new();
        explainer.explain(&json!([1, "a", 2, 3]), &mut collector);
        assert_eq!(collector.walks(), 1);
        assert_eq!(collector.finish().total, 3);
    }

    #[test]
    fn a_location_reached_by_two_branches_is_counted_once_by_a_second_walk() {
        let explainer = Explainer::<SerdeJson>::new(
            &json!({"allOf": [{"items": {"type": "string"}}, {"items": {"maxLength": 1}}]}),
            ExplainOptions::default(),
        )
        .unwrap();
        let mut collector = Collector::new();
        explainer.explain(&json!([1, "ab", 2, "abc", "a"]), &mut collector);
        assert_eq!(collector.walks(), 2);
        let d = collector.finish();
        assert_eq!(d.total, 4);
        let pointers: Vec<_> = d.locations.iter().map(|l| l.pointer.as_str()).collect();
        assert_eq!(pointers, ["/0", "/1", "/2", "/3"]);
    }

    #[test]
    fn deep_nesting_stops_at_the_frame_cap() {
        let schema = json!({"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}}, "$ref": "#/$defs/n"});
        let mut instance = json!(1);
        for _ in 0..400 {
            instance = json!([instance]);
        }
        let d = explain(schema, instance);
        assert!(d.total >= 1);
        assert!(
            d.locations[0]
                .problems
                .iter()
                .any(|p| p.text == texts::TOO_DEEP)
        );
        // Dropping a deep serde value recursively is fine at 400.
    }

    /// The depth at which an array nested in itself is too deep for
    /// `schema` to explain.
    fn too_deep_from(schema: &Value) -> usize {
        let explainer = Explainer::<SerdeJson>::new(schema, ExplainOptions::default()).unwrap();
        (1..400)
            .find(|depth| {
                let instance = (0..*depth).fold(json!(1), |inner, _| json!([inner]));
                let mut collector = Collector::new();
                explainer.explain(&instance, &mut collector);
                let d = collector.finish();
                d.locations
                    .iter()
                    .any(|l| l.problems.iter().any(|p| p.text == texts::TOO_DEEP))
            })
            .unwrap()
    }

    #[test]
    fn a_chain_of_bare_references_costs_the_walk_no_depth() {
        let direct = json!({"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
            "$ref": "#/$defs/n"});
        let chained = json!({"$defs": {
            "n": {"type": "array", "items": {"$ref": "#/$defs/m", "$comment": "via m"}},
            "m": {"$ref": "#/$defs/k"},
            "k": {"$ref": "#/$defs/n"}}, "$ref": "#/$defs/n"});
        // A reference beside a keyword that validates is a node of its own.
        let beside = json!({"$defs": {"n": {"type": "array",
            "items": {"$ref": "#/$defs/n", "minItems": 0}}}, "$ref": "#/$defs/n"});
        let depth = too_deep_from(&direct);
        assert!(depth > 100, "{depth}");
        assert_eq!(too_deep_from(&chained), depth);
        assert!(too_deep_from(&beside) < depth);
    }

    #[test]
    fn a_member_explained_alone_reads_as_the_whole_walk() {
        let schema = json!({"$defs": {"n": {"type": "array", "items": {"$ref": "#/$defs/n"}}},
            "type": "object", "required": ["a", "p"],
            "properties": {"a": {"const": 1}, "p": {"$ref": "#/$defs/n"}}});
        let explainer = Explainer::<SerdeJson>::new(&schema, ExplainOptions::default()).unwrap();
        let alone = |instance: &Value| {
            let mut collector = Collector::new();
            assert!(explainer.explain_member("p", &instance["p"], &mut collector));
            collector.finish()
        };
        let whole = |instance: &Value| {
            let mut collector = Collector::new();
            explainer.explain(instance, &mut collector);
            collector.finish()
        };
        let shallow = json!({"a": 1, "p": [[["x"], 2], []]});
        assert_eq!(alone(&shallow).total, 2);
        assert_eq!(alone(&shallow), whole(&shallow));
        assert_eq!(texts(&alone(&shallow))[0].0, "/p/0/0/0");
        // Deep enough for the frame cap: it stops at the same place.
        let deep = json!({"a": 1, "p": (0..300).fold(json!(1), |inner, _| json!([inner]))});
        let d = alone(&deep);
        assert!(
            d.locations[0]
                .problems
                .iter()
                .any(|p| p.text == texts::TOO_DEEP)
        );
        assert_eq!(d, whole(&deep));
        // A member the root does not name: nothing walked.
        let mut collector = Collector::new();
        assert!(!explainer.explain_member("q", &json!(1), &mut collector));
        assert_eq!(collector.finish().total, 0);
    }
}
