//! Hints a model can act on (ARCHITECTURE.md, "The value gate"): `did_you_mean` for a near-miss
//! key or tool name, `case_mismatch` for a key or an allowed value that
//! differs only in case, `enum_suggest` with the allowed values,
//! `missing_required`, and otherwise the envelope contract's hint for the
//! keyword. The schema's words they name (an `enum`'s values, a bound, a
//! format) are the very schema's that refused the value, as the explainer
//! compiled it; an unknown key's near misses are read from the tool's
//! schema at the key's parent, and the allowed value a sent one equals
//! but for case by the walk that refused it. The sent key or value is
//! read only to compare; a sent key is quoted only cut at the echo bound.

use std::fmt::Write as _;

use bumpalo::Bump;
use bumpalo::collections::{String as ArenaString, Vec as ArenaVec};
use serde_json::Value;

use crate::catalog::Tool;
use crate::catalog::subschemas::resolve;
use crate::distill::{Keyword, MAX_COMPARED, PathToken, SchemaWord, within_echo_bound};
use crate::parse::{NodeKind, TapeNode, same_text, words};
use crate::reject::codes::{TOOL_ERROR_FALLBACK, ToolErrorCode, tool_error_code};

/// Schemas gathered at one location at most.
const MAX_SCHEMAS: usize = 64;
/// Allowed values listed in a hint at most.
const MAX_ALLOWED: usize = 10;

/// The schemas of `root` that apply at `path` (parts applied in place
/// included), as far as they can be read without the instance; gathered in
/// `arena`, as the hint that reads them is. For the empty path, the
/// root's. `in_place`: whether a schema of `root` may apply another in
/// place (else each location has one schema, found without looking at the
/// others' members).
fn schemas_at<'s, 'b>(
    arena: &'b Bump,
    root: &'s Value,
    in_place: bool,
    path: &[PathToken<'_>],
) -> ArenaVec<'b, &'s Value> {
    let expand = |schema: &'s Value, out: &mut ArenaVec<'_, &'s Value>| {
        if in_place {
            expand(root, schema, out, 0);
        } else if schema.is_object() {
            out.push(schema);
        }
    };
    let mut here = ArenaVec::with_capacity_in(8, arena);
    expand(root, &mut here);
    for token in path {
        // Past a location no schema reaches, the set stays empty.
        let mut next = ArenaVec::with_capacity_in(here.len().max(4), arena);
        for schema in &here {
            let child = match *token {
                PathToken::Key(key) => schema
                    .get("properties")
                    .and_then(|p| p.get(key))
                    .or_else(|| schema.get("additionalProperties")),
                PathToken::Index(index) => schema
                    .get("prefixItems")
                    .and_then(|p| p.get(index))
                    .or_else(|| schema.get("items")),
            };
            if let Some(child) = child {
                expand(child, &mut next);
            }
        }
        here = next;
    }
    here
}

/// `schema` and the parts applied with it in place, in the order
/// `allOf`, `anyOf`, `oneOf`, `then`, `else`, `$ref` (the properties an
/// unknown key is compared with are all of theirs). The keywords are found
/// in one pass over the schema's members, not looked up one by one.
fn expand<'s>(root: &'s Value, schema: &'s Value, out: &mut ArenaVec<'_, &'s Value>, depth: usize) {
    let Some(members) = schema.as_object() else {
        return;
    };
    if depth > 16 || out.len() >= MAX_SCHEMAS || out.iter().any(|seen| std::ptr::eq(*seen, schema))
    {
        return;
    }
    out.push(schema);
    let mut parts: [Option<&'s Value>; 6] = [None; 6];
    for (keyword, part) in members {
        let slot = match keyword.as_str() {
            "allOf" => 0,
            "anyOf" => 1,
            "oneOf" => 2,
            "then" => 3,
            "else" => 4,
            "$ref" => 5,
            _ => continue,
        };
        parts[slot] = Some(part);
    }
    for part in parts[..3].iter().flatten() {
        for each in part.as_array().into_iter().flatten() {
            expand(root, each, out, depth + 1);
        }
    }
    for part in parts[3..5].iter().flatten() {
        expand(root, part, out, depth + 1);
    }
    if let Some(target) = parts[5]
        .and_then(Value::as_str)
        .and_then(|r| resolve(root, r))
    {
        expand(root, target, out, depth + 1);
    }
}

/// The hint for one problem at `path`.
pub struct HintInput<'h, 'a> {
    pub keyword: Keyword,
    /// The dotted path of the location.
    pub path: &'h str,
    pub tokens: &'h [PathToken<'h>],
    /// The refused tool: its schema is read only by the hints that name
    /// its words.
    pub tool: &'h Tool,
    /// The sent arguments, when found: the hint for a missing property
    /// compares the sent keys beside it (an allowed value differing only in
    /// case was found by the walk, [`SchemaWord::Values`]).
    pub arguments: Option<TapeNode<'a>>,
    /// What the schema that refused the value says for the keyword (an
    /// `enum`'s values, a bound, a format), as the explainer compiled it
    /// ([`Explainer::schema_word`]), not looked up in the tool's schema:
    /// where schemas apply in place, the first one holding the keyword
    /// may not be the one that refused.
    ///
    /// [`Explainer::schema_word`]: crate::distill::Explainer::schema_word
    pub word: Option<SchemaWord<'h>>,
}

impl<'h> HintInput<'h, '_> {
    /// The schemas at the location's parent, gathered by the hints for an
    /// unknown key, which name its properties (the others read none: the
    /// gathering costs more than the hint).
    fn parent_schemas<'b>(&self, arena: &'b Bump) -> ArenaVec<'b, &'h Value> {
        let parent = self
            .tokens
            .split_last()
            .map_or(&[][..], |(_, parent)| parent);
        schemas_at(arena, &self.tool.schema, self.tool.applies_in_place, parent)
    }
}

/// Sent keys compared with a missing property at most.
const MAX_KEYS_COMPARED: usize = 256;

/// The hint's text, written in `arena` (a refusal's texts live there
/// until its answer is written).
pub fn hint<'b>(arena: &'b Bump, input: &HintInput<'_, '_>) -> &'b str {
    hint_text(arena, input).into_bump_str()
}

fn hint_text<'b>(arena: &'b Bump, input: &HintInput<'_, '_>) -> ArenaString<'b> {
    let path = if input.path.is_empty() {
        "the arguments"
    } else {
        input.path
    };
    match input.keyword {
        Keyword::Required => {
            if let Some((PathToken::Key(name), parent)) = input.tokens.split_last()
                && let Some(sent) = input
                    .arguments
                    .and_then(|arguments| value_at(arguments, parent))
                && let Some(hint) = missing_hint(arena, name, sent)
            {
                return hint;
            }
        }
        Keyword::AdditionalProperties | Keyword::UnevaluatedProperties => {
            if let Some(PathToken::Key(key)) = input.tokens.last() {
                let parent = input.parent_schemas(arena);
                let names = property_names(arena, &parent);
                if let Some(hint) = key_hint(arena, key, &names) {
                    return hint;
                }
                return fill(
                    arena,
                    tool_error_code("additionalProperties"),
                    &[("path", path), ("extra", cut(arena, key))],
                );
            }
        }
        Keyword::Enum => {
            if let Some(SchemaWord::Values { allowed, case_twin }) = input.word {
                if let Some(same) = case_twin {
                    return bumpalo::format!(in arena,
                        "Use '{}' for {path}: allowed values are case-sensitive.",
                        cut(arena, same)
                    );
                }
                return fill(
                    arena,
                    tool_error_code("enum"),
                    &[("path", path), ("allowed", &list_values(arena, allowed))],
                );
            }
        }
        _ => {
            let word = match input.word {
                Some(SchemaWord::Name(format)) => Some(("format", cut(arena, format))),
                Some(SchemaWord::Number(limit)) => Some((
                    "limit",
                    bumpalo::format!(in arena, "{}", limit).into_bump_str(),
                )),
                Some(SchemaWord::Count(limit)) => Some((
                    "limit",
                    bumpalo::format!(in arena, "{}", limit).into_bump_str(),
                )),
                Some(SchemaWord::Values { .. }) | None => None,
            };
            if let Some(word) = word {
                return fill(
                    arena,
                    tool_error_code(input.keyword.as_str()),
                    &[("path", path), word],
                );
            }
        }
    }
    let entry = tool_error_code(input.keyword.as_str());
    if entry.hint_needs_value {
        return fill(arena, &TOOL_ERROR_FALLBACK, &[("path", path)]);
    }
    fill(
        arena,
        entry,
        &[("path", path), ("validator", input.keyword.as_str())],
    )
}

/// `text` cut at the echo bound, copied into `arena` only when cut.
pub(super) fn cut<'t>(arena: &'t Bump, text: &'t str) -> &'t str {
    match within_echo_bound(text) {
        (kept, false) => kept,
        (kept, true) => bumpalo::format!(in arena, "{}…", kept).into_bump_str(),
    }
}

/// `case_mismatch` or `did_you_mean` for a missing property that a sent
/// key nearly names.
fn missing_hint<'b>(arena: &'b Bump, name: &str, sent: TapeNode<'_>) -> Option<ArenaString<'b>> {
    let mut keys = ArenaVec::new_in(arena);
    keys.extend(
        sent.members()
            .take(MAX_KEYS_COMPARED)
            .map(|(key, _)| key)
            .filter(|key| key.len() <= MAX_COMPARED && *key != name),
    );
    if let Some(same) = keys.iter().find(|key| key.eq_ignore_ascii_case(name)) {
        return Some(bumpalo::format!(in arena,
            "Key '{}' differs from the required property '{}' only in case: use '{}'.",
            same, name, name
        ));
    }
    let near = keys
        .iter()
        .copied()
        .find(|key| nearest(key, std::iter::once(name)).is_some())?;
    Some(bumpalo::format!(in arena,
        "Key '{}' is not a property: did you mean the required '{}'?",
        near, name
    ))
}

/// `did_you_mean` or `case_mismatch` for an unknown key among `names`.
fn key_hint<'b>(arena: &'b Bump, key: &str, names: &[&str]) -> Option<ArenaString<'b>> {
    if let Some(same) = names
        .iter()
        .find(|name| name.len() <= MAX_COMPARED && name.eq_ignore_ascii_case(key))
    {
        return Some(bumpalo::format!(in arena,
            "Key '{}' differs from the property '{same}' only in case: use '{same}'.",
            cut(arena, key)
        ));
    }
    let near = nearest(key, names.iter().copied())?;
    Some(bumpalo::format!(in arena, "Unknown key '{}': did you mean '{near}'?", cut(arena, key)))
}

/// The name of `candidates` nearest to `sent` by edit distance, if near
/// enough to be a typo (at most a third of its length, at least one edit).
pub fn nearest<'c>(sent: &str, candidates: impl Iterator<Item = &'c str>) -> Option<&'c str> {
    if sent.len() > MAX_COMPARED {
        return None;
    }
    let length = sent.chars().count();
    let limit = (length / 3).max(1);
    candidates
        // Lengths further apart than the limit cannot be within it.
        .filter(|c| c.len() <= MAX_COMPARED && c.chars().count().abs_diff(length) <= limit)
        .map(|c| (edit_distance(sent, c, limit), c))
        .filter(|(d, _)| *d <= limit)
        .min_by(|a, b| a.0.cmp(&b.0).then(a.1.cmp(b.1)))
        .map(|(_, c)| c)
}

/// Levenshtein distance over characters (both sides at most
/// [`MAX_COMPARED`] bytes) when it is at most `limit`; any larger distance
/// is some value above `limit`.
fn edit_distance(a: &str, b: &str, limit: usize) -> usize {
    if a.is_ascii() && b.is_ascii() {
        return bounded_distance(a.as_bytes(), b.as_bytes(), limit);
    }
    // On the stack: a refusal naming an unknown tool allocates nothing.
    // (At most MAX_COMPARED bytes, so at most as many characters.)
    let chars = |s: &str| {
        let mut out = ['\0'; MAX_COMPARED];
        let mut len = 0;
        for (slot, c) in out.iter_mut().zip(s.chars()) {
            *slot = c;
            len += 1;
        }
        (out, len)
    };
    let ((a, a_len), (b, b_len)) = (chars(a), chars(b));
    bounded_distance(&a[..a_len], &b[..b_len], limit)
}

/// One row of the distance table at a time, in bytes (no distance between
/// [`MAX_COMPARED`]-long sides exceeds a byte); stops once every cell of a
/// row is past `limit`, since no later row can come back under it.
fn bounded_distance<T: PartialEq>(a: &[T], b: &[T], limit: usize) -> usize {
    let mut row_buffer = [0u8; MAX_COMPARED + 1];
    let row = &mut row_buffer[..=b.len()];
    for (j, cell) in (0u8..).zip(row.iter_mut()) {
        *cell = j;
    }
    for (i, ca) in (1u8..).zip(a) {
        let mut diagonal = row[0];
        row[0] = i;
        let mut least = i;
        for (j, cb) in b.iter().enumerate() {
            let above = row[j + 1];
            let cell = (above + 1)
                .min(row[j] + 1)
                .min(diagonal + u8::from(ca != cb));
            row[j + 1] = cell;
            least = least.min(cell);
            diagonal = above;
        }
        if usize::from(least) > limit {
            return usize::from(least);
        }
    }
    usize::from(row[b.len()])
}

fn property_names<'s, 'b>(arena: &'b Bump, schemas: &[&'s Value]) -> ArenaVec<'b, &'s str> {
    let mut names = ArenaVec::new_in(arena);
    names.extend(
        schemas
            .iter()
            .filter_map(|s| s.get("properties").and_then(Value::as_object))
            .flat_map(|p| p.keys().map(String::as_str)),
    );
    names.sort_unstable();
    names.dedup();
    names
}

/// Allowed values for a hint: strings bare, others as JSON, bounded.
fn list_values<'b>(arena: &'b Bump, values: &[Value]) -> ArenaString<'b> {
    let mut text = ArenaString::with_capacity_in(128, arena);
    for (i, value) in values.iter().take(MAX_ALLOWED).enumerate() {
        if i > 0 {
            text.push_str(", ");
        }
        match value {
            Value::String(s) => text.push_str(cut(arena, s)),
            other => text.push_str(cut(arena, &bumpalo::format!(in arena, "{}", other))),
        }
    }
    if values.len() > MAX_ALLOWED {
        let _ = write!(text, " (and {} more)", values.len() - MAX_ALLOWED);
    }
    text
}

/// A hint template (`entry`'s) with its `{name}` placeholders filled, one
/// name after another (a value filled in is read again for the names
/// after it).
fn fill<'b>(arena: &'b Bump, entry: &ToolErrorCode, values: &[(&str, &str)]) -> ArenaString<'b> {
    let template = entry.hint;
    // Where no value put in holds a brace, none can make a placeholder:
    // one pass over the placeholders the table found gives what replacing
    // name after name would. (Bytes, not chars: a brace is ASCII, and the
    // allowed-values list a value may be is long. A value the template
    // does not name is never put in, nor looked at.)
    let room = template.len() + values.iter().map(|(_, value)| value.len()).sum::<usize>();
    let mut text = ArenaString::with_capacity_in(room, arena);
    let mut written = 0;
    for (start, end) in entry.hint_placeholders.spans() {
        let name = &template[start + 1..end - 1];
        if let Some((_, value)) = values.iter().find(|(named, _)| same_text(named, name)) {
            if holds_brace(value) {
                return fill_in_turn(arena, template, values);
            }
            text.push_str(&template[written..start]);
            text.push_str(value);
            written = end;
        }
    }
    text.push_str(&template[written..]);
    text
}

/// Whether `value` holds `{` or `}`. A short value (a name, a path, a
/// bound) is read in place, eight bytes at a time: `memchr`'s dispatch
/// costs more than the bytes. A long one (an allowed-values list) goes to
/// `memchr`.
fn holds_brace(value: &str) -> bool {
    const SHORT: usize = 64;
    let bytes = value.as_bytes();
    if bytes.len() >= SHORT {
        return memchr::memchr2(b'{', b'}', bytes).is_some();
    }
    if bytes.len() < 8 {
        return bytes.iter().any(|&b| b == b'{' || b == b'}');
    }
    words::overlapping_words(bytes)
        .any(|word| words::equal(word, b'{') | words::equal(word, b'}') != 0)
}

/// `fill` as the contract words it: each name replaced in turn, in the
/// text the names before it left (a value may hold a later placeholder).
fn fill_in_turn<'b>(arena: &'b Bump, template: &str, values: &[(&str, &str)]) -> ArenaString<'b> {
    let mut text = ArenaString::from_str_in(template, arena);
    for (name, value) in values {
        let mut filled = ArenaString::with_capacity_in(text.len() + value.len(), arena);
        let mut rest = text.as_str();
        while let Some(at) = placeholder(rest, name) {
            filled.push_str(&rest[..at]);
            filled.push_str(value);
            rest = &rest[at + name.len() + 2..];
        }
        filled.push_str(rest);
        text = filled;
    }
    text
}

/// Where `{name}` first occurs in `text`.
fn placeholder(text: &str, name: &str) -> Option<usize> {
    text.match_indices('{').map(|(at, _)| at).find(|&at| {
        text[at + 1..]
            .strip_prefix(name)
            .is_some_and(|after| after.starts_with('}'))
    })
}

/// The sent value at a location.
fn value_at<'a>(arguments: TapeNode<'a>, tokens: &[PathToken<'_>]) -> Option<TapeNode<'a>> {
    tokens
        .iter()
        .try_fold(arguments, |node, token| match *token {
            PathToken::Key(key) if node.kind() == NodeKind::Object => node.get(key),
            PathToken::Index(index) if node.kind() == NodeKind::Array => node.element(index),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;
    use crate::reject::codes::tool_code;

    #[test]
    fn a_brace_is_found_at_any_place_of_a_value_of_any_length() {
        for len in 0..150 {
            let plain = "a".repeat(len);
            assert!(!holds_brace(&plain), "{len}");
            for at in 0..len {
                for brace in ["{", "}"] {
                    let mut value = plain.clone();
                    value.replace_range(at..=at, brace);
                    assert!(holds_brace(&value), "{len} {at} {brace}");
                }
            }
        }
    }

    #[test]
    fn a_near_miss_is_suggested_and_a_stranger_is_not() {
        let names = ["region", "limit", "marketplaceIds"];
        assert_eq!(nearest("reigon", names.into_iter()), Some("region"));
        assert_eq!(
            nearest("marketplaceId", names.into_iter()),
            Some("marketplaceIds")
        );
        assert_eq!(nearest("colour", names.into_iter()), None);
        assert_eq!(edit_distance("kitten", "sitting", 3), 3);
        assert_eq!(edit_distance("kitten", "sitting", 9), 3);
        assert!(edit_distance("kitten", "sitting", 2) > 2);
        assert_eq!(edit_distance("", "abc", 5), 3);
        assert_eq!(edit_distance("abc", "", 5), 3);
        assert_eq!(edit_distance("naïve", "naive", 1), 1);
        assert_eq!(edit_distance("über", "uber", 3), 1);
        assert!(edit_distance("colour", "status", 2) > 2);
    }

    /// The whole table, unbounded: what the bounded distance must agree
    /// with wherever it is within its limit.
    fn full_distance(a: &str, b: &str) -> usize {
        let (a, b): (Vec<char>, Vec<char>) = (a.chars().collect(), b.chars().collect());
        let mut row: Vec<usize> = (0..=b.len()).collect();
        for (i, ca) in a.iter().enumerate() {
            let mut diagonal = row[0];
            row[0] = i + 1;
            for (j, cb) in b.iter().enumerate() {
                let above = row[j + 1];
                row[j + 1] = (above + 1)
                    .min(row[j] + 1)
                    .min(diagonal + usize::from(ca != cb));
                diagonal = above;
            }
        }
        row[b.len()]
    }

    proptest::proptest! {
        #[test]
        fn a_distance_within_its_limit_is_exact_and_one_past_it_is_past_it(
            a in "[abcé]{0,12}", b in "[abcé]{0,12}", limit in 0usize..6
        ) {
            let full = full_distance(&a, &b);
            let bounded = edit_distance(&a, &b, limit);
            if full <= limit {
                proptest::prop_assert_eq!(bounded, full);
            } else {
                proptest::prop_assert!(bounded > limit, "{} {} {}", a, b, bounded);
            }
        }
    }

    #[test]
    fn a_template_is_filled_name_after_name_as_replacing_would() {
        let arena = Bump::new();
        let template = "at {path}: {extra} {path} {pat} {other}";
        let values = [("path", "p{extra}{"), ("extra", "x")];
        let mut expected = template.to_owned();
        for (name, value) in values {
            expected = expected.replace(&format!("{{{name}}}"), value);
        }
        let entry = |template| tool_code("", "", "", template);
        assert_eq!(fill(&arena, &entry(template), &values).as_str(), expected);
        assert_eq!(fill(&arena, &entry("none"), &values).as_str(), "none");
        // Values without braces take the one-pass path: the same text, for
        // every template the envelope fills and for a doubled brace.
        let plain = [
            ("path", "filters.region"),
            ("allowed", "NA, EU"),
            ("limit", "5"),
            ("extra", "colour"),
            ("format", "email"),
        ];
        let templates = crate::reject::codes::TOOL_ERROR_CODES
            .iter()
            .map(|entry| entry.hint)
            .chain([
                TOOL_ERROR_FALLBACK.hint,
                "{{path}} {} {path {pathx} {limit}{limit}",
            ]);
        for template in templates {
            assert_eq!(
                fill(&arena, &entry(template), &plain).as_str(),
                fill_in_turn(&arena, template, &plain).as_str(),
                "{template}"
            );
        }
    }

    #[test]
    fn schemas_are_found_through_references_and_items() {
        let root = json!({
            "$defs": {"line": {"properties": {"sku": {"type": "string", "maxLength": 8}}}},
            "properties": {"lines": {"type": "array", "items": {"$ref": "#/$defs/line"}}}
        });
        let path = [
            PathToken::Key("lines"),
            PathToken::Index(3),
            PathToken::Key("sku"),
        ];
        let arena = Bump::new();
        let here = schemas_at(&arena, &root, true, &path);
        let first =
            |schemas: &[&Value], keyword| schemas.iter().find_map(|s| s.get(keyword)).cloned();
        assert_eq!(first(&here, "maxLength"), Some(json!(8)));
        // The parent is the line the `$ref` names, not the array's items.
        let parent = schemas_at(&arena, &root, true, &path[..2]);
        assert_eq!(parent.len(), 2);
        assert!(first(&parent, "properties").is_some_and(|p| p.get("sku").is_some()));
        let here = schemas_at(&arena, &root, true, &[]);
        assert!(here.len() == 1 && std::ptr::eq(here[0], &root));
        // Past a location no schema reaches, the set stays empty.
        for path in [
            &[PathToken::Key("x")][..],
            &[PathToken::Key("x"), PathToken::Key("y")],
        ] {
            assert!(schemas_at(&arena, &root, true, path).is_empty(), "{path:?}");
        }
    }

    #[test]
    fn a_schema_that_applies_none_in_place_gives_the_same_schemas_without_the_search() {
        let root = json!({
            "type": "object",
            "properties": {
                "lines": {"type": "array", "prefixItems": [{"type": "integer"}],
                    "items": {"properties": {"sku": {"maxLength": 8}}, "additionalProperties": false}},
                "filters": {"type": "object", "additionalProperties": {"enum": ["a", "b"]}},
                "flag": true
            }
        });
        let arena = Bump::new();
        for path in [
            &[][..],
            &[PathToken::Key("lines")],
            &[PathToken::Key("lines"), PathToken::Index(0)],
            &[
                PathToken::Key("lines"),
                PathToken::Index(3),
                PathToken::Key("sku"),
            ],
            &[PathToken::Key("filters"), PathToken::Key("any")],
            &[PathToken::Key("flag"), PathToken::Key("deeper")],
            &[PathToken::Key("absent"), PathToken::Index(1)],
        ] {
            let searched = schemas_at(&arena, &root, true, path);
            let plain = schemas_at(&arena, &root, false, path);
            assert_eq!(searched.len(), plain.len(), "{path:?}");
            assert!(
                searched
                    .iter()
                    .zip(&plain)
                    .all(|(a, b)| std::ptr::eq(*a, *b)),
                "{path:?}"
            );
        }
    }
}
