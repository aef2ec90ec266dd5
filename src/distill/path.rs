//! Instance locations: the walker's path stack, the sort order of locations
//! (token by token, indices numerically, keys bytewise, a prefix first), their
//! 64-bit identity for counting distinct locations, and their rendering as an
//! RFC 6901 pointer cut at the echo bound.

use std::borrow::Cow;
use std::cmp::Ordering;
use std::hash::Hasher;

use super::ECHO_BOUND;

/// One reference token of an instance location, borrowed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PathToken<'a> {
    /// A member name under an object.
    Key(&'a str),
    /// An element index under an array.
    Index(usize),
}

/// A token on the walker's path stack: member names come from the instance
/// (borrowed for the serde backend, possibly owned for others).
#[derive(Debug, Clone)]
pub(crate) enum Tok<'a> {
    Key(Cow<'a, str>),
    Index(usize),
}

/// A token of a reported location, owned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum OwnedTok {
    Key(Box<str>),
    Index(usize),
}

/// Anything that can be seen as a [`PathToken`].
pub(crate) trait TokView {
    fn view(&self) -> PathToken<'_>;
}

impl TokView for Tok<'_> {
    fn view(&self) -> PathToken<'_> {
        match self {
            Tok::Key(key) => PathToken::Key(key),
            Tok::Index(index) => PathToken::Index(*index),
        }
    }
}

impl TokView for OwnedTok {
    fn view(&self) -> PathToken<'_> {
        match self {
            OwnedTok::Key(key) => PathToken::Key(key),
            OwnedTok::Index(index) => PathToken::Index(*index),
        }
    }
}

impl TokView for PathToken<'_> {
    fn view(&self) -> PathToken<'_> {
        *self
    }
}

impl OwnedTok {
    pub(crate) fn from_view(token: PathToken<'_>) -> Self {
        match token {
            PathToken::Key(key) => OwnedTok::Key(key.into()),
            PathToken::Index(index) => OwnedTok::Index(index),
        }
    }
}

/// Compares one token with another at the same depth: indices numerically,
/// keys bytewise (an index before a key, which only happens across values).
pub(crate) fn compare_token(a: PathToken<'_>, b: PathToken<'_>) -> Ordering {
    match (a, b) {
        (PathToken::Index(a), PathToken::Index(b)) => a.cmp(&b),
        (PathToken::Key(a), PathToken::Key(b)) => a.as_bytes().cmp(b.as_bytes()),
        (PathToken::Index(_), PathToken::Key(_)) => Ordering::Less,
        (PathToken::Key(_), PathToken::Index(_)) => Ordering::Greater,
    }
}

/// The sort order of locations: token by token, a prefix before its
/// extensions. Allocation free.
pub(crate) fn compare_paths<A: TokView, B: TokView>(a: &[A], b: &[B]) -> Ordering {
    for (x, y) in a.iter().zip(b.iter()) {
        let order = compare_token(x.view(), y.view());
        if order != Ordering::Equal {
            return order;
        }
    }
    a.len().cmp(&b.len())
}

/// Whether two paths name the same location.
pub(crate) fn same_path<A: TokView, B: TokView>(a: &[A], b: &[B]) -> bool {
    a.len() == b.len() && compare_paths(a, b) == Ordering::Equal
}

/// A 64-bit identity of a location (FNV-1a over a tagged encoding of the
/// tokens), used to count distinct locations without keeping them.
pub(crate) fn hash_path<A: TokView>(path: &[A]) -> u64 {
    let mut hasher = Fnv::default();
    for token in path {
        match token.view() {
            PathToken::Key(key) => {
                hasher.write_u8(1);
                hasher.write_usize(key.len());
                hasher.write(key.as_bytes());
            }
            PathToken::Index(index) => {
                hasher.write_u8(2);
                hasher.write_usize(index);
            }
        }
    }
    hasher.finish()
}

/// FNV-1a with a final avalanche; deterministic across runs.
pub(crate) struct Fnv(u64);

impl Default for Fnv {
    fn default() -> Self {
        Fnv(0xcbf2_9ce4_8422_2325)
    }
}

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        // splitmix64 finaliser, so that the low bits spread in hash tables.
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 ^= u64::from(*byte);
            self.0 = self.0.wrapping_mul(0x0000_0100_0000_01b3);
        }
    }
}

/// A hasher for sets keyed by already-hashed `u64`s.
#[derive(Default)]
pub(crate) struct IdentityHasher(u64);

impl Hasher for IdentityHasher {
    fn finish(&self) -> u64 {
        self.0
    }

    fn write(&mut self, bytes: &[u8]) {
        for byte in bytes {
            self.0 = (self.0 << 8) | u64::from(*byte);
        }
    }

    fn write_u64(&mut self, value: u64) {
        self.0 = value;
    }
}

/// Renders a location as an RFC 6901 pointer (`~` as `~0`, `/` as `~1`),
/// cut at the echo bound at a UTF-8 boundary and marked with `…` when cut.
/// Never writes much more than the bound, whatever the keys' lengths.
pub(crate) fn render_pointer<A: TokView>(path: &[A]) -> String {
    let mut out = String::new();
    let mut cut = false;
    'tokens: for token in path {
        if out.len() >= ECHO_BOUND {
            cut = true;
            break;
        }
        out.push('/');
        match token.view() {
            PathToken::Index(index) => {
                use std::fmt::Write;
                let _ = write!(out, "{index}");
            }
            PathToken::Key(key) => {
                for ch in key.chars() {
                    if out.len() >= ECHO_BOUND {
                        cut = true;
                        break 'tokens;
                    }
                    match ch {
                        '~' => out.push_str("~0"),
                        '/' => out.push_str("~1"),
                        other => out.push(other),
                    }
                }
            }
        }
    }
    if out.len() > ECHO_BOUND {
        return cut_at_echo_bound(&out).into_owned();
    }
    if cut {
        out.push('…');
    }
    out
}

/// Cuts `text` at [`ECHO_BOUND`] bytes at a UTF-8 boundary, marking a cut
/// with `…` (so a cut text is at most `ECHO_BOUND + 3` bytes).
pub fn cut_at_echo_bound(text: &str) -> Cow<'_, str> {
    if text.len() <= ECHO_BOUND {
        return Cow::Borrowed(text);
    }
    let mut end = ECHO_BOUND;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    let mut cut = String::with_capacity(end + '…'.len_utf8());
    cut.push_str(&text[..end]);
    cut.push('…');
    Cow::Owned(cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn keys(tokens: &[PathToken<'static>]) -> Vec<PathToken<'static>> {
        tokens.to_vec()
    }

    #[test]
    fn an_index_sorts_numerically() {
        let nine = keys(&[PathToken::Key("a"), PathToken::Index(9)]);
        let ten = keys(&[PathToken::Key("a"), PathToken::Index(10)]);
        assert_eq!(compare_paths(&nine, &ten), Ordering::Less);
    }

    #[test]
    fn a_prefix_sorts_before_its_extensions() {
        let a = keys(&[PathToken::Key("a")]);
        let a0 = keys(&[PathToken::Key("a"), PathToken::Index(0)]);
        assert_eq!(compare_paths(&a, &a0), Ordering::Less);
        let root: Vec<PathToken<'static>> = Vec::new();
        assert_eq!(compare_paths(&root, &a), Ordering::Less);
    }

    #[test]
    fn keys_sort_bytewise() {
        let upper = keys(&[PathToken::Key("B")]);
        let lower = keys(&[PathToken::Key("a")]);
        assert_eq!(compare_paths(&upper, &lower), Ordering::Less);
        let ten = keys(&[PathToken::Key("10")]);
        let nine = keys(&[PathToken::Key("9")]);
        assert_eq!(compare_paths(&ten, &nine), Ordering::Less);
    }

    #[test]
    fn pointers_escape_tilde_and_slash() {
        let path = keys(&[
            PathToken::Key("a/b"),
            PathToken::Key("c~d"),
            PathToken::Index(3),
        ]);
        assert_eq!(render_pointer(&path), "/a~1b/c~0d/3");
        let root: Vec<PathToken<'static>> = Vec::new();
        assert_eq!(render_pointer(&root), "");
    }

    #[test]
    fn a_long_pointer_is_cut_at_a_char_boundary() {
        let key = "é".repeat(1000);
        let path = vec![PathToken::Key(key.as_str())];
        let rendered = render_pointer(&path);
        assert!(rendered.len() <= ECHO_BOUND + 3, "{}", rendered.len());
        assert!(rendered.ends_with('…'));
    }

    #[test]
    fn cutting_marks_the_cut() {
        assert_eq!(cut_at_echo_bound("short"), "short");
        let long = "x".repeat(200);
        let cut = cut_at_echo_bound(&long);
        assert_eq!(cut.len(), ECHO_BOUND + '…'.len_utf8());
        assert!(cut.ends_with('…'));
    }

    #[test]
    fn equal_paths_hash_equal_and_differ_otherwise() {
        let a = keys(&[PathToken::Key("a"), PathToken::Index(1)]);
        let b = vec![Tok::Key(Cow::Borrowed("a")), Tok::Index(1)];
        assert_eq!(hash_path(&a), hash_path(&b));
        assert!(same_path(&a, &b));
        let c = keys(&[PathToken::Key("a1")]);
        assert_ne!(hash_path(&a), hash_path(&c));
    }
}
