//! Release verdicts kept by the hash of everything they depend on, so that a warm run costs a
//! lookup per unchanged release. The key covers the wheel (its sha256 and name), api.toml's
//! text, every image side a release is checked against (the core records as loaded), the
//! baseline module, how cores and smokes are run, and the tool itself (the running
//! executable's size and mtime, and [`FORMAT`]): a change to any of them misses. An entry is
//! served only as this tool wrote it for that key ([`kept`]): one edited by hand is checked
//! again.

use super::index::Wheel;
use super::release::{CoreVerdict, ReleaseReport};
use mooncake_sos_pysource::source::{LoadError, sha256_hex};
use mooncake_sos_support::kept;
use std::path::PathBuf;

/// Bumped when what a verdict holds or how it is keyed changes.
const FORMAT: &str = "watch-verdict-2";

/// The largest verdict read (a few KB each).
const MAX_VERDICT_BYTES: u64 = 4 << 20;

/// Everything a run's verdicts depend on besides the wheel, each as text.
pub struct Inputs<'a> {
    /// api.toml's text.
    pub manifest: &'a str,
    /// What the releases' modules are compared with: its label and its sha256.
    pub baseline: &'a str,
    pub baseline_sha256: &'a str,
    /// Every image side a release is checked against (the core records as loaded).
    pub sides: &'a str,
    /// The pin images' recorded users, as loaded.
    pub users: &'a str,
    /// How cores are read, how smokes run (or "no smoke").
    pub reader: &'a str,
    pub smoke: &'a str,
    /// The running tool ([`tool_identity`], outside tests).
    pub tool: &'a str,
}

/// What one run's verdicts depend on besides the wheel; built once per run.
pub struct Verdicts {
    /// `<cache>/verdicts`; `None`: nothing is kept.
    dir: Option<PathBuf>,
    /// sha256 of the run's inputs (every part but the wheel).
    context: String,
}

impl Verdicts {
    pub fn new(dir: Option<PathBuf>, inputs: &Inputs) -> Verdicts {
        let parts = [
            inputs.manifest,
            inputs.baseline,
            inputs.baseline_sha256,
            inputs.sides,
            inputs.users,
            inputs.reader,
            inputs.smoke,
            inputs.tool,
        ];
        // Each part length-prefixed: no two different lists hash alike.
        let mut text = format!("{FORMAT}\0");
        for part in parts {
            text.push_str(&format!("{}:{part}\0", part.len()));
        }
        Verdicts {
            dir,
            context: sha256_hex(text.as_bytes()),
        }
    }

    /// The verdict's key (every input, the wheel's too) and where it is kept.
    fn entry(&self, wheel: &Wheel) -> Option<(String, PathBuf)> {
        let key = sha256_hex(
            format!(
                "{}\0{}\0{}\0{}\0{}",
                self.context, wheel.package, wheel.version, wheel.file, wheel.sha256
            )
            .as_bytes(),
        );
        let path = self.dir.as_ref()?.join(format!("{key}.json"));
        Some((key, path))
    }

    /// The verdict an earlier run reached on the same inputs, as it wrote it.
    pub fn get(&self, wheel: &Wheel) -> Result<Option<ReleaseReport>, LoadError> {
        let Some((key, path)) = self.entry(wheel) else {
            return Ok(None);
        };
        let text = kept::read_text(&path, &key, MAX_VERDICT_BYTES).map_err(|e| {
            let display = path.display().to_string();
            LoadError::new(
                e.location(&display),
                format!("cannot read the kept verdict: {e}"),
            )
        })?;
        Ok(text.and_then(|t| serde_json::from_str(&t).ok()))
    }

    /// Keeps a verdict, unless it rests on something that may pass (a core that could not be
    /// read here is read again next run, as without this cache).
    pub fn put(&self, wheel: &Wheel, report: &ReleaseReport) {
        let unread_core = report.carries_api && matches!(report.core, CoreVerdict::Unknown { .. });
        let Some((key, path)) = self.entry(wheel).filter(|_| !unread_core) else {
            return;
        };
        if let Ok(json) = serde_json::to_string(report) {
            // A cache that cannot be written costs the next run time, not this one's result.
            let _ = kept::write(&path, &key, json.as_bytes());
        }
    }
}

/// The running executable's path, size and mtime: a rebuilt tool does not read the verdicts
/// of the one before. Unknown (no verdict reused across runs) when it cannot be had.
pub fn tool_identity() -> String {
    let exe = std::env::current_exe().ok();
    let meta = exe.as_ref().and_then(|e| std::fs::metadata(e).ok());
    let mtime = meta
        .as_ref()
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok());
    match (exe, meta, mtime) {
        (Some(exe), Some(meta), Some(mtime)) => format!(
            "{} {} {}.{:09}",
            exe.display(),
            meta.len(),
            mtime.as_secs(),
            mtime.subsec_nanos()
        ),
        // A key no other run has: the verdicts are computed afresh.
        _ => format!("unknown {:?}", std::time::SystemTime::now()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::release::CoreVerdict;
    use crate::smoke::Smoke;

    fn wheel() -> Wheel {
        Wheel {
            package: "p".into(),
            version: "1.0".into(),
            file: "p-1.0-py3-none-any.whl".into(),
            sha256: "ab".repeat(32),
            size: 10,
            url: None,
            path: PathBuf::new(),
            downloaded: false,
        }
    }

    fn report(w: &Wheel) -> ReleaseReport {
        ReleaseReport {
            package: w.package.clone(),
            version: w.version.clone(),
            wheel: w.file.clone(),
            wheel_sha256: w.sha256.clone(),
            module_sha256: None,
            carries_api: false,
            api_mismatches: vec!["m.py:1: missing".into()],
            undeclared_uses: Vec::new(),
            core: CoreVerdict::Unknown {
                reason: "not asked".into(),
            },
            user_misses: Vec::new(),
            layers: Vec::new(),
            changes: Vec::new(),
            smoke: Smoke::NotRun {
                reason: "not asked".into(),
            },
        }
    }

    const INPUTS: Inputs<'static> = Inputs {
        manifest: "api",
        baseline: "baseline",
        baseline_sha256: "00",
        sides: "sides",
        users: "users",
        reader: "reader",
        smoke: "no smoke",
        tool: "tool",
    };

    /// A kept verdict is served for the same inputs only: a change to any one part of the
    /// key, or to the wheel, misses.
    #[test]
    fn a_change_to_any_key_part_misses() {
        let dir = tempfile::tempdir().unwrap();
        let at = || Some(dir.path().to_path_buf());
        let w = wheel();
        Verdicts::new(at(), &INPUTS).put(&w, &report(&w));
        let served = |inputs: &Inputs, w: &Wheel| Verdicts::new(at(), inputs).get(w).unwrap();
        assert_eq!(
            served(&INPUTS, &w).map(|r| r.api_mismatches),
            Some(vec!["m.py:1: missing".to_owned()])
        );
        let changed: [(&str, Inputs); 8] = [
            (
                "manifest",
                Inputs {
                    manifest: "api ",
                    ..INPUTS
                },
            ),
            (
                "baseline",
                Inputs {
                    baseline: "other",
                    ..INPUTS
                },
            ),
            (
                "baseline sha256",
                Inputs {
                    baseline_sha256: "01",
                    ..INPUTS
                },
            ),
            (
                "sides",
                Inputs {
                    sides: "sides'",
                    ..INPUTS
                },
            ),
            (
                "users",
                Inputs {
                    users: "users'",
                    ..INPUTS
                },
            ),
            (
                "reader",
                Inputs {
                    reader: "reader'",
                    ..INPUTS
                },
            ),
            (
                "smoke",
                Inputs {
                    smoke: "smoke",
                    ..INPUTS
                },
            ),
            (
                "tool",
                Inputs {
                    tool: "tool'",
                    ..INPUTS
                },
            ),
        ];
        for (part, inputs) in changed {
            assert!(served(&inputs, &w).is_none(), "{part}");
        }
        let wheels = [
            (
                "sha256",
                Wheel {
                    sha256: "cd".repeat(32),
                    ..wheel()
                },
            ),
            (
                "file",
                Wheel {
                    file: "p-1.0-1-py3-none-any.whl".into(),
                    ..wheel()
                },
            ),
            (
                "version",
                Wheel {
                    version: "1.0.post1".into(),
                    ..wheel()
                },
            ),
            (
                "package",
                Wheel {
                    package: "q".into(),
                    ..wheel()
                },
            ),
        ];
        for (part, other) in wheels {
            assert!(served(&INPUTS, &other).is_none(), "wheel {part}");
        }
        // Moved around the parts (a part's text sliding into the next): another key.
        let shifted = Inputs {
            manifest: "apib",
            baseline: "aseline",
            ..INPUTS
        };
        assert!(served(&shifted, &w).is_none());
    }

    /// A verdict edited by hand is not served; one that is not a file is an error.
    #[test]
    fn an_edited_verdict_is_not_served() {
        let dir = tempfile::tempdir().unwrap();
        let verdicts = Verdicts::new(Some(dir.path().to_path_buf()), &INPUTS);
        let w = wheel();
        verdicts.put(&w, &report(&w));
        let (_, path) = verdicts.entry(&w).unwrap();
        let text = std::fs::read_to_string(&path).unwrap();
        std::fs::write(&path, text.replace("m.py:1: missing", "m.py:1: fine")).unwrap();
        assert!(verdicts.get(&w).unwrap().is_none());
        std::fs::remove_file(&path).unwrap();
        std::fs::create_dir(&path).unwrap();
        let e = verdicts.get(&w).unwrap_err();
        assert_eq!(e.location, path.display().to_string());
        assert_eq!(
            e.message,
            "cannot read the kept verdict: is a directory, not a regular file"
        );
    }
}
