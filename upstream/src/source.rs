//! Where the upstream module's text comes from: a `.py` file, or the module inside a wheel.

use sha2::{Digest, Sha256};
use std::fmt;
use std::io::Read;
use std::path::{Path, PathBuf};

/// The text of one upstream module, and how reports name it.
#[derive(Clone, Debug)]
pub struct ModuleSource {
    /// `path/to/module.py`, or `path/to/x.whl!mooncake/structured_object_store.py`.
    pub display: String,
    pub text: String,
    /// sha256 of the file's bytes, lowercase hex.
    pub sha256: String,
}

/// Input that cannot be checked at all (exit 2): it names the file, and the line when known.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct LoadError {
    pub location: String,
    pub message: String,
}

impl fmt::Display for LoadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: error: {}", self.location, self.message)
    }
}

impl std::error::Error for LoadError {}

impl LoadError {
    pub fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: location.into(),
            message: message.into(),
        }
    }
}

impl ModuleSource {
    /// From bytes already in memory (a download, a test); they must be UTF-8 like any module.
    pub fn from_bytes(display: impl Into<String>, bytes: Vec<u8>) -> Result<Self, LoadError> {
        let display = display.into();
        let sha256 = sha256_hex(&bytes);
        let text = String::from_utf8(bytes).map_err(|e| {
            LoadError::new(
                &display,
                format!("not UTF-8 text (byte {})", e.utf8_error().valid_up_to()),
            )
        })?;
        Ok(Self {
            display,
            text,
            sha256,
        })
    }

    /// A `.py` file.
    pub fn read_module(path: &Path) -> Result<Self, LoadError> {
        let display = path.display().to_string();
        let bytes = std::fs::read(path)
            .map_err(|e| LoadError::new(&display, format!("cannot read the module: {e}")))?;
        Self::from_bytes(display, bytes)
    }

    /// The module `dotted` (e.g. `mooncake.structured_object_store`) out of a wheel.
    pub fn read_wheel(path: &Path, dotted: &str) -> Result<Self, LoadError> {
        Self::read_wheel_if_present(path, dotted)?.ok_or_else(|| {
            let member = module_member(dotted);
            LoadError::new(
                path.display().to_string(),
                format!("the wheel has no {member} (module {dotted})"),
            )
        })
    }

    /// Like [`Self::read_wheel`], but `None` for a wheel without the module (a release
    /// that predates it), which the matrix shows rather than refuses.
    pub fn read_wheel_if_present(path: &Path, dotted: &str) -> Result<Option<Self>, LoadError> {
        let display = path.display().to_string();
        let file = std::fs::File::open(path)
            .map_err(|e| LoadError::new(&display, format!("cannot read the wheel: {e}")))?;
        let mut archive = zip::ZipArchive::new(file)
            .map_err(|e| LoadError::new(&display, format!("not a wheel (zip archive): {e}")))?;
        let member = module_member(dotted);
        let Ok(mut entry) = archive.by_name(&member) else {
            return Ok(None);
        };
        let mut bytes = Vec::with_capacity(entry.size() as usize);
        entry
            .read_to_end(&mut bytes)
            .map_err(|e| LoadError::new(&display, format!("cannot unpack {member}: {e}")))?;
        Self::from_bytes(format!("{display}!{member}"), bytes).map(Some)
    }
}

/// Where a dotted module lives inside a wheel (purelib layout).
pub fn module_member(dotted: &str) -> String {
    format!("{}.py", dotted.replace('.', "/"))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    mooncake_sos_codegen::model::hex(&Sha256::digest(bytes))
}

/// `*.whl` files directly in `dir` that ship the top-level `package` (a wheel cache also
/// holds dependencies such as numpy), sorted by name.
pub fn wheels_in(dir: &Path, package: &str) -> Result<Vec<PathBuf>, LoadError> {
    let display = dir.display().to_string();
    let entries = std::fs::read_dir(dir)
        .map_err(|e| LoadError::new(&display, format!("cannot list the directory: {e}")))?;
    let mut wheels: Vec<PathBuf> = entries
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "whl"))
        .filter(|p| ships_package(p, package))
        .collect();
    wheels.sort();
    if wheels.is_empty() {
        return Err(LoadError::new(
            display,
            format!("no .whl file here ships the `{package}` package"),
        ));
    }
    Ok(wheels)
}

/// Whether the wheel has files under `package/`; an unreadable one counts (and is reported
/// when read).
fn ships_package(wheel: &Path, package: &str) -> bool {
    let prefix = format!("{package}/");
    std::fs::File::open(wheel)
        .ok()
        .and_then(|f| zip::ZipArchive::new(f).ok())
        .is_none_or(|archive| {
            archive
                .file_names()
                .any(|n| n.is_ok_and(|n| n.starts_with(&prefix)))
        })
}
