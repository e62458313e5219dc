//! Images.

use super::Validator;
use crate::model::strategy::LAYER_KEYS;
use crate::model::values::*;
use crate::model::*;
use crate::parse::{RawImage, RawManifest, S};
use std::collections::BTreeMap;

impl Validator<'_> {
    pub(super) fn images(&mut self, raw: &RawManifest, releases: &[Release]) -> Vec<Image> {
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
            let image = self.image(id, img, releases);
            let package = raw.upstream.get_ref().module.get_ref().split('.').next();
            for (m, raw_m) in image.user_modules.iter().zip(&img.get_ref().user_modules) {
                if package.is_some_and(|p| !m.starts_with(&format!("{p}."))) {
                    let what = format!("user module `{m}` is not a module of the package");
                    self.error(raw_m, what);
                }
            }
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

    fn image(&mut self, id: &str, img: &S<RawImage>, releases: &[Release]) -> Image {
        let r = img.get_ref();
        let dockerfile = self.path(&r.dockerfile, "dockerfile");
        let base_image = self.text(&r.base_image, is_image_name, "base image name");
        let base_tag = self.text(&r.base_tag, is_image_tag, "base image tag");
        let strategy = r.strategy.get_ref().as_str();
        let required = |v: &mut Self,
                        value: &Option<S<String>>,
                        key: &str,
                        ok: fn(&str) -> bool,
                        what: &str| match value {
            Some(x) => v.text(x, ok, what),
            None => {
                v.error(
                    img,
                    format!("image `{id}` (strategy {strategy}) needs `{key}`"),
                );
                String::new()
            }
        };
        let base = |v: &mut Self| {
            (
                required(
                    v,
                    &r.base_package,
                    "base_package",
                    is_dist_name,
                    "package name",
                ),
                required(v, &r.base_version, "base_version", is_version, "version"),
            )
        };
        let parsed = Strategy::from_name(strategy);
        if parsed.is_none() {
            let expected = Strategy::names();
            let msg = format!("unknown strategy {strategy:?}: expected {expected}");
            self.error(&r.strategy, msg);
        }
        let layer = match parsed {
            // Unknown: the error is said; the image's other keys are still checked.
            None => Layer::Fill {
                package: String::new(),
                version: String::new(),
            },
            Some(Strategy::Overlay) => {
                let (base_package, base_version) = base(self);
                Layer::Overlay {
                    base_package,
                    base_version,
                }
            }
            Some(Strategy::Fill) => Layer::Fill {
                package: required(
                    self,
                    &r.fill_package,
                    "fill_package",
                    is_dist_name,
                    "package name",
                ),
                version: required(self, &r.fill_version, "fill_version", is_version, "version"),
            },
            Some(Strategy::Pin) => {
                let (base_package, base_version) = base(self);
                if r.pin_version.is_none() {
                    self.error(
                        img,
                        format!("image `{id}` (strategy pin) needs `pin_version`"),
                    );
                }
                let release = self.pinned_release(id, r, &base_package, &base_version, releases);
                Layer::Pin {
                    base_package,
                    base_version,
                    release,
                }
            }
            Some(Strategy::Check) => {
                let (base_package, base_version) = base(self);
                Layer::Check {
                    base_package,
                    base_version,
                }
            }
        };
        let keys: &[&str] = parsed.map_or(&LAYER_KEYS, Strategy::keys);
        for (key, value) in [
            ("base_package", &r.base_package),
            ("base_version", &r.base_version),
            ("fill_package", &r.fill_package),
            ("fill_version", &r.fill_version),
            ("pin_version", &r.pin_version),
        ] {
            if let Some(v) = value.as_ref().filter(|_| !keys.contains(&key)) {
                self.error(v, format!("`{key}` does not apply to strategy {strategy}"));
            }
        }
        let build_py = self
            .both(
                &r.build_py,
                &r.build_py_variant,
                ["build_py", "build_py_variant"],
            )
            .map(|(p, v)| BuildPyVariant {
                path: self.path(p, "build_py"),
                variant: self.text(v, |s| is_kebab(s) || is_image_tag(s), "build_py_variant"),
            });
        let core = self.image_core(id, img, &layer);
        let users = self.users(&r.users, layer.strategy());
        let user_modules = r
            .user_modules
            .iter()
            .map(|m| self.text(m, is_dotted_name, "user module (a dotted Python name)"))
            .collect();
        Image {
            id: id.to_string(),
            strategy_line: self.source.line_col(r.strategy.span().start).0,
            dockerfile,
            base_image,
            base_tag,
            layer,
            build_py,
            core,
            users,
            user_modules,
        }
    }

    /// An image's `users`: each once, not on a fill image (a fill installs the package into
    /// a base image without it: no other user of the package is there to record).
    fn users(&mut self, raw: &[S<String>], strategy: Strategy) -> Vec<ImageUser> {
        if let (Some(first), Strategy::Fill) = (raw.first(), strategy) {
            self.error(
                first,
                "`users` does not apply to strategy fill: its base image has no package for \
                 them to use",
            );
        }
        let mut users: Vec<ImageUser> = Vec::new();
        for value in raw {
            let Some(user) = self.user(value) else {
                continue;
            };
            if users.iter().any(|u| u.package == user.package) {
                let msg = format!("user `{}` is named twice", user.package);
                self.error(value, msg);
                continue;
            }
            users.push(user);
        }
        users
    }

    /// `"dist==version"`: a user of the package, pinned to one release, its name in normal
    /// form (PEP 503), as `users --record` names its record.
    fn user(&mut self, value: &S<String>) -> Option<ImageUser> {
        const MAX_USER: usize = 200;
        let text = value.get_ref();
        if text.len() > MAX_USER {
            let msg = format!(
                "a user of {} bytes: write `dist==version` (at most {MAX_USER})",
                text.len()
            );
            self.error(value, msg);
            return None;
        }
        match text.split_once("==") {
            Some((package, version)) if is_dist_name(package) && is_version(version) => {
                let normal = pep503(package);
                if normal != package {
                    let msg = format!(
                        "user `{package}`: write the package's name in its normal form (PEP \
                         503): \"{normal}=={version}\""
                    );
                    self.error(value, msg);
                    return None;
                }
                Some(ImageUser {
                    package: normal,
                    version: version.to_owned(),
                })
            }
            _ => {
                self.error(
                    value,
                    format!(
                        "invalid user {text:?}: write `dist==version`, e.g. \"sglang==0.5.16\""
                    ),
                );
                None
            }
        }
    }

    /// A pin image's `pin_version`: a `[[release]]` of its base package, newer than the
    /// release the base image ships (else there is nothing to pin: strategy check).
    fn pinned_release(
        &mut self,
        id: &str,
        r: &RawImage,
        base_package: &str,
        base_version: &str,
        releases: &[Release],
    ) -> Release {
        let empty = Release {
            package: base_package.to_owned(),
            version: String::new(),
            wheels: Vec::new(),
        };
        let Some(pin) = &r.pin_version else {
            return empty;
        };
        let version = self.text(pin, is_version, "pin_version");
        let (Some(pinned), Some(shipped)) = (parse_version(&version), parse_version(base_version))
        else {
            return empty;
        };
        if pinned <= shipped {
            self.error(
                pin,
                format!(
                    "image `{id}`: pin_version {version} is not newer than base_version \
                     {base_version}, which the base image ships: nothing to install, use \
                     strategy check"
                ),
            );
        }
        let same = |p: &str| {
            p.to_ascii_lowercase().replace(['_', '.'], "-")
                == base_package.to_ascii_lowercase().replace(['_', '.'], "-")
        };
        match releases
            .iter()
            .find(|rel| same(&rel.package) && parse_version(&rel.version) == Some(pinned.clone()))
        {
            Some(release) => release.clone(),
            None => {
                self.error(
                    pin,
                    format!(
                        "image `{id}` pins {base_package} {version}, which no [[release]] lists: \
                         add one with every wheel file and its sha256"
                    ),
                );
                empty
            }
        }
    }
}
