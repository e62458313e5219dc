//! docs/ci.md's workflow against the real command line: every `cargo xtask` command and flag
//! it runs exists (in that command's --help), and the exit codes it documents are the ones
//! the commands use.

use crate::common::{Sandbox, repo_root, xtask};

/// The `cargo xtask ...` command lines of the workflow's yaml block, as word lists.
fn recipe_commands() -> Vec<Vec<String>> {
    let doc = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    let yaml = doc
        .split("```yaml\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a yaml block in docs/ci.md");
    yaml.lines()
        .filter_map(|line| {
            let at = line.find("cargo xtask ")?;
            let words = line[at + "cargo xtask ".len()..].split_whitespace();
            // A shell redirection or pipe ends the command.
            let words = words.take_while(|w| !matches!(*w, ">" | "|" | "||" | "&&" | ";"));
            Some(words.map(str::to_owned).collect())
        })
        .collect()
}

#[test]
fn every_command_and_flag_of_the_ci_recipe_exists() {
    let commands = recipe_commands();
    let names: Vec<&str> = commands.iter().map(|c| c[0].as_str()).collect();
    for want in ["regen", "verify", "watch", "adopt"] {
        assert!(names.contains(&want), "the recipe runs {want}: {names:?}");
    }
    for command in &commands {
        let help = xtask(&[&command[0], "--help"], &[]);
        assert_eq!(help.code, Some(0), "{command:?}: {help:?}");
        for flag in command.iter().filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap();
            assert!(
                help.stdout.contains(&format!("{flag} "))
                    || help.stdout.contains(&format!("{flag}\n")),
                "`cargo xtask {}` has no {flag}:\n{}",
                command[0],
                help.stdout
            );
        }
    }
}

#[test]
fn the_documented_exit_codes_are_the_commands() {
    let doc = std::fs::read_to_string(repo_root().join("docs/ci.md")).unwrap();
    assert!(
        doc.contains("`0` good; `1` a failed check or drift"),
        "the doc's exit codes"
    );
    assert!(
        doc.contains("`2` bad input or an error"),
        "the doc's exit codes"
    );
    let repo = Sandbox::new();
    let m = repo.manifest();
    let m = m.to_str().unwrap();
    assert_eq!(
        xtask(&["regen", "--check", "--manifest", m], &[]).code,
        Some(0)
    );
    let shim = repo.root().join("generated/python/mooncake_sos.py");
    std::fs::write(&shim, "# edited\n").unwrap();
    assert_eq!(
        xtask(&["regen", "--check", "--manifest", m], &[]).code,
        Some(1),
        "drift"
    );
    let bad = xtask(
        &["verify", "--manifest", m, "--module", "/nonexistent.py"],
        &[],
    );
    assert_eq!(bad.code, Some(2), "{bad:?}");
}
