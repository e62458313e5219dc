//! `cargo xtask watch`'s outputs from watch.rs's cache: the formats, and the consumer's
//! scenarios run on each release (`--smoke`).

use crate::watch::{CUDA13, NON_CUDA, online, overlay_sandbox, release, watch_offline};
use mooncake_sos_testkit::env_path;
use serde_json::Value;

#[test]
fn markdown_github_and_text_carry_the_same_verdicts() {
    let sandbox = overlay_sandbox();
    let offline = |format: &str| {
        let run = watch_offline(&sandbox, &online().url, &[format]);
        assert_eq!(run.code, Some(1), "{run:?}");
        run.stdout
    };
    // The annotation points at the cuda image's `strategy` line in api.toml.
    let manifest = sandbox.read("api.toml");
    let line = manifest
        .lines()
        .position(|l| l == "strategy = \"overlay\"")
        .unwrap()
        + 1;
    let github = offline("--github");
    // The path as the run names it: relative to its working directory (the checkout's root).
    let want = format!(
        "::warning file=api.toml,line={line}::image cuda: overlay -> pin at 0.3.12.post1 is possible: "
    );
    assert!(github.starts_with(&want), "{github}\nwant {want}");
    assert_eq!(github.lines().count(), 1, "{github}");

    let markdown = offline("--markdown");
    let lines: Vec<&str> = markdown.lines().collect();
    assert_eq!(
        lines[0],
        "| image | now | transition | blocked | newer releases that break it |"
    );
    assert!(
        lines[2].starts_with("| `cuda` | overlay on mooncake-transfer-engine-cuda13 0.3.11.post1 | **overlay → pin at 0.3.12.post1**"),
        "{markdown}"
    );
    // Every row has its five cells: no `|` inside a reason escapes its cell.
    for row in &lines[2..4] {
        assert_eq!(
            row.matches(" | ").count() - row.matches("\\|").count(),
            4,
            "{row}"
        );
    }

    let text = offline("--timings");
    // Whether 0.3.14's core loads depends on the machine (it needs libcuda.so.1): the line
    // says which, and the verdicts after it are the same either way.
    let release = text
        .lines()
        .find_map(|l| l.strip_prefix("  0.3.14: carries the API; its core "))
        .unwrap_or_else(|| panic!("no verdict line for 0.3.14:\n{text}"));
    assert!(
        release.starts_with("serves it; ") || release.starts_with("not checked: the native core "),
        "{release}"
    );
    assert!(
        release.contains("; one-file overlay in image cuda breaks: mooncake/structured_object_store.py:27: sibling mooncake._partial_read: ")
            && release.ends_with("; smoke not run (not asked for (--smoke))"),
        "{release}"
    );
    assert!(
        text.contains("image cuda: overlay on mooncake-transfer-engine-cuda13 0.3.11.post1\n  transition: overlay -> pin at 0.3.12.post1: "),
        "{text}"
    );
}

#[test]
fn the_smoke_runs_the_consumers_scenarios_on_each_release_that_runs_here() {
    let online = online();
    let deps = env_path("MC_TEST_WHEELS");
    let smoke = ["--json", "--smoke", "--smoke-deps", deps.to_str().unwrap()];
    let run = watch_offline(&online.sandbox, &online.url, &smoke);
    assert_eq!(run.code, Some(1), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    for version in ["0.3.12.post1", "0.3.13.post1"] {
        let r = release(&json, NON_CUDA, version);
        assert_eq!(r["smoke"]["verdict"], "passed", "{r:#}");
        assert!(
            r["smoke"]["summary"]
                .as_str()
                .unwrap()
                .contains(" 0 failed"),
            "{r:#}"
        );
    }
    // Without the API there is nothing to run; 0.3.14's core does not load on this machine's
    // driver stub: not run, and never reported as passed.
    let old = release(&json, NON_CUDA, "0.3.11.post1");
    assert_eq!(old["smoke"]["verdict"], "not_run", "{old:#}");
    let new = release(&json, CUDA13, "0.3.14");
    assert_eq!(new["smoke"]["verdict"], "not_run", "{new:#}");
}

/// Past `--max-releases`, the releases api.toml names are checked, then the newest; the
/// others are listed as not checked, in every format (each checked release costs a download
/// and a check: 60 extra releases took 93 s).
#[test]
fn releases_past_the_cap_are_listed_as_not_checked() {
    let sandbox = &online().sandbox;
    let run = watch_offline(sandbox, &online().url, &["--max-releases", "2"]);
    // 0.3.14, which would break the cuda image, is not checked: nothing to do is seen.
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run
        .stdout
        .lines()
        .filter(|l| l.contains(" checked") || l.starts_with("  0.3") || l.contains("not checked"))
        .map(|l| l.split(':').next().unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            "mooncake-transfer-engine-cuda13 (3 listed, 2 checked)",
            "  not checked (1, past --max-releases)",
            "  0.3.11.post1",
            "  0.3.12.post1",
            "mooncake-transfer-engine-non-cuda (3 listed, 2 checked)",
            "  not checked (1, past --max-releases)",
            "  0.3.11.post1",
            "  0.3.12.post1",
        ],
        "{run:?}"
    );
    assert!(
        run.stdout
            .contains("  not checked (1, past --max-releases): 0.3.14\n")
    );
    assert!(
        run.stdout
            .contains("  not checked (1, past --max-releases): 0.3.13.post1\n")
    );
    let json = watch_offline(sandbox, &online().url, &["--json", "--max-releases", "2"]);
    let json: Value = serde_json::from_str(&json.stdout).unwrap();
    let skipped: Vec<String> = json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| format!("{} {}", p["package"], p["skipped"]))
        .collect();
    assert_eq!(
        skipped,
        [
            format!("\"{CUDA13}\" [\"0.3.14\"]"),
            format!("\"{NON_CUDA}\" [\"0.3.13.post1\"]"),
        ]
    );
    let markdown = watch_offline(
        sandbox,
        &online().url,
        &["--markdown", "--max-releases", "2"],
    );
    assert!(
        markdown.stdout.contains(&format!(
            "| {CUDA13} | 0.3.14 | not checked (past --max-releases) |\n"
        )),
        "{markdown:?}"
    );
}
