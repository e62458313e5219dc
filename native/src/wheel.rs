//! What a wheel says about its native core before anything runs: the distribution and
//! version (METADATA), the extension module that is the core, and the hashes.

use mooncake_sos_manifest::core_record::ModuleKind;
use mooncake_sos_pysource::archive::Archive;
use mooncake_sos_pysource::source::LoadError;
use std::collections::BTreeMap;

/// A wheel and the native core inside it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WheelCore {
    /// How errors name the wheel: its path as given.
    pub display: String,
    /// Normalised distribution name, e.g. `mooncake-transfer-engine-non-cuda`.
    pub package: String,
    pub version: String,
    pub sha256: String,
    /// The module to import: the configured core, or `<pkg>._<name>` where `<pkg>.<name>` is
    /// a package choosing among backends.
    pub module: String,
    /// The extension module's path in the wheel.
    pub file: String,
    pub file_sha256: String,
    /// Every module of the top-level package the core belongs to.
    pub modules: BTreeMap<String, ModuleKind>,
}

/// The largest METADATA read (sglang's is 30 KB).
pub const MAX_METADATA_BYTES: u64 = 4 << 20;
/// The largest native core hashed (the real ones: 8-26 MiB).
pub const MAX_CORE_BYTES: u64 = 128 << 20;
/// The most modules a core's package may have: the reader lists them all to the import (the
/// real ones: 20-40).
pub const MAX_PACKAGE_MODULES: usize = 10_000;

/// Finds the extension module serving `native_module` (`mooncake.store`) in an open wheel
/// (`sha256` is the wheel file's).
pub fn inspect(
    wheel: &mut Archive,
    sha256: String,
    native_module: &str,
) -> Result<WheelCore, LoadError> {
    let display = wheel.display().to_owned();
    let err = |m: String| LoadError::new(&display, m);
    let names: Vec<String> = wheel.members().iter().map(|m| m.name.clone()).collect();
    let metadata = names
        .iter()
        .filter(|n| {
            n.strip_suffix("/METADATA")
                .is_some_and(|d| d.ends_with(".dist-info") && !d.contains('/'))
        })
        .collect::<Vec<_>>();
    let [metadata] = metadata[..] else {
        return Err(err(format!(
            "not a wheel: {} top-level *.dist-info/METADATA files, expected 1",
            metadata.len()
        )));
    };
    let text = read_metadata(wheel, metadata)?;
    let (package, version) =
        name_and_version(&text).map_err(|m| err(format!("{metadata}: {m}")))?;
    let (module, file) = locate(&names, native_module).ok_or_else(|| {
        err(format!(
            "no native core in the wheel: no extension module for `{native_module}` \
             ({}) — a pure-Python wheel, or another package",
            candidates(native_module)
        ))
    })?;
    let top = native_module.split('.').next().unwrap_or_default();
    let modules = package_modules(&names, top);
    if modules.len() > MAX_PACKAGE_MODULES {
        return Err(err(format!(
            "the package `{top}` has {} modules, past the {MAX_PACKAGE_MODULES} the core \
             reader lists",
            modules.len()
        )));
    }
    let file_sha256 = wheel.sha256(&file, MAX_CORE_BYTES, "a native core")?;
    Ok(WheelCore {
        display,
        package,
        version,
        sha256,
        module,
        file_sha256,
        file,
        modules,
    })
}

/// A wheel's METADATA as text, bounded (a user's wheel is read for it too).
pub fn read_metadata(wheel: &mut Archive, name: &str) -> Result<String, LoadError> {
    let bytes = wheel.read(name, MAX_METADATA_BYTES, "a METADATA")?;
    String::from_utf8(bytes).map_err(|e| {
        LoadError::new(
            wheel.display(),
            format!(
                "{name}: not UTF-8 (at byte {})",
                e.utf8_error().valid_up_to()
            ),
        )
    })
}

/// The modules under `top/` in a wheel's file list: `a/b.py` is `a.b`, `a/b/__init__.py` the
/// package `a.b`, `a/b.so` or `a/b.<abi>.so` the extension `a.b`. Files whose path parts are
/// not Python names (data, `a.libs/`, the master binary) are no modules.
pub fn package_modules(names: &[String], top: &str) -> BTreeMap<String, ModuleKind> {
    let mut modules = BTreeMap::new();
    let prefix = format!("{top}/");
    for name in names.iter().filter(|n| n.starts_with(&prefix)) {
        let (stem, kind) = if let Some(stem) = name.strip_suffix("/__init__.py") {
            (stem, ModuleKind::Package)
        } else if let Some(stem) = name.strip_suffix(".py") {
            (stem, ModuleKind::Python)
        } else if let Some(stem) = name.strip_suffix(".so") {
            // `b.cpython-311-x86_64-linux-gnu` -> `b`; the tag cannot hold a `/`.
            let (dir, file) = stem.rsplit_once('/').unwrap_or(("", stem));
            let module = file.split('.').next().unwrap_or_default();
            let len = if dir.is_empty() {
                module.len()
            } else {
                dir.len() + 1 + module.len()
            };
            (&stem[..len], ModuleKind::Extension)
        } else {
            continue;
        };
        let parts: Vec<&str> = stem.split('/').collect();
        if parts.iter().all(|p| is_identifier(p)) {
            modules.insert(parts.join("."), kind);
        }
    }
    modules
}

/// An ASCII Python name (what a module file in a wheel is called).
fn is_identifier(s: &str) -> bool {
    mooncake_sos_manifest::model::values::is_python_identifier(s)
}

/// `Name` (normalised as PEP 503 does) and `Version` from METADATA's header block. Both end
/// up in file names (`cores/<package>-<version>.json`), so only their usual characters pass.
fn name_and_version(metadata: &str) -> Result<(String, String), String> {
    let header = |key: &str| {
        metadata
            .lines()
            .take_while(|l| !l.is_empty())
            .find_map(|l| l.strip_prefix(key)?.strip_prefix(':').map(str::trim))
            .ok_or_else(|| format!("no `{key}:` header"))
    };
    let raw = header("Name")?;
    let mut package = String::new();
    for c in raw.chars() {
        match c {
            'a'..='z' | '0'..='9' => package.push(c),
            'A'..='Z' => package.push(c.to_ascii_lowercase()),
            '-' | '_' | '.' if !package.ends_with('-') => package.push('-'),
            '-' | '_' | '.' => {}
            _ => return Err(format!("unexpected character {c:?} in Name {raw:?}")),
        }
    }
    let version = header("Version")?.to_owned();
    if !is_plain_release(&package, &version) {
        return Err(format!("unexpected Name {raw:?} or Version {version:?}"));
    }
    Ok((package, version))
}

/// A normalised distribution name (`[a-z0-9-]`, no `-` at either end) and a version of
/// `[A-Za-z0-9._+!-]`: what a record's file name and every table may hold of a release.
pub fn is_plain_release(package: &str, version: &str) -> bool {
    let package_ok = !package.is_empty()
        && !package.starts_with('-')
        && !package.ends_with('-')
        && package
            .chars()
            .all(|c| matches!(c, 'a'..='z' | '0'..='9' | '-'));
    let version_ok = !version.is_empty()
        && version
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || "._+!-".contains(c));
    package_ok && version_ok
}

/// `(module to import, file)`: `a/b.so` or `a/b.<abi>.so` for `a.b`; else, when `a/b/` is a
/// package, `a/_b.so` or `a/_b.<abi>.so` as `a._b`.
fn locate(names: &[String], native_module: &str) -> Option<(String, String)> {
    let (parent, leaf) = native_module
        .rsplit_once('.')
        .unwrap_or(("", native_module));
    let dir = if parent.is_empty() {
        String::new()
    } else {
        format!("{}/", parent.replace('.', "/"))
    };
    let extension = |stem: &str| {
        let mut found: Vec<&String> = names
            .iter()
            .filter(|n| {
                n.strip_prefix(&dir)
                    .and_then(|f| f.strip_prefix(stem))
                    .and_then(|f| f.strip_suffix(".so"))
                    .is_some_and(|tag| {
                        tag.is_empty() || (tag.starts_with('.') && !tag.contains('/'))
                    })
            })
            .collect();
        found.sort();
        found.first().map(|f| (*f).clone())
    };
    if let Some(file) = extension(leaf) {
        return Some((native_module.to_owned(), file));
    }
    let package_init = format!("{dir}{leaf}/__init__.py");
    if names.contains(&package_init) {
        let private = format!("_{leaf}");
        if let Some(file) = extension(&private) {
            let module = if parent.is_empty() {
                private
            } else {
                format!("{parent}.{private}")
            };
            return Some((module, file));
        }
    }
    None
}

fn candidates(native_module: &str) -> String {
    let path = native_module.replace('.', "/");
    let (dir, leaf) = path.rsplit_once('/').unwrap_or(("", &path));
    let dir = if dir.is_empty() {
        String::new()
    } else {
        format!("{dir}/")
    };
    format!("looked for {dir}{leaf}*.so, and {dir}_{leaf}*.so beside a {dir}{leaf}/ package")
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(list: &[&str]) -> Vec<String> {
        list.iter().map(|s| (*s).to_owned()).collect()
    }

    #[test]
    fn the_core_is_store_so_or_the_private_module_beside_a_store_package() {
        let cases: [(&[&str], (&str, &str)); 3] = [
            (
                &[
                    "mooncake/__init__.py",
                    "mooncake/store.so",
                    "mooncake/engine.so",
                ],
                ("mooncake.store", "mooncake/store.so"),
            ),
            (
                &["mooncake/store.cpython-311-x86_64-linux-gnu.so"],
                (
                    "mooncake.store",
                    "mooncake/store.cpython-311-x86_64-linux-gnu.so",
                ),
            ),
            (
                &[
                    "mooncake/store/__init__.py",
                    "mooncake/_store.cpython-311-x86_64-linux-gnu.so",
                    "mooncake/store_rs.so",
                ],
                (
                    "mooncake._store",
                    "mooncake/_store.cpython-311-x86_64-linux-gnu.so",
                ),
            ),
        ];
        for (files, (module, file)) in cases {
            let found = locate(&names(files), "mooncake.store");
            let want = Some((module.to_owned(), file.to_owned()));
            assert_eq!(found, want, "{files:?}");
        }
        // Neither a look-alike name nor a private module without the package counts.
        for list in [
            names(&["mooncake/store_rs.so", "mooncake/storex.so"]),
            names(&["mooncake/_store.so"]),
            names(&["mooncake/sub/store.so", "other/store.so"]),
        ] {
            assert_eq!(locate(&list, "mooncake.store"), None, "{list:?}");
        }
    }

    #[test]
    fn the_package_modules_are_its_py_files_packages_and_extensions() {
        let wheel = names(&[
            "mooncake/__init__.py",
            "mooncake/buffer_pool.py",
            "mooncake/store/__init__.py",
            "mooncake/store/backend.py",
            "mooncake/_store.cpython-311-x86_64-linux-gnu.so",
            "mooncake/engine.so",
            "mooncake/mooncake_master",
            "mooncake/stubs.pyi",
            "mooncake/data-files/x.py",
            "mooncake/__pycache__/x.cpython-311.pyc",
            "mooncake.libs/libfoo.so",
            "other/mod.py",
            "mooncake_transfer_engine-0.3.14.dist-info/METADATA",
        ]);
        let found: Vec<(String, ModuleKind)> =
            package_modules(&wheel, "mooncake").into_iter().collect();
        use ModuleKind::*;
        assert_eq!(
            found,
            [
                ("mooncake".into(), Package),
                ("mooncake._store".into(), Extension),
                ("mooncake.buffer_pool".into(), Python),
                ("mooncake.engine".into(), Extension),
                ("mooncake.store".into(), Package),
                ("mooncake.store.backend".into(), Python),
            ]
        );
    }

    #[test]
    fn metadata_names_are_normalised_and_kept_to_safe_characters() {
        let meta = "Metadata-Version: 2.4\nName: Mooncake_Transfer.Engine\nVersion: 0.3.11.post1\n\nName: body\n";
        assert_eq!(
            name_and_version(meta),
            Ok(("mooncake-transfer-engine".into(), "0.3.11.post1".into()))
        );
        for bad in [
            "Name: ../x\nVersion: 1\n",
            "Name: x\nVersion: 1/2\n",
            "Name: x\n",
            "Version: 1\n",
        ] {
            assert!(name_and_version(bad).is_err(), "{bad:?}");
        }
    }
}
