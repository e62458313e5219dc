//! Regions of this project that nothing in the manifest renders any more (an image removed,
//! or moved to another strategy). Removing them silently could delete a layer someone still
//! relies on; leaving them silently leaves a stale pin in an image. Each is a located error
//! with the fix, from `regen` and `--check` alike.
//!
//! Looked for in the region targets themselves, and in the other files of their directories,
//! of the root and of the root's subdirectories (`docker/Dockerfile.rocm` after
//! `[image.rocm]` is gone; every Dockerfile in `docker/` after the last image is): there, a
//! region counts when its end marker carries a checksum (regen wrote it; a document showing
//! the marker syntax does not), and a file whose markers do not parse is not ours to judge.
//! Deeper directories are not looked at.

use super::paths::Repo;
use super::regular_files;
use crate::region::{self, Region};
use crate::render::Output;
use mooncake_sos_support::diag::{Diagnostic, Source};
use mooncake_sos_support::input;
use std::collections::BTreeSet;
use std::path::PathBuf;

/// A region of project `name` in a target file (its text as on disk) whose id is not among
/// those rendered into it; `None` if there is none, or if the markers are broken (reported
/// when the rendered regions are looked for).
pub fn in_target(source: &Source, name: &str, rendered: &[&str]) -> Option<Diagnostic> {
    let regions = region::scan(source).ok()?;
    let left = regions
        .iter()
        .find(|r| r.name == name && !rendered.contains(&r.id.as_str()))?;
    let only = rendered
        .iter()
        .map(|id| format!("`{id}`"))
        .collect::<Vec<_>>()
        .join(", ");
    let why = format!("api.toml renders only {only} into {}", source.name);
    // The one rendered region the file lacks takes the left one's place (an image moved to
    // another strategy): renaming the markers is the whole fix. Deleting the region would
    // leave regen no place for the new one.
    let mut missing = rendered
        .iter()
        .filter(|id| !regions.iter().any(|r| r.name == name && r.id == **id));
    let fix = match (missing.next(), missing.next()) {
        (Some(new), None) => Fix::Rename(new),
        _ => Fix::Delete,
    };
    Some(left_behind(source, left, &why, fix))
}

/// What the message tells the user to do with a region left behind.
enum Fix<'a> {
    /// Rename its markers to this region id: regen fills it.
    Rename(&'a str),
    /// Delete it: nothing is rendered in its place.
    Delete,
}

/// Regions of project `name` that regen wrote, in the files near the outputs that are not
/// outputs themselves (see the module's comment for where).
pub fn in_sibling_files(
    repo: &Repo,
    name: &str,
    outputs: &[Output],
    targets: &BTreeSet<PathBuf>,
) -> Vec<Diagnostic> {
    let outputs_here: BTreeSet<&str> = outputs.iter().map(|o| o.path().as_str()).collect();
    let mut dirs: BTreeSet<String> = outputs
        .iter()
        .filter(|o| matches!(o, Output::Region { .. }))
        .map(|o| {
            o.path()
                .as_str()
                .rsplit_once('/')
                .map_or("", |(d, _)| d)
                .to_owned()
        })
        .collect();
    dirs.insert(String::new());
    if let Some(root) = repo.dir("") {
        dirs.extend(subdirectories(&root));
    }
    let mut diags = Vec::new();
    for dir in &dirs {
        let Some(resolved) = repo.dir(dir) else {
            continue;
        };
        for (file, path) in regular_files(&resolved) {
            let rel = if dir.is_empty() {
                file.clone()
            } else {
                format!("{dir}/{file}")
            };
            if file.starts_with('.')
                || outputs_here.contains(rel.as_str())
                || targets.contains(&path)
            {
                continue;
            }
            let Ok(text) = input::read_text(&path, input::MAX_TEXT_BYTES) else {
                continue;
            };
            if !region::mentions(&text, name) {
                continue;
            }
            let source = Source::new(rel.as_str(), text);
            let Ok(regions) = region::scan(&source) else {
                continue;
            };
            let why = format!("api.toml renders nothing into {rel} any more");
            diags.extend(
                regions
                    .iter()
                    .filter(|r| r.name == name && r.stored.is_some())
                    .map(|r| left_behind(&source, r, &why, Fix::Delete)),
            );
        }
    }
    diags
}

/// The root's subdirectories a region could be in: not hidden, not cargo's `target`, not
/// symlinks.
fn subdirectories(root: &std::path::Path) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(root) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| !n.starts_with('.') && n != "target")
        .collect()
}

fn left_behind(source: &Source, r: &Region, why: &str, fix: Fix<'_>) -> Diagnostic {
    let (first, last) = (
        region::line_of(&source.text, r.begin_line.start),
        region::line_of(&source.text, r.end_line.start),
    );
    let fix = match fix {
        Fix::Rename(new) => format!(
            "rename it to `{} {new}` on lines {first} and {last} and regen fills it",
            r.name
        ),
        Fix::Delete => format!("delete lines {first}-{last} (the region and its markers)"),
    };
    let msg = format!(
        "region `{} {}` is left behind: {why}; {fix}, or restore what rendered it in api.toml \
         (an [image.*] naming this file)",
        r.name, r.id
    );
    Diagnostic::new(source, r.begin_line.clone(), msg)
}
