//! `format` checks the value gate makes its own: the same verdicts as
//! `jsonschema`'s built-in ones, the common case decided in one pass.
//!
//! Why: `jsonschema` checks `email` with the `email_address` crate and then
//! its own host-name rules, about 5,400 instructions for `buyer@example.com`,
//! a third of a whole 10-property `tools/call` check. A plain address — a
//! dot-atom local part of ASCII characters and a domain of ASCII host-name
//! labels — is decided here in one pass over its bytes; everything else
//! (quoted local parts, domain literals, IDNA labels, non-ASCII, and every
//! address this pass does not accept) goes to `jsonschema`'s own check, so
//! the verdict is always that check's. The tests hold the two equal on
//! generated addresses around every rule.

use std::sync::LazyLock;

use jsonschema::ValidationOptions;
use jsonschema::json::Json;

/// Registers the gate's checks of the formats it decides itself.
pub fn with_own_formats<'i, R, F: Json>(
    options: ValidationOptions<'i, R, F>,
) -> ValidationOptions<'i, R, F> {
    options.with_format("email", is_email)
}

/// Whether `text` is an `email` as `jsonschema` (draft 2020-12) has it.
pub fn is_email(text: &str) -> bool {
    is_plain_email(text) || builtin_email(text)
}

/// `jsonschema`'s own `email` check, for everything [`is_plain_email`]
/// does not accept.
fn builtin_email(text: &str) -> bool {
    static BUILTIN: LazyLock<jsonschema::Validator> = LazyLock::new(|| {
        jsonschema::options()
            .with_draft(jsonschema::Draft::Draft202012)
            .should_validate_formats(true)
            .build(&serde_json::json!({ "format": "email" }))
            .expect("a bare format schema compiles")
    });
    BUILTIN.is_valid(&serde_json::Value::String(text.to_owned()))
}

/// Longest local part (RFC 5321, and `email_address`'s limit).
const LOCAL_PART_MAX: usize = 64;
/// Longest host name (`jsonschema`'s limit, below `email_address`'s 254).
const DOMAIN_MAX: usize = 253;
/// Longest host-name label.
const LABEL_MAX: usize = 63;

/// An address both `email_address` and `jsonschema`'s host-name rules
/// accept: `local@domain` with one `@`, the local part dot-separated atoms
/// of RFC 5322 `atext` (ASCII only), the domain dot-separated labels of
/// ASCII letters, digits and hyphens that start and end with a letter or
/// digit and do not have `--` at their third byte (where IDNA rules would
/// apply). `false` only means "not decided here".
fn is_plain_email(text: &str) -> bool {
    let bytes = text.as_bytes();
    let Some(at) = bytes.iter().position(|&byte| byte == b'@') else {
        return false;
    };
    is_dot_atom(&bytes[..at]) && is_host_name(&bytes[at + 1..])
}

fn is_dot_atom(local: &[u8]) -> bool {
    if local.is_empty() || local.len() > LOCAL_PART_MAX {
        return false;
    }
    // No dot first, last, or beside another.
    let mut after_dot = true;
    for &byte in local {
        if byte == b'.' {
            if after_dot {
                return false;
            }
            after_dot = true;
        } else if is_atext(byte) {
            after_dot = false;
        } else {
            return false;
        }
    }
    !after_dot
}

/// RFC 5322 `atext`, ASCII only.
fn is_atext(byte: u8) -> bool {
    ATEXT[usize::from(byte)]
}

/// [`is_atext`] by byte: one load per byte.
static ATEXT: [bool; 256] = {
    let mut table = [false; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = b.is_ascii_alphanumeric()
            || matches!(
                b,
                b'!' | b'#'
                    | b'$'
                    | b'%'
                    | b'&'
                    | b'\''
                    | b'*'
                    | b'+'
                    | b'-'
                    | b'/'
                    | b'='
                    | b'?'
                    | b'^'
                    | b'_'
                    | b'`'
                    | b'{'
                    | b'|'
                    | b'}'
                    | b'~'
            );
        byte += 1;
    }
    table
};

fn is_host_name(domain: &[u8]) -> bool {
    !domain.is_empty()
        && domain.len() <= DOMAIN_MAX
        && domain.split(|&byte| byte == b'.').all(is_plain_label)
}

fn is_plain_label(label: &[u8]) -> bool {
    let (Some(first), Some(last)) = (label.first(), label.last()) else {
        return false;
    };
    label.len() <= LABEL_MAX
        && first.is_ascii_alphanumeric()
        && last.is_ascii_alphanumeric()
        && label
            .iter()
            .all(|byte| byte.is_ascii_alphanumeric() || *byte == b'-')
        && label.get(2..4).is_none_or(|pair| pair != b"--")
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    #[test]
    fn plain_addresses_are_decided_in_one_pass() {
        for address in [
            "buyer@example.com",
            "a@b",
            "first.last+tag@sub.example-host.org",
            "!#$%&'*+-/=?^_`{|}~@x.io",
            "x@1.2.3.4",
            "-@a-b.c",
        ] {
            assert!(is_plain_email(address), "{address}");
            assert!(builtin_email(address), "{address}");
        }
    }

    #[test]
    fn every_other_form_gets_the_builtin_verdict() {
        let long_local = format!("{}@x.com", "a".repeat(LOCAL_PART_MAX + 1));
        let long_label = format!("a@{}.com", "b".repeat(LABEL_MAX + 1));
        let long_domain = format!("a@{}", vec!["c".repeat(50); 6].join("."));
        for (address, valid) in [
            ("\"quoted local\"@example.com", true),
            ("\"\"@example.com", true),
            ("a@[127.0.0.1]", true),
            ("a@[IPv6:::1]", true),
            ("a@xn--nxasmq6b.com", true),
            ("a@ab--cd.com", false),
            // `email_address` takes display text; so does `jsonschema`.
            ("Name <a@example.com>", true),
            ("a..b@example.com", false),
            (".a@example.com", false),
            ("a.@example.com", false),
            ("a@-example.com", false),
            ("a@example-.com", false),
            ("a@example..com", false),
            ("a@example.com.", false),
            ("a@b@c.com", false),
            ("@example.com", false),
            ("a@", false),
            ("a", false),
            ("", false),
            ("ü@example.com", false),
            (long_local.as_str(), false),
            (long_label.as_str(), false),
            (long_domain.as_str(), false),
        ] {
            assert!(!is_plain_email(address), "{address}");
            assert_eq!(is_email(address), valid, "{address}");
            assert_eq!(builtin_email(address), valid, "{address}");
        }
    }

    #[test]
    fn the_limits_are_the_builtin_ones() {
        for (local, label, labels) in [
            (LOCAL_PART_MAX, LABEL_MAX, 1),
            (LOCAL_PART_MAX + 1, 3, 1),
            (3, LABEL_MAX + 1, 1),
            // 4 labels of 63 and 3 dots: 255 bytes; 62-byte ones: 251.
            (3, LABEL_MAX, 4),
            (3, LABEL_MAX - 1, 4),
        ] {
            let domain = vec!["d".repeat(label); labels].join(".");
            let address = format!("{}@{domain}", "l".repeat(local));
            assert_eq!(
                is_plain_email(&address),
                builtin_email(&address),
                "{local} {label} {labels}"
            );
        }
    }

    proptest! {
        #[test]
        fn any_text_gets_the_builtin_verdict(text in "[a-c0-9.@\\-_+\"\\[\\] <>!~xnü]{0,24}") {
            prop_assert_eq!(is_email(&text), builtin_email(&text), "{:?}", text);
        }

        #[test]
        fn address_shaped_text_gets_the_builtin_verdict(
            local in "[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]{0,70}",
            domain in "([a-zA-Z0-9-]{0,66}\\.){0,4}[a-zA-Z0-9-]{0,66}",
        ) {
            let address = format!("{local}@{domain}");
            if is_plain_email(&address) {
                prop_assert!(builtin_email(&address), "{:?}", address);
            }
            prop_assert_eq!(is_email(&address), builtin_email(&address), "{:?}", address);
        }
    }
}
