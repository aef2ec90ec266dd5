//! The contract's `_meta.normalized`: what pre-flight normalization did to
//! a call's arguments, one event per key it acted on or could not place.
//! The event kinds are the contract's closed v1 list; each event's members
//! are the ones the contract requires of its kind.

use bytes::{BufMut, Bytes, BytesMut};

use super::envelope::{write_bounded, write_word};

/// Events written at most (the rest of a hostile call's keys are not
/// listed).
pub const MAX_EVENTS: usize = 100;

/// The kinds of event (the contract's v1 `kind` values).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EventKind {
    /// A key matched one property case-insensitively and was renamed.
    Renamed,
    /// A key matched a property that was also sent: the key was dropped.
    DroppedAlias,
    /// A scalar sent where the property wants an array, wrapped in one.
    Coerced,
    /// A key the schema does not name, sent on as it is.
    UnknownFieldPassedThrough,
    /// A key the schema does not name, which the tool's closed schema
    /// refuses.
    UnknownFieldRejected,
}

impl EventKind {
    /// Every kind, in the contract's order.
    pub const ALL: [EventKind; 5] = [
        EventKind::Renamed,
        EventKind::DroppedAlias,
        EventKind::Coerced,
        EventKind::UnknownFieldPassedThrough,
        EventKind::UnknownFieldRejected,
    ];

    /// The contract's name of the kind.
    pub fn as_str(self) -> &'static str {
        match self {
            EventKind::Renamed => "renamed",
            EventKind::DroppedAlias => "dropped_alias",
            EventKind::Coerced => "coerced",
            EventKind::UnknownFieldPassedThrough => "unknown_field_passed_through",
            EventKind::UnknownFieldRejected => "unknown_field_rejected",
        }
    }
}

/// Why a key was left unknown.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Unplaced {
    /// It matches no property.
    NoMatch,
    /// It matches more than one property case-insensitively.
    Ambiguous,
}

/// One event. `key` is the key as sent; `property` the schema's name.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event<'a> {
    Renamed {
        key: &'a str,
        property: &'a str,
    },
    DroppedAlias {
        key: &'a str,
        property: &'a str,
    },
    /// `property` (as forwarded) held a `from` scalar, now an array.
    Coerced {
        property: &'a str,
        from: &'static str,
    },
    Unknown {
        key: &'a str,
        why: Unplaced,
        rejected: bool,
    },
}

impl Event<'_> {
    pub fn kind(&self) -> EventKind {
        match self {
            Event::Renamed { .. } => EventKind::Renamed,
            Event::DroppedAlias { .. } => EventKind::DroppedAlias,
            Event::Coerced { .. } => EventKind::Coerced,
            Event::Unknown { rejected: true, .. } => EventKind::UnknownFieldRejected,
            Event::Unknown { .. } => EventKind::UnknownFieldPassedThrough,
        }
    }
}

/// The `_meta.normalized` array for `events` (the first [`MAX_EVENTS`]),
/// every key cut at the echo bound.
pub fn render(events: &[Event<'_>]) -> Bytes {
    let mut out = BytesMut::with_capacity(64 * events.len().min(MAX_EVENTS) + 2);
    out.put_u8(b'[');
    for (n, event) in events.iter().take(MAX_EVENTS).enumerate() {
        if n > 0 {
            out.put_u8(b',');
        }
        out.extend_from_slice(b"{\"kind\":");
        write_word(&mut out, event.kind().as_str());
        let reason = match *event {
            Event::Renamed { key, property } => {
                member(&mut out, "from", key);
                member(&mut out, "to", property);
                "schema_canonical_key"
            }
            Event::DroppedAlias { key, property } => {
                member(&mut out, "from", key);
                member(&mut out, "canonical", property);
                "canonical_key_present"
            }
            Event::Coerced { property, from } => {
                member(&mut out, "field", property);
                member(&mut out, "from_type", from);
                member(&mut out, "to_type", "array");
                "schema_wants_array"
            }
            Event::Unknown { key, why, .. } => {
                member(&mut out, "field", key);
                match why {
                    Unplaced::NoMatch => "no_schema_match",
                    Unplaced::Ambiguous => "ambiguous_schema_match",
                }
            }
        };
        member(&mut out, "reason", reason);
        out.put_u8(b'}');
    }
    out.put_u8(b']');
    out.freeze()
}

fn member(out: &mut BytesMut, name: &'static str, text: &str) {
    out.put_u8(b',');
    write_word(out, name);
    out.put_u8(b':');
    write_bounded(out, text);
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::{Value, json};

    #[test]
    fn each_kind_carries_the_members_the_contract_requires() {
        let events = [
            Event::Renamed {
                key: "MarketplaceIds",
                property: "marketplaceIds",
            },
            Event::DroppedAlias {
                key: "REGION",
                property: "region",
            },
            Event::Coerced {
                property: "marketplaceIds",
                from: "string",
            },
            Event::Unknown {
                key: "colour",
                why: Unplaced::NoMatch,
                rejected: false,
            },
            Event::Unknown {
                key: "Id",
                why: Unplaced::Ambiguous,
                rejected: true,
            },
        ];
        let rendered: Value = serde_json::from_slice(&render(&events)).unwrap();
        assert_eq!(
            rendered,
            json!([
                {"kind": "renamed", "from": "MarketplaceIds", "to": "marketplaceIds", "reason": "schema_canonical_key"},
                {"kind": "dropped_alias", "from": "REGION", "canonical": "region", "reason": "canonical_key_present"},
                {"kind": "coerced", "field": "marketplaceIds", "from_type": "string", "to_type": "array", "reason": "schema_wants_array"},
                {"kind": "unknown_field_passed_through", "field": "colour", "reason": "no_schema_match"},
                {"kind": "unknown_field_rejected", "field": "Id", "reason": "ambiguous_schema_match"},
            ])
        );
        let many = vec![events[3]; MAX_EVENTS + 5];
        let rendered: Value = serde_json::from_slice(&render(&many)).unwrap();
        assert_eq!(rendered.as_array().unwrap().len(), MAX_EVENTS);
    }
}
