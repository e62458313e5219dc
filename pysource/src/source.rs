//! Where the upstream module's text comes from: a `.py` file, or the module inside a wheel.
//! Both are untrusted: only regular files are opened (a FIFO or a device is refused, not
//! waited on), and every read is bounded whatever a file or a zip header claims
//! ([`crate::archive`] reads wheels).

use crate::archive::Archive;
pub use crate::load_error::LoadError;
use mooncake_sos_support::input;
use ruff_text_size::TextSize;
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// The largest module source read: the real one is 257 KB.
pub const MAX_MODULE_BYTES: u64 = 8 << 20;

/// The text of one upstream module, and how reports name it.
#[derive(Clone, Debug)]
pub struct ModuleSource {
    /// `path/to/module.py`, or `path/to/x.whl!mooncake/structured_object_store.py`.
    pub display: String,
    pub text: String,
    /// sha256 of the file's bytes, lowercase hex.
    pub sha256: String,
}

impl ModuleSource {
    /// The 1-based number of the first line that is exactly `line`.
    pub fn line_of(&self, line: &str) -> Option<usize> {
        self.text.lines().position(|l| l == line).map(|i| i + 1)
    }

    /// From bytes already in memory (a download, a test); they must be UTF-8 like any module.
    pub fn from_bytes(display: impl Into<String>, bytes: Vec<u8>) -> Result<Self, LoadError> {
        let display = display.into();
        let sha256 = sha256_hex(&bytes);
        let text = input::decode(bytes).map_err(|e| LoadError::read(&display, "the module", &e))?;
        Ok(Self {
            display,
            text,
            sha256,
        })
    }

    /// A `.py` file read only to be analysed, never to be pinned: its hash is not taken (a
    /// tree of 3,000 files is 60 MB of hashing for nothing).
    pub fn read_unhashed(path: &Path) -> Result<Self, LoadError> {
        let display = path.display().to_string();
        let bytes = input::read_bytes(path, MAX_MODULE_BYTES)
            .map_err(|e| LoadError::read(&display, "the module", &e))?;
        let text = input::decode(bytes).map_err(|e| LoadError::read(&display, "the module", &e))?;
        Ok(Self {
            display,
            text,
            sha256: String::new(),
        })
    }

    /// A `.py` file.
    pub fn read_module(path: &Path) -> Result<Self, LoadError> {
        let display = path.display().to_string();
        let bytes = input::read_bytes(path, MAX_MODULE_BYTES)
            .map_err(|e| LoadError::read(&display, "the module", &e))?;
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
        let mut wheel = Archive::open(path)?;
        Self::from_wheel(&mut wheel, &module_member(dotted))
    }

    /// The module at `member` of an open wheel, or `None` when it has none.
    pub fn from_wheel(wheel: &mut Archive, member: &str) -> Result<Option<Self>, LoadError> {
        if wheel.member(member).is_none() {
            return Ok(None);
        }
        let bytes = wheel.read(member, MAX_MODULE_BYTES, "a module")?;
        Self::from_bytes(format!("{}!{member}", wheel.display()), bytes).map(Some)
    }
}

/// Where a dotted module lives inside a wheel (purelib layout).
pub fn module_member(dotted: &str) -> String {
    format!("{}.py", dotted.replace('.', "/"))
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    mooncake_sos_support::input::hex(&Sha256::digest(bytes))
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
    Archive::open(wheel)
        .ok()
        .is_none_or(|w| w.members().iter().any(|m| m.name.starts_with(&prefix)))
}

/// Offsets of line starts, for 1-based line numbers.
pub struct Lines(Vec<usize>);

impl Lines {
    pub(crate) fn new(text: &str) -> Self {
        let starts = std::iter::once(0)
            .chain(text.match_indices('\n').map(|(i, _)| i + 1))
            .collect();
        Self(starts)
    }

    /// Where 1-based line `line` starts.
    pub(crate) fn start(&self, line: usize) -> usize {
        self.0[line.saturating_sub(1).min(self.0.len() - 1)]
    }

    pub(crate) fn line(&self, offset: TextSize) -> usize {
        let offset = offset.to_usize();
        self.0.partition_point(|&start| start <= offset)
    }
}

/// 1-based line and column (in characters) of byte `offset` in `text`.
pub fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset.min(text.len())];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}
