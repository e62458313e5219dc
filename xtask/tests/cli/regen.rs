//! `cargo xtask regen` end to end, on throwaway copies of the repository's own inputs.

use crate::common::{NothingWritten, RegenIn, Run, Sandbox, XTASK};
use std::process::Command;

/// `xtask ARGS` in the test's own working directory, not the repository root.
fn xtask_here(args: &[&str]) -> Run {
    Run::from(Command::new(XTASK).args(args).output().unwrap())
}

/// Another base tag for the CUDA image in api.toml: its Dockerfile and build.py go stale.
fn move_base_tag(sb: &Sandbox) {
    sb.edit(
        "api.toml",
        "base_tag = \"v0.5.16-cu130\"",
        "base_tag = \"v0.5.17-cu130\"",
    );
}

/// A sandbox with `file` edited (`from` to `to`), where regen exits 2 writing nothing and
/// says each of `says` on stderr.
fn refused_after_edit(file: &str, from: &str, to: &str, says: &[&str]) -> Sandbox {
    let sb = Sandbox::new();
    sb.edit(file, from, to);
    let run = sb.run_writing_nothing(2, || sb.run_regen(&[]));
    for text in says {
        run.assert_stderr_has(text);
    }
    sb
}

#[test]
fn the_repository_is_current() {
    let run = xtask_here(&["regen", "--check"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has("are current");
}

#[test]
fn regen_on_a_current_tree_prints_only_unchanged_and_changes_no_byte() {
    let sb = Sandbox::new();
    let before = sb.snapshot();
    let run = sb.run_regen(&[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    let (summary, files) = lines.split_last().unwrap();
    assert!(files.iter().all(|l| l.starts_with("unchanged ")), "{run:?}");
    assert!(summary.starts_with("regen: 0 written,"), "{run:?}");
    assert_eq!(before, sb.snapshot());
}

#[test]
fn output_is_the_same_in_two_places_and_two_runs() {
    let (a, b) = (Sandbox::new(), Sandbox::new());
    for sb in [&a, &b] {
        move_base_tag(sb);
        assert_eq!(sb.run_regen(&[]).code, Some(0));
    }
    let first = a.snapshot();
    assert_eq!(a.run_regen(&[]).code, Some(0));
    assert_eq!(first, a.snapshot(), "a second run changed bytes");
    assert_eq!(
        a.snapshot(),
        b.snapshot(),
        "two directories got different output"
    );
    assert!(a.read("docker/build.py").contains("v0.5.17-cu130"));
    assert!(
        a.read("docker/Dockerfile")
            .contains("ARG SGLANG_IMAGE_TAG=v0.5.17-cu130")
    );
}

#[test]
fn a_hand_edit_of_any_generated_line_fails_the_check_with_a_diff() {
    let edits = [
        (
            "generated/python/mooncake_sos.py",
            "MODULE = ",
            "MODULE  = ",
        ),
        ("generated/src/bindings.rs", "pub const", "pub  const"),
        ("generated/src/lib.rs", "mod bindings;", "mod bindings; "),
        ("generated/Cargo.toml", "[dependencies]", "[dependencies] "),
        (
            "docker/Dockerfile",
            "ARG MOONCAKE_SOS_PIP_INDEX_URL=",
            "ARG MOONCAKE_SOS_PIP_INDEX_URL=0",
        ),
        (
            "docker/Dockerfile.rocm",
            "ARG MOONCAKE_VERSION=0.3.12.post1",
            "ARG MOONCAKE_VERSION=0.3.13.post1",
        ),
        (
            "docker/build.py",
            "\"MOONCAKE_VERSION\": \"0.3.12.post1\"",
            "\"MOONCAKE_VERSION\": \"0.3.11.post1\"",
        ),
    ];
    for (file, from, to) in edits {
        let sb = Sandbox::new();
        sb.edit(file, from, to);
        let run = sb.run_regen(&["--check"]);
        assert_eq!(run.code, Some(1), "{file}: {run:?}");
        assert!(
            run.stdout.contains(&format!("--- a/{file}")),
            "{file}: no diff: {run:?}"
        );
        let removed = run
            .stdout
            .lines()
            .any(|l| l.starts_with('-') && l.contains(to.trim()));
        assert!(
            removed,
            "{file}: the diff does not show the edit going: {run:?}"
        );
        assert!(
            run.stdout.contains("cargo xtask regen"),
            "{file}: no fix named: {run:?}"
        );
        assert!(run.stderr.is_empty(), "{run:?}");
    }
}

#[test]
fn a_hand_edited_region_is_refused_unless_forced() {
    let sb = refused_after_edit(
        "docker/Dockerfile",
        "ARG MOONCAKE_SOS_SHIM_DIR=/opt/mooncake-sos",
        "ARG MOONCAKE_SOS_SHIM_DIR=/srv",
        &["docker/Dockerfile:", "edited by hand"],
    );
    let check = sb.run_regen(&["--check"]);
    assert_eq!(check.code, Some(1), "{check:?}");
    assert!(
        check.stdout.contains("hand-edited: docker/Dockerfile"),
        "{check:?}"
    );
    assert!(check.stdout.contains("--force"), "{check:?}");
    assert_eq!(sb.run_regen(&["--force"]).code, Some(0));
    assert!(!sb.read("docker/Dockerfile").contains("/srv"));
    assert_eq!(sb.run_regen(&["--check"]).code, Some(0));
}

#[test]
fn a_manifest_edit_fails_the_check_until_regen() {
    let sb = Sandbox::new();
    sb.edit(
        "api.toml",
        "name = \"cleanup_dataproto\"",
        "name = \"cleanup\"",
    );
    let run = sb.run_regen(&["--check"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    for file in [
        "generated/python/mooncake_sos.py",
        "generated/src/bindings.rs",
        "docker/Dockerfile",
    ] {
        assert!(
            run.stdout.contains(&format!("stale: {file}")),
            "{file}: {run:?}"
        );
    }
    assert!(
        run.stdout
            .lines()
            .any(|l| l.starts_with('+') && l.contains("'cleanup'")),
        "{run:?}"
    );
    let regen = sb.run_regen(&[]);
    assert_eq!(regen.code, Some(0), "{regen:?}");
    assert!(
        regen.stdout.contains("written   docker/Dockerfile"),
        "{regen:?}"
    );
    assert_eq!(sb.run_regen(&["--check"]).code, Some(0));
}

#[test]
fn missing_and_orphaned_outputs_are_reported_then_fixed() {
    let sb = Sandbox::new();
    std::fs::remove_file(sb.path("generated/python/mooncake_sos.py")).unwrap();
    let stale = sb.read("generated/src/lib.rs");
    sb.write(
        "generated/python/old_shim.py",
        &format!(
            "# {}\n",
            "Generated by `cargo xtask regen` from api.toml; do not edit."
        ),
    );
    sb.write("generated/python/notes.txt", "hand-written, not ours\n");
    let run = sb.run_regen(&["--check"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    run.assert_stdout_has("missing: generated/python/mooncake_sos.py");
    run.assert_stdout_has("orphaned: generated/python/old_shim.py");
    assert!(!run.stdout.contains("notes.txt"), "{run:?}");
    assert!(
        !sb.path("generated/python/mooncake_sos.py").exists(),
        "--check wrote a file"
    );
    let regen = sb.run_regen(&[]);
    assert_eq!(regen.code, Some(0), "{regen:?}");
    assert!(
        regen
            .stdout
            .contains("removed   generated/python/old_shim.py"),
        "{regen:?}"
    );
    assert!(!sb.path("generated/python/old_shim.py").exists());
    assert!(sb.path("generated/python/notes.txt").exists());
    assert_eq!(sb.read("generated/src/lib.rs"), stale);
    assert_eq!(sb.run_regen(&["--check"]).code, Some(0));
}

#[test]
fn bad_target_files_are_located_errors_and_nothing_is_written() {
    let begin = "# >>> api.toml: mooncake-sos fill (generated by cargo xtask regen; do not edit)";
    // (what, how the ROCm Dockerfile changes (None: removed), where, what the error says)
    let cases: [(&str, Mutation, &str, &str); 5] = [
        (
            "missing file",
            Box::new(|_| None),
            "api.toml:",
            "does not exist",
        ),
        (
            "no markers",
            Box::new(|t| Some(cut_region(t))),
            "docker/Dockerfile.rocm:1:1",
            "no region `mooncake-sos fill`",
        ),
        (
            "duplicated region",
            Box::new(|t| Some(format!("{t}{}", region_of(t)))),
            "docker/Dockerfile.rocm:",
            "duplicate region",
        ),
        (
            "unbalanced (no end)",
            Box::new(move |t| Some(format!("{t}{begin}\n"))),
            "docker/Dockerfile.rocm:",
            "has no end marker",
        ),
        (
            "nested",
            Box::new(move |t| {
                Some(t.replacen(
                    "ARG MOONCAKE_VERSION",
                    &format!("{begin}\nARG MOONCAKE_VERSION"),
                    1,
                ))
            }),
            "docker/Dockerfile.rocm:",
            "nested region marker",
        ),
    ];
    for (what, mutate, location, message) in cases {
        let sb = Sandbox::new();
        // Make another output stale too, so a partial write would show.
        move_base_tag(&sb);
        match mutate(&sb.read("docker/Dockerfile.rocm")) {
            Some(text) => sb.write("docker/Dockerfile.rocm", &text),
            None => std::fs::remove_file(sb.path("docker/Dockerfile.rocm")).unwrap(),
        }
        let before = sb.snapshot();
        for args in [&[][..], &["--check"][..]] {
            let run = sb.run_regen(args);
            assert_eq!(run.code, Some(2), "{what} {args:?}: {run:?}");
            assert!(
                run.stderr.contains(location),
                "{what}: want {location}: {run:?}"
            );
            assert!(
                run.stderr.contains(message),
                "{what}: want {message:?}: {run:?}"
            );
            assert!(run.stdout.is_empty(), "{what}: {run:?}");
            assert_eq!(before, sb.snapshot(), "{what}: something was written");
        }
    }
}

type Mutation = Box<dyn Fn(&str) -> Option<String>>;

fn region_of(text: &str) -> String {
    let start = text.find("# >>> api.toml").unwrap();
    let end = text.find("# <<< ").unwrap();
    let end = end + text[end..].find('\n').unwrap() + 1;
    text[start..end].to_string()
}

fn cut_region(text: &str) -> String {
    text.replacen(&region_of(text), "", 1)
}

#[test]
fn a_bad_manifest_exits_2_with_its_location_and_writes_nothing() {
    refused_after_edit(
        "api.toml",
        "commit = \"4dbe5a4c194669850e9abad61172e9878b245b15\"",
        "commit = \"4dbe5a4\"",
        &["api.toml:16:10: error: invalid commit", "\"4dbe5a4\""],
    );
    let missing = xtask_here(&["regen", "--manifest", "/nonexistent/api.toml"]);
    assert_eq!(missing.code, Some(2), "{missing:?}");
    missing.assert_stderr_has("/nonexistent/api.toml");
}

#[test]
fn a_closed_stdout_ends_the_process_quietly_not_with_a_panic() {
    let sb = Sandbox::new();
    move_base_tag(&sb);
    let mut child = Command::new(XTASK)
        .args(["regen", "--check", "--manifest"])
        .arg(sb.path("api.toml"))
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take()); // the reader goes away, like `| head -0`
    let out = child.wait_with_output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Like any Unix filter: killed by SIGPIPE (main restores its default), saying nothing.
    use std::os::unix::process::ExitStatusExt;
    assert_eq!(
        (out.status.signal(), stderr.as_ref()),
        (Some(libc::SIGPIPE), ""),
        "{:?}",
        out.status
    );
}

/// The stubs render from the images' core records: one missing, or not a record, is bad input
/// naming it (and how to write it), with nothing written, --check included.
#[test]
fn an_image_core_record_regen_cannot_read_exits_2_and_writes_nothing() {
    let record = "cores/mooncake-transfer-engine-non-cuda-0.3.12.post1.json";
    let sb = Sandbox::new();
    move_base_tag(&sb);
    std::fs::remove_file(sb.path(record)).unwrap();
    for args in [&[][..], &["--check"]] {
        let run = sb.run_writing_nothing(2, || sb.run_regen(args));
        run.assert_stderr_has(&format!(
            "{record}: error: no record of image `rocm`'s native core"
        ));
        run.assert_stderr_has("cargo xtask core --record WHEEL");
    }
    let sb = Sandbox::new();
    move_base_tag(&sb);
    sb.write(record, "{\"format\": 3, \"wheel\": 1}\n");
    let run = sb.run_writing_nothing(2, || sb.run_regen(&[]));
    run.assert_stderr_has(&format!("{record}:1:"));
    run.assert_stderr_has("not a core record");
}
