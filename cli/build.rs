//! The contract the executable carries: the repository's api.toml and its records
//! (`cores/*.json`, `consumers/*.json`), each embedded with `include_str!` from a list made
//! here, so a record added or removed is picked up by the next build.

use std::fmt::Write;
use std::path::{Path, PathBuf};

fn main() {
    let manifest_dir = PathBuf::from(std::env::var_os("CARGO_MANIFEST_DIR").unwrap());
    let root = manifest_dir.parent().expect("cli/ sits in the repository");
    let mut files = vec![("api.toml".to_owned(), root.join("api.toml"))];
    for dir in ["cores", "consumers"] {
        println!("cargo:rerun-if-changed={}", root.join(dir).display());
        files.extend(records(root, dir));
    }
    let mut out = String::from(
        "/// The built-in contract: (path relative to api.toml's directory, text).\npub const FILES: &[(&str, &str)] = &[\n",
    );
    for (rel, path) in &files {
        println!("cargo:rerun-if-changed={}", path.display());
        writeln!(
            out,
            "    ({rel:?}, include_str!({:?})),",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = PathBuf::from(std::env::var_os("OUT_DIR").unwrap()).join("contract.rs");
    std::fs::write(dest, out).unwrap();
}

/// `dir/*.json`, sorted by name.
fn records(root: &Path, dir: &str) -> Vec<(String, PathBuf)> {
    let mut found: Vec<(String, PathBuf)> = std::fs::read_dir(root.join(dir))
        .map(|entries| {
            entries
                .filter_map(Result::ok)
                .map(|e| e.path())
                .filter(|p| p.extension().is_some_and(|x| x == "json"))
                .map(|p| {
                    let name = p.file_name().unwrap().to_string_lossy().into_owned();
                    (format!("{dir}/{name}"), p)
                })
                .collect()
        })
        .unwrap_or_default();
    found.sort();
    found
}
