//! Progress on stderr: a live bar when stderr is a terminal (here a pseudo-terminal made by
//! util-linux `script`), one plain line per step otherwise, nothing with `--quiet` (on a
//! terminal or not), which silences progress only: a warning or an error still shows. stdout
//! is the same bytes in every case.

use super::watch::{CUDA13, NON_CUDA, command, online, pinned_sandbox, upstream};
use crate::common::cores::cuda13_libs;
use crate::common::{Run, XTASK};
use std::path::Path;
use std::process::Command;

/// A private copy of the online run's cache (other tests change theirs while this runs),
/// removed when the test ends.
fn cache() -> tempfile::TempDir {
    let dir = tempfile::tempdir().unwrap();
    let copy = Command::new("cp")
        .arg("-a")
        .arg(format!("{}/.", online().cache.path().display()))
        .arg(dir.path())
        .status()
        .expect("cp");
    assert!(copy.success());
    dir
}

/// `watch --offline EXTRA` over a copy of the online run's cache, stderr on a
/// pseudo-terminal; stdout goes to a file (the terminal would mix the two).
fn on_a_terminal(cache: &Path, extra: &[&str]) -> (String, String) {
    let online = online();
    let out = tempfile::NamedTempFile::new().unwrap();
    let manifest = online.sandbox.manifest();
    let libs = cuda13_libs();
    let mut words = vec![
        XTASK,
        "watch",
        "--manifest",
        manifest.to_str().unwrap(),
        "--watch-cache",
        cache.to_str().unwrap(),
        "--lib-dir",
        &libs,
        "--raw-base-url",
        &upstream().base_url,
        "--offline",
        "--index-url",
        &online.url,
    ];
    words.extend(extra);
    let quoted: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    let shell = format!("{} > '{}'", quoted.join(" "), out.path().display());
    let tty = Command::new("script")
        .args(["-qec", &shell, "/dev/null"])
        .env("TERM", "xterm")
        .current_dir(online.sandbox.root())
        .output()
        .expect("run script(1)");
    let terminal = String::from_utf8_lossy(&tty.stdout).into_owned();
    (std::fs::read_to_string(out.path()).unwrap(), terminal)
}

fn offline(cache: &Path, extra: &[&str]) -> Run {
    let online = online();
    let mut args = vec!["--offline", "--index-url", &online.url];
    args.extend(extra);
    command("watch", &online.sandbox, cache, &args)
}

/// Every step of a run over the online run's cache, one line each, sorted (listings and
/// checks run in parallel, in any order): each package listed, each release's wheel fetched
/// (from the cache) and checked.
fn steps() -> Vec<String> {
    let releases = [
        (CUDA13, ["0.3.11.post1", "0.3.12.post1", "0.3.14"]),
        (NON_CUDA, ["0.3.11.post1", "0.3.12.post1", "0.3.13.post1"]),
    ];
    let mut lines = Vec::new();
    for (package, versions) in releases {
        lines.push(format!("watch: listing {package}"));
        for v in versions {
            lines.push(format!(
                "watch: {package} {v}: the wheel (cache or download)"
            ));
            lines.push(format!("watch: {package} {v}: checking"));
        }
    }
    lines.sort();
    lines
}

fn sorted_lines(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_owned).collect();
    lines.sort();
    lines
}

#[test]
fn a_terminal_sees_a_bar_a_log_sees_lines_and_quiet_sees_neither() {
    let cache = cache();
    let plain = offline(cache.path(), &[]);
    assert_eq!(plain.code, Some(1), "{plain:?}");
    assert_eq!(sorted_lines(&plain.stderr), steps(), "{plain:?}");

    let quiet = offline(cache.path(), &["--quiet"]);
    assert_eq!(quiet.code, Some(1), "{quiet:?}");
    assert_eq!(quiet.stderr, "", "{quiet:?}");
    assert_eq!(quiet.stdout, plain.stdout, "stdout with --quiet = without");

    let (stdout, terminal) = on_a_terminal(cache.path(), &[]);
    // indicatif draws the bar with carriage returns / cursor moves, and our template's `[`.
    assert!(
        terminal.contains("watch [") && (terminal.contains('\r') || terminal.contains("\x1b[")),
        "no bar on the terminal: {terminal:?}"
    );
    assert!(
        !terminal.contains("watch: "),
        "plain lines on a terminal: {terminal:?}"
    );
    assert_eq!(
        stdout, plain.stdout,
        "stdout on a terminal = stdout in a log"
    );

    let (stdout, terminal) = on_a_terminal(cache.path(), &["--quiet"]);
    assert_eq!(terminal, "", "--quiet drew on the terminal");
    assert_eq!(stdout, plain.stdout, "stdout on a terminal with --quiet");
}

#[test]
fn quiet_silences_progress_not_a_warning_nor_an_error() {
    let cache = cache();
    // A sandbox whose pinned module was never downloaded: offline, a warning says so.
    let sandbox = pinned_sandbox();
    let online = online();
    let args = ["--offline", "--quiet", "--index-url", online.url.as_str()];
    let run = command("watch", &sandbox, cache.path(), &args);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stderr, "watch: the pinned module: not in the cache\n",
        "{run:?}"
    );
    // An empty cache: offline, the error.
    let empty = tempfile::tempdir().unwrap();
    let run = command("watch", &sandbox, empty.path(), &args);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(
        run.stderr,
        "watch: the pinned module: not in the cache\n\
         mooncake-transfer-engine-cuda13: error: --offline: the cache has no listing of this \
         package; run watch online once\n",
        "{run:?}"
    );
    assert_eq!(run.stdout, "");
}
