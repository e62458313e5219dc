//! Children never outlive their command: a `watch` killed with SIGKILL while its pip waits on
//! a wheel the index never sends leaves no pip running, and the scratch directory it could
//! not remove goes at the next start, with every other one whose owner is dead; one whose
//! owner lives stays.

use crate::common::{Sandbox, XTASK, wait_for};
use std::io::{BufRead, BufReader, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::{Child, Command, Stdio};

/// An index on loopback whose pages list one wheel of each package api.toml's images name,
/// and which never answers a request for a file (held open while the listener lives); any
/// other path is a 404 (the pinned module's download).
fn index_that_never_sends_a_wheel() -> String {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}/simple/", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut conn in listener.incoming().take(256).filter_map(Result::ok) {
            let mut request = String::new();
            let _ = BufReader::new(&conn).read_line(&mut request);
            let path = request.split_whitespace().nth(1).unwrap_or("").to_owned();
            if path.starts_with("/files/") {
                held.push(conn);
                continue;
            }
            let page = ["cuda13", "non-cuda"].iter().find_map(|flavour| {
                let package = format!("mooncake-transfer-engine-{flavour}");
                (path == format!("/simple/{package}/")).then(|| {
                    let file = format!(
                        "{}-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl",
                        package.replace('-', "_")
                    );
                    let sha256 = "0".repeat(64);
                    format!("<html><body><a href=\"../../files/{file}#sha256={sha256}\">{file}</a></body></html>\n")
                })
            });
            let (status, body) = match page {
                Some(page) => ("200 OK", page),
                None => ("404 Not Found", "not found\n".to_owned()),
            };
            let _ = write!(
                conn,
                "HTTP/1.1 {status}\r\nContent-Type: text/html\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
                body.len()
            );
        }
    });
    url
}

/// Pids of live pip processes downloading from `url`. With an index URL, pip runs under the
/// redirect guard (`python3 -c GUARD URL LOG ARGS...`, watch's `links::PIP_GUARD_PY`): its
/// command line holds pip's arguments but not `pip` itself.
fn pips_from(url: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().filter_map(|e| e.ok()) {
        let pid = entry.file_name().to_string_lossy().into_owned();
        if !pid.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        let zombie = stat
            .rsplit_once(") ")
            .is_some_and(|(_, r)| r.starts_with('Z'));
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        let args: Vec<&[u8]> = cmdline.split(|&b| b == 0).collect();
        let has = |word: &str| args.contains(&word.as_bytes());
        let index = args
            .windows(2)
            .any(|w| w == [b"--index-url".as_slice(), url.as_bytes()]);
        if !zombie && has("--disable-pip-version-check") && has("download") && index {
            found.push(pid);
        }
    }
    found
}

/// The names in `tmp`, sorted.
fn names_in(tmp: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(tmp)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// The scratch directory of the process `pid` in `tmp`, once there is one.
fn scratch_of(tmp: &Path, pid: u32) -> String {
    let prefix = format!("mooncake-sos-pip-{pid}-");
    wait_for(&format!("no {prefix}* in {}", tmp.display()), 60, || {
        names_in(tmp).into_iter().find(|n| n.starts_with(&prefix))
    })
}

#[test]
fn a_killed_watch_leaves_no_pip_and_its_scratch_goes_at_the_next_start() {
    let url = index_that_never_sends_a_wheel();
    let base = url.trim_end_matches("/simple/");
    let tmp = tempfile::tempdir().unwrap();
    let cache = tempfile::tempdir().unwrap();
    let sandbox = Sandbox::new();
    let watch = || -> Child {
        Command::new(XTASK)
            .arg("watch")
            .arg("--manifest")
            .arg(sandbox.manifest())
            .arg("--watch-cache")
            .arg(cache.path())
            .args(["--index-url", &url, "--raw-base-url", base])
            .env("TMPDIR", tmp.path())
            .current_dir(sandbox.root())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap()
    };
    let mut first = watch();
    let killed = scratch_of(tmp.path(), first.id());
    let pips = wait_for("no pip waiting on the index", 60, || {
        Some(pips_from(&url)).filter(|p| !p.is_empty())
    });
    first.kill().unwrap();
    first.wait().unwrap();
    wait_for(
        &format!("pip {pips:?} outlived the killed watch"),
        30,
        || pips_from(&url).is_empty().then_some(()),
    );
    // Killed, it could not remove its scratch directory.
    assert_eq!(names_in(tmp.path()), std::slice::from_ref(&killed));

    // Beside it: another dead owner's, a live owner's (this test's), and a name of another form.
    let mut reaped = Command::new("true").spawn().unwrap();
    reaped.wait().unwrap();
    let dead = format!("mooncake-sos-core-{}-a1b2c3", reaped.id());
    let live = format!("mooncake-sos-core-{}-a1b2c3", std::process::id());
    let other = "mooncake-sos-core-a1b2c3".to_owned();
    for name in [&dead, &live, &other] {
        std::fs::create_dir(tmp.path().join(name)).unwrap();
        std::fs::write(tmp.path().join(name).join("f"), b"x").unwrap();
    }

    // The next start sweeps as it starts, then makes its own scratch directory.
    let mut next = watch();
    let own = scratch_of(tmp.path(), next.id());
    let mut left = vec![own, live, other];
    left.sort();
    assert_eq!(names_in(tmp.path()), left, "swept: {killed} and {dead}");
    next.kill().unwrap();
    next.wait().unwrap();
}
