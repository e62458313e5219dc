//! The module against each image: the image's native core (its record in `cores/`) must serve
//! the module's uses, and every module of the package the module imports at module level
//! must be in the image after its layer. Offline: records are data, nothing runs.

use super::needs::serve;
use super::record;
use super::requirements::requirements;
use mooncake_sos_manifest::core_record::{CoreSurface, ModuleKind};
use mooncake_sos_manifest::model::{Api, Image, Layer};
use mooncake_sos_pysource::source::LoadError;
use mooncake_sos_pysource::surface::{Target, Use};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// What an image gives the module: its core, and the modules of the package it has.
#[derive(Clone, Debug)]
pub struct ImageSide {
    /// The `[image.<id>]` key.
    pub image: String,
    pub core: CoreSurface,
    /// The core's record, relative to the repository root.
    pub record: String,
    /// Every module of the package in the image, with what puts it there.
    pub modules: BTreeMap<String, String>,
    /// Where the image's package modules come from, for messages.
    pub provided_by: String,
    /// Files of the overlay's set that would make a package of a name the base has as a
    /// native module (`mooncake/store/__init__.py` beside `store.so`): (path, module).
    pub shadowing: Vec<(String, String)>,
}

/// A record an image needs that `cores/` does not have.
#[derive(Debug)]
pub struct MissingRecord {
    pub image: String,
    pub package: String,
    pub version: String,
    /// `cores/<package>-<version>.json`.
    pub record: String,
    /// Where it was looked for, as messages name it.
    pub path: String,
    /// What the release is to the image: `native core`, `fill wheel`.
    pub role: &'static str,
}

/// Why an image's side cannot be read.
#[derive(Debug)]
pub enum Unread {
    Missing(Box<MissingRecord>),
    /// A record that is not one (malformed, another format, another release).
    Bad(LoadError),
}

impl Unread {
    /// The error `verify` and `bump` stop on, naming the command that writes the record.
    pub fn into_error(self) -> LoadError {
        match self {
            Unread::Bad(e) => e,
            Unread::Missing(m) => LoadError::new(
                &m.path,
                format!(
                    "no record of image `{}`'s {} {} {}: write it with `cargo xtask core \
                     --record WHEEL` on that release's wheel (`pip download --no-deps {}=={}`)",
                    m.image, m.role, m.package, m.version, m.package, m.version
                ),
            ),
        }
    }
}

/// Every image's side, in image order.
pub fn load(root: &Path, api: &Api) -> Vec<(String, Result<ImageSide, Unread>)> {
    api.images
        .iter()
        .map(|image| (image.id.clone(), side(root, api, image)))
        .collect()
}

/// Every image's side, or the first that cannot be read.
pub fn load_all(root: &Path, api: &Api) -> Result<Vec<ImageSide>, LoadError> {
    load(root, api)
        .into_iter()
        .map(|(_, side)| side.map_err(Unread::into_error))
        .collect()
}

/// Every image's native core (its record), in image order, or the first that cannot be read:
/// what `regen` renders the native modules' stubs from.
pub fn cores(root: &Path, api: &Api) -> Result<Vec<CoreSurface>, LoadError> {
    api.images
        .iter()
        .map(|image| {
            let (package, version) = (&image.core.package, &image.core.version);
            read(root, &image.id, package, version, "native core").map_err(Unread::into_error)
        })
        .collect()
}

fn read(
    root: &Path,
    image: &str,
    package: &str,
    version: &str,
    role: &'static str,
) -> Result<CoreSurface, Unread> {
    let rel = record::relative_path(package, version);
    let path = root.join(&rel);
    if !path.exists() {
        return Err(Unread::Missing(Box::new(MissingRecord {
            image: image.to_owned(),
            package: package.to_owned(),
            version: version.to_owned(),
            record: rel,
            path: path.display().to_string(),
            role,
        })));
    }
    let surface = record::load(&path).map_err(Unread::Bad)?;
    if (
        surface.wheel.package.as_str(),
        surface.wheel.version.as_str(),
    ) != (package, version)
    {
        return Err(Unread::Bad(LoadError::new(
            path.display().to_string(),
            format!("records {}, not {package} {version}", surface.label()),
        )));
    }
    Ok(surface)
}

fn side(root: &Path, api: &Api, image: &Image) -> Result<ImageSide, Unread> {
    let (package, version) = (&image.core.package, &image.core.version);
    let core = read(root, &image.id, package, version, "native core")?;
    let mut modules = BTreeMap::new();
    let mut shadowing = Vec::new();
    let provided_by = match &image.layer {
        Layer::Overlay { .. } => {
            let base = format!("the base's {}", core.label());
            for name in core.modules.keys() {
                modules.insert(name.clone(), base.clone());
            }
            modules.insert(api.upstream.module.clone(), "the overlay".into());
            for file in &api.upstream.files {
                // A package directory wins over an extension module of the same name.
                let package = file.install.ends_with("/__init__.py");
                if package && core.modules.get(&file.module) == Some(&ModuleKind::Extension) {
                    shadowing.push((file.path.clone(), file.module.clone()));
                }
                modules.insert(
                    file.module.clone(),
                    format!("[[upstream.file]] {}", file.path),
                );
            }
            format!(
                "its base {}, the module, or an [[upstream.file]]",
                core.label()
            )
        }
        Layer::Pin { .. } | Layer::Check { .. } => {
            // One wheel gives the image its module, its siblings and its core: the release the
            // pin installs, or the one the base ships.
            let wheel = match image.layer {
                Layer::Pin { .. } => format!("the pinned {}", core.label()),
                _ => format!("the base's {}", core.label()),
            };
            for name in core.modules.keys() {
                modules.insert(name.clone(), wheel.clone());
            }
            wheel
        }
        Layer::Fill {
            package: fill_package,
            version: fill_version,
        } => {
            // The base builds the core from source: its extension modules are there; the
            // pure-Python files come from the fill wheel.
            let fill = if (fill_package, fill_version) == (package, version) {
                core.clone()
            } else {
                read(root, &image.id, fill_package, fill_version, "fill wheel")?
            };
            for (name, kind) in &core.modules {
                if *kind == ModuleKind::Extension {
                    modules.insert(name.clone(), "the core built in the base".to_owned());
                }
            }
            let filled = format!("the fill from {}", fill.label());
            for (name, kind) in &fill.modules {
                // The fill skips the files of a subpackage (`<package>/<sub>/...`) named like
                // a native module the base has: the package would hide it.
                let parts: Vec<&str> = name.split('.').collect();
                let in_subpackage =
                    parts.len() > 2 || parts.len() == 2 && *kind == ModuleKind::Package;
                let sub = parts[..parts.len().min(2)].join(".");
                let skipped =
                    in_subpackage && core.modules.get(&sub) == Some(&ModuleKind::Extension);
                if *kind != ModuleKind::Extension && !skipped {
                    modules
                        .entry(name.clone())
                        .or_insert_with(|| filled.clone());
                }
            }
            format!(
                "the core's extension modules, or the pure-Python files of {}",
                fill.label()
            )
        }
    };
    Ok(ImageSide {
        image: image.id.clone(),
        core,
        record: record::relative_path(package, version),
        modules,
        provided_by,
        shadowing,
    })
}

/// One thing an image cannot give the module.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageFinding {
    pub image: String,
    /// `FILE:LINE` of the module's first use.
    pub origin: String,
    /// `native Class.member` or `sibling pkg.mod`.
    pub subject: String,
    pub expected: String,
    pub found: String,
}

impl ImageFinding {
    /// `FILE:LINE: subject: image ID: expected X, found Y`, as verify prints it.
    pub fn line(&self) -> String {
        format!(
            "{}: {}: image {}: expected {}, found {}",
            self.origin, self.subject, self.image, self.expected, self.found
        )
    }
}

/// Everything `images` cannot give the module whose uses are `uses` (`file` names it): per
/// image, the uses its core does not serve (in line order), then the modules of the package
/// the module imports at module level that the image lacks.
pub fn check(images: &[ImageSide], file: &str, uses: &[Use]) -> Vec<ImageFinding> {
    let needs = requirements(file, uses);
    let mut findings = Vec::new();
    for side in images {
        for miss in serve(&side.core, &needs).missing {
            findings.push(ImageFinding {
                image: side.image.clone(),
                origin: miss.requirement.origin.clone(),
                subject: format!("native {}", miss.requirement.object),
                expected: format!(
                    "its core {} ({}) to serve a {}",
                    side.core.label(),
                    side.record,
                    miss.requirement.usage.label()
                ),
                found: miss.reason(),
            });
        }
        for (path, module) in &side.shadowing {
            findings.push(ImageFinding {
                image: side.image.clone(),
                origin: format!("api.toml [[upstream.file]] {path}"),
                subject: format!("package {module}"),
                expected: "a file that shadows no native module of the base".into(),
                found: format!(
                    "the package {module} over the base's native module of that name, which it \
                     would hide on import ({})",
                    side.core.label()
                ),
            });
        }
        let mut seen = BTreeSet::new();
        for u in uses.iter().filter(|u| u.required()) {
            let Target::Sibling { module } = &u.target else {
                continue;
            };
            if side.modules.contains_key(module) || !seen.insert(module) {
                continue;
            }
            findings.push(ImageFinding {
                image: side.image.clone(),
                origin: format!("{file}:{}", u.line),
                subject: format!("sibling {module}"),
                expected: format!(
                    "the module in the image ({}), as it is imported at module level",
                    side.provided_by
                ),
                found: "none".into(),
            });
        }
    }
    findings
}

/// The extension modules of the package the images' cores record besides the core itself
/// (`mooncake.engine`, the torch builds), sorted.
pub fn extensions(images: &[ImageSide]) -> Vec<String> {
    let all: BTreeSet<&String> = images
        .iter()
        .flat_map(|s| s.core.modules.iter())
        .filter(|(m, kind)| {
            **kind == ModuleKind::Extension && !images.iter().any(|s| s.core.core.module == **m)
        })
        .map(|(m, _)| m)
        .collect();
    all.into_iter().cloned().collect()
}

/// `cuda: mooncake-transfer-engine-cuda13 0.3.11.post1, rocm: ...`: each image and its core.
pub fn summary(images: &[ImageSide]) -> String {
    images
        .iter()
        .map(|s| format!("{}: {}", s.image, s.core.label()))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
