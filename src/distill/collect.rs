//! The bounded collector: counts every problem and every distinct location,
//! keeps only the first [`MAX_LOCATIONS`] locations in sort order (chosen
//! while walking, without allocating for a location that does not enter
//! them), and renders texts only for those.

use super::distinct::Distinct;
use super::path::{
    OwnedTok, PathToken, Tok, TokView, compare_paths, cut_at_echo_bound, render_pointer,
};
use super::texts::{self, Msg};
use super::{Keyword, MAX_LOCATIONS, MAX_PROBLEMS};

/// Distinct problem texts kept per reported location before further ones
/// are only counted (a location's problems come from a fixed schema, so this
/// is never reached in practice).
const KEPT_PER_LOCATION: usize = 256;

/// A predicate over (location, keyword) that sets [`Distilled::flagged`].
pub type FlagPredicate = fn(&[PathToken<'_>], Keyword) -> bool;

/// Sorts problems by keyword and by the depth of their location (0: the
/// instance itself) into classes, each distilled on its own (the value
/// gate's gates, from one walk); a class past the collector's count is
/// dropped (only noted in [`Collector::seen`]).
pub type KeywordClasses = fn(Keyword, usize) -> usize;

/// Collects the problems an explainer finds, within fixed bounds; reusable.
pub struct Collector {
    flag: Option<FlagPredicate>,
    flagged: bool,
    classes: Option<KeywordClasses>,
    seen: u64,
    emitted: usize,
    parts: Vec<Part>,
    rendered: usize,
    walks: usize,
}

/// What is kept of one class of problems.
#[derive(Default)]
struct Part {
    locations: Distinct,
    problem_count: usize,
    top: Vec<Entry>,
    /// The last report sorted after the last kept location (a full list).
    last_past: bool,
}

struct Entry {
    tokens: Vec<OwnedTok>,
    received_type: &'static str,
    problems: Vec<Problem>,
    /// Distinct problems past [`KEPT_PER_LOCATION`].
    overflow: usize,
}

/// What the collector found, distilled.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Distilled {
    /// The first [`MAX_LOCATIONS`] locations in sort order.
    pub locations: Vec<LocationReport>,
    /// Distinct instance locations with a problem, all of them.
    pub total: usize,
    /// Problems counted: exact (deduplicated) for the reported locations;
    /// for the others, every problem the walk emitted, so a problem found
    /// twice at an unreported location (two branches revisiting it) counts
    /// twice.
    pub problem_count: usize,
    /// Whether any problem, reported or not, satisfied the flag predicate.
    pub flagged: bool,
}

impl Distilled {
    /// What is sent when a walk finds no cause for a refusal (it always
    /// should): one problem at the root, flagged or not.
    pub fn unexplained(flagged: bool) -> Distilled {
        Distilled {
            locations: vec![LocationReport {
                pointer: String::new(),
                received_type: "object",
                problems: vec![Problem::plain(
                    Keyword::Other,
                    "value does not match the schema".to_owned(),
                )],
                path: Vec::new(),
            }],
            total: 1,
            problem_count: 1,
            flagged,
        }
    }
}

/// The problems at one instance location.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LocationReport {
    /// RFC 6901 pointer, `""` for the root, cut at the echo bound.
    pub pointer: String,
    /// The JSON type found there (`integer` for integral numbers).
    pub received_type: &'static str,
    /// Deduplicated, sorted by text, at most [`MAX_PROBLEMS`] then
    /// `and N more`.
    pub problems: Vec<Problem>,
    /// The location's tokens (keys uncut: render them with a bound); empty
    /// for a report not made by a walk.
    pub path: Vec<OwnedTok>,
}

/// One problem: the keyword that refused the value and our text for it.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    pub keyword: Keyword,
    pub text: String,
    /// The outermost combinator (`anyOf`, `oneOf`, an `allOf` of several)
    /// the walk went through to find this problem, if any.
    pub via: Option<Keyword>,
}

impl Problem {
    /// A problem found outside any combinator.
    pub fn plain(keyword: Keyword, text: String) -> Problem {
        Problem {
            keyword,
            text,
            via: None,
        }
    }
}

impl Default for Collector {
    fn default() -> Self {
        Self::new()
    }
}

impl Collector {
    /// A collector that keeps every problem in one class, flags nothing.
    pub fn new() -> Self {
        Collector {
            flag: None,
            flagged: false,
            classes: None,
            seen: 0,
            emitted: 0,
            parts: vec![Part::default()],
            rendered: 0,
            walks: 0,
        }
    }

    /// A collector that sets [`Distilled::flagged`] when any problem
    /// satisfies `predicate`.
    pub fn with_flag(predicate: FlagPredicate) -> Self {
        Collector {
            flag: Some(predicate),
            ..Self::new()
        }
    }

    /// A collector that distills each of `count` classes of problems apart
    /// (see [`Collector::finish_classes`]).
    pub fn with_classes(classes: KeywordClasses, count: usize) -> Self {
        let mut parts = Vec::with_capacity(count);
        parts.resize_with(count, Part::default);
        Collector {
            classes: Some(classes),
            parts,
            ..Self::new()
        }
    }

    /// Problems reported so far, kept or dropped.
    pub fn emitted(&self) -> usize {
        self.emitted
    }

    /// Whether a problem of `keyword` was met, kept or dropped.
    pub fn seen(&self, keyword: Keyword) -> bool {
        self.seen & (1 << keyword as u32) != 0
    }

    /// Forgets everything collected (keeps the flag predicate, the classes
    /// and capacity).
    pub fn clear(&mut self) {
        self.flagged = false;
        self.seen = 0;
        self.emitted = 0;
        for part in &mut self.parts {
            part.locations.clear();
            part.problem_count = 0;
            part.top.clear();
            part.last_past = false;
        }
        self.rendered = 0;
        self.walks = 0;
    }

    /// Notes a walk feeding this collector (see [`Collector::walks`]).
    pub(crate) fn start_walk(&mut self) {
        self.walks += 1;
    }

    /// Walks that fed this collector since it was last cleared: one, or
    /// two where a location may have been reached twice (see
    /// [`Collector::needs_exact_count`]).
    pub fn walks(&self) -> usize {
        self.walks
    }

    /// Whether the walk may have reached a location twice (two branches or
    /// two passes over the same value), so that counting its locations
    /// takes the walk again with [`Collector::restart_exact`].
    pub(crate) fn needs_exact_count(&self) -> bool {
        self.parts.iter().any(|part| part.locations.inexact())
    }

    /// Forgets what was collected, to be fed the same walk again counting
    /// locations exactly (with their identities, memory linear in them).
    pub(crate) fn restart_exact(&mut self) {
        let walks = self.walks;
        self.clear();
        self.walks = walks;
        for part in &mut self.parts {
            part.locations.keep_identities();
        }
    }

    /// Problems emitted so far, all classes together (see
    /// [`Distilled::problem_count`]).
    pub fn problem_count(&self) -> usize {
        self.parts.iter().map(|part| part.problem_count).sum()
    }

    /// Problems whose text was rendered so far: only those at a location
    /// that was among the first [`MAX_LOCATIONS`] of its class when it was
    /// found.
    pub fn rendered(&self) -> usize {
        self.rendered
    }

    /// Records one problem at `path`.
    pub(crate) fn report(
        &mut self,
        path: &[Tok<'_>],
        received_type: &'static str,
        keyword: Keyword,
        via: Option<Keyword>,
        msg: Msg<'_>,
    ) {
        self.seen |= 1 << keyword as u32;
        self.emitted += 1;
        let class = self
            .classes
            .map_or(0, |classify| classify(keyword, path.len()));
        let Some(part) = self.parts.get_mut(class) else {
            return;
        };
        part.problem_count += 1;
        if !self.flagged
            && let Some(predicate) = self.flag
        {
            let tokens: smallvec::SmallVec<[PathToken<'_>; 32]> =
                path.iter().map(TokView::view).collect();
            if predicate(&tokens, keyword) {
                self.flagged = true;
            }
        }
        let noted = part.locations.report(path);

        // Past the last of a full list: the common case of a body full of
        // wrong items, decided without a comparison when the last report
        // was past it and this one sorts after that, else with one.
        if part.top.len() >= MAX_LOCATIONS
            && ((noted.after && part.last_past)
                || compare_paths(path, &part.top[part.top.len() - 1].tokens).is_gt())
        {
            part.last_past = true;
            return;
        }
        part.last_past = false;
        let position = part
            .top
            .partition_point(|entry| compare_paths(&entry.tokens, path).is_lt());
        self.rendered += 1;
        if let Some(entry) = part.top.get_mut(position)
            && compare_paths(&entry.tokens, path).is_eq()
        {
            if !entry.add(keyword, via, &msg) {
                part.problem_count -= 1;
            }
            return;
        }
        if part.top.len() >= MAX_LOCATIONS {
            part.top.pop();
        }
        let mut entry = Entry {
            tokens: path
                .iter()
                .map(|token| OwnedTok::from_view(token.view()))
                .collect(),
            received_type,
            problems: Vec::new(),
            overflow: 0,
        };
        entry.add(keyword, via, &msg);
        part.top.insert(position, entry);
    }

    /// The distilled answer (of the first class); the collector is cleared
    /// for reuse.
    pub fn finish(&mut self) -> Distilled {
        let distilled = self.distill(0);
        self.clear();
        distilled
    }

    /// The distilled answer of each class, in class order; the collector is
    /// cleared for reuse.
    pub fn finish_classes(&mut self) -> Vec<Distilled> {
        let all = (0..self.parts.len())
            .map(|class| self.distill(class))
            .collect();
        self.clear();
        all
    }

    fn distill(&mut self, class: usize) -> Distilled {
        let flagged = self.flagged;
        let part = &mut self.parts[class];
        let locations = part
            .top
            .drain(..)
            .map(|mut entry| {
                entry.problems.sort_by(|a, b| {
                    a.text
                        .cmp(&b.text)
                        .then(a.keyword.as_str().cmp(b.keyword.as_str()))
                });
                let more = entry.problems.len().saturating_sub(MAX_PROBLEMS) + entry.overflow;
                entry.problems.truncate(MAX_PROBLEMS);
                if more > 0 {
                    entry
                        .problems
                        .push(Problem::plain(Keyword::Other, texts::and_more(more)));
                }
                LocationReport {
                    pointer: render_pointer(&entry.tokens),
                    received_type: entry.received_type,
                    problems: entry.problems,
                    path: entry.tokens,
                }
            })
            .collect();
        Distilled {
            locations,
            total: part.locations.count(),
            problem_count: part.problem_count,
            flagged,
        }
    }
}

impl Entry {
    /// Adds a problem; false when its text was already there.
    fn add(&mut self, keyword: Keyword, via: Option<Keyword>, msg: &Msg<'_>) -> bool {
        let text = texts::render(msg);
        if self.problems.iter().any(|p| p.text == text) {
            return false;
        }
        if self.problems.len() >= KEPT_PER_LOCATION {
            self.overflow += 1;
            return true;
        }
        self.problems.push(Problem { keyword, text, via });
        true
    }
}

/// The one-line `message` of an answer: `"<prefix>: <text> at <pointer>"`
/// for a single problem, `"<prefix>: N problems at M locations; first at
/// <pointer>"` otherwise. The root reads as `(root)`.
pub fn summary_line(prefix: &str, d: &Distilled) -> String {
    let Some(first) = d.locations.first() else {
        return prefix.to_owned();
    };
    let pointer = if first.pointer.is_empty() {
        "(root)".to_owned()
    } else {
        cut_at_echo_bound(&first.pointer).into_owned()
    };
    let prefix = cut_at_echo_bound(prefix);
    if d.total == 1 && d.problem_count <= 1 && first.problems.len() == 1 {
        return format!("{prefix}: {} at {pointer}", first.problems[0].text);
    }
    let problems = d.problem_count.max(d.total);
    format!(
        "{prefix}: {problems} problem{} at {} location{}; first at {pointer}",
        if problems == 1 { "" } else { "s" },
        d.total,
        if d.total == 1 { "" } else { "s" },
    )
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn key(k: &str) -> Tok<'_> {
        Tok::Key(Cow::Borrowed(k))
    }

    #[test]
    fn twenty_five_locations_report_ten_and_count_all() {
        let mut collector = Collector::new();
        for i in (0..25).rev() {
            collector.report(
                &[key("a"), Tok::Index(i)],
                "integer",
                Keyword::Type,
                None,
                Msg::Static("x"),
            );
        }
        let d = collector.finish();
        assert_eq!(d.total, 25);
        assert_eq!(d.problem_count, 25);
        let pointers: Vec<_> = d.locations.iter().map(|l| l.pointer.as_str()).collect();
        assert_eq!(
            pointers,
            [
                "/a/0", "/a/1", "/a/2", "/a/3", "/a/4", "/a/5", "/a/6", "/a/7", "/a/8", "/a/9"
            ]
        );
    }

    #[test]
    fn thirty_problems_at_one_location_are_capped_with_and_more() {
        let mut collector = Collector::new();
        let texts: Vec<String> = (0..30).map(|i| format!("problem {i:02}")).collect();
        for text in &texts {
            collector.report(
                &[key("x")],
                "string",
                Keyword::Other,
                None,
                Msg::Schema(text),
            );
            collector.report(
                &[key("x")],
                "string",
                Keyword::Other,
                None,
                Msg::Schema(text),
            );
        }
        let d = collector.finish();
        assert_eq!(d.total, 1);
        assert_eq!(d.problem_count, 30);
        let problems = &d.locations[0].problems;
        assert_eq!(problems.len(), MAX_PROBLEMS + 1);
        assert_eq!(problems[0].text, "problem 00");
        assert_eq!(problems[MAX_PROBLEMS].text, "and 20 more");
    }

    #[test]
    fn the_flag_sees_unreported_problems() {
        fn under_params(path: &[PathToken<'_>], _: Keyword) -> bool {
            matches!(path.first(), Some(PathToken::Key("params")))
        }
        let mut collector = Collector::with_flag(under_params);
        for i in 0..12 {
            collector.report(
                &[key("a"), Tok::Index(i)],
                "null",
                Keyword::Type,
                None,
                Msg::Static("x"),
            );
        }
        collector.report(
            &[key("params")],
            "null",
            Keyword::Type,
            None,
            Msg::Static("x"),
        );
        let d = collector.finish();
        assert!(d.flagged);
        assert!(d.locations.iter().all(|l| l.pointer != "/params"));
        collector.report(&[key("a")], "null", Keyword::Type, None, Msg::Static("x"));
        assert!(!collector.finish().flagged);
    }

    #[test]
    fn summary_names_the_one_problem_or_counts() {
        let mut collector = Collector::new();
        collector.report(
            &[key("params"), key("name")],
            "integer",
            Keyword::Type,
            None,
            Msg::Static("expected string, found integer"),
        );
        let d = collector.finish();
        assert_eq!(
            summary_line("Invalid params", &d),
            "Invalid params: expected string, found integer at /params/name"
        );
        collector.report(
            &[key("params"), key("name")],
            "integer",
            Keyword::Type,
            None,
            Msg::Static("a"),
        );
        collector.report(
            &[key("params"), key("name")],
            "integer",
            Keyword::Type,
            None,
            Msg::Static("b"),
        );
        collector.report(
            &[key("params"), key("x")],
            "integer",
            Keyword::Type,
            None,
            Msg::Static("c"),
        );
        let d = collector.finish();
        assert_eq!(
            summary_line("Invalid params", &d),
            "Invalid params: 3 problems at 2 locations; first at /params/name"
        );
    }
}
