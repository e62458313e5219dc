//! What an image's layer stands on: the native core the image runs on, the extra upstream
//! files an overlay brings with the module, and the releases a pin installs. `verify` and
//! `bump` check the module against the first two (the core's record in `cores/`, the modules
//! the image then has).

use serde::Serialize;

/// The native core an image runs on: a release whose record (`cores/<package>-<version>.json`)
/// stands for it.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageCore {
    /// The distribution, e.g. `mooncake-transfer-engine-cuda13`.
    pub package: String,
    pub version: String,
    pub source: CoreSource,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum CoreSource {
    /// The wheel the base image installs (`base_package` == `base_version`: an overlay or a
    /// check image).
    BaseWheel,
    /// The release a pin image installs over the base's wheel (`base_package` ==
    /// `pin_version`, a `[[release]]`): module and core come from that one wheel.
    PinnedRelease,
    /// Declared in api.toml: the core is built another way (from source in the base image),
    /// and this release is the one whose surface matches it, for the reason given.
    Declared(String),
}

impl ImageCore {
    /// `package version`.
    pub fn label(&self) -> String {
        format!("{} {}", self.package, self.version)
    }
}

/// One `[[release]]`: a release whose wheels a `pin` image installs, hash-checked.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Release {
    /// The distribution, e.g. `mooncake-transfer-engine-cuda13`.
    pub package: String,
    pub version: String,
    /// Every wheel file of the release (any of which pip may pick), in manifest order.
    pub wheels: Vec<Wheel>,
}

impl Release {
    /// `package==version`, as pip takes it.
    pub fn requirement(&self) -> String {
        format!("{}=={}", self.package, self.version)
    }
}

/// One wheel file of a release and its sha256.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct Wheel {
    /// The file name, e.g. `mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl`.
    pub file: String,
    pub sha256: String,
}

/// Whether `file` is a wheel file name (PEP 427: `{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`)
/// of `package` at `version`: the name normalized (`-` and `.` as `_`, any case), each tag
/// part `[A-Za-z0-9._]`.
pub fn is_wheel_of(file: &str, package: &str, version: &str) -> bool {
    let Some(stem) = file.strip_suffix(".whl") else {
        return false;
    };
    let parts: Vec<&str> = stem.split('-').collect();
    let name = package.replace(['-', '.'], "_");
    (5..=6).contains(&parts.len())
        && parts[0].eq_ignore_ascii_case(&name)
        && parts[1] == version
        && parts[2..].iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'.' | b'_'))
        })
}

/// One `[[upstream.file]]`: a file of the upstream repository at the pinned commit that the
/// overlay installs beside the module (a sibling module the module imports, or a package's
/// file).
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct UpstreamFile {
    /// The path in the repository, e.g. `mooncake-wheel/mooncake/_partial_read.py`.
    pub path: String,
    pub sha256: String,
    /// Where it goes under site-packages, e.g. `mooncake/_partial_read.py`: `path` without the
    /// directory the module's package sits in.
    pub install: String,
    /// The module it provides: `mooncake._partial_read`, or `mooncake.store` for
    /// `mooncake/store/__init__.py`.
    pub module: String,
}

/// The directory of a repository `path` that the package of `module` sits in
/// (`mooncake-wheel/` for `mooncake-wheel/mooncake/structured_object_store.py` and
/// `mooncake.structured_object_store`), when `path` ends with the module's own path.
pub fn source_root<'a>(path: &'a str, module: &str) -> Option<&'a str> {
    let own = format!("{}.py", module.replace('.', "/"));
    path.strip_suffix(&own)
        .filter(|root| root.is_empty() || root.ends_with('/'))
}

/// The module a file under site-packages provides (`a/b.py` -> `a.b`, `a/b/__init__.py` ->
/// `a.b`), or `None` when it is not a `.py` file whose parts are Python names.
pub fn module_of(install: &str) -> Option<String> {
    let stem = install.strip_suffix(".py")?;
    let stem = stem.strip_suffix("/__init__").unwrap_or(stem);
    let parts: Vec<&str> = stem.split('/').collect();
    parts
        .iter()
        .all(|p| super::values::is_python_identifier(p))
        .then(|| parts.join("."))
}

#[cfg(test)]
mod tests {
    use super::{is_wheel_of, module_of};

    #[test]
    fn wheel_file_names() {
        let (p, v) = ("mooncake-transfer-engine-cuda13", "0.3.12.post1");
        for ok in [
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
            "Mooncake_Transfer_Engine_CUDA13-0.3.12.post1-1-py3-none-any.whl",
        ] {
            assert!(is_wheel_of(ok, p, v), "{ok}");
        }
        for bad in [
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.tar.gz",
            "mooncake_transfer_engine_cuda13-0.3.12-cp311-cp311-manylinux_2_28_x86_64.whl",
            "mooncake_transfer_engine-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-manylinux_2_28_x86_64.whl",
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-many linux.whl",
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-x';id;'.whl",
            "mooncake_transfer_engine_cuda13-0.3.12.post1-cp311--x86_64.whl",
            "../mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-any.whl",
        ] {
            assert!(!is_wheel_of(bad, p, v), "{bad}");
        }
    }

    #[test]
    fn files_name_their_modules() {
        for (file, module) in [
            ("mooncake/_partial_read.py", "mooncake._partial_read"),
            ("mooncake/store/__init__.py", "mooncake.store"),
            ("mooncake/store/backend.py", "mooncake.store.backend"),
        ] {
            assert_eq!(module_of(file).as_deref(), Some(module), "{file}");
        }
        for bad in [
            "mooncake/x.so",
            "mooncake/9x.py",
            "mooncake/a-b.py",
            "mooncake/class.py",
            ".py",
        ] {
            assert_eq!(module_of(bad), None, "{bad}");
        }
    }
}
