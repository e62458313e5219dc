//! An image's other users of the package (sglang in the CUDA image), recorded: every use each
//! makes of the package's modules, derived from its wheel by the surface analysis, kept in
//! `consumers/<package>-<version>.json` so `verify` checks a pin offline
//! ([`super::users_check`]).

use mooncake_sos_contract::signature::CallShape;
use mooncake_sos_pysource::source::{LoadError, ModuleSource, sha256_hex};
use mooncake_sos_pysource::surface::{self, Access, ProgramFile, SurfaceConfig, Target};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
use std::io::Read;
use std::path::{Path, PathBuf};

/// Bumped when the shape of [`UserRecord`] changes.
pub const FORMAT: u32 = 1;
/// The records' directory, relative to the repository root.
pub const DIR: &str = "consumers";

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserRecord {
    pub format: u32,
    pub package: String,
    pub version: String,
    /// sha256 of the wheel the uses were derived from.
    pub sha256: String,
    /// The wheel's `Requires-Dist: torch...` requirement, as written.
    pub torch: Option<String>,
    /// Its `.py` files that name the package (the only ones that can use it).
    pub files: usize,
    pub uses: Vec<UserUse>,
}

/// One use: where, of what, how, and whether the user falls back without it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct UserUse {
    /// `sglang/srt/.../mooncake_store.py`, inside the wheel.
    pub file: String,
    pub line: usize,
    /// The module used: `mooncake.store`, `mooncake.engine`, `mooncake.ep`, ...
    pub module: String,
    /// The member's path in it (`MooncakeDistributedStore.setup`); empty for the module.
    pub member: String,
    pub access: UseAccess,
    /// `None`: required. Else how it is guarded (`probed by hasattr at line N`, ...).
    pub guard: Option<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum UseAccess {
    Import,
    Read,
    Write,
    /// `hasattr` / `getattr(obj, name, default)`.
    Probe,
    Call {
        positional: usize,
        keywords: Vec<String>,
        starred: bool,
        double_starred: bool,
    },
}

impl UseAccess {
    pub fn shape(&self) -> Option<CallShape> {
        match self {
            UseAccess::Call {
                positional,
                keywords,
                starred,
                double_starred,
            } => Some(CallShape {
                positional: *positional,
                keywords: keywords.clone(),
                starred: *starred,
                double_starred: *double_starred,
            }),
            _ => None,
        }
    }
}

pub fn relative_path(package: &str, version: &str) -> String {
    format!("{DIR}/{package}-{version}.json")
}

pub fn path(root: &Path, package: &str, version: &str) -> PathBuf {
    root.join(relative_path(package, version))
}

impl UserRecord {
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

pub fn load(path: &Path) -> Result<UserRecord, LoadError> {
    let display = path.display().to_string();
    let text = std::fs::read_to_string(path)
        .map_err(|e| LoadError::new(&display, format!("cannot read the user record: {e}")))?;
    let record: UserRecord = serde_json::from_str(&text).map_err(|e| {
        LoadError::new(
            format!("{display}:{}:{}", e.line(), e.column()),
            format!("not a user record: {e}"),
        )
    })?;
    if record.format != FORMAT {
        return Err(LoadError::new(
            format!("{display}:1:1"),
            format!(
                "user record of format {} (this build reads {FORMAT}): write it again with \
                 `cargo xtask users --record`",
                record.format
            ),
        ));
    }
    Ok(record)
}

/// Derives a user's record from its wheel: every `.py` file naming `package` is read with the
/// surface analysis once per extension module in `native_modules` (each a core whose members
/// are followed), and its imports of the package's other modules kept once.
pub fn derive(
    wheel: &Path,
    package: &str,
    native_modules: &[&str],
) -> Result<UserRecord, LoadError> {
    let display = wheel.display().to_string();
    let fail = |m: String| LoadError::new(&display, m);
    let bytes = std::fs::read(wheel).map_err(|e| fail(format!("cannot read the wheel: {e}")))?;
    let sha256 = sha256_hex(&bytes);
    let mut archive = zip::ZipArchive::new(std::io::Cursor::new(bytes))
        .map_err(|e| fail(format!("not a wheel: {e}")))?;
    let (mut sources, mut metadata) = (Vec::new(), None);
    for i in 0..archive.len() {
        let mut entry = archive
            .by_index(i)
            .map_err(|e| fail(format!("not a wheel: {e}")))?;
        let name = entry
            .name()
            .map_err(|e| fail(format!("not a wheel: {e}")))?
            .to_string();
        let is_metadata = name.ends_with(".dist-info/METADATA") && name.matches('/').count() == 1;
        if !name.ends_with(".py") && !is_metadata {
            continue;
        }
        let mut data = Vec::new();
        entry
            .read_to_end(&mut data)
            .map_err(|e| fail(format!("cannot read {name}: {e}")))?;
        if is_metadata {
            metadata = Some(String::from_utf8_lossy(&data).into_owned());
        } else {
            let seed = memchr(&data, package.as_bytes());
            sources.push((name, data, seed));
        }
    }
    let metadata = metadata.ok_or_else(|| fail("no METADATA in the wheel".into()))?;
    let field = |key: &str| {
        metadata
            .lines()
            .find_map(|l| l.strip_prefix(key).map(|v| v.trim().to_owned()))
    };
    let (name, version) = (field("Name:"), field("Version:"));
    let torch = metadata
        .lines()
        .filter_map(|l| l.strip_prefix("Requires-Dist:"))
        .map(str::trim)
        .find(|r| {
            r.strip_prefix("torch")
                .is_some_and(|rest| rest.starts_with(['=', '<', '>', '~', '!', ' ', '[', ';']))
        })
        .map(|r| r.split(';').next().unwrap_or(r).trim().to_owned());
    // Read as one program, as `verify --consumer` reads a tree: a file that names the package,
    // and any the flow reaches from one (a subclass of its store class in another file).
    let mut parsed = Vec::new();
    for (file, data, seed) in &sources {
        let source = ModuleSource::from_bytes(format!("{display}!{file}"), data.clone())?;
        let dotted = file.trim_end_matches(".py").replace('/', ".");
        parsed.push((file, source, dotted, *seed));
    }
    let program: Vec<ProgramFile<'_>> = parsed
        .iter()
        .map(|(_, source, module, seed)| ProgramFile::new(source, module, *seed))
        .collect();
    let (core, others) = native_modules
        .split_first()
        .ok_or_else(|| fail("no native module".into()))?;
    let others: Vec<String> = others.iter().map(|&m| m.to_owned()).collect();
    let config = SurfaceConfig {
        module: String::new(),
        native_module: (*core).to_owned(),
        package: package.to_owned(),
        // A user's parameter names mean nothing here: only what it imports is typed.
        roles: BTreeMap::new(),
        extensions: Vec::new(),
    };
    let derived = surface::derive_program_modules(&program, &config, &others)?;
    if derived.unsettled {
        return Err(fail(format!(
            "its modules pass values through more than {} files: the record would miss uses",
            surface::MAX_ROUNDS
        )));
    }
    let derived = derived.files;
    let mut uses = BTreeSet::new();
    for ((file, ..), found) in parsed.iter().zip(derived) {
        for u in found.into_iter().flatten() {
            let (module, member) = match &u.target {
                Target::Native { path, .. } => match others
                    .iter()
                    .find_map(|o| Some((o, path.strip_prefix(o.as_str())?.strip_prefix('.')?)))
                {
                    Some((o, rest)) => (o.clone(), rest.to_owned()),
                    None => ((*core).to_owned(), path.clone()),
                },
                Target::Dynamic { .. } => continue,
                Target::Sibling { module } | Target::Extension { module } => {
                    (module.clone(), String::new())
                }
            };
            let access = match &u.access {
                Access::Import => UseAccess::Import,
                Access::Read => UseAccess::Read,
                Access::Write => UseAccess::Write,
                Access::Probe => UseAccess::Probe,
                Access::Call(shape) => UseAccess::Call {
                    positional: shape.positional,
                    keywords: shape.keywords.clone(),
                    starred: shape.starred,
                    double_starred: shape.double_starred,
                },
            };
            let guard = u.optional.as_ref().map(|g| match g {
                surface::Guard::Guarded { line } if u.access == Access::Probe => {
                    format!("probed by hasattr at line {line}")
                }
                g => g.to_string(),
            });
            uses.insert(UserUse {
                file: (*file).clone(),
                line: u.line,
                module,
                member,
                access,
                guard,
            });
        }
    }
    Ok(UserRecord {
        format: FORMAT,
        package: name.unwrap_or_default().to_lowercase().replace('_', "-"),
        version: version.unwrap_or_default(),
        sha256,
        torch,
        files: sources.iter().filter(|s| s.2).count(),
        uses: uses.into_iter().collect(),
    })
}

fn memchr(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
#[path = "users_tests.rs"]
mod tests;
