//! Stage 2: parse. The body becomes a simd-json tape, and the tape is what
//! every later stage reads and what the schemas validate (through
//! [`TapeJson`], a `jsonschema` backend).
//!
//! Two builders make that tape: the fast path (`fast`), which takes the
//! bodies clients usually send in one pass and only ever accepts, and
//! simd-json, which parses every other body and answers every refusal.
//!
//! Why simd-json gets a copy: it parses in place (it unescapes strings
//! inside its input), but the gateway forwards the original bytes untouched.
//! So the body is copied into the worker's scratch buffer, padded, and parsed
//! there; the caller's bytes are never written. The fast path reads a copy
//! too, padded with zeros: it then reads each byte without a bounds check
//! (`scan::Cursor`), which costs less than the copy. The copies, simd-json's
//! buffers and the tapes are kept in the [`Parser`] and reused, so a parse in
//! steady state allocates nothing.
//!
//! Why duplicate keys are refused: JSON leaves their meaning open, and
//! readers disagree. simd-json's `BorrowedValue` keeps the first duplicate in
//! small objects and the last in large ones (ARCHITECTURE.md, "The stack"); the upstream's
//! parser may keep either. A body whose meaning depends on the reader could
//! be validated as one value and acted upon as another, so it is refused
//! outright, wherever the object is. Keys compare decoded (`"a"` and
//! `"\u0061"` are the same key).
//!
//! Also refused as malformed: trailing bytes, an empty body, invalid UTF-8,
//! lone surrogate escapes (simd-json refuses them itself), and number
//! literals beyond `f64`'s range (`1e400`: `serde_json` refuses those too).
//! Integers beyond 64 bits are numbers, held as floats (simd-json's
//! `big-int-as-float`), as `serde_json` holds them; one its float does not
//! hold exactly is also kept as written (`wide`), for the schemas that
//! compare numbers that large.
//!
//! Depth: simd-json checks it while building the tape, with an explicit
//! stack, so a body of 100,000 open brackets costs one pass up to the limit
//! and no recursion. Errors found in simd-json's first pass over the whole
//! body (invalid UTF-8, an unterminated string) win over depth; otherwise the
//! first problem in document order decides.

mod backend;
mod dupes;
mod fast;
mod node;
#[allow(unsafe_code)]
mod reuse;
#[allow(unsafe_code)]
mod scan;
pub mod span;
#[allow(unsafe_code)]
mod subtree;
pub(crate) mod wide;
pub(crate) mod words;
#[allow(unsafe_code)]
mod writer;

use simd_json::{Buffers, ErrorType, INPUT_PADDING, Node};

pub use backend::TapeJson;
pub use node::{NodeKind, TapeNode};
pub(crate) use node::{SHORT_LIST, same_bytes, same_text};
pub(crate) use scan::escape_stop;

use dupes::{Defect, KeyTable};
use reuse::{BodyStore, TapeStore};
use subtree::Subtree;

/// Limits a body must stay within.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParseLimits {
    /// Deepest nesting of arrays and objects allowed: `[]` has depth 1, a
    /// scalar 0.
    pub max_depth: usize,
}

impl ParseLimits {
    /// The depth allowed unless another is given.
    pub const DEFAULT_MAX_DEPTH: usize = 64;
}

impl Default for ParseLimits {
    fn default() -> Self {
        ParseLimits {
            max_depth: Self::DEFAULT_MAX_DEPTH,
        }
    }
}

/// Why a body was refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParseError {
    /// Not JSON: a syntax error, trailing bytes, an empty body, invalid
    /// UTF-8, a lone surrogate escape, a number beyond `f64`.
    Malformed,
    /// Well-formed as far as read, but nested deeper than `limit`.
    TooDeep { limit: usize },
    /// Some object has the same key twice.
    DuplicateKey,
}

impl std::fmt::Display for ParseError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ParseError::Malformed => f.write_str("the body is not well-formed JSON"),
            ParseError::TooDeep { limit } => {
                write!(f, "the body nests arrays and objects deeper than {limit}")
            }
            ParseError::DuplicateKey => f.write_str("an object in the body has a duplicate key"),
        }
    }
}

impl std::error::Error for ParseError {}

/// The original bytes of the document being read, and where its tape lies:
/// what a deferred error instance is rebuilt from.
pub(crate) struct Source {
    body: BodyStore,
    tape_address: usize,
    tape_len: usize,
    /// The document's integer literals beyond 64 bits that their floats do
    /// not hold exactly, in tape order (almost always none).
    wide: Vec<wide::Literal>,
}

/// The source of nodes that belong to no document (property names).
static DETACHED: Source = Source {
    body: BodyStore::empty(),
    tape_address: 0,
    tape_len: 0,
    wide: Vec::new(),
};

impl Source {
    fn detached() -> &'static Source {
        &DETACHED
    }

    fn body(&self) -> &[u8] {
        self.body.get()
    }

    /// Node `index`, if it is an integer literal beyond 64 bits that its
    /// float does not hold exactly.
    fn wide_at(&self, index: u32) -> Option<&wide::Literal> {
        let at = self
            .wide
            .binary_search_by_key(&(index as usize), |literal| literal.index)
            .ok()?;
        self.wide.get(at)
    }

    /// Whether the nodes `index..index + len` hold such a literal.
    fn holds_wide(&self, index: u32, len: usize) -> bool {
        let from = index as usize;
        let at = self.wide.partition_point(|literal| literal.index < from);
        self.wide
            .get(at)
            .is_some_and(|literal| literal.index < from + len)
    }

    /// The tape index of the node at `address`, if it is one of this
    /// document's and the index fits a tag.
    fn index_of(&self, address: usize) -> Option<u32> {
        let size = std::mem::size_of::<Node<'_>>();
        let offset = address.checked_sub(self.tape_address)?;
        let index = offset / size;
        if self.tape_len == 0 || offset % size != 0 || index >= self.tape_len {
            return None;
        }
        u32::try_from(index).ok()
    }

    /// The value of node `tag` of the document `body` (parsed again: this
    /// runs only when an error's instance is read). Anything that does not
    /// parse gives `null`; it cannot happen for a body that parsed once.
    fn rebuild(body: &[u8], tag: u32) -> serde_json::Value {
        let mut copy = body.to_vec();
        let mut buffers = Buffers::with_max_depth(copy.len(), usize::MAX);
        let Ok(tape) = simd_json::to_tape_with_buffers(&mut copy, &mut buffers) else {
            return serde_json::Value::Null;
        };
        match tape.0.get(tag as usize..).and_then(Subtree::split) {
            Some((subtree, _)) => node::subtree_to_value(subtree.nodes()),
            None => serde_json::Value::Null,
        }
    }
}

/// A parser owned by one worker and reused for every body it reads.
pub struct Parser {
    /// The padded copy of the body the fast path reads.
    fast_input: Vec<u8>,
    /// The tape the fast path builds (its strings borrow `fast_input`).
    fast_tape: TapeStore,
    /// The fast path's stack of open arrays and objects.
    fast_frames: fast::Frames,
    /// The objects of the fast tape that may repeat a key.
    fast_objects: Vec<u32>,
    simd_json: SimdJson,
    keys: KeyTable,
    source: Source,
}

impl Default for Parser {
    fn default() -> Self {
        Self::new()
    }
}

impl Parser {
    /// A parser with empty buffers, grown by the first bodies it parses.
    pub fn new() -> Self {
        let depth = ParseLimits::DEFAULT_MAX_DEPTH;
        Parser {
            fast_input: Vec::new(),
            fast_tape: TapeStore::new(),
            fast_frames: fast::Frames::default(),
            fast_objects: Vec::new(),
            simd_json: SimdJson {
                scratch: Vec::new(),
                buffers: Buffers::with_max_depth(0, depth),
                buffers_depth: depth,
                tape: TapeStore::new(),
            },
            keys: KeyTable::new(),
            source: Source {
                body: BodyStore::empty(),
                tape_address: 0,
                tape_len: 0,
                wide: Vec::new(),
            },
        }
    }

    /// Reads `body` into a tape: by the fast path where it takes the body,
    /// else by simd-json over a copy in the scratch buffer, parsed in place
    /// (the caller keeps the original bytes untouched for forwarding).
    pub fn parse<'p>(
        &'p mut self,
        body: &'p [u8],
        limits: ParseLimits,
    ) -> Result<Document<'p>, ParseError> {
        self.source.body.set(body);
        self.source.tape_address = 0;
        self.source.tape_len = 0;
        self.source.wide.clear();

        let fast_tape = self.fast_tape.fill();
        let fast = fast::fill(
            scan::Cursor::new(&mut self.fast_input, body),
            &mut fast_tape.0,
            &mut self.fast_frames,
            &mut self.fast_objects,
            limits.max_depth,
        );
        let nodes: &'p [Node<'p>] = if fast {
            #[cfg(debug_assertions)]
            debug_check_fast_tape(body, &fast_tape.0);
            // The fast path declines numbers beyond `f64` and lists every
            // object that may repeat a key: only those can hold a defect.
            let duplicate = self.keys.any_duplicate_in(&fast_tape.0, &self.fast_objects);
            #[cfg(debug_assertions)]
            assert_eq!(
                duplicate,
                KeyTable::new().check(&fast_tape.0, &mut false) == Some(Defect::DuplicateKey),
                "the listed objects and the whole tape disagree on duplicate keys"
            );
            if duplicate {
                return Err(ParseError::DuplicateKey);
            }
            &fast_tape.0
        } else {
            let nodes = self.simd_json.tape(body, limits)?;
            let mut wide = false;
            match self.keys.check(nodes, &mut wide) {
                Some(Defect::DuplicateKey) => return Err(ParseError::DuplicateKey),
                Some(Defect::NonFinite) => return Err(ParseError::Malformed),
                None => {}
            }
            if wide {
                wide::find(body, nodes, &mut self.source.wide);
            }
            nodes
        };
        if nodes.is_empty() {
            return Err(ParseError::Malformed);
        }
        self.source.tape_address = nodes.as_ptr() as usize;
        self.source.tape_len = nodes.len();
        Ok(Document {
            nodes,
            source: &self.source,
        })
    }
}

/// simd-json with its buffers, for the bodies the fast path does not take.
struct SimdJson {
    /// The body copy simd-json parses (and writes) in place, padded.
    scratch: Vec<u8>,
    buffers: Buffers,
    /// The depth limit `buffers` was built with.
    buffers_depth: usize,
    /// The tape (its strings borrow `scratch`).
    tape: TapeStore,
}

impl SimdJson {
    /// simd-json's tape of `body`, parsed from a padded copy.
    fn tape<'p>(
        &'p mut self,
        body: &[u8],
        limits: ParseLimits,
    ) -> Result<&'p [Node<'p>], ParseError> {
        if self.buffers_depth != limits.max_depth {
            // Only when the limit changes: a worker keeps one.
            self.buffers = Buffers::with_max_depth(body.len(), limits.max_depth);
            self.buffers_depth = limits.max_depth;
        }
        self.scratch.clear();
        self.scratch.extend_from_slice(body);
        self.scratch.resize(body.len() + INPUT_PADDING, b' ');
        let tape = self.tape.fill();
        simd_json::fill_tape_padded(&mut self.scratch, body.len(), &mut self.buffers, tape)
            .map_err(|error| match error.error() {
                ErrorType::DepthLimitExceeded => ParseError::TooDeep {
                    limit: limits.max_depth,
                },
                _ => ParseError::Malformed,
            })?;
        Ok(&tape.0)
    }
}

/// Debug builds (tests, fuzzing) hold every tape of the fast path equal to
/// simd-json's tape of the same body, up to [`DEBUG_CHECK_UP_TO`] bytes.
#[cfg(debug_assertions)]
fn debug_check_fast_tape(body: &[u8], fast: &[Node<'_>]) {
    if body.len() > DEBUG_CHECK_UP_TO {
        return;
    }
    let mut copy = body.to_vec();
    let expected = simd_json::to_tape(&mut copy);
    assert!(
        expected.as_ref().is_ok_and(|tape| tape.0 == fast),
        "the fast path's tape differs from simd-json's ({expected:?}) for {:?}",
        String::from_utf8_lossy(body)
    );
}

/// The largest body whose fast tape a debug build parses again to compare.
/// The second parse holds about three times the memory of the first (the
/// body's copy, simd-json's structural index and its own tape): above this
/// size it would make a debug server's peak for a body at the limit several
/// times a release server's, and the tests that bound the server's memory
/// run the debug build. The fast path reads a large body as it reads a
/// small one, so the smaller bodies exercise all of it.
#[cfg(debug_assertions)]
const DEBUG_CHECK_UP_TO: usize = 1024 * 1024;

/// A parsed body: a view of the parser's tape, valid until the next parse.
#[derive(Clone, Copy)]
pub struct Document<'p> {
    nodes: &'p [Node<'p>],
    source: &'p Source,
}

impl<'p> Document<'p> {
    /// The top-level value.
    pub fn root(&self) -> TapeNode<'p> {
        TapeNode::at(self.nodes, 0, self.source)
    }

    /// Number of tape nodes: one per value and one per object key.
    pub fn node_count(&self) -> usize {
        self.nodes.len()
    }
}

impl std::fmt::Debug for Document<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Document")
            .field("node_count", &self.node_count())
            .finish()
    }
}

#[cfg(test)]
mod tests;
