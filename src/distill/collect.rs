//! The bounded collector: counts every problem and every distinct location,
//! keeps only the first [`MAX_LOCATIONS`] locations in sort order (chosen
//! while walking, without allocating for a location that does not enter
//! them), and renders texts only for those.

use std::fmt;

use super::distinct::Distinct;
use super::keywords::NodeId;
use super::keywords::type_::TypeMask;
use super::path::{
    OwnedTok, PathToken, Tok, TokView, compare_tokens, cut_at_echo_bound, render_pointer_into,
};
use super::texts::{self, Msg};
use super::{Keyword, MAX_LOCATIONS, MAX_PROBLEMS};

/// Distinct problem texts kept per reported location before further ones
/// are only counted (a location's problems come from a fixed schema, so this
/// is never reached in practice).
const KEPT_PER_LOCATION: usize = 256;

/// A predicate over a problem's location, read as its first token and its
/// depth (0: the instance itself), and its keyword, that sets
/// [`Distilled::flagged`]. (What the gate asks of a location; no list of
/// the path's tokens is built for it.)
pub type FlagPredicate = fn(Option<PathToken<'_>>, usize, Keyword) -> bool;

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
    /// [`Collector::seen`] of the problems at the instance itself or at
    /// one of its members, where a `type` problem counts only when an
    /// array was among the types expected (see [`Collector::shallow`]).
    shallow: u64,
    emitted: usize,
    parts: Vec<Part>,
    /// What the walk said of its path before this report (see
    /// [`Collector::path_kept`]).
    kept: Option<usize>,
    rendered: usize,
    walks: usize,
}

/// What is kept of one class of problems.
#[derive(Default)]
struct Part {
    locations: Distinct,
    /// Tokens of this class's last reported path the walk has kept since
    /// (see [`Collector::path_kept`]); 0 when not known.
    kept: usize,
    /// The length of this class's last reported path (read only after a
    /// report, with `last_past`).
    last_len: usize,
    problem_count: usize,
    /// Every entry this part has held, kept for its capacity: the list and
    /// the spares name them by index, so that a report or a clear moves no
    /// entry (each is several vectors wide).
    entries: Vec<Entry>,
    /// The kept locations' entries, in sort order.
    top: Vec<usize>,
    /// Entries that left the list.
    spare: Vec<usize>,
    /// The last report sorted after the last kept location (a full list).
    last_past: bool,
    /// Something was reported to this class, or its counter was told to
    /// keep identities, since it was last cleared: a class no refusal
    /// reached (most of them) has nothing to clear.
    touched: bool,
}

/// Bytes of names and texts a spare entry may hold: one that held a long
/// member name gives its memory back rather than keep it for the next
/// refusal.
const SPARE_KEEP: usize = 4 * 1024;

impl Part {
    fn recycle(&mut self) {
        while let Some(index) = self.top.pop() {
            self.keep_spare(index);
        }
    }

    fn keep_spare(&mut self, index: usize) {
        let entry = &mut self.entries[index];
        if entry.names.capacity() + entry.texts.capacity() > SPARE_KEEP {
            *entry = Entry::default();
        }
        self.spare.push(index);
    }

    /// The entry of the `position`th kept location.
    fn listed(&self, position: usize) -> &Entry {
        &self.entries[self.top[position]]
    }
}

/// A kept location, its member names and texts in buffers of its own: an
/// entry that leaves the list goes back to the part's spares with its
/// capacity, so a refusal in steady state allocates nothing here.
#[derive(Debug, Default)]
struct Entry {
    tokens: Vec<EntryTok>,
    /// The member names of `tokens`, one after another.
    names: String,
    problems: Vec<Kept>,
    /// The problems' texts, then (once found) the rendered pointer.
    texts: String,
    pointer: (usize, usize),
    received_type: &'static str,
    /// Distinct problems past [`KEPT_PER_LOCATION`].
    overflow: usize,
}

#[derive(Debug, Clone, Copy)]
enum EntryTok {
    /// A member name: its span in [`Entry::names`].
    Key(usize, usize),
    Index(usize),
}

/// A kept problem, its text a span of [`Entry::texts`].
#[derive(Debug, Clone, Copy)]
struct Kept {
    keyword: Keyword,
    via: Option<Keyword>,
    text: (usize, usize),
    /// The schema node that reported it (`None` for `and N more`).
    node: Option<NodeId>,
    /// See [`FoundProblem::case_twin`].
    case_twin: Option<u16>,
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
            shallow: 0,
            emitted: 0,
            parts: vec![Part::default()],
            kept: None,
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
    /// (see [`Collector::finish_first_class`]).
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

    /// Whether a problem was met at the instance itself or at one of its
    /// members (not deeper) of a keyword outside `excused`; a `type`
    /// problem there counts only when an array was among the types
    /// expected (a scalar sent for an array, or a value of no type that
    /// is one). What a member's value is refused for inside it is not
    /// counted.
    pub fn shallow(&self, excused: &[Keyword]) -> bool {
        let excused = excused
            .iter()
            .fold(0u64, |mask, keyword| mask | 1 << *keyword as u32);
        self.shallow & !excused != 0
    }

    /// Forgets everything collected (keeps the flag predicate, the classes
    /// and capacity).
    pub fn clear(&mut self) {
        self.flagged = false;
        self.seen = 0;
        self.shallow = 0;
        self.emitted = 0;
        for part in &mut self.parts {
            part.kept = 0;
            if !std::mem::take(&mut part.touched) {
                continue;
            }
            part.locations.clear();
            part.problem_count = 0;
            part.recycle();
            part.last_past = false;
            part.last_len = 0;
        }
        self.kept = None;
        self.rendered = 0;
        self.walks = 0;
    }

    /// Says, before a report, that the walk's path kept its first `len`
    /// tokens since the last report: they are compared no more.
    pub(crate) fn path_kept(&mut self, len: usize) {
        self.kept = Some(len);
    }

    /// Notes a walk feeding this collector (see [`Collector::walks`]).
    pub(crate) fn start_walk(&mut self) {
        self.walks += 1;
    }

    /// Walks that fed this collector since it was last cleared: one, or
    /// two where a location may have been reached twice (see
    /// `Collector::needs_exact_count`).
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
            part.touched = true;
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
        node: NodeId,
    ) {
        self.seen |= 1 << keyword as u32;
        if path.len() <= 1
            && !matches!(msg, Msg::Type { expected, .. } if expected.0 & TypeMask::ARRAY == 0)
        {
            self.shallow |= 1 << keyword as u32;
        }
        self.emitted += 1;
        let kept = self.kept.take().unwrap_or(0);
        for part in &mut self.parts {
            part.kept = part.kept.min(kept);
        }
        let class = self
            .classes
            .map_or(0, |classify| classify(keyword, path.len()));
        let Some(part) = self.parts.get_mut(class) else {
            return;
        };
        part.problem_count += 1;
        part.touched = true;
        if !self.flagged
            && let Some(predicate) = self.flag
            && predicate(path.first().map(TokView::view), path.len(), keyword)
        {
            self.flagged = true;
        }
        let depth = path.len();
        if part.last_past && part.kept == depth && part.last_len == depth {
            // The very location of this class's last report (the walk kept
            // its whole path), which sorted past a full list: so does this
            // problem, and the location is counted already.
            return;
        }
        let noted = part.locations.report_kept(path, part.kept);
        part.kept = depth;
        part.last_len = depth;

        // Past the last of a full list: the common case of a body full of
        // wrong items, decided without a comparison when the last report
        // was past it and this one sorts after that, else with one.
        let here = || path.iter().map(TokView::view);
        if part.top.len() >= MAX_LOCATIONS
            && ((noted.after && part.last_past)
                || compare_tokens(here(), part.listed(part.top.len() - 1).path()).is_gt())
        {
            part.last_past = true;
            return;
        }
        part.last_past = false;
        let entries = &part.entries;
        let position = part
            .top
            .partition_point(|&index| compare_tokens(entries[index].path(), here()).is_lt());
        self.rendered += 1;
        if let Some(&index) = part.top.get(position)
            && compare_tokens(part.entries[index].path(), here()).is_eq()
        {
            if !part.entries[index].add(keyword, via, &msg, node) {
                part.problem_count -= 1;
            }
            return;
        }
        if part.top.len() >= MAX_LOCATIONS
            && let Some(evicted) = part.top.pop()
        {
            part.keep_spare(evicted);
        }
        let index = part.spare.pop().unwrap_or_else(|| {
            part.entries.push(Entry::default());
            part.entries.len() - 1
        });
        let entry = &mut part.entries[index];
        entry.fill(path, received_type);
        entry.add(keyword, via, &msg, node);
        part.top.insert(position, index);
    }

    /// The distilled answer (of the first class); the collector is cleared
    /// for reuse.
    pub fn finish(&mut self) -> Distilled {
        let distilled = self.distill(0);
        self.clear();
        distilled
    }

    /// The distilled answer of the first class, in class order, that found
    /// a problem, with that class; the collector is cleared for reuse.
    pub fn finish_first_class(&mut self) -> Option<(Distilled, usize)> {
        let first = self.first_class().map(|class| (self.distill(class), class));
        self.clear();
        first
    }

    /// The first class, in class order, that found a problem.
    pub fn first_class(&self) -> Option<usize> {
        (0..self.parts.len()).find(|&class| self.parts[class].problem_count > 0)
    }

    /// What class `class` found, read in place (see `Found`): each kept
    /// location's problems sorted and capped, its pointer rendered. Read
    /// it before the collector is cleared.
    pub fn found(&mut self, class: usize) -> Found<'_> {
        let flagged = self.flagged;
        let part = &mut self.parts[class];
        for &index in &part.top {
            part.entries[index].seal();
        }
        Found {
            entries: &part.entries,
            order: &part.top,
            total: part.locations.count(),
            problem_count: part.problem_count,
            flagged,
        }
    }

    fn distill(&mut self, class: usize) -> Distilled {
        let found = self.found(class);
        let locations = found
            .locations()
            .map(|location| location.entry)
            .map(|entry| LocationReport {
                pointer: entry.pointer().to_owned(),
                received_type: entry.received_type,
                problems: entry
                    .problems
                    .iter()
                    .map(|kept| Problem {
                        keyword: kept.keyword,
                        text: entry.text(kept).to_owned(),
                        via: kept.via,
                    })
                    .collect(),
                path: entry.path().map(OwnedTok::from_view).collect(),
            })
            .collect();
        Distilled {
            locations,
            total: found.total,
            problem_count: found.problem_count,
            flagged: found.flagged,
        }
    }
}

/// What a collector found for one class, borrowed from it: what
/// [`Distilled`] holds, without copying a text out.
#[derive(Debug)]
pub struct Found<'c> {
    entries: &'c [Entry],
    /// The kept locations' indices in `entries`, in sort order.
    order: &'c [usize],
    /// As [`Distilled::total`].
    pub total: usize,
    /// As [`Distilled::problem_count`].
    pub problem_count: usize,
    /// As [`Distilled::flagged`].
    pub flagged: bool,
}

/// One location of a [`Found`].
#[derive(Debug, Clone, Copy)]
pub struct FoundLocation<'c> {
    entry: &'c Entry,
}

impl<'c> Found<'c> {
    /// The kept locations, in sort order.
    pub fn locations(&self) -> impl ExactSizeIterator<Item = FoundLocation<'c>> + 'c {
        let entries = self.entries;
        self.order.iter().map(move |&index| FoundLocation {
            entry: &entries[index],
        })
    }
}

impl<'c> FoundLocation<'c> {
    /// As [`LocationReport::pointer`].
    pub fn pointer(self) -> &'c str {
        self.entry.pointer()
    }

    /// The texts of [`LocationReport::problems`], in order.
    pub fn texts(self) -> impl Iterator<Item = &'c str> + 'c {
        let entry = self.entry;
        entry.problems.iter().map(move |kept| entry.text(kept))
    }

    /// The number of problems [`FoundLocation::texts`] yields.
    pub fn problem_count(self) -> usize {
        self.entry.problems.len()
    }

    /// As [`LocationReport::received_type`].
    pub fn received_type(self) -> &'static str {
        self.entry.received_type
    }

    /// As [`LocationReport::path`], borrowed (keys uncut).
    pub fn path(self) -> impl Iterator<Item = PathToken<'c>> + Clone + 'c {
        self.entry.path()
    }

    /// [`LocationReport::problems`], borrowed, in order.
    pub fn problems(self) -> impl Iterator<Item = FoundProblem<'c>> + 'c {
        let entry = self.entry;
        entry.problems.iter().map(move |kept| FoundProblem {
            keyword: kept.keyword,
            via: kept.via,
            text: entry.text(kept),
            node: kept.node,
            case_twin: kept.case_twin,
        })
    }
}

/// One problem of a [`FoundLocation`], as a [`Problem`] borrowed.
#[derive(Debug, Clone, Copy)]
pub struct FoundProblem<'c> {
    pub keyword: Keyword,
    pub via: Option<Keyword>,
    pub text: &'c str,
    /// The schema node that reported it, in its explainer (`None` for a
    /// problem no walk found): see [`Explainer::schema_word`].
    ///
    /// [`Explainer::schema_word`]: super::Explainer::schema_word
    pub(crate) node: Option<NodeId>,
    /// For an `enum` problem, the position among the allowed values of one
    /// the sent text equals but for ASCII case (found where the value was
    /// at hand, so that its hint need not look it up again).
    pub(crate) case_twin: Option<u16>,
}

impl Entry {
    /// Makes this entry the location `path`, with no problem yet.
    fn fill(&mut self, path: &[Tok<'_>], received_type: &'static str) {
        self.tokens.clear();
        self.names.clear();
        self.problems.clear();
        self.texts.clear();
        self.pointer = (0, 0);
        self.overflow = 0;
        self.received_type = received_type;
        for token in path {
            let token = match token.view() {
                PathToken::Key(key) => {
                    let start = self.names.len();
                    self.names.push_str(key);
                    EntryTok::Key(start, key.len())
                }
                PathToken::Index(index) => EntryTok::Index(index),
            };
            self.tokens.push(token);
        }
    }

    fn path(&self) -> impl Iterator<Item = PathToken<'_>> + Clone {
        self.tokens.iter().map(|token| match *token {
            EntryTok::Key(start, len) => PathToken::Key(&self.names[start..start + len]),
            EntryTok::Index(index) => PathToken::Index(index),
        })
    }

    fn text(&self, kept: &Kept) -> &str {
        &self.texts[kept.text.0..kept.text.0 + kept.text.1]
    }

    fn pointer(&self) -> &str {
        &self.texts[self.pointer.0..self.pointer.0 + self.pointer.1]
    }

    /// Sorts the problems by text (then keyword), caps them with an `and
    /// N more`, and renders the pointer.
    fn seal(&mut self) {
        let Entry {
            problems, texts, ..
        } = self;
        let text = |kept: &Kept| &texts[kept.text.0..kept.text.0 + kept.text.1];
        problems.sort_by(|a, b| {
            text(a)
                .cmp(text(b))
                .then(a.keyword.as_str().cmp(b.keyword.as_str()))
        });
        let more = self.problems.len().saturating_sub(MAX_PROBLEMS) + self.overflow;
        self.problems.truncate(MAX_PROBLEMS);
        self.overflow = 0;
        if more > 0 {
            let start = self.texts.len();
            texts::and_more_into(&mut self.texts, more);
            self.problems.push(Kept {
                keyword: Keyword::Other,
                via: None,
                text: (start, self.texts.len() - start),
                node: None,
                case_twin: None,
            });
        }
        let start = self.texts.len();
        let mut texts = std::mem::take(&mut self.texts);
        render_pointer_into(&mut texts, self.path());
        self.texts = texts;
        self.pointer = (start, self.texts.len() - start);
    }

    /// Adds a problem; false when its text was already there.
    fn add(&mut self, keyword: Keyword, via: Option<Keyword>, msg: &Msg<'_>, node: NodeId) -> bool {
        let start = self.texts.len();
        texts::render_into(&mut self.texts, msg);
        let len = self.texts.len() - start;
        let text = &self.texts[start..];
        if self
            .problems
            .iter()
            .any(|kept| &self.texts[kept.text.0..kept.text.0 + kept.text.1] == text)
        {
            self.texts.truncate(start);
            return false;
        }
        if self.problems.len() >= KEPT_PER_LOCATION {
            self.texts.truncate(start);
            self.overflow += 1;
            return true;
        }
        self.problems.push(Kept {
            keyword,
            via,
            text: (start, len),
            node: Some(node),
            case_twin: match msg {
                Msg::NotAllowed { case_twin, .. } => *case_twin,
                _ => None,
            },
        });
        true
    }
}

/// [`summary_line`] of what a collector found, written to `out`.
pub fn write_summary_line(out: &mut impl fmt::Write, prefix: &str, found: &Found<'_>) {
    let first = found.locations().next();
    let single = first.map(|first| (first.pointer(), first.texts().next(), first.problem_count()));
    write_summary(out, prefix, found.total, found.problem_count, single);
}

/// The one-line `message` of an answer: `"<prefix>: <text> at <pointer>"`
/// for a single problem, `"<prefix>: N problems at M locations; first at
/// <pointer>"` otherwise. The root reads as `(root)`.
pub fn summary_line(prefix: &str, d: &Distilled) -> String {
    let mut line = String::new();
    let first = d.locations.first().map(|first| {
        let text = first.problems.first().map(|problem| problem.text.as_str());
        (first.pointer.as_str(), text, first.problems.len())
    });
    write_summary(&mut line, prefix, d.total, d.problem_count, first);
    line
}

/// The summary line from its parts: the first location's pointer, its
/// first text and how many it has.
fn write_summary(
    out: &mut impl fmt::Write,
    prefix: &str,
    total: usize,
    problem_count: usize,
    first: Option<(&str, Option<&str>, usize)>,
) {
    let Some((pointer, text, texts)) = first else {
        let _ = out.write_str(prefix);
        return;
    };
    let _ = out.write_str(&cut_at_echo_bound(prefix));
    let _ = out.write_str(": ");
    if let (1, 0..=1, Some(text), 1) = (total, problem_count, text, texts) {
        let _ = out.write_str(text);
        let _ = out.write_str(" at ");
    } else {
        let problems = problem_count.max(total);
        let _ = write!(
            out,
            "{problems} problem{} at {total} location{}; first at ",
            if problems == 1 { "" } else { "s" },
            if total == 1 { "" } else { "s" },
        );
    }
    if pointer.is_empty() {
        let _ = out.write_str("(root)");
    } else {
        let _ = out.write_str(&cut_at_echo_bound(pointer));
    }
}

#[cfg(test)]
mod tests {
    use std::borrow::Cow;

    use super::*;

    fn key(k: &str) -> Tok<'_> {
        Tok::Key(Cow::Borrowed(k))
    }

    /// Reports a `type` problem at `path` (a value of type `received`).
    fn report_type(
        collector: &mut Collector,
        path: &[Tok<'_>],
        received: &'static str,
        text: &'static str,
    ) {
        collector.report(path, received, Keyword::Type, None, Msg::Static(text), 0);
    }

    #[test]
    fn twenty_five_locations_report_ten_and_count_all() {
        let mut collector = Collector::new();
        for i in (0..25).rev() {
            report_type(&mut collector, &[key("a"), Tok::Index(i)], "integer", "x");
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
            // Each twice: one problem however often it is reported.
            for _ in 0..2 {
                collector.report(
                    &[key("x")],
                    "string",
                    Keyword::Other,
                    None,
                    Msg::Schema(text),
                    0,
                );
            }
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
    fn a_reused_collector_answers_as_a_fresh_one_and_gives_long_names_back() {
        let long = "k".repeat(SPARE_KEEP + 1);
        let mut reused = Collector::new();
        for round in 0..3 {
            for (path, text) in [
                (vec![key("b"), Tok::Index(round)], "second"),
                (vec![key(&long)], "long"),
                (vec![key("a")], "first"),
            ] {
                report_type(&mut reused, &path, "string", text);
            }
            let found = reused.found(0);
            let pointers: Vec<&str> = found.locations().map(|l| l.pointer()).collect();
            assert_eq!(pointers[..2], ["/a", format!("/b/{round}").as_str()]);
            assert!(pointers[2].ends_with('…'), "{}", pointers[2]);
            let mut line = String::new();
            write_summary_line(&mut line, "Invalid params", &found);
            assert_eq!(
                line,
                "Invalid params: 3 problems at 3 locations; first at /a"
            );
            reused.clear();
            // The entry that held the long name gave its memory back.
            let part = &reused.parts[0];
            assert_eq!((part.spare.len(), part.entries.len()), (3, 3));
            assert!(
                part.entries
                    .iter()
                    .all(|entry| entry.names.capacity() < SPARE_KEEP)
            );
        }
    }

    #[test]
    fn each_class_answers_as_fresh_whichever_classes_the_refusals_before_reached() {
        fn class(keyword: Keyword, _: usize) -> usize {
            match keyword {
                Keyword::Required => 0,
                Keyword::Type => 1,
                _ => 2,
            }
        }
        let mut reused = Collector::with_classes(class, 3);
        for (keyword, name, expected_class) in [
            (Keyword::Type, "a", 1),
            (Keyword::Required, "b", 0),
            (Keyword::Type, "c", 1),
            (Keyword::Other, "d", 2),
            (Keyword::Type, "e", 1),
        ] {
            reused.report(&[key(name)], "string", keyword, None, Msg::Static("x"), 0);
            let (distilled, found_class) = reused.finish_first_class().expect("a problem");
            assert_eq!(found_class, expected_class, "{name}");
            assert_eq!((distilled.total, distilled.problem_count), (1, 1), "{name}");
            assert_eq!(distilled.locations[0].pointer, format!("/{name}"));
            assert!(reused.parts.iter().all(|part| !part.touched));
        }
        // A restart marks every class's counter, so that the next clear
        // resets each of them.
        reused.restart_exact();
        assert!(reused.parts.iter().all(|part| part.touched));
        reused.clear();
        assert!(reused.parts.iter().all(|part| !part.touched));
    }

    #[test]
    fn the_flag_sees_unreported_problems() {
        fn under_params(first: Option<PathToken<'_>>, _: usize, _: Keyword) -> bool {
            matches!(first, Some(PathToken::Key("params")))
        }
        let mut collector = Collector::with_flag(under_params);
        for i in 0..12 {
            report_type(&mut collector, &[key("a"), Tok::Index(i)], "null", "x");
        }
        report_type(&mut collector, &[key("params")], "null", "x");
        let d = collector.finish();
        assert!(d.flagged);
        assert!(d.locations.iter().all(|l| l.pointer != "/params"));
        report_type(&mut collector, &[key("a")], "null", "x");
        assert!(!collector.finish().flagged);
    }

    #[test]
    fn summary_names_the_one_problem_or_counts() {
        let mut collector = Collector::new();
        report_type(
            &mut collector,
            &[key("params"), key("name")],
            "integer",
            "expected string, found integer",
        );
        let d = collector.finish();
        assert_eq!(
            summary_line("Invalid params", &d),
            "Invalid params: expected string, found integer at /params/name"
        );
        report_type(
            &mut collector,
            &[key("params"), key("name")],
            "integer",
            "a",
        );
        report_type(
            &mut collector,
            &[key("params"), key("name")],
            "integer",
            "b",
        );
        report_type(&mut collector, &[key("params"), key("x")], "integer", "c");
        let d = collector.finish();
        assert_eq!(
            summary_line("Invalid params", &d),
            "Invalid params: 3 problems at 2 locations; first at /params/name"
        );
    }
}
