//! Plans for the commands that edit the manifest: the manifest and every output together.

use super::{Change, Rename, Status, plan_renaming};
use crate::render::Cores;
use mooncake_sos_manifest::model::{Api, RelPath};
use mooncake_sos_support::diag::{Diagnostic, Diagnostics, Source};
use std::path::{Path, PathBuf};

/// The images' core records of a manifest (what `regen` loads beside it); `Err`: why they
/// cannot be read.
pub type CoresOf<'a> = dyn Fn(&Api) -> Result<Cores, String> + 'a;

/// For every command that edits the manifest (`crate::regen::Manifest::edit`: `verify --fix`,
/// `bump`, `matrix --record`, `adopt`): validates and renders `edited` (the manifest's new
/// text; its name as in [`plan`]) and plans every output against it, plus the manifest itself
/// as the first change, with regions renamed as `renames` say (`adopt`, which moves an image
/// to another strategy, keeps its Dockerfile region's place). [`apply`] then writes the
/// manifest and the outputs together: if any of them cannot be written (or the new manifest
/// would not regenerate cleanly, which this reports), none is, the manifest included.
pub fn plan_manifest_edit(
    root: &Path,
    edited: &Source,
    force: bool,
    renames: &[Rename],
    cores: &CoresOf,
) -> Result<Vec<Change>, Diagnostics> {
    let api = mooncake_sos_manifest::load_str(&edited.name, &edited.text)?;
    let cores = cores(&api).map_err(|e| Diagnostic::new(edited, 0..0, e))?;
    let outputs = crate::render::render_all(&api, &cores)
        .map_err(|e| Diagnostic::new(edited, 0..0, e.to_string()))?;
    let mut changes = plan_renaming(root, edited, &api.name, &outputs, force, renames)?;
    let file = Path::new(&edited.name).file_name().and_then(|f| f.to_str());
    let Some(path) = file.and_then(RelPath::new) else {
        let msg = "the manifest's name has no file name";
        return Err(Diagnostic::new(edited, 0..0, msg).into());
    };
    let target = write_target(root, path.as_str(), edited)?;
    let old = mooncake_sos_manifest::read_manifest(&target, &edited.name)?;
    let status = if old == *edited.text {
        Status::Unchanged
    } else {
        Status::Stale
    };
    changes.insert(
        0,
        Change {
            path,
            status,
            old: Some(old),
            new: Some(edited.text.to_string()),
            target,
            manifest: true,
        },
    );
    Ok(changes)
}

/// The file an edit of the manifest replaces: the manifest itself, or, when it is a symlink,
/// the file it points to (the link stays a link), which must lie inside `root`: an edit
/// never writes outside the repository.
fn write_target(root: &Path, file: &str, edited: &Source) -> Result<PathBuf, Diagnostics> {
    let target = root.join(file);
    let is_link = std::fs::symlink_metadata(&target).is_ok_and(|m| m.file_type().is_symlink());
    if !is_link {
        return Ok(target);
    }
    let error = |msg: String| Diagnostics::from(Diagnostic::new(edited, 0..0, msg));
    let resolved = std::fs::canonicalize(&target).map_err(|e| {
        error(format!(
            "the manifest is a symlink that cannot be followed: {e}"
        ))
    })?;
    let inside = std::fs::canonicalize(root).is_ok_and(|root| resolved.starts_with(root));
    if !inside {
        return Err(error(format!(
            "the manifest is a symlink to {}, outside {}: edits stay inside the repository; \
             edit that file there, or replace the link by the file",
            resolved.display(),
            root.display()
        )));
    }
    Ok(resolved)
}
