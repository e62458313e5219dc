//! The wheel's code runs isolated: a core whose package's `__init__.py` writes outside its
//! directory and connects to the host does neither under `core`, and the output names the
//! isolation; `--unisolated` (the flag the refusal names) runs it on the host, where both
//! happen, so the test can tell.

use crate::common::cores::{compile_shared, make_wheel};
use crate::common::xtask;
use std::io::Read;
use std::net::TcpListener;
use std::time::Duration;

const ISOLATED: &str = "the wheels' code runs isolated in Linux namespaces (unshare: no network, \
                        read-only file system but its scratch directory, clean environment)\n";

/// (what the files outside say: the test's directory, then the caller's HOME; what the
/// connection sent) after `core` read the hostile wheel.
type Effects = (Option<String>, Option<String>, Option<String>);

fn hostile_read(extra: &[&str]) -> (Effects, crate::common::Run) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let outside = dir.path().join("written-by-the-wheel");
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let init = format!(
        "import os, pathlib, socket\n\
         for target in [{outside:?}, os.path.expanduser('~/.written-by-the-wheel')]:\n\
         \x20   try: pathlib.Path(target).write_text('pwned')\n\
         \x20   except OSError: pass\n\
         try: socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')\n\
         except OSError: pass\n"
    );
    let so = compile_shared(
        dir.path(),
        "store",
        "void *PyInit_store(void) { return 0; }\n",
    );
    let whl = make_wheel(
        dir.path(),
        "mooncake-hostile",
        "1.0",
        &[
            ("mooncake/__init__.py", init.as_bytes()),
            ("mooncake/store.cpython-311-x86_64-linux-gnu.so", &so),
        ],
    );
    let mut args = vec!["core", "--no-cache", whl.to_str().unwrap()];
    args.extend(extra);
    let run = xtask(&args, &[("HOME", home.to_str().unwrap())]);
    let written = std::fs::read_to_string(&outside).ok();
    let in_home = std::fs::read_to_string(home.join(".written-by-the-wheel")).ok();
    let mut sent = None;
    if let Ok((mut stream, _)) = listener.accept() {
        stream
            .set_read_timeout(Some(Duration::from_secs(2)))
            .unwrap();
        let mut got = String::new();
        let _ = stream.read_to_string(&mut got);
        sent = Some(got);
    }
    ((written, in_home, sent), run)
}

#[test]
fn a_wheel_that_writes_outside_and_connects_out_does_neither_and_the_output_says_why() {
    let (effects, run) = hostile_read(&[]);
    assert_eq!(effects, (None, None, None), "{run:?}");
    // Its core does not import (PyInit returns NULL): refused, after saying how it ran.
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.starts_with(ISOLATED), "{run:?}");

    // The same wheel unisolated does all three: what the isolation stops is real.
    let (effects, run) = hostile_read(&["--unisolated"]);
    let pwned = Some("pwned".to_owned());
    assert_eq!(effects, (pwned.clone(), pwned.clone(), pwned), "{run:?}");
    assert!(
        run.stderr
            .starts_with("the wheels' code runs on this host, unisolated (--unisolated)\n"),
        "{run:?}"
    );
}

#[test]
fn with_no_isolation_working_the_read_refuses_naming_the_flag() {
    // No `unshare` on PATH (the interpreter given by its path): nothing isolates, and the
    // wheel's code does not run.
    let (dir, whl, python) = (
        tempfile::tempdir().unwrap(),
        mooncake_sos_testkit::wheel("0.3.12.post1")
            .display()
            .to_string(),
        std::env::var("MC_TEST_PYTHON").unwrap(),
    );
    let path = dir.path().to_str().unwrap();
    let args = ["core", "--no-cache", "--core-python", &python, &whl];
    let run = xtask(&args, &[("PATH", path)]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert_eq!(
        run.stderr,
        format!(
            "{whl}: error: the wheels' code runs isolated, and no isolation works here: \
             `unshare` (Linux namespaces) failed: cannot run it: No such file or directory (os \
             error 2); --unisolated runs it on this host instead\n"
        )
    );
    // Commands that run no wheel code need no isolation.
    let run = xtask(&["core", "--images"], &[("PATH", path)]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn a_link_to_another_host_on_the_index_page_is_refused_with_its_url() {
    use crate::common::cores::cuda13_wheel;
    use crate::common::{Run, Sandbox, XTASK};
    let wheels = [
        cuda13_wheel("0.3.12.post1"),
        mooncake_sos_testkit::wheel("0.3.12.post1"),
    ];
    let mut files = Vec::new();
    let mut foreign = Vec::new();
    for wheel in &wheels {
        let name = wheel.file_name().unwrap().to_str().unwrap().to_owned();
        let project = name.split('-').next().unwrap().replace('_', "-");
        let link = format!("http://198.51.100.7/files/{name}");
        let page = format!(
            "<html><body><a href=\"{link}#sha256={}\">{name}</a></body></html>\n",
            "0".repeat(64)
        );
        files.push((format!("/simple/{project}/"), page.into_bytes()));
        foreign.push(link);
    }
    let server = mooncake_sos_testkit::FileServer::start(files);
    let url = format!("{}/simple/", server.base_url);
    let sandbox = Sandbox::new();
    let cache = tempfile::tempdir().unwrap();
    let run = Run::from(
        std::process::Command::new(XTASK)
            .arg("watch")
            .arg("--manifest")
            .arg(sandbox.manifest())
            .arg("--watch-cache")
            .arg(cache.path())
            .args(["--index-url", &url, "--raw-base-url", &server.base_url])
            .current_dir(sandbox.root())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    let refused = foreign.iter().any(|link| {
        run.stderr.contains(&format!(
            "/simple/{}/: error: links to another host: {link}; downloads come only from the \
             index's own host\n",
            link.rsplit('/')
                .next()
                .unwrap()
                .split('-')
                .next()
                .unwrap()
                .replace('_', "-")
        ))
    });
    assert!(refused, "{:?} {foreign:?}", run.stderr);
    assert!(
        server.requests().iter().all(|r| !r.contains("/files/")),
        "{:?}",
        server.requests()
    );
}
