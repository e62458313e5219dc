//! What surrounds an emulated image build: stand-in base images (venvs built offline from
//! the local wheels, cached and copied per test so tests stay independent), a static file
//! server on 127.0.0.1 for the overlay download, and file hashes.

pub use mooncake_sos_testkit::{DIST, FileServer, wheel, wheel_member, wheels_dir};

use crate::dockerfile::{Build, BuildError, BuildLog, region, run_logged};
use crate::{Master, SETUP_HINT, TestEnv};
use mooncake_sos_testkit::env_path;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// The region name prefix api.toml gives (`name`).
pub const NAME: &str = "mooncake-sos";

/// A venv standing in for a base image.
#[derive(Debug, Clone)]
pub struct Venv {
    pub dir: PathBuf,
}

impl Venv {
    pub fn python(&self) -> PathBuf {
        self.dir.join("bin/python3")
    }

    pub fn site_packages(&self) -> PathBuf {
        let lib = self.dir.join("lib");
        std::fs::read_dir(&lib)
            .expect("venv lib/")
            .filter_map(|e| e.ok())
            .find(|e| e.file_name().to_string_lossy().starts_with("python"))
            .map(|e| e.path().join("site-packages"))
            .unwrap_or_else(|| panic!("no site-packages under {}", lib.display()))
    }

    /// The installed `mooncake` package directory.
    pub fn mooncake_dir(&self) -> PathBuf {
        self.site_packages().join("mooncake")
    }

    pub fn module_file(&self) -> PathBuf {
        self.mooncake_dir().join("structured_object_store.py")
    }

    /// The venv's own `mooncake_master` (a client and its master from the same release).
    pub fn master(&self) -> PathBuf {
        self.mooncake_dir().join("mooncake_master")
    }

    /// A copy at `dest` (`cp -a`; the layers call `python3 -m pip`, so the copied scripts'
    /// shebangs do not matter).
    pub fn copy_to(&self, dest: &Path) -> Venv {
        let st = Command::new("cp")
            .arg("-a")
            .arg(&self.dir)
            .arg(dest)
            .status()
            .expect("run cp");
        assert!(
            st.success(),
            "cp -a {} {}",
            self.dir.display(),
            dest.display()
        );
        Venv {
            dir: dest.to_owned(),
        }
    }
}

/// A base venv with `DIST==version`, numpy and msgpack, from the local wheels only. Built
/// once per wheel and cached under target/ (into a temp dir, then renamed, so concurrent
/// test runs never see half a venv); tests copy it and never change it.
pub fn base_venv(version: &str) -> Venv {
    let cache = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| crate::repo_root().join("target"))
        .join("mc-emulate");
    let whl = wheel(version);
    // Keyed on the wheel set, so new numpy/msgpack pins in the setup script make a new base.
    let mut names: Vec<String> = std::fs::read_dir(wheels_dir())
        .expect("read MC_TEST_WHEELS")
        .filter_map(|e| e.ok().map(|e| e.file_name().to_string_lossy().into_owned()))
        .collect();
    names.sort();
    let key = &sha256_hex(names.join("\n").as_bytes())[..12];
    let dir = cache.join(format!("base-{version}-{key}"));
    if dir.join(".complete").exists() {
        return loads_native_core(Venv { dir });
    }
    std::fs::create_dir_all(&cache).expect("create target/mc-emulate");
    let tmp = tempfile::tempdir_in(&cache).expect("temp dir in target/mc-emulate");
    let build = tmp.path().join("venv");
    let python = env_path("MC_TEST_PYTHON");
    let mut cmd = Command::new(&python);
    cmd.args(["-m", "venv"]).arg(&build);
    let (st, log) = run_logged(cmd, Duration::from_secs(120)).expect("python -m venv");
    assert!(
        st.is_some_and(|s| s.success()),
        "python -m venv failed:\n{log}"
    );
    let mut pip = Command::new(build.join("bin/python3"));
    pip.args([
        "-m",
        "pip",
        "install",
        "-q",
        "--no-deps",
        "--no-index",
        "--find-links",
    ])
    .arg(wheels_dir())
    .arg(&whl)
    .args(["numpy", "msgpack"]);
    let (st, log) = run_logged(pip, Duration::from_secs(300)).expect("pip install");
    assert!(
        st.is_some_and(|s| s.success()),
        "offline pip install into the base venv failed ({SETUP_HINT}):\n{log}"
    );
    std::fs::write(build.join(".complete"), version).expect("stamp");
    // Lost a race with another test run: theirs is as good as ours.
    if std::fs::rename(&build, &dir).is_err() && !dir.join(".complete").exists() {
        panic!("cannot move the base venv into {}", dir.display());
    }
    loads_native_core(Venv { dir })
}

/// Fails with a hint unless the venv's `mooncake.store` loads (libcudart for 0.3.12.post1
/// comes from the LD_LIBRARY_PATH the setup script prints).
fn loads_native_core(venv: Venv) -> Venv {
    let mut cmd = Command::new(venv.python());
    cmd.args(["-c", "import mooncake.store"]);
    let (st, log) = run_logged(cmd, Duration::from_secs(60)).expect("run python");
    assert!(
        st.is_some_and(|s| s.success()),
        "mooncake.store does not load in the base venv {} ({SETUP_HINT}):\n{log}",
        venv.dir.display()
    );
    venv
}

/// One emulated image: a private copy of a base venv and an emulation root, in a temp dir.
pub struct Image {
    pub venv: Venv,
    pub root: PathBuf,
    pub base_env: Vec<(String, String)>,
    _work: tempfile::TempDir,
}

impl Image {
    pub fn from_base(base: &Venv) -> Image {
        let work = tempfile::tempdir().expect("temp dir");
        let venv = base.copy_to(&work.path().join("venv"));
        let root = work.path().join("root");
        std::fs::create_dir_all(&root).expect("create root");
        Image {
            venv,
            root,
            base_env: Vec::new(),
            _work: work,
        }
    }

    /// `MOONCAKE_SOS_SHIM_DIR` pointed into the root, where COPY may write.
    pub fn shim_dir_arg(&self) -> (String, String) {
        (
            "MOONCAKE_SOS_SHIM_DIR".into(),
            self.root.join("opt/mooncake-sos").display().to_string(),
        )
    }

    /// Builds all of `<context>/<dockerfile>` (which must hold the generated region
    /// `region_id`: the hand-written lines around it run too) in this image, with the shim
    /// dir arg and `args` as build args.
    pub fn build(
        &self,
        context: &Path,
        dockerfile: &str,
        region_id: &str,
        args: &[(&str, &str)],
    ) -> Result<BuildLog, BuildError> {
        let text = std::fs::read_to_string(context.join(dockerfile))
            .unwrap_or_else(|e| panic!("read {dockerfile}: {e}"));
        region(&text, NAME, region_id).unwrap_or_else(|e| panic!("{dockerfile}: {e}"));
        let mut build_args = vec![self.shim_dir_arg()];
        build_args.extend(args.iter().map(|(k, v)| (k.to_string(), v.to_string())));
        let build = Build {
            context: context.to_owned(),
            root: self.root.clone(),
            venv: self.venv.dir.clone(),
            base_env: self.base_env.clone(),
            build_args,
            step_timeout: Duration::from_secs(300),
        };
        build.run(&text, 1)
    }

    /// Runs a Python program in the image (the venv's python3), with `envs`; (ok, output).
    /// Not concurrently in one image: the program goes to one file in the root.
    pub fn python(
        &self,
        program: &str,
        envs: &[(&str, String)],
        timeout: Duration,
    ) -> (bool, String) {
        // From a file, so a traceback shows the failing line's text.
        let script = self.root.join("program.py");
        std::fs::write(&script, program).expect("write program.py");
        let mut cmd = Command::new(self.venv.python());
        cmd.arg(&script).envs(envs.iter().map(|(k, v)| (k, v)));
        let (st, out) = run_logged(cmd, timeout).expect("run python");
        (st.is_some_and(|s| s.success()), out)
    }
}

pub fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

pub fn file_sha256(path: &Path) -> String {
    sha256_hex(&std::fs::read(path).unwrap_or_else(|e| panic!("read {}: {e}", path.display())))
}

/// sha256 of every ELF file (shared objects, executables) under `dir`, by relative path.
/// Hashed by `sha256sum`: the debug-build sha2 is slow on the ~150 MB of native files.
pub fn native_files(dir: &Path) -> BTreeMap<String, String> {
    fn is_elf(path: &Path) -> bool {
        let mut magic = [0u8; 4];
        std::fs::File::open(path)
            .and_then(|mut f| f.read_exact(&mut magic))
            .is_ok()
            && &magic == b"\x7fELF"
    }
    fn walk(base: &Path, dir: &Path, out: &mut Vec<String>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("dir entry").path();
            if path.is_dir() {
                walk(base, &path, out);
            } else if is_elf(&path) {
                out.push(
                    path.strip_prefix(base)
                        .unwrap_or(&path)
                        .display()
                        .to_string(),
                );
            }
        }
    }
    let mut files = Vec::new();
    walk(dir, dir, &mut files);
    if files.is_empty() {
        return BTreeMap::new();
    }
    let out = Command::new("sha256sum")
        .arg("--")
        .args(&files)
        .current_dir(dir)
        .output()
        .expect("run sha256sum");
    assert!(
        out.status.success(),
        "sha256sum: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).expect("sha256sum output");
    let hashes: BTreeMap<String, String> = text
        .lines()
        .filter_map(|l| {
            l.split_once("  ")
                .map(|(h, p)| (p.to_owned(), h.to_owned()))
        })
        .collect();
    assert_eq!(hashes.len(), files.len(), "sha256sum output: {text}");
    hashes
}

/// An overlay build (the CUDA recipe) whose download is served from 127.0.0.1.
pub struct OverlayRun {
    pub image: Image,
    pub server: FileServer,
    pub result: Result<BuildLog, BuildError>,
}

/// Builds `<context>/docker/Dockerfile`'s overlay region over a copy of `base`, serving
/// `module` at `url_path` and passing its sha256 as MOONCAKE_SOS_SHA256.
pub fn build_overlay(base: &Venv, context: &Path, url_path: &str, module: &[u8]) -> OverlayRun {
    let image = Image::from_base(base);
    let server = FileServer::start(vec![(url_path.to_owned(), module.to_vec())]);
    let sha = sha256_hex(module);
    let args = [
        ("MOONCAKE_SOS_BASE_URL", server.base_url.as_str()),
        ("MOONCAKE_SOS_SHA256", sha.as_str()),
    ];
    let result = image.build(context, "docker/Dockerfile", "overlay", &args);
    OverlayRun {
        image,
        server,
        result,
    }
}

/// The put/get round trip (emulate_roundtrip.py) in `image` on the image's own
/// mooncake_master, started on free loopback ports: (ok, output).
pub fn round_trip(image: &Image) -> (bool, String) {
    let env = TestEnv {
        venv: image.venv.dir.clone(),
        python: image.venv.python(),
        master: image.venv.master(),
    };
    let master = Master::start(&env);
    let envs = [
        ("MC_EMU_MASTER", format!("127.0.0.1:{}", master.rpc_port)),
        (
            "MC_EMU_METADATA",
            format!("http://127.0.0.1:{}/metadata", master.http_port),
        ),
        ("MC_TCP_BIND_ADDRESS", "127.0.0.1".to_owned()),
    ];
    image.python(
        include_str!("emulate_roundtrip.py"),
        &envs,
        Duration::from_secs(120),
    )
}
