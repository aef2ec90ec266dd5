//! Stage 8, the value gate (ARCHITECTURE.md, "The value gate"): a `tools/call`'s arguments
//! against the called tool's input root, compiled at registration.
//!
//! The verdict is one `is_valid` over the whole closed root. Only a refused
//! call is explained, in three gates: the arguments' own missing required
//! properties first, then unknown keys, then values (a `required` inside a
//! property's schema among them); the answer lists every offending path of
//! the first gate that has any, within the bounds of ARCHITECTURE.md, "Distilled errors", in the
//! tool dialect (a result with `isError: true`).

pub mod hints;
pub mod params;

use std::cell::RefCell;

use serde_json::Value;

use crate::catalog::Tool;
use crate::distill::{
    Collector, Distilled, ECHO_BOUND, Keyword, OwnedTok, cut_at_echo_bound, missing_property,
};
use crate::parse::{NodeKind, ParseLimits, Parser, TapeNode};
use crate::reject::codes::tool_error_code;
use crate::reject::dialect::{Detail, MAX_HINTS, ToolError};
use hints::{HintInput, schemas_at};

/// The gates a refused call's problems are sorted into, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Gate {
    /// Properties the call must give and did not.
    Required,
    /// Keys the tool's closed schema does not name.
    UnknownKeys,
    /// Values of the wrong type, format, range or shape.
    Values,
}

impl Gate {
    /// The gate of a problem found at a location `depth` tokens under the
    /// arguments. Only the arguments' own properties are the required
    /// gate's: a `required` inside a property's schema is part of the value
    /// it constrains, answered with the other value problems.
    fn of(keyword: Keyword, depth: usize) -> Gate {
        match keyword {
            Keyword::Required | Keyword::DependentRequired if depth == 0 => Gate::Required,
            Keyword::AdditionalProperties | Keyword::UnevaluatedProperties => Gate::UnknownKeys,
            _ => Gate::Values,
        }
    }
}

/// The collector class of a problem: its gate's place in the order.
fn gate_class(keyword: Keyword, depth: usize) -> usize {
    Gate::of(keyword, depth) as usize
}

const GATES: [Gate; 3] = [Gate::Required, Gate::UnknownKeys, Gate::Values];

/// Explains why `arguments` (absent: `{}`) fail the tool's root, keeping
/// the problems of the first gate that has any. One walk sorts every
/// problem into its gate.
pub fn explain(tool: &Tool, arguments: Option<TapeNode<'_>>) -> (Distilled, Gate) {
    explain_counted(tool, arguments).0
}

/// `explain`, with what its walk cost (for tests that hold the cost).
pub fn explain_counted(
    tool: &Tool,
    arguments: Option<TapeNode<'_>>,
) -> ((Distilled, Gate), ExplainCost) {
    match arguments {
        Some(arguments) => explain_gates(tool, arguments),
        None => {
            let mut parser = Parser::default();
            match parser.parse(b"{}", ParseLimits { max_depth: 1 }) {
                Ok(empty) => explain_gates(tool, empty.root()),
                Err(_) => (
                    (Distilled::unexplained(false), Gate::Values),
                    ExplainCost::default(),
                ),
            }
        }
    }
}

/// What explaining one refusal cost, in countable units.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ExplainCost {
    /// Walks over the arguments.
    pub walks: usize,
    /// Problems the (last) walk reported, of every gate.
    pub problems: usize,
    /// Problems whose text was rendered (the rest were only counted).
    pub rendered: usize,
}

thread_local! {
    /// Kept with its capacity from one refusal to the next.
    static COLLECTOR: RefCell<Collector> = RefCell::new(Collector::with_classes(gate_class, GATES.len()));
}

fn explain_gates(tool: &Tool, instance: TapeNode<'_>) -> ((Distilled, Gate), ExplainCost) {
    COLLECTOR.with(|collector| match collector.try_borrow_mut() {
        Ok(mut collector) => explain_into(tool, instance, &mut collector),
        // Nested (never in practice): a collector of its own.
        Err(_) => explain_into(
            tool,
            instance,
            &mut Collector::with_classes(gate_class, GATES.len()),
        ),
    })
}

fn explain_into(
    tool: &Tool,
    instance: TapeNode<'_>,
    collector: &mut Collector,
) -> ((Distilled, Gate), ExplainCost) {
    tool.explainer.explain(instance, collector);
    let cost = ExplainCost {
        walks: collector.walks(),
        problems: collector.emitted(),
        rendered: collector.rendered(),
    };
    match collector.finish_first_class() {
        Some((mut distilled, class)) if distilled.total > 0 => {
            let gate = GATES[class];
            if gate == Gate::Required {
                // Each missing property is reported at its own location.
                distilled.total = distilled.total.max(distilled.problem_count);
            }
            ((distilled, gate), cost)
        }
        _ => ((Distilled::unexplained(false), Gate::Values), cost),
    }
}

/// The envelope for a refused call.
pub fn tool_error<'t>(
    tool: &'t Tool,
    distilled: &Distilled,
    arguments: Option<TapeNode<'_>>,
) -> ToolError<'t> {
    let mut details = Vec::new();
    let mut hints: Vec<String> = Vec::new();
    for location in &distilled.locations {
        for problem in &location.problems {
            // A missing property is reported where it is missing.
            let mut tokens = location.path.clone();
            let mut received_type = location.received_type;
            if let Some(name) = missing_property(problem) {
                tokens.push(OwnedTok::Key(name.into()));
                received_type = "missing";
            }
            let path = dotted(&tokens);
            let code =
                tool_error_code(contract_keyword(problem.via.unwrap_or(problem.keyword))).code;
            if problem.keyword != Keyword::Other && hints.len() < MAX_HINTS {
                let here = schemas_at(&tool.schema, &tokens);
                let parent = match tokens.split_last() {
                    Some((_, parent)) => schemas_at(&tool.schema, parent),
                    None => here.clone(),
                };
                let hint = hints::hint(&HintInput {
                    keyword: problem.keyword,
                    path: &path,
                    tokens: &tokens,
                    parent: &parent,
                    here: &here,
                    value: arguments.and_then(|a| value_at(a, &tokens)),
                    parent_value: arguments
                        .and_then(|a| value_at(a, &tokens[..tokens.len().saturating_sub(1)])),
                });
                if !hints.contains(&hint) {
                    hints.push(hint);
                }
            }
            details.push(Detail {
                pointer: pointer(&tokens),
                path,
                issue: problem.text.clone(),
                received_type,
                keyword: problem.keyword.as_str(),
                error_code: code,
            });
        }
    }
    let error_code = details
        .first()
        .map(|d| d.error_code)
        .unwrap_or(tool_error_code("").code);
    ToolError {
        tool: &tool.name,
        summary: summary(&tool.name, distilled, details.first()),
        details,
        total: distilled.total,
        hints,
        examples: &tool.examples,
        error_code,
        normalized: None,
    }
}

/// The keyword the envelope contract names a problem by: the unknown-key
/// closing this gateway adds may be `unevaluatedProperties`, which the
/// contract knows as `additionalProperties`.
fn contract_keyword(keyword: Keyword) -> &'static str {
    match keyword {
        Keyword::UnevaluatedProperties => "additionalProperties",
        Keyword::DependentRequired => "required",
        other => other.as_str(),
    }
}

/// One line: the one problem, or how many and where the first is.
fn summary(tool: &str, distilled: &Distilled, first: Option<&Detail>) -> String {
    let tool = cut_at_echo_bound(tool);
    let Some(first) = first else {
        return format!("Invalid arguments for tool '{tool}'");
    };
    let at = if first.path.is_empty() {
        "arguments"
    } else {
        &first.path
    };
    let problems = distilled.problem_count.max(distilled.total);
    if problems == 1 {
        return format!(
            "Invalid arguments for tool '{tool}': {} at {at}",
            first.issue
        );
    }
    format!(
        "Invalid arguments for tool '{tool}': {problems} problems at {} location{}; first at {at}",
        distilled.total,
        if distilled.total == 1 { "" } else { "s" }
    )
}

/// A location under `arguments` as a dotted path: `filters.region`,
/// `lines[3].sku`, `["odd.key"]`; cut at the echo bound.
pub fn dotted(tokens: &[OwnedTok]) -> String {
    let mut out = String::new();
    for token in tokens {
        if out.len() > ECHO_BOUND {
            break;
        }
        match token {
            OwnedTok::Index(index) => out.push_str(&format!("[{index}]")),
            OwnedTok::Key(key) if is_plain_key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            OwnedTok::Key(key) => {
                let cut = cut_at_echo_bound(key);
                out.push('[');
                out.push_str(&Value::from(&*cut).to_string());
                out.push(']');
            }
        }
    }
    cut_at_echo_bound(&out).into_owned()
}

fn is_plain_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= ECHO_BOUND
        && key
            .chars()
            .all(|c| !c.is_control() && !matches!(c, '.' | '[' | ']' | '"' | ' '))
}

/// A location under `arguments` as an RFC 6901 pointer, cut.
fn pointer(tokens: &[OwnedTok]) -> String {
    let mut out = String::new();
    for token in tokens {
        if out.len() > ECHO_BOUND {
            break;
        }
        out.push('/');
        match token {
            OwnedTok::Index(index) => out.push_str(&index.to_string()),
            OwnedTok::Key(key) => {
                let cut = cut_at_echo_bound(key);
                out.push_str(&cut.replace('~', "~0").replace('/', "~1"));
            }
        }
    }
    cut_at_echo_bound(&out).into_owned()
}

/// The sent value at a location.
fn value_at<'a>(arguments: TapeNode<'a>, tokens: &[OwnedTok]) -> Option<TapeNode<'a>> {
    tokens
        .iter()
        .try_fold(arguments, |node, token| match token {
            OwnedTok::Key(key) if node.kind() == NodeKind::Object => node.get(key),
            OwnedTok::Index(index) if node.kind() == NodeKind::Array => node.element(*index),
            _ => None,
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_dotted_names_with_indices_and_quoted_odd_keys() {
        let tokens = [
            OwnedTok::Key("lines".into()),
            OwnedTok::Index(3),
            OwnedTok::Key("sku".into()),
            OwnedTok::Key("a.b".into()),
        ];
        assert_eq!(dotted(&tokens), "lines[3].sku[\"a.b\"]");
        assert_eq!(pointer(&tokens), "/lines/3/sku/a.b");
        assert_eq!(dotted(&[]), "");
        let long = [OwnedTok::Key("k".repeat(1 << 20).into())];
        assert!(dotted(&long).len() <= ECHO_BOUND + 8);
        assert!(pointer(&long).len() <= ECHO_BOUND + 8);
    }
}
