//! The native core each image runs on, the overlay's extra upstream files and the releases
//! a pin installs.

use super::Validator;
use crate::model::layers::{is_wheel_of, module_of, source_root};
use crate::model::values::*;
use crate::model::*;
use crate::parse::{RawImage, RawRelease, RawUpstreamFile, S};
use std::collections::BTreeSet;

impl Validator<'_> {
    /// An overlay or check image runs on the wheel its base image installs, a pin image on
    /// the release it installs; a fill image declares its core.
    pub(super) fn image_core(&mut self, id: &str, img: &S<RawImage>, layer: &Layer) -> ImageCore {
        let r = img.get_ref();
        let strategy = layer.strategy();
        match (layer, &r.core) {
            (Layer::Fill { .. }, None) => self.error(
                img,
                format!(
                    "image `{id}` (strategy fill) needs `core = {{ package, version, source }}`: \
                     the release whose native core its base image has, and how that is known"
                ),
            ),
            (Layer::Fill { .. }, Some(core)) => {
                let c = core.get_ref();
                return ImageCore {
                    package: self.text(&c.package, is_dist_name, "core package name"),
                    version: self.text(&c.version, is_version, "core version"),
                    source: CoreSource::Declared(self.text(
                        &c.source,
                        |s| !s.trim().is_empty(),
                        "core source (empty)",
                    )),
                };
            }
            (_, Some(core)) => {
                let whose = match layer {
                    Layer::Pin { .. } => "the release it installs (base_package == pin_version)",
                    _ => "the wheel its base image installs (base_package == base_version)",
                };
                self.error(
                    core,
                    format!("image `{id}` (strategy {strategy}) runs on {whose}: remove `core`"),
                );
            }
            (_, None) => {}
        }
        let none = String::new();
        let (package, version, source) = match layer {
            Layer::Overlay {
                base_package,
                base_version,
            }
            | Layer::Check {
                base_package,
                base_version,
            } => (base_package, base_version, CoreSource::BaseWheel),
            Layer::Pin {
                base_package,
                release,
                ..
            } => (base_package, &release.version, CoreSource::PinnedRelease),
            // A fill without its `core`, an error above.
            Layer::Fill { .. } => (&none, &none, CoreSource::BaseWheel),
        };
        ImageCore {
            package: package.clone(),
            version: version.clone(),
            source,
        }
    }

    /// `[[release]]`: each (package, version) once, a valid name and PEP 440 version, and at
    /// least one wheel, each a wheel file name of that release, once, with a sha256.
    pub(super) fn releases(&mut self, raw: &[S<RawRelease>]) -> Vec<Release> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for release in raw {
            let r = release.get_ref();
            let package = self.text(&r.package, is_dist_name, "release package name");
            let version = self.text(&r.version, is_version, "release version (PEP 440)");
            let key = (
                package.to_ascii_lowercase().replace(['_', '.'], "-"),
                version.clone(),
            );
            if !seen.insert(key) {
                self.error(
                    &r.version,
                    format!("release {package} {version} is listed twice"),
                );
            }
            if r.wheels.get_ref().is_empty() {
                self.error(
                    &r.wheels,
                    format!(
                        "release {package} {version} lists no wheels: give every wheel file \
                         with its sha256, so pip installs only those bytes (--require-hashes)"
                    ),
                );
            }
            let mut files = BTreeSet::new();
            let mut wheels = Vec::new();
            for wheel in r.wheels.get_ref() {
                let w = wheel.get_ref();
                let file = w.file.get_ref();
                if !is_wheel_of(file, &package, &version) {
                    self.error(
                        &w.file,
                        format!(
                            "{file:?} is not a wheel file of {package} {version} \
                             ({{name}}-{{version}}-{{python}}-{{abi}}-{{platform}}.whl)"
                        ),
                    );
                } else if !files.insert(file.clone()) {
                    self.error(&w.file, format!("{file:?} is listed twice"));
                }
                let sha256 = self.text(
                    &w.sha256,
                    |s| is_hex(s, 64),
                    "sha256 (64 lowercase hex digits)",
                );
                wheels.push(Wheel {
                    file: file.clone(),
                    sha256,
                });
            }
            out.push(Release {
                package,
                version,
                wheels,
            });
        }
        out
    }

    /// `[[upstream.file]]`: `.py` files of the module's package, under the directory the
    /// package sits in (derived from `path` and `module`), each once, with a sha256.
    pub(super) fn upstream_files(
        &mut self,
        raw: &[S<RawUpstreamFile>],
        upstream_path: &str,
        module: &str,
    ) -> Vec<UpstreamFile> {
        let root = source_root(upstream_path, module);
        let package = module.split('.').next().unwrap_or_default();
        let mut seen = BTreeSet::new();
        let mut files = Vec::new();
        for file in raw {
            let f = file.get_ref();
            let path = f.path.get_ref();
            let sha256 = self.text(
                &f.sha256,
                |s| is_hex(s, 64),
                "sha256 (64 lowercase hex digits)",
            );
            if let Err(why) = RelPath::parse(path) {
                self.error(&f.path, format!("file path {path:?}: {why}"));
                continue;
            }
            let Some(root) = root else {
                self.error(
                    &f.path,
                    format!(
                        "cannot place {path:?}: upstream.path does not end with the module's own \
                         path ({}.py), so the directory its package sits in is unknown",
                        module.replace('.', "/")
                    ),
                );
                continue;
            };
            let install = path.strip_prefix(root).unwrap_or_default();
            let module_name = module_of(install).filter(|m| m.split('.').next() == Some(package));
            let Some(module_name) = module_name else {
                self.error(
                    &f.path,
                    format!(
                        "{path:?} is not a .py file of the package `{package}` under {root:?} \
                         (each part a Python name)"
                    ),
                );
                continue;
            };
            if path == upstream_path {
                self.error(&f.path, "the module itself is `upstream.path`, not a file");
                continue;
            }
            if !seen.insert(path.clone()) {
                self.error(&f.path, format!("{path:?} is listed twice"));
                continue;
            }
            files.push(UpstreamFile {
                path: path.clone(),
                sha256,
                install: install.to_owned(),
                module: module_name,
            });
        }
        files
    }
}
