//! Regions an edit of the manifest renames: an image moved to another strategy keeps its
//! region's place in its Dockerfile.

use crate::region;
use mooncake_sos_manifest::model::RelPath;
use mooncake_sos_support::diag::Source;

/// A region that an edit of the manifest gives another id (an image moved to another
/// strategy: `overlay` -> `pin`): in `file`, region `from` is renamed `to` in place before
/// the outputs are planned, so the new region's body lands where the old one was.
#[derive(Clone, Debug)]
pub struct Rename {
    pub file: String,
    pub from: String,
    pub to: String,
}

/// The file's text with `renames` applied to it (`None` when none applies).
pub(super) fn renamed(
    path: &RelPath,
    text: &str,
    name: &str,
    renames: &[Rename],
) -> Option<String> {
    let mut out: Option<String> = None;
    for r in renames.iter().filter(|r| r.file == path.as_str()) {
        let current = out.as_deref().unwrap_or(text);
        let source = Source::new(path.as_str(), current);
        let regions = region::scan(&source).ok()?;
        if let Some(found) = regions.iter().find(|g| g.name == name && g.id == r.from) {
            out = Some(region::rename(current, found, name, &r.to));
        }
    }
    out
}
