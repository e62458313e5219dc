//! The Python package of the command line (pyproject.toml, maturin `bindings = "bin"`,
//! cli/): the wheel maturin builds from a clean checkout (`git archive HEAD`: what is
//! committed), installed in a fresh venv, checks a copy of the consumer's tree from a
//! directory outside the repository with the contract it carries; and the pre-commit hook
//! (.pre-commit-hooks.yaml), run by pre-commit from PyPI (`try-repo`), passes a clean file and
//! fails a mistake naming its line. The consumer is the fixture `verify --consumer` is tested
//! with (xtask/tests/cli/consumers/object_store.py: the object store module as miles has it).
//!
//! The clean checkout and pre-commit's store sit at fixed places under the target directory,
//! one per commit, and cargo builds into the shared target directory: a second run, or the
//! other test, reuses the build.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard, OnceLock};
use std::time::Instant;

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

/// The packaging tools' venv (maturin, pre-commit), from scripts/setup-test-env.sh.
fn tool(name: &str) -> PathBuf {
    let bin = std::env::var_os("MC_TEST_TOOLS")
        .unwrap_or_else(|| panic!("MC_TEST_TOOLS is not set: run scripts/test.sh"));
    PathBuf::from(bin).join(name)
}

/// The workspace's target directory (cargo's, shared with the clean checkout's builds).
fn target_dir() -> PathBuf {
    Path::new(env!("CARGO_TARGET_TMPDIR"))
        .parent()
        .unwrap()
        .to_path_buf()
}

fn run(cmd: &mut Command) -> Output {
    cmd.output().unwrap_or_else(|e| panic!("{cmd:?}: {e}"))
}

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(out.status.success(), "{cmd:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

/// One build at a time in the shared target directory: maturin moves the executable cargo
/// built out of `target/release` to stage it, so a second build beside it loses its file.
fn one_build_at_a_time() -> MutexGuard<'static, ()> {
    static BUILD: Mutex<()> = Mutex::new(());
    BUILD.lock().unwrap_or_else(|e| e.into_inner())
}

/// HEAD of this repository, unpacked (`git archive`) and committed as a repository of its
/// own (pre-commit clones it), once per commit.
fn clean_checkout() -> &'static Path {
    static CLEAN: OnceLock<PathBuf> = OnceLock::new();
    CLEAN.get_or_init(|| {
        let root = repo_root();
        let head = ok(Command::new("git")
            .args(["rev-parse", "HEAD"])
            .current_dir(&root));
        let dir = target_dir()
            .join("pydist")
            .join(format!("clean-{}", &head.trim()[..12]));
        if dir.join(".git/unpacked").exists() {
            return dir;
        }
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let archive = target_dir().join("pydist/head.tar");
        ok(Command::new("git")
            .args(["archive", "-o"])
            .arg(&archive)
            .arg("HEAD")
            .current_dir(&root));
        ok(Command::new("tar")
            .arg("-xf")
            .arg(&archive)
            .arg("-C")
            .arg(&dir));
        std::fs::remove_file(&archive).unwrap();
        git_repo(&dir);
        std::fs::write(dir.join(".git/unpacked"), "").unwrap();
        dir
    })
}

/// `dir` as a git repository with everything in it committed.
fn git_repo(dir: &Path) {
    let git = |args: &[&str]| {
        ok(Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "init.defaultBranch=main",
            ])
            .args(args)
            .current_dir(dir))
    };
    git(&["init", "-q"]);
    git(&["add", "-A"]);
    git(&["commit", "-q", "-m", "snapshot"]);
}

fn fixture(name: &str) -> String {
    std::fs::read_to_string(repo_root().join("xtask/tests/cli/consumers").join(name)).unwrap()
}

/// A copy of the consumer's tree: its object store module where miles keeps it.
fn consumer_tree(dir: &Path) {
    let utils = dir.join("miles/utils");
    std::fs::create_dir_all(&utils).unwrap();
    std::fs::write(dir.join("miles/__init__.py"), "").unwrap();
    std::fs::write(utils.join("__init__.py"), "").unwrap();
    std::fs::write(utils.join("object_store.py"), fixture("object_store.py")).unwrap();
}

/// The mistakes of the `undeclared.py` fixture, at `miles/bad.py`.
const MISTAKES: [&str; 3] = [
    "./miles/bad.py:3:82: import_ref_v2: undeclared: expected a [[symbol]] entry, found an import [api-undeclared]",
    "./miles/bad.py:6:7: native MooncakeDistributedStore.setup: dict key: expected one of the dict_keys api.toml declares (global_segment_size, local_buffer_size, local_hostname, master_server_addr, metadata_server, protocol, rdma_devices), found \"enable_ssd_offload\" [dict-key]",
    "./miles/bad.py:8:57: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression` [api-call]",
];

#[test]
fn the_wheel_from_a_clean_checkout_checks_a_consumer_tree_outside_the_repository() {
    let _build = one_build_at_a_time();
    let clean = clean_checkout();
    let tmp = tempfile::tempdir().unwrap();
    let dist = tmp.path().join("dist");
    let started = Instant::now();
    ok(Command::new(tool("maturin"))
        .args(["build", "--release", "--quiet", "--out"])
        .arg(&dist)
        .env("CARGO_TARGET_DIR", target_dir())
        .current_dir(clean));
    let wheels: Vec<PathBuf> = std::fs::read_dir(&dist)
        .unwrap()
        .map(|e| e.unwrap().path())
        .collect();
    let [wheel] = &wheels[..] else {
        panic!("one wheel expected: {wheels:?}")
    };
    let name = wheel.file_name().unwrap().to_string_lossy().into_owned();
    assert!(name.starts_with("mooncake_sos-0.1.0-py3-none-"), "{name}");
    eprintln!(
        "pydist: {name}: {} bytes, built in {:.1}s",
        std::fs::metadata(wheel).unwrap().len(),
        started.elapsed().as_secs_f64()
    );

    // A fresh venv: the install adds exactly one executable.
    let venv = tmp.path().join("venv");
    ok(Command::new("python3").arg("-m").arg("venv").arg(&venv));
    let bin = venv.join("bin");
    let listing = || -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&bin)
            .unwrap()
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect();
        names.sort();
        names
    };
    let before = listing();
    ok(Command::new(bin.join("pip"))
        .args(["install", "--quiet", "--no-index"])
        .arg(wheel));
    let added: Vec<String> = listing()
        .into_iter()
        .filter(|n| !before.contains(n))
        .collect();
    assert_eq!(added, ["mooncake-sos"]);

    // From a directory outside the repository, found on PATH, with nothing of the build's.
    let miles = tmp.path().join("miles");
    consumer_tree(&miles);
    let cli = |args: &[&str]| {
        run(Command::new("mooncake-sos")
            .args(args)
            .env_clear()
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .env("HOME", tmp.path())
            .current_dir(&miles))
    };
    let text = |out: &Output| String::from_utf8_lossy(&out.stdout).into_owned();
    let out = cli(&["verify", "--consumer", "."]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert_eq!(
        text(&out),
        "verify --consumer: 3 file(s), 20 uses; every use is declared and fits api.toml and every image's core\n"
    );
    std::fs::write(miles.join("miles/bad.py"), fixture("undeclared.py")).unwrap();
    let out = cli(&["verify", "--consumer", "."]);
    assert_eq!(out.status.code(), Some(1), "{out:?}");
    let mut expected: Vec<String> = MISTAKES.iter().map(|l| l.to_string()).collect();
    expected.push(
        "verify --consumer: 4 file(s), 30 uses; 3 finding(s): 3 against api.toml, 0 against the images"
            .into(),
    );
    assert_eq!(text(&out).lines().collect::<Vec<_>>(), expected, "{out:?}");

    // --version names the contract it carries: the upstream commit, each image and its pins.
    let api = mooncake_sos_manifest::load_str(
        "api.toml",
        &std::fs::read_to_string(repo_root().join("api.toml")).unwrap(),
    )
    .unwrap();
    let out = cli(&["--version"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let version = text(&out);
    let lines: Vec<&str> = version.lines().collect();
    assert_eq!(lines[0], "mooncake-sos 0.1.0");
    assert!(
        lines[1].starts_with(&format!(
            "contract: api.toml (built in) {}: {} at {}@{} ",
            api.name, api.upstream.module, api.upstream.repo, api.upstream.commit
        )),
        "{version}"
    );
    let images: Vec<&str> = lines[2..2 + api.images.len()]
        .iter()
        .map(|l| l.split(':').next().unwrap())
        .collect();
    let ids: Vec<String> = api
        .images
        .iter()
        .map(|i| format!("image {}", i.id))
        .collect();
    assert_eq!(images, ids, "{version}");
    for image in &api.images {
        if let Some((package, base, release)) = image.layer.pin() {
            let pin = format!("pin {package} {base} -> {}", release.version);
            assert!(version.contains(&pin), "{pin}\n{version}");
        }
    }
    // --manifest reads another contract; one that is not there is bad input, located.
    let other = repo_root().join("api.toml");
    let out = cli(&["--manifest", other.to_str().unwrap(), "--version"]);
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    assert!(
        text(&out)
            .lines()
            .nth(1)
            .unwrap()
            .starts_with(&format!("contract: {} ", other.display())),
        "{out:?}"
    );
    let out = cli(&[
        "--manifest",
        "nowhere/api.toml",
        "verify",
        "--consumer",
        ".",
    ]);
    assert_eq!(out.status.code(), Some(2), "{out:?}");
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "nowhere/api.toml:1:1: error: cannot read the manifest: no such file\n"
    );
    assert_eq!(text(&out), "");
}

#[test]
fn the_pre_commit_hook_passes_a_clean_file_and_fails_naming_the_line_of_a_mistake() {
    let _build = one_build_at_a_time();
    let hooks = clean_checkout();
    let tmp = tempfile::tempdir().unwrap();
    let miles = tmp.path().join("miles");
    consumer_tree(&miles);
    git_repo(&miles);
    // pre-commit's store (its clone of the hook repository and the venv it installs the
    // package in), once per commit: a second run does not build again.
    let home = target_dir().join("pydist/pre-commit-home");
    let try_repo = |which: &str| {
        let started = Instant::now();
        let out = run(Command::new(tool("pre-commit"))
            .args(["try-repo"])
            .arg(hooks)
            .args(["mooncake-sos-consumer", which, "--color", "never"])
            .env("PRE_COMMIT_HOME", &home)
            .env("CARGO_TARGET_DIR", target_dir())
            .current_dir(&miles));
        eprintln!(
            "pydist: pre-commit try-repo: {:.1}s",
            started.elapsed().as_secs_f64()
        );
        (
            out.status.code(),
            String::from_utf8_lossy(&out.stdout).into_owned(),
        )
    };
    // The whole committed tree passes.
    let (code, stdout) = try_repo("--all-files");
    assert_eq!(code, Some(0), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("mooncake-sos verify --consumer") && l.ends_with("Passed")),
        "{stdout}"
    );
    std::fs::write(miles.join("miles/bad.py"), fixture("undeclared.py")).unwrap();
    ok(Command::new("git")
        .args(["add", "miles/bad.py"])
        .current_dir(&miles));
    // A commit adding a file with mistakes (pre-commit's default: the staged files) fails.
    let (code, stdout) = try_repo("--verbose");
    assert_eq!(code, Some(1), "{stdout}");
    assert!(
        stdout
            .lines()
            .any(|l| l.starts_with("mooncake-sos verify --consumer") && l.ends_with("Failed")),
        "{stdout}"
    );
    // The hook reports the files pre-commit gives it, read with the rest of the tree.
    let report: Vec<&str> = stdout
        .lines()
        .filter(|l| l.starts_with("./miles/") || l.starts_with("verify --consumer:"))
        .collect();
    let mut expected: Vec<&str> = MISTAKES.to_vec();
    expected.push(
        "verify --consumer: 1 file(s), 10 uses; 3 finding(s): 3 against api.toml, 0 against the images",
    );
    assert_eq!(report, expected, "{stdout}");
}
