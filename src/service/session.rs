//! Sessions that belong to the caller who opened them. With
//! authentication on, the upstream's `Mcp-Session-Id` reaches the client
//! sealed: `<upstream id>.<tag>`, the tag an HMAC-SHA256 (base64url, no
//! padding) over the owner and the upstream's id under the session key.
//! A request's id is unsealed for its own caller only; the upstream gets
//! its own id back. Nothing is stored: any instance holding the same key
//! reads any other's ids, and a restart with the same key keeps them.
//!
//! The owner is the issuer and `sub` of an OAuth token (a token without a
//! `sub`: the token itself), or the static bearer token itself; a token
//! enters the MAC only as its SHA-256, and never appears in the id.

use std::sync::Arc;

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use hmac::{Hmac, KeyInit as _, Mac as _};
use sha2::{Digest as _, Sha256};

use super::oauth::tokens::Grant;
use super::wire::bearer_token;

/// The fewest bytes a configured key may have.
pub const KEY_MIN_BYTES: usize = 32;
/// The tag's length once encoded (32 bytes, base64url without padding).
const TAG_CHARS: usize = 43;
/// The longest upstream id a verified request keeps for its answer.
const KEPT_ID_BYTES: usize = 64;

/// The key sessions are sealed under. Never printed.
#[derive(Clone, PartialEq, Eq)]
pub struct SessionKey(Arc<[u8]>);

impl std::fmt::Debug for SessionKey {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SessionKey(..)")
    }
}

impl SessionKey {
    /// A configured key: hex, or base64 (standard or URL-safe, padded or
    /// not), of at least [`KEY_MIN_BYTES`] bytes. The error never repeats
    /// the text.
    pub fn parse(text: &str) -> Result<SessionKey, SessionKeyError> {
        let text = text.trim();
        let hex = text.len().is_multiple_of(2) && text.bytes().all(|b| b.is_ascii_hexdigit());
        let bytes = if hex {
            (0..text.len())
                .step_by(2)
                .map(|i| u8::from_str_radix(&text[i..i + 2], 16))
                .collect::<Result<Vec<u8>, _>>()
                .ok()
        } else {
            [STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(text).ok())
        };
        match bytes {
            None => Err(SessionKeyError::Encoding),
            Some(bytes) if bytes.len() < KEY_MIN_BYTES => Err(SessionKeyError::Short(bytes.len())),
            Some(bytes) => Ok(SessionKey(bytes.into())),
        }
    }

    /// A key of 32 random bytes from the operating system.
    pub fn generate() -> Result<SessionKey, SessionKeyError> {
        let mut bytes = [0u8; KEY_MIN_BYTES];
        getrandom::fill(&mut bytes).map_err(SessionKeyError::Random)?;
        Ok(SessionKey(bytes.to_vec().into()))
    }
}

/// Why there is no session key: a configured one that is not one (the
/// text itself never repeated), or none drawn.
#[derive(Debug, thiserror::Error)]
pub enum SessionKeyError {
    #[error("is neither hex nor base64")]
    Encoding,
    /// The bytes the text holds, too few.
    #[error("holds {0} bytes; at least {KEY_MIN_BYTES} are needed")]
    Short(usize),
    /// The operating system gave no random bytes.
    #[error("{0}")]
    Random(getrandom::Error),
}

/// Whom a request's sessions belong to.
#[derive(Debug, Clone)]
pub enum Owner {
    /// An OAuth token with a `sub`: the issuer and the `sub` (read from the
    /// grant only when a session id is sealed or unsealed).
    Subject(Arc<Grant>),
    /// The SHA-256 of a token (static, or OAuth without a `sub`).
    Token([u8; 32]),
}

/// A request's id, verified for its owner: an answer naming the same
/// upstream id (as a server in a session does) is given the same seal
/// again without a second MAC.
#[derive(Debug, Clone)]
pub struct Verified {
    id: [u8; KEPT_ID_BYTES],
    len: u8,
    /// `.` and the tag, as the client sent them.
    seal: [u8; 1 + TAG_CHARS],
}

impl Verified {
    /// `sealed`, which [`Sessions::unseal`] found to hold an upstream id
    /// of `id_len` bytes; `None` for an id too long to keep.
    pub fn keep(sealed: &[u8], id_len: usize) -> Option<Verified> {
        if id_len > KEPT_ID_BYTES || sealed.len() != id_len + 1 + TAG_CHARS {
            return None;
        }
        let mut id = [0u8; KEPT_ID_BYTES];
        id[..id_len].copy_from_slice(&sealed[..id_len]);
        let mut seal = [0u8; 1 + TAG_CHARS];
        seal.copy_from_slice(&sealed[id_len..]);
        Some(Verified {
            id,
            len: id_len as u8,
            seal,
        })
    }
}

/// The sealing of session ids, with authentication on.
pub struct Sessions {
    /// Keyed once; cloned for each tag.
    mac: Hmac<Sha256>,
    /// OAuth's issuer, part of every subject's tag.
    issuer: Option<String>,
    /// Each static bearer token and its owner.
    tokens: Vec<(Box<[u8]>, [u8; 32])>,
    /// Unique in the process: what a worker remembers of one key's seals
    /// is never taken for another's.
    serial: u64,
    /// The route's path, in every tag: an id sealed on one route is
    /// unknown on another, whoever sends it.
    route: Box<[u8]>,
}

impl std::fmt::Debug for Sessions {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Sessions")
            .field("issuer", &self.issuer)
            .field("tokens", &self.tokens.len())
            .finish_non_exhaustive()
    }
}

/// Domain separation between the owners' kinds and from any other use of
/// the key.
const CONTEXT: &[u8] = b"mcpgate session v1\0";

impl Sessions {
    /// Sessions under `key` for a gateway whose callers are OAuth tokens
    /// from `issuer` (`Some`) or the static `tokens`.
    pub fn new(key: &SessionKey, issuer: Option<&str>, tokens: &[String]) -> Sessions {
        Sessions {
            mac: Hmac::<Sha256>::new_from_slice(&key.0).expect("HMAC takes a key of any length"),
            issuer: issuer.map(str::to_owned),
            tokens: tokens
                .iter()
                .map(|t| (t.as_bytes().into(), token_digest(t.as_bytes())))
                .collect(),
            serial: NEXT_SERIAL.fetch_add(1, std::sync::atomic::Ordering::Relaxed),
            route: Box::default(),
        }
    }

    /// These sessions, for the route at `path` alone.
    pub fn on_route(mut self, path: &str) -> Sessions {
        self.route = path.as_bytes().into();
        self
    }

    /// The owner of a request granted `grant` for the token in
    /// `authorization`.
    pub fn owner_of_grant(&self, grant: &Arc<Grant>, authorization: Option<&[u8]>) -> Owner {
        match grant.subject {
            Some(_) => Owner::Subject(grant.clone()),
            None => Owner::Token(token_digest(
                authorization.and_then(bearer_token).unwrap_or_default(),
            )),
        }
    }

    /// The owner of a request carrying one of the static tokens in
    /// `authorization` (`None`: none of them). Every token is compared in
    /// full, as the wire check does.
    pub fn owner_of_token(&self, authorization: Option<&[u8]>) -> Option<Owner> {
        let token = authorization.and_then(bearer_token)?;
        let mut found = None;
        for (known, digest) in &self.tokens {
            if constant_time_eq(known, token) {
                found = Some(*digest);
            }
        }
        found.map(Owner::Token)
    }

    /// The tag of `id` for `owner`, in a keyed MAC ready to finish.
    fn mac(&self, owner: &Owner, id: &[u8]) -> Hmac<Sha256> {
        let mut mac = self.mac.clone();
        mac.update(CONTEXT);
        mac.update(&(self.route.len() as u64).to_be_bytes());
        mac.update(&self.route);
        match owner {
            Owner::Subject(grant) => {
                let issuer = self.issuer.as_deref().unwrap_or_default().as_bytes();
                let subject = grant.subject.as_deref().unwrap_or_default().as_bytes();
                mac.update(b"S");
                mac.update(&(issuer.len() as u64).to_be_bytes());
                mac.update(issuer);
                mac.update(&(subject.len() as u64).to_be_bytes());
                mac.update(subject);
            }
            Owner::Token(digest) => {
                mac.update(b"T");
                mac.update(digest);
            }
        }
        mac.update(id);
        mac
    }

    /// Seals the upstream's id at `buf[id]` in place (its tag inserted
    /// after it); `false`, `buf` untouched, when it is not a session id
    /// (empty, or a byte outside visible ASCII). `verified`: the request's
    /// own id, whose seal is reused when the answer names the same.
    pub fn seal_in_place(
        &self,
        owner: &Owner,
        verified: Option<&Verified>,
        buf: &mut Vec<u8>,
        id: std::ops::Range<usize>,
    ) -> bool {
        let Some(value) = buf.get(id.clone()).filter(|v| is_session_id(v)) else {
            return false;
        };
        let seal = match verified.filter(|v| v.id[..usize::from(v.len)] == *value) {
            Some(verified) => verified.seal,
            None => {
                let tag = self.mac(owner, value).finalize().into_bytes();
                let mut seal = [b'.'; 1 + TAG_CHARS];
                let Ok(TAG_CHARS) = URL_SAFE_NO_PAD.encode_slice(tag, &mut seal[1..]) else {
                    return false;
                };
                seal
            }
        };
        // Inserted by hand: `Vec::splice` costs several times this.
        let (end, len) = (id.end, buf.len());
        buf.resize(len + seal.len(), 0);
        buf.copy_within(end..len, end + seal.len());
        buf[end..end + seal.len()].copy_from_slice(&seal);
        true
    }

    /// Appends the sealed form of `id` to `out` (`false`: not a session id).
    #[cfg(test)]
    fn seal(&self, owner: &Owner, id: &[u8], out: &mut Vec<u8>) -> bool {
        let start = out.len();
        out.extend_from_slice(id);
        let sealed = self.seal_in_place(owner, None, out, start..out.len());
        if !sealed {
            out.truncate(start);
        }
        sealed
    }

    /// The length of the upstream's id inside `sealed`, as
    /// [`Sessions::unseal`] finds it, remembered per worker: a session's
    /// requests carry the same id again and again, and one checked for the
    /// same owner under the same key needs no second MAC. An entry holds
    /// the id as sent and its owner (a subject's grant kept alive, so that
    /// its address names no other), so only that owner's requests with
    /// those very bytes find it; what is remembered is bounded
    /// ([`REMEMBERED`] entries of at most [`Verified`]'s size).
    pub fn unseal_remembered(&self, owner: &Owner, sealed: &[u8]) -> Option<usize> {
        let slot = remembered_slot(sealed)?;
        let hit = REMEMBER.with_borrow(|entries| {
            entries[slot].as_ref().and_then(|entry| {
                (entry.serial == self.serial
                    && entry.sealed[..usize::from(entry.len)] == *sealed
                    && same_owner(&entry.owner, owner))
                .then_some(usize::from(entry.id_len))
            })
        });
        if hit.is_some() {
            return hit;
        }
        let id_len = self.unseal(owner, sealed)?.len();
        let mut kept = [0u8; REMEMBERED_BYTES];
        kept[..sealed.len()].copy_from_slice(sealed);
        REMEMBER.with_borrow_mut(|entries| {
            entries[slot] = Some(Remembered {
                serial: self.serial,
                owner: owner.clone(),
                sealed: kept,
                len: sealed.len() as u8,
                id_len: id_len as u8,
            });
        });
        Some(id_len)
    }

    /// The upstream's id inside `sealed`, when `sealed` was sealed for
    /// `owner` under this key; `None` for anything else (another owner's,
    /// another key's, malformed, or an id never sealed). The tag is
    /// compared in constant time.
    pub fn unseal<'a>(&self, owner: &Owner, sealed: &'a [u8]) -> Option<&'a [u8]> {
        let split = sealed.len().checked_sub(TAG_CHARS + 1)?;
        let (id, rest) = sealed.split_at(split);
        let text = rest.strip_prefix(b".")?;
        if !is_session_id(id) {
            return None;
        }
        let mut tag = [0u8; 33];
        let Ok(32) = URL_SAFE_NO_PAD.decode_slice(text, &mut tag) else {
            return None;
        };
        self.mac(owner, id).verify_slice(&tag[..32]).ok()?;
        Some(id)
    }
}

static NEXT_SERIAL: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Seals a worker remembers as checked (direct-mapped by the tag).
const REMEMBERED: usize = 64;
/// The longest sealed id remembered: an id [`Verified`] keeps, and its seal.
const REMEMBERED_BYTES: usize = KEPT_ID_BYTES + 1 + TAG_CHARS;

/// A sealed id found to hold an id of `id_len` bytes for `owner`.
struct Remembered {
    serial: u64,
    owner: Owner,
    sealed: [u8; REMEMBERED_BYTES],
    len: u8,
    id_len: u8,
}

thread_local! {
    static REMEMBER: std::cell::RefCell<[Option<Remembered>; REMEMBERED]> =
        const { std::cell::RefCell::new([const { None }; REMEMBERED]) };
}

/// Where `sealed` is remembered: read from its tag's last characters
/// (`None`: too long to remember, or too short to hold a tag).
fn remembered_slot(sealed: &[u8]) -> Option<usize> {
    if sealed.len() > REMEMBERED_BYTES || sealed.len() < TAG_CHARS {
        return None;
    }
    let last = &sealed[sealed.len() - 2..];
    Some((usize::from(last[0]) * 31 + usize::from(last[1])) % REMEMBERED)
}

fn same_owner(a: &Owner, b: &Owner) -> bool {
    match (a, b) {
        (Owner::Subject(a), Owner::Subject(b)) => Arc::ptr_eq(a, b),
        (Owner::Token(a), Owner::Token(b)) => a == b,
        _ => false,
    }
}

/// The spec's session id: visible ASCII (0x21 to 0x7E), at least one byte.
fn is_session_id(id: &[u8]) -> bool {
    !id.is_empty() && id.iter().all(|b| (0x21..=0x7E).contains(b))
}

fn token_digest(token: &[u8]) -> [u8; 32] {
    let mut hash = Sha256::new();
    hash.update(b"mcpgate token\0");
    hash.update(token);
    hash.finalize().into()
}

fn constant_time_eq(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |diff, (x, y)| diff | (x ^ y)) == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(byte: u8) -> SessionKey {
        SessionKey(vec![byte; 32].into())
    }

    fn grant(subject: Option<&str>) -> Arc<Grant> {
        Arc::new(Grant {
            subject: subject.map(str::to_owned),
            scopes: vec![],
            expires: u64::MAX,
        })
    }

    fn sealed(sessions: &Sessions, owner: &Owner, id: &[u8]) -> Vec<u8> {
        let mut out = Vec::new();
        assert!(sessions.seal(owner, id, &mut out));
        out
    }

    #[test]
    fn an_id_sealed_on_one_route_is_unknown_on_another_for_the_same_owner() {
        let github = Sessions::new(&key(1), None, &["t".to_owned()]).on_route("/github");
        let files = Sessions::new(&key(1), None, &["t".to_owned()]).on_route("/files");
        let owner = github.owner_of_token(Some(b"Bearer t")).unwrap();
        let id = sealed(&github, &owner, b"up-1");
        assert_eq!(github.unseal(&owner, &id), Some(&b"up-1"[..]));
        // The same bytes, the same caller and key, replayed on another route.
        assert_eq!(files.unseal(&owner, &id), None);
        assert_eq!(files.unseal_remembered(&owner, &id), None);
        let unrouted = Sessions::new(&key(1), None, &["t".to_owned()]);
        assert_eq!(unrouted.unseal(&owner, &id), None);
    }

    #[test]
    fn a_sealed_id_unseals_for_its_owner_only() {
        let sessions = Sessions::new(&key(1), Some("https://auth.example"), &[]);
        let alice = sessions.owner_of_grant(&grant(Some("alice")), None);
        let bob = sessions.owner_of_grant(&grant(Some("bob")), None);
        let id = sealed(&sessions, &alice, b"up-1");
        assert!(id.starts_with(b"up-1."));
        assert_eq!(id.len(), 4 + 1 + TAG_CHARS);
        assert!(id.iter().all(|b| (0x21..=0x7E).contains(b)));
        assert_eq!(sessions.unseal(&alice, &id), Some(&b"up-1"[..]));
        assert_eq!(sessions.unseal(&bob, &id), None);
        // The same subject from another issuer is someone else.
        let other = Sessions::new(&key(1), Some("https://other.example"), &[]);
        assert_eq!(other.unseal(&alice, &id), None);
        // Another key: another gateway's id.
        let rekeyed = Sessions::new(&key(2), Some("https://auth.example"), &[]);
        assert_eq!(rekeyed.unseal(&alice, &id), None);
        let same = Sessions::new(&key(1), Some("https://auth.example"), &[]);
        assert_eq!(same.unseal(&alice, &id), Some(&b"up-1"[..]));
    }

    #[test]
    fn a_remembered_seal_answers_only_its_owner_under_its_key() {
        let sessions = Sessions::new(&key(1), Some("https://auth.example"), &["t1".into()]);
        let alice = sessions.owner_of_grant(&grant(Some("alice")), None);
        let bob = sessions.owner_of_grant(&grant(Some("bob")), None);
        let token = sessions.owner_of_token(Some(b"Bearer t1")).unwrap();
        let id = sealed(&sessions, &alice, b"up-1");
        for _ in 0..2 {
            assert_eq!(sessions.unseal_remembered(&alice, &id), Some(4));
            assert_eq!(sessions.unseal_remembered(&bob, &id), None);
            assert_eq!(sessions.unseal_remembered(&token, &id), None);
        }
        // The same subject in another grant is checked again, and holds.
        let alice_again = sessions.owner_of_grant(&grant(Some("alice")), None);
        assert_eq!(sessions.unseal_remembered(&alice_again, &id), Some(4));
        // Another key's sessions remember nothing of these.
        let rekeyed = Sessions::new(&key(2), Some("https://auth.example"), &[]);
        assert_eq!(rekeyed.unseal_remembered(&alice, &id), None);
        // An altered byte is not the remembered id.
        let mut altered = id.clone();
        altered[1] ^= 1;
        assert_eq!(sessions.unseal_remembered(&alice, &altered), None);
        let token_id = sealed(&sessions, &token, b"up-2");
        assert_eq!(sessions.unseal_remembered(&token, &token_id), Some(4));
        assert_eq!(sessions.unseal_remembered(&token, &token_id), Some(4));
        assert_eq!(sessions.unseal_remembered(&alice, &token_id), None);
    }

    #[test]
    fn malformed_unsealed_and_altered_ids_are_unknown() {
        let sessions = Sessions::new(&key(1), None, &["t1".into(), "t2".into()]);
        let owner = sessions
            .owner_of_token(Some(b"Bearer t1"))
            .expect("a known token");
        let id = sealed(&sessions, &owner, b"a.b");
        assert_eq!(sessions.unseal(&owner, &id), Some(&b"a.b"[..]));
        let mut altered = id.clone();
        let last = altered.len() - 1;
        altered[last] = if altered[last] == b'A' { b'B' } else { b'A' };
        let mut other_id = id.clone();
        other_id[0] = b'x';
        for bad in [
            &b""[..],
            b"a.b",
            b".",
            &id[..id.len() - 1],
            &id[1..],
            &altered,
            &other_id,
            &[&id[..], b"x"].concat(),
        ] {
            assert_eq!(sessions.unseal(&owner, bad), None, "{bad:?}");
        }
        let t2 = sessions.owner_of_token(Some(b"Bearer t2")).unwrap();
        assert_eq!(sessions.unseal(&t2, &id), None);
        assert!(sessions.owner_of_token(Some(b"Bearer t3")).is_none());
        assert!(sessions.owner_of_token(None).is_none());
    }

    #[test]
    fn an_answer_naming_the_verified_id_gets_the_same_seal_without_a_second_mac() {
        let sessions = Sessions::new(&key(1), None, &["t".into()]);
        let owner = sessions.owner_of_token(Some(b"Bearer t")).unwrap();
        let id = sealed(&sessions, &owner, b"s-1");
        let verified = Verified::keep(&id, 3).unwrap();
        let mut headers = b"A: 1\r\nMcp-Session-Id: s-1\r\nB: 2\r\n".to_vec();
        assert!(sessions.seal_in_place(&owner, Some(&verified), &mut headers, 22..25));
        let expected = [&b"A: 1\r\nMcp-Session-Id: "[..], &id, b"\r\nB: 2\r\n"].concat();
        assert_eq!(headers, expected);
        // Another id is sealed afresh; a kept seal never stands for it.
        let mut other = b"s-2".to_vec();
        assert!(sessions.seal_in_place(&owner, Some(&verified), &mut other, 0..3));
        assert_eq!(other, sealed(&sessions, &owner, b"s-2"));
        assert!(Verified::keep(&id, 4).is_none());
        let long = sealed(&sessions, &owner, &[b'x'; 65]);
        assert!(Verified::keep(&long, 65).is_none());
    }

    #[test]
    fn an_id_outside_visible_ascii_is_not_sealed() {
        let sessions = Sessions::new(&key(1), None, &["t".into()]);
        let owner = sessions.owner_of_token(Some(b"Bearer t")).unwrap();
        for bad in [&b""[..], b"a b", b"a\tb", "é".as_bytes(), b"a\x7f"] {
            let mut out = Vec::new();
            assert!(!sessions.seal(&owner, bad, &mut out), "{bad:?}");
            assert!(out.is_empty());
        }
    }

    #[test]
    fn a_token_without_a_subject_owns_its_sessions_by_the_token() {
        let sessions = Sessions::new(&key(1), Some("https://auth.example"), &[]);
        let anonymous = grant(None);
        let one = sessions.owner_of_grant(&anonymous, Some(b"Bearer one"));
        let two = sessions.owner_of_grant(&anonymous, Some(b"Bearer two"));
        let id = sealed(&sessions, &one, b"s");
        assert!(sessions.unseal(&one, &id).is_some());
        assert!(sessions.unseal(&two, &id).is_none());
        // Not the subject "" either.
        let subject = sessions.owner_of_grant(&grant(Some("")), None);
        assert!(sessions.unseal(&subject, &id).is_none());
    }

    #[test]
    fn keys_are_read_from_hex_or_base64_of_32_bytes_or_more() {
        let hex = "00".repeat(32);
        assert_eq!(
            SessionKey::parse(&hex).unwrap(),
            SessionKey(vec![0; 32].into())
        );
        let b64 = STANDARD.encode([7u8; 40]);
        assert_eq!(
            SessionKey::parse(&b64).unwrap(),
            SessionKey(vec![7; 40].into())
        );
        let url = URL_SAFE_NO_PAD.encode([0xfbu8; 33]);
        assert_eq!(
            SessionKey::parse(&url).unwrap(),
            SessionKey(vec![0xfb; 33].into())
        );
        for bad in [
            "",
            "00",
            &"00".repeat(31),
            "not a key!",
            &STANDARD.encode([1u8; 16]),
        ] {
            let error = SessionKey::parse(bad).unwrap_err().to_string();
            assert!(bad.is_empty() || !error.contains(bad), "{error}");
        }
        assert_eq!(format!("{:?}", key(9)), "SessionKey(..)");
        let a = SessionKey::generate().unwrap();
        let b = SessionKey::generate().unwrap();
        assert_ne!(a, b);
        assert_eq!(a.0.len(), KEY_MIN_BYTES);
    }
}
