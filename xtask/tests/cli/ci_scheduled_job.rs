//! docs/ci.md's scheduled job run as the runner runs it: each step's `run:` block in `bash -e`
//! from its working directory, a step skipped when its `if:` does not hold (the outputs each
//! step wrote to `$GITHUB_OUTPUT`), the job failed at the first step that exits non-zero.
//! Against loopback indexes: a transition (adopted, committed, pushed, a pull request asked
//! for), a newer release that only breaks the pin (watch exits 1; nothing to adopt, so
//! nothing is committed and the job passes), nothing to do, and an index that fails.
//!
//! Two stand-ins, for what a test cannot reach: `cargo` (runs the built xtask, adding the
//! loopback index, cache and libraries for watch and adopt) and `gh` (GitHub: records its
//! arguments). git is real, pushing to a bare repository as `origin`.

use crate::ci_recipe::yaml;
use crate::common::cores::cuda13_libs;
use crate::common::cores::cuda13_wheel;
use crate::common::{Sandbox, XTASK, repo_root};
use crate::watch::{cache_copy, online, overlay_sandbox, pinned_sandbox, upstream};
use mooncake_sos_testkit::{FileServer, SimpleIndex, wheel};
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

/// One step of the job, as the yaml writes it.
#[derive(Debug, Default)]
struct Step {
    name: String,
    id: Option<String>,
    condition: Option<String>,
    dir: Option<String>,
    env: Vec<(String, String)>,
    uses: Option<String>,
    run: Option<String>,
}

/// The steps of job `job` in the workflow: each `- ` item under its `steps:`, with the keys a
/// step of this recipe has (any other key is a test to extend, not one to ignore).
fn steps(job: &str) -> Vec<Step> {
    let yaml = yaml();
    let start = yaml
        .find(&format!("\n  {job}:\n"))
        .unwrap_or_else(|| panic!("no job {job}"));
    let body = &yaml[start + 1..];
    let mut lines = body.lines().skip(1).peekable();
    // The job's keys, up to its steps.
    for line in lines.by_ref() {
        if line == "    steps:" {
            break;
        }
    }
    let (mut steps, mut block): (Vec<Step>, Option<&str>) = (Vec::new(), None);
    for line in lines {
        let indent = line.len() - line.trim_start().len();
        if !line.trim().is_empty() && indent <= 4 {
            break; // the next job
        }
        if let Some(item) = line.strip_prefix("      - ") {
            steps.push(Step::default());
            block = None;
            key(steps.last_mut().unwrap(), item, &mut block);
        } else if let Some(item) = line.strip_prefix("        ").filter(|_| indent == 8) {
            block = None;
            key(steps.last_mut().unwrap(), item, &mut block);
        } else if indent >= 10 || line.trim().is_empty() {
            let step = steps.last_mut().unwrap();
            let inner = line.get(10..).unwrap_or("");
            match block {
                Some("run") => {
                    let run = step.run.get_or_insert_with(String::new);
                    run.push_str(inner);
                    run.push('\n');
                }
                Some("env") => {
                    let (k, v) = inner.split_once(": ").expect("KEY: value");
                    step.env.push((k.to_owned(), v.to_owned()));
                }
                Some("with") => {}
                other => panic!("a nested line under {other:?}: {line}"),
            }
        } else {
            panic!("a line the test cannot place: {line:?}");
        }
    }
    steps
}

fn key(step: &mut Step, item: &str, block: &mut Option<&'static str>) {
    let (k, v) = item.split_once(':').expect("key: value");
    let v = v.trim().to_owned();
    match k {
        "name" => step.name = v,
        "id" => step.id = Some(v),
        "if" => step.condition = Some(v),
        "working-directory" => step.dir = Some(v),
        "uses" => step.uses = Some(v),
        "run" if v == "|" => *block = Some("run"),
        "env" => *block = Some("env"),
        "with" => *block = Some("with"),
        _ => panic!("a step key the test does not run: {item}"),
    }
}

/// Whether `condition` holds: the one form the recipe uses, `steps.ID.outputs.KEY == 'VALUE'`.
fn holds(condition: &str, outputs: &BTreeMap<String, BTreeMap<String, String>>) -> bool {
    let (left, right) = condition.split_once(" == ").expect("a == condition");
    let mut path = left.split('.');
    assert_eq!(path.next(), Some("steps"), "{condition}");
    let id = path.next().unwrap();
    assert_eq!(path.next(), Some("outputs"), "{condition}");
    let key = path.next().unwrap();
    let value = right.trim_matches('\'');
    outputs
        .get(id)
        .and_then(|o| o.get(key))
        .is_some_and(|v| v == value)
}

/// The runner's workspace: `mooncake-sos` (the checkout: a git repository of the sandbox,
/// with the repository's .gitignore, `origin` a bare repository beside it), the stand-ins'
/// directory, a HOME with no git identity.
struct Workspace {
    dir: tempfile::TempDir,
    /// Held for the job: watch's cache.
    _cache: tempfile::TempDir,
}

impl Workspace {
    fn new(sandbox: &Sandbox, index: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path();
        let checkout = root.join("mooncake-sos");
        let cp = Command::new("cp")
            .arg("-a")
            .arg(sandbox.root())
            .arg(&checkout)
            .status()
            .unwrap();
        assert!(cp.success());
        std::fs::copy(repo_root().join(".gitignore"), checkout.join(".gitignore")).unwrap();
        git(root, &["init", "-q", "--bare", "origin.git"]);
        git(&checkout, &["init", "-q", "-b", "main"]);
        git(&checkout, &["add", "-A"]);
        git(
            &checkout,
            &[
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "commit",
                "-qm",
                "the checkout",
            ],
        );
        git(&checkout, &["remote", "add", "origin", "../origin.git"]);
        std::fs::create_dir(root.join("home")).unwrap();
        let bin = root.join("bin");
        std::fs::create_dir(&bin).unwrap();
        let cache = cache_copy();
        let libs = cuda13_libs();
        let extra = [
            "--watch-cache",
            cache.path().to_str().unwrap(),
            "--lib-dir",
            &libs,
            "--raw-base-url",
            &upstream().base_url,
            "--index-url",
            index,
        ]
        .map(|w| format!("'{w}'"))
        .join(" ");
        script(
            &bin.join("cargo"),
            &format!(
                "[ \"$1\" = xtask ] || {{ echo \"cargo stand-in: only xtask\" >&2; exit 97; }}\n\
                 shift\n\
                 case \"$1\" in\n\
                   watch|adopt) exec '{XTASK}' \"$@\" --quiet {extra} ;;\n\
                   *) exec '{XTASK}' \"$@\" ;;\n\
                 esac\n"
            ),
        );
        script(
            &bin.join("gh"),
            &format!(
                "printf '%s\\n' \"$@\" >> '{}'\n",
                root.join("gh.log").display()
            ),
        );
        Workspace { dir, _cache: cache }
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join(rel)
    }

    fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path(rel)).unwrap_or_default()
    }

    /// The job `watch`, step by step.
    fn run_job(&self) -> Job {
        let mut job = Job::default();
        let path = format!(
            "{}:{}",
            self.path("bin").display(),
            std::env::var("PATH").unwrap()
        );
        for step in steps("watch") {
            if let Some(uses) = &step.uses {
                // The checkout is the workspace's own.
                assert!(uses.starts_with("actions/checkout@"), "{uses}");
                continue;
            }
            if let Some(condition) = &step.condition
                && !holds(condition, &job.outputs)
            {
                job.skipped.push(step.name.clone());
                continue;
            }
            let output = self.path("github_output");
            std::fs::write(&output, "").unwrap();
            let script = self.path("step.sh");
            std::fs::write(&script, step.run.as_deref().expect("a run block")).unwrap();
            let mut cmd = Command::new("bash");
            cmd.arg("-e")
                .arg(&script)
                .current_dir(self.path(step.dir.as_deref().unwrap_or(".")))
                .env("PATH", &path)
                .env("HOME", self.path("home"))
                .env("GIT_CONFIG_NOSYSTEM", "1")
                .env("GITHUB_OUTPUT", &output)
                .env_remove("CARGO_MANIFEST_DIR");
            for (k, v) in &step.env {
                assert_eq!(
                    v, "${{ secrets.MOONCAKE_SOS_TOKEN }}",
                    "an env value the test does not know"
                );
                cmd.env(k, "a-token");
            }
            let out = cmd.output().unwrap();
            job.log.push_str(&format!(
                "--- {}: {:?}\n{}{}",
                step.name,
                out.status.code(),
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            ));
            if !out.status.success() {
                job.failed = Some((step.name.clone(), out.status.code()));
                return job;
            }
            let written = std::fs::read_to_string(&output).unwrap();
            let outputs = job.outputs.entry(step.id.clone().unwrap_or_default());
            let outputs = outputs.or_default();
            for line in written.lines() {
                let (k, v) = line.split_once('=').expect("KEY=value");
                outputs.insert(k.to_owned(), v.to_owned());
            }
            job.ran.push(step.name.clone());
        }
        job
    }

    /// The branches pushed to `origin`.
    fn pushed(&self) -> Vec<String> {
        let out = git_out(
            &self.path("origin.git"),
            &["branch", "--format=%(refname:short)"],
        );
        out.lines().map(String::from).collect()
    }
}

#[derive(Debug, Default)]
struct Job {
    ran: Vec<String>,
    skipped: Vec<String>,
    failed: Option<(String, Option<i32>)>,
    outputs: BTreeMap<String, BTreeMap<String, String>>,
    log: String,
}

fn script(path: &Path, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    std::fs::write(path, format!("#!/bin/sh\n{body}")).unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    git_out(dir, args);
}

fn git_out(dir: &Path, args: &[&str]) -> String {
    let out = Command::new("git")
        .args(args)
        .current_dir(dir)
        .output()
        .unwrap();
    assert!(out.status.success(), "git {args:?}: {out:?}");
    String::from_utf8(out.stdout).unwrap()
}

const WATCH: &str = "releases on the package index (annotations on api.toml)";
const ADOPT: &str = "adopt what watch allows";
const PULL_REQUEST: &str = "open the pull request";

#[test]
fn a_transition_is_adopted_and_a_pull_request_opened() {
    let workspace = Workspace::new(&overlay_sandbox(), &online().url);
    let job = workspace.run_job();
    assert_eq!(job.failed, None, "{}", job.log);
    assert_eq!(job.ran, [WATCH, ADOPT, PULL_REQUEST], "{}", job.log);
    assert_eq!(workspace.read("moves.txt"), "cuda pin\n");
    // One branch, one commit on the checkout's: the image moved, its region regenerated.
    let pushed = workspace.pushed();
    assert_eq!(pushed.len(), 1, "{pushed:?}");
    let branch = &pushed[0];
    let date = branch.strip_prefix("watch/").unwrap();
    assert!(
        date.len() == 8 && date.bytes().all(|b| b.is_ascii_digit()),
        "{branch}"
    );
    let origin = workspace.path("origin.git");
    let changed = git_out(
        &origin,
        &["diff", "--name-only", &format!("{branch}~1"), branch],
    );
    assert_eq!(changed, "api.toml\ndocker/Dockerfile\n");
    let subject = git_out(&origin, &["log", "-1", "--format=%s %an", branch]);
    assert_eq!(subject, "adopt: what watch allows github-actions[bot]\n");
    assert_eq!(
        workspace.read("gh.log"),
        "pr\ncreate\n--title\nmooncake: adopt what watch allows\n--body-file\n../pr-body.md\n"
    );
    let body = workspace.read("pr-body.md");
    // The body is watch's table, written before adopt moved the image.
    let says = "| `cuda` | overlay on mooncake-transfer-engine-cuda13 0.3.11.post1 | **overlay → pin at 0.3.12.post1**: ";
    assert!(body.lines().any(|l| l.starts_with(says)), "{body}");
}

/// The defect this mends: watch's exit 1 for a release that would break the pin (no
/// transition) sent the job on to `git commit` with nothing to commit, and it failed.
#[test]
fn a_release_that_only_breaks_an_image_opens_nothing_and_passes() {
    let workspace = Workspace::new(&pinned_sandbox(), &online().url);
    let job = workspace.run_job();
    assert_eq!(job.failed, None, "{}", job.log);
    assert_eq!(job.ran, [WATCH], "{}", job.log);
    assert_eq!(job.skipped, [ADOPT, PULL_REQUEST]);
    // watch said so, as annotations, and exited 1.
    assert!(job.log.contains("would break it: "), "{}", job.log);
    assert_eq!(workspace.read("moves.txt"), "");
    assert_eq!(workspace.pushed(), Vec::<String>::new());
    assert_eq!(workspace.read("gh.log"), "");
}

#[test]
fn nothing_to_do_opens_nothing_and_an_index_that_fails_fails_the_job() {
    let nothing = SimpleIndex::serve(&[cuda13_wheel("0.3.11.post1"), wheel("0.3.12.post1")]);
    let workspace = Workspace::new(&pinned_sandbox(), &nothing.url);
    let job = workspace.run_job();
    assert_eq!(job.failed, None, "{}", job.log);
    assert_eq!(job.ran, [WATCH], "{}", job.log);
    assert_eq!(workspace.pushed(), Vec::<String>::new());

    let failing = FileServer::start(Vec::new());
    let failing = format!("{}/simple/", failing.base_url);
    let workspace = Workspace::new(&pinned_sandbox(), &failing);
    let job = workspace.run_job();
    assert_eq!(job.failed, Some((WATCH.to_owned(), Some(2))), "{}", job.log);
    assert_eq!(workspace.pushed(), Vec::<String>::new());
}
