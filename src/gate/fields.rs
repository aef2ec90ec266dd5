//! The header fields held to one reading: those the gate or the upstream
//! act on, where two copies (or a `Connection` header that strips one on
//! the way out) would let the gate check one value and the upstream act on
//! another. One table, read by the server's head parser (`check_fields`)
//! and, for an embedder's header map, by `check_map` (feature `http`).
#![cfg_attr(not(any(feature = "server", feature = "http")), allow(dead_code))]

use crate::reject::Reason;

/// A field that must appear at most once.
struct Singleton {
    /// The canonical name; compared ASCII case-insensitively.
    name: &'static str,
    /// A comma in the value is two values joined (RFC 9110 §5.3): refused
    /// like a repeat. Not for fields whose one value may hold a comma (a
    /// resource URI in `Mcp-Name`, a session id, an argument mirrored in
    /// `Mcp-Param-*`, an auth scheme's parameters, a media type's quoted
    /// parameter); those are compared whole by the gate or passed whole.
    no_comma: bool,
}

const fn one(name: &'static str, no_comma: bool) -> Singleton {
    Singleton { name, no_comma }
}

/// Fields that must appear once at most. `Content-Length` is not here: the
/// head parser accepts identical copies and refuses differing ones (RFC
/// 9112 §6.3).
const SINGLETONS: [Singleton; 9] = [
    one("Host", true),
    one("Content-Type", false),
    // A list may hold `identity` alone (`service::wire`): a second line
    // is refused here, a joined value there.
    one("Content-Encoding", false),
    one("MCP-Protocol-Version", true),
    one("Mcp-Method", true),
    one("Mcp-Name", false),
    one("Mcp-Session-Id", false),
    one("Origin", true),
    one("Authorization", false),
];
/// `Origin`'s place in [`SINGLETONS`].
#[cfg(feature = "server")]
const ORIGIN_AT: usize = 7;

/// Every `Mcp-Param-{Name}` header is a singleton of its own name.
pub(crate) const PARAM_PREFIX: &str = "Mcp-Param-";
/// How a repeated mirrored argument is named in the answer.
const PARAM_CANONICAL: &str = "Mcp-Param-*";

/// Fields a `Connection` header may not nominate (RFC 9110 §7.6.1 makes a
/// nominated field hop-by-hop, so the forwarder would drop it after the
/// gate had read it): what the gate checks and what the upstream needs.
/// Every `Mcp-*` and `MCP-*` field is covered by its prefix.
const NOT_HOP_BY_HOP: [&str; 7] = [
    "Host",
    "Authorization",
    "Content-Type",
    "Content-Length",
    "Accept",
    "Origin",
    "Last-Event-ID",
];
const MCP_PREFIX: &str = "Mcp-";

/// Fields the gateway sets, drops or checks besides those above: framing
/// and hop-by-hop fields and what the forwarder rewrites. CGI and WSGI
/// stacks (and others that map field names to variables) read `_` as `-`,
/// so `Content_Length` or `Mcp_Method` is the same field to them while the
/// gateway sees another: a name holding `_` that spells a field of these
/// tables, any `Mcp-*` or any `Proxy-*` field is refused
/// ([`underscored`]). A name without `-` (`Connection`, `Accept`, `TE`)
/// cannot be spelled with `_`.
const SPELLED: [&str; 3] = ["Transfer-Encoding", "Keep-Alive", "Accept-Encoding"];
/// Hop-by-hop by their prefix (the forwarder drops them).
const PROXY_PREFIX: &str = "Proxy-";

/// What a head's fields may not be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FieldError {
    /// A singleton sent twice, or with two values joined by a comma. The
    /// canonical name (`Mcp-Param-*` for any mirrored argument).
    Repeated(&'static str),
    /// HTTP/1.1 without `Host` (RFC 9112 §3.2).
    MissingHost,
    /// A `Connection` header naming a field the gate or the upstream reads
    /// (the canonical name, `Mcp-*` for any MCP field).
    Nominated(&'static str),
    /// A field name holding `_` that, read with `-` for `_`, names a field
    /// the gateway sets or checks (the canonical name, `Mcp-Param-*` or
    /// `Mcp-*` for an MCP field the tables do not list).
    Underscored(&'static str),
}

impl FieldError {
    /// The rejection-table row it is answered with.
    pub fn reason(self) -> Reason {
        match self {
            FieldError::Repeated(_) => Reason::RepeatedHeader,
            FieldError::MissingHost => Reason::MissingHost,
            FieldError::Nominated(_) => Reason::NominatedHeader,
            FieldError::Underscored(_) => Reason::UnderscoredHeader,
        }
    }
}

/// What a field's name makes it, for both checkers.
enum Kind {
    Connection,
    /// A mirrored argument: a singleton of its own name.
    Param,
    /// `SINGLETONS[index]`.
    Singleton(usize),
    Other,
}

fn kind(name: &[u8]) -> Kind {
    if name.eq_ignore_ascii_case(b"connection") {
        Kind::Connection
    } else if starts_with_ignore_case(name, PARAM_PREFIX) {
        Kind::Param
    } else {
        SINGLETONS
            .iter()
            .position(|s| {
                s.name.len() == name.len() && s.name.as_bytes().eq_ignore_ascii_case(name)
            })
            .map_or(Kind::Other, Kind::Singleton)
    }
}

fn starts_with_ignore_case(name: &[u8], prefix: &str) -> bool {
    name.get(..prefix.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(prefix.as_bytes()))
}

/// Whether `sent` is `name` once `_` is read as `-`, case aside (`name`
/// itself holds no `_`).
pub(crate) fn spells(sent: &[u8], name: &[u8]) -> bool {
    sent.len() == name.len() && sent.iter().zip(name).all(|(&s, &n)| same_byte(s, n))
}

fn spells_prefix(sent: &[u8], prefix: &str) -> bool {
    sent.get(..prefix.len())
        .is_some_and(|p| spells(p, prefix.as_bytes()))
}

#[inline]
fn same_byte(sent: u8, name: u8) -> bool {
    sent.eq_ignore_ascii_case(&name) || (sent == b'_' && name == b'-')
}

/// The field a name holding `_` stands for, read with `-` for `_`, when it
/// is one the gateway sets or checks (`None` for a name without `_`: the
/// tables compare those as they are). An `Mcp-Param-` prefix spelled
/// exactly leaves the argument's own name alone: an annotation may hold
/// `_`, and a mirrored argument no annotation names is refused by the
/// gate.
pub(crate) fn underscored(name: &[u8]) -> Option<&'static str> {
    if !name.contains(&b'_') {
        return None;
    }
    if let Some(field) = SINGLETONS.iter().find(|s| spells(name, s.name.as_bytes())) {
        return Some(field.name);
    }
    if let Some(field) = SPELLED
        .iter()
        .chain(NOT_HOP_BY_HOP.iter())
        .find(|n| spells(name, n.as_bytes()))
    {
        return Some(field);
    }
    if spells_prefix(name, PARAM_PREFIX) {
        return (!starts_with_ignore_case(name, PARAM_PREFIX)).then_some(PARAM_CANONICAL);
    }
    if spells_prefix(name, PROXY_PREFIX) {
        return Some("Proxy-*");
    }
    spells_prefix(name, MCP_PREFIX).then_some("Mcp-*")
}

/// What [`check_fields`] saw besides what it refuses, for the stages after
/// it: kept in the server's parsed head.
#[cfg(feature = "server")]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Seen {
    /// How many `Mcp-Param-*` fields the head holds (each another name).
    pub(crate) params: usize,
    /// Some name holds `_` (and spells no field of the tables): the
    /// service compares those with the identity headers it sets.
    pub(crate) underscored: bool,
    /// The head holds an `Origin`: only then does the service look for
    /// CORS (a server-to-server request pays nothing for it).
    pub(crate) origin: bool,
}

/// Checks the fields of a parsed head: each singleton at most once (and
/// whole), `Host` present on HTTP/1.1, no protected field nominated by
/// `Connection`, none spelled with `_` for `-`. No allocation: a bit per
/// singleton, the `Mcp-Param-*` names compared pairwise (a head holds at
/// most `MAX_HEADERS_CAP`), and a second look only at a name holding `_`.
#[cfg(feature = "server")]
pub(crate) fn check_fields(
    headers: &[httparse::Header<'_>],
    http10: bool,
) -> Result<Seen, FieldError> {
    let mut seen = 0u16;
    let mut params = 0usize;
    let mut underscored = false;
    for (i, h) in headers.iter().enumerate() {
        let name = h.name.as_bytes();
        match kind(name) {
            Kind::Connection => check_nominated(h.value)?,
            Kind::Param => {
                params += 1;
                if params > 1
                    && headers[..i]
                        .iter()
                        .any(|e| e.name.as_bytes().eq_ignore_ascii_case(name))
                {
                    return Err(FieldError::Repeated(PARAM_CANONICAL));
                }
            }
            Kind::Singleton(at) => {
                let field = &SINGLETONS[at];
                if seen & (1 << at) != 0 || (field.no_comma && h.value.contains(&b',')) {
                    return Err(FieldError::Repeated(field.name));
                }
                seen |= 1 << at;
            }
            Kind::Other => {
                if name.contains(&b'_') {
                    if let Some(field) = underscored_field(name) {
                        return Err(FieldError::Underscored(field));
                    }
                    underscored = true;
                }
            }
        }
    }
    if !http10 && seen & 1 == 0 {
        return Err(FieldError::MissingHost);
    }
    Ok(Seen {
        params,
        underscored,
        origin: seen & (1 << ORIGIN_AT) != 0,
    })
}

/// [`underscored`], out of line: the rare name holding `_`.
#[cfg(feature = "server")]
#[cold]
#[inline(never)]
fn underscored_field(name: &[u8]) -> Option<&'static str> {
    underscored(name)
}

/// The same rules over a header map that keeps every copy of a field
/// (`http::HeaderMap`, what an axum or hyper handler holds): each
/// singleton once (and whole), no protected field nominated. `Host` is not
/// required: an HTTP/2 request carries its authority in the URI, and the
/// embedder's HTTP stack has already framed the request.
#[cfg(feature = "http")]
pub(crate) fn check_map(map: &::http::HeaderMap) -> Result<(), FieldError> {
    // `keys` yields each name once (lowercase); `get_all` its every copy.
    for name in map.keys() {
        let mut values = map.get_all(name).iter();
        let (canonical, no_comma) = match kind(name.as_str().as_bytes()) {
            Kind::Connection => {
                values.try_for_each(|v| check_nominated(v.as_bytes()))?;
                continue;
            }
            Kind::Param => (PARAM_CANONICAL, false),
            Kind::Singleton(at) => (SINGLETONS[at].name, SINGLETONS[at].no_comma),
            Kind::Other => match underscored(name.as_str().as_bytes()) {
                Some(field) => return Err(FieldError::Underscored(field)),
                None => continue,
            },
        };
        let first = values.next();
        let joined = no_comma && first.is_some_and(|v| v.as_bytes().contains(&b','));
        if joined || values.next().is_some() {
            return Err(FieldError::Repeated(canonical));
        }
    }
    Ok(())
}

/// The tokens of one `Connection` value against the fields it may not
/// name.
fn check_nominated(value: &[u8]) -> Result<(), FieldError> {
    for token in value.split(|&b| b == b',') {
        let token = token.trim_ascii();
        if starts_with_ignore_case(token, MCP_PREFIX) {
            return Err(FieldError::Nominated("Mcp-*"));
        }
        if let Some(name) = NOT_HOP_BY_HOP
            .iter()
            .find(|n| n.as_bytes().eq_ignore_ascii_case(token))
        {
            return Err(FieldError::Nominated(name));
        }
    }
    Ok(())
}

#[cfg(all(test, feature = "server"))]
mod tests {
    use super::*;

    /// The fields `lines` name, read as the head of an HTTP/1.1 request.
    fn seen(lines: &[(&'static str, &'static str)]) -> Result<Seen, FieldError> {
        let headers: Vec<httparse::Header<'_>> = lines
            .iter()
            .map(|&(name, value)| httparse::Header {
                name,
                value: value.as_bytes(),
            })
            .collect();
        check_fields(&headers, false)
    }

    fn check(lines: &[(&'static str, &'static str)]) -> Result<(), FieldError> {
        seen(lines).map(drop)
    }

    #[test]
    fn host_is_the_first_singleton_so_its_bit_says_whether_it_was_sent() {
        assert_eq!(SINGLETONS[0].name, "Host");
        assert!(SINGLETONS.len() <= 16, "the seen set is a u16");
    }

    #[test]
    fn each_singleton_sent_twice_in_any_case_is_refused_by_its_name() {
        for field in &SINGLETONS {
            let lower: &'static str = field.name.to_ascii_lowercase().leak();
            let mut lines = vec![("Host", "h")];
            if field.name != "Host" {
                lines.push((field.name, "a"));
            }
            lines.push((lower, "a"));
            assert_eq!(
                check(&lines),
                Err(FieldError::Repeated(field.name)),
                "{}",
                field.name
            );
        }
    }

    #[test]
    fn joined_values_are_refused_only_where_one_value_has_no_comma() {
        assert_eq!(
            check(&[("Host", "a, b")]),
            Err(FieldError::Repeated("Host"))
        );
        assert_eq!(
            check(&[("Host", "h"), ("Mcp-Method", "tools/call, tools/list")]),
            Err(FieldError::Repeated("Mcp-Method"))
        );
        assert_eq!(
            check(&[
                ("Host", "h"),
                ("Origin", "http://localhost,http://evil.example")
            ]),
            Err(FieldError::Repeated("Origin"))
        );
        for (name, value) in [
            ("Mcp-Name", "file:///a,b"),
            ("Mcp-Session-Id", "a,b"),
            ("Authorization", "Digest a=1, b=2"),
            ("Content-Type", "application/json; x=\"a,b\""),
            ("Mcp-Param-Region", "us, eu"),
        ] {
            assert_eq!(check(&[("Host", "h"), (name, value)]), Ok(()), "{name}");
        }
    }

    #[test]
    fn a_mirrored_argument_sent_twice_is_refused_and_two_different_ones_pass() {
        assert_eq!(
            check(&[("Host", "h"), ("Mcp-Param-A", "1"), ("mcp-param-a", "2")]),
            Err(FieldError::Repeated("Mcp-Param-*"))
        );
        assert_eq!(
            check(&[("Host", "h"), ("Mcp-Param-A", "1"), ("Mcp-Param-B", "1")]),
            Ok(())
        );
    }

    #[test]
    fn an_origin_in_any_case_is_noted_for_the_service() {
        assert_eq!(SINGLETONS[ORIGIN_AT].name, "Origin");
        for name in ["Origin", "origin", "ORIGIN"] {
            let found = seen(&[("Host", "h"), (name, "http://localhost")]);
            assert!(found.unwrap().origin, "{name}");
        }
        assert!(!seen(&[("Host", "h"), ("X-Origin", "a")]).unwrap().origin);
    }

    #[test]
    fn host_is_required_on_http_1_1_only() {
        assert_eq!(check(&[("Accept", "*/*")]), Err(FieldError::MissingHost));
        assert_eq!(check_fields(&[], true), Ok(Seen::default()));
    }

    #[test]
    fn a_name_spelling_a_field_the_gateway_reads_with_underscores_is_refused() {
        for (name, field) in [
            ("Content_Length", "Content-Length"),
            ("transfer_encoding", "Transfer-Encoding"),
            ("Content_Type", "Content-Type"),
            ("CONTENT_ENCODING", "Content-Encoding"),
            ("Accept_Encoding", "Accept-Encoding"),
            ("Keep_Alive", "Keep-Alive"),
            ("Last_Event_ID", "Last-Event-ID"),
            ("Mcp_Method", "Mcp-Method"),
            ("mcp_name", "Mcp-Name"),
            ("Mcp-Session_Id", "Mcp-Session-Id"),
            ("MCP_PROTOCOL_VERSION", "MCP-Protocol-Version"),
            ("Mcp_Param_Region", "Mcp-Param-*"),
            ("Mcp-Param_Region", "Mcp-Param-*"),
            ("Mcp_Other", "Mcp-*"),
            ("Proxy_Authorization", "Proxy-*"),
        ] {
            assert_eq!(
                check(&[("Host", "h"), (name, "1")]),
                Err(FieldError::Underscored(field)),
                "{name}"
            );
            assert_eq!(underscored(name.as_bytes()), Some(field), "{name}");
        }
    }

    #[test]
    fn other_names_with_underscores_pass_and_are_noted_for_the_service() {
        let plain = seen(&[("Host", "h"), ("Content-Length", "1"), ("X-Trace", "1")]);
        assert_eq!(plain, Ok(Seen::default()));
        let other = seen(&[("Host", "h"), ("X_Auth_Subject", "admin")]);
        assert_eq!(
            other,
            Ok(Seen {
                params: 0,
                underscored: true,
                origin: false
            })
        );
        // An argument's own name may hold `_`: the prefix is exact.
        let param = seen(&[
            ("Host", "h"),
            ("Mcp-Param-Order_Id", "1"),
            ("Mcp-Param-B", "2"),
        ]);
        assert_eq!(
            param,
            Ok(Seen {
                params: 2,
                underscored: false,
                origin: false
            })
        );
        assert!(spells(b"X_Auth-subject", b"X-Auth-Subject"));
        assert!(!spells(b"X-Auth-Subject", b"X_Auth_Subject"));
    }

    #[test]
    fn connection_may_not_nominate_what_the_gate_or_upstream_reads() {
        for (value, name) in [
            ("Mcp-Name, Mcp-Method, MCP-Protocol-Version", "Mcp-*"),
            ("keep-alive, mcp-param-region", "Mcp-*"),
            ("authorization", "Authorization"),
            ("close,Content-Type", "Content-Type"),
            ("Accept", "Accept"),
            ("Origin", "Origin"),
            ("Host", "Host"),
            ("Last-Event-ID", "Last-Event-ID"),
        ] {
            assert_eq!(
                check(&[("Host", "h"), ("Connection", value)]),
                Err(FieldError::Nominated(name)),
                "{value}"
            );
        }
        assert_eq!(
            check(&[
                ("Host", "h"),
                ("Connection", "keep-alive, X-Private, Upgrade")
            ]),
            Ok(())
        );
    }
}
