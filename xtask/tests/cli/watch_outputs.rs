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

    let markdown_last = markdown.lines().last().unwrap();
    assert_eq!(
        markdown_last,
        format!("Cores: {CORES_CHECKED}"),
        "{markdown}"
    );

    let text = offline("--timings");
    let lines: Vec<&str> = text.lines().collect();
    // Every release that carries the API has its own core read here, 0.3.14's too (the
    // driver stub defines what its core needs), and found not to serve the module.
    assert!(
        lines.contains(&format!("cores: {CORES_CHECKED}").as_str()),
        "{text}"
    );
    assert!(lines.contains(&VERDICT_0_3_14), "{text}");
    assert!(
        text.contains("image cuda: overlay on mooncake-transfer-engine-cuda13 0.3.11.post1\n  transition: overlay -> pin at 0.3.12.post1: "),
        "{text}"
    );
}

/// The four releases of the loopback index that carry the API, each core read.
const CORES_CHECKED: &str = "4 of the 4 API-carrying releases' cores checked";

/// 0.3.14 over the overlay's base: its core read (the store became `mooncake._store`), the
/// sibling modules its module needs, its changes.
const VERDICT_0_3_14: &str = concat!(
    "  0.3.14: carries the API; its core does not serve it (MooncakeDistributedStore.put ",
    "(call (key: str, value: Buffer, config: mooncake.store.ReplicateConfig = ",
    "<mooncake.store.ReplicateConfig object>)): overload differs; found (key: str, value: ",
    "Buffer, config: mooncake._store.ReplicateConfig = <mooncake._store.ReplicateConfig ",
    "object>) [api.toml [[native]] #6]); 21 use(s) api.toml does not declare (first: ",
    "mooncake/structured_object_store.py:27: sibling mooncake._partial_read: undeclared: ",
    "expected a [[sibling]] entry, found required import at module level); one-file overlay ",
    "in image cuda breaks: mooncake/structured_object_store.py:27: sibling ",
    "mooncake._partial_read: expected the module in the image (its base ",
    "mooncake-transfer-engine-cuda13 0.3.11.post1, the module, or an [[upstream.file]]), as ",
    "it is imported at module level, found none; changes: MooncakeBundleTransfer.get: added ",
    "keyword-only parameter batch_slices=None; AUTO_PARALLEL_MIN_BYTES (constant): removed ",
    "(4 * 1024**3); DEFAULT_BUNDLE_CHUNK_BYTES (constant): changed 512 * 1024**2 -> 64 * ",
    "1024**2; MAX_MATRIX_RANGES (constant): added = 4096; STORAGE_GROUP_ID (constant): added = ",
    "\"storage_group_id\"; smoke not run (not asked for (--smoke))"
);

#[test]
fn the_smoke_runs_the_consumers_scenarios_on_each_release_that_runs_here() {
    let online = online();
    let deps = env_path("MC_TEST_WHEELS");
    let smoke = ["--json", "--smoke", "--smoke-deps", deps.to_str().unwrap()];
    let run = watch_offline(&online.sandbox, &online.url, &smoke);
    assert_eq!(run.code, Some(1), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    // Every release that carries the API runs here (0.3.14's core too, on the driver stub).
    let carrying = [
        (NON_CUDA, "0.3.12.post1"),
        (NON_CUDA, "0.3.13.post1"),
        (CUDA13, "0.3.12.post1"),
        (CUDA13, "0.3.14"),
    ];
    for (package, version) in carrying {
        let r = release(&json, package, version);
        assert_eq!(r["smoke"]["verdict"], "passed", "{r:#}");
        assert!(
            r["smoke"]["summary"]
                .as_str()
                .unwrap()
                .contains(" 0 failed"),
            "{r:#}"
        );
    }
    // Without the API there is nothing to run.
    for package in [NON_CUDA, CUDA13] {
        let old = release(&json, package, "0.3.11.post1");
        assert_eq!(old["smoke"]["verdict"], "not_run", "{old:#}");
    }
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
            "cores",
        ],
        "{run:?}"
    );
    // Only the checked releases' cores count: 0.3.12.post1's of each package.
    assert!(
        run.stdout
            .contains("\n\ncores: 2 of the 2 API-carrying releases' cores checked\n\n"),
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
    assert_eq!(
        markdown.stdout.lines().last(),
        Some("Cores: 2 of the 2 API-carrying releases' cores checked"),
        "{markdown:?}"
    );
}
