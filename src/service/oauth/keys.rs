//! The authorization server's signing keys: a JWKS read from a file or
//! fetched from a URL, each key with the algorithms it verifies. Only
//! asymmetric keys are taken: a token is never checked against a secret,
//! so a public key can never be used as an HMAC one.

use std::io::Read as _;
use std::path::PathBuf;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, SyncSender};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use arc_swap::ArcSwap;
use jsonwebtoken::jwk::Jwk;
use jsonwebtoken::{Algorithm, DecodingKey};
use serde_json::Value;

/// A JWKS document larger than this is refused.
pub const MAX_JWKS_BYTES: u64 = 1024 * 1024;
/// A JWKS with more keys than this is refused.
pub const MAX_KEYS: usize = 256;

/// Where the JWKS comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum JwksSource {
    /// `oauth_jwks_file`.
    File(PathBuf),
    /// `oauth_jwks_url`: `http://` or `https://`.
    Url(String),
}

impl JwksSource {
    /// The configuration key it was given under.
    pub fn key(&self) -> &'static str {
        match self {
            JwksSource::File(_) => "oauth_jwks_file",
            JwksSource::Url(_) => "oauth_jwks_url",
        }
    }

    /// Reads or fetches the document and builds its keys.
    pub fn load(&self) -> Result<KeySet, JwksError> {
        let text = match self {
            JwksSource::File(path) => {
                let read = |source| JwksError::Read {
                    path: path.clone(),
                    source,
                };
                let file = std::fs::File::open(path).map_err(read)?;
                let mut text = String::new();
                file.take(MAX_JWKS_BYTES + 1)
                    .read_to_string(&mut text)
                    .map_err(read)?;
                text
            }
            JwksSource::Url(url) => fetch(url).map_err(|source| JwksError::Fetch {
                url: url.clone(),
                source,
            })?,
        };
        if text.len() as u64 > MAX_JWKS_BYTES {
            return Err(JwksError::TooLarge);
        }
        KeySet::parse(&text)
    }
}

/// Why no key set came from a JWKS source.
#[derive(Debug, thiserror::Error)]
pub enum JwksError {
    /// The file could not be opened or read.
    #[error("{}: {source}", .path.display())]
    Read {
        path: PathBuf,
        source: std::io::Error,
    },
    /// The URL could not be fetched.
    #[error("{url}: {source}")]
    Fetch { url: String, source: ureq::Error },
    #[error("the JWKS is larger than {MAX_JWKS_BYTES} bytes")]
    TooLarge,
    #[error("the JWKS is not JSON: {0}")]
    NotJson(serde_json::Error),
    #[error("the JWKS has no `keys` array")]
    NoKeys,
    #[error("the JWKS has more than {MAX_KEYS} keys")]
    TooManyKeys,
    /// The key at `index` of `keys` (counted from 0).
    #[error("key {index}: {error}")]
    Key { index: usize, error: KeyError },
    /// Every key is for encryption.
    #[error("the JWKS has no signing key")]
    NoSigningKey,
}

/// Why one JSON Web Key is not taken.
#[derive(Debug, thiserror::Error)]
pub enum KeyError {
    #[error("a symmetric (`oct`) key is not accepted")]
    Symmetric,
    #[error(
        "unknown algorithm: key type {kty:?}{} (RSA, EC P-256 and OKP Ed25519 are verified)",
        .curve.as_ref().map(|c| format!(" on curve {c:?}")).unwrap_or_default()
    )]
    UnknownKeyType { kty: String, curve: Option<String> },
    #[error("unknown algorithm {alg:?} (RS256, PS256, ES256 and EdDSA are verified)")]
    UnknownAlgorithm { alg: String },
    #[error("algorithm {alg:?} does not fit key type {kty:?}")]
    AlgorithmMismatch { alg: String, kty: String },
    #[error("not a JSON Web Key: {0}")]
    NotJwk(serde_json::Error),
    #[error("unusable key: {0}")]
    Unusable(jsonwebtoken::errors::Error),
}

fn fetch(url: &str) -> Result<String, ureq::Error> {
    let agent: ureq::Agent = ureq::Agent::config_builder()
        .timeout_global(Some(Duration::from_secs(10)))
        .build()
        .into();
    let mut answer = agent.get(url).call()?;
    answer
        .body_mut()
        .with_config()
        .limit(MAX_JWKS_BYTES)
        .read_to_string()
}

/// One verification key.
pub struct Key {
    pub kid: Option<String>,
    /// What a token signed with this key may name as its `alg`: the key's
    /// own `alg`, or what its type allows when it names none.
    pub algorithms: &'static [Algorithm],
    pub key: DecodingKey,
}

/// The keys of one JWKS document.
#[derive(Default)]
pub struct KeySet {
    pub keys: Vec<Key>,
}

impl std::fmt::Debug for KeySet {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list()
            .entries(self.keys.iter().map(|k| (&k.kid, k.algorithms)))
            .finish()
    }
}

impl KeySet {
    /// The signing keys of a JWKS document; keys marked for encryption
    /// (`"use": "enc"`) are left out. An algorithm the gateway does not
    /// verify, or a symmetric key, is an error.
    pub fn parse(text: &str) -> Result<KeySet, JwksError> {
        let document: Value = serde_json::from_str(text).map_err(JwksError::NotJson)?;
        let Some(keys) = document.get("keys").and_then(Value::as_array) else {
            return Err(JwksError::NoKeys);
        };
        if keys.len() > MAX_KEYS {
            return Err(JwksError::TooManyKeys);
        }
        let mut set = KeySet::default();
        for (index, jwk) in keys.iter().enumerate() {
            if jwk.get("use").and_then(Value::as_str) == Some("enc") {
                continue;
            }
            let key = Key::from_jwk(jwk).map_err(|error| JwksError::Key { index, error })?;
            set.keys.push(key);
        }
        if set.keys.is_empty() {
            return Err(JwksError::NoSigningKey);
        }
        Ok(set)
    }

    /// The keys a token whose header names `kid` (or none) may be
    /// signed with.
    pub fn candidates<'s>(&'s self, kid: Option<&'s str>) -> impl Iterator<Item = &'s Key> {
        self.keys
            .iter()
            .filter(move |key| kid.is_none() || key.kid.as_deref() == kid)
    }
}

const RSA: &[Algorithm] = &[Algorithm::RS256, Algorithm::PS256];

impl Key {
    fn from_jwk(jwk: &Value) -> Result<Key, KeyError> {
        let kty = jwk.get("kty").and_then(Value::as_str).unwrap_or_default();
        let crv = jwk.get("crv").and_then(Value::as_str);
        let by_type: &'static [Algorithm] = match (kty, crv) {
            ("RSA", _) => RSA,
            ("EC", Some("P-256")) => &[Algorithm::ES256],
            ("OKP", Some("Ed25519")) => &[Algorithm::EdDSA],
            ("oct", _) => return Err(KeyError::Symmetric),
            _ => {
                return Err(KeyError::UnknownKeyType {
                    kty: kty.to_owned(),
                    curve: crv.map(str::to_owned),
                });
            }
        };
        let algorithms: &'static [Algorithm] = match jwk.get("alg") {
            None => by_type,
            Some(alg) => {
                let alg = alg.as_str().unwrap_or_default();
                let named = match alg {
                    "RS256" => &[Algorithm::RS256][..],
                    "PS256" => &[Algorithm::PS256],
                    "ES256" => &[Algorithm::ES256],
                    "EdDSA" => &[Algorithm::EdDSA],
                    _ => {
                        return Err(KeyError::UnknownAlgorithm {
                            alg: alg.to_owned(),
                        });
                    }
                };
                if !by_type.contains(&named[0]) {
                    return Err(KeyError::AlgorithmMismatch {
                        alg: alg.to_owned(),
                        kty: kty.to_owned(),
                    });
                }
                named
            }
        };
        let parsed: Jwk = serde_json::from_value(jwk.clone()).map_err(KeyError::NotJwk)?;
        let key = DecodingKey::from_jwk(&parsed).map_err(KeyError::Unusable)?;
        Ok(Key {
            kid: parsed.common.key_id,
            algorithms,
            key,
        })
    }
}

/// The key set in service and its generation: a number no other key set
/// of this process had, changed each time the set is replaced. A verified
/// token is remembered with the generation it was verified under, so that
/// comparing one number tells whether the keys it was checked against are
/// still the ones in service.
pub struct Keys {
    set: ArcSwap<KeySet>,
    generation: AtomicU64,
}

/// Generations are unique across every key store of the process: a grant
/// remembered under one store never matches another's.
static NEXT_GENERATION: AtomicU64 = AtomicU64::new(1);

impl Keys {
    pub fn new(set: KeySet) -> Keys {
        Keys {
            set: ArcSwap::from_pointee(set),
            generation: AtomicU64::new(NEXT_GENERATION.fetch_add(1, Ordering::Relaxed)),
        }
    }

    /// The generation of the keys in service. Read it before
    /// [`Keys::load`]: a grant verified with the loaded keys is then never
    /// remembered under a newer generation than theirs.
    pub fn generation(&self) -> u64 {
        self.generation.load(Ordering::Acquire)
    }

    pub fn load(&self) -> arc_swap::Guard<Arc<KeySet>> {
        self.set.load()
    }

    /// Puts `set` in service. The set is stored before the generation
    /// moves: a worker that sees the new generation verifies with the new
    /// keys.
    pub fn replace(&self, set: KeySet) {
        self.set.store(Arc::new(set));
        self.generation.store(
            NEXT_GENERATION.fetch_add(1, Ordering::Relaxed),
            Ordering::Release,
        );
    }
}

/// Seconds since the epoch.
pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// Reloads the JWKS on a thread of its own when a token names a key id
/// the set lacks, at most once per `every`; a failed reload keeps the
/// keys in service. The worker that asks never waits for it.
pub struct Refresher {
    wake: SyncSender<()>,
    /// When the keys were last loaded or a reload was asked for (seconds
    /// since the epoch).
    last: AtomicU64,
    every: u64,
}

impl Refresher {
    pub fn start(source: JwksSource, keys: Arc<Keys>, every: Duration) -> Refresher {
        let (wake, woken) = std::sync::mpsc::sync_channel(1);
        std::thread::Builder::new()
            .name("mcpgate-jwks".to_owned())
            .spawn(move || reload_when_woken(&source, &keys, &woken))
            .map_err(|e| tracing::warn!("the JWKS will not be reloaded: {e}"))
            .ok();
        Refresher {
            wake,
            // The load at start counts as one.
            last: AtomicU64::new(now()),
            every: every.as_secs().max(1),
        }
    }

    /// A token named a key id the set lacks.
    pub fn request(&self) {
        let now = now();
        let last = self.last.load(Ordering::Relaxed);
        if now < last.saturating_add(self.every) {
            return;
        }
        if self
            .last
            .compare_exchange(last, now, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok()
        {
            // Full: a reload is already waiting.
            let _ = self.wake.try_send(());
        }
    }
}

fn reload_when_woken(source: &JwksSource, keys: &Keys, woken: &Receiver<()>) {
    while woken.recv().is_ok() {
        match source.load() {
            Ok(set) => {
                tracing::info!(keys = set.keys.len(), "JWKS reloaded");
                // Every remembered grant is checked again against it.
                keys.replace(set);
            }
            Err(error) => {
                tracing::warn!(%error, "JWKS reload failed; the keys in service are kept");
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symmetric_keys_and_unknown_algorithms_are_refused() {
        for (jwks, says) in [
            (r#"{"keys":[{"kty":"oct","k":"c2VjcmV0"}]}"#, "symmetric"),
            (
                r#"{"keys":[{"kty":"RSA","alg":"RS512","n":"AQAB","e":"AQAB"}]}"#,
                "unknown algorithm",
            ),
            (
                r#"{"keys":[{"kty":"EC","crv":"P-384","x":"AA","y":"AA"}]}"#,
                "unknown algorithm",
            ),
            (
                r#"{"keys":[{"kty":"RSA","alg":"ES256","n":"AQAB","e":"AQAB"}]}"#,
                "does not fit",
            ),
            (r#"{"keys":[]}"#, "no signing key"),
            (r#"{"nokeys":1}"#, "no `keys`"),
            ("[", "not JSON"),
            (r#"{"keys":[{"kty":"RSA","n":7}]}"#, "key 0: unusable key"),
        ] {
            let error = KeySet::parse(jwks).unwrap_err().to_string();
            assert!(error.contains(says), "{jwks}: {error}");
        }
    }

    #[test]
    fn encryption_keys_are_left_out() {
        let set = KeySet::parse(
            r#"{"keys":[{"kty":"RSA","use":"enc","alg":"RSA-OAEP","n":"AQAB","e":"AQAB"},
                        {"kty":"OKP","crv":"Ed25519","kid":"ed","x":"11qYAYKxCrfVS_7TyWQHOg7hcvPapiMlrwIaaPcHURo"}]}"#,
        )
        .unwrap();
        assert_eq!(set.keys.len(), 1);
        assert_eq!(set.keys[0].kid.as_deref(), Some("ed"));
        assert_eq!(set.keys[0].algorithms, &[Algorithm::EdDSA]);
    }
}
