//! Progress on stderr: a live bar when stderr is a terminal (here a pseudo-terminal made by
//! util-linux `script`), one plain line per step otherwise, nothing with `--quiet`; stdout is
//! the same bytes in all three.

use super::watch::{command, online};
use crate::common::cores::cuda13_libs;
use crate::common::{Run, XTASK, lines_where};
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

/// `watch --offline` over a copy of the online run's cache, stderr on a pseudo-terminal;
/// stdout goes to a file (the terminal would mix the two).
fn on_a_terminal(cache: &Path) -> (String, String) {
    let online = online();
    let out = tempfile::NamedTempFile::new().unwrap();
    let manifest = online.sandbox.manifest();
    let libs = cuda13_libs();
    let words = [
        XTASK,
        "watch",
        "--manifest",
        manifest.to_str().unwrap(),
        "--watch-cache",
        cache.to_str().unwrap(),
        "--lib-dir",
        &libs,
        "--offline",
        "--index-url",
        &online.url,
    ];
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

#[test]
fn a_terminal_sees_a_bar_a_log_sees_lines_and_stdout_is_the_same() {
    let cache = cache();
    let plain = offline(cache.path(), &[]);
    let steps = lines_where(&plain.stderr, |l| l.starts_with("watch: "));
    assert!(
        steps.contains(&"watch: listing mooncake-transfer-engine-cuda13")
            && steps.contains(&"watch: mooncake-transfer-engine-cuda13 0.3.12.post1: checking"),
        "{plain:?}"
    );
    let quiet = offline(cache.path(), &["--quiet"]);
    assert!(
        !quiet
            .stderr
            .lines()
            .any(|l| l.starts_with("watch: listing")),
        "{quiet:?}"
    );
    let (stdout, terminal) = on_a_terminal(cache.path());
    // indicatif draws the bar with carriage returns / cursor moves, and our template's `[`.
    assert!(
        terminal.contains("watch [") && (terminal.contains('\r') || terminal.contains("\x1b[")),
        "no bar on the terminal: {terminal:?}"
    );
    assert!(
        !terminal.contains("watch: listing"),
        "plain lines on a terminal: {terminal:?}"
    );
    assert_eq!(
        stdout, plain.stdout,
        "stdout on a terminal = stdout in a log"
    );
    assert_eq!(quiet.stdout, plain.stdout, "stdout with --quiet = without");
}
