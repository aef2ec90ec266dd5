//! Keys generated per run (RSA, EC P-256, Ed25519), their JWKS, and
//! access tokens signed with them, for the tests of the OAuth gateway.
#![allow(dead_code)]

use std::path::PathBuf;
use std::sync::OnceLock;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

use jsonwebtoken::jwk::{Jwk, JwkSet};
use jsonwebtoken::{Algorithm, EncodingKey, Header};
use serde_json::{Value, json};

pub const ISSUER: &str = "https://auth.example";
pub const RESOURCE: &str = "https://mcp.example/mcp";

/// A private key, its algorithm and key id, and its public JWK.
pub struct Signer {
    pub alg: Algorithm,
    pub kid: String,
    pub key: EncodingKey,
    pub jwk: Jwk,
}

impl Signer {
    pub fn new(alg: Algorithm, kid: &str, key: EncodingKey) -> Signer {
        let mut jwk = Jwk::from_encoding_key(&key, alg).unwrap();
        jwk.common.key_id = Some(kid.to_owned());
        Signer {
            alg,
            kid: kid.to_owned(),
            key,
            jwk,
        }
    }

    pub fn sign(&self, claims: &Value) -> String {
        let mut header = Header::new(self.alg);
        header.kid = Some(self.kid.clone());
        jsonwebtoken::encode(&header, claims, &self.key).unwrap()
    }
}

/// A 2048-bit RSA key (PKCS#1 DER), generated once per run.
pub fn rsa_der() -> &'static [u8] {
    static DER: OnceLock<Vec<u8>> = OnceLock::new();
    DER.get_or_init(|| {
        use rsa::pkcs1::EncodeRsaPrivateKey;
        let key = rsa::PrivateKey::new(&mut rand::rng(), 2048).unwrap();
        key.to_pkcs1_der().unwrap().as_bytes().to_vec()
    })
}

pub fn rsa_signer(alg: Algorithm, kid: &str) -> Signer {
    Signer::new(alg, kid, EncodingKey::from_rsa_der(rsa_der()))
}

pub fn ec_signer(kid: &str) -> Signer {
    use p256::elliptic_curve::Generate;
    use p256::pkcs8::EncodePrivateKey;
    let key = p256::SecretKey::generate_from_rng(&mut rand::rng());
    let der = key.to_pkcs8_der().unwrap();
    Signer::new(
        Algorithm::ES256,
        kid,
        EncodingKey::from_ec_der(der.as_bytes()),
    )
}

pub fn ed_signer(kid: &str) -> Signer {
    // PKCS#8 v1 of an Ed25519 seed (RFC 8410): a fixed prefix, 32 bytes.
    let mut der = vec![
        0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04,
        0x20,
    ];
    der.extend_from_slice(&rand::random::<[u8; 32]>());
    Signer::new(Algorithm::EdDSA, kid, EncodingKey::from_ed_der(&der))
}

pub fn jwks(signers: &[&Signer]) -> String {
    serde_json::to_string(&JwkSet {
        keys: signers.iter().map(|s| s.jwk.clone()).collect(),
    })
    .unwrap()
}

pub fn now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_secs()
}

/// Claims the gateway accepts, with `changes` applied (`null` removes).
pub fn claims(changes: Value) -> Value {
    let mut claims = json!({
        "iss": ISSUER,
        "aud": RESOURCE,
        "sub": "alice",
        "exp": now() + 300,
        "iat": now(),
        "scope": "mcp",
    });
    for (key, value) in changes.as_object().unwrap() {
        if value.is_null() {
            claims.as_object_mut().unwrap().remove(key);
        } else {
            claims[key] = value.clone();
        }
    }
    claims
}

/// `text` in a file of its own.
pub fn write_file(text: &str) -> PathBuf {
    static N: AtomicUsize = AtomicUsize::new(0);
    let path = std::env::temp_dir().join(format!(
        "mcpgate-oauth-{}-{}.json",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    ));
    std::fs::write(&path, text).unwrap();
    path
}
