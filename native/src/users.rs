//! An image's other users of the package (sglang in the CUDA image), recorded: every use each
//! makes of the package's modules, derived from its wheel by the surface analysis, kept in
//! `consumers/<package>-<version>.json` so `verify` checks a pin offline
//! ([`super::users_check`]).

use crate::wheel::read_metadata;
use mooncake_sos_manifest::model::values::is_python_name;
use mooncake_sos_manifest::signature::CallShape;
use mooncake_sos_pysource::archive::{Archive, MAX_WHEEL_BYTES};
use mooncake_sos_pysource::semantic::{SourceFile, with_model};
use mooncake_sos_pysource::source::{LoadError, MAX_MODULE_BYTES, ModuleSource};
use mooncake_sos_pysource::surface::{self, Access, SurfaceConfig, Target};
use mooncake_sos_support::escape::{self, text};
use mooncake_sos_support::input;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};
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
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let mut text = escape::json(&text).into_owned();
        text.push('\n');
        text
    }
}

pub fn load(path: &Path) -> Result<UserRecord, LoadError> {
    super::record::load_json(path, "user record", FORMAT, "`cargo xtask users --record`")
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
    let sha256 = input::sha256_file(wheel, MAX_WHEEL_BYTES)
        .map_err(|e| LoadError::new(e.location(&display), format!("cannot read the wheel: {e}")))?;
    let mut archive = Archive::open(wheel)?;
    let names: Vec<String> = archive.members().iter().map(|m| m.name.clone()).collect();
    let mut metadata = None;
    let mut sources = Vec::new();
    for name in names {
        if name.ends_with(".dist-info/METADATA") && name.matches('/').count() == 1 {
            metadata = Some(read_metadata(&mut archive, &name)?);
        } else if name.ends_with(".py") {
            let data = archive.read(&name, MAX_MODULE_BYTES, "a module")?;
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
    let files = sources.iter().filter(|s| s.2).count();
    let mut parsed = Vec::new();
    for (file, data, seed) in sources {
        let source = ModuleSource::from_bytes(format!("{display}!{}", text(&file)), data)?;
        let dotted = file.trim_end_matches(".py").replace('/', ".");
        parsed.push((file, source, dotted, seed));
    }
    let program: Vec<SourceFile<'_>> = parsed
        .iter()
        .map(|(_, source, module, seed)| SourceFile {
            source,
            module,
            seed: *seed,
        })
        .collect();
    let (core, others) = native_modules
        .split_first()
        .ok_or_else(|| fail("no native module".into()))?;
    let others: Vec<String> = others.iter().map(|&m| m.to_owned()).collect();
    let config = SurfaceConfig {
        module: String::new(),
        native_module: (*core).to_owned(),
        others: others.clone(),
        package: package.to_owned(),
        // A user's parameter names mean nothing here: only what it imports is typed.
        roles: BTreeMap::new(),
        api: None,
    };
    let derived = with_model(&program, |model| surface::derive_program(model, &config))??;
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
                file: file.clone(),
                line: u.line,
                module,
                member,
                access,
                guard,
            });
        }
    }
    let record = UserRecord {
        format: FORMAT,
        package: name.unwrap_or_default().to_lowercase().replace('_', "-"),
        version: version.unwrap_or_default(),
        sha256,
        torch,
        files,
        uses: uses.into_iter().collect(),
    };
    match misnamed(&display, &record) {
        Some(e) => Err(e),
        None => Ok(record),
    }
}

/// The first thing in `record` no real user's code could name, at its place in the wheel: a
/// module or member that is not a dotted Python name, a keyword not a Python name, a file,
/// guard or torch requirement with a character that does not print. A hostile wheel can
/// (`getattr(store, "put\x1b[31m")`); its record is refused rather than written.
fn misnamed(wheel: &str, record: &UserRecord) -> Option<LoadError> {
    let dotted = |s: &str| s.split('.').all(is_python_name);
    let prints = |s: &str| s.chars().all(escape::prints);
    let refuse = |at: String, what: &str, name: &str| {
        Some(LoadError::new(
            at,
            format!(
                "{what} '{}' is not a Python identifier (ASCII letters, digits and `_`, not \
                 starting with a digit)",
                text(name)
            ),
        ))
    };
    if let Some(torch) = record.torch.as_deref().filter(|t| !prints(t)) {
        return Some(LoadError::new(
            format!("{wheel}: METADATA"),
            format!(
                "its torch requirement '{}' holds a character that does not print",
                text(torch)
            ),
        ));
    }
    for u in &record.uses {
        let at = format!("{wheel}!{}:{}", text(&u.file), u.line);
        if !prints(&u.file) {
            return Some(LoadError::new(
                at,
                "the file's name holds a character that does not print",
            ));
        }
        if !dotted(&u.module) {
            return refuse(at, "the module", &u.module);
        }
        if !u.member.is_empty() && !dotted(&u.member) {
            return refuse(at, &format!("{}'s member", u.module), &u.member);
        }
        if let UseAccess::Call { keywords, .. } = &u.access
            && let Some(k) = keywords.iter().find(|k| !is_python_name(k))
        {
            return refuse(at, "the keyword", k);
        }
        if let Some(guard) = u.guard.as_deref().filter(|g| !prints(g)) {
            return Some(LoadError::new(
                at,
                format!(
                    "its guard '{}' holds a character that does not print",
                    text(guard)
                ),
            ));
        }
    }
    None
}

fn memchr(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[cfg(test)]
#[path = "users_tests.rs"]
mod tests;
