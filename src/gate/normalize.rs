//! Pre-flight normalization of a `tools/call`'s arguments (the envelope
//! contract's "Pre-flight argument normalization"), before the value gate:
//! against the tool's top-level properties, a key that names one of them
//! case aside is renamed to it, or dropped when that property was sent too;
//! a scalar sent where the property wants an array is wrapped in one; a key
//! that names none (or more than one) is left as it is and reported.
//! Nested objects are not touched.
//!
//! A call that needs nothing changed costs one lookup per top-level key and
//! allocates nothing. A changed call is re-encoded with only its
//! `arguments` value replaced (`rewrite`).

use smallvec::SmallVec;

use crate::catalog::keys::{KeySet, Match, Property};
use crate::distill::TypeMask;
use crate::parse::span;
use crate::parse::{NodeKind, TapeNode};
use crate::reject::normalized::{Event, MAX_EVENTS, Unplaced};

/// What is done to one member of the arguments.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action<'a> {
    /// Renamed to the property, its value wrapped in an array or not.
    Rename { to: &'a str, wrap: bool },
    /// Its value wrapped in an array.
    Wrap,
    /// Left out.
    Drop,
}

/// What normalization does to a call's arguments.
#[derive(Debug, Default)]
pub struct Plan<'a> {
    /// The events, in the order of the keys (the first [`MAX_EVENTS`]).
    pub events: SmallVec<[Event<'a>; 4]>,
    /// What changes, by member index, in member order.
    pub actions: SmallVec<[(usize, Action<'a>); 4]>,
}

impl<'a> Plan<'a> {
    /// Whether the arguments change.
    pub fn changes(&self) -> bool {
        !self.actions.is_empty()
    }

    /// Whether nothing changes and nothing is told.
    pub fn is_empty(&self) -> bool {
        self.actions.is_empty() && self.events.is_empty()
    }

    fn event(&mut self, event: Event<'a>) {
        if self.events.len() < MAX_EVENTS {
            self.events.push(event);
        }
    }

    /// Whether `value`, sent for `property`, is to be wrapped in an array
    /// (and if so, says so).
    fn coerce(&mut self, property: &'a Property, value: TapeNode<'_>) -> bool {
        let Some(from) = scalar_for_array(property, value) else {
            return false;
        };
        self.event(Event::Coerced {
            property: &property.name,
            from,
        });
        true
    }
}

/// The plan for `arguments` (an object) against `keys`.
pub fn plan<'a>(keys: &'a KeySet, arguments: TapeNode<'a>) -> Plan<'a> {
    // First as if every key were sent as named (the common case: one pass,
    // nothing allocated); at a key that is not, again with the properties
    // sent as named marked, so that a later alias of one is dropped.
    walk(keys, arguments, None, |_, key| keys.lookup(key)).unwrap_or_else(|| {
        // Each key looked up once for both passes.
        let found: SmallVec<[Match<'a>; 64]> = arguments
            .members()
            .map(|(key, _)| keys.lookup(key))
            .collect();
        let mut taken: SmallVec<[bool; 64]> = smallvec::smallvec![false; keys.properties().len()];
        for matched in &found {
            if let Match::Exact(_, at) = matched {
                taken[*at] = true;
            }
        }
        walk(keys, arguments, Some(&mut taken), |index, _| found[index]).unwrap_or_default()
    })
}

/// One pass over the keys, each matched by `lookup` (given its index);
/// `None` at a key not sent as named when `taken` (the properties sent or
/// renamed to so far) is not given.
fn walk<'a>(
    keys: &'a KeySet,
    arguments: TapeNode<'a>,
    mut taken: Option<&mut [bool]>,
    lookup: impl Fn(usize, &'a str) -> Match<'a>,
) -> Option<Plan<'a>> {
    let mut plan = Plan::default();
    for (index, (key, value)) in arguments.members().enumerate() {
        let found = lookup(index, key);
        if let Match::Exact(property, _) = found {
            if plan.coerce(property, value) {
                plan.actions.push((index, Action::Wrap));
            }
            continue;
        }
        if keys.patterns {
            // A key no property names may be one a pattern admits: only
            // keys sent as named are acted on.
            continue;
        }
        let taken = taken.as_deref_mut()?;
        match found {
            Match::Folded(property, at) if taken[at] => {
                plan.event(Event::DroppedAlias {
                    key,
                    property: &property.name,
                });
                plan.actions.push((index, Action::Drop));
            }
            Match::Folded(property, at) => {
                taken[at] = true;
                plan.event(Event::Renamed {
                    key,
                    property: &property.name,
                });
                let wrap = plan.coerce(property, value);
                plan.actions.push((
                    index,
                    Action::Rename {
                        to: &property.name,
                        wrap,
                    },
                ));
            }
            unplaced => plan.event(Event::Unknown {
                key,
                why: if unplaced == Match::Ambiguous {
                    Unplaced::Ambiguous
                } else {
                    Unplaced::NoMatch
                },
                rejected: keys.closed,
            }),
        }
    }
    Some(plan)
}

/// The type name of a scalar `value` the property does not admit where it
/// admits an array.
fn scalar_for_array(property: &Property, value: TapeNode<'_>) -> Option<&'static str> {
    let admits = property.admits.0;
    if admits & TypeMask::ARRAY == 0 {
        return None;
    }
    let (name, admitted) = match value.kind() {
        NodeKind::String => ("string", TypeMask::STRING),
        NodeKind::Bool => ("boolean", TypeMask::BOOLEAN),
        NodeKind::Number if value.is_integer() => ("integer", TypeMask::INTEGER | TypeMask::NUMBER),
        NodeKind::Number => ("number", TypeMask::NUMBER),
        NodeKind::Null | NodeKind::Array | NodeKind::Object => return None,
    };
    (admits & admitted == 0).then_some(name)
}

/// `body` with its `params.arguments` re-encoded by `plan`: every other
/// byte as sent, each kept member's key and value bytes as sent. `None`
/// when the arguments cannot be found as the plan read them.
pub fn rewrite(body: &[u8], plan: &Plan<'_>, members: usize) -> Option<Vec<u8>> {
    let arguments = span::value_at(body, &["params", "arguments"])?;
    let mut out = Vec::with_capacity(body.len() + 2 * plan.actions.len() + 64);
    out.extend_from_slice(&body[..arguments.start]);
    out.push(b'{');
    let mut actions = plan.actions.iter().peekable();
    let mut written = 0;
    let mut seen = 0;
    for (index, member) in span::members(body, arguments.start)?.enumerate() {
        seen += 1;
        let action = actions
            .next_if(|(at, _)| *at == index)
            .map(|(_, action)| *action);
        if action == Some(Action::Drop) {
            continue;
        }
        if written > 0 {
            out.push(b',');
        }
        written += 1;
        match action {
            Some(Action::Rename { to, .. }) => {
                serde_json::to_writer(&mut out, to).ok()?;
            }
            _ => out.extend_from_slice(&body[member.key]),
        }
        out.push(b':');
        let wrap = matches!(
            action,
            Some(Action::Wrap | Action::Rename { wrap: true, .. })
        );
        if wrap {
            out.push(b'[');
        }
        out.extend_from_slice(&body[member.value]);
        if wrap {
            out.push(b']');
        }
    }
    if seen != members || actions.next().is_some() {
        return None;
    }
    out.push(b'}');
    out.extend_from_slice(&body[arguments.end..]);
    Some(out)
}
