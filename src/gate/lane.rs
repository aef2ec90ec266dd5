//! Stage 4: choose the lane from `MCP-Protocol-Version` and check the
//! protocol fields a 2026-07-28 request carries in `params._meta`.

use crate::classify::{Classified, Kind};
use crate::parse::{NodeKind, TapeNode, same_bytes, same_text};
use crate::protocol::{Lane, Revision};

/// The `_meta` key of the revision a 2026-07-28 request speaks.
pub const META_PROTOCOL_VERSION: &str = "io.modelcontextprotocol/protocolVersion";
/// The `_meta` key of the capabilities a 2026-07-28 request declares.
pub const META_CLIENT_CAPABILITIES: &str = "io.modelcontextprotocol/clientCapabilities";

/// Why a message has no lane, or breaks its lane's protocol fields.
#[derive(Debug, PartialEq, Eq)]
pub enum LaneRefusal<'a> {
    /// A version no lane serves (from the header, or from `_meta`).
    Unsupported { requested: &'a [u8] },
    /// `_meta` disagrees with `MCP-Protocol-Version` (`header` is `None`
    /// when the header is absent).
    VersionMismatch {
        body: &'a str,
        header: Option<&'a [u8]>,
    },
    /// A required `_meta` field is missing or of the wrong type.
    ProtocolField(ProtocolFieldProblem),
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ProtocolFieldProblem {
    /// The member at fault, as a pointer below the message.
    pub pointer: &'static str,
    /// The JSON type found there, `None` if missing.
    pub found: Option<NodeKind>,
    /// What the member must be.
    pub expected: &'static str,
    /// For a missing member: its name (in the parent at `pointer`).
    pub missing: Option<&'static str>,
}

/// The revision named by `header`, the value of `MCP-Protocol-Version`
/// (absent: 2025-03-26), if served.
pub fn select<'h>(
    header: Option<&'h [u8]>,
    served: &[Revision],
) -> Result<Revision, LaneRefusal<'h>> {
    let Some(value) = header else {
        return if served.contains(&Revision::DEFAULT_WITHOUT_HEADER) {
            Ok(Revision::DEFAULT_WITHOUT_HEADER)
        } else {
            Err(LaneRefusal::Unsupported {
                requested: Revision::DEFAULT_WITHOUT_HEADER.as_str().as_bytes(),
            })
        };
    };
    // Byte comparison: every revision name is ASCII, so a value that is
    // not UTF-8 simply matches none.
    let name = value.trim_ascii();
    served
        .iter()
        .copied()
        .find(|revision| revision.as_str().as_bytes() == name)
        .ok_or(LaneRefusal::Unsupported { requested: value })
}

/// The protocol fields of a request on `revision`'s lane.
pub fn check_protocol_fields<'a>(
    revision: Revision,
    message: &Classified<'a>,
    header: Option<&'a [u8]>,
) -> Result<(), LaneRefusal<'a>> {
    if message.kind != Kind::Request {
        return Ok(());
    }
    // Params that are missing or not an object are the schema stage's to
    // report (an envelope problem).
    if message.params.is_none_or(|p| p.kind() != NodeKind::Object) {
        return Ok(());
    }
    let meta = message.members.meta;
    let (version, capabilities) = protocol_members(meta);
    match revision.lane() {
        Lane::Legacy => {
            // A 2026 client speaking through a 2025 header: the body names
            // a version the header does not.
            if let Some(body) = version.and_then(|v| v.as_str())
                && header.is_none_or(|h| h != body.as_bytes())
            {
                return Err(LaneRefusal::VersionMismatch { body, header });
            }
            Ok(())
        }
        Lane::Modern => {
            require(meta, "/params/_meta", NodeKind::Object, "_meta", "/params")?;
            let version = require(
                version,
                "/params/_meta/io.modelcontextprotocol~1protocolVersion",
                NodeKind::String,
                META_PROTOCOL_VERSION,
                "/params/_meta",
            )?;
            // The header chose a served modern revision: a body naming any
            // other version disagrees with it (-32020), supported or not.
            let body = version.as_str().unwrap_or_default();
            if header.is_none_or(|h| !same_bytes(h.trim_ascii(), body.as_bytes())) {
                return Err(LaneRefusal::VersionMismatch { body, header });
            }
            require(
                capabilities,
                "/params/_meta/io.modelcontextprotocol~1clientCapabilities",
                NodeKind::Object,
                META_CLIENT_CAPABILITIES,
                "/params/_meta",
            )?;
            Ok(())
        }
    }
}

/// `_meta`'s protocol version and client capabilities, in one pass over
/// its members.
fn protocol_members(meta: Option<TapeNode<'_>>) -> (Option<TapeNode<'_>>, Option<TapeNode<'_>>) {
    let (mut version, mut capabilities) = (None, None);
    for (name, value) in meta.iter().flat_map(|meta| meta.members()) {
        if same_text(name, META_PROTOCOL_VERSION) {
            version = Some(value);
        } else if same_text(name, META_CLIENT_CAPABILITIES) {
            capabilities = Some(value);
        }
    }
    (version, capabilities)
}

fn require<'a>(
    node: Option<TapeNode<'a>>,
    pointer: &'static str,
    expected: NodeKind,
    name: &'static str,
    parent: &'static str,
) -> Result<TapeNode<'a>, LaneRefusal<'a>> {
    match node {
        Some(node) if node.kind() == expected => Ok(node),
        Some(node) => Err(LaneRefusal::ProtocolField(ProtocolFieldProblem {
            pointer,
            found: Some(node.kind()),
            expected: kind_name(expected),
            missing: None,
        })),
        None => Err(LaneRefusal::ProtocolField(ProtocolFieldProblem {
            pointer: parent,
            found: None,
            expected: kind_name(expected),
            missing: Some(name),
        })),
    }
}

pub fn kind_name(kind: NodeKind) -> &'static str {
    match kind {
        NodeKind::Null => "null",
        NodeKind::Bool => "boolean",
        NodeKind::Number => "number",
        NodeKind::String => "string",
        NodeKind::Array => "array",
        NodeKind::Object => "object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SERVED: [Revision; 2] = [Revision::V2026_07_28, Revision::V2025_11_25];

    #[test]
    fn the_header_names_a_served_revision_around_spaces_and_tabs() {
        assert_eq!(
            select(Some(b"2026-07-28"), &SERVED),
            Ok(Revision::V2026_07_28)
        );
        assert_eq!(
            select(Some(b" 2025-11-25\t"), &SERVED),
            Ok(Revision::V2025_11_25)
        );
    }

    #[test]
    fn an_unserved_unknown_or_non_utf8_version_is_refused_as_sent() {
        for value in [
            &b"2025-06-18"[..],
            b"2099-01-01",
            b"2026-07-28x",
            b"\xFF2026-07-28",
            b"",
        ] {
            assert_eq!(
                select(Some(value), &SERVED),
                Err(LaneRefusal::Unsupported { requested: value })
            );
        }
    }

    #[test]
    fn without_the_header_the_oldest_revision_is_assumed_only_when_served() {
        assert_eq!(
            select(None, &[Revision::V2025_03_26]),
            Ok(Revision::V2025_03_26)
        );
        assert_eq!(
            select(None, &SERVED),
            Err(LaneRefusal::Unsupported {
                requested: b"2025-03-26"
            })
        );
    }
}
