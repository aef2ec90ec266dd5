//! The request headers the gate reads, from whatever the transport holds.

use super::fields::{FieldError, PARAM_PREFIX};

/// Case-insensitive header lookup. Implemented for plain pair slices (the
/// library and `mcpgate check`), by the server for its parsed heads, and,
/// with the `http` feature, for `http::HeaderMap` (axum, hyper).
pub trait RequestHeaders {
    /// The value of the first header named `name` (ASCII case-insensitive).
    fn header(&self, name: &str) -> Option<&[u8]>;

    /// A field the gate or the upstream reads held twice (or as two values
    /// joined), or nominated by `Connection`: the gate would check one copy
    /// while a forwarder passing every copy on lets the upstream act on
    /// another, so [`crate::Gate::check`] refuses the message (400) before
    /// reading any header. `None` by default: for headers whose transport
    /// refused such a head already (the server's) or that the caller built.
    fn field_error(&self) -> Option<FieldError> {
        None
    }

    /// The name of the first `Mcp-Param-*` header that `mirrored` does not
    /// accept (it is given the whole name). The gate holds every argument
    /// header it is sent to an annotation of the called tool: one that
    /// nothing checks is refused, never forwarded. `None` by default: for
    /// headers that cannot list their names (implement it where they can).
    fn unmirrored_param(&self, mirrored: &dyn Fn(&str) -> bool) -> Option<&str> {
        let _ = mirrored;
        None
    }
}

/// [`RequestHeaders::unmirrored_param`] over a list of names.
pub(crate) fn unmirrored_in<'n>(
    names: impl Iterator<Item = &'n str>,
    mirrored: &dyn Fn(&str) -> bool,
) -> Option<&'n str> {
    names
        .filter(|name| {
            name.as_bytes()
                .get(..PARAM_PREFIX.len())
                .is_some_and(|p| p.eq_ignore_ascii_case(PARAM_PREFIX.as_bytes()))
        })
        .find(|name| !mirrored(name))
}

impl<N: AsRef<str>, V: AsRef<[u8]>> RequestHeaders for [(N, V)] {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.iter()
            .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }

    fn unmirrored_param(&self, mirrored: &dyn Fn(&str) -> bool) -> Option<&str> {
        unmirrored_in(self.iter().map(|(n, _)| n.as_ref()), mirrored)
    }
}

impl<N: AsRef<str>, V: AsRef<[u8]>> RequestHeaders for Vec<(N, V)> {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.as_slice().header(name)
    }

    fn unmirrored_param(&self, mirrored: &dyn Fn(&str) -> bool) -> Option<&str> {
        self.as_slice().unmirrored_param(mirrored)
    }
}

/// An axum or hyper handler's headers, passed as they are. A `HeaderMap`
/// keeps every copy of a field, so it reports repeats and nominations
/// ([`RequestHeaders::field_error`]) by the server's own rules: a request
/// holding `Mcp-Name` twice is refused by the gate, whatever the embedder
/// forwards afterwards.
#[cfg(feature = "http")]
#[cfg_attr(docsrs, doc(cfg(feature = "http")))]
impl RequestHeaders for http::HeaderMap {
    fn header(&self, name: &str) -> Option<&[u8]> {
        // Case-insensitive: the map lowercases `name` to look it up.
        self.get(name).map(http::HeaderValue::as_bytes)
    }

    fn field_error(&self) -> Option<FieldError> {
        super::fields::check_map(self).err()
    }

    fn unmirrored_param(&self, mirrored: &dyn Fn(&str) -> bool) -> Option<&str> {
        unmirrored_in(self.keys().map(http::HeaderName::as_str), mirrored)
    }
}

/// The header names the gate reads, written once.
pub mod names {
    pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
    pub const METHOD: &str = "Mcp-Method";
    pub const NAME: &str = "Mcp-Name";
}

#[cfg(all(test, feature = "http"))]
mod tests {
    use http::{HeaderMap, HeaderName, HeaderValue};

    use super::*;

    fn map(fields: &[(&'static str, &'static str)]) -> HeaderMap {
        let mut map = HeaderMap::new();
        for &(name, value) in fields {
            map.append(
                HeaderName::from_bytes(name.as_bytes()).unwrap(),
                HeaderValue::from_static(value),
            );
        }
        map
    }

    #[test]
    fn a_header_map_is_read_case_insensitively() {
        let headers = map(&[("mcp-method", "tools/list")]);
        assert_eq!(headers.header("Mcp-Method"), Some(&b"tools/list"[..]));
        assert_eq!(headers.header("Mcp-Name"), None);
        assert_eq!(headers.field_error(), None);
    }

    #[test]
    fn a_header_map_reports_repeats_joins_and_nominations_as_the_server_does() {
        for (fields, error) in [
            (
                &[("Mcp-Name", "add"), ("mcp-name", "delete")][..],
                FieldError::Repeated("Mcp-Name"),
            ),
            (
                &[("Mcp-Method", "tools/call, tools/list")],
                FieldError::Repeated("Mcp-Method"),
            ),
            (
                &[
                    ("MCP-Protocol-Version", "2026-07-28"),
                    ("MCP-Protocol-Version", "2025-03-26"),
                ],
                FieldError::Repeated("MCP-Protocol-Version"),
            ),
            (
                &[("Mcp-Param-Account", "a"), ("Mcp-Param-Account", "b")],
                FieldError::Repeated("Mcp-Param-*"),
            ),
            (
                &[("Authorization", "Bearer a"), ("Authorization", "Bearer b")],
                FieldError::Repeated("Authorization"),
            ),
            (
                &[("Accept", "*/*"), ("Connection", "keep-alive, Mcp-Name")],
                FieldError::Nominated("Mcp-*"),
            ),
            (
                &[("Content_Length", "5")],
                FieldError::Underscored("Content-Length"),
            ),
            (
                &[("mcp_method", "tools/call")],
                FieldError::Underscored("Mcp-Method"),
            ),
        ] {
            assert_eq!(map(fields).field_error(), Some(error), "{fields:?}");
        }
        let fine = map(&[
            ("Mcp-Param-A", "1"),
            ("Mcp-Param-B", "1"),
            ("Mcp-Name", "file:///a,b"),
            ("Accept", "application/json"),
            ("Accept", "text/event-stream"),
            ("Connection", "keep-alive"),
        ]);
        assert_eq!(fine.field_error(), None);
    }

    #[test]
    fn every_transport_lists_the_argument_headers_no_annotation_names() {
        let annotated = |name: &str| name.eq_ignore_ascii_case("Mcp-Param-Region");
        let pairs = vec![
            ("Mcp-Param-Region", "EU"),
            ("X-Other", "1"),
            ("mcp-param-order", "7"),
        ];
        assert_eq!(pairs.unmirrored_param(&annotated), Some("mcp-param-order"));
        assert_eq!(pairs[..2].unmirrored_param(&annotated), None);
        let headers = map(&pairs);
        assert_eq!(
            headers.unmirrored_param(&annotated),
            Some("mcp-param-order")
        );
        assert_eq!(map(&pairs[..2]).unmirrored_param(&annotated), None);
    }

    #[test]
    fn the_gate_refuses_a_header_map_holding_a_field_it_reads_twice() {
        use crate::gate::{Gate, GateConfig, Verdict};
        use crate::reject::Reason;
        let gate = Gate::new(GateConfig::default()).unwrap();
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
        // The first copy alone would pass: the second is what an upstream
        // reading the last copy would act on.
        let twice = map(&[("Mcp-Method", "tools/list"), ("Mcp-Method", "tools/call")]);
        let Verdict::Reject(rejection) = gate.check(&twice, body) else {
            panic!("a repeated Mcp-Method was allowed")
        };
        assert_eq!(rejection.reason, Reason::RepeatedHeader);
        assert_eq!(rejection.status, 400);
        let answer: serde_json::Value = serde_json::from_slice(&rejection.body).unwrap();
        assert_eq!(answer["error"]["data"]["header"], "Mcp-Method");
        assert_eq!(gate.rejections().count(Reason::RepeatedHeader), 1);
        let once = map(&[("Mcp-Method", "tools/list")]);
        assert!(matches!(gate.check(&once, body), Verdict::Allow(_)));
    }
}
