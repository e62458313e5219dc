//! Committed core surfaces: `cores/<package>-<version>.json` in the repository, written by
//! `cargo xtask core --record`, so the images' cores can be checked offline and reviewed
//! as data. The drift check compares a record with a fresh reading of the same wheel.

use super::model::{CoreSurface, FORMAT};
use mooncake_sos_contract::drift;
use mooncake_sos_pysource::source::LoadError;
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

/// Reads a record; a malformed one is an error at its line and column, a record of another
/// format says how to write it again.
pub fn load(path: &Path) -> Result<CoreSurface, LoadError> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(&display, format!("cannot read the core record: {e}")))?;
    let located = |e: serde_json::Error| {
        LoadError::new(
            format!("{display}:{}:{}", e.line(), e.column()),
            format!("not a core record: {e}"),
        )
    };
    // The format first: an older record lacks fields this build needs, and should say so.
    let value: serde_json::Value = serde_json::from_str(&text).map_err(located)?;
    let format = value.get("format").and_then(serde_json::Value::as_u64);
    if format != Some(u64::from(FORMAT)) {
        let found = format.map_or("no format".to_owned(), |f| format!("format {f}"));
        return Err(LoadError::new(
            format!("{display}:1:1"),
            format!(
                "core record of {found} (this build reads {FORMAT}): write it again with \
                 `cargo xtask core --record WHEEL` on the wheel it records"
            ),
        ));
    }
    serde_json::from_str(&text).map_err(located)
}

/// Writes the record of `surface` atomically; returns its path.
pub fn write(root: &Path, surface: &CoreSurface) -> std::io::Result<PathBuf> {
    let path = path(root, &surface.wheel.package, &surface.wheel.version);
    mooncake_sos_contract::atomic::write_atomic(&path, surface.to_json().as_bytes())?;
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
        Ok(old) => Drift::Differs(drift::unified_diff(&rel, &old, &fresh)),
    }
}
