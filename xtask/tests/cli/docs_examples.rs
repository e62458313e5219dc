//! The docs' command examples, run: every ```console block of README.md and docs/*.md, each in
//! a throwaway copy of the repository, its output compared line for line. In a block, a line
//! `$ COMMAND` runs (bash, stderr into stdout, `cargo xtask` as the built binary), the lines
//! after it are its output, `...` stands for any number of lines, and a last line `[exit N]`
//! gives a non-zero exit code. `<!-- example: needs network -->` (or `needs docker`) just
//! before a block skips it, counted by reason. Output shows the test env's paths as the
//! variables that hold them (`$MC_TEST_WHEELS/...`), as the docs write them.
// Hand-written: trycmd is not an allowed dependency, and this is one parser and one matcher.

use crate::common::{XTASK, repo_root};
use mooncake_sos_testkit::copy_tree;
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// Why a block is not run here; anything else in an `example:` marker is a mistake in the docs.
const SKIP_REASONS: [&str; 2] = ["needs network", "needs docker"];

struct Example {
    /// `FILE:LINE` of the block's opening fence.
    at: String,
    skip: Option<String>,
    steps: Vec<Step>,
}

struct Step {
    command: String,
    expected: Vec<String>,
    exit: i32,
}

/// The console blocks of one Markdown file.
fn examples(file: &str, text: &str) -> Vec<Example> {
    let mut out = Vec::new();
    let mut marker: Option<String> = None;
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        if let Some(rest) = line.strip_prefix("<!-- example: ") {
            let reason = rest.strip_suffix(" -->").unwrap_or(rest).to_string();
            assert!(
                SKIP_REASONS.contains(&reason.as_str()),
                "{file}:{}: unknown example marker {reason:?} (one of {SKIP_REASONS:?})",
                n + 1
            );
            marker = Some(reason);
            continue;
        }
        if line.trim_start() != "```console" {
            if !line.trim().is_empty() {
                marker = None;
            }
            continue;
        }
        let at = format!("{file}:{}", n + 1);
        // A block in a list item is indented: its lines are, by as much as its fence.
        let indent = " ".repeat(line.len() - line.trim_start().len());
        let mut steps: Vec<Step> = Vec::new();
        for (m, line) in lines.by_ref() {
            let line = line
                .strip_prefix(indent.as_str())
                .unwrap_or(line)
                .trim_end();
            if line == "```" {
                break;
            }
            if let Some(command) = line.strip_prefix("$ ") {
                steps.push(Step {
                    command: command.to_string(),
                    expected: Vec::new(),
                    exit: 0,
                });
                continue;
            }
            let step = steps
                .last_mut()
                .unwrap_or_else(|| panic!("{file}:{}: output before any `$ ` command", m + 1));
            assert_eq!(step.exit, 0, "{file}:{}: output after `[exit N]`", m + 1);
            match line
                .strip_prefix("[exit ")
                .and_then(|r| r.strip_suffix(']'))
            {
                Some(code) => step.exit = code.parse().expect("[exit N]: N a number"),
                None => step.expected.push(line.to_string()),
            }
        }
        assert!(
            !steps.is_empty(),
            "{at}: a console block without a `$ ` command"
        );
        out.push(Example {
            at,
            skip: marker.take(),
            steps,
        });
    }
    out
}

/// Whether `actual` is `expected`, a `...` line matching any run of lines (none too).
fn matches(expected: &[String], actual: &[&str]) -> bool {
    match expected.split_first() {
        None => actual.is_empty(),
        Some((first, rest)) if first == "..." => {
            (0..=actual.len()).any(|k| matches(rest, &actual[k..]))
        }
        Some((first, rest)) => actual
            .split_first()
            .is_some_and(|(a, more)| a == first && matches(rest, more)),
    }
}

/// A copy of the repository's files (no build, no VCS, no test env) to run an example in.
fn checkout(dir: &Path) {
    let root = repo_root();
    for entry in std::fs::read_dir(&root).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name().to_string_lossy().to_string();
        if name == "target" || (name.starts_with('.') && name != ".cargo") {
            continue;
        }
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &dir.join(&name));
        } else {
            std::fs::copy(entry.path(), dir.join(&name)).unwrap();
        }
    }
}

/// The test env's paths, longest first, written back as the variables that hold them.
fn env_paths() -> Vec<(String, String)> {
    // Every example that names one needs it: fail with the set-up hint rather than a diff.
    mooncake_sos_testkit::env_path("MC_TEST_WHEELS");
    let mut vars: Vec<(String, String)> = std::env::vars()
        .filter(|(k, v)| k.starts_with("MC_TEST_") && v.starts_with('/'))
        .map(|(k, v)| (v, format!("${k}")))
        .collect();
    vars.sort_by_key(|(v, _)| std::cmp::Reverse(v.len()));
    vars
}

/// Runs an example's steps in order in a fresh copy; the first step that differs, described.
fn run(example: &Example, vars: &[(String, String)]) -> Option<String> {
    let dir = tempfile::tempdir().unwrap();
    checkout(dir.path());
    for step in &example.steps {
        let command = step.command.replace("cargo xtask ", &format!("{XTASK} "));
        let out = Command::new("bash")
            .arg("-c")
            .arg(format!("exec 2>&1\n{command}"))
            .current_dir(dir.path())
            // As run by hand: cargo's variable would name this checkout's api.toml, not the copy's.
            .env_remove("CARGO_MANIFEST_DIR")
            .output()
            .expect("run bash");
        let mut text = String::from_utf8_lossy(&out.stdout).to_string();
        for (value, name) in vars {
            text = text.replace(value.as_str(), name);
        }
        let mut actual: Vec<&str> = text.lines().map(str::trim_end).collect();
        // Blank lines at the end do not show in a block (the located errors end with one).
        while actual.last() == Some(&"") {
            actual.pop();
        }
        let code = out.status.code().unwrap_or(-1);
        if code != step.exit || !matches(&step.expected, &actual) {
            return Some(format!(
                "{}: `$ {}`: expected exit {} and\n{}\n--- found exit {code} and\n{}",
                example.at,
                step.command,
                step.exit,
                step.expected.join("\n"),
                actual.join("\n")
            ));
        }
    }
    None
}

#[test]
fn docs_examples() {
    let root = repo_root();
    let mut files = vec!["README.md".to_string()];
    let mut docs: Vec<String> = std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.ends_with(".md"))
        .map(|n| format!("docs/{n}"))
        .collect();
    docs.sort();
    files.extend(docs);
    let vars = env_paths();
    let (mut ran, mut skipped, mut failures) = (0, BTreeMap::<String, usize>::new(), Vec::new());
    for file in &files {
        let text = std::fs::read_to_string(root.join(file)).unwrap();
        for example in examples(file, &text) {
            match &example.skip {
                Some(reason) => *skipped.entry(reason.clone()).or_default() += 1,
                None => {
                    ran += 1;
                    failures.extend(run(&example, &vars));
                }
            }
        }
    }
    let skips: Vec<String> = skipped.iter().map(|(r, n)| format!("{n} {r}")).collect();
    eprintln!("docs examples: {ran} run, skipped: {}", skips.join(", "));
    assert!(ran > 0, "no console example found in {files:?}");
    assert!(failures.is_empty(), "{}", failures.join("\n\n"));
}

#[test]
fn examples_are_parsed_and_matched_exactly() {
    let doc = "<!-- example: needs docker -->\n```console\n$ a\nx\n[exit 2]\n$ b\n```\n\n```console\n$ c\n...\nz\n```\n- item\n  ```console\n  $ d\n   e\n  ```\n";
    let found = examples("t.md", doc);
    assert_eq!(found.len(), 3);
    assert_eq!(found[2].steps[0].command, "d");
    assert_eq!(found[2].steps[0].expected, [" e"]);
    assert_eq!(found[0].skip.as_deref(), Some("needs docker"));
    assert_eq!(found[0].steps[0].expected, ["x"]);
    assert_eq!((found[0].steps[0].exit, found[0].steps[1].exit), (2, 0));
    assert_eq!(
        (found[1].skip.as_deref(), found[1].at.as_str()),
        (None, "t.md:9")
    );
    let lines = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    assert!(matches(&lines(&["...", "z"]), &["z"]));
    assert!(matches(&lines(&["...", "z"]), &["x", "y", "z"]));
    assert!(!matches(&lines(&["...", "z"]), &["z", "y"]));
    assert!(!matches(&lines(&["x"]), &["x", "y"]));
    assert!(!matches(&lines(&["x", "y"]), &["x"]));
}
