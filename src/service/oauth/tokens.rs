//! Verifying one access token: its signature against the JWKS with the
//! algorithm its key allows, then `iss`, `aud`, `exp` and `nbf`; and the
//! per-worker cache of tokens already verified.

use std::cell::RefCell;
use std::sync::Arc;

use jsonwebtoken::errors::ErrorKind;
use jsonwebtoken::{Algorithm, Validation};
use rustc_hash::FxHashMap;
use serde::Deserialize;
use serde_json::Value;

use super::keys::{KeySet, now};
use crate::reject::Reason;

/// Clock skew allowed on `exp` and `nbf`, in seconds.
pub const LEEWAY_SECS: u64 = 30;
/// Verified tokens a worker remembers.
pub const CACHE_ENTRIES: usize = 1024;
/// A token longer than this is refused unread.
pub const MAX_TOKEN_BYTES: usize = 16 * 1024;

/// What a verified token grants.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Grant {
    /// `sub`.
    pub subject: Option<String>,
    /// `scope` (space-separated) or `scp` (a list).
    pub scopes: Vec<String>,
    /// `exp`: the grant is not used past it.
    pub expires: u64,
}

impl Grant {
    /// Whether every scope of `needed` was granted.
    pub fn has_all(&self, needed: &[String]) -> bool {
        needed.iter().all(|s| self.scopes.contains(s))
    }
}

#[derive(Deserialize)]
struct Claims {
    sub: Option<String>,
    exp: u64,
    scope: Option<String>,
    scp: Option<Value>,
}

/// Issuer and audience checks, one per algorithm a key may verify.
pub struct Verifier {
    validations: Vec<(Algorithm, Validation)>,
}

impl Verifier {
    pub fn new(issuer: &str, resource: &str) -> Verifier {
        let validations = [
            Algorithm::RS256,
            Algorithm::PS256,
            Algorithm::ES256,
            Algorithm::EdDSA,
        ]
        .into_iter()
        .map(|alg| {
            let mut validation = Validation::new(alg);
            validation.set_issuer(&[issuer]);
            validation.set_audience(&[resource]);
            validation.set_required_spec_claims(&["exp", "iss", "aud"]);
            validation.validate_nbf = true;
            validation.leeway = LEEWAY_SECS;
            (alg, validation)
        })
        .collect();
        Verifier { validations }
    }

    /// The token's grant, or the reason it is refused. `unknown_kid` is
    /// called when the token names a key id the set lacks.
    pub fn verify(
        &self,
        keys: &KeySet,
        token: &[u8],
        unknown_kid: impl FnOnce(),
    ) -> Result<Grant, Reason> {
        if token.len() > MAX_TOKEN_BYTES {
            return Err(Reason::TokenInvalid);
        }
        let header = jsonwebtoken::decode_header(token).map_err(|_| Reason::TokenInvalid)?;
        let Some((_, validation)) = self.validations.iter().find(|(a, _)| *a == header.alg) else {
            // HMAC, and whatever no key here verifies.
            return Err(Reason::TokenInvalid);
        };
        let mut outcome = Err(Reason::TokenInvalid);
        let mut named_key_found = false;
        for key in keys.candidates(header.kid.as_deref()) {
            named_key_found = true;
            if !key.algorithms.contains(&header.alg) {
                continue;
            }
            match jsonwebtoken::decode::<Claims>(token, &key.key, validation) {
                Ok(data) => {
                    outcome = Ok(grant(data.claims));
                    break;
                }
                Err(error) => {
                    outcome = Err(refusal(error.kind()));
                    if !matches!(error.kind(), ErrorKind::InvalidSignature) {
                        // The signature held: what failed is the claims.
                        break;
                    }
                }
            }
        }
        if !named_key_found && header.kid.is_some() {
            unknown_kid();
        }
        outcome
    }
}

fn refusal(kind: &ErrorKind) -> Reason {
    match kind {
        ErrorKind::ExpiredSignature => Reason::TokenExpired,
        ErrorKind::InvalidAudience => Reason::WrongAudience,
        ErrorKind::InvalidIssuer => Reason::WrongIssuer,
        ErrorKind::MissingRequiredClaim(claim) if claim == "aud" => Reason::WrongAudience,
        ErrorKind::MissingRequiredClaim(claim) if claim == "iss" => Reason::WrongIssuer,
        _ => Reason::TokenInvalid,
    }
}

fn grant(claims: Claims) -> Grant {
    let mut scopes: Vec<String> = claims
        .scope
        .as_deref()
        .unwrap_or_default()
        .split(' ')
        .filter(|s| !s.is_empty())
        .map(str::to_owned)
        .collect();
    match claims.scp {
        Some(Value::Array(list)) => {
            scopes.extend(list.iter().filter_map(Value::as_str).map(str::to_owned));
        }
        Some(Value::String(text)) => {
            scopes.extend(text.split(' ').filter(|s| !s.is_empty()).map(str::to_owned));
        }
        _ => {}
    }
    Grant {
        subject: claims.sub,
        scopes,
        expires: claims.exp,
    }
}

/// Tokens this worker verified, each until its `exp` and while the keys
/// it was verified with are in service, found by a non-cryptographic hash
/// of the token and compared in full, so that no digest is computed on the
/// request path. Only verified tokens are kept, so a client cannot fill the
/// map with colliding keys; a token over [`MAX_CACHED_TOKEN_BYTES`] is
/// verified on every request.
#[derive(Default)]
struct Verified {
    /// Each grant with the key generation it was verified under.
    grants: FxHashMap<Box<[u8]>, (Arc<Grant>, u64)>,
}

/// The largest token the cache keeps: with [`CACHE_ENTRIES`], what a
/// worker holds is bounded (4 MiB).
pub const MAX_CACHED_TOKEN_BYTES: usize = 4096;

thread_local! {
    static VERIFIED: RefCell<Verified> = RefCell::default();
}

/// The grant of `token` from this worker's cache, or `verify`'s (kept
/// when it is one). `generation` is that of the keys in service
/// ([`super::keys::Keys::generation`]): a grant remembered under another
/// is verified again, so a token whose key was dropped from the JWKS is
/// refused on every worker from the reload on.
pub fn cached(
    token: &[u8],
    generation: u64,
    verify: impl FnOnce() -> Result<Grant, Reason>,
) -> Result<Arc<Grant>, Reason> {
    let now = now();
    let hit = VERIFIED.with(|v| {
        v.borrow()
            .grants
            .get(token)
            .filter(|(grant, verified_under)| *verified_under == generation && now < grant.expires)
            .map(|(grant, _)| grant.clone())
    });
    if let Some(grant) = hit {
        return Ok(grant);
    }
    let grant = match verify() {
        Ok(grant) => Arc::new(grant),
        Err(reason) => {
            // A grant the keys in service no longer hold is forgotten.
            VERIFIED.with(|v| v.borrow_mut().grants.remove(token));
            return Err(reason);
        }
    };
    if now < grant.expires && token.len() <= MAX_CACHED_TOKEN_BYTES {
        VERIFIED.with(|v| {
            let grants = &mut v.borrow_mut().grants;
            if grants.len() >= CACHE_ENTRIES {
                grants.retain(|_, (g, verified_under)| {
                    now < g.expires && *verified_under == generation
                });
                if grants.len() >= CACHE_ENTRIES {
                    grants.clear();
                }
            }
            grants.insert(token.into(), (grant.clone(), generation));
        });
    }
    Ok(grant)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn malformed_tokens_are_refused_without_a_panic() {
        let verifier = Verifier::new("https://as.example", "https://rs.example/mcp");
        let keys = KeySet::default();
        for token in [
            &b""[..],
            b".",
            b"..",
            b"a.b.c",
            b"eyJhbGciOiJub25lIn0.e30.",
            b"\xff\xfe.\x00.\x01",
            &[b'a'; MAX_TOKEN_BYTES + 1],
        ] {
            assert_eq!(
                verifier.verify(&keys, token, || {}),
                Err(Reason::TokenInvalid)
            );
        }
    }

    #[test]
    fn the_cache_answers_until_exp_and_stays_bounded() {
        let later = now() + 600;
        let grant = |expires| Grant {
            subject: None,
            scopes: vec![],
            expires,
        };
        assert!(cached(b"t1", 1, || Ok(grant(later))).is_ok());
        // A hit: the verifier is not asked again.
        assert!(cached(b"t1", 1, || Err(Reason::TokenInvalid)).is_ok());
        // An expired grant is never kept.
        assert!(cached(b"t2", 1, || Ok(grant(now() - 1))).is_ok());
        assert_eq!(
            cached(b"t2", 1, || Err(Reason::TokenExpired)),
            Err(Reason::TokenExpired)
        );
        for n in 0..CACHE_ENTRIES + 10 {
            let _ = cached(n.to_string().as_bytes(), 1, || Ok(grant(later)));
        }
        VERIFIED.with(|v| assert!(v.borrow().grants.len() <= CACHE_ENTRIES));
        // A token too large to keep is verified each time.
        let large = vec![b'x'; MAX_CACHED_TOKEN_BYTES + 1];
        assert!(cached(&large, 1, || Ok(grant(later))).is_ok());
        assert_eq!(
            cached(&large, 1, || Err(Reason::TokenInvalid)),
            Err(Reason::TokenInvalid)
        );
    }

    #[test]
    fn a_grant_remembered_under_other_keys_is_verified_again() {
        let grant = Grant {
            subject: None,
            scopes: vec![],
            expires: now() + 600,
        };
        assert!(cached(b"kept", 7, || Ok(grant.clone())).is_ok());
        assert!(cached(b"kept", 7, || Err(Reason::TokenInvalid)).is_ok());
        // The keys were replaced and the token's key is gone.
        assert_eq!(
            cached(b"kept", 8, || Err(Reason::TokenInvalid)),
            Err(Reason::TokenInvalid)
        );
        VERIFIED.with(|v| assert!(!v.borrow().grants.contains_key(&b"kept"[..])));
        // Its key still there: verified again, remembered under the new keys.
        assert!(cached(b"kept", 8, || Ok(grant.clone())).is_ok());
        assert!(cached(b"kept", 8, || Err(Reason::TokenInvalid)).is_ok());
        assert_eq!(
            cached(b"kept", 7, || Err(Reason::TokenInvalid)),
            Err(Reason::TokenInvalid)
        );
    }
}
