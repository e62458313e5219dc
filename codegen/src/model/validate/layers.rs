//! The native core each image runs on, and the overlay's extra upstream files.

use super::Validator;
use crate::model::layers::{module_of, source_root};
use crate::model::values::*;
use crate::model::*;
use crate::parse::{RawImage, RawUpstreamFile, S};
use std::collections::BTreeSet;

impl Validator<'_> {
    /// An overlay image runs on the wheel its base image installs; any other image declares
    /// its core.
    pub(super) fn image_core(&mut self, id: &str, img: &S<RawImage>, layer: &Layer) -> ImageCore {
        let r = img.get_ref();
        match (layer, &r.core) {
            (Layer::Overlay { .. }, Some(core)) => {
                self.error(
                    core,
                    format!(
                        "image `{id}` (strategy overlay) runs on the wheel its base image \
                         installs (base_package == base_version): remove `core`"
                    ),
                );
            }
            (Layer::Overlay { .. }, None) => {}
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
        }
        let (package, version) = match layer {
            Layer::Overlay {
                base_package,
                base_version,
            } => (base_package.clone(), base_version.clone()),
            Layer::Fill { .. } => (String::new(), String::new()),
        };
        ImageCore {
            package,
            version,
            source: CoreSource::BaseWheel,
        }
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
            if RelPath::new(path).is_none() {
                self.error(
                    &f.path,
                    format!("file path {path:?}: give a relative path without `..`"),
                );
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
