//! Instance locations: the walker's path stack, the sort order of locations
//! (token by token, indices numerically, keys bytewise, a prefix first), and
//! their rendering as an RFC 6901 pointer cut at the echo bound.

use std::borrow::Cow;
use std::cmp::Ordering;

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
        (PathToken::Key(a), PathToken::Key(b)) => compare_bytes(a.as_bytes(), b.as_bytes()),
        (PathToken::Index(_), PathToken::Key(_)) => Ordering::Less,
        (PathToken::Key(_), PathToken::Index(_)) => Ordering::Greater,
    }
}

/// Bytewise order; short keys (the usual member names) compared in place,
/// since every report of a walk compares its path with the last kept one.
fn compare_bytes(a: &[u8], b: &[u8]) -> Ordering {
    if a.len() > 16 || b.len() > 16 {
        return a.cmp(b);
    }
    for (x, y) in a.iter().zip(b) {
        if x != y {
            return x.cmp(y);
        }
    }
    a.len().cmp(&b.len())
}

/// The sort order of locations: token by token, a prefix before its
/// extensions. Allocation free.
#[cfg(test)]
pub(crate) fn compare_paths<A: TokView, B: TokView>(a: &[A], b: &[B]) -> Ordering {
    compare_tokens(a.iter().map(TokView::view), b.iter().map(TokView::view))
}

/// [`compare_paths`] over the tokens of two paths, however they are held.
pub(crate) fn compare_tokens<'x, 'y>(
    a: impl IntoIterator<Item = PathToken<'x>>,
    b: impl IntoIterator<Item = PathToken<'y>>,
) -> Ordering {
    let mut b = b.into_iter();
    for x in a {
        let Some(y) = b.next() else {
            return Ordering::Greater;
        };
        let order = compare_token(x, y);
        if order != Ordering::Equal {
            return order;
        }
    }
    if b.next().is_some() {
        Ordering::Less
    } else {
        Ordering::Equal
    }
}

/// Renders a location as an RFC 6901 pointer (`~` as `~0`, `/` as `~1`),
/// cut at the echo bound at a UTF-8 boundary and marked with `…` when cut.
/// Never writes much more than the bound, whatever the keys' lengths;
/// appended to `out`.
pub(crate) fn render_pointer_into<'t>(
    out: &mut String,
    path: impl IntoIterator<Item = PathToken<'t>>,
) {
    let start = out.len();
    let mut cut = false;
    'tokens: for token in path {
        if out.len() - start >= ECHO_BOUND {
            cut = true;
            break;
        }
        out.push('/');
        match token {
            PathToken::Index(index) => {
                out.push_str(itoa::Buffer::new().format(index));
            }
            PathToken::Key(key) => {
                // Whole, when it needs no escape and fits (the loop below
                // would then neither escape nor cut).
                if key.len() <= ECHO_BOUND - (out.len() - start)
                    && !key.bytes().any(|byte| byte == b'~' || byte == b'/')
                {
                    out.push_str(key);
                    continue;
                }
                for ch in key.chars() {
                    if out.len() - start >= ECHO_BOUND {
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
    let (kept, over) = within_echo_bound(&out[start..]);
    if over {
        out.truncate(start + kept.len());
        out.push('…');
    } else if cut {
        out.push('…');
    }
}

/// Cuts `text` at [`ECHO_BOUND`] bytes at a UTF-8 boundary, marking a cut
/// with `…` (so a cut text is at most `ECHO_BOUND + 3` bytes).
pub fn cut_at_echo_bound(text: &str) -> Cow<'_, str> {
    let (kept, cut) = within_echo_bound(text);
    if !cut {
        return Cow::Borrowed(text);
    }
    let mut owned = String::with_capacity(kept.len() + '…'.len_utf8());
    owned.push_str(kept);
    owned.push('…');
    Cow::Owned(owned)
}

/// What [`cut_at_echo_bound`] keeps of `text`, and whether it cut (and so
/// adds `…`): for a writer that copies the kept part itself.
pub fn within_echo_bound(text: &str) -> (&str, bool) {
    if text.len() <= ECHO_BOUND {
        return (text, false);
    }
    let mut end = ECHO_BOUND;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    (&text[..end], true)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn render_pointer(path: &[PathToken<'_>]) -> String {
        let mut out = String::new();
        render_pointer_into(&mut out, path.iter().copied());
        out
    }

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
}
