//! `cargo xtask adopt` on sandbox copies, with watch's verdicts from the loopback index of
//! the real wheels (watch.rs's online run and its cache).

use crate::common::{NothingWritten, RegenIn, Sandbox};
use crate::watch::{command, online, pinned_sandbox};

fn adopt(sandbox: &Sandbox, args: &[&str], offline: bool) -> crate::common::Run {
    let online = online();
    let mut all = vec!["--index-url", online.url.as_str()];
    if offline {
        all.push("--offline");
    }
    all.extend_from_slice(args);
    command("adopt", sandbox, online.cache.path(), &all)
}

#[test]
fn a_move_watch_does_not_allow_is_refused_with_its_reason_and_writes_nothing() {
    let sandbox = pinned_sandbox();
    let refused = |code: i32, args: &[&str]| {
        sandbox.run_writing_nothing(code, || adopt(&sandbox, args, true))
    };
    let run = refused(1, &["--image", "cuda", "--strategy", "check"]);
    run.assert_stdout(|o| o.starts_with("adopt: refused: image `cuda` -> check: the base image (v0.5.16-cu130) ships mooncake-transfer-engine-cuda13 0.3.11.post1, which lacks the API"));
    assert!(
        run.stdout.trim_end().ends_with("; nothing written"),
        "{run:?}"
    );
    let pin_0_3_14 = [
        "--image",
        "cuda",
        "--strategy",
        "pin",
        "--version",
        "0.3.14",
    ];
    let run = refused(1, &pin_0_3_14);
    run.assert_stdout_has(
        "-> pin: mooncake-transfer-engine-cuda13 0.3.14 uses what api.toml does not declare",
    );
    let run = refused(1, &["--image", "rocm", "--strategy", "pin"]);
    assert_eq!(
        run.stdout,
        "adopt: refused: watch proposes no release to pin image `rocm`; name one with --version; nothing written\n",
        "{run:?}"
    );
    let run = refused(2, &["--image", "gpu", "--strategy", "check"]);
    run.assert_stderr_has("error: no [image.gpu]");
}

#[test]
fn the_cuda_image_moves_from_pin_to_overlay_and_back_and_regen_check_is_clean() {
    let sandbox = pinned_sandbox();
    let original = sandbox.read("api.toml");
    let run = adopt(
        &sandbox,
        &["--image", "cuda", "--strategy", "overlay"],
        true,
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has("adopt: image `cuda`: pin -> overlay: ");
    let manifest = sandbox.read("api.toml");
    assert!(
        manifest
            .contains("[image.cuda]\ndockerfile = \"docker/Dockerfile\"\nstrategy = \"overlay\"\n"),
        "{manifest}"
    );
    assert!(!manifest.contains("pin_version"), "{manifest}");
    let dockerfile = sandbox.read("docker/Dockerfile");
    assert!(
        dockerfile.contains("# >>> api.toml: mooncake-sos overlay ("),
        "{dockerfile}"
    );
    assert!(!dockerfile.contains("mooncake-sos pin"), "{dockerfile}");
    let (code, out) = sandbox.regen(&["--check"]);
    assert_eq!(code, 0, "{out}");

    // Back to the pin watch proposes, its wheel hashes read from the index's page.
    let run = adopt(&sandbox, &["--image", "cuda", "--strategy", "pin"], false);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has(
        "adopt: image `cuda`: overlay -> pin at 0.3.12.post1 (1 wheel hashes recorded)",
    );
    let manifest = sandbox.read("api.toml");
    // Comments and layout kept: the manifest is the original but for the wheels the loopback
    // index has (one of the release's eight).
    let wheel = "    { file = \"mooncake_transfer_engine_cuda13-0.3.12.post1-cp311-cp311-manylinux_2_28_x86_64.whl\", sha256 = \"ed931f03d894067569ed019394f812028f6ce2836431b267526799af5840fd4b\" },\n";
    let kept: String = original
        .lines()
        .filter(|l| !l.starts_with("    { file = ") || format!("{l}\n") == wheel)
        .map(|l| format!("{l}\n"))
        .collect();
    assert_eq!(manifest, kept);
    let (code, out) = sandbox.regen(&["--check"]);
    assert_eq!(code, 0, "{out}");
    assert!(
        sandbox
            .read("docker/Dockerfile")
            .contains("# >>> api.toml: mooncake-sos pin (")
    );
}

/// The strategies adopt takes are the model's adoptable ones: a fill, or a name api.toml does
/// not know, is a usage error naming those it takes, and nothing is written.
#[test]
fn a_strategy_adopt_does_not_take_is_a_usage_error() {
    let sandbox = pinned_sandbox();
    for strategy in ["fill", "Pin", "copy"] {
        let args = ["--image", "cuda", "--strategy", strategy];
        let run = sandbox.run_writing_nothing(2, || adopt(&sandbox, &args, true));
        run.assert_stderr_has("expected one of: overlay, pin, check");
    }
}
