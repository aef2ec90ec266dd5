//! The request headers the gate reads, from whatever the transport holds.

/// Case-insensitive header lookup. Implemented for plain pair slices (the
/// library and `mcpgate check`) and by the server for its parsed heads.
pub trait RequestHeaders {
    /// The value of the first header named `name` (ASCII case-insensitive).
    fn header(&self, name: &str) -> Option<&[u8]>;
}

impl<N: AsRef<str>, V: AsRef<[u8]>> RequestHeaders for [(N, V)] {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.iter()
            .find(|(n, _)| n.as_ref().eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_ref())
    }
}

impl<N: AsRef<str>, V: AsRef<[u8]>> RequestHeaders for Vec<(N, V)> {
    fn header(&self, name: &str) -> Option<&[u8]> {
        self.as_slice().header(name)
    }
}

/// The header names the gate reads, written once.
pub mod names {
    pub const PROTOCOL_VERSION: &str = "MCP-Protocol-Version";
    pub const METHOD: &str = "Mcp-Method";
    pub const NAME: &str = "Mcp-Name";
}
