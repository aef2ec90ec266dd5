//! The pairs of count bounds (`minLength`/`maxLength`, `minItems`/
//! `maxItems`, `minProperties`/`maxProperties`): each read, checked and
//! named one way, from one row per pair.

use jsonschema::json::Json;
use serde_json::{Map, Value};

use super::super::Keyword;
use super::super::texts::{self, Msg};
use super::super::walk::Walker;

/// One bound of a pair: its schema key, the keyword a problem names and
/// the text that says it.
type Bound = (&'static str, Keyword, fn(u64) -> String);

/// A pair of count keywords.
pub(crate) struct Pair {
    min: Bound,
    max: Bound,
}

pub(crate) const LENGTH: Pair = Pair {
    min: ("minLength", Keyword::MinLength, texts::min_length),
    max: ("maxLength", Keyword::MaxLength, texts::max_length),
};

pub(crate) const ITEMS: Pair = Pair {
    min: ("minItems", Keyword::MinItems, texts::min_items),
    max: ("maxItems", Keyword::MaxItems, texts::max_items),
};

pub(crate) const PROPERTIES: Pair = Pair {
    min: (
        "minProperties",
        Keyword::MinProperties,
        texts::min_properties,
    ),
    max: (
        "maxProperties",
        Keyword::MaxProperties,
        texts::max_properties,
    ),
};

/// The bounds of one pair a schema node sets, each with its text (built
/// once, with the explainer).
pub(crate) struct Counts {
    min: Option<(u64, String)>,
    max: Option<(u64, String)>,
}

impl Counts {
    pub fn compile(schema: &Map<String, Value>, pair: &Pair) -> Counts {
        let read =
            |&(key, _, text): &Bound| schema.get(key).and_then(as_count).map(|n| (n, text(n)));
        Counts {
            min: read(&pair.min),
            max: read(&pair.max),
        }
    }

    /// Whether the node sets neither bound.
    pub fn is_empty(&self) -> bool {
        self.min.is_none() && self.max.is_none()
    }

    /// The bound `keyword` names (one of `pair`'s).
    pub fn limit(&self, pair: &Pair, keyword: Keyword) -> Option<u64> {
        let bound = if keyword == pair.min.1 {
            &self.min
        } else if keyword == pair.max.1 {
            &self.max
        } else {
            return None;
        };
        bound.as_ref().map(|(limit, _)| *limit)
    }

    /// Reports each bound the instance breaks: `outside(low, high)` says
    /// whether its count falls outside `low..=high`.
    #[inline]
    pub fn check<'a, F: Json>(
        &self,
        w: &mut Walker<'_, 'a, F>,
        instance: &F::Node<'a>,
        pair: &Pair,
        outside: impl Fn(u64, u64) -> bool,
    ) {
        if let Some((min, text)) = &self.min
            && outside(*min, u64::MAX)
        {
            w.report(instance, pair.min.1, Msg::Schema(text));
        }
        if let Some((max, text)) = &self.max
            && outside(0, *max)
        {
            w.report(instance, pair.max.1, Msg::Schema(text));
        }
    }
}

/// A non-negative integer bound (`3` or `3.0`).
pub(crate) fn as_count(value: &Value) -> Option<u64> {
    value.as_u64().or_else(|| {
        value
            .as_f64()
            .filter(|f| *f >= 0.0 && f.fract() == 0.0 && *f < u64::MAX as f64)
            .map(|f| f as u64)
    })
}
