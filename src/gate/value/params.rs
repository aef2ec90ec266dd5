//! `Mcp-Param-{Name}` binding (2026-07-28): each argument a tool annotates
//! with `x-mcp-header` travels also as a header, which must be there
//! exactly when the argument is there and not null, and must equal it
//! after base64-sentinel decoding: strings byte for byte, integers
//! numerically (`42` and `42.0` agree), booleans as `true`/`false`.
//! An `Mcp-Param-*` header no annotation names is refused (the gate:
//! nothing would check it before the upstream read it). On the 2025
//! lanes, which do not have these headers, the ones a client sends are
//! held to the body all the same, but none is required (as for
//! `Mcp-Name`: see `binding`).

use std::borrow::Cow;

use super::super::binding::{Mismatch, MismatchCause, decode_sentinel, is_field_value};
use super::super::headers::RequestHeaders;
use crate::catalog::header_params::HeaderParam;
use crate::parse::{NodeKind, TapeNode};

/// Checks every annotated argument of a call against its header;
/// `lane_requires`: an argument's header must be there (the modern lane).
pub fn check<'a>(
    params: &'a [HeaderParam],
    arguments: Option<TapeNode<'a>>,
    headers: &'a (impl RequestHeaders + ?Sized),
    lane_requires: bool,
) -> Result<(), Mismatch<'a>> {
    for param in params {
        let value = arguments
            .and_then(|arguments| lookup(arguments, &param.path))
            .filter(|value| !value.is_null());
        let header = headers.header(&param.header);
        match (value, header) {
            (None, None) => {}
            (Some(_), None) if !lane_requires => {}
            (None, Some(raw)) => {
                return Err(Mismatch {
                    header: &param.header,
                    expected: None,
                    received: Some(Cow::Borrowed(raw)),
                    cause: MismatchCause::Unexpected,
                });
            }
            (Some(value), None) => {
                return Err(Mismatch {
                    header: &param.header,
                    expected: Some(render(value)),
                    received: None,
                    cause: MismatchCause::Missing,
                });
            }
            (Some(value), Some(raw)) => compare(&param.header, value, raw)?,
        }
    }
    Ok(())
}

/// The member at `path` (member names) under `arguments`.
fn lookup<'a>(arguments: TapeNode<'a>, path: &[String]) -> Option<TapeNode<'a>> {
    path.iter().try_fold(arguments, |node, name| node.get(name))
}

fn compare<'a>(header: &'a str, value: TapeNode<'a>, raw: &'a [u8]) -> Result<(), Mismatch<'a>> {
    let malformed = || Mismatch {
        header,
        expected: Some(render(value)),
        received: Some(Cow::Borrowed(raw)),
        cause: MismatchCause::Malformed,
    };
    if !is_field_value(raw) {
        return Err(malformed());
    }
    let decoded = decode_sentinel(raw).ok_or_else(malformed)?;
    let equal = match value.kind() {
        NodeKind::String => value.as_str().map(str::as_bytes) == Some(decoded.as_ref()),
        NodeKind::Number => std::str::from_utf8(&decoded)
            .ok()
            .and_then(|text| text.trim().parse::<f64>().ok())
            .is_some_and(|sent| sent.is_finite() && value.as_f64() == Some(sent)),
        NodeKind::Bool => {
            let expected: &[u8] = if value.as_bool() == Some(true) {
                b"true"
            } else {
                b"false"
            };
            decoded.as_ref() == expected
        }
        _ => false,
    };
    if equal {
        Ok(())
    } else {
        Err(Mismatch {
            header,
            expected: Some(render(value)),
            received: Some(decoded),
            cause: MismatchCause::Differs,
        })
    }
}

/// An argument as its header would carry it (before encoding).
fn render(value: TapeNode<'_>) -> Cow<'_, str> {
    match value.kind() {
        NodeKind::String => Cow::Borrowed(value.as_str().unwrap_or_default()),
        NodeKind::Bool => Cow::Borrowed(if value.as_bool() == Some(true) {
            "true"
        } else {
            "false"
        }),
        NodeKind::Number => Cow::Owned(match (value.as_i64(), value.as_u64()) {
            (Some(n), _) => n.to_string(),
            (None, Some(n)) => n.to_string(),
            _ => value.as_f64().unwrap_or_default().to_string(),
        }),
        _ => Cow::Borrowed(""),
    }
}
