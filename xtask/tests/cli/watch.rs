//! `cargo xtask watch` over a loopback PEP 503 index serving the real wheels (non-cuda
//! 0.3.11.post1 / 0.3.12.post1 / 0.3.13.post1, cuda13 0.3.11.post1 / 0.3.12.post1 / 0.3.14):
//! 0.3.11.post1 lacks the API, 0.3.12.post1 carries it, 0.3.14 breaks a one-file overlay.
//! One online run fills a cache the other tests read with `--offline`. The pinned module
//! comes from a loopback raw-file server too: no run reaches past 127.0.0.1.

use crate::common::cores::{cuda13_0_3_14_wheel, cuda13_libs, cuda13_wheel};
use crate::common::{Run, Sandbox, XTASK, xtask_in};
use mooncake_sos_testkit::{
    FileServer, MODULE_MEMBER, SimpleIndex, module_of, wheel, wheel_member,
};
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::OnceLock;

fn all_wheels() -> Vec<PathBuf> {
    let mut wheels: Vec<PathBuf> = ["0.3.11.post1", "0.3.12.post1", "0.3.13.post1"]
        .iter()
        .map(|v| wheel(v))
        .collect();
    wheels.push(cuda13_wheel("0.3.11.post1"));
    wheels.push(cuda13_wheel("0.3.12.post1"));
    wheels.push(cuda13_0_3_14_wheel());
    wheels
}

/// `xtask watch --manifest <sandbox>/api.toml --watch-cache CACHE ARGS` (cuda13 cores load
/// with the CUDA 13 runtime and the driver stub).
pub fn watch(sandbox: &Sandbox, cache: &Path, args: &[&str]) -> Run {
    command("watch", sandbox, cache, args)
}

/// `watch ARGS --offline --index-url URL` from the online run's cache.
pub fn watch_offline(sandbox: &Sandbox, url: &str, args: &[&str]) -> Run {
    let mut all = args.to_vec();
    all.extend(["--offline", "--index-url", url]);
    watch(sandbox, online().cache.path(), &all)
}

/// `xtask COMMAND ...` as [`watch`] runs it: the pinned module from [`upstream`].
pub fn command(name: &str, sandbox: &Sandbox, cache: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(XTASK);
    cmd.arg(name)
        .arg("--manifest")
        .arg(sandbox.manifest())
        .arg("--watch-cache")
        .arg(cache)
        .arg("--lib-dir")
        .arg(cuda13_libs())
        .args(["--raw-base-url", &upstream().base_url])
        .args(args)
        .current_dir(sandbox.root());
    Run::from(cmd.output().expect("run xtask"))
}

/// Tag v0.3.12.post1, whose module is the one in the 0.3.12.post1 wheels.
const PIN_COMMIT: &str = "6041a609a8c3af35e778f70db344f145c2914980";
/// Where the upstream's raw-file server has that module.
const PIN_PATH: &str = "/kvcache-ai/Mooncake/6041a609a8c3af35e778f70db344f145c2914980/mooncake-wheel/mooncake/structured_object_store.py";

/// The upstream's raw-file server, on loopback: the module at [`PIN_COMMIT`], else 404.
pub fn upstream() -> &'static FileServer {
    static UPSTREAM: OnceLock<FileServer> = OnceLock::new();
    UPSTREAM.get_or_init(|| {
        let module = wheel_member(&wheel("0.3.12.post1"), MODULE_MEMBER);
        FileServer::start([(PIN_PATH.to_owned(), module)])
    })
}

/// The checkout's sandbox pinned (by `bump`) to [`PIN_COMMIT`]: a pinned module [`upstream`]
/// serves (the checkout's own pin is a file no test has).
pub fn pinned_sandbox() -> Sandbox {
    let sandbox = Sandbox::new();
    let module = module_of("0.3.12.post1", sandbox.root());
    let module = module.to_str().unwrap();
    let run = xtask_in(
        &sandbox,
        &["bump", "--commit", PIN_COMMIT, "--module", module],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    sandbox
}

/// The baseline of a run that had the pinned module.
pub const PINNED_BASELINE: &str = "the pinned module (mooncake-wheel/mooncake/structured_object_store.py at 6041a609, sha256 611ebb876be7)";

pub struct Online {
    /// The index the run read, kept serving: `adopt` reads its pages (the cache is keyed by
    /// its URL).
    #[expect(dead_code, reason = "held only to keep the server running")]
    pub index: SimpleIndex,
    pub url: String,
    pub sandbox: Sandbox,
    pub cache: tempfile::TempDir,
    pub run: Run,
    pub json: Value,
}

/// The one online run: every release downloaded into a fresh cache.
pub fn online() -> &'static Online {
    static ONLINE: OnceLock<Online> = OnceLock::new();
    ONLINE.get_or_init(|| {
        let index = SimpleIndex::serve(&all_wheels());
        let sandbox = pinned_sandbox();
        let cache = tempfile::tempdir().unwrap();
        let run = watch(
            &sandbox,
            cache.path(),
            &["--json", "--index-url", &index.url],
        );
        let json: Value =
            serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("not JSON ({e}): {run:?}"));
        // The pinned module, downloaded from the loopback upstream (and kept beside the
        // sandbox's manifest for the offline runs on it).
        assert_eq!(json["baseline"], PINNED_BASELINE, "{run:?}");
        assert!(
            upstream().requests().iter().any(|r| r == PIN_PATH),
            "{:?}",
            upstream().requests()
        );
        assert!(!run.stderr.contains("the pinned module"), "{run:?}");
        // pip listed and downloaded through the index.
        let requests = index.server.requests();
        let index = index;
        assert!(
            requests
                .iter()
                .any(|r| r == "/simple/mooncake-transfer-engine-cuda13/"),
            "{requests:?}"
        );
        assert_eq!(
            requests.iter().filter(|r| r.starts_with("/files/")).count(),
            6,
            "{requests:?}"
        );
        Online {
            url: index.url.clone(),
            index,
            sandbox,
            cache,
            run,
            json,
        }
    })
}

/// A copy of the online run's cache (wheels hard-linked): a test's edits stay its own.
pub fn cache_copy() -> tempfile::TempDir {
    let copy = tempfile::tempdir().unwrap();
    let status = Command::new("cp")
        .arg("-al")
        .arg(online().cache.path().join("."))
        .arg(copy.path())
        .status()
        .unwrap();
    assert!(status.success());
    copy
}

pub fn release<'a>(json: &'a Value, package: &str, version: &str) -> &'a Value {
    json["packages"]
        .as_array()
        .unwrap()
        .iter()
        .find(|p| p["package"] == package)
        .and_then(|p| {
            p["releases"]
                .as_array()
                .unwrap()
                .iter()
                .find(|r| r["version"] == version)
        })
        .unwrap_or_else(|| panic!("no {package} {version} in {json:#}"))
}

/// Each entry of a JSON list as its `fields`' JSON values, space-separated.
fn fields_of(list: &Value, fields: &[&str]) -> Vec<String> {
    let entry = |e: &Value| -> Vec<String> { fields.iter().map(|f| e[f].to_string()).collect() };
    list.as_array()
        .unwrap()
        .iter()
        .map(|e| entry(e).join(" "))
        .collect()
}

/// 0.3.14 as a one-file overlay over the image's base does not work: its first finding is
/// the sibling module `mooncake._partial_read` the base lacks. Returns that finding.
fn overlay_of_0_3_14_lacks_partial_read(json: &Value) -> &str {
    let overlay = &release(json, CUDA13, "0.3.14")["layers"][0];
    assert_eq!(overlay["works"], false, "{overlay:#}");
    let finding = overlay["findings"][0].as_str().unwrap();
    assert!(
        finding.contains("sibling mooncake._partial_read"),
        "{finding}"
    );
    finding
}

pub const CUDA13: &str = "mooncake-transfer-engine-cuda13";
pub const NON_CUDA: &str = "mooncake-transfer-engine-non-cuda";

#[test]
fn every_release_gets_a_verdict_and_the_pin_sees_the_release_that_would_break_it() {
    let Online { run, json, .. } = online();
    assert_eq!(run.code, Some(1), "a transition is possible: {run:?}");
    let versions = |package: &str| -> Vec<String> {
        json["packages"]
            .as_array()
            .unwrap()
            .iter()
            .find(|p| p["package"] == package)
            .unwrap()["releases"]
            .as_array()
            .unwrap()
            .iter()
            .map(|r| r["version"].as_str().unwrap().to_owned())
            .collect()
    };
    assert_eq!(versions(CUDA13), ["0.3.11.post1", "0.3.12.post1", "0.3.14"]);
    assert_eq!(
        versions(NON_CUDA),
        ["0.3.11.post1", "0.3.12.post1", "0.3.13.post1"]
    );

    // 0.3.11.post1 breaks the contract: it lacks the API.
    let old = release(json, CUDA13, "0.3.11.post1");
    assert_eq!(old["carries_api"], false);
    assert!(
        old["api_mismatches"][0]
            .as_str()
            .unwrap()
            .contains("FieldSchema: missing"),
        "{old:#}"
    );
    // 0.3.12.post1 carries it, its own core serves it, and it works as a one-file overlay.
    let good = release(json, CUDA13, "0.3.12.post1");
    assert_eq!(good["carries_api"], true);
    assert_eq!(good["core"]["verdict"], "serves", "{good:#}");
    // The module alone over the base's wheel (what an overlay would do) works too.
    assert_eq!(good["layers"][0]["layer"], "one-file overlay", "{good:#}");
    assert_eq!(
        good["layers"][0]["base"],
        "mooncake-transfer-engine-cuda13 0.3.11.post1"
    );
    assert_eq!(good["layers"][0]["works"], true, "{good:#}");
    // 0.3.14: its sibling modules break a one-file overlay, and it changes `get`.
    let finding = overlay_of_0_3_14_lacks_partial_read(json);
    assert!(
        finding.starts_with("mooncake/structured_object_store.py:27: sibling mooncake._partial_read: expected the module in the image"),
        "{finding}"
    );
    let new = release(json, CUDA13, "0.3.14");
    // Its own core is read here, and does not serve the module.
    assert_eq!(new["core"]["verdict"], "fails", "{new:#}");
    let changes = fields_of(&new["changes"], &["subject", "change", "detail"]);
    assert!(
        changes.contains(
            &r#""MooncakeBundleTransfer.get" "added" "keyword-only parameter batch_slices=None""#
                .to_owned()
        ),
        "{changes:?}"
    );
    // 0.3.13.post1 changes the default chunk size the consumer relies on.
    let n13 = release(json, NON_CUDA, "0.3.13.post1");
    assert!(
        n13["changes"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["subject"] == "DEFAULT_BUNDLE_CHUNK_BYTES"
                && c["detail"] == "512 * 1024**2 -> 64 * 1024**2"),
        "{n13:#}"
    );

    // The checkout's CUDA image pins 0.3.12.post1: check is blocked (the base ships
    // 0.3.11.post1), and 0.3.14 would break the pin.
    let cuda = &json["images"][0];
    assert_eq!(cuda["image"], "cuda");
    assert_eq!(cuda["strategy"], "pin");
    assert_eq!(cuda["version"], "0.3.12.post1");
    assert!(cuda["transition"].is_null(), "{cuda:#}");
    assert_eq!(cuda["blocked"][0]["to"], "check");
    assert!(
        cuda["blocked"][0]["reason"]
            .as_str()
            .unwrap()
            .starts_with("the base image (v0.5.16-cu130) ships mooncake-transfer-engine-cuda13 0.3.11.post1, which lacks the API"),
        "{cuda:#}"
    );
    assert_eq!(cuda["breaking"][0]["version"], "0.3.14", "{cuda:#}");
    assert_eq!(cuda["breaking"].as_array().unwrap().len(), 1, "{cuda:#}");
    let rocm = &json["images"][1];
    assert_eq!(rocm["strategy"], "fill");
    assert!(rocm["transition"].is_null(), "{rocm:#}");
}

/// The checkout's sandbox with the CUDA image moved back to an overlay of the pinned module.
pub fn overlay_sandbox() -> Sandbox {
    let sandbox = pinned_sandbox();
    sandbox.edit("api.toml", "strategy = \"pin\"", "strategy = \"overlay\"");
    sandbox.edit("api.toml", "pin_version = \"0.3.12.post1\"\n", "");
    sandbox
}

#[test]
fn an_overlay_may_move_to_a_pin_at_0_3_12_post1_and_every_other_step_says_why_not() {
    let run = watch_offline(&overlay_sandbox(), &online().url, &["--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let json: Value = serde_json::from_str(&run.stdout).unwrap();
    let cuda = &json["images"][0];
    assert_eq!(cuda["strategy"], "overlay");
    assert_eq!(cuda["transition"]["to"], "pin");
    assert_eq!(cuda["transition"]["version"], "0.3.12.post1");
    let blocked = fields_of(&cuda["blocked"], &["to", "version", "reason"]);
    assert!(
        blocked[0].starts_with(r#""check" "0.3.11.post1" "the base image (v0.5.16-cu130) ships mooncake-transfer-engine-cuda13 0.3.11.post1, which lacks the API"#),
        "{blocked:?}"
    );
    assert!(
        blocked
            .iter()
            .any(|b| b.starts_with(r#""pin" "0.3.14" "uses what api.toml does not declare"#)),
        "{blocked:?}"
    );
    assert_eq!(
        blocked.len(),
        3,
        "check, pin at 0.3.11.post1, pin at 0.3.14: {blocked:?}"
    );
    // Over the overlay's base, 0.3.12.post1's module works alone; 0.3.14's needs sibling
    // modules the base lacks.
    let good = release(&json, CUDA13, "0.3.12.post1");
    assert_eq!(good["layers"][0]["layer"], "one-file overlay", "{good:#}");
    assert_eq!(good["layers"][0]["works"], true, "{good:#}");
    overlay_of_0_3_14_lacks_partial_read(&json);
}

#[test]
fn offline_repeats_the_online_report_from_the_cache_alone() {
    let online = online();
    // No index at all: a URL nothing listens on.
    let run = watch_offline(&online.sandbox, "http://127.0.0.1:9/simple/", &["--json"]);
    // The cache is keyed by index: the offline run names the online one's.
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("--offline: the cache has no listing");
    let run = watch_offline(&online.sandbox, &online.url, &["--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout, online.run.stdout,
        "offline = online, byte for byte"
    );

    let empty = tempfile::tempdir().unwrap();
    let run = watch(&online.sandbox, empty.path(), &["--offline"]);
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("mooncake-transfer-engine-cuda13: error: --offline: the cache has no listing of this package");
    assert_eq!(run.stdout, "", "no partial output");
}

#[test]
fn nothing_to_do_exits_0_and_an_index_that_fails_exits_2() {
    // Only releases without the API for the overlay's package: no transition.
    let index = SimpleIndex::serve(&[cuda13_wheel("0.3.11.post1"), wheel("0.3.12.post1")]);
    // The checkout's own pin, a file the loopback upstream does not have: [drop]'s first
    // release stands for it, and stderr says why.
    let sandbox = Sandbox::new();
    let cache = tempfile::tempdir().unwrap();
    let run = watch(&sandbox, cache.path(), &["--index-url", &index.url]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout.lines().next(),
        Some(
            "baseline: the module of mooncake-transfer-engine-non-cuda 0.3.12.post1 ([drop] \
             first_release), standing for the pinned one (which is neither in the --fetch cache \
             nor downloadable here)"
        ),
        "{run:?}"
    );
    let warnings = crate::common::lines_where(&run.stderr, |l| {
        !l.starts_with("watch: listing ")
            && !l.ends_with(": the wheel (cache or download)")
            && !l.ends_with(": checking")
    });
    assert_eq!(
        warnings,
        ["watch: the pinned module: server answered `HTTP/1.1 404 Not Found`"],
        "{run:?}"
    );
    run.assert_stdout_has(
        "image cuda: pin on mooncake-transfer-engine-cuda13 0.3.12.post1\n  transition: none now\n",
    );
    drop(index);

    // An index that answers 404 to everything.
    let empty = mooncake_sos_testkit::FileServer::start(Vec::new());
    let url = format!("{}/simple/", empty.base_url);
    let run = watch(&sandbox, cache.path(), &["--json", "--index-url", &url]);
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has(&format!(
            "\nmooncake-transfer-engine-cuda13: error: listing its releases: {url}mooncake-transfer-engine-cuda13/: "
        ));
    assert_eq!(run.stdout, "", "no partial output");
}
