//! Committed core surfaces: `cores/<package>-<version>.json` in the repository, written by
//! `cargo xtask core --record`, so the images' cores can be checked offline and reviewed
//! as data. The drift check compares a record with a fresh reading of the same wheel.

use super::model::{CoreSurface, FORMAT};
use crate::source::LoadError;
use mooncake_sos_codegen::model::{Api, Layer};
use mooncake_sos_codegen::sync;
use std::path::{Path, PathBuf};

/// The records' directory, relative to the repository root.
pub const DIR: &str = "cores";

/// `cores/<package>-<version>.json`. Package and version are checked to be plain names when
/// read from a wheel (see `wheel::name_and_version`), so the path stays inside `cores/`.
pub fn relative_path(package: &str, version: &str) -> String {
    format!("{DIR}/{package}-{version}.json")
}

pub fn path(root: &Path, package: &str, version: &str) -> PathBuf {
    root.join(relative_path(package, version))
}

/// Reads a record; a malformed one is an error at its line and column.
pub fn load(path: &Path) -> Result<CoreSurface, LoadError> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(&display, format!("cannot read the core record: {e}")))?;
    let surface: CoreSurface = serde_json::from_str(&text).map_err(|e| {
        LoadError::new(
            format!("{display}:{}:{}", e.line(), e.column()),
            format!("not a core record: {e}"),
        )
    })?;
    if surface.format != FORMAT {
        return Err(LoadError::new(
            format!("{display}:1:1"),
            format!(
                "core record format {} (this build reads {FORMAT}): re-record it with `cargo xtask core --record`",
                surface.format
            ),
        ));
    }
    Ok(surface)
}

/// Writes the record of `surface` atomically; returns its path.
pub fn write(root: &Path, surface: &CoreSurface) -> std::io::Result<PathBuf> {
    let path = path(root, &surface.wheel.package, &surface.wheel.version);
    mooncake_sos_codegen::sync::write_atomic(&path, surface.to_json().as_bytes())?;
    Ok(path)
}

/// How a record stands against a fresh reading of its wheel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    Current,
    Missing,
    /// A unified diff from the record to the fresh reading.
    Differs(String),
}

pub fn drift(root: &Path, surface: &CoreSurface) -> Drift {
    let rel = relative_path(&surface.wheel.package, &surface.wheel.version);
    let fresh = surface.to_json();
    match std::fs::read_to_string(root.join(&rel)) {
        Err(_) => Drift::Missing,
        Ok(old) if old == fresh => Drift::Current,
        Ok(old) => Drift::Differs(sync::unified_diff(&rel, &old, &fresh)),
    }
}

/// An image whose native core comes from a released wheel (an overlay over the base image's
/// installed package), with its record when there is one.
pub struct ImageCore {
    pub image: String,
    pub package: String,
    pub version: String,
    /// `None` when `cores/` has no record of it; an error when the record is malformed.
    pub record: Option<Result<CoreSurface, LoadError>>,
}

/// The recorded core of every overlay image. Fill images build their core from source in the
/// base image: no wheel has it, so there is nothing to record.
pub fn image_cores(root: &Path, api: &Api) -> Vec<ImageCore> {
    api.images
        .iter()
        .filter_map(|image| match &image.layer {
            Layer::Overlay {
                base_package,
                base_version,
            } => {
                let path = path(root, base_package, base_version);
                let record = path.exists().then(|| {
                    load(&path).and_then(|s| {
                        if (s.wheel.package.as_str(), s.wheel.version.as_str())
                            == (base_package.as_str(), base_version.as_str())
                        {
                            Ok(s)
                        } else {
                            Err(LoadError::new(
                                path.display().to_string(),
                                format!("records {}, not {base_package} {base_version}", s.label()),
                            ))
                        }
                    })
                });
                Some(ImageCore {
                    image: image.id.clone(),
                    package: base_package.clone(),
                    version: base_version.clone(),
                    record,
                })
            }
            Layer::Fill { .. } => None,
        })
        .collect()
}
