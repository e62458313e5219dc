//! docs/ci.md's workflow against the real command line: each flag of each `cargo xtask`
//! command it runs is one of that command's own options (read from the Options of its
//! --help), with a value where the option takes one; and each step, run as the recipe writes
//! it (plus the loopback servers and caches a test needs), exits 0, 1 and 2 in the situations
//! the doc gives those codes.

use crate::common::cores::{cuda13_libs, cuda13_wheel};
use crate::common::{Run, Sandbox, XTASK, repo_root, xtask};
use crate::watch::{cache_copy, online, overlay_sandbox, pinned_sandbox, upstream};
use mooncake_sos_testkit::{FileServer, SimpleIndex, wheel};
use std::collections::BTreeMap;
use std::io::Write;
use std::process::{Command, Stdio};

fn doc() -> String {
    std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap()
}

/// The workflow's yaml block.
pub fn yaml() -> String {
    doc()
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a yaml block in docs/ci.md")
        .to_owned()
}

/// The `cargo xtask ...` command lines of the workflow, as word lists (shell quotes removed).
fn recipe_commands() -> Vec<Vec<String>> {
    yaml()
        .lines()
        .filter_map(|line| {
            let at = line.find("cargo xtask ")?;
            let words = line[at + "cargo xtask ".len()..].split_whitespace();
            // A shell redirection or pipe ends the command.
            let words = words.take_while(|w| !matches!(*w, ">" | "|" | "||" | "&&" | ";"));
            Some(words.map(|w| w.trim_matches('"').to_owned()).collect())
        })
        .collect()
}

/// The recipe's command that starts with `start`.
fn step(start: &[&str]) -> Vec<String> {
    recipe_commands()
        .into_iter()
        .find(|c| {
            c.iter()
                .map(String::as_str)
                .take(start.len())
                .eq(start.iter().copied())
        })
        .unwrap_or_else(|| panic!("no `cargo xtask {}` in the recipe", start.join(" ")))
}

/// A command's own options, from the Options section of its --help: each long flag and
/// whether it takes a value; and whether it takes arguments (an Arguments section).
struct Options {
    flags: BTreeMap<String, bool>,
    arguments: bool,
}

fn options_of(command: &str) -> Options {
    let help = xtask(&[command, "--help"], &[]);
    assert_eq!(help.code, Some(0), "{command}: {help:?}");
    let (mut flags, mut arguments, mut section) = (BTreeMap::new(), false, "");
    for line in help.stdout.lines() {
        let item = line.trim_start();
        if line == item {
            section = line;
            arguments |= line == "Arguments:";
            continue;
        }
        // An option's line, not a description carried over (indented further).
        if section != "Options:" || line.len() - item.len() > 6 {
            continue;
        }
        let item = match item.strip_prefix('-') {
            Some(short) if !short.starts_with('-') => short.split_once(", ").map_or("", |s| s.1),
            _ => item,
        };
        let Some(rest) = item.strip_prefix("--") else {
            continue;
        };
        let name = rest.split(' ').next().unwrap_or(rest);
        flags.insert(name.to_owned(), rest[name.len()..].starts_with(" <"));
    }
    assert!(flags.contains_key("help"), "no options read: {help:?}");
    Options { flags, arguments }
}

#[test]
fn every_flag_of_the_ci_recipe_is_its_commands_own() {
    let commands = recipe_commands();
    let names: Vec<&str> = commands.iter().map(|c| c[0].as_str()).collect();
    for want in ["regen", "verify", "watch", "adopt"] {
        assert!(names.contains(&want), "the recipe runs {want}: {names:?}");
    }
    // watch takes where the pinned module is downloaded from, and its help names no --fetch,
    // which watch does not take (it used to say "For --fetch:").
    let watch = options_of("watch");
    assert!(!xtask(&["watch", "--help"], &[]).stdout.contains("--fetch"));
    assert!(!watch.flags.contains_key("fetch") && watch.flags["raw-base-url"]);
    for command in &commands {
        let own = options_of(&command[0]);
        let mut words = command[1..].iter();
        while let Some(word) = words.next() {
            let Some(flag) = word.strip_prefix("--") else {
                assert!(
                    own.arguments,
                    "`cargo xtask {}` takes no argument {word}",
                    command[0]
                );
                continue;
            };
            let (name, inline) = flag
                .split_once('=')
                .map_or((flag, None), |(n, v)| (n, Some(v)));
            let takes_value = *own.flags.get(name).unwrap_or_else(|| {
                panic!(
                    "`cargo xtask {}` has no --{name}: {:?}",
                    command[0], own.flags
                )
            });
            if takes_value && inline.is_none() {
                let value = words.next();
                assert!(
                    value.is_some_and(|v| !v.starts_with("--")),
                    "{command:?}: --{name} takes a value"
                );
            } else {
                assert!(!takes_value || inline.is_some_and(|v| !v.is_empty()));
                assert!(
                    inline.is_none() || takes_value,
                    "{command:?}: --{name} takes no value"
                );
            }
        }
    }
}

/// `words` run in the checkout `sandbox` (the step's working directory: the command finds
/// its api.toml from there, as a binary run by hand, not from cargo's CARGO_MANIFEST_DIR),
/// `extra` appended.
fn run(words: &[String], sandbox: &Sandbox, extra: &[&str]) -> Run {
    let out = Command::new(XTASK)
        .args(words)
        .args(extra)
        .env_remove("CARGO_MANIFEST_DIR")
        .current_dir(sandbox.root())
        .output()
        .expect("run xtask");
    Run::from(out)
}

/// `words` with each word `from` replaced by `to`.
fn with(words: &[String], from: &str, to: &str) -> Vec<String> {
    assert!(words.iter().any(|w| w == from), "{words:?} lacks {from}");
    words
        .iter()
        .map(|w| if w == from { to } else { w }.to_owned())
        .collect()
}

fn assert_code(what: &str, run: &Run, code: i32) {
    assert_eq!(run.code, Some(code), "{what}: {run:?}");
}

/// What every watch or adopt run of the tests names: the index, the cache, the libraries a
/// core loads with, the pinned module's server.
fn watch_args<'a>(cache: &'a tempfile::TempDir, index: &'a str, libs: &'a str) -> [&'a str; 8] {
    [
        "--watch-cache",
        cache.path().to_str().unwrap(),
        "--lib-dir",
        libs,
        "--raw-base-url",
        &upstream().base_url,
        "--index-url",
        index,
    ]
}

#[test]
fn each_step_exits_as_the_doc_says() {
    let doc = doc().split_whitespace().collect::<Vec<_>>().join(" ");
    for says in [
        "Exit codes (every command): `0` good; `1` a failed check or drift — for `watch`, a \
         transition is possible or a newer release would break an image; `2` bad input or an \
         error (the index, a download, the manifest)",
        "Any non-zero exit fails the job.",
        "# 0: nothing to do; 1: a transition is possible or a newer release would break an \
         # image (the annotations say which); 2: an error (fail the job).",
        "if [ \"$status\" -eq 2 ]; then exit 2; fi",
    ] {
        assert!(doc.contains(says), "docs/ci.md no longer says: {says}");
    }

    // regen --check: 0 current, 1 drift, 2 a bad manifest.
    let regen = step(&["regen", "--check"]);
    let current = pinned_sandbox();
    assert_code("current", &run(&regen, &current, &[]), 0);
    let drifted = pinned_sandbox();
    drifted.write("generated/python/mooncake_sos.py", "# edited\n");
    assert_code("drift", &run(&regen, &drifted, &[]), 1);
    let bad = pinned_sandbox();
    bad.edit("api.toml", "commit = \"6041a609", "commit = \"xx41a609");
    assert_code("bad manifest", &run(&regen, &bad, &[]), 2);

    // verify --fetch: 0 the pinned module holds, 1 a declaration it breaks, 2 no download.
    let fetch = step(&["verify", "--fetch"]);
    let fetching = |sandbox: &Sandbox| {
        let cache = tempfile::tempdir().unwrap();
        let base = upstream().base_url.as_str();
        let cache = cache.path().to_str().unwrap().to_owned();
        run(
            &fetch,
            sandbox,
            &["--raw-base-url", base, "--cache-dir", &cache],
        )
    };
    assert_code("pinned module", &fetching(&current), 0);
    let broken = pinned_sandbox();
    broken.edit("api.toml", "default = \"True\" }", "default = \"False\" }");
    assert_code("a broken declaration", &fetching(&broken), 1);
    // The checkout's own pin: a file the loopback upstream does not have.
    assert_code("no download", &fetching(&Sandbox::new()), 2);

    // verify --consumer: 0 every use declared, 1 an undeclared one, 2 no such file.
    let consumer = step(&["verify", "--consumer"]);
    let path = consumer.last().unwrap().clone();
    let fixture = |name: &str| {
        let file = repo_root().join("xtask/tests/cli/consumers").join(name);
        file.display().to_string()
    };
    let on = |file: &str| run(&with(&consumer, &path, file), &current, &[]);
    assert_code("declared uses", &on(&fixture("object_store.py")), 0);
    assert_code("an undeclared use", &on(&fixture("undeclared.py")), 1);
    assert_code("no such file", &on("/nonexistent/object_store.py"), 2);

    // watch --github: 0 nothing to do, 1 a transition or a newer release that breaks an image,
    // 2 an index that fails.
    let github = step(&["watch", "--github"]);
    let libs = cuda13_libs();
    let cache = cache_copy();
    let url = online().url.clone();
    let nothing = SimpleIndex::serve(&[cuda13_wheel("0.3.11.post1"), wheel("0.3.12.post1")]);
    let run_watch =
        |sandbox: &Sandbox, index: &str| run(&github, sandbox, &watch_args(&cache, index, &libs));
    assert_code("nothing to do", &run_watch(&current, &nothing.url), 0);
    let overlay = overlay_sandbox();
    let transition = run_watch(&overlay, &url);
    assert_code("a transition", &transition, 1);
    transition.assert_stdout(|o| o.starts_with("::warning file=api.toml,line="));
    assert_code(
        "a newer release breaks the pin",
        &run_watch(&current, &url),
        1,
    );
    let failing = FileServer::start(Vec::new());
    let failing = format!("{}/simple/", failing.base_url);
    assert_code("an index that fails", &run_watch(&current, &failing), 2);

    // adopt, for each transition `watch --json` names (the recipe's jq program): 0 done (and
    // regen --check clean after), 1 a move watch does not allow, 2 an image api.toml lacks.
    let json = run(
        &step(&["watch", "--json"]),
        &overlay,
        &watch_args(&cache, &url, &libs),
    );
    assert_code("watch --json", &json, 1);
    let yaml = yaml();
    let program = yaml
        .split("jq -r '")
        .nth(1)
        .and_then(|rest| rest.split('\'').next())
        .expect("the recipe's jq program");
    let mut jq = Command::new("jq")
        .args(["-r", program])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("jq (scripts/setup-test-env.sh installs it)");
    jq.stdin
        .take()
        .unwrap()
        .write_all(json.stdout.as_bytes())
        .unwrap();
    let moves = jq.wait_with_output().unwrap();
    assert!(moves.status.success(), "{moves:?}");
    assert_eq!(String::from_utf8_lossy(&moves.stdout), "cuda pin\n");
    let adopt = step(&["adopt"]);
    let adopting = |image: &str, strategy: &str| {
        let words = with(&with(&adopt, "$image", image), "$strategy", strategy);
        run(&words, &overlay, &watch_args(&cache, &url, &libs))
    };
    assert_code("adopt what watch allows", &adopting("cuda", "pin"), 0);
    assert_code("regen --check after adopt", &run(&regen, &overlay, &[]), 0);
    assert_code("a move watch does not allow", &adopting("cuda", "check"), 1);
    assert_code("an image api.toml lacks", &adopting("gpu", "pin"), 2);
}
