//! Images.

use super::Validator;
use crate::model::values::*;
use crate::model::*;
use crate::parse::{RawImage, RawManifest, S};
use std::collections::BTreeMap;

impl Validator<'_> {
    pub(super) fn images(&mut self, raw: &RawManifest) -> Vec<Image> {
        let mut dockerfiles = BTreeMap::new();
        let mut variants = BTreeMap::new();
        let mut out = Vec::new();
        for (id, img) in &raw.image {
            if !is_kebab(id) {
                self.error(
                    img,
                    format!("invalid image id {id:?}: lowercase words joined by -"),
                );
            }
            let image = self.image(id, img);
            if let Some(previous) = dockerfiles.insert(image.dockerfile.clone(), id.clone()) {
                let msg = format!(
                    "image `{id}` writes {} too, like image `{previous}`",
                    image.dockerfile
                );
                self.error(&img.get_ref().dockerfile, msg);
            }
            if let (Some(b), Some(variant)) = (&image.build_py, &img.get_ref().build_py_variant) {
                let key = (b.path.clone(), b.variant.clone());
                if let Some(previous) = variants.insert(key, id.clone()) {
                    let msg = format!(
                        "image `{id}` names build_py variant {:?} of {} too, like image \
                         `{previous}`: one variant builds one image",
                        b.variant, b.path
                    );
                    self.error(variant, msg);
                }
            }
            out.push(image);
        }
        out
    }

    fn image(&mut self, id: &str, img: &S<RawImage>) -> Image {
        let r = img.get_ref();
        let dockerfile = self.path(&r.dockerfile, "dockerfile");
        let base_image = self.text(&r.base_image, is_image_name, "base image name");
        let base_tag = self.text(&r.base_tag, is_image_tag, "base image tag");
        let required = |v: &mut Self,
                        value: &Option<S<String>>,
                        key: &str,
                        ok: fn(&str) -> bool,
                        what: &str| match value {
            Some(x) => v.text(x, ok, what),
            None => {
                let strategy = r.strategy.get_ref();
                v.error(
                    img,
                    format!("image `{id}` (strategy {strategy}) needs `{key}`"),
                );
                String::new()
            }
        };
        let (layer, unused) = match r.strategy.get_ref().as_str() {
            "overlay" => (
                Layer::Overlay {
                    base_package: required(
                        self,
                        &r.base_package,
                        "base_package",
                        is_dist_name,
                        "package name",
                    ),
                    base_version: required(
                        self,
                        &r.base_version,
                        "base_version",
                        is_version,
                        "version",
                    ),
                },
                [
                    ("fill_package", &r.fill_package),
                    ("fill_version", &r.fill_version),
                ],
            ),
            "fill" => (
                Layer::Fill {
                    package: required(
                        self,
                        &r.fill_package,
                        "fill_package",
                        is_dist_name,
                        "package name",
                    ),
                    version: required(self, &r.fill_version, "fill_version", is_version, "version"),
                },
                [
                    ("base_package", &r.base_package),
                    ("base_version", &r.base_version),
                ],
            ),
            other => {
                self.error(
                    &r.strategy,
                    format!("unknown strategy {other:?}: expected overlay or fill"),
                );
                (
                    Layer::Fill {
                        package: String::new(),
                        version: String::new(),
                    },
                    [("", &None), ("", &None)],
                )
            }
        };
        for (key, value) in unused {
            if let Some(v) = value {
                self.error(
                    v,
                    format!(
                        "`{key}` does not apply to strategy {}",
                        r.strategy.get_ref()
                    ),
                );
            }
        }
        let build_py = match (&r.build_py, &r.build_py_variant) {
            (Some(p), Some(v)) => Some(BuildPyVariant {
                path: self.path(p, "build_py"),
                variant: self.text(v, |s| is_kebab(s) || is_image_tag(s), "build_py_variant"),
            }),
            (None, None) => None,
            (Some(p), None) => {
                self.error(p, "build_py needs build_py_variant");
                None
            }
            (None, Some(v)) => {
                self.error(v, "build_py_variant needs build_py");
                None
            }
        };
        let core = self.image_core(id, img, &layer);
        Image {
            id: id.to_string(),
            dockerfile,
            base_image,
            base_tag,
            layer,
            build_py,
            core,
        }
    }
}
