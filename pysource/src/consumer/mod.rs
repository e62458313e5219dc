//! The consumer side of the contract, read statically (`verify --consumer FILE...`): what a
//! consumer's source imports from the API module and calls on it (keyword names, and values
//! where they are literals), the keys of the dict it passes to a native callable declared with
//! `dict_keys` (`setup({...})`), and its uses of the native core (the same derivation
//! [`crate::surface`] makes for the module). Every use api.toml does not declare fails;
//! declarations no consumer uses are listed.

mod compare;
mod files;

pub use crate::surface::api_use::{COMPUTED, ConsumerUse, UseKind};
pub use files::{ConsumerFile, expand, module_name, read};

use crate::semantic::{SourceFile, with_model};
use crate::source::LoadError;
use crate::surface::api_use::ApiNames;
use crate::surface::{self, Finding, SurfaceConfig};
use mooncake_sos_manifest::model::{Api, SymbolKind};
use rayon::prelude::*;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

impl ConsumerUse {
    pub fn describe(&self) -> String {
        match &self.kind {
            UseKind::Import => format!("{}: import", self.subject),
            UseKind::Reference => format!("{}: reference", self.subject),
            UseKind::Call {
                shape,
                on_class,
                args: given,
            } => {
                let mut args = vec![format!("{} arg(s)", shape.positional)];
                if shape.starred {
                    args.push("*args".into());
                }
                for k in &shape.keywords {
                    let arg = given.iter().find(|a| a.keyword.as_ref() == Some(k));
                    args.push(match arg.map(|a| &a.literals[..]) {
                        Some([]) | None => format!("{k}=..."),
                        Some(values) => format!("{k}={}", values.join("|")),
                    });
                }
                if shape.double_starred {
                    args.push("**kwargs".into());
                }
                let on = if *on_class { " on the class" } else { "" };
                format!("{}: call({}){on}", self.subject, args.join(", "))
            }
            UseKind::DictKeys { keys, unknown } => {
                let more = if *unknown {
                    " (and keys not known statically)"
                } else {
                    ""
                };
                format!(
                    "native {}: dict keys {}{more}",
                    self.subject,
                    keys.join(", ")
                )
            }
        }
    }
}

/// One consumer file: its uses and what fails.
#[derive(Clone, Debug, Serialize)]
pub struct FileReport {
    pub file: String,
    pub uses: Vec<ConsumerUse>,
    /// Its uses of the native core, as [`surface::derive`] finds them.
    pub native: Vec<surface::Use>,
    pub failures: Vec<Finding>,
}

/// Every consumer file, and the declarations none of them uses.
#[derive(Clone, Debug, Serialize)]
pub struct ConsumerReport {
    pub files: Vec<FileReport>,
    /// `symbol X`, `method C.m`, `native C.m`, `dict key C.m[k]`: declared, used by no file.
    pub unused: Vec<String>,
    /// What the analysis could not finish (the flow between files did not settle).
    pub notes: Vec<String>,
}

impl ConsumerReport {
    pub fn ok(&self) -> bool {
        self.files.iter().all(|f| f.failures.is_empty())
    }

    pub fn failure_count(&self) -> usize {
        self.files.iter().map(|f| f.failures.len()).sum()
    }

    /// `FILE:LINE: what`, every use in file order.
    pub fn use_lines(&self, native_module: &str) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            let mut lines: Vec<(usize, String)> = f
                .uses
                .iter()
                .map(|u| (u.line, u.describe()))
                .chain(f.native.iter().map(|u| (u.line, u.describe(native_module))))
                .collect();
            lines.sort();
            out.extend(
                lines
                    .into_iter()
                    .map(|(l, d)| format!("{}:{l}: {d}", f.file)),
            );
        }
        out
    }

    /// `FILE:LINE:COL: subject: what: expected X, found Y[; did you mean `x`?]`, every
    /// finding in file order.
    pub fn failure_lines(&self) -> Vec<String> {
        let mut out = Vec::new();
        for f in &self.files {
            for x in &f.failures {
                let at = match (x.pos, x.line) {
                    (Some((line, col)), _) => format!("{}:{line}:{col}", f.file),
                    (None, Some(line)) => format!("{}:{line}", f.file),
                    (None, None) => f.file.clone(),
                };
                out.push(format!("{at}: {}", x.message()));
            }
        }
        out
    }
}

/// Reads every consumer file (each parsed with bounded nesting, in parallel) and checks its
/// uses against `api`; a file that cannot be parsed is a located [`LoadError`] (the first in
/// order).
///
/// The native surface is derived as for the module, but without `native_roles`: those name
/// the module's own parameters, and in consumer code a parameter called `store` or `config` is
/// anything. A native object is one the flow makes: imported, constructed, returned, passed.
///
/// `extensions`: the package's other extension modules (`mooncake.engine`, from the images'
/// core records); their uses are checked like the core's, with the modules api.toml's
/// `[[native]]` entries name.
pub fn check(
    api: &Api,
    sources: &[ConsumerFile],
    extensions: &[String],
) -> Result<ConsumerReport, LoadError> {
    let mut config = SurfaceConfig::from_api(api);
    config.roles.clear();
    let mut others: Vec<String> = api
        .surface
        .members
        .iter()
        .filter_map(|m| m.module.clone())
        .chain(extensions.iter().cloned())
        .filter(|m| *m != config.native_module)
        .collect();
    others.sort();
    others.dedup();
    config.api = Some(ApiNames {
        module: api.upstream.module.clone(),
        classes: api
            .symbols
            .iter()
            .filter(|s| {
                matches!(
                    s.kind,
                    SymbolKind::Class { .. } | SymbolKind::Dataclass { .. }
                )
            })
            .map(|s| s.name.clone())
            .collect(),
        symbols: api.symbols.iter().map(|s| s.name.clone()).collect(),
        dict_members: api
            .surface
            .members
            .iter()
            .filter(|m| !m.dict_keys.is_empty())
            .map(|m| (m.object.clone(), dict_param(m)))
            .collect(),
    });
    // A file found in a directory is read when its text names the package, or when it imports
    // a file whose exports carry a native value (the program grows so, round by round). A
    // file named on the command line always is. Only names the package's text can hold are
    // followed: an extension module no file names is not analysed.
    let package = api.upstream.package();
    let seeds: Vec<bool> = sources
        .par_iter()
        .map(|f| f.named || f.source.text.contains(package))
        .collect();
    let files: Vec<SourceFile<'_>> = sources
        .iter()
        .zip(&seeds)
        .map(|(f, &seed)| SourceFile {
            source: &f.source,
            module: &f.module,
            seed,
        })
        .collect();
    let natives = with_model(&files, |model| {
        // An extension module no file read from the start names (in its text, or as what an
        // import line imports) is not analysed.
        let named = |m: &String| {
            (0..files.len()).any(|i| {
                files[i].seed
                    && (files[i].source.text.contains(m.as_str())
                        || model.imports(i).iter().any(|x| x == m))
            })
        };
        let mut config = config.clone();
        config.others = others.iter().filter(|m| named(m)).cloned().collect();
        surface::derive_program(model, &config)
    })??;
    let api_uses = natives.api;
    let mut notes = Vec::new();
    if natives.unsettled {
        notes.push(format!(
            "the flow between files did not settle in {} rounds: values passed through more \
             files than that are not followed to their end, and their uses are not checked",
            surface::MAX_ROUNDS
        ));
    }
    let natives = natives.files;
    let files: Vec<FileReport> = sources
        .iter()
        .zip(api_uses.into_iter().zip(natives))
        .map(|(f, (uses, native))| {
            file_report(
                api,
                f.source.display.clone(),
                uses,
                native.unwrap_or_default(),
            )
        })
        .collect();
    let unused = unused(api, &files);
    Ok(ConsumerReport {
        files,
        unused,
        notes,
    })
}

/// One file's report: its uses and what fails of them.
fn file_report(
    api: &Api,
    file: String,
    uses: Vec<ConsumerUse>,
    mut native: Vec<surface::Use>,
) -> FileReport {
    // Importing the API module is the consumer walk's to check, not a sibling's.
    native.retain(|u| {
        !matches!(&u.target, surface::Target::Sibling { module } if *module == api.upstream.module)
    });
    // Most files of a tree use nothing: nothing to judge.
    if uses.is_empty() && native.is_empty() {
        return FileReport {
            file,
            uses,
            native,
            failures: Vec::new(),
        };
    }
    // The module's own uses are what `[[native]]` is checked against elsewhere; here only
    // the failures count (a consumer need not use what the module uses).
    let surface = surface::Surface {
        file: file.clone(),
        sha256: String::new(),
        native_module: api.upstream.native_module.clone(),
        uses: native,
    };
    let native_failures = surface::compare_each(&api.surface, surface.clone()).failures;
    let mut failures = compare::api_failures(api, &uses);
    failures.extend(native_failures);
    // In the order of the file: by line, then column.
    failures.sort_by(|a, b| (a.line, a.pos).cmp(&(b.line, b.pos)).then_with(|| a.cmp(b)));
    FileReport {
        file,
        uses,
        native: surface.uses,
        failures,
    }
}

/// The name of a dict-taking callable's first parameter, as its overload declares it: the
/// dict may be passed by that keyword (`setup(config={...})`).
fn dict_param(m: &mooncake_sos_manifest::model::native::NativeMember) -> Option<String> {
    let mooncake_sos_manifest::model::native::MemberKind::Callable {
        overload: Some(text),
    } = &m.kind
    else {
        return None;
    };
    let params = mooncake_sos_manifest::signature::overload_params(text).ok()?;
    params.into_iter().next().map(|p| p.name)
}

/// Declarations no consumer file uses: symbols, methods, `by = "consumer"` native members and
/// dict keys (those only when every dict passed is known statically).
fn unused(api: &Api, files: &[FileReport]) -> Vec<String> {
    let mut used: BTreeSet<&str> = BTreeSet::new();
    let mut native_used: BTreeSet<&str> = BTreeSet::new();
    let mut keys: BTreeMap<&str, BTreeSet<&str>> = BTreeMap::new();
    let mut keys_unknown = false;
    for f in files {
        for u in &f.uses {
            match &u.kind {
                UseKind::DictKeys {
                    keys: k, unknown, ..
                } => {
                    keys_unknown |= unknown;
                    let entry = keys.entry(u.subject.as_str()).or_default();
                    entry.extend(k.iter().map(String::as_str));
                }
                _ => {
                    used.insert(u.subject.as_str());
                }
            }
        }
        native_used.extend(f.native.iter().map(surface::Use::subject));
    }
    let mut out = Vec::new();
    for s in &api.symbols {
        if !used.contains(s.name.as_str()) {
            out.push(format!("symbol {}", s.name));
        }
        if let SymbolKind::Class { methods, .. } = &s.kind {
            for m in methods {
                let path = format!("{}.{}", s.name, m.name);
                if !used.contains(path.as_str()) {
                    out.push(format!("method {path}"));
                }
            }
        }
    }
    for m in &api.surface.members {
        let path = m.path();
        if m.by == mooncake_sos_manifest::model::native::NeededBy::Consumer
            && !native_used.contains(path.as_str())
        {
            out.push(format!("native {path}"));
        }
        if !keys_unknown {
            let passed = keys.get(m.object.as_str());
            for k in &m.dict_keys {
                if !passed.is_some_and(|p| p.contains(k.as_str())) {
                    out.push(format!("dict key {}[{k:?}]", m.object));
                }
            }
        }
    }
    out
}

#[cfg(test)]
mod flow_tests;
#[cfg(test)]
mod program_tests;
#[cfg(test)]
pub(crate) mod tests;
