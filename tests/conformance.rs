//! Holds the project's protocol schemas (`priv/`) to the official ones.
//!
//! For each revision and each client-sent root, the verdict of our root and
//! of the official definition (read from `../shared/mcp-spec/`) are compared
//! on seed messages (official examples, messages built from official
//! examples of embedded types, recorded captures, and our own seeds in
//! `tests/conformance/`) and on generated mutations of every seed. A
//! disagreement fails the test unless `tests/conformance/differences.toml`
//! lists it with a reason; a listed difference that no longer occurs fails
//! it too.
//!
//! The official side is reference data (`../shared`, or
//! `MCPGATE_SHARED_DIR`): the comparisons are ignored unless asked for
//! (`cargo test -- --include-ignored`), the checks that need only the
//! project's own files are not.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

mod support;

use jsonschema::json::SerdeJson;
use mcpgate::unstable::distill::{Collector, ExplainOptions, Explainer};
use mcpgate::unstable::gate::dispatch::{Prechecks, Reads, gate_root_schema, what_it_reads};
use mcpgate::unstable::gate::lane::{META_CLIENT_CAPABILITIES, META_PROTOCOL_VERSION};
use mcpgate::unstable::protocol::{
    RootKind, SchemaDocument, compile_root, compile_root_as_written, compile_schema,
    parse_root_key, root_keys, root_schema,
};
use mcpgate::{Lane, Revision};
use serde::Deserialize;
use serde_json::{Value, json};
use support::{official_spec, read_json};

/// Cases each revision must reach, so that a shrinking seed set is noticed.
const MIN_CASES_PER_REVISION: usize = 10_000;
/// Length of the over-long string a string node is replaced with.
const OVERLONG_STRING_LEN: usize = 65_536;
/// Name of the member added to every object.
const UNKNOWN_MEMBER: &str = "mcpgateUnknownMember";
/// The official comparison root for a client's result (legacy lane): a
/// JSON-RPC result response whose `result` is a `ClientResult`.
const OFFICIAL_CLIENT_RESULT_RESPONSE: &str = "mcpgate:ClientResultResponse";

fn read_ndjson(path: &Path) -> Vec<Value> {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
        .lines()
        .filter(|line| !line.trim().is_empty())
        .enumerate()
        .map(|(n, line)| {
            serde_json::from_str(line)
                .unwrap_or_else(|e| panic!("{} line {}: {e}", path.display(), n + 1))
        })
        .collect()
}

// ---------------------------------------------------------------- official side

/// The official definition name for each of our root keys, derived from the
/// official `ClientRequest` / `ClientNotification` unions (a method's
/// definition is the member whose `method` is that constant).
fn official_roots(official: &Value) -> BTreeMap<String, String> {
    let defs = official["$defs"].as_object().unwrap();
    let members = |union: &str| -> Vec<String> {
        let def = &defs[union];
        match def.get("anyOf") {
            Some(Value::Array(refs)) => refs
                .iter()
                .map(|r| {
                    r["$ref"]
                        .as_str()
                        .unwrap()
                        .rsplit('/')
                        .next()
                        .unwrap()
                        .to_owned()
                })
                .collect(),
            _ => vec![union.to_owned()],
        }
    };
    let method_of = |name: &str| {
        defs[name]["properties"]["method"]["const"]
            .as_str()
            .unwrap()
            .to_owned()
    };
    let mut roots = BTreeMap::new();
    for name in members("ClientRequest") {
        roots.insert(RootKind::Request(&method_of(&name)).key(), name);
    }
    for name in members("ClientNotification") {
        roots.insert(RootKind::Notification(&method_of(&name)).key(), name);
    }
    // On the 2025 revisions a client answers server requests over POST.
    if defs["ClientResult"].get("anyOf").is_some() {
        roots.insert(
            RootKind::Result.key(),
            OFFICIAL_CLIENT_RESULT_RESPONSE.to_owned(),
        );
        roots.insert(RootKind::Error.key(), "JSONRPCErrorResponse".to_owned());
    }
    roots
}

fn official_with_client_result_response(mut official: Value) -> Value {
    official["$defs"][OFFICIAL_CLIENT_RESULT_RESPONSE] = json!({
        "allOf": [
            {"$ref": "#/$defs/JSONRPCResultResponse"},
            {"properties": {"result": {"$ref": "#/$defs/ClientResult"}}}
        ]
    });
    official
}

// ---------------------------------------------------------------- seeds

struct Seed {
    name: String,
    message: Value,
}

/// The root a message is validated by, by the naming rule.
fn root_of(message: &Value) -> Option<String> {
    let object = message.as_object()?;
    if let Some(method) = object.get("method").and_then(Value::as_str) {
        return Some(if object.contains_key("id") {
            RootKind::Request(method).key()
        } else {
            RootKind::Notification(method).key()
        });
    }
    if object.contains_key("result") {
        Some(RootKind::Result.key())
    } else if object.contains_key("error") {
        Some(RootKind::Error.key())
    } else {
        None
    }
}

fn example_files(examples: &Path, type_name: &str) -> Vec<(String, Value)> {
    let dir = examples.join(type_name);
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return Vec::new();
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    files
        .into_iter()
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .map(|p| {
            let name = format!("{type_name}/{}", p.file_name().unwrap().to_string_lossy());
            (name, read_json(&p))
        })
        .collect()
}

fn meta_2026(capabilities: Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": "2026-07-28",
        "io.modelcontextprotocol/clientCapabilities": capabilities
    })
}

/// Official examples: every client-sent message, plus messages that carry an
/// official example of an embedded type where a client sends that type.
fn official_example_seeds(examples: &Path, official_roots: &BTreeMap<String, String>) -> Vec<Seed> {
    let mut seeds = Vec::new();
    if !examples.is_dir() {
        return seeds;
    }
    let message_types: BTreeSet<&String> = official_roots.values().collect();
    for type_name in message_types {
        for (name, message) in example_files(examples, type_name) {
            seeds.push(Seed { name, message });
        }
    }
    let call = |id: &str, params: Value| json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params});
    for (name, params) in example_files(examples, "CallToolRequestParams") {
        seeds.push(Seed {
            name,
            message: call("p", params),
        });
    }
    for (name, capabilities) in example_files(examples, "ClientCapabilities") {
        let message = json!({"jsonrpc": "2.0", "id": "caps", "method": "tools/list",
            "params": {"_meta": meta_2026(capabilities)}});
        seeds.push(Seed { name, message });
    }
    for (name, responses) in example_files(examples, "InputResponses") {
        let params =
            json!({"_meta": meta_2026(json!({})), "name": "t", "inputResponses": responses});
        seeds.push(Seed {
            name,
            message: call("ir", params),
        });
    }
    for type_name in ["CreateMessageResult", "ElicitResult", "ListRootsResult"] {
        for (name, response) in example_files(examples, type_name) {
            let params = json!({"_meta": meta_2026(json!({})), "name": "t",
                "inputResponses": {"answer": response}});
            seeds.push(Seed {
                name,
                message: call("ir", params),
            });
        }
    }
    for (name, implementation) in example_files(examples, "Implementation") {
        let mut meta = meta_2026(json!({}));
        meta["io.modelcontextprotocol/clientInfo"] = implementation;
        let message = json!({"jsonrpc": "2.0", "id": "info", "method": "tools/list", "params": {"_meta": meta}});
        seeds.push(Seed { name, message });
    }
    seeds
}

/// The 2026-07-28 examples of types a 2025 client sends too (sampling,
/// elicitation and roots results, capabilities, tool-call params), placed
/// where a 2025-11-25 client sends them. They need not be valid there: the
/// verdicts are compared either way.
fn legacy_seeds_from_modern_examples(examples: &Path) -> Vec<Seed> {
    let mut seeds = Vec::new();
    for type_name in ["CreateMessageResult", "ElicitResult", "ListRootsResult"] {
        for (name, result) in example_files(examples, type_name) {
            let message = json!({"jsonrpc": "2.0", "id": "srv", "result": result});
            seeds.push(Seed { name, message });
        }
    }
    for (name, capabilities) in example_files(examples, "ClientCapabilities") {
        let message = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": "2025-11-25", "capabilities": capabilities,
            "clientInfo": {"name": "c", "version": "1"}}});
        seeds.push(Seed { name, message });
    }
    for (name, mut params) in example_files(examples, "CallToolRequestParams") {
        if let Some(params) = params.as_object_mut() {
            params.remove("_meta");
        }
        let message = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": params});
        seeds.push(Seed { name, message });
    }
    seeds
}

/// Client request bodies recorded in `../shared/captures/`, by the revision
/// their `MCP-Protocol-Version` header names (none: 2025-03-26, which the
/// 2025-11-25 document validates).
fn capture_seeds(captures: &Path, revision: &str) -> Vec<Seed> {
    let mut seeds = Vec::new();
    let Ok(entries) = std::fs::read_dir(captures) else {
        return seeds;
    };
    let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
    files.sort();
    for path in files {
        let text = std::fs::read_to_string(&path).unwrap();
        let name = path.file_name().unwrap().to_string_lossy().into_owned();
        for request in text.split("### REQUEST").skip(1) {
            let request = request.split("### RESPONSE").next().unwrap();
            let Some((head, body)) = request.split_once("\n\n") else {
                continue;
            };
            let header_revision = head
                .lines()
                .find_map(|l| {
                    l.split_once(':')
                        .filter(|(k, _)| k.eq_ignore_ascii_case("mcp-protocol-version"))
                })
                .map(|(_, v)| v.trim().to_owned());
            let belongs = match header_revision.as_deref() {
                Some("2026-07-28") => revision == "2026-07-28",
                _ => revision == "2025-11-25",
            };
            if !belongs {
                continue;
            }
            if let Ok(message @ Value::Object(_)) = serde_json::from_str::<Value>(body.trim()) {
                seeds.push(Seed {
                    name: format!("capture {name}"),
                    message,
                });
            }
        }
    }
    seeds
}

fn own_seeds(revision: &str) -> Vec<Seed> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(format!("tests/conformance/seeds-{revision}.ndjson"));
    read_ndjson(&path)
        .into_iter()
        .enumerate()
        .map(|(n, message)| Seed {
            name: format!("seeds-{revision}.ndjson:{}", n + 1),
            message,
        })
        .collect()
}

// ---------------------------------------------------------------- mutations

/// One wrong-typed stand-in per JSON type; a node is replaced by each whose
/// type differs from its own.
fn wrong_typed_values(original: &Value) -> Vec<(&'static str, Value)> {
    let kind = type_name(original);
    [
        ("null", Value::Null),
        ("boolean", json!(true)),
        ("integer", json!(7)),
        ("number", json!(2.5)),
        ("string", json!("mutant")),
        ("array", json!([])),
        ("object", json!({})),
    ]
    .into_iter()
    .filter(|(name, _)| *name != kind)
    .collect()
}

fn type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(n) if n.is_f64() => "number",
        Value::Number(_) => "integer",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

fn escape_token(token: &str) -> String {
    token.replace('~', "~0").replace('/', "~1")
}

/// Every node's pointer, depth first, the root first.
fn pointers(value: &Value) -> Vec<String> {
    fn walk(value: &Value, here: String, out: &mut Vec<String>) {
        match value {
            Value::Object(map) => {
                out.push(here.clone());
                for (key, child) in map {
                    walk(child, format!("{here}/{}", escape_token(key)), out);
                }
            }
            Value::Array(items) => {
                out.push(here.clone());
                for (index, child) in items.iter().enumerate() {
                    walk(child, format!("{here}/{index}"), out);
                }
            }
            _ => out.push(here),
        }
    }
    let mut out = Vec::new();
    walk(value, String::new(), &mut out);
    out
}

/// Each mutation of `message`, named `op pointer [detail]`.
fn mutations(message: &Value) -> Vec<(String, Value)> {
    let mut out = Vec::new();
    for pointer in pointers(message) {
        let node = message.pointer(&pointer).unwrap();
        for (type_label, replacement) in wrong_typed_values(node) {
            let mut mutant = message.clone();
            *mutant.pointer_mut(&pointer).unwrap() = replacement;
            out.push((format!("retype {pointer:?} {type_label}"), mutant));
        }
        match node {
            Value::Object(map) => {
                for key in map.keys() {
                    let mut mutant = message.clone();
                    mutant
                        .pointer_mut(&pointer)
                        .unwrap()
                        .as_object_mut()
                        .unwrap()
                        .remove(key);
                    out.push((
                        format!("delete {:?}", format!("{pointer}/{}", escape_token(key))),
                        mutant,
                    ));
                }
                let mut mutant = message.clone();
                mutant
                    .pointer_mut(&pointer)
                    .unwrap()
                    .as_object_mut()
                    .unwrap()
                    .insert(UNKNOWN_MEMBER.to_owned(), json!(true));
                out.push((format!("add-member {pointer:?}"), mutant));
            }
            Value::String(_) => {
                for (label, text) in [
                    ("empty", String::new()),
                    ("overlong", "x".repeat(OVERLONG_STRING_LEN)),
                ] {
                    let mut mutant = message.clone();
                    *mutant.pointer_mut(&pointer).unwrap() = Value::String(text);
                    out.push((format!("string {pointer:?} {label}"), mutant));
                }
            }
            _ => {}
        }
    }
    out
}

// ---------------------------------------------------------------- differences

#[derive(Deserialize, Default)]
struct DifferencesFile {
    #[serde(default)]
    difference: Vec<Difference>,
}

#[derive(Deserialize)]
struct Difference {
    revision: String,
    /// The case as the test names it: `root | seed | mutation`.
    case: String,
    reason: String,
}

fn listed_differences() -> Vec<Difference> {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/conformance/differences.toml");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    let file: DifferencesFile =
        toml::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    for d in &file.difference {
        assert!(
            !d.reason.trim().is_empty(),
            "difference {:?} has no reason",
            d.case
        );
    }
    file.difference
}

// ---------------------------------------------------------------- the test

struct Tally {
    cases: usize,
    agreed: usize,
    seeds: usize,
    unlisted: Vec<String>,
    listed_seen: BTreeSet<String>,
    /// Cases where inlining the root's `$ref`s changed our verdict.
    inlining_changed: Vec<String>,
    /// Cases that reach the schema stage of the gate (see
    /// [`reaches_schema_stage`]).
    reaching: usize,
    /// Of those, cases where the root as the gate compiles it (without what
    /// the earlier stages hold) and the root as written disagree.
    pruning_changed: Vec<String>,
    /// Refused cases the gate explains from `params` alone (its prechecks
    /// held, a root that reads `params`).
    explained_within: usize,
    /// Of those, cases where that explanation and the whole message's
    /// differ.
    explained_apart: Vec<String>,
}

/// Whether the gate's stages before the schema let `message` through to
/// root `key` on `lane`, as far as what they hold about it goes (restated
/// here from the gate's rules, so that the two can be held against each
/// other): the method is the root's; a request's id is a string or a
/// 64-bit integer; on the modern lane a request whose `params` is an object
/// has a `_meta` object with a string protocol version and an object of
/// client capabilities.
fn reaches_schema_stage(key: &str, message: &Value, lane: Lane) -> bool {
    let (method, request) = match parse_root_key(key) {
        Some(RootKind::Request(method)) => (method, true),
        Some(RootKind::Notification(method)) => (method, false),
        _ => return message.is_object(),
    };
    let Some(object) = message.as_object() else {
        return false;
    };
    if object.get("method").and_then(Value::as_str) != Some(method) {
        return false;
    }
    let id = object.get("id");
    if !request {
        return id.is_none();
    }
    if !id.is_some_and(|id| id.is_string() || id.is_i64() || id.is_u64()) {
        return false;
    }
    match object.get("params").filter(|params| params.is_object()) {
        Some(params) if lane == Lane::Modern => {
            let meta = &params["_meta"];
            meta.is_object()
                && meta[META_PROTOCOL_VERSION].is_string()
                && meta[META_CLIENT_CAPABILITIES].is_object()
        }
        _ => true,
    }
}

/// Whether `message` holds what the gate checks itself before root
/// `key`'s verdict (restated from the gate's rules, like
/// [`reaches_schema_stage`]): `jsonrpc` is `"2.0"`; `params` holds the
/// member `Mcp-Name` mirrors (`name`, or `uri` for `resources/read`) as a
/// string; `params` is present; `params`, where present, is an object. Each
/// only where the gate's root left that fact out.
fn prechecks_hold(prechecks: Prechecks, key: &str, message: &Value) -> bool {
    let named = match parse_root_key(key) {
        Some(RootKind::Request("tools/call" | "prompts/get")) => Some("name"),
        Some(RootKind::Request("resources/read")) => Some("uri"),
        _ => None,
    };
    (!prechecks.jsonrpc || message["jsonrpc"] == "2.0")
        && (!prechecks.named || named.is_some_and(|member| message["params"][member].is_string()))
        && (!prechecks.params || message.get("params").is_some())
        && (!prechecks.params_object || message.get("params").is_none_or(Value::is_object))
}

/// `specs`: the official `mcp-spec` folder (its parent holds `captures/`).
fn compare_revision(
    specs: &Path,
    document: SchemaDocument,
    ours: &Value,
    differences: &[Difference],
) -> Tally {
    let revision = document.revision().as_str();
    let shared = specs.parent().unwrap();
    let spec = specs.join(revision);
    let official = official_with_client_result_response(read_json(&spec.join("schema.json")));
    let official_roots = official_roots(&official);
    let our_keys: BTreeSet<String> = root_keys(ours).into_iter().collect();
    let official_keys: BTreeSet<String> = official_roots.keys().cloned().collect();
    assert_eq!(
        our_keys, official_keys,
        "{revision}: our roots and the official client-sent messages differ"
    );

    let lane = document.revision().lane();
    let mut validators = BTreeMap::new();
    for (key, official_name) in &official_roots {
        assert!(parse_root_key(key).is_some());
        // Ours with its $refs inlined, as written, and as the gate compiles
        // it (inlined, without what the stages before the schema hold).
        let our_root = compile_root(ours, key).unwrap();
        let our_root_as_written = compile_root_as_written(ours, key).unwrap();
        let gate_root = gate_root_schema(ours, key, lane).unwrap();
        let prechecks = gate_root.prechecks;
        let (schema, reads) = what_it_reads(gate_root.schema);
        let gate_root = (
            compile_schema::<SerdeJson>(Some(schema), key).unwrap(),
            prechecks,
            reads,
        );
        let official_root = compile_root_as_written(&official, official_name).unwrap();
        let explainer = Explainer::<SerdeJson>::new(
            &root_schema(ours, key).unwrap(),
            ExplainOptions {
                assert_formats: false,
            },
        )
        .unwrap();
        validators.insert(
            key.clone(),
            (
                our_root,
                our_root_as_written,
                gate_root,
                official_root,
                explainer,
            ),
        );
    }

    let mut seeds = official_example_seeds(&spec.join("examples"), &official_roots);
    if document == SchemaDocument::Mcp2025_11_25 {
        seeds.extend(legacy_seeds_from_modern_examples(
            &specs.join("2026-07-28/examples"),
        ));
    }
    seeds.extend(capture_seeds(&shared.join("captures"), revision));
    seeds.extend(own_seeds(revision));

    let listed: BTreeSet<&str> = differences
        .iter()
        .filter(|d| d.revision == revision)
        .map(|d| d.case.as_str())
        .collect();
    let mut tally = Tally {
        cases: 0,
        agreed: 0,
        seeds: 0,
        unlisted: Vec::new(),
        listed_seen: BTreeSet::new(),
        inlining_changed: Vec::new(),
        reaching: 0,
        pruning_changed: Vec::new(),
        explained_within: 0,
        explained_apart: Vec::new(),
    };
    let mut roots_seeded = BTreeSet::new();
    for seed in &seeds {
        let Some(key) = root_of(&seed.message) else {
            continue;
        };
        let Some((our_root, our_root_as_written, gate_root, official_root, explainer)) =
            validators.get(&key)
        else {
            // A capture of a method this revision's client never sends.
            assert!(
                seed.name.starts_with("capture "),
                "{revision}: seed {} has no root {key}",
                seed.name
            );
            continue;
        };
        tally.seeds += 1;
        roots_seeded.insert(key.clone());
        let unmutated = std::iter::once(("as-is".to_owned(), seed.message.clone()));
        for (mutation, message) in unmutated.chain(mutations(&seed.message)) {
            tally.cases += 1;
            let ours = our_root.is_valid(&message);
            let as_written = our_root_as_written.is_valid(&message);
            if ours != as_written {
                tally
                    .inlining_changed
                    .push(format!("{key} | {} | {mutation}", seed.name));
            }
            if reaches_schema_stage(&key, &message, lane) {
                tally.reaching += 1;
                let (gate_root, prechecks, reads) = gate_root;
                let read = match reads {
                    Reads::Message => Some(&message),
                    Reads::Params => message.get("params"),
                };
                let held = prechecks_hold(*prechecks, &key, &message);
                let gate_verdict = held && read.is_none_or(|read| gate_root.is_valid(read));
                if gate_verdict != as_written {
                    tally
                        .pruning_changed
                        .push(format!("{key} | {} | {mutation}", seed.name));
                }
                // A refusal the gate explains from `params` alone must read
                // as the whole message's explanation.
                if let (false, true, Reads::Params, Some(params)) =
                    (gate_verdict, held, reads, message.get("params"))
                {
                    tally.explained_within += 1;
                    let mut collector = Collector::new();
                    explainer.explain(&message, &mut collector);
                    let whole = collector.finish();
                    assert!(explainer.explain_member("params", params, &mut collector));
                    let within = collector.finish();
                    if within != whole {
                        tally.explained_apart.push(format!(
                            "{key} | {} | {mutation}: {within:?} against {whole:?}",
                            seed.name
                        ));
                    }
                }
            }
            let theirs = official_root.is_valid(&message);
            if ours == theirs {
                tally.agreed += 1;
                continue;
            }
            let case = format!("{key} | {} | {mutation}", seed.name);
            if listed.contains(case.as_str()) {
                tally.listed_seen.insert(case);
            } else {
                tally
                    .unlisted
                    .push(format!("{case}: ours {ours}, official {theirs}"));
            }
        }
    }
    let unseeded: Vec<&String> = official_keys.difference(&roots_seeded).collect();
    assert!(
        unseeded.is_empty(),
        "{revision}: roots without a seed: {unseeded:?}"
    );
    let stale: Vec<&&str> = listed
        .iter()
        .filter(|c| !tally.listed_seen.contains(**c))
        .collect();
    assert!(
        stale.is_empty(),
        "{revision}: listed differences that no longer occur: {stale:?}"
    );
    tally
}

#[test]
fn the_listed_differences_parse_and_each_gives_a_reason() {
    // Our own file, read without the official side too.
    listed_differences();
}

#[test]
#[ignore = "needs ../shared (official MCP schemas)"]
fn priv_roots_give_the_official_verdicts_on_examples_and_mutations() {
    let differences = listed_differences();
    let specs = official_spec();
    let mut failures = Vec::new();
    for document in SchemaDocument::ALL {
        let revision = document.revision();
        let tally = compare_revision(&specs, document, &document.parse(), &differences);
        println!(
            "conformance {revision}: {} seeds, {} cases, {} agreed, {} listed differences, {} unlisted disagreements, {} reaching the schema stage, {} refusals explained from params alone",
            tally.seeds,
            tally.cases,
            tally.agreed,
            tally.listed_seen.len(),
            tally.unlisted.len(),
            tally.reaching,
            tally.explained_within
        );
        // Most cases are mutations the earlier stages pass; the gate's roots
        // must be held to the ones as written on many of them.
        assert!(
            tally.reaching * 2 >= tally.cases,
            "{revision}: only {} of {} cases reach the schema stage",
            tally.reaching,
            tally.cases
        );
        assert!(
            tally.cases >= MIN_CASES_PER_REVISION,
            "{revision}: only {} cases (at least {MIN_CASES_PER_REVISION} expected)",
            tally.cases
        );
        failures.extend(
            tally
                .unlisted
                .into_iter()
                .map(|d| format!("{revision}: {d}")),
        );
        failures.extend(
            tally
                .inlining_changed
                .into_iter()
                .map(|d| format!("{revision}: inlining the $refs changed the verdict: {d}")),
        );
        failures.extend(tally.pruning_changed.into_iter().map(|d| {
            format!("{revision}: leaving out what the earlier stages hold changed the verdict: {d}")
        }));
        // Many refusals are explained from `params` alone on the modern
        // lane, where every request root reads it.
        if revision == Revision::V2026_07_28 {
            assert!(
                tally.explained_within >= 100,
                "{revision}: only {} refusals explained from params alone",
                tally.explained_within
            );
        }
        failures.extend(
            tally
                .explained_apart
                .into_iter()
                .map(|d| format!("{revision}: params alone explained a refusal differently: {d}")),
        );
    }
    if !failures.is_empty() {
        let shown: Vec<&String> = failures.iter().take(40).collect();
        panic!(
            "{} unlisted disagreements, first ones:\n{}",
            failures.len(),
            shown
                .iter()
                .map(|s| s.as_str())
                .collect::<Vec<_>>()
                .join("\n")
        );
    }
}

#[test]
#[ignore = "needs ../shared (official MCP schemas)"]
fn a_root_that_drifts_from_the_official_one_is_caught() {
    // The comparison must be able to fail: drop `name` from what
    // `tools/call` requires and the mutation deleting it must disagree.
    let specs = official_spec();
    let document = SchemaDocument::Mcp2026_07_28;
    let mut tampered = document.parse();
    tampered["$defs"]["CallToolRequestParams"]["required"] = json!(["_meta"]);
    let tally = compare_revision(&specs, document, &tampered, &[]);
    assert!(
        tally
            .unlisted
            .iter()
            .any(|d| d.contains(r#"delete "/params/name""#)
                && d.contains("ours true, official false")),
        "no disagreement found: {:?}",
        tally.unlisted.first()
    );
}

#[test]
fn every_own_seed_is_for_one_of_our_roots() {
    for document in SchemaDocument::ALL {
        let revision = document.revision().as_str();
        let ours: BTreeSet<String> = root_keys(&document.parse()).into_iter().collect();
        for seed in own_seeds(revision) {
            let key = root_of(&seed.message).unwrap();
            assert!(ours.contains(&key), "{}: no root {key} in priv/", seed.name);
        }
    }
}

#[test]
#[ignore = "needs ../shared (official MCP schemas)"]
fn every_own_seed_is_valid_under_the_official_schema() {
    // Our seeds are meant to be valid messages; mutations start from there.
    let specs = official_spec();
    for document in SchemaDocument::ALL {
        let revision = document.revision().as_str();
        let official = official_with_client_result_response(read_json(
            &specs.join(revision).join("schema.json"),
        ));
        let roots = official_roots(&official);
        for seed in own_seeds(revision) {
            let key = root_of(&seed.message).unwrap();
            let root = compile_root_as_written(&official, &roots[&key]).unwrap();
            assert!(
                root.is_valid(&seed.message),
                "{}: not valid under {}",
                seed.name,
                roots[&key]
            );
        }
    }
}

#[test]
fn mutations_cover_every_kind_of_change() {
    let message = json!({"a": "s", "b": [1]});
    let names: Vec<String> = mutations(&message).into_iter().map(|(n, _)| n).collect();
    // Root object: 6 retypes, 2 deletes, 1 added member; "s": 6 retypes + 2
    // strings; the array: 6 retypes; its integer: 6 retypes.
    assert_eq!(names.len(), 6 + 2 + 1 + 6 + 2 + 6 + 6);
    assert!(names.contains(&r#"delete "/a""#.to_owned()));
    assert!(names.contains(&r#"string "/a" overlong"#.to_owned()));
    assert!(names.contains(&r#"retype "/b/0" number"#.to_owned()));
    assert!(!names.contains(&r#"retype "/b/0" integer"#.to_owned()));
}
