//! The layering of ARCHITECTURE.md, held: every `crate::…` path under
//! `src/` names a module of its own layer or of a layer above it, every
//! top-level module has a layer, and no two top-level modules import each
//! other (directly or round a longer cycle).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Layer of each top-level module, from ARCHITECTURE.md's table.
fn layers() -> BTreeMap<String, u32> {
    let text = std::fs::read_to_string(root().join("ARCHITECTURE.md")).unwrap();
    let section = text
        .split("\n## ")
        .find(|s| s.starts_with("Layers"))
        .expect("a Layers section");
    let mut layers = BTreeMap::new();
    for line in section.lines() {
        let cells: Vec<&str> = line.split('|').map(str::trim).collect();
        let [_, layer, modules, ..] = cells.as_slice() else {
            continue;
        };
        let Ok(layer) = layer.parse::<u32>() else {
            continue;
        };
        for module in modules.split(',') {
            let module = module.trim().trim_matches('`');
            assert!(
                layers.insert(module.to_owned(), layer).is_none(),
                "{module} in two layers"
            );
        }
    }
    assert!(
        layers.len() > 5,
        "the Layers table was not read: {layers:?}"
    );
    layers
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level module a file under `src/` belongs to (`None`: the crate
/// roots).
fn module_of(file: &Path) -> Option<String> {
    let relative = file.strip_prefix(root().join("src")).unwrap();
    let first = relative.components().next()?.as_os_str().to_str()?;
    match first {
        "lib.rs" | "main.rs" => None,
        name => Some(name.trim_end_matches(".rs").to_owned()),
    }
}

/// The top-level modules a line names by a `crate::` path, including the
/// members of a `use crate::{a, b::c}` group.
fn named_modules(line: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (at, _) in line.match_indices("crate::") {
        let before = line[..at].chars().next_back();
        if before.is_some_and(|c| c.is_alphanumeric() || c == '_' || c == ':') {
            continue;
        }
        let rest = &line[at + "crate::".len()..];
        if let Some(group) = rest.strip_prefix('{') {
            let group = &group[..group.find('}').unwrap_or(group.len())];
            for member in group.split(',') {
                let head = member.trim().split("::").next().unwrap_or("");
                if !head.is_empty() {
                    out.push(head.to_owned());
                }
            }
        } else {
            let head: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            out.push(head);
        }
    }
    out
}

#[test]
fn every_import_goes_to_its_own_layer_or_one_above() {
    let layers = layers();
    let mut files = Vec::new();
    rust_files(&root().join("src"), &mut files);
    let mut edges: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    let mut wrong = Vec::new();
    for file in &files {
        let Some(module) = module_of(file) else {
            continue;
        };
        let Some(&layer) = layers.get(&module) else {
            panic!("src/{module} has no layer in ARCHITECTURE.md");
        };
        let text = std::fs::read_to_string(file).unwrap();
        for (n, line) in text.lines().enumerate() {
            if line.trim_start().starts_with("//") {
                continue;
            }
            for target in named_modules(line) {
                if target == module {
                    continue;
                }
                let Some(&target_layer) = layers.get(&target) else {
                    continue; // a crate-root item (a re-export), not a module
                };
                edges
                    .entry(module.clone())
                    .or_default()
                    .insert(target.clone());
                if target_layer > layer {
                    wrong.push(format!(
                        "{}:{}: {module} (layer {layer}) uses {target} (layer {target_layer})",
                        file.strip_prefix(root()).unwrap().display(),
                        n + 1
                    ));
                }
            }
        }
    }
    assert!(
        wrong.is_empty(),
        "imports against the layering:\n{}",
        wrong.join("\n")
    );
    // Within a layer too: no cycle between top-level modules.
    for start in edges.keys() {
        let mut stack = vec![(start.clone(), vec![start.clone()])];
        while let Some((at, path)) = stack.pop() {
            for next in edges.get(&at).into_iter().flatten() {
                assert!(next != start, "a cycle: {} -> {next}", path.join(" -> "));
                if !path.contains(next) {
                    let mut longer = path.clone();
                    longer.push(next.clone());
                    stack.push((next.clone(), longer));
                }
            }
        }
    }
}

#[test]
fn the_reader_finds_paths_and_groups_but_not_lookalikes() {
    assert_eq!(
        named_modules("use crate::{gate::Gate, reject::Reason};"),
        ["gate", "reject"]
    );
    assert_eq!(
        named_modules("let x = crate::server::sock::peek(s);"),
        ["server"]
    );
    assert!(named_modules("use mycrate::gate;").is_empty());
    assert!(named_modules("use super::crate_like;").is_empty());
}
