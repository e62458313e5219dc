//! A small Dockerfile interpreter for the recipes the project ships (the generated regions
//! and the lines around them). There is no Docker engine on these machines, so the layers are
//! proven by running them in a stand-in base image: a venv whose `bin/` is first on PATH, so
//! `python3` and `pip` resolve to it.
//!
//! As docker does: ARG scoping (an ARG before the first FROM serves FROM lines only; after a
//! FROM only ARGs declared in the stage are set), `--build-arg` overrides, `$VAR`, `${VAR}`,
//! `${VAR:-word}`, `${VAR:+word}` and quotes in FROM, ARG, ENV, COPY, WORKDIR and LABEL; RUN
//! in shell form through `/bin/sh -c` (SHELL changes it) with the stage's ARGs and ENVs in its
//! environment and its text left to the shell. `/bin/sh`, not bash, because that is what
//! docker runs: it is dash here as on the Debian/Ubuntu base images, so a bashism fails here
//! as it would in the real build.
//!
//! Differently: FROM pulls nothing (the venv is the base); COPY destinations and WORKDIR
//! must lie inside the emulation root (point the ARG that names them there); a build arg no
//! ARG declares is an error (docker only warns), so a mistyped override cannot silently test
//! the default; each RUN has a time limit.

mod parse;
mod process;
mod words;

pub use parse::{Instruction, parse, region};
pub use process::run_logged;
pub use words::expand;
use words::words;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Component, Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Everything a build needs besides the Dockerfile.
pub struct Build {
    /// The build context: COPY sources are read from here.
    pub context: PathBuf,
    /// The emulated filesystem: the initial WORKDIR, and where every WORKDIR, COPY
    /// destination, HOME and TMPDIR must lie.
    pub root: PathBuf,
    /// The stand-in base image.
    pub venv: PathBuf,
    /// The base image's own ENV (e.g. PIP_NO_INDEX for an offline pip).
    pub base_env: Vec<(String, String)>,
    /// `--build-arg NAME=VALUE`, in order.
    pub build_args: Vec<(String, String)>,
    pub step_timeout: Duration,
}

/// What a successful build did.
#[derive(Debug, Default)]
pub struct BuildLog {
    /// FROM lines after expansion (pulled by nothing).
    pub from: Vec<String>,
    /// One entry per RUN: (line, combined stdout+stderr).
    pub runs: Vec<(usize, String)>,
    /// LABELs after expansion.
    pub labels: BTreeMap<String, String>,
}

impl BuildLog {
    pub fn output(&self) -> String {
        self.runs
            .iter()
            .map(|(_, o)| o.as_str())
            .collect::<Vec<_>>()
            .join("")
    }
}

/// A failed build: the step, where it is and what it printed.
#[derive(Debug)]
pub struct BuildError {
    /// 1-based step number, as `[step/steps]` in a docker build log; 0 for a whole-build error.
    pub step: usize,
    pub steps: usize,
    pub line: usize,
    pub instruction: String,
    pub message: String,
    pub output: String,
}

impl std::fmt::Display for BuildError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.step == 0 {
            return write!(f, "build: {}", self.message);
        }
        writeln!(
            f,
            "[{}/{}] line {}: {}",
            self.step, self.steps, self.line, self.instruction
        )?;
        writeln!(f, "error: {}", self.message)?;
        write!(f, "--- output ---\n{}", self.output)
    }
}

#[derive(Default)]
struct Stage {
    args: BTreeMap<String, String>,
    env: BTreeMap<String, String>,
    workdir: PathBuf,
    shell: Vec<String>,
}

impl Stage {
    /// What `$VAR` means in the stage: ENV wins over ARG, as in docker.
    fn vars(&self) -> BTreeMap<String, String> {
        let mut v = self.args.clone();
        v.extend(self.env.clone());
        v
    }
}

impl Build {
    /// Runs every instruction of `text` (line `first_line` of its file) in order.
    pub fn run(&self, text: &str, first_line: usize) -> Result<BuildLog, BuildError> {
        let whole = |message: String| BuildError {
            step: 0,
            steps: 0,
            line: first_line,
            instruction: String::new(),
            message,
            output: String::new(),
        };
        let instructions = parse(text, first_line).map_err(whole)?;
        let overrides: BTreeMap<&str, &str> = self
            .build_args
            .iter()
            .map(|(k, v)| (k.as_str(), v.as_str()))
            .collect();
        let mut global: BTreeMap<String, String> = BTreeMap::new();
        let mut declared: BTreeSet<String> = BTreeSet::new();
        let mut stage: Option<Stage> = None;
        let mut log = BuildLog::default();
        let steps = instructions.len();
        for (i, ins) in instructions.iter().enumerate() {
            let fail = |message: String, output: String| BuildError {
                step: i + 1,
                steps,
                line: ins.line,
                instruction: ins.text(),
                message,
                output,
            };
            let vars = stage.as_ref().map_or_else(|| global.clone(), Stage::vars);
            match (ins.keyword.as_str(), stage.as_mut()) {
                ("ARG", mut scope) => {
                    for word in words(&ins.args) {
                        let (name, default) = match word.split_once('=') {
                            Some((n, d)) => (
                                n.to_owned(),
                                Some(expand(d, &vars).map_err(|e| fail(e, String::new()))?),
                            ),
                            None => (word.clone(), None),
                        };
                        declared.insert(name.clone());
                        let value = overrides
                            .get(name.as_str())
                            .map(|v| v.to_string())
                            .or(default);
                        match &mut scope {
                            None => {
                                global.insert(name, value.unwrap_or_default());
                            }
                            // `ARG NAME` in a stage takes the global value when nothing overrides it.
                            Some(s) => {
                                if let Some(v) = value.or_else(|| global.get(&name).cloned()) {
                                    s.args.insert(name, v);
                                }
                            }
                        }
                    }
                }
                ("FROM", _) => {
                    let image = expand(ins.args.split_whitespace().next().unwrap_or(""), &global)
                        .map_err(|e| fail(e, String::new()))?;
                    if image.is_empty() || image.ends_with(':') || image.starts_with(':') {
                        return Err(fail(
                            format!("invalid reference format: {image:?}"),
                            String::new(),
                        ));
                    }
                    log.from.push(image);
                    stage = Some(Stage {
                        workdir: self.root.clone(),
                        shell: vec!["/bin/sh".into(), "-c".into()],
                        ..Stage::default()
                    });
                }
                (_, None) => {
                    return Err(fail(
                        "only ARG may come before the first FROM".into(),
                        String::new(),
                    ));
                }
                ("RUN", Some(s)) => {
                    let output = self.exec(s, &ins.args).map_err(|(m, o)| fail(m, o))?;
                    log.runs.push((ins.line, output));
                }
                ("COPY", Some(s)) => self
                    .copy(s, &ins.args)
                    .map_err(|e| fail(e, String::new()))?,
                ("ENV", Some(s)) => {
                    // One ENV expands every value with the variables from before it, as docker does.
                    let before = s.vars();
                    for word in words(&ins.args) {
                        let (k, v) = word.split_once('=').ok_or_else(|| {
                            fail(format!("ENV {word}: use ENV NAME=VALUE"), String::new())
                        })?;
                        let v = expand(v, &before).map_err(|e| fail(e, String::new()))?;
                        s.env.insert(k.to_owned(), v);
                    }
                }
                ("WORKDIR", Some(s)) => {
                    let dir = expand(&ins.args, &s.vars()).map_err(|e| fail(e, String::new()))?;
                    s.workdir = self
                        .host_path(&s.workdir.join(dir))
                        .map_err(|e| fail(e, String::new()))?;
                }
                ("SHELL", Some(s)) => {
                    s.shell = serde_json::from_str(&ins.args).map_err(|e| {
                        fail(format!("SHELL needs a JSON array: {e}"), String::new())
                    })?;
                }
                ("LABEL", Some(s)) => {
                    for word in words(&ins.args) {
                        let (k, v) = word.split_once('=').unwrap_or((&word, ""));
                        let pair = (expand(k, &s.vars()), expand(v, &s.vars()));
                        let (Ok(k), Ok(v)) = pair else {
                            return Err(fail(format!("LABEL {word}: bad quoting"), String::new()));
                        };
                        log.labels.insert(k, v);
                    }
                }
                (
                    "CMD" | "ENTRYPOINT" | "EXPOSE" | "HEALTHCHECK" | "STOPSIGNAL" | "VOLUME",
                    Some(_),
                ) => {}
                (other, Some(_)) => {
                    return Err(fail(
                        format!("{other} is not supported by the emulator"),
                        String::new(),
                    ));
                }
            }
        }
        let unused: Vec<&str> = overrides
            .keys()
            .copied()
            .filter(|k| !declared.contains(*k))
            .collect();
        if !unused.is_empty() {
            return Err(whole(format!(
                "build args {unused:?} were not consumed: no ARG declares them"
            )));
        }
        Ok(log)
    }

    /// A path of the emulated filesystem as a host path inside `root`.
    fn host_path(&self, path: &Path) -> Result<PathBuf, String> {
        if path.components().any(|c| c == Component::ParentDir) {
            return Err(format!("{}: `..` is not supported", path.display()));
        }
        if path.starts_with(&self.root) {
            return Ok(path.to_owned());
        }
        Err(format!(
            "{} is outside the emulation root {}: point the ARG that names it into the root with a build arg",
            path.display(),
            self.root.display()
        ))
    }

    fn copy(&self, s: &Stage, args: &str) -> Result<(), String> {
        let vars = s.vars();
        let mut parts = Vec::new();
        for w in words(args) {
            if w.starts_with("--") {
                return Err(format!("COPY {w}: flags are not supported by the emulator"));
            }
            parts.push(expand(&w, &vars)?);
        }
        let Some((dest, sources)) = parts.split_last().filter(|(_, s)| !s.is_empty()) else {
            return Err("COPY needs a source and a destination".into());
        };
        let dest = self.host_path(&s.workdir.join(dest))?;
        let into_dir =
            dest.as_os_str().to_string_lossy().ends_with('/') || sources.len() > 1 || dest.is_dir();
        for src in sources {
            let rel = Path::new(src);
            if rel.is_absolute()
                || rel.components().any(|c| c == Component::ParentDir)
                || src.contains(['*', '?', '['])
            {
                return Err(format!(
                    "COPY {src}: give a plain path inside the build context"
                ));
            }
            let from = self.context.join(rel);
            if !from.is_file() {
                return Err(format!(
                    "COPY {src}: not found in the build context {}",
                    self.context.display()
                ));
            }
            let to = match into_dir {
                true => dest.join(rel.file_name().unwrap_or_default()),
                false => dest.clone(),
            };
            std::fs::create_dir_all(to.parent().unwrap_or(&self.root))
                .map_err(|e| e.to_string())?;
            std::fs::copy(&from, &to)
                .map_err(|e| format!("COPY {src} -> {}: {e}", to.display()))?;
        }
        Ok(())
    }

    /// Runs one RUN step; on failure (message, combined output).
    fn exec(&self, s: &Stage, args: &str) -> Result<String, (String, String)> {
        let err = |m: String| (m, String::new());
        let argv: Vec<String> = if args.starts_with('[') {
            serde_json::from_str(args)
                .map_err(|e| err(format!("exec form needs a JSON array: {e}")))?
        } else if args.starts_with("--") {
            return Err(err(
                "RUN flags (--mount, --network) are not supported by the emulator".into(),
            ));
        } else {
            s.shell.iter().cloned().chain([args.to_owned()]).collect()
        };
        if argv.is_empty() {
            return Err(err("RUN has no command".into()));
        }
        let cwd = s.workdir.clone();
        let (home, tmp) = (self.root.join("root"), self.root.join("tmp"));
        for dir in [&cwd, &home, &tmp] {
            std::fs::create_dir_all(dir).map_err(|e| err(format!("{}: {e}", dir.display())))?;
        }
        let mut cmd = Command::new(&argv[0]);
        cmd.args(&argv[1..]).current_dir(&cwd).env_clear();
        let path = format!(
            "{}:/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin",
            self.venv.join("bin").display()
        );
        cmd.env("PATH", path).env("HOME", &home).env("TMPDIR", &tmp);
        // The base image's libraries: libcudart for the 0.3.12 store.so, as the test env sets it.
        if let Some(ld) = std::env::var_os("LD_LIBRARY_PATH") {
            cmd.env("LD_LIBRARY_PATH", ld);
        }
        cmd.envs(self.base_env.iter().cloned())
            .envs(s.args.iter())
            .envs(s.env.iter());
        match run_logged(cmd, self.step_timeout).map_err(err)? {
            (Some(st), text) if st.success() => Ok(text),
            (Some(st), text) => Err((
                format!("process {argv:?} did not complete successfully: {st}"),
                text,
            )),
            (None, text) => Err((format!("timed out after {:?}", self.step_timeout), text)),
        }
    }
}
