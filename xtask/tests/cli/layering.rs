//! xtask's modules import each other without a circle, and no command reaches into another:
//! they share only the leaf modules (`manifest`, `upstream`, `exit`).

use crate::common::repo_root;
use std::collections::{BTreeMap, BTreeSet};

/// Module -> the `crate::` modules it names, read from xtask/src.
fn imports() -> BTreeMap<String, BTreeSet<String>> {
    let src = repo_root().join("xtask/src");
    let mut graph = BTreeMap::new();
    for entry in std::fs::read_dir(&src).unwrap() {
        let path = entry.unwrap().path();
        let module = path.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&path).unwrap();
        let mut uses = BTreeSet::new();
        for (at, _) in text.match_indices("crate::") {
            let rest = &text[at + "crate::".len()..];
            let name: String = rest
                .chars()
                .take_while(|c| c.is_ascii_alphanumeric() || *c == '_')
                .collect();
            if !name.is_empty() && name != module {
                uses.insert(name);
            }
        }
        graph.insert(module, uses);
    }
    graph
}

/// A circle through `module`, if the graph has one reachable from it.
fn circle(
    graph: &BTreeMap<String, BTreeSet<String>>,
    module: &str,
    path: &mut Vec<String>,
) -> Option<Vec<String>> {
    if let Some(at) = path.iter().position(|m| m == module) {
        let mut found = path[at..].to_vec();
        found.push(module.to_owned());
        return Some(found);
    }
    path.push(module.to_owned());
    for next in graph.get(module).into_iter().flatten() {
        if let Some(found) = circle(graph, next, path) {
            return Some(found);
        }
    }
    path.pop();
    None
}

#[test]
fn the_module_imports_have_no_circle_and_commands_share_only_leaves() {
    let graph = imports();
    assert!(graph.contains_key("manifest"), "{graph:?}");
    for module in graph.keys() {
        let found = circle(&graph, module, &mut Vec::new());
        assert_eq!(found, None, "import circle in xtask/src");
    }
    let leaves = ["manifest", "upstream", "exit"];
    for (module, uses) in &graph {
        for used in uses {
            // A command may use its own parts (`verify` -> `verify_fix`, `core` -> `core_diff`).
            let allowed =
                leaves.contains(&used.as_str()) || used.starts_with(&format!("{module}_"));
            assert!(allowed, "xtask/src/{module}.rs uses crate::{used}");
        }
    }
    for leaf in leaves {
        let uses = &graph[leaf];
        assert!(
            uses.iter().all(|u| leaves.contains(&u.as_str())),
            "{leaf} is a leaf, yet uses {uses:?}"
        );
    }
}

/// The project's crates a crate's `[dependencies]` name (dev-dependencies aside).
fn project_dependencies(dir: &str) -> BTreeSet<String> {
    let text = std::fs::read_to_string(repo_root().join(dir).join("Cargo.toml")).unwrap();
    let manifest: toml_edit::DocumentMut = text.parse().unwrap();
    manifest["dependencies"]
        .as_table()
        .map(|deps| {
            deps.iter()
                .filter_map(|(name, _)| name.strip_prefix("mooncake-sos-"))
                .map(str::to_owned)
                .collect()
        })
        .unwrap_or_default()
}

/// The crates stand in the layers docs/architecture.md draws: support, then the manifest, at the
/// bottom, the generator and the checkers side by side on them (neither reaches into the other), the
/// consumer's checks (`checks`) over the checkers, the command lines (xtask, the package's `cli`) on
/// top. Cargo already refuses a circle; this keeps the sides apart.
#[test]
fn the_crates_stand_in_layers() {
    let expected: [(&str, &[&str]); 9] = [
        ("support", &[]),
        ("manifest", &["support"]),
        ("codegen", &["manifest", "support"]),
        ("pysource", &["manifest", "support"]),
        ("native", &["manifest", "pysource", "support"]),
        ("watch", &["manifest", "native", "pysource", "support"]),
        ("runtime", &[]),
        // The checks a consumer runs, over the checkers; both command lines on top of them.
        (
            "checks",
            &["manifest", "native", "pysource", "support", "watch"],
        ),
        ("cli", &["checks", "support"]),
    ];
    for (dir, allowed) in expected {
        let found = project_dependencies(dir);
        let allowed: BTreeSet<String> = allowed.iter().map(|&d| d.to_owned()).collect();
        assert_eq!(found, allowed, "{dir}/Cargo.toml [dependencies]");
    }
    let workspace = std::fs::read_to_string(repo_root().join("Cargo.toml")).unwrap();
    for dir in [
        "support", "manifest", "codegen", "pysource", "native", "watch", "checks", "cli",
    ] {
        assert!(
            workspace.contains(&format!("\"{dir}\"")),
            "{dir} is a member"
        );
    }
}

/// The runtime names no attribute of the native core outside its tests: which class and
/// which field hold a replica count (and every other such name) come from api.toml through
/// the generated contract, so a manifest that renames one needs no runtime change.
#[test]
fn the_runtime_names_no_native_attribute_itself() {
    let root = repo_root();
    let text = std::fs::read_to_string(root.join("api.toml")).unwrap();
    let api = mooncake_sos_manifest::load_str("api.toml", text.as_str()).unwrap();
    let attributes: BTreeSet<String> = api
        .surface
        .members
        .iter()
        .filter_map(|m| match &m.kind {
            mooncake_sos_manifest::model::native::MemberKind::Attribute { name, .. } => {
                Some(name.clone())
            }
            _ => None,
        })
        .collect();
    assert!(attributes.contains("replica_num"), "{attributes:?}");
    let mut found = Vec::new();
    let mut dirs = vec![root.join("runtime/src")];
    while let Some(dir) = dirs.pop() {
        for entry in std::fs::read_dir(&dir).unwrap() {
            let path = entry.unwrap().path();
            if path.is_dir() {
                dirs.push(path);
                continue;
            }
            let text = std::fs::read_to_string(&path).unwrap();
            // A file's tests close it: what precedes them is the runtime.
            let code = text.split("#[cfg(test)]").next().unwrap();
            for (n, line) in code.lines().enumerate() {
                for name in &attributes {
                    if line.contains(&format!("\"{name}\"")) {
                        let at = path.strip_prefix(&root).unwrap().display();
                        found.push(format!("{at}:{}: {}", n + 1, line.trim()));
                    }
                }
            }
        }
    }
    assert_eq!(found, Vec::<String>::new());
}
