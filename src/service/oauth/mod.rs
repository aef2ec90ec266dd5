//! The gateway as an OAuth 2.1 resource server (the MCP authorization
//! spec): bearer access tokens verified against the authorization
//! server's JWKS, the protected-resource metadata (RFC 9728) that points
//! clients to it, and the scopes a request or a tool needs.

pub mod keys;
pub mod listing;
pub mod tokens;
pub mod tool_scopes;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use crate::reject::Reason;
use crate::service::wire::bearer_token;
use keys::{JwksSource, Keys, Refresher};
use tokens::{Grant, Verifier};
use tool_scopes::ToolScopes;

/// The metadata document's path; the endpoint's own is this followed by
/// the endpoint's path (RFC 9728 §3.1).
pub const METADATA_PATH: &str = "/.well-known/oauth-protected-resource";

/// What `oauth_*` configures.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthConfig {
    /// `oauth_issuer`: a token's `iss` must equal it.
    pub issuer: String,
    /// `oauth_resource`: this gateway's resource URI; a token's `aud`
    /// must contain it.
    pub resource: String,
    pub jwks: JwksSource,
    /// `oauth_jwks_refresh_secs`: the least time between two reloads.
    pub jwks_refresh: Duration,
    /// `oauth_authorization_servers` [default: the issuer].
    pub authorization_servers: Vec<String>,
    /// `oauth_scopes_required`: scopes every MCP request needs.
    pub scopes_required: Vec<String>,
    /// `oauth_tool_scopes`: the scopes a `tools/call` of a tool needs.
    pub tool_scopes: BTreeMap<String, Vec<String>>,
    /// `oauth_forward_authorization`: pass the client's `Authorization`
    /// on to the upstream.
    pub forward_authorization: bool,
    /// `oauth_subject_header`: the header the token's `sub` is sent
    /// upstream in.
    pub subject_header: Option<String>,
    /// `oauth_scopes_header`: the header the granted scopes are sent
    /// upstream in (space-separated).
    pub scopes_header: Option<String>,
}

/// The resource server in service: its keys, checks and answers.
pub struct OAuth {
    pub config: OAuthConfig,
    keys: Arc<Keys>,
    refresher: Refresher,
    verifier: Verifier,
    metadata: bytes::Bytes,
    metadata_url: String,
    /// The `WWW-Authenticate` of a request without a token.
    challenge_missing: String,
    /// `oauth_subject_header` and `oauth_scopes_header`, shared by every
    /// forwarded request.
    subject_header: Option<Arc<str>>,
    scopes_header: Option<Arc<str>>,
    /// `oauth_tool_scopes`, found under every spelling of a tool's name.
    tool_scopes: ToolScopes,
}

impl std::fmt::Debug for OAuth {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OAuth")
            .field("config", &self.config)
            .finish_non_exhaustive()
    }
}

/// A configuration the resource server cannot start with: the key and
/// why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OAuthError {
    pub key: &'static str,
    pub message: String,
}

impl OAuth {
    /// Loads the JWKS (a startup error when it cannot be read) and starts
    /// the thread that reloads it.
    pub fn start(config: OAuthConfig) -> Result<OAuth, OAuthError> {
        let metadata_url = metadata_url(&config.resource).ok_or_else(|| OAuthError {
            key: "oauth_resource",
            message: format!("{:?} is not an http:// or https:// URL", config.resource),
        })?;
        let keys = config.jwks.load().map_err(|error| OAuthError {
            key: config.jwks.key(),
            message: error.to_string(),
        })?;
        tracing::info!(
            issuer = %config.issuer,
            resource = %config.resource,
            keys = keys.keys.len(),
            "OAuth access tokens verified"
        );
        let keys = Arc::new(Keys::new(keys));
        let refresher = Refresher::start(config.jwks.clone(), keys.clone(), config.jwks_refresh);
        let mut challenge_missing = format!("Bearer resource_metadata=\"{metadata_url}\"");
        if !config.scopes_required.is_empty() {
            challenge_missing
                .push_str(&format!(", scope=\"{}\"", config.scopes_required.join(" ")));
        }
        Ok(OAuth {
            verifier: Verifier::new(&config.issuer, &config.resource),
            metadata: metadata_document(&config).into(),
            metadata_url,
            challenge_missing,
            subject_header: config.subject_header.as_deref().map(Arc::from),
            scopes_header: config.scopes_header.as_deref().map(Arc::from),
            tool_scopes: ToolScopes::new(&config.tool_scopes),
            keys,
            refresher,
            config,
        })
    }

    /// The protected-resource metadata document (JSON).
    pub fn metadata(&self) -> bytes::Bytes {
        self.metadata.clone()
    }

    /// The grant of the request's bearer token, refused with the reason
    /// when there is none, it does not verify, or it lacks a scope every
    /// request needs.
    pub fn admit(&self, authorization: Option<&[u8]>) -> Result<Arc<Grant>, Reason> {
        let token = authorization
            .and_then(bearer_token)
            .filter(|t| !t.is_empty())
            .ok_or(Reason::TokenMissing)?;
        // Read before the keys are: see `Keys::generation`.
        let generation = self.keys.generation();
        let grant = tokens::cached(token, generation, || {
            self.verifier
                .verify(&self.keys.load(), token, || self.refresher.request())
        })?;
        if !grant.has_all(&self.config.scopes_required) {
            return Err(Reason::InsufficientScope);
        }
        Ok(grant)
    }

    /// The scopes a `tools/call` of `tool` needs that `grant` lacks
    /// (`None`: it may call it). `tool` is read as a loose matcher reads
    /// it (case aside, whitespace around trimmed): a call of
    /// `Delete_Order` is checked as `delete_order`.
    pub fn tool_denied(&self, grant: &Grant, tool: &str) -> Option<&[String]> {
        self.tool_scopes
            .needed(tool)
            .filter(|needed| !grant.has_all(needed))
    }

    /// Whether `grant` lacks the scopes of a tool: its `tools/list`
    /// answers are cut down to what it may call.
    pub fn lists_fewer_tools(&self, grant: &Grant) -> bool {
        self.tool_scopes.all().any(|needed| !grant.has_all(needed))
    }

    /// The `WWW-Authenticate` of a refusal of `reason` (`scopes`: what an
    /// `insufficient_scope` refusal needs; the required scopes otherwise).
    pub fn challenge(&self, reason: Reason, scopes: Option<&[String]>) -> Option<String> {
        let url = &self.metadata_url;
        let description = match reason {
            Reason::TokenMissing => return Some(self.challenge_missing.clone()),
            Reason::InsufficientScope => {
                let scopes = scopes.unwrap_or(&self.config.scopes_required).join(" ");
                return Some(format!(
                    "Bearer error=\"insufficient_scope\", scope=\"{scopes}\", resource_metadata=\"{url}\""
                ));
            }
            Reason::TokenExpired => "the token has expired",
            Reason::WrongAudience => "the token is not for this resource",
            Reason::WrongIssuer => "the token is from another issuer",
            Reason::TokenInvalid => "the token does not verify",
            _ => return None,
        };
        Some(format!(
            "Bearer error=\"invalid_token\", error_description=\"{description}\", resource_metadata=\"{url}\""
        ))
    }

    /// The identity header a client's header name holding `_` stands for,
    /// read with `-` for `_` (case aside): stacks that read both spellings
    /// as one would take the client's for the gateway's.
    /// A name spelled exactly is not one: the gateway drops it and sets
    /// its own.
    pub fn identity_spelled(&self, name: &[u8]) -> Option<&str> {
        if !name.contains(&b'_') {
            return None;
        }
        [&self.subject_header, &self.scopes_header]
            .into_iter()
            .flatten()
            .find(|header| crate::gate::fields::spells(name, header.as_bytes()))
            .map(|header| &**header)
    }

    /// Headers the upstream receives in place of any the client sent
    /// under their names: the subject and the scopes, each where a header
    /// is configured and the value can be written in one.
    pub fn identity_headers(&self, grant: Option<&Grant>) -> Vec<(Arc<str>, Option<String>)> {
        let mut set = Vec::new();
        if let Some(name) = &self.subject_header {
            let value = grant.and_then(|g| g.subject.clone());
            set.push((name.clone(), value.filter(|v| header_safe(v))));
        }
        if let Some(name) = &self.scopes_header {
            let value = grant.map(|g| g.scopes.join(" "));
            set.push((name.clone(), value.filter(|v| header_safe(v))));
        }
        set
    }
}

/// The one-line cause of an OAuth refusal (never the token).
pub fn message(reason: Reason) -> &'static str {
    match reason {
        Reason::TokenMissing => "Unauthorized: a bearer access token is required",
        Reason::TokenExpired => "Unauthorized: the access token has expired",
        Reason::WrongAudience => "Unauthorized: the access token is not for this resource",
        Reason::WrongIssuer => "Unauthorized: the access token is from another issuer",
        Reason::InsufficientScope => "Forbidden: the access token lacks a required scope",
        _ => "Unauthorized: the access token does not verify",
    }
}

/// Printable ASCII and spaces only: nothing that could end a header.
fn header_safe(value: &str) -> bool {
    !value.is_empty() && value.bytes().all(|b| b == b' ' || b.is_ascii_graphic())
}

/// RFC 9728 §3.1: the well-known path inserted between the resource's
/// authority and its path.
fn metadata_url(resource: &str) -> Option<String> {
    let rest = resource
        .strip_prefix("https://")
        .map(|r| ("https://", r))
        .or_else(|| resource.strip_prefix("http://").map(|r| ("http://", r)))?;
    let (scheme, rest) = rest;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    if authority.is_empty() || resource.contains(['?', '#', '"', ' ']) {
        return None;
    }
    let path = path.trim_end_matches('/');
    Some(format!("{scheme}{authority}{METADATA_PATH}{path}"))
}

fn metadata_document(config: &OAuthConfig) -> Vec<u8> {
    let mut scopes: Vec<&str> = config
        .scopes_required
        .iter()
        .chain(config.tool_scopes.values().flatten())
        .map(String::as_str)
        .collect();
    scopes.sort_unstable();
    scopes.dedup();
    let servers = if config.authorization_servers.is_empty() {
        std::slice::from_ref(&config.issuer)
    } else {
        &config.authorization_servers[..]
    };
    serde_json::to_vec(&serde_json::json!({
        "resource": config.resource,
        "authorization_servers": servers,
        "scopes_supported": scopes,
        "bearer_methods_supported": ["header"],
    }))
    .unwrap_or_default()
}

/// Whether `scope` is a scope token (RFC 6749 §3.3): it can be written in
/// a challenge's quoted `scope`.
pub fn is_scope_token(scope: &str) -> bool {
    !scope.is_empty()
        && scope
            .bytes()
            .all(|b| b == 0x21 || (0x23..=0x5B).contains(&b) || (0x5D..=0x7E).contains(&b))
}

/// `text` is an `http://` or `https://` URL with a host, holding nothing a
/// header or a JSON string would have to escape.
pub fn is_http_url(text: &str) -> bool {
    let rest = text
        .strip_prefix("https://")
        .or_else(|| text.strip_prefix("http://"));
    rest.is_some_and(|rest| !rest.is_empty() && !rest.starts_with('/'))
        && !text.contains(|c: char| c.is_whitespace() || c == '"')
}

/// A header the gateway may tell the upstream a caller's identity in: none
/// it frames or reads, no `Mcp-*`, and no `_`, since stacks that read `_`
/// as `-` would take a client's `X-Auth-Subject` for the gateway's
/// `X_Auth_Subject`.
pub fn may_carry_identity(name: &str) -> bool {
    const FRAMED_OR_READ: [&str; 7] = [
        "host",
        "content-length",
        "transfer-encoding",
        "connection",
        "authorization",
        "content-type",
        "accept",
    ];
    !name.is_empty()
        && name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        && !FRAMED_OR_READ.iter().any(|f| f.eq_ignore_ascii_case(name))
        && !name.to_ascii_lowercase().starts_with("mcp-")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_metadata_url_puts_the_well_known_path_before_the_resources_path() {
        assert_eq!(
            metadata_url("https://mcp.example/mcp").as_deref(),
            Some("https://mcp.example/.well-known/oauth-protected-resource/mcp")
        );
        assert_eq!(
            metadata_url("http://127.0.0.1:8080").as_deref(),
            Some("http://127.0.0.1:8080/.well-known/oauth-protected-resource")
        );
        for bad in ["mcp.example/mcp", "https:///mcp", "https://x/\"", "ftp://x"] {
            assert_eq!(metadata_url(bad), None, "{bad}");
        }
    }

    #[test]
    fn scope_tokens_exclude_quotes_backslashes_and_spaces() {
        assert!(is_scope_token("tools:write"));
        for bad in ["", "a b", "a\"b", "a\\b", "é"] {
            assert!(!is_scope_token(bad), "{bad}");
        }
    }
}
