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
use std::ops::ControlFlow;

use bumpalo::Bump;
use bumpalo::collections::{String as ArenaString, Vec as ArenaVec};
use serde_json::Value;

use crate::catalog::Tool;
use crate::distill::{
    Collector, Distilled, ECHO_BOUND, FoundProblem, Keyword, MAX_LOCATIONS, PathToken,
    missing_property, report_wide_integer,
};
use crate::parse::{ParseLimits, Parser, TapeNode};
use crate::reject::codes::tool_error_code;
use crate::reject::dialect::{Detail, MAX_HINTS, ToolError};
use crate::reject::out::with_arena;
use hints::HintInput;

/// The gates a refused call's problems are sorted into, in order.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ValueGate {
    /// Properties the call must give and did not.
    Required,
    /// Keys the tool's closed schema does not name.
    UnknownKeys,
    /// Values of the wrong type, format, range or shape.
    Values,
}

impl ValueGate {
    /// The gate of a problem found at a location `depth` tokens under the
    /// arguments. Only the arguments' own properties are the required
    /// gate's: a `required` inside a property's schema is part of the value
    /// it constrains, answered with the other value problems.
    fn of(keyword: Keyword, depth: usize) -> ValueGate {
        match keyword {
            Keyword::Required | Keyword::DependentRequired if depth == 0 => ValueGate::Required,
            Keyword::AdditionalProperties | Keyword::UnevaluatedProperties => {
                ValueGate::UnknownKeys
            }
            _ => ValueGate::Values,
        }
    }
}

/// The collector class of a problem: its gate's place in the order.
fn gate_class(keyword: Keyword, depth: usize) -> usize {
    ValueGate::of(keyword, depth) as usize
}

const GATES: [ValueGate; 3] = [
    ValueGate::Required,
    ValueGate::UnknownKeys,
    ValueGate::Values,
];

/// Explains why `arguments` (absent: `{}`) fail the tool's root, keeping
/// the problems of the first gate that has any (one walk sorts every
/// problem into its gate), with what the walk cost (for tests that hold
/// the cost).
pub fn explain_counted(
    tool: &Tool,
    arguments: Option<TapeNode<'_>>,
) -> ((Distilled, ValueGate), ExplainCost) {
    match arguments {
        Some(arguments) => explain_gates(tool, arguments),
        None => {
            let mut parser = Parser::default();
            match parser.parse(b"{}", ParseLimits { max_depth: 1 }) {
                Ok(empty) => explain_gates(tool, empty.root()),
                Err(_) => (
                    (Distilled::unexplained(false), ValueGate::Values),
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
    /// Parses the `{}` a call without `arguments` is explained as, its
    /// buffers kept: such a refusal allocates no more than another.
    static EMPTY_ARGUMENTS: RefCell<Parser> = RefCell::new(Parser::default());
}

fn explain_gates(tool: &Tool, instance: TapeNode<'_>) -> ((Distilled, ValueGate), ExplainCost) {
    with_collector(|collector| explain_into(tool, instance, collector))
}

/// `f` with this thread's collector, cleared after it (a nested call, never
/// in practice, gets one of its own).
fn with_collector<R>(f: impl FnOnce(&mut Collector) -> R) -> R {
    COLLECTOR.with(|collector| match collector.try_borrow_mut() {
        Ok(mut collector) => {
            let result = f(&mut collector);
            collector.clear();
            result
        }
        Err(_) => f(&mut Collector::with_classes(gate_class, GATES.len())),
    })
}

fn explain_into(
    tool: &Tool,
    instance: TapeNode<'_>,
    collector: &mut Collector,
) -> ((Distilled, ValueGate), ExplainCost) {
    explain(tool, instance, collector);
    let cost = ExplainCost {
        walks: collector.walks(),
        problems: collector.emitted(),
        rendered: collector.rendered(),
    };
    match collector.finish_first_class() {
        Some((mut distilled, class)) if distilled.total > 0 => {
            let gate = GATES[class];
            if gate == ValueGate::Required {
                // Each missing property is reported at its own location.
                distilled.total = distilled.total.max(distilled.problem_count);
            }
            ((distilled, gate), cost)
        }
        _ => ((Distilled::unexplained(false), ValueGate::Values), cost),
    }
}

/// The walk of refused arguments; where it found nothing, the verdict
/// refused them for an integer beyond 64 bits alone (see
/// `Explainer::compares_wide_integers`), which is reported where it is.
fn explain(tool: &Tool, instance: TapeNode<'_>, collector: &mut Collector) {
    tool.explainer.explain(instance, collector);
    if collector.emitted() == 0 && tool.explainer.compares_wide_integers() {
        report_wide_integer(instance, collector);
    }
}

/// Explains why `arguments` (absent: `{}`) fail the tool's root, as
/// [`explain_counted`] does; then `first` is told whether normalization
/// may change them ([`may_normalize`]) and either answers in its place
/// or lets the refusal go on, and `send` is handed the envelope: read
/// from this thread's collector in place, its texts built in this
/// thread's arena, so that a refusal costs no allocation of its own once
/// they have grown.
pub fn refuse<T, R>(
    tool: &Tool,
    arguments: Option<TapeNode<'_>>,
    first: impl FnOnce(bool) -> ControlFlow<R, T>,
    send: impl FnOnce(T, &ToolError<'_>) -> R,
) -> R {
    if let Some(instance) = arguments {
        return with_collector(|collector| {
            refuse_from(tool, instance, arguments, collector, first, send)
        });
    }
    EMPTY_ARGUMENTS.with(|parser| match parser.try_borrow_mut() {
        Ok(mut parser) => refuse_empty(tool, &mut parser, first, send),
        Err(_) => refuse_empty(tool, &mut Parser::default(), first, send),
    })
}

/// Keywords that refuse what a value holds, never how a key is written
/// or a scalar sent for an array: such problems at the arguments' own
/// members leave nothing for normalization to do.
const CONTENT_KEYWORDS: [Keyword; 16] = [
    Keyword::Required,
    Keyword::DependentRequired,
    Keyword::Enum,
    Keyword::Const,
    Keyword::Minimum,
    Keyword::Maximum,
    Keyword::ExclusiveMinimum,
    Keyword::ExclusiveMaximum,
    Keyword::MultipleOf,
    Keyword::MinLength,
    Keyword::MaxLength,
    Keyword::Pattern,
    Keyword::Format,
    Keyword::MinItems,
    Keyword::MaxItems,
    Keyword::UniqueItems,
];

/// Whether normalization may change refused arguments, read from their
/// explanation: a closed root refuses a key it does not name, at the
/// member, and a scalar sent for an array, as a `type` that expected one;
/// where neither was met, and the walk was not cut short, every key is
/// named as the schema names it and no value is to be wrapped. An open
/// root says nothing of its keys.
fn may_normalize(tool: &Tool, collector: &Collector) -> bool {
    !tool.keys.closed || collector.seen(Keyword::Other) || collector.shallow(&CONTENT_KEYWORDS)
}

/// [`refuse`] for a call without `arguments`, explained as `{}`.
fn refuse_empty<T, R>(
    tool: &Tool,
    parser: &mut Parser,
    first: impl FnOnce(bool) -> ControlFlow<R, T>,
    send: impl FnOnce(T, &ToolError<'_>) -> R,
) -> R {
    match parser.parse(b"{}", ParseLimits { max_depth: 1 }) {
        Ok(empty) => with_collector(|collector| {
            refuse_from(tool, empty.root(), None, collector, first, send)
        }),
        Err(_) => {
            let told = match first(true) {
                ControlFlow::Break(answered) => return answered,
                ControlFlow::Continue(told) => told,
            };
            with_arena(|arena| {
                let mut envelope = Envelope::new(arena, tool, None);
                envelope.unexplained();
                send(told, &envelope.finish(1, 1))
            })
        }
    }
}

fn refuse_from<T, R>(
    tool: &Tool,
    instance: TapeNode<'_>,
    arguments: Option<TapeNode<'_>>,
    collector: &mut Collector,
    first: impl FnOnce(bool) -> ControlFlow<R, T>,
    send: impl FnOnce(T, &ToolError<'_>) -> R,
) -> R {
    explain(tool, instance, collector);
    let told = match first(may_normalize(tool, collector)) {
        ControlFlow::Break(answered) => return answered,
        ControlFlow::Continue(told) => told,
    };
    let class = collector.first_class();
    with_arena(|arena| {
        let mut envelope = Envelope::new(arena, tool, arguments);
        let found = class.map(|class| (collector.found(class), GATES[class]));
        let (total, problem_count) = match found {
            Some((found, gate)) if found.total > 0 => {
                let mut tokens = ArenaVec::with_capacity_in(PATH_TOKENS_ROOM, arena);
                for location in found.locations() {
                    tokens.clear();
                    tokens.extend(location.path());
                    for problem in location.problems() {
                        let at = At {
                            tokens: &tokens,
                            pointer: location.pointer(),
                            received_type: location.received_type(),
                        };
                        envelope.add(&at, problem);
                    }
                }
                let total = if gate == ValueGate::Required {
                    // Each missing property is reported at its own location.
                    found.total.max(found.problem_count)
                } else {
                    found.total
                };
                (total, found.problem_count)
            }
            _ => {
                envelope.unexplained();
                (1, 1)
            }
        };
        send(told, &envelope.finish(total, problem_count))
    })
}

/// Where a problem was found: the location's tokens, its pointer as the
/// collector rendered it, and the type found there.
struct At<'t, 'b> {
    tokens: &'t [PathToken<'b>],
    pointer: &'b str,
    received_type: &'static str,
}

/// The envelope of a refused call, built in an arena one problem after
/// another.
struct Envelope<'b, 't, 'a> {
    arena: &'b Bump,
    tool: &'t Tool,
    arguments: Option<TapeNode<'a>>,
    details: ArenaVec<'b, Detail<'b>>,
    hints: ArenaVec<'b, &'b str>,
}

impl<'b, 't, 'a> Envelope<'b, 't, 'a> {
    fn new(arena: &'b Bump, tool: &'t Tool, arguments: Option<TapeNode<'a>>) -> Self {
        Envelope {
            arena,
            tool,
            arguments,
            // Room for the usual refusal at once: grown push by push, the
            // vectors cost more than what they hold.
            details: ArenaVec::with_capacity_in(MAX_LOCATIONS, arena),
            hints: ArenaVec::with_capacity_in(MAX_HINTS, arena),
        }
    }

    /// What is sent when a walk finds no cause for a refusal (as
    /// [`Distilled::unexplained`]).
    fn unexplained(&mut self) {
        let at = At {
            tokens: &[],
            pointer: "",
            received_type: "object",
        };
        self.add(
            &at,
            FoundProblem {
                keyword: Keyword::Other,
                via: None,
                text: "value does not match the schema",
                node: None,
                case_twin: None,
            },
        );
    }

    /// One problem at `at`: its detail, and its hint while there is room
    /// for one.
    fn add(&mut self, at: &At<'_, 'b>, problem: FoundProblem<'b>) {
        let arena = self.arena;
        let mut tokens = at.tokens;
        let mut received_type = at.received_type;
        // The location's pointer as the collector rendered it, where it
        // was not cut: `pointer_in` would write the same.
        let mut pointer = Some(at.pointer).filter(|pointer| pointer.len() < ECHO_BOUND);
        // A missing property is reported where it is missing.
        if let Some(name) = missing_property(problem.keyword, problem.text) {
            let mut missing = ArenaVec::with_capacity_in(tokens.len() + 1, arena);
            missing.extend_from_slice(tokens);
            missing.push(PathToken::Key(name));
            tokens = missing.into_bump_slice();
            received_type = "missing";
            pointer = None;
        }
        let path = dotted_in(arena, tokens);
        let code = tool_error_code(contract_keyword(problem.via.unwrap_or(problem.keyword))).code;
        if problem.keyword != Keyword::Other && self.hints.len() < MAX_HINTS {
            let arguments = self.arguments;
            let hint = hints::hint(
                arena,
                &HintInput {
                    keyword: problem.keyword,
                    path,
                    tokens,
                    tool: self.tool,
                    arguments,
                    word: self.tool.explainer.schema_word(&problem),
                },
            );
            if !self.hints.contains(&hint) {
                self.hints.push(hint);
            }
        }
        self.details.push(Detail {
            pointer: pointer.unwrap_or_else(|| pointer_in(arena, tokens)),
            path,
            issue: problem.text,
            received_type,
            keyword: problem.keyword.as_str(),
            error_code: code,
        });
    }

    fn finish(self, total: usize, problem_count: usize) -> ToolError<'b>
    where
        't: 'b,
    {
        let details = self.details.into_bump_slice();
        let first = details.first();
        ToolError {
            tool: &self.tool.name,
            summary: summary(self.arena, &self.tool.name, total, problem_count, first),
            details,
            total,
            hints: self.hints.into_bump_slice(),
            examples: &self.tool.examples,
            error_code: first
                .map(|d| d.error_code)
                .unwrap_or(tool_error_code("").code),
            normalized: None,
        }
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
fn summary<'b>(
    arena: &'b Bump,
    tool: &str,
    total: usize,
    problem_count: usize,
    first: Option<&Detail<'_>>,
) -> &'b str {
    let tool = hints::cut(arena, tool);
    // Pieces pushed into room sized for them, not `format!`: the summary
    // is written for every refusal.
    let mut text = ArenaString::with_capacity_in(128 + tool.len(), arena);
    text.push_str("Invalid arguments for tool '");
    text.push_str(tool);
    text.push('\'');
    let Some(first) = first else {
        return text.into_bump_str();
    };
    text.push_str(": ");
    let at = if first.path.is_empty() {
        "arguments"
    } else {
        first.path
    };
    let problems = problem_count.max(total);
    if problems == 1 {
        text.push_str(first.issue);
    } else {
        text.push_str(itoa::Buffer::new().format(problems));
        text.push_str(" problems at ");
        text.push_str(itoa::Buffer::new().format(total));
        text.push_str(if total == 1 {
            " location"
        } else {
            " locations"
        });
        text.push_str("; first");
    }
    text.push_str(" at ");
    text.push_str(at);
    text.into_bump_str()
}

/// A location under `arguments` as a dotted path: `filters.region`,
/// `lines[3].sku`, `["odd.key"]`; cut at the echo bound.
fn dotted_in<'b>(arena: &'b Bump, tokens: &[PathToken<'_>]) -> &'b str {
    let mut out = ArenaString::with_capacity_in(PATH_ROOM, arena);
    for token in tokens {
        if out.len() > ECHO_BOUND {
            break;
        }
        match *token {
            PathToken::Index(index) => {
                out.push('[');
                out.push_str(itoa::Buffer::new().format(index));
                out.push(']');
            }
            PathToken::Key(key) if is_plain_key(key) => {
                if !out.is_empty() {
                    out.push('.');
                }
                out.push_str(key);
            }
            PathToken::Key(key) => {
                let cut = hints::cut(arena, key);
                out.push('[');
                let mark = out.len();
                if serde_json::to_writer(ArenaWriter(&mut out), cut).is_err() {
                    out.truncate(mark);
                    out.push_str(&Value::from(cut).to_string());
                }
                out.push(']');
            }
        }
    }
    hints::cut(arena, out.into_bump_str())
}

fn is_plain_key(key: &str) -> bool {
    let plain = |c: char| !c.is_control() && !matches!(c, '.' | '[' | ']' | '"' | ' ');
    !key.is_empty()
        && key.len() <= ECHO_BOUND
        // An ASCII key (the usual kind) byte by byte, without decoding.
        && if key.is_ascii() {
            key.bytes().all(|byte| plain(char::from(byte)))
        } else {
            key.chars().all(plain)
        }
}

/// Room a path or pointer is built in first: most are short, and the
/// arena gives it back with the refusal.
const PATH_ROOM: usize = 64;

/// Tokens a location's path is read into first (as [`PATH_ROOM`]).
const PATH_TOKENS_ROOM: usize = 8;

/// Lets serde_json write a JSON string into an arena string.
struct ArenaWriter<'o, 'b>(&'o mut ArenaString<'b>);

impl std::io::Write for ArenaWriter<'_, '_> {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        // serde_json writes a string in pieces cut only around the ASCII
        // characters it escapes, so each piece is text on its own.
        let text = std::str::from_utf8(buf).map_err(|_| std::io::ErrorKind::InvalidData)?;
        self.0.push_str(text);
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A location under `arguments` as an RFC 6901 pointer, cut.
fn pointer_in<'b>(arena: &'b Bump, tokens: &[PathToken<'_>]) -> &'b str {
    let mut out = ArenaString::with_capacity_in(PATH_ROOM, arena);
    for token in tokens {
        if out.len() > ECHO_BOUND {
            break;
        }
        out.push('/');
        match *token {
            PathToken::Index(index) => out.push_str(itoa::Buffer::new().format(index)),
            PathToken::Key(key) => {
                let mut rest = hints::cut(arena, key);
                while let Some(at) = rest.find(['~', '/']) {
                    out.push_str(&rest[..at]);
                    out.push_str(if rest.as_bytes()[at] == b'~' {
                        "~0"
                    } else {
                        "~1"
                    });
                    rest = &rest[at + 1..];
                }
                out.push_str(rest);
            }
        }
    }
    hints::cut(arena, out.into_bump_str())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paths_read_as_dotted_names_with_indices_and_quoted_odd_keys() {
        let arena = Bump::new();
        let tokens = [
            PathToken::Key("lines"),
            PathToken::Index(3),
            PathToken::Key("sku"),
            PathToken::Key("a.b"),
        ];
        assert_eq!(dotted_in(&arena, &tokens), "lines[3].sku[\"a.b\"]");
        assert_eq!(pointer_in(&arena, &tokens), "/lines/3/sku/a.b");
        assert_eq!(pointer_in(&arena, &[PathToken::Key("a~/b")]), "/a~0~1b");
        assert_eq!(
            pointer_in(&arena, &[PathToken::Key("~é//"), PathToken::Index(10)]),
            "/~0é~1~1/10"
        );
        assert_eq!(dotted_in(&arena, &[]), "");
        for odd in [
            "a b",
            "q\"uote",
            "tab\there",
            "back\\slash.",
            "é.ü",
            "\u{1}",
        ] {
            let quoted = Value::from(odd).to_string();
            assert_eq!(
                dotted_in(&arena, &[PathToken::Key(odd)]),
                format!("[{quoted}]")
            );
        }
        let long = "k".repeat(1 << 20);
        let long = [PathToken::Key(&long)];
        assert!(dotted_in(&arena, &long).len() <= ECHO_BOUND + 8);
        assert!(pointer_in(&arena, &long).len() <= ECHO_BOUND + 8);
    }
}
