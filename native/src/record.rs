//! Committed core surfaces: `cores/<package>-<version>.json` in the repository, written by
//! `cargo xtask core --record`, so the images' cores can be checked offline and reviewed
//! as data. The drift check compares a record with a fresh reading of the same wheel.

use super::model::{CoreSurface, FORMAT};
use mooncake_sos_contract::{drift, input, json};
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

/// The largest record read: the real ones are 20-75 KB.
pub const MAX_RECORD_BYTES: u64 = 4 << 20;

/// Reads a core record; a malformed one is an error at its line and column, a record of
/// another format says how to write it again.
pub fn load(path: &Path) -> Result<CoreSurface, LoadError> {
    load_json(
        path,
        "core record",
        FORMAT,
        "`cargo xtask core --record WHEEL` on the wheel it records",
    )
}

/// Reads a record (a `what` of `format`) as its type: a regular file within
/// [`MAX_RECORD_BYTES`], JSON naming each key once, of this build's format (checked first: an
/// older record lacks fields this build needs, and should say so), then its fields. Every
/// error is located; `rewrite` is the command that writes the record again.
pub fn load_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    format: u32,
    rewrite: &str,
) -> Result<T, LoadError> {
    let display = path.display().to_string();
    let text = input::read_text(path, MAX_RECORD_BYTES).map_err(|e| {
        LoadError::new(e.location(&display), format!("cannot read the {what}: {e}"))
    })?;
    let located = |e: serde_json::Error| {
        LoadError::new(
            format!("{display}:{}:{}", e.line(), e.column()),
            format!("not a {what}: {e}"),
        )
    };
    json::keys_once(&text).map_err(located)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(located)?;
    let found = match value.get("format") {
        Some(f) if f.as_u64() == Some(u64::from(format)) => None,
        None => Some("no format".to_owned()),
        Some(serde_json::Value::String(s)) => {
            Some(format!("format {s:?} (a string, not a number)"))
        }
        Some(f @ serde_json::Value::Number(_)) => Some(format!("format {f}")),
        Some(f) => Some(format!("format {f} (not a number)")),
    };
    if let Some(found) = found {
        return Err(LoadError::new(
            format!("{display}:1:1"),
            format!("{what} of {found} (this build reads {format}): write it again with {rewrite}"),
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
    match input::read_text(&root.join(&rel), MAX_RECORD_BYTES) {
        Err(_) => Drift::Missing,
        Ok(old) if old == fresh => Drift::Current,
        Ok(old) => Drift::Differs(drift::unified_diff(&rel, &old, &fresh)),
    }
}
