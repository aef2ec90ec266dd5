//! The error-code table and the closed list of `error.data` keys: the only
//! place a JSON-RPC error number or a data key is written down.

/// A condition the gateway answers with a JSON-RPC error. Call sites name
/// the condition, never the number.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Condition {
    ParseError,
    InvalidRequest,
    MethodNotFound,
    InvalidParams,
    InternalError,
    HeaderMismatch,
    MissingRequiredClientCapability,
    UnsupportedProtocolVersion,
}

impl Condition {
    pub const ALL: [Condition; 8] = [
        Condition::ParseError,
        Condition::InvalidRequest,
        Condition::MethodNotFound,
        Condition::InvalidParams,
        Condition::InternalError,
        Condition::HeaderMismatch,
        Condition::MissingRequiredClientCapability,
        Condition::UnsupportedProtocolVersion,
    ];

    /// (code, default message): the table.
    const fn entry(self) -> (i32, &'static str) {
        match self {
            Condition::ParseError => (-32700, "Parse error"),
            Condition::InvalidRequest => (-32600, "Invalid Request"),
            Condition::MethodNotFound => (-32601, "Method not found"),
            Condition::InvalidParams => (-32602, "Invalid params"),
            Condition::InternalError => (-32603, "Internal error"),
            Condition::HeaderMismatch => (-32020, "Header mismatch"),
            Condition::MissingRequiredClientCapability => {
                (-32021, "Missing required client capability")
            }
            Condition::UnsupportedProtocolVersion => (-32022, "Unsupported protocol version"),
        }
    }

    pub const fn code(self) -> i32 {
        self.entry().0
    }

    pub const fn default_message(self) -> &'static str {
        self.entry().1
    }
}

/// The closed list of keys an `error.data` object may hold. A new key joins
/// here and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataKey {
    Errors,
    Total,
    Header,
    Expected,
    Received,
    Supported,
    Requested,
    RequiredCapabilities,
}

impl DataKey {
    pub const ALL: [DataKey; 8] = [
        DataKey::Errors,
        DataKey::Total,
        DataKey::Header,
        DataKey::Expected,
        DataKey::Received,
        DataKey::Supported,
        DataKey::Requested,
        DataKey::RequiredCapabilities,
    ];

    pub const fn as_str(self) -> &'static str {
        match self {
            DataKey::Errors => "errors",
            DataKey::Total => "total",
            DataKey::Header => "header",
            DataKey::Expected => "expected",
            DataKey::Received => "received",
            DataKey::Supported => "supported",
            DataKey::Requested => "requested",
            DataKey::RequiredCapabilities => "requiredCapabilities",
        }
    }

    pub fn parse(key: &str) -> Option<DataKey> {
        DataKey::ALL.into_iter().find(|k| k.as_str() == key)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn codes_are_distinct_and_messages_are_one_line() {
        let mut codes: Vec<i32> = Condition::ALL.iter().map(|c| c.code()).collect();
        codes.sort();
        codes.dedup();
        assert_eq!(codes.len(), Condition::ALL.len());
        for condition in Condition::ALL {
            assert!(!condition.default_message().contains('\n'));
        }
    }

    #[test]
    fn data_keys_round_trip() {
        for key in DataKey::ALL {
            assert_eq!(DataKey::parse(key.as_str()), Some(key));
        }
        assert_eq!(DataKey::parse("reason"), None);
    }
}
