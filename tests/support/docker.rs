//! Real image builds on the Docker engine: the stand-in base images that
//! `scripts/make-base-images.sh` makes (named as api.toml names the real ones), runs of
//! `docker/build.py` with a test's build args, what a build printed and where it failed,
//! and looking inside images. Containers, networks and the local package index are in the
//! submodules. Everything a test creates is named `mooncake-sos-test...` and removed on drop
//! (`scripts/docker-e2e.sh` also removes what a killed run left).

pub mod fixtures;
mod index;
mod net;

pub use index::LocalIndex;
pub use net::{Client, Container, Network, StoreMaster, Topology};

use crate::process::run_logged;
use crate::repo_root;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// What every docker test prints when the engine or the base images are missing.
pub const DOCKER_HINT: &str = "run scripts/docker-e2e.sh (it checks the Docker daemon and makes \
     the stand-in base images with scripts/make-base-images.sh)";

/// The repository name of every image a test builds.
pub const TEST_REPO: &str = "mooncake-sos-test";

/// A name no other object of this run has: `<TEST_REPO>-<what>-<pid>-<n>`.
pub fn unique(what: &str) -> String {
    static N: AtomicUsize = AtomicUsize::new(0);
    format!(
        "{TEST_REPO}-{what}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::SeqCst)
    )
}

/// `docker ARGS`: stdout on success; panics with docker's stderr otherwise.
pub fn docker(args: &[&str]) -> String {
    let out = Command::new("docker")
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("run docker: {e}: {DOCKER_HINT}"));
    assert!(
        out.status.success(),
        "docker {}: {}",
        args.join(" "),
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// `docker ARGS` from a drop: best effort, whatever it says (a drop must not panic).
pub(crate) fn docker_quietly(args: &[&str]) {
    let _ = Command::new("docker").args(args).output();
}

/// The base images the recipes name (api.toml), which must exist on the engine.
#[derive(Debug, Clone)]
pub struct Bases {
    /// CUDA stand-in with the devel images' driver stub: the `cu130` variant's pinned tag.
    pub cuda: String,
    /// The same without the stub: a GPU-less builder and a runtime-flavoured base.
    pub cuda_nostub: String,
    pub rocm: String,
    pub cuda_tag: String,
    pub rocm_tag: String,
}

impl Bases {
    pub fn get() -> Bases {
        let api = mooncake_sos_manifest::load(&repo_root().join("api.toml"), "api.toml")
            .unwrap_or_else(|d| panic!("{d}"));
        let image = |id: &str| {
            let i = api.images.iter().find(|i| i.id == id).expect("image");
            (i.base_image.clone(), i.base_tag.clone())
        };
        let ((cuda_name, cuda_tag), (rocm_name, rocm_tag)) = (image("cuda"), image("rocm"));
        let bases = Bases {
            cuda: format!("{cuda_name}:{cuda_tag}"),
            cuda_nostub: format!("{cuda_name}:{cuda_tag}-nostub"),
            rocm: format!("{rocm_name}:{rocm_tag}"),
            cuda_tag,
            rocm_tag,
        };
        for name in [&bases.cuda, &bases.cuda_nostub, &bases.rocm] {
            let st = Command::new("docker")
                .args(["image", "inspect", "--format", "ok", name])
                .output()
                .unwrap_or_else(|e| panic!("run docker: {e}: {DOCKER_HINT}"));
            assert!(st.status.success(), "no base image {name}: {DOCKER_HINT}");
        }
        bases
    }

    /// The stub-less CUDA base's tag, what the recipe's SGLANG_IMAGE_TAG build arg takes.
    pub fn cuda_nostub_tag(&self) -> &str {
        self.cuda_nostub.rsplit_once(':').expect("name:tag").1
    }
}

/// One `python3 docker/build.py VARIANT --tag T -- --network host --no-cache ...` run.
pub struct Build {
    variant: &'static str,
    context: PathBuf,
    args: Vec<(String, String)>,
}

impl Build {
    /// The CUDA recipe (docker/Dockerfile, overlay).
    pub fn cuda() -> Build {
        Build::new("cu130")
    }

    /// The ROCm recipe (docker/Dockerfile.rocm, fill).
    pub fn rocm() -> Build {
        Build::new("rocm720-mi35x")
    }

    fn new(variant: &'static str) -> Build {
        Build {
            variant,
            context: repo_root(),
            args: Vec::new(),
        }
    }

    /// Build from another copy of the repository (docker/ and generated/python/).
    pub fn context(mut self, dir: &Path) -> Build {
        self.context = dir.to_owned();
        self
    }

    pub fn arg(mut self, key: &str, value: &str) -> Build {
        self.args.push((key.to_owned(), value.to_owned()));
        self
    }

    /// Each of `args`, as [`Build::arg`] does.
    pub fn args(self, args: &[(&str, &str)]) -> Build {
        args.iter().fold(self, |build, (k, v)| build.arg(k, v))
    }

    /// Installs from `index` (MOONCAKE_SOS_PIP_INDEX_URL) instead of PyPI.
    pub fn pip_index(self, index: &LocalIndex) -> Build {
        self.arg("MOONCAKE_SOS_PIP_INDEX_URL", &index.url)
    }

    /// Runs the build (every step, no cache: the tests read what the steps print) with the
    /// host's network, where the test's servers listen on 127.0.0.1.
    pub fn run(self) -> Built {
        let tag = format!("{TEST_REPO}/{}:{}", self.variant, unique("build"));
        let mut cmd = Command::new("python3");
        cmd.arg(self.context.join("docker/build.py"))
            .args([self.variant, "--tag", &tag, "--"])
            .args(["--network", "host", "--no-cache", "--force-rm"]);
        for (k, v) in &self.args {
            cmd.arg("--build-arg").arg(format!("{k}={v}"));
        }
        let (status, log) = run_logged(cmd, Duration::from_secs(30 * 60))
            .unwrap_or_else(|e| panic!("docker/build.py: {e}"));
        let log = strip_ansi(&log);
        // Docker only warns about a build arg no ARG declares: a mistyped override would
        // quietly test the default.
        assert!(
            !log.contains("were not consumed"),
            "a build arg the recipe does not declare:\n{log}"
        );
        match status {
            Some(s) if s.success() => Built {
                image: Some(Image { tag }),
                log,
            },
            Some(_) => Built { image: None, log },
            None => panic!("docker/build.py {} took over 30 min:\n{log}", self.variant),
        }
    }
}

/// What a build left: its log (docker's own output) and, if it succeeded, the image.
pub struct Built {
    pub log: String,
    pub image: Option<Image>,
}

/// Where a failed build stopped: the failing step's instruction as docker printed it
/// (`Step N/M : <instruction>`) and everything after that line.
#[derive(Debug)]
pub struct Failure {
    pub instruction: String,
    pub output: String,
}

impl Failure {
    /// The build's output says `text`.
    pub fn assert_says(&self, text: &str) {
        assert!(self.output.contains(text), "{self}");
    }

    /// The build's output never says `text`.
    pub fn assert_never_says(&self, text: &str) {
        assert!(!self.output.contains(text), "{self}");
    }
}

impl std::fmt::Display for Failure {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "failed at: {}\n{}", self.instruction, self.output)
    }
}

impl Built {
    pub fn expect_ok(self) -> (Image, String) {
        match self.image {
            Some(image) => (image, self.log),
            None => panic!("the build failed:\n{}", self.log),
        }
    }

    pub fn expect_failure(self) -> Failure {
        assert!(self.image.is_none(), "the build passed:\n{}", self.log);
        let step = self
            .log
            .rfind("\nStep ")
            .unwrap_or_else(|| panic!("no build step in the log:\n{}", self.log));
        let rest = &self.log[step + 1..];
        let (head, output) = rest.split_once('\n').unwrap_or((rest, ""));
        let instruction = head.split_once(" : ").map_or(head, |(_, i)| i).to_owned();
        assert!(
            output.contains("returned a non-zero code"),
            "not a failed RUN step:\n{}",
            self.log
        );
        Failure {
            instruction,
            output: output.to_owned(),
        }
    }
}

/// The legacy builder colours a step's stderr (ESC[91m ... ESC[0m); the tests read text.
fn strip_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c == '\x1b' && chars.peek() == Some(&'[') {
            for d in chars.by_ref() {
                if d.is_ascii_alphabetic() {
                    break;
                }
            }
        } else {
            out.push(c);
        }
    }
    out
}

/// An image a test built; removed on drop.
pub struct Image {
    pub tag: String,
}

impl Image {
    pub fn labels(&self) -> BTreeMap<String, String> {
        labels(&self.tag)
    }

    /// The part after the `:`, what a recipe's base tag build arg takes.
    pub fn tag_only(&self) -> &str {
        self.tag.rsplit_once(':').map_or("", |(_, t)| t)
    }
}

impl Drop for Image {
    fn drop(&mut self) {
        docker_quietly(&["rmi", "-f", &self.tag]);
    }
}

pub fn labels(image: &str) -> BTreeMap<String, String> {
    let json = docker(&[
        "image",
        "inspect",
        "--format",
        "{{json .Config.Labels}}",
        image,
    ]);
    serde_json::from_str(&json).unwrap_or_else(|e| panic!("labels of {image}: {e}: {json}"))
}

/// `python3 -c PROGRAM` in a fresh container of `image` (no network): (ok, output).
pub fn run_python(image: &str, program: &str) -> (bool, String) {
    let (status, log) = run_logged(python_in(image, program), Duration::from_secs(300))
        .unwrap_or_else(|e| panic!("docker run: {e}"));
    (status.is_some_and(|s| s.success()), log)
}

/// `docker run --rm --network none IMAGE python3 -c PROGRAM`.
fn python_in(image: &str, program: &str) -> Command {
    let mut cmd = Command::new("docker");
    cmd.args([
        "run",
        "--rm",
        "--network",
        "none",
        image,
        "python3",
        "-c",
        program,
    ]);
    cmd
}

/// Like run_python, but the program's stdout must be one JSON value.
pub fn python_json(image: &str, program: &str) -> serde_json::Value {
    let out = python_in(image, program)
        .output()
        .unwrap_or_else(|e| panic!("docker run: {e}"));
    assert!(
        out.status.success(),
        "python3 in {image}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!("{e}: {}", String::from_utf8_lossy(&out.stdout));
    })
}

/// sha256 of every file of the installed `mooncake` package in `image` (native files and
/// Python files apart), and the package directory: read inside the image.
pub fn package_files(image: &str) -> PackageFiles {
    const PROGRAM: &str = r#"
import hashlib, importlib.util, json, os
pkg = list(importlib.util.find_spec("mooncake").submodule_search_locations)[0]
site = os.path.dirname(pkg)
native, python = {}, {}
for root, _, names in os.walk(site):
    for name in names:
        path = os.path.join(root, name)
        if os.path.islink(path) or "__pycache__" in path:
            continue
        with open(path, "rb") as f:
            data = f.read()
        rel = os.path.relpath(path, site)
        if data[:4] == b"\x7fELF":
            native[rel] = hashlib.sha256(data).hexdigest()
        elif rel.startswith("mooncake/") and rel.endswith(".py"):
            python[rel] = hashlib.sha256(data).hexdigest()
print(json.dumps({"dir": pkg, "native": native, "python": python}))
"#;
    let v = python_json(image, PROGRAM);
    let map = |k: &str| -> BTreeMap<String, String> {
        serde_json::from_value(v[k].clone()).expect("a map of hashes")
    };
    PackageFiles {
        dir: v["dir"].as_str().expect("dir").to_owned(),
        native: map("native"),
        python: map("python"),
    }
}

#[derive(Debug, PartialEq, Eq)]
pub struct PackageFiles {
    pub dir: String,
    /// Every ELF file (shared objects, executables) of site-packages, by relative path.
    pub native: BTreeMap<String, String>,
    /// Every `mooncake/*.py`.
    pub python: BTreeMap<String, String>,
}

/// A base image made for one test (`FROM base` plus a RUN line), removed on drop: named
/// `<base's repository>:<TEST_REPO>-...`, so a recipe's FROM reaches it through its base
/// tag build arg.
pub fn derived_image(base: &str, run: &str) -> Image {
    let dir = tempfile::tempdir().expect("temp dir");
    std::fs::write(
        dir.path().join("Dockerfile"),
        format!("FROM {base}\nRUN {run}\n"),
    )
    .expect("write Dockerfile");
    let repository = base.rsplit_once(':').map_or(base, |(r, _)| r);
    let tag = format!("{repository}:{}", unique("derived"));
    let mut cmd = Command::new("docker");
    cmd.args(["build", "-q", "--network", "none", "-t", &tag])
        .arg(dir.path());
    let (status, log) = run_logged(cmd, Duration::from_secs(600)).expect("docker build");
    assert!(
        status.is_some_and(|s| s.success()),
        "FROM {base} RUN {run}:\n{log}"
    );
    Image { tag }
}
