//! Committed core surfaces: `cores/<package>-<version>.json` in the repository, written by
//! `cargo xtask core --record`, so the images' cores can be checked offline and reviewed
//! as data. The drift check compares a record with a fresh reading of the same wheel.

use super::wheel::is_plain_release;
use mooncake_sos_manifest::core_record::{CoreSurface, FORMAT, Instance};
use mooncake_sos_manifest::model::values::is_python_name;
use mooncake_sos_pysource::source::LoadError;
use mooncake_sos_support::escape;
use mooncake_sos_support::{drift, input, json};
use std::path::{Path, PathBuf};

/// The records' directory, relative to the repository root.
pub const DIR: &str = "cores";

/// `cores/<package>-<version>.json`. Package and version are checked to be plain names when
/// read from a wheel (see `wheel::name_and_version`), so the path stays inside `cores/`.
pub fn relative_path(package: &str, version: &str) -> String {
    format!("{DIR}/{package}-{version}.json")
}

pub fn path(root: &Path, package: &str, version: &str) -> PathBuf {
    root.join(relative_path(package, version))
}

/// The largest record read: the real ones are 20-75 KB.
pub const MAX_RECORD_BYTES: u64 = 4 << 20;

/// Reads a core record; a malformed one is an error at its line and column, a record of
/// another format says how to write it again.
pub fn load(path: &Path) -> Result<CoreSurface, LoadError> {
    let surface: CoreSurface = load_json(
        path,
        "core record",
        FORMAT,
        "`cargo xtask core --record WHEEL` on the wheel it records",
    )?;
    let wheel = &surface.wheel;
    if !is_plain_release(&wheel.package, &wheel.version) {
        return Err(LoadError::new(
            format!("{}:1:1", path.display()),
            format!(
                "not a core record: its wheel {:?} {:?} is not a release a wheel can name",
                wheel.package, wheel.version
            ),
        ));
    }
    Ok(surface)
}

/// Reads a record (a `what` of `format`) as its type: a regular file within
/// [`MAX_RECORD_BYTES`], JSON naming each key once, of this build's format (checked first: an
/// older record lacks fields this build needs, and should say so), then its fields. Every
/// error is located; `rewrite` is the command that writes the record again.
pub fn load_json<T: serde::de::DeserializeOwned>(
    path: &Path,
    what: &str,
    format: u32,
    rewrite: &str,
) -> Result<T, LoadError> {
    let display = path.display().to_string();
    let text = input::read_text(path, MAX_RECORD_BYTES).map_err(|e| {
        LoadError::new(e.location(&display), format!("cannot read the {what}: {e}"))
    })?;
    let located = |e: serde_json::Error| {
        LoadError::new(
            format!("{display}:{}:{}", e.line(), e.column()),
            format!("not a {what}: {e}"),
        )
    };
    json::keys_once(&text).map_err(located)?;
    let value: serde_json::Value = serde_json::from_str(&text).map_err(located)?;
    let found = match value.get("format") {
        Some(f) if f.as_u64() == Some(u64::from(format)) => None,
        None => Some("no format".to_owned()),
        Some(serde_json::Value::String(s)) => {
            Some(format!("format {s:?} (a string, not a number)"))
        }
        Some(f @ serde_json::Value::Number(_)) => Some(format!("format {f}")),
        Some(f) => Some(format!("format {f} (not a number)")),
    };
    if let Some(found) = found {
        return Err(LoadError::new(
            format!("{display}:1:1"),
            format!("{what} of {found} (this build reads {format}): write it again with {rewrite}"),
        ));
    }
    serde_json::from_str(&text).map_err(located)
}

/// The first name in `surface` Python could not hold, and where: every module a dotted
/// name, every class, base, member, function, value and public name one of identifier form
/// ([`is_python_name`]). A real pybind11 core has no other; a hostile wheel can (a member
/// named with an escape sequence or a line break), and its record is refused, not written.
/// Free texts (overloads, errors, why a module was not read) are kept, and printed escaped.
pub fn misnamed(surface: &CoreSurface) -> Option<String> {
    let ok = |name: &str, dotted: bool| {
        if dotted {
            name.split('.').all(is_python_name)
        } else {
            is_python_name(name)
        }
    };
    names(surface)
        .into_iter()
        .find(|(_, name, dotted)| !ok(name, *dotted))
        .map(|(at, name, _)| format!("{at} '{}'", escape::text(name)))
}

/// Every name a record holds, in order, each with where it is (`mooncake.store: class X:
/// member`) and whether it is a dotted module name. A class's own name comes before its
/// members', so where a member's is told the class's is a plain name.
fn names(surface: &CoreSurface) -> Vec<(String, &str, bool)> {
    let mut all: Vec<(String, &str, bool)> = Vec::new();
    let modules = std::iter::once(&surface.core.module)
        .chain(surface.modules.keys())
        .chain(surface.extensions.keys())
        .chain(surface.python.keys());
    all.extend(modules.map(|m| ("module".to_owned(), m.as_str(), true)));
    let extensions = (surface.extensions.iter()).filter_map(|(m, r)| Some((m, r.read()?.into())));
    for (module, ns) in std::iter::once((&surface.core.module, surface.own())).chain(extensions) {
        for (name, class) in ns.classes {
            all.push((format!("{module}: class"), name, false));
            let at = |what: &str| format!("{module}: class {name}: {what}");
            all.extend(class.bases.iter().map(|b| (at("base"), b.as_str(), false)));
            all.extend(
                class
                    .members
                    .keys()
                    .map(|m| (at("member"), m.as_str(), false)),
            );
            if let Instance::Made { members, .. } = &class.instance {
                all.extend(
                    members
                        .keys()
                        .map(|m| (at("instance attribute"), m.as_str(), false)),
                );
            }
        }
        all.extend(
            ns.functions
                .keys()
                .map(|f| (format!("{module}: function"), f.as_str(), false)),
        );
        all.extend(
            ns.values
                .keys()
                .map(|v| (format!("{module}: value"), v.as_str(), false)),
        );
    }
    for (module, read) in &surface.python {
        let names = read.read().into_iter().flatten();
        all.extend(names.map(|n| (format!("{module}: public name"), n.as_str(), false)));
    }
    all
}

/// Writes the record of `surface` atomically; returns its path.
pub fn write(root: &Path, surface: &CoreSurface) -> std::io::Result<PathBuf> {
    let path = path(root, &surface.wheel.package, &surface.wheel.version);
    mooncake_sos_support::atomic::write_atomic(&path, surface.to_json().as_bytes())?;
    Ok(path)
}

/// How a record stands against a fresh reading of its wheel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Drift {
    Current,
    Missing,
    /// A unified diff from the record to the fresh reading.
    Differs(String),
}

pub fn drift(root: &Path, surface: &CoreSurface) -> Drift {
    let rel = relative_path(&surface.wheel.package, &surface.wheel.version);
    let fresh = surface.to_json();
    match input::read_text(&root.join(&rel), MAX_RECORD_BYTES) {
        Err(_) => Drift::Missing,
        Ok(old) if old == fresh => Drift::Current,
        Ok(old) => Drift::Differs(drift::unified_diff(&rel, &old, &fresh)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use mooncake_sos_manifest::core_record::{Access, Member, Read};

    fn recorded() -> CoreSurface {
        let root = mooncake_sos_testkit::repo_root();
        load(&path(
            &root,
            "mooncake-transfer-engine-cuda13",
            "0.3.12.post1",
        ))
        .unwrap()
    }

    #[test]
    fn every_committed_record_holds_python_names_only() {
        let dir = mooncake_sos_testkit::repo_root().join(DIR);
        for entry in std::fs::read_dir(dir).unwrap() {
            let path = entry.unwrap().path();
            assert_eq!(misnamed(&load(&path).unwrap()), None, "{}", path.display());
        }
    }

    #[test]
    fn a_name_python_could_not_write_is_found_where_it_is() {
        type Doctor = Box<dyn Fn(&mut CoreSurface)>;
        let cases: Vec<(Doctor, &str)> = vec![
            (
                Box::new(|s| {
                    let store = s.classes.get_mut("MooncakeDistributedStore").unwrap();
                    let method = Member::Method { overloads: vec![] };
                    store.members.insert("put\x1b[31m".into(), method);
                }),
                "mooncake.store: class MooncakeDistributedStore: member 'put\\x1b[31m'",
            ),
            (
                Box::new(|s| {
                    let class = s.classes.remove("ReplicateConfig").unwrap();
                    s.classes.insert("Re\nplicate".into(), class);
                }),
                "mooncake.store: class 'Re\\nplicate'",
            ),
            (
                Box::new(|s| {
                    let config = s.classes.get_mut("ReplicateConfig").unwrap();
                    let Instance::Made { members, .. } = &mut config.instance else {
                        panic!("made")
                    };
                    let access = Access {
                        read: true,
                        write: true,
                    };
                    members.insert("abc\u{202e}fed".into(), access);
                }),
                "mooncake.store: class ReplicateConfig: instance attribute 'abc\\u{202e}fed'",
            ),
            (
                Box::new(|s| {
                    s.modules.insert(
                        "mooncake.<img src=x>".into(),
                        mooncake_sos_manifest::core_record::ModuleKind::Python,
                    );
                }),
                "module 'mooncake.<img src=x>'",
            ),
            (
                Box::new(|s| {
                    let Some(Read::Read(engine)) = s.extensions.get_mut("mooncake.engine") else {
                        panic!("engine read")
                    };
                    let f = engine.functions.values().next().unwrap().clone();
                    engine.functions.insert("`tick`".into(), f);
                }),
                "mooncake.engine: function '`tick`'",
            ),
            (
                Box::new(|s| {
                    let names = s.python.values_mut().find_map(|r| match r {
                        Read::Read(names) => Some(names),
                        Read::Unread { .. } => None,
                    });
                    names.unwrap().push("# heading".into());
                }),
                ": public name '# heading'",
            ),
        ];
        for (doctor, says) in cases {
            let mut surface = recorded();
            doctor(&mut surface);
            let found = misnamed(&surface).expect("a bad name");
            assert!(found.ends_with(says), "{found:?} should end with {says:?}");
        }
        // A keyword is a name getattr reaches (a pybind11 enum's `None`).
        let mut surface = recorded();
        let config = surface.classes.get_mut("ReplicateConfig").unwrap();
        config.members.insert(
            "None".into(),
            Member::Value {
                r#type: "int".into(),
            },
        );
        assert_eq!(misnamed(&surface), None);
    }
}
