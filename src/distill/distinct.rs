//! Counting the distinct locations of a walk's problems, exactly, in time
//! linear in the problems and without a table probed at random.
//!
//! A walk reports in depth-first order, so the locations reported while a
//! location stays on the path of consecutive reports (its *run*) all lie
//! under it, and a location is new unless it was already reported in its
//! run, or its run is a second one (some ancestor re-entered a child it had
//! already left: two branches or two passes over the same value). The
//! counter keeps the path of the last report with, per level, which children
//! it has entered, and counts the locations first reported in their run:
//! exact, in constant memory, when nothing was re-entered.
//!
//! Where a re-entry is possible the count may hold duplicates: the counter
//! says so ([`Distinct::inexact`]) and the walk is made again with
//! identities kept ([`Distinct::keep_identities`]): each new location
//! appends its 64-bit identity to a list, and a level that re-entered a
//! child has its part of the list (everything appended during its run)
//! sorted and deduplicated when its run ends, so duplicates are removed
//! where they can occur and nowhere else.

use std::borrow::Cow;

use smallvec::SmallVec;

use super::path::Tok;

/// Identities a cleared counter keeps room for.
const IDENTITIES_KEEP: usize = 4 * 1024;

/// Keys remembered per level beyond the address order before a key that
/// cannot be told new counts as a possible re-entry.
const KEYS_REMEMBERED: usize = 8;

#[derive(Clone, Copy, PartialEq, Eq)]
enum LevelTok {
    Root,
    Index(usize),
    /// A borrowed member name: its address and length (one address per
    /// name under one object: the instance's own member name).
    Borrowed(usize, usize),
    /// A name the walk owns (not the instance's): its hash.
    Owned(u64),
}

struct Level {
    token: LevelTok,
    /// Content hash of a key token, for comparing owned and borrowed keys.
    key_hash: Option<u64>,
    /// The location's identity, mixed from its parent's and its token's.
    identity: u64,
    /// Whether this location was reported in this run.
    reported: bool,
    /// Start of this run's part of the identity list.
    start: usize,
    /// Whether a child may have been entered twice in this run.
    reentered: bool,
    /// Highest child index entered.
    max_index: Option<usize>,
    /// Highest address of a borrowed child name entered (0: none).
    max_address: usize,
    /// Whether any owned child name was entered (addresses then say nothing).
    owned_child: bool,
    /// Content hashes of the first child names entered.
    keys: SmallVec<[u64; KEYS_REMEMBERED]>,
    /// Whether child names were entered past [`KEYS_REMEMBERED`].
    keys_overflow: bool,
}

impl Level {
    fn new(token: LevelTok, key_hash: Option<u64>, identity: u64, start: usize) -> Level {
        Level {
            token,
            key_hash,
            identity,
            reported: false,
            start,
            reentered: false,
            max_index: None,
            max_address: 0,
            owned_child: false,
            keys: SmallVec::new(),
            keys_overflow: false,
        }
    }

    /// Notes that child `token` is entered; true when it may have been
    /// entered before in this run.
    fn enter_child(&mut self, token: &Tok<'_>) -> bool {
        match token {
            Tok::Index(index) => {
                let fresh = self.max_index.is_none_or(|max| *index > max);
                if fresh {
                    self.max_index = Some(*index);
                }
                !fresh
            }
            Tok::Key(key) => {
                let borrowed = matches!(key, Cow::Borrowed(_));
                let address = key.as_ptr() as usize;
                if borrowed && !self.owned_child && address > self.max_address {
                    // Past every name entered so far: a name not entered yet.
                    self.max_address = address;
                    if !self.keys_overflow {
                        self.remember(key_hash(key));
                    }
                    return false;
                }
                let hash = key_hash(key);
                let known = self.keys.contains(&hash);
                if borrowed {
                    self.max_address = self.max_address.max(address);
                } else {
                    self.owned_child = true;
                }
                if !known && !self.keys_overflow {
                    self.remember(hash);
                }
                known || self.keys_overflow
            }
        }
    }

    fn remember(&mut self, hash: u64) {
        if self.keys.len() < KEYS_REMEMBERED {
            self.keys.push(hash);
        } else {
            self.keys_overflow = true;
        }
    }

    #[inline]
    fn same(&self, token: &Tok<'_>) -> bool {
        match (self.token, token) {
            (LevelTok::Index(a), Tok::Index(b)) => a == *b,
            (LevelTok::Borrowed(address, len), Tok::Key(Cow::Borrowed(key))) => {
                len == key.len()
                    && (address == key.as_ptr() as usize || self.key_hash == Some(key_hash(key)))
            }
            (LevelTok::Borrowed(..) | LevelTok::Owned(_), Tok::Key(key)) => {
                self.key_hash == Some(key_hash(key))
            }
            _ => false,
        }
    }
}

const SEED: u64 = 0xcbf2_9ce4_8422_2325;

/// One step of a word-at-a-time hash: 64 bits tell locations apart (a
/// collision would only make `total` one short).
fn mix(state: u64, word: u64) -> u64 {
    (state.rotate_left(26) ^ word).wrapping_mul(0x9e37_79b9_7f4a_7c15)
}

/// A final avalanche, so that identities differing in one word differ in
/// every bit.
fn finish(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

fn key_hash(key: &str) -> u64 {
    let bytes = key.as_bytes();
    let mut state = mix(SEED, bytes.len() as u64);
    let mut chunks = bytes.chunks_exact(8);
    for chunk in &mut chunks {
        let mut word = [0u8; 8];
        word.copy_from_slice(chunk);
        state = mix(state, u64::from_le_bytes(word));
    }
    // The last bytes as `from_le_bytes` reads them padded with zeros,
    // without a copy of unknown length (a call to `memcpy`).
    let last = chunks
        .remainder()
        .iter()
        .rev()
        .fold(0, |word, &byte| (word << 8) | u64::from(byte));
    finish(mix(state, last))
}

/// The identity of a child location of `parent`.
fn child_identity(parent: u64, token: LevelTok, key_hash: Option<u64>) -> u64 {
    match (token, key_hash) {
        (LevelTok::Index(index), _) => mix(mix(parent, 1), index as u64),
        (_, Some(hash)) => mix(mix(parent, 2), hash),
        _ => mix(parent, 3),
    }
}

fn level_tok(token: &Tok<'_>) -> (LevelTok, Option<u64>) {
    match token {
        Tok::Index(index) => (LevelTok::Index(*index), None),
        Tok::Key(Cow::Borrowed(key)) => (
            LevelTok::Borrowed(key.as_ptr() as usize, key.len()),
            Some(key_hash(key)),
        ),
        Tok::Key(key) => {
            let hash = key_hash(key);
            (LevelTok::Owned(hash), Some(hash))
        }
    }
}

/// What [`Distinct::report`] learned of a report's path.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Noted {
    /// The location may be new (it was counted).
    pub new: bool,
    /// The path sorts after the last report's path (`false`: not known).
    pub after: bool,
}

/// The distinct-location counter; reusable.
pub(crate) struct Distinct {
    levels: Vec<Level>,
    /// Whether identities are kept (the walk over again).
    keep: bool,
    identities: Vec<u64>,
    /// Locations first reported in their run (without identities).
    counted: usize,
    /// Whether a child was (perhaps) re-entered without identities kept.
    inexact: bool,
}

impl Default for Distinct {
    fn default() -> Self {
        Distinct {
            levels: vec![Level::new(LevelTok::Root, None, SEED, 0)],
            keep: false,
            identities: Vec::new(),
            counted: 0,
            inexact: false,
        }
    }
}

impl Distinct {
    /// [`Distinct::report_kept`] knowing nothing of the path between reports.
    #[cfg(test)]
    pub fn report(&mut self, path: &[Tok<'_>]) -> Noted {
        self.report_kept(path, 0)
    }

    /// Notes a report at `path`: whether its location may be new (it is
    /// then counted, provisionally where a re-entry is possible), and
    /// whether `path` is known to sort after the last report's path.
    ///
    /// `kept`: tokens of the last report's path that the walk has not left
    /// since (they are `path`'s first ones), so only those after them are
    /// compared; a report deep in the instance then costs the same as one
    /// near the root.
    pub fn report_kept(&mut self, path: &[Tok<'_>], kept: usize) -> Noted {
        let last_len = self.levels.len() - 1;
        let kept = kept.min(last_len).min(path.len());
        debug_assert!(
            self.levels[1..=kept]
                .iter()
                .zip(path)
                .all(|(level, token)| level.same(token)),
            "the walk left a level it said it kept"
        );
        if let Some(noted) = self.next_sibling(path, kept) {
            return noted;
        }
        // Levels past the root that the last report's path shares.
        let shared = kept
            + self.levels[1 + kept..]
                .iter()
                .zip(&path[kept..])
                .take_while(|(level, token)| level.same(token))
                .count();
        // Below the last path (an extension sorts after its prefix), or
        // beside it at an index above every index entered there.
        let mut after = shared == last_len && shared < path.len();
        // A report at an ancestor of the last one keeps the levels below it:
        // the walk has not left them for another child yet.
        if shared < path.len() {
            self.end_runs(shared + 1);
            let start = self.identities.len();
            if self.levels[shared].enter_child(&path[shared]) {
                self.levels[shared].reentered = true;
                self.inexact |= !self.keep;
            } else if matches!(path[shared], Tok::Index(_)) {
                after = true;
            }
            for (depth, token) in path.iter().enumerate().skip(shared) {
                if depth > shared {
                    let parent = self.levels.len() - 1;
                    self.levels[parent].enter_child(token);
                }
                let (tok, hash) = level_tok(token);
                // Identities are only read where they are kept.
                let identity = if self.keep {
                    child_identity(self.levels[self.levels.len() - 1].identity, tok, hash)
                } else {
                    0
                };
                self.levels.push(Level::new(tok, hash, identity, start));
            }
        }
        let here = path.len();
        if self.levels[here].reported {
            return Noted { new: false, after };
        }
        self.levels[here].reported = true;
        if self.keep {
            self.identities.push(finish(self.levels[here].identity));
        } else {
            self.counted += 1;
        }
        Noted { new: true, after }
    }

    /// The common case of a body full of wrong items, at a fraction of the
    /// general path's cost: `path` is the last report's with its last index
    /// past every index entered there, a new location that sorts after the
    /// last. Its level is reused in place rather than ended and pushed
    /// again (nothing to deduplicate: identities are not kept and it was
    /// not re-entered). `None`: not that case.
    fn next_sibling(&mut self, path: &[Tok<'_>], kept: usize) -> Option<Noted> {
        let depth = path.len();
        if self.keep || depth == 0 || depth + 1 != self.levels.len() {
            return None;
        }
        let (Tok::Index(index), LevelTok::Index(_)) = (&path[depth - 1], self.levels[depth].token)
        else {
            return None;
        };
        let (above, last) = self.levels.split_at_mut(depth);
        if last[0].reentered
            || above[depth - 1].max_index.is_some_and(|max| *index <= max)
            || !above[1 + kept.min(depth - 1)..]
                .iter()
                .zip(&path[kept.min(depth - 1)..])
                .all(|(level, token)| level.same(token))
        {
            return None;
        }
        let (parent, last) = (&mut above[depth - 1], &mut last[0]);
        parent.max_index = Some(*index);
        *last = Level::new(LevelTok::Index(*index), None, 0, self.identities.len());
        last.reported = true;
        self.counted += 1;
        Some(Noted {
            new: true,
            after: true,
        })
    }

    /// Whether [`Distinct::count`] may count a location twice: a child was
    /// re-entered while identities were not kept.
    pub fn inexact(&self) -> bool {
        self.inexact
    }

    /// Starts over keeping identities, for an exact count whatever the
    /// walk re-enters (until [`Distinct::clear`]).
    pub fn keep_identities(&mut self) {
        self.clear();
        self.keep = true;
    }

    /// Distinct locations reported so far (see [`Distinct::inexact`]).
    pub fn count(&mut self) -> usize {
        if !self.keep {
            return self.counted;
        }
        self.end_runs(1);
        let root = &mut self.levels[0];
        if root.reentered {
            dedup_from(&mut self.identities, 0);
            root.reentered = false;
        }
        self.identities.len()
    }

    /// Forgets everything; identities are no longer kept.
    pub fn clear(&mut self) {
        self.levels.truncate(1);
        self.levels[0] = Level::new(LevelTok::Root, None, SEED, 0);
        self.keep = false;
        if self.identities.capacity() > IDENTITIES_KEEP {
            // A kept counter gives a large walk's memory back.
            self.identities = Vec::new();
        }
        self.identities.clear();
        self.counted = 0;
        self.inexact = false;
    }

    /// Ends the runs of the levels at `keep` and deeper, deepest first.
    fn end_runs(&mut self, keep: usize) {
        while let Some(level) = self.levels.last()
            && self.levels.len() > keep
        {
            if level.reentered {
                dedup_from(&mut self.identities, level.start);
            }
            self.levels.truncate(self.levels.len() - 1);
        }
    }
}

/// Sorts and deduplicates `list[start..]`.
fn dedup_from(list: &mut Vec<u64>, start: usize) {
    let tail = &mut list[start..];
    tail.sort_unstable();
    let mut kept = 0;
    for i in 0..tail.len() {
        if i == 0 || tail[i] != tail[kept - 1] {
            tail[kept] = tail[i];
            kept += 1;
        }
    }
    list.truncate(start + kept);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(k: &str) -> Tok<'_> {
        Tok::Key(Cow::Borrowed(k))
    }

    fn owned(k: &str) -> Tok<'static> {
        Tok::Key(Cow::Owned(k.to_owned()))
    }

    fn keeping() -> Distinct {
        let mut d = Distinct::default();
        d.keep_identities();
        d
    }

    #[test]
    fn equal_locations_have_one_identity_and_others_differ() {
        let mut d = keeping();
        let text = String::from("a");
        d.report(&[key("a"), Tok::Index(1)]);
        d.report(&[owned("a"), Tok::Index(1)]);
        d.report(&[key(&text), Tok::Index(1)]);
        assert_eq!(d.count(), 1);
        d.keep_identities();
        d.report(&[key("a"), Tok::Index(1)]);
        d.report(&[key("a1")]);
        d.report(&[Tok::Index(1), key("a")]);
        assert_eq!(d.count(), 3);
    }

    #[test]
    fn one_pass_is_counted_exactly_without_identities() {
        let mut d = Distinct::default();
        let items = "items";
        for i in 0..100 {
            assert!(d.report(&[key(items), Tok::Index(i), key("sku")]).new);
            assert!(d.report(&[key(items), Tok::Index(i)]).new);
            assert!(!d.report(&[key(items), Tok::Index(i), key("sku")]).new);
            assert!(!d.report(&[key(items), Tok::Index(i)]).new);
        }
        assert!(d.report(&[key(items)]).new);
        assert!(!d.inexact());
        assert_eq!(d.count(), 201);
        assert!(d.identities.is_empty());
    }

    #[test]
    fn a_path_is_known_to_sort_after_the_last_only_below_it_or_at_a_fresh_index() {
        let mut d = Distinct::default();
        let items = "items";
        let after = |d: &mut Distinct, path: &[Tok<'_>]| d.report(path).after;
        assert!(after(&mut d, &[key(items), Tok::Index(0)]));
        assert!(after(&mut d, &[key(items), Tok::Index(0), key("sku")]));
        // An ancestor sorts before its extensions.
        assert!(!after(&mut d, &[key(items), Tok::Index(0)]));
        assert!(!after(&mut d, &[key(items), Tok::Index(0), key("sku")]));
        assert!(after(&mut d, &[key(items), Tok::Index(1), key("sku")]));
        assert!(after(&mut d, &[key(items), Tok::Index(5)]));
        // An index entered before, or a sibling key: not known.
        assert!(!after(&mut d, &[key(items), Tok::Index(2)]));
        assert!(!after(&mut d, &[key("other")]));
        assert!(!after(&mut d, &[key("a")]));
    }

    #[test]
    fn a_second_pass_over_the_same_items_counts_nothing_new() {
        let mut d = Distinct::default();
        let items = "items";
        let passes = |d: &mut Distinct| {
            for pass in 0..2 {
                for i in pass..10 {
                    d.report(&[key(items), Tok::Index(i)]);
                }
            }
        };
        passes(&mut d);
        assert!(d.inexact());
        d.keep_identities();
        passes(&mut d);
        assert!(!d.inexact());
        assert_eq!(d.count(), 10);
    }

    #[test]
    fn a_member_reached_by_an_owned_and_a_borrowed_name_is_one_location() {
        let mut d = keeping();
        let object = r#"{"type": 1}"#;
        let borrowed = &object[2..6];
        d.report(&[owned("type")]);
        d.report(&[key(borrowed)]);
        d.report(&[owned("type")]);
        assert_eq!(d.count(), 1);
    }

    #[test]
    fn revisits_past_the_remembered_keys_are_deduplicated() {
        let mut d = keeping();
        let names: Vec<String> = (0..40).map(|i| format!("k{i}")).collect();
        for pass in 0..3 {
            for (i, name) in names.iter().enumerate() {
                if (i + pass) % 2 == 0 {
                    d.report(&[key(name), Tok::Index(0)]);
                    d.report(&[key(name)]);
                }
            }
        }
        assert_eq!(d.count(), 80);
        d.clear();
        d.report(&[key("a")]);
        assert_eq!(d.count(), 1);
        assert!(!d.inexact());
    }
}
