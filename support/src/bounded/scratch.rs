//! Scratch directories `<tmp>/mooncake-sos-<kind>-<pid>-<random>`: removed when dropped (every
//! return and error path); one left by a process that was killed is removed at the next start
//! of any command that makes one, once its owner's pid is gone.

use std::path::Path;
use std::sync::Once;

const PREFIX: &str = "mooncake-sos-";

/// A fresh scratch directory for `kind` (letters only: `core`, `smoke`, `pip`), after
/// sweeping stale ones (once per process).
pub fn scratch(kind: &str) -> std::io::Result<tempfile::TempDir> {
    static SWEPT: Once = Once::new();
    SWEPT.call_once(|| {
        sweep_stale(&std::env::temp_dir());
    });
    tempfile::Builder::new()
        .prefix(&format!("{PREFIX}{kind}-{}-", std::process::id()))
        .tempdir()
}

/// Removes the scratch directories in `dir` whose owning process is dead; returns how many.
pub fn sweep_stale(dir: &Path) -> usize {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return 0;
    };
    let mut removed = 0;
    for entry in entries.filter_map(|e| e.ok()) {
        let name = entry.file_name();
        let Some(owner) = name.to_str().and_then(owner_pid) else {
            continue;
        };
        let is_dir = entry.file_type().is_ok_and(|t| t.is_dir());
        if is_dir && !alive(owner) && std::fs::remove_dir_all(entry.path()).is_ok() {
            removed += 1;
        }
    }
    removed
}

/// The pid in `mooncake-sos-<kind>-<pid>-<random>`.
fn owner_pid(name: &str) -> Option<libc::pid_t> {
    let mut parts = name.strip_prefix(PREFIX)?.split('-');
    let kind = parts.next()?;
    let pid = parts.next()?;
    let random = parts.next()?;
    let well_formed = parts.next().is_none()
        && !kind.is_empty()
        && kind.bytes().all(|b| b.is_ascii_alphabetic())
        && !random.is_empty();
    well_formed.then(|| pid.parse().ok()).flatten()
}

/// Whether `pid` names a process (one of another user counts as alive: EPERM).
fn alive(pid: libc::pid_t) -> bool {
    if pid <= 0 {
        return true;
    }
    // SAFETY: kill(2) with signal 0 only checks that the process exists.
    let found = unsafe { libc::kill(pid, 0) } == 0;
    found || std::io::Error::last_os_error().raw_os_error() != Some(libc::ESRCH)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_dirs_of_dead_owners_in_the_exact_form_are_swept() {
        let tmp = tempfile::tempdir().unwrap();
        // A pid that is not running: a child that has been reaped.
        let mut child = std::process::Command::new("true").spawn().unwrap();
        child.wait().unwrap();
        let dead = child.id();
        let me = std::process::id();
        let names = [
            format!("mooncake-sos-pip-{dead}-abc123"),
            format!("mooncake-sos-core-{me}-abc123"),
            "mooncake-sos-pip-abc123".to_owned(),
            format!("mooncake-sos-pip-{dead}"),
            format!("other-pip-{dead}-abc123"),
        ];
        for n in &names {
            std::fs::create_dir(tmp.path().join(n)).unwrap();
            std::fs::write(tmp.path().join(n).join("f"), b"x").unwrap();
        }
        assert_eq!(sweep_stale(tmp.path()), 1);
        let mut left: Vec<String> = std::fs::read_dir(tmp.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        left.sort();
        let mut want = names[1..].to_vec();
        want.sort();
        assert_eq!(left, want);
    }
}
