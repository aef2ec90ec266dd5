//! `email`: a plain address decided in one pass.
//!
//! `jsonschema` checks `email` with the `email_address` crate and then its
//! own host-name rules, a large share of a whole `tools/call` check that
//! carries an address. A plain address — a
//! dot-atom local part of ASCII characters and a domain of ASCII host-name
//! labels — is decided here in one pass over its bytes; everything else
//! (quoted local parts, domain literals, IDNA labels, non-ASCII, and every
//! address this pass does not accept) goes to `jsonschema`'s own check.

use std::sync::LazyLock;

use super::builtin;

/// Whether `text` is an `email` as `jsonschema` (draft 2020-12) has it.
pub fn is_email(text: &str) -> bool {
    is_plain_email(text) || builtin_email(text)
}

/// `jsonschema`'s own `email` check, for everything [`is_plain_email`]
/// does not accept. Kept out of line: the plain path stays small.
#[cold]
#[inline(never)]
fn builtin_email(text: &str) -> bool {
    static BUILTIN: LazyLock<jsonschema::Validator> = LazyLock::new(|| builtin::compile("email"));
    builtin::verdict(&BUILTIN, text)
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
///
/// One pass, one table load per byte: the address is most of what this
/// format costs a call.
fn is_plain_email(text: &str) -> bool {
    let bytes = text.as_bytes();
    let mut at = 0;
    // The local part: no dot first, last, or beside another.
    let mut after_dot = true;
    loop {
        let Some(&byte) = bytes.get(at) else {
            return false;
        };
        match CLASS[usize::from(byte)] {
            ALNUM | ATEXT | HYPHEN => after_dot = false,
            DOT if !after_dot => after_dot = true,
            AT => break,
            _ => return false,
        }
        at += 1;
    }
    if at == 0 || at > LOCAL_PART_MAX || after_dot {
        return false;
    }
    let domain = &bytes[at + 1..];
    if domain.is_empty() || domain.len() > DOMAIN_MAX {
        return false;
    }
    let mut label_start = 0;
    for (index, &byte) in domain.iter().enumerate() {
        match CLASS[usize::from(byte)] {
            ALNUM | HYPHEN => {}
            DOT => {
                if !is_plain_label(&domain[label_start..index]) {
                    return false;
                }
                label_start = index + 1;
            }
            _ => return false,
        }
    }
    is_plain_label(&domain[label_start..])
}

/// A label already known to hold only letters, digits and hyphens.
fn is_plain_label(label: &[u8]) -> bool {
    let (Some(&first), Some(&last)) = (label.first(), label.last()) else {
        return false;
    };
    label.len() <= LABEL_MAX
        && CLASS[usize::from(first)] == ALNUM
        && CLASS[usize::from(last)] == ALNUM
        && label.get(2..4).is_none_or(|pair| pair != b"--")
}

/// What a byte may be in a plain address.
const OTHER: u8 = 0;
/// ASCII letter or digit: `atext` and host-name label alike.
const ALNUM: u8 = 1;
/// Hyphen: `atext`, and inside a host-name label.
const HYPHEN: u8 = 2;
/// The rest of RFC 5322 `atext`.
const ATEXT: u8 = 3;
const DOT: u8 = 4;
const AT: u8 = 5;

static CLASS: [u8; 256] = {
    let mut table = [OTHER; 256];
    let mut byte = 0;
    while byte < 256 {
        let b = byte as u8;
        table[byte] = if b.is_ascii_alphanumeric() {
            ALNUM
        } else {
            match b {
                b'-' => HYPHEN,
                b'.' => DOT,
                b'@' => AT,
                b'!' | b'#' | b'$' | b'%' | b'&' | b'\'' | b'*' | b'+' | b'/' | b'=' | b'?'
                | b'^' | b'_' | b'`' | b'{' | b'|' | b'}' | b'~' => ATEXT,
                _ => OTHER,
            }
        };
        byte += 1;
    }
    table
};

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
