//! Release verdicts kept by the hash of everything they depend on, so that a warm run costs a
//! lookup per unchanged release. The key covers the wheel (its sha256 and name), api.toml's
//! text, every image side a release is checked against (the core records as loaded), the
//! baseline module, how cores and smokes are run, and the tool itself (the running
//! executable's size and mtime, and [`FORMAT`]): a change to any of them misses.

use super::index::Wheel;
use super::release::{CoreVerdict, ReleaseReport};
use mooncake_sos_pysource::source::sha256_hex;
use std::path::PathBuf;

/// Bumped when what a verdict holds or how it is keyed changes.
const FORMAT: &str = "watch-verdict-1";

/// What one run's verdicts depend on besides the wheel; built once per run.
pub struct Verdicts {
    /// `<cache>/verdicts`; `None`: nothing is kept.
    dir: Option<PathBuf>,
    /// sha256 of the run's inputs (every part but the wheel).
    context: String,
}

impl Verdicts {
    /// `parts`: the run's inputs as text, in a fixed order (each is length-prefixed, so no
    /// two different lists hash alike).
    pub fn new(dir: Option<PathBuf>, parts: &[&str]) -> Verdicts {
        let mut text = format!("{FORMAT}\0{}\0", tool_identity());
        for part in parts {
            text.push_str(&format!("{}:{part}\0", part.len()));
        }
        Verdicts {
            dir,
            context: sha256_hex(text.as_bytes()),
        }
    }

    fn path(&self, wheel: &Wheel) -> Option<PathBuf> {
        let key = sha256_hex(
            format!(
                "{}\0{}\0{}\0{}\0{}",
                self.context, wheel.package, wheel.version, wheel.file, wheel.sha256
            )
            .as_bytes(),
        );
        Some(self.dir.as_ref()?.join(format!("{key}.json")))
    }

    /// The verdict an earlier run reached on the same inputs.
    pub fn get(&self, wheel: &Wheel) -> Option<ReleaseReport> {
        let text = std::fs::read_to_string(self.path(wheel)?).ok()?;
        let report: ReleaseReport = serde_json::from_str(&text).ok()?;
        (report.package == wheel.package
            && report.version == wheel.version
            && report.wheel == wheel.file
            && report.wheel_sha256 == wheel.sha256)
            .then_some(report)
    }

    /// Keeps a verdict, unless it rests on something that may pass (a core that could not be
    /// read here is read again next run, as without this cache).
    pub fn put(&self, wheel: &Wheel, report: &ReleaseReport) {
        let unread_core = report.carries_api && matches!(report.core, CoreVerdict::Unknown { .. });
        let Some(path) = self.path(wheel).filter(|_| !unread_core) else {
            return;
        };
        if let Ok(json) = serde_json::to_string(report) {
            // A cache that cannot be written costs the next run time, not this one's result.
            let _ = mooncake_sos_contract::atomic::write_atomic(&path, json.as_bytes());
        }
    }
}

/// The running executable's path, size and mtime: a rebuilt tool does not read the verdicts
/// of the one before. Unknown (no verdict reused across runs) when it cannot be had.
fn tool_identity() -> String {
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
