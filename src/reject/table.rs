//! The rejection table: every (rejecter, reason) the gateway can answer
//! with, its HTTP status, its error condition and the data keys it may
//! carry. Indexed by [`Reason`], so a reason without a row cannot exist.

use super::codes::{Condition, DataKey};

/// The stage that refused a message.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Rejecter {
    /// The HTTP checks before the body is parsed (server and wire policy).
    Wire,
    /// The forwarder, after the gate allowed the message.
    Forward,
    /// Parsing the body.
    Parse,
    /// Classifying the message.
    Classify,
    /// Choosing the lane and checking the protocol fields in `_meta`.
    Lane,
    /// Header binding (`Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
    Binding,
    /// Finding the root for the revision and method.
    Dispatch,
    /// The message schema.
    Schema,
    /// The value gate: a `tools/call` against the tool's input root.
    Value,
}

impl Rejecter {
    /// Its name in logs and metric labels.
    pub const fn as_str(self) -> &'static str {
        match self {
            Rejecter::Wire => "wire",
            Rejecter::Forward => "forward",
            Rejecter::Parse => "parse",
            Rejecter::Classify => "classify",
            Rejecter::Lane => "lane",
            Rejecter::Binding => "binding",
            Rejecter::Dispatch => "dispatch",
            Rejecter::Schema => "schema",
            Rejecter::Value => "value",
        }
    }
}

/// Why a message was refused. Each reason has exactly one row in the
/// rejection table, which gives its HTTP status, its JSON-RPC error code
/// and the data keys its answer may carry.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Reason {
    /// An HTTP method the endpoint does not serve.
    MethodNotAllowed,
    /// A path the server does not serve.
    UnknownPath,
    /// With authentication on, an `Mcp-Session-Id` that is not one the
    /// gateway sealed for this caller: answered as the upstream answers
    /// an unknown session, and never forwarded.
    UnknownSession,
    /// An `Origin` outside the allow-list.
    OriginNotAllowed,
    /// A missing or wrong bearer token.
    Unauthorized,
    /// A `Content-Type` other than JSON.
    UnsupportedMediaType,
    /// A `Content-Encoding` other than `identity`: the body would reach the
    /// upstream as other bytes than the ones the gate checked.
    UnsupportedContentEncoding,
    /// An `Accept` that does not allow the answers the endpoint may send
    /// (JSON and an event stream; an event stream for GET).
    NotAcceptable,
    /// A request head over its size or header-count limit.
    HeadTooLarge,
    /// A request the HTTP/1.1 parser refuses.
    BadHttp,
    /// A body over the limit.
    BodyTooLarge,
    /// A field the gate or the upstream reads, sent twice or as two values
    /// joined.
    RepeatedHeader,
    /// HTTP/1.1 without `Host`.
    MissingHost,
    /// A `Connection` header naming a field the gate or the upstream reads.
    NominatedHeader,
    /// A body on GET or DELETE.
    BodyNotAllowed,
    /// A body that is not JSON.
    MalformedJson,
    /// A JSON-RPC batch (an array): not supported.
    Batch,
    /// An object holding the same key twice.
    DuplicateKey,
    /// Nesting deeper than the limit.
    TooDeep,
    /// A request whose `id` is neither a string nor an integer.
    UnidentifiedRequest,
    /// Not a JSON-RPC request or notification (or a client's answer on the
    /// 2026-07-28 lane, which has no server requests to answer).
    UnknownMessage,
    /// A revision the gate does not serve.
    UnsupportedProtocolVersion,
    /// A missing or wrong protocol field in a 2026-07-28 request's `_meta`.
    ProtocolField,
    /// `MCP-Protocol-Version`, `Mcp-Method` or `Mcp-Name` against what the
    /// body says.
    HeaderMismatch,
    /// A method the revision does not have.
    MethodNotFound,
    /// A method the revision does not have, on the 2025 lane (whose
    /// transports answer JSON-RPC errors with 200).
    MethodNotFoundLegacy,
    /// The message schema refuses what `params` holds.
    InvalidParams,
    /// The message schema refuses the envelope itself (`jsonrpc`, `id`,
    /// `method`, `params` not an object).
    InvalidRequest,
    /// Allowed, but no upstream is configured to send it to.
    NoUpstream,
    /// Allowed, but the upstream could not be reached.
    UpstreamUnreachable,
    /// Allowed and forwarded, but the upstream did not answer in time.
    UpstreamTimeout,
    /// Allowed and forwarded, but the upstream's answer is not valid HTTP,
    /// or one the gateway must rewrite (a filtered listing, a sealed
    /// session id) that it cannot read: never relayed as it came.
    UpstreamBadAnswer,
    /// An `Mcp-Param-*` header against the argument it mirrors.
    ParamHeaderMismatch,
    /// A `tools/call` of a tool the catalog lacks.
    UnknownTool,
    /// A `tools/call` before the catalog the gate waits for is known.
    CatalogUnknown,
    /// A `tools/call` whose arguments fail the tool's input schema:
    /// answered in the tool dialect.
    InvalidArguments,
    /// OAuth: no `Authorization: Bearer` token.
    TokenMissing,
    /// OAuth: a token that is malformed, signed by no key of the JWKS,
    /// signed with an algorithm its key does not have, or not yet valid.
    TokenInvalid,
    /// OAuth: a token past its `exp`.
    TokenExpired,
    /// OAuth: a token whose `aud` does not name this resource.
    WrongAudience,
    /// OAuth: a token from another issuer.
    WrongIssuer,
    /// OAuth: a valid token without a scope the request needs.
    InsufficientScope,
    /// A header name holding `_` that, read with `-` for `_`, names a
    /// header the gateway sets or checks (`X_Auth_Subject`,
    /// `Content_Length`): stacks that read both spellings as one would act
    /// on the one the gateway did not check.
    UnderscoredHeader,
    /// `Mcp-Method`, `Mcp-Name` or `Mcp-Param-*` on a GET or DELETE, which
    /// has no body for them to mirror: nothing would check them.
    UnmirroredHeader,
    /// `params` holding a member the gate reads (`arguments`, `name`,
    /// `uri`, `_meta`) spelled in another case.
    AliasedMember,
    /// An `access_token` in the query string of a request to a gateway
    /// that authenticates (OAuth 2.1 keeps tokens out of URIs).
    TokenInQuery,
}

/// The shape of the answer a row sends.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dialect {
    /// A JSON-RPC error with the row's condition.
    Error,
    /// A `tools/call` result with `isError: true` and the error envelope
    /// in `structuredContent` (ARCHITECTURE.md, "The value gate"): the model can correct itself.
    Tool,
}

/// One row of the table.
#[derive(Clone, Copy, Debug)]
pub struct Row {
    pub reason: Reason,
    pub rejecter: Rejecter,
    /// The reason as it appears in metrics and logs.
    pub name: &'static str,
    pub status: u16,
    /// The condition (of a [`Dialect::Tool`] row: what the refusal means;
    /// its code is not sent).
    pub condition: Condition,
    /// Keys `error.data` may hold for this row (none: no `data`).
    pub data: &'static [DataKey],
    pub dialect: Dialect,
    /// Whether the status holds even for an answer that echoes an id: the
    /// revision ties the refusal to it ([`Row::status_for`]).
    pub keeps_status: bool,
}

/// The HTTP status a refusal that answers a request goes with.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum RefusalStatus {
    /// As MCP servers answer: a JSON-RPC error that answers a request (its
    /// id echoed) goes with 200 where its row says 400, so that clients
    /// raise the protocol error rather than an HTTP one; the errors the
    /// revision ties to 400 (`-32020`, `-32021`, `-32022`, and a
    /// 2026-07-28 request missing its `_meta` protocol fields), and
    /// refusals with no id to answer, keep 400. Other statuses are
    /// unchanged.
    #[default]
    Rpc,
    /// Every refusal with its row's status (400 for any malformed message).
    Http,
}

impl RefusalStatus {
    /// Its name in the configuration.
    pub const fn as_str(self) -> &'static str {
        match self {
            RefusalStatus::Rpc => "rpc",
            RefusalStatus::Http => "http",
        }
    }
}

impl std::str::FromStr for RefusalStatus {
    type Err = RefusalStatusError;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "rpc" => Ok(RefusalStatus::Rpc),
            "http" => Ok(RefusalStatus::Http),
            other => Err(RefusalStatusError(other.to_owned())),
        }
    }
}

/// A name that is neither `rpc` nor `http` (the name given).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("unknown refusal status {0:?} (expected \"rpc\" or \"http\")")]
pub struct RefusalStatusError(pub String);

impl Row {
    /// The HTTP status this row's answer goes with: the row's, or 200 for
    /// a JSON-RPC error answering a request (`answers_request`: its id is
    /// echoed) where the row says 400 and `refusal` is
    /// [`RefusalStatus::Rpc`], unless the revision ties the error to 400
    /// (its code, [`Condition::bound_to_400`], or the row,
    /// [`Row::keeps_status`]).
    pub const fn status_for(&self, answers_request: bool, refusal: RefusalStatus) -> u16 {
        match refusal {
            RefusalStatus::Rpc
                if answers_request
                    && self.status == 400
                    && matches!(self.dialect, Dialect::Error)
                    && !self.keeps_status
                    && !self.condition.bound_to_400() =>
            {
                200
            }
            _ => self.status,
        }
    }
}

use DataKey as K;

/// The rejection table: one row per [`Reason`], at the reason's index.
pub const TABLE: [Row; 46] = [
    row(
        Reason::MethodNotAllowed,
        Rejecter::Wire,
        "method_not_allowed",
        405,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnknownPath,
        Rejecter::Wire,
        "unknown_path",
        404,
        Condition::InvalidRequest,
        &[],
    ),
    // Another caller's session, or none the gateway sealed: the 404 a
    // server gives a session it does not know (the id is the caller's to
    // drop), so it tells nothing of whose it is.
    row(
        Reason::UnknownSession,
        Rejecter::Wire,
        "unknown_session",
        404,
        Condition::InvalidRequest,
        &[],
    ),
    // DNS rebinding: a browser page on a foreign origin talking to a local server.
    row(
        Reason::OriginNotAllowed,
        Rejecter::Wire,
        "origin_not_allowed",
        403,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::Unauthorized,
        Rejecter::Wire,
        "unauthorized",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnsupportedMediaType,
        Rejecter::Wire,
        "unsupported_media_type",
        415,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnsupportedContentEncoding,
        Rejecter::Wire,
        "unsupported_content_encoding",
        415,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::NotAcceptable,
        Rejecter::Wire,
        "not_acceptable",
        406,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::HeadTooLarge,
        Rejecter::Wire,
        "head_too_large",
        431,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::BadHttp,
        Rejecter::Wire,
        "bad_http",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::BodyTooLarge,
        Rejecter::Wire,
        "body_too_large",
        413,
        Condition::InvalidRequest,
        &[],
    ),
    // A field the gate or the upstream reads, sent twice or as two values
    // joined: the gate would check one copy and the upstream might act on
    // the other.
    row(
        Reason::RepeatedHeader,
        Rejecter::Wire,
        "repeated_header",
        400,
        Condition::InvalidRequest,
        &[K::Header],
    ),
    // HTTP/1.1 without `Host` (RFC 9112 §3.2).
    row(
        Reason::MissingHost,
        Rejecter::Wire,
        "missing_host",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    // `Connection` naming a field the gate checks or the upstream needs:
    // the forwarder would drop it after the gate had read it.
    row(
        Reason::NominatedHeader,
        Rejecter::Wire,
        "nominated_header",
        400,
        Condition::InvalidRequest,
        &[K::Header],
    ),
    // A body on GET or DELETE: never read, never forwarded.
    row(
        Reason::BodyNotAllowed,
        Rejecter::Wire,
        "body_not_allowed",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::MalformedJson,
        Rejecter::Parse,
        "malformed_json",
        400,
        Condition::ParseError,
        &[],
    ),
    row(
        Reason::Batch,
        Rejecter::Parse,
        "batch",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::DuplicateKey,
        Rejecter::Parse,
        "duplicate_key",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::TooDeep,
        Rejecter::Parse,
        "too_deep",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnidentifiedRequest,
        Rejecter::Classify,
        "unidentified_request",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnknownMessage,
        Rejecter::Classify,
        "unknown",
        400,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::UnsupportedProtocolVersion,
        Rejecter::Lane,
        "unsupported_protocol_version",
        400,
        Condition::UnsupportedProtocolVersion,
        &[K::Supported, K::Requested],
    ),
    // A 2026-07-28 request without its `_meta` protocol fields: 400 with
    // its -32602, as the revision's stateless transport (SEP-2575) and its
    // conformance suite require.
    Row {
        keeps_status: true,
        ..row(
            Reason::ProtocolField,
            Rejecter::Lane,
            "protocol_field",
            400,
            Condition::InvalidParams,
            &[K::Errors, K::Total],
        )
    },
    row(
        Reason::HeaderMismatch,
        Rejecter::Binding,
        "header_mismatch",
        400,
        Condition::HeaderMismatch,
        &[K::Header, K::Expected, K::Received],
    ),
    row(
        Reason::MethodNotFound,
        Rejecter::Dispatch,
        "method_not_found",
        404,
        Condition::MethodNotFound,
        &[],
    ),
    // The 2025 transports answer JSON-RPC errors with 200.
    row(
        Reason::MethodNotFoundLegacy,
        Rejecter::Dispatch,
        "method_not_found_legacy",
        200,
        Condition::MethodNotFound,
        &[],
    ),
    row(
        Reason::InvalidParams,
        Rejecter::Schema,
        "invalid_params",
        400,
        Condition::InvalidParams,
        &[K::Errors, K::Total],
    ),
    row(
        Reason::InvalidRequest,
        Rejecter::Schema,
        "invalid_request",
        400,
        Condition::InvalidRequest,
        &[K::Errors, K::Total],
    ),
    // Allowed, but there is nowhere to send it (verdict service only).
    row(
        Reason::NoUpstream,
        Rejecter::Forward,
        "no_upstream",
        502,
        Condition::InternalError,
        &[],
    ),
    // Allowed and forwarded, but no answer came back to relay.
    row(
        Reason::UpstreamUnreachable,
        Rejecter::Forward,
        "upstream_unreachable",
        502,
        Condition::InternalError,
        &[],
    ),
    row(
        Reason::UpstreamTimeout,
        Rejecter::Forward,
        "upstream_timeout",
        504,
        Condition::InternalError,
        &[],
    ),
    row(
        Reason::UpstreamBadAnswer,
        Rejecter::Forward,
        "upstream_bad_answer",
        502,
        Condition::InternalError,
        &[],
    ),
    // An `Mcp-Param-*` header against the argument it mirrors.
    row(
        Reason::ParamHeaderMismatch,
        Rejecter::Binding,
        "param_header_mismatch",
        400,
        Condition::HeaderMismatch,
        &[K::Header, K::Expected, K::Received],
    ),
    row(
        Reason::UnknownTool,
        Rejecter::Value,
        "unknown_tool",
        400,
        Condition::InvalidParams,
        &[],
    ),
    // Nothing yet says what the call may be: a passing condition (the
    // server adds `Retry-After`), not the caller's fault.
    row(
        Reason::CatalogUnknown,
        Rejecter::Value,
        "catalog_unknown",
        503,
        Condition::InternalError,
        &[],
    ),
    Row {
        dialect: Dialect::Tool,
        ..row(
            Reason::InvalidArguments,
            Rejecter::Value,
            "invalid_arguments",
            200,
            Condition::InvalidParams,
            &[],
        )
    },
    // OAuth (RFC 6750 §3.1): the 401s carry a `WWW-Authenticate` challenge
    // pointing to the protected-resource metadata, the 403 the scopes
    // needed.
    row(
        Reason::TokenMissing,
        Rejecter::Wire,
        "token_missing",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::TokenInvalid,
        Rejecter::Wire,
        "token_invalid",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::TokenExpired,
        Rejecter::Wire,
        "token_expired",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::WrongAudience,
        Rejecter::Wire,
        "wrong_audience",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    row(
        Reason::WrongIssuer,
        Rejecter::Wire,
        "wrong_issuer",
        401,
        Condition::InvalidRequest,
        &[],
    ),
    // Scopes every request needs (at the wire), or a tool's (once its
    // `tools/call` is parsed: the id is echoed).
    row(
        Reason::InsufficientScope,
        Rejecter::Wire,
        "insufficient_scope",
        403,
        Condition::InvalidRequest,
        &[],
    ),
    // A header spelled with `_` for `-` is the same header to CGI and WSGI
    // stacks: refused rather than passed beside the one checked.
    row(
        Reason::UnderscoredHeader,
        Rejecter::Wire,
        "underscored_header",
        400,
        Condition::InvalidRequest,
        &[K::Header],
    ),
    // A stream's GET or a session's DELETE has no body to mirror.
    row(
        Reason::UnmirroredHeader,
        Rejecter::Wire,
        "unmirrored_header",
        400,
        Condition::InvalidRequest,
        &[K::Header],
    ),
    row(
        Reason::AliasedMember,
        Rejecter::Schema,
        "aliased_member",
        400,
        Condition::InvalidParams,
        &[],
    ),
    // Never logged or echoed with its value.
    row(
        Reason::TokenInQuery,
        Rejecter::Wire,
        "token_in_query",
        400,
        Condition::InvalidRequest,
        &[],
    ),
];

const fn row(
    reason: Reason,
    rejecter: Rejecter,
    name: &'static str,
    status: u16,
    condition: Condition,
    data: &'static [DataKey],
) -> Row {
    Row {
        reason,
        rejecter,
        name,
        status,
        condition,
        data,
        dialect: Dialect::Error,
        keeps_status: false,
    }
}

impl Reason {
    pub(crate) const fn row(self) -> &'static Row {
        &TABLE[self as usize]
    }

    pub(crate) const fn index(self) -> usize {
        self as usize
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_row_sits_at_its_reasons_index_and_names_are_unique() {
        let mut names = std::collections::BTreeSet::new();
        for (index, row) in TABLE.iter().enumerate() {
            assert_eq!(
                row.reason as usize, index,
                "{:?} is out of place",
                row.reason
            );
            assert!(
                names.insert((row.rejecter.as_str(), row.name)),
                "{} twice",
                row.name
            );
        }
    }

    #[test]
    fn a_request_refused_400_is_answered_200_unless_the_revision_ties_it_to_400() {
        let answered: Vec<(Reason, u16)> = TABLE
            .iter()
            .filter(|row| row.status_for(true, RefusalStatus::Rpc) != row.status)
            .map(|row| (row.reason, row.status_for(true, RefusalStatus::Rpc)))
            .collect();
        assert_eq!(
            answered,
            [
                (Reason::BadHttp, 200),
                (Reason::RepeatedHeader, 200),
                (Reason::MissingHost, 200),
                (Reason::NominatedHeader, 200),
                (Reason::BodyNotAllowed, 200),
                (Reason::MalformedJson, 200),
                (Reason::Batch, 200),
                (Reason::DuplicateKey, 200),
                (Reason::TooDeep, 200),
                (Reason::UnidentifiedRequest, 200),
                (Reason::UnknownMessage, 200),
                (Reason::InvalidParams, 200),
                (Reason::InvalidRequest, 200),
                (Reason::UnknownTool, 200),
                (Reason::UnderscoredHeader, 200),
                (Reason::UnmirroredHeader, 200),
                (Reason::AliasedMember, 200),
                (Reason::TokenInQuery, 200),
            ],
            "only the 400 rows the revision does not tie to 400 move"
        );
        for row in &TABLE {
            assert_eq!(row.status_for(false, RefusalStatus::Rpc), row.status);
            assert_eq!(row.status_for(true, RefusalStatus::Http), row.status);
        }
    }
}
