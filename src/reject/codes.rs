//! The error-code table, the closed list of `error.data` keys, and the
//! tool-dialect `error_code` table: the only place a JSON-RPC error number,
//! a data key or a tool error code is written down.

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

    /// Whether the 2026-07-28 schema ties this error to `400 Bad Request`
    /// over HTTP (`-32020`, `-32021`, `-32022`): answered with 400 even
    /// where a refusal of a request otherwise goes with 200.
    pub const fn bound_to_400(self) -> bool {
        matches!(
            self,
            Condition::HeaderMismatch
                | Condition::MissingRequiredClientCapability
                | Condition::UnsupportedProtocolVersion
        )
    }
}

/// The closed list of keys an `error.data` object may hold. A new key joins
/// here and nowhere else.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DataKey {
    /// The distilled locations of a schema refusal.
    Errors,
    /// How many distinct locations had a problem, reported or not.
    Total,
    /// The header a mismatch, a repeat or a nomination is about.
    Header,
    /// What the body says the header should hold.
    Expected,
    /// What the header held.
    Received,
    /// The revisions the gate serves.
    Supported,
    /// The revision the request named.
    Requested,
    /// The client capabilities a request needs and did not declare.
    RequiredCapabilities,
}

impl DataKey {
    /// Every key, in the order they are written.
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

    /// The key as written in `error.data`.
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

    /// The key named `key` (`None`: not one of the list).
    pub fn parse(key: &str) -> Option<DataKey> {
        DataKey::ALL.into_iter().find(|k| k.as_str() == key)
    }
}

/// A tool-dialect `error_code` (ARCHITECTURE.md, "The value gate"): the code a schema keyword
/// maps to, with the canonical summary and hint templates of the error
/// envelope contract (placeholders in braces: `{path}`, `{limit}`,
/// `{allowed}`, `{extra}`, `{format}`, `{validator}`, ...).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ToolErrorCode {
    /// The JSON Schema keyword (validator name).
    pub keyword: &'static str,
    pub code: &'static str,
    pub summary: &'static str,
    pub hint: &'static str,
    /// Whether `hint` names a value only the schema gives (`{limit}`,
    /// `{allowed}`): read once here, not searched for at each refusal.
    pub hint_needs_value: bool,
    /// Where `hint`'s placeholders stand, found once here: filling it
    /// scans nothing.
    pub hint_placeholders: Placeholders,
}

/// Placeholders a template holds at most.
const MAX_PLACEHOLDERS: usize = 8;

/// The `{name}` placeholders of a template (a brace, a name of ASCII
/// letters and underscores, possibly empty, a brace), in order: each as
/// the span of its braces.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Placeholders {
    spans: [(u16, u16); MAX_PLACEHOLDERS],
    count: u8,
}

impl Placeholders {
    /// Those of `template` (at most [`MAX_PLACEHOLDERS`]: a template with
    /// more does not compile).
    pub const fn of(template: &str) -> Placeholders {
        let text = template.as_bytes();
        assert!(
            text.len() <= u16::MAX as usize,
            "a template's spans are u16"
        );
        let mut found = Placeholders {
            spans: [(0, 0); MAX_PLACEHOLDERS],
            count: 0,
        };
        let mut at = 0;
        while at < text.len() {
            if text[at] == b'{' {
                let mut end = at + 1;
                while end < text.len() && (text[end].is_ascii_alphabetic() || text[end] == b'_') {
                    end += 1;
                }
                if end < text.len() && text[end] == b'}' {
                    assert!(
                        (found.count as usize) < MAX_PLACEHOLDERS,
                        "too many placeholders"
                    );
                    found.spans[found.count as usize] = (at as u16, end as u16 + 1);
                    found.count += 1;
                    at = end;
                }
            }
            at += 1;
        }
        found
    }

    /// Each placeholder's span, braces included, in order.
    pub fn spans(&self) -> impl Iterator<Item = (usize, usize)> + '_ {
        self.spans[..usize::from(self.count)]
            .iter()
            .map(|&(start, end)| (usize::from(start), usize::from(end)))
    }
}

/// An entry of the table: its texts are the contract's, checked against
/// its mapping by the value gate's tests.
pub(crate) const fn tool_code(
    keyword: &'static str,
    code: &'static str,
    summary: &'static str,
    hint: &'static str,
) -> ToolErrorCode {
    ToolErrorCode {
        keyword,
        code,
        summary,
        hint,
        hint_needs_value: names(hint, "{limit}") || names(hint, "{allowed}"),
        hint_placeholders: Placeholders::of(hint),
    }
}

/// Whether `text` holds `part` (a `const` `str::contains`).
const fn names(text: &str, part: &str) -> bool {
    let (text, part) = (text.as_bytes(), part.as_bytes());
    let mut at = 0;
    while at + part.len() <= text.len() {
        let mut same = 0;
        while same < part.len() && text[at + same] == part[same] {
            same += 1;
        }
        if same == part.len() {
            return true;
        }
        at += 1;
    }
    false
}

/// Keyword → `error_code`, as the envelope contract maps them.
pub const TOOL_ERROR_CODES: [ToolErrorCode; 18] = [
    tool_code(
        "type",
        "SCHEMA_TYPE_MISMATCH",
        "Field {path} expected {expected_type}, received {received_type}.",
        "Send a value of the schema-declared type for {path}.",
    ),
    tool_code(
        "required",
        "SCHEMA_REQUIRED",
        "Required field {path} is missing.",
        "Include {path} in the request body.",
    ),
    tool_code(
        "maxItems",
        "SCHEMA_MAX_ITEMS",
        "Array {path} exceeds maxItems={limit} (got {actual}).",
        "Trim {path} to at most {limit} items.",
    ),
    tool_code(
        "minItems",
        "SCHEMA_MIN_ITEMS",
        "Array {path} below minItems={limit} (got {actual}).",
        "Provide at least {limit} items in {path}.",
    ),
    tool_code(
        "maxLength",
        "SCHEMA_MAX_LENGTH",
        "String {path} exceeds maxLength={limit}.",
        "Shorten {path} to at most {limit} characters.",
    ),
    tool_code(
        "minLength",
        "SCHEMA_MIN_LENGTH",
        "String {path} below minLength={limit}.",
        "Provide at least {limit} characters in {path}.",
    ),
    tool_code(
        "maximum",
        "SCHEMA_MAXIMUM",
        "Number {path} exceeds maximum={limit}.",
        "Use a value at most {limit} for {path}.",
    ),
    tool_code(
        "minimum",
        "SCHEMA_MINIMUM",
        "Number {path} below minimum={limit}.",
        "Use a value at least {limit} for {path}.",
    ),
    tool_code(
        "enum",
        "SCHEMA_ENUM_MISMATCH",
        "Field {path} must be one of {allowed}.",
        "Set {path} to one of: {allowed}.",
    ),
    tool_code(
        "pattern",
        "SCHEMA_PATTERN_MISMATCH",
        "Field {path} does not match required pattern.",
        "Adjust {path} to match the schema pattern.",
    ),
    tool_code(
        "format",
        "SCHEMA_FORMAT_INVALID",
        "Field {path} is not a valid {format}.",
        "Provide a valid {format} for {path}.",
    ),
    tool_code(
        "additionalProperties",
        "SCHEMA_ADDITIONAL_PROPERTIES",
        "Field {path} contains unexpected key {extra}.",
        "Remove unknown key {extra} or check schema for typos.",
    ),
    tool_code(
        "oneOf",
        "SCHEMA_ONE_OF_FAILED",
        "Field {path} matched no oneOf branch.",
        "Inspect schema branches for {path} and pick exactly one.",
    ),
    tool_code(
        "anyOf",
        "SCHEMA_ANY_OF_FAILED",
        "Field {path} matched no anyOf branch.",
        "Inspect schema branches for {path} and provide a matching shape.",
    ),
    tool_code(
        "allOf",
        "SCHEMA_ALL_OF_FAILED",
        "Field {path} failed an allOf constraint.",
        "Field {path} must satisfy every allOf branch simultaneously.",
    ),
    tool_code(
        "uniqueItems",
        "SCHEMA_UNIQUE_ITEMS",
        "Array {path} has duplicate items where uniqueItems=true.",
        "Remove duplicates from {path}.",
    ),
    tool_code(
        "const",
        "SCHEMA_CONST_MISMATCH",
        "Field {path} must equal the schema-declared constant.",
        "Set {path} to the schema-declared constant.",
    ),
    tool_code(
        "multipleOf",
        "SCHEMA_MULTIPLE_OF",
        "Field {path} must be a multiple of the declared base.",
        "Provide a multiple of the schema-declared base for {path}.",
    ),
];

/// The code of every keyword the table does not list.
pub const TOOL_ERROR_FALLBACK: ToolErrorCode = tool_code(
    "",
    "SCHEMA_VALIDATION_FAILED",
    "Field {path} failed schema validation ({validator}).",
    "Inspect the schema for {path} and adjust the value.",
);

/// The `error_code` entry of a keyword (the fallback when unlisted).
pub fn tool_error_code(keyword: &str) -> &'static ToolErrorCode {
    TOOL_ERROR_CODES
        .iter()
        .find(|entry| entry.keyword == keyword)
        .unwrap_or(&TOOL_ERROR_FALLBACK)
}

/// `error_kind` of an envelope for refused tool arguments.
pub const TOOL_INPUT_ERROR_KIND: &str = "mcp_input_validation";
/// `_envelope_version` of the envelopes written.
pub const ENVELOPE_VERSION: u32 = 1;

/// Every `error_kind` the gateway's envelopes carry.
#[cfg(feature = "server")]
pub const ERROR_KINDS: [&str; 1] = [TOOL_INPUT_ERROR_KIND];

/// The `openbridge_envelope` capability (the contract's "Server
/// capabilities"): the envelope version and the error kinds emitted.
#[cfg(feature = "server")]
pub fn envelope_capability() -> String {
    serde_json::json!({"contract_version": ENVELOPE_VERSION, "error_kinds": ERROR_KINDS})
        .to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_hint_needs_a_value_exactly_when_it_names_a_limit_or_the_allowed_values() {
        for entry in TOOL_ERROR_CODES.iter().chain([&TOOL_ERROR_FALLBACK]) {
            let names = entry.hint.contains("{limit}") || entry.hint.contains("{allowed}");
            assert_eq!(entry.hint_needs_value, names, "{}", entry.keyword);
        }
        assert!(tool_error_code("maxItems").hint_needs_value);
        assert!(tool_error_code("enum").hint_needs_value);
        assert!(!tool_error_code("type").hint_needs_value);
        assert!(!names("{limi", "{limit}"));
    }

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
    fn an_unlisted_keyword_takes_the_fallback_code() {
        assert_eq!(tool_error_code("type").code, "SCHEMA_TYPE_MISMATCH");
        assert_eq!(
            tool_error_code("exclusiveMaximum").code,
            "SCHEMA_VALIDATION_FAILED"
        );
    }

    #[test]
    fn data_keys_round_trip() {
        for key in DataKey::ALL {
            assert_eq!(DataKey::parse(key.as_str()), Some(key));
        }
        assert_eq!(DataKey::parse("reason"), None);
    }
}
