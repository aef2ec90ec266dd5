//! A tool's name as an upstream that matches names loosely reads it:
//! whitespace around it trimmed, case ignored. Such an upstream runs
//! `delete_order` for ` Delete_Order `, so what guards or checks a tool
//! (its scopes, its input root) must hold under every such spelling.
//! Hashed as the name is read: a lookup allocates nothing.

use std::hash::Hasher;

use rustc_hash::FxHasher;

/// `name` as a loose matcher reads it: whitespace around it trimmed, every
/// character lowercased (Unicode's mapping: `K`, the Kelvin sign, reads as
/// `k`, as Python's `str.lower` has it).
pub fn chars(name: &str) -> impl Iterator<Item = char> + '_ {
    name.trim().chars().flat_map(char::to_lowercase)
}

/// Whether a loose matcher reads `a` and `b` as one name.
pub fn same(a: &str, b: &str) -> bool {
    chars(a).eq(chars(b))
}

/// A hash of the loose reading of `name`: equal for names [`same`] holds
/// alike.
pub fn hash(name: &str) -> u64 {
    let mut hasher = FxHasher::default();
    for c in chars(name) {
        hasher.write_u32(u32::from(c));
    }
    hasher.finish()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn case_and_surrounding_whitespace_aside_names_are_the_same() {
        for spelling in [
            "Delete_Order",
            "DELETE_ORDER",
            " delete_order ",
            "\tDelete_order\n",
        ] {
            assert!(same(spelling, "delete_order"), "{spelling:?}");
            assert_eq!(hash(spelling), hash("delete_order"), "{spelling:?}");
        }
        assert!(same("\u{212A}ill", "kill"));
        assert!(!same("delete order", "delete_order"));
        assert!(!same("delete_orders", "delete_order"));
    }
}
