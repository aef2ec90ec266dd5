//! The scopes a `tools/call` needs, found under every spelling of the
//! tool's name (`crate::catalog::loose`): an upstream that matches names
//! loosely runs `delete_order` for ` Delete_Order `, so the call is checked
//! as that tool. Nothing is allocated per call.

use std::collections::BTreeMap;

use rustc_hash::FxHashMap;

use crate::catalog::loose::{self, chars as loose_chars, hash as loose_hash};

/// An `oauth_tool_scopes` entry that is not `tool=scope …`.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0:?} is not tool=scope")]
pub struct NotToolScope(pub String);

/// `oauth_tool_scopes` as a flag or variable gives it,
/// `tool=scope scope;tool=scope`.
pub fn parse(text: &str) -> Result<BTreeMap<String, Vec<String>>, NotToolScope> {
    let mut table = BTreeMap::new();
    for entry in text.split(';').map(str::trim).filter(|e| !e.is_empty()) {
        let bad = || NotToolScope(entry.to_owned());
        let (tool, needed) = entry.split_once('=').ok_or_else(bad)?;
        let needed = needed.split_whitespace().map(str::to_owned).collect();
        table.insert(tool.trim().to_owned(), needed);
    }
    Ok(table)
}

/// The configured tools' scopes, by loose name.
#[derive(Debug, Default)]
pub struct ToolScopes {
    by_loose: FxHashMap<u64, Vec<Entry>>,
}

#[derive(Debug)]
struct Entry {
    /// The loose name (trimmed, lowercased).
    loose: Box<str>,
    /// Every scope of every configured tool with this loose name: two
    /// tools spelled alike guard each other's calls with both their scopes.
    needed: Vec<String>,
}

impl ToolScopes {
    /// The table of `oauth_tool_scopes`.
    pub fn new(configured: &BTreeMap<String, Vec<String>>) -> ToolScopes {
        let mut table = ToolScopes::default();
        for (tool, needed) in configured {
            let loose: String = loose_chars(tool).collect();
            let bucket = table.by_loose.entry(loose_hash(tool)).or_default();
            let entry = match bucket.iter_mut().position(|e| *e.loose == *loose) {
                Some(at) => &mut bucket[at],
                None => {
                    bucket.push(Entry {
                        loose: loose.into(),
                        needed: Vec::new(),
                    });
                    bucket.last_mut().expect("just pushed")
                }
            };
            for scope in needed {
                if !entry.needed.contains(scope) {
                    entry.needed.push(scope.clone());
                }
            }
        }
        table
    }

    /// The scopes a call of `tool`, as sent, needs (`None`: none).
    pub fn needed(&self, tool: &str) -> Option<&[String]> {
        if self.by_loose.is_empty() {
            return None;
        }
        self.by_loose
            .get(&loose_hash(tool))?
            .iter()
            .find(|entry| loose::same(tool, &entry.loose))
            .map(|entry| entry.needed.as_slice())
    }

    /// Every distinct set of scopes some tool needs.
    pub fn all(&self) -> impl Iterator<Item = &[String]> {
        self.by_loose
            .values()
            .flatten()
            .map(|entry| entry.needed.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table(entries: &[(&str, &[&str])]) -> ToolScopes {
        ToolScopes::new(
            &entries
                .iter()
                .map(|(tool, needed)| {
                    (
                        (*tool).to_owned(),
                        needed.iter().map(|s| (*s).to_owned()).collect(),
                    )
                })
                .collect(),
        )
    }

    #[test]
    fn a_tool_is_found_under_any_case_and_surrounding_whitespace() {
        let scopes = table(&[("delete_order", &["orders:write"])]);
        for spelling in [
            "delete_order",
            "Delete_Order",
            "DELETE_ORDER",
            " delete_order ",
            "\tDelete_order\n",
        ] {
            assert_eq!(
                scopes.needed(spelling),
                Some(&["orders:write".to_owned()][..]),
                "{spelling:?}"
            );
        }
        assert_eq!(scopes.needed("delete_orders"), None);
        assert_eq!(scopes.needed("delete order"), None);
    }

    #[test]
    fn the_kelvin_sign_reads_as_k() {
        let scopes = table(&[("kill", &["admin"])]);
        assert!(scopes.needed("\u{212A}ill").is_some());
    }

    #[test]
    fn tools_spelled_alike_need_each_others_scopes() {
        let scopes = table(&[("Drop", &["a"]), ("drop", &["b", "a"])]);
        let needed = scopes.needed("DROP").unwrap();
        assert_eq!(needed.len(), 2);
        assert!(needed.contains(&"a".to_owned()) && needed.contains(&"b".to_owned()));
        assert_eq!(scopes.all().count(), 1);
    }
}
