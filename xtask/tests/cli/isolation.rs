//! The wheel's code runs in a sandbox that holds only what it needs: a core whose package's
//! `__init__.py` tries the host (writes outside, the caller's HOME, a TCP listener on the
//! host's loopback, a Unix socket a host process listens on, a root-only file, /etc/shadow,
//! the Docker socket, /run, the host's /tmp, the host's processes) gets nowhere, and says so
//! in the error it raises, which proves it ran; `--unisolated` (the flag the refusal names)
//! runs it on the host, where it reaches all of it, so the test can tell. A wheel that forges a
//! surface on every descriptor it can reach is not recorded.

use crate::common::cores::{compile_shared, make_wheel};
use crate::common::xtask;
use std::io::Read;
use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::Path;
use std::time::Duration;

const ISOLATED: &str = "the wheels' code runs in a bubblewrap sandbox (read-only interpreter, \
                        venv and libraries, empty /tmp, loopback only, no capabilities, clean \
                        environment, nothing else of the host)\n";

/// What the hostile `__init__.py` tries, each a Python expression; it reports `name=OK` or
/// `name=<errno name, else exception class>` for each, then fails the import with the report.
fn attempts(dir: &Path, home: &Path, port: u16) -> Vec<(&'static str, String)> {
    let d = dir.display();
    let h = home.display();
    vec![
        (
            "out",
            format!("open('{d}/written-by-the-wheel', 'w').write('pwned')"),
        ),
        (
            "home",
            format!("open('{h}/.written-by-the-wheel', 'w').write('pwned')"),
        ),
        (
            "tcp",
            format!("socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'pwned')"),
        ),
        ("unix", format!("unix('{d}/host.sock')")),
        ("key", format!("steal('{d}/root-only')")),
        ("shadow", "steal('/etc/shadow')".into()),
        ("docker", "unix('/var/run/docker.sock')".into()),
        ("run", "os.listdir('/run')".into()),
        ("tmp", format!("os.listdir('{d}')")),
        ("procs", "few_procs()".into()),
    ]
}

fn hostile_init(dir: &Path, home: &Path, port: u16) -> String {
    let mut init = String::from(
        "import errno, os, socket\n\
         said = []\n\
         def unix(path):\n\
         \x20   s = socket.socket(socket.AF_UNIX)\n\
         \x20   s.settimeout(2)\n\
         \x20   s.connect(path)\n\
         \x20   s.sendall(b'pwned')\n\
         def steal(path):\n\
         \x20   said.append('stolen:' + open(path).read().split()[0][:12])\n\
         def few_procs():\n\
         \x20   seen = [p for p in os.listdir('/proc') if p.isdigit()]\n\
         \x20   if len(seen) > 8: raise LookupError(len(seen))\n\
         report = []\n",
    );
    for (name, expr) in attempts(dir, home, port) {
        init.push_str(&format!(
            "try:\n    {expr}\n    report.append('{name}=OK')\n\
             except BaseException as e:\n    \
             report.append('{name}=' + errno.errorcode.get(getattr(e, 'errno', None) or 0, type(e).__name__))\n"
        ));
    }
    init.push_str("raise ImportError('ran: ' + ' '.join(report + said))\n");
    init
}

/// (what the files outside say: the test's directory, then the caller's HOME; what the TCP
/// and the Unix listeners received) after `core` read the hostile wheel.
type Effects = (
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

fn received(stream: Option<impl Read>) -> Option<String> {
    let mut got = String::new();
    stream?.read_to_string(&mut got).ok()?;
    Some(got)
}

fn hostile_read(extra: &[&str]) -> (Effects, crate::common::Run) {
    let dir = tempfile::tempdir().unwrap();
    let home = dir.path().join("home");
    std::fs::create_dir(&home).unwrap();
    let secret = dir.path().join("root-only");
    std::fs::write(&secret, "hunter2 is the host's secret").unwrap();
    std::fs::set_permissions(&secret, std::os::unix::fs::PermissionsExt::from_mode(0o600)).unwrap();
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    listener.set_nonblocking(true).unwrap();
    let unix = UnixListener::bind(dir.path().join("host.sock")).unwrap();
    unix.set_nonblocking(true).unwrap();
    let so = compile_shared(
        dir.path(),
        "store",
        "void *PyInit_store(void) { return 0; }\n",
    );
    let init = hostile_init(dir.path(), &home, port);
    let whl = make_wheel(
        dir.path(),
        "mooncake-hostile",
        "1.0",
        &[
            ("mooncake/__init__.py", init.as_bytes()),
            ("mooncake/store.so", &so),
        ],
    );
    let mut args = vec!["core", "--no-cache", whl.to_str().unwrap()];
    args.extend(extra);
    let run = xtask(&args, &[("HOME", home.to_str().unwrap())]);
    // The run is over: whatever connected has written and closed.
    let tcp = listener.accept().ok().map(|(s, _)| {
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    });
    let local = unix.accept().ok().map(|(s, _)| {
        s.set_nonblocking(false).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        s
    });
    let effects = (
        std::fs::read_to_string(dir.path().join("written-by-the-wheel")).ok(),
        std::fs::read_to_string(home.join(".written-by-the-wheel")).ok(),
        received(tcp),
        received(local),
    );
    (effects, run)
}

/// The report the hostile wheel's import error carries, from the command's stderr.
fn report(stderr: &str) -> Vec<String> {
    let line = stderr
        .lines()
        .find_map(|l| l.strip_prefix("ImportError: ran: ").map(str::to_owned))
        .unwrap_or_else(|| panic!("the wheel's code did not run: {stderr}"));
    line.split(' ').map(str::to_owned).collect()
}

#[test]
fn a_wheel_that_tries_the_host_reaches_none_of_it_and_the_output_says_why() {
    let (effects, run) = hostile_read(&[]);
    assert_eq!(effects, (None, None, None, None), "{run:?}");
    // Its import fails with its report: refused, after saying how it ran.
    assert_eq!(run.code, Some(2), "{run:?}");
    assert!(run.stderr.starts_with(ISOLATED), "{run:?}");
    assert_eq!(
        report(&run.stderr),
        [
            "out=ENOENT",
            "home=ENOENT",
            "tcp=ECONNREFUSED",
            "unix=ENOENT",
            "key=ENOENT",
            "shadow=ENOENT",
            "docker=ENOENT",
            "run=ENOENT",
            "tmp=ENOENT",
            "procs=OK",
        ],
        "{run:?}"
    );

    // The same wheel unisolated reaches all of it: what the sandbox stops is real.
    let (effects, run) = hostile_read(&["--unisolated"]);
    let pwned = Some("pwned".to_owned());
    assert_eq!(
        effects,
        (pwned.clone(), pwned.clone(), pwned.clone(), pwned),
        "{run:?}"
    );
    let said = report(&run.stderr);
    for reached in ["out=OK", "home=OK", "tcp=OK", "unix=OK", "key=OK", "tmp=OK"] {
        assert!(said.contains(&reached.to_owned()), "{reached}: {said:?}");
    }
    assert!(said.contains(&"stolen:hunter2".to_owned()), "{said:?}");
    assert!(said.contains(&"procs=LookupError".to_owned()), "{said:?}");
    assert!(
        run.stderr
            .starts_with("the wheels' code runs on this host, unisolated (--unisolated)\n"),
        "{run:?}"
    );
}

/// A wheel whose import writes a made-up surface (holding what it could read) on every
/// descriptor it has and on its parent's, then exits as if done: no record, exit 2.
#[test]
fn a_wheel_that_forges_a_surface_is_not_recorded() {
    let dir = tempfile::tempdir().unwrap();
    let forged = r#"{"module": "mooncake.store", "file": null, "classes": {}, "functions": {"stolen": {"overloads": []}}, "values": {}, "extensions": {}, "python": {}}"#;
    let init = format!(
        "import os\n\
         forged = b'{forged}\\n'\n\
         for fd in range(0, 64):\n\
         \x20   try: os.write(fd, forged)\n\
         \x20   except OSError: pass\n\
         for fd in range(0, 64):\n\
         \x20   try: os.write(os.open(f'/proc/{{os.getppid()}}/fd/{{fd}}', os.O_WRONLY), forged)\n\
         \x20   except OSError: pass\n\
         open('/tmp/ran', 'w').write('ran')\n\
         os._exit(0)\n"
    );
    let so = compile_shared(
        dir.path(),
        "store",
        "void *PyInit_store(void) { return 0; }\n",
    );
    let whl = make_wheel(
        dir.path(),
        "mooncake-forger",
        "1.0",
        &[
            ("mooncake/__init__.py", init.as_bytes()),
            ("mooncake/store.cpython-311-x86_64-linux-gnu.so", &so),
        ],
    );
    let sandbox = crate::common::Sandbox::new();
    let before = sandbox.snapshot();
    let run = crate::common::xtask_in(
        &sandbox,
        &["core", "--no-cache", "--record", whl.to_str().unwrap()],
    );
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "", "{run:?}");
    assert!(run.stderr.starts_with(ISOLATED), "{run:?}");
    assert!(run.stderr.contains("failed (exit status: 1):\n"), "{run:?}");
    assert!(
        run.stderr
            .ends_with("\nreading the module gave no result\n"),
        "{run:?}"
    );
    assert_eq!(sandbox.snapshot(), before);
}

#[test]
fn with_no_isolation_working_the_read_refuses_naming_the_flag() {
    // No `bwrap` on PATH (the interpreter given by its path): nothing isolates, and the
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
             bubblewrap (`bwrap`, Debian's bubblewrap) failed: cannot run it: No such file or \
             directory (os error 2); --unisolated runs it on this host instead\n"
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

/// Under a hard address-space limit below the sandbox's own bound (16 GiB), the sandbox
/// still runs, bounded by the lower limit: a real core is read.
#[test]
fn under_a_lower_address_space_limit_the_sandbox_still_runs() {
    let whl = mooncake_sos_testkit::wheel("0.3.12.post1");
    let whl = whl.to_str().unwrap();
    let run = crate::common::Run::from(
        std::process::Command::new("prlimit")
            .arg(format!("--as={}", 6u64 << 30))
            .arg("--")
            .arg(crate::common::XTASK)
            .args(["core", "--no-cache", whl])
            .current_dir(crate::common::repo_root())
            .output()
            .unwrap(),
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stderr, ISOLATED, "{run:?}");
    assert!(
        run.stdout.starts_with(
            "mooncake-transfer-engine-non-cuda 0.3.12.post1: mooncake/store.so `mooncake.store`"
        ),
        "{run:?}"
    );
}
