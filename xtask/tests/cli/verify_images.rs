//! `verify` and `bump` against the images: each image's recorded core (`cores/`) must serve
//! the module's uses, and each image must have every module of the package the module imports
//! at module level. The real released modules, api.toml and cores/ edited in sandboxes; where
//! a case needs the CUDA image on its base's 0.3.11.post1 core, the sandbox has it back on
//! strategy overlay (`Sandbox::with_cuda_overlay`), as before the pin.

use crate::common::{NothingWritten, Run, Sandbox, line_of, released_module, xtask, xtask_in};
use mooncake_sos_pysource::source::{ModuleSource, sha256_hex};
use mooncake_sos_testkit::{module_of, wheel, wheel_member};
use std::path::PathBuf;

const CUDA_RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.11.post1.json";
const PINNED_RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json";
const ROCM_RECORD: &str = "cores/mooncake-transfer-engine-non-cuda-0.3.12.post1.json";
const GROUP_IDS: &str = "    grouped_config.group_ids = [group_id]";
/// Upstream #3133's commit: the 0.3.13.post1 module's group_ids write.
const COMMIT: &str = "488534c4d34e2dd0c4cc8fa5ffc8bdaedba8e3a9";

/// `xtask bump --manifest <sandbox>/api.toml --commit COMMIT --module MODULE`.
fn bump(repo: &Sandbox, module: &str) -> Run {
    xtask_in(repo, &["bump", "--commit", COMMIT, "--module", module])
}

/// The line verify prints when image `cuda`'s core lacks the 0.3.13 module's group_ids write.
fn group_ids_line(module: &str, line: usize) -> String {
    format!(
        "{module}:{line}: native ReplicateConfig.group_ids: image cuda: expected its core mooncake-transfer-engine-cuda13 0.3.11.post1 ({CUDA_RECORD}) to serve a write on instance, found absent"
    )
}

#[test]
fn verify_names_the_image_whose_core_lacks_what_the_0_3_13_module_writes() {
    let (_dir, m) = released_module("0.3.13.post1");
    let m = m.as_str();
    let line = line_of(&std::fs::read_to_string(m).unwrap(), GROUP_IDS);
    // The shipped manifest pins the CUDA image to 0.3.12.post1, whose core has group_ids: only
    // the manifest's own gaps, no image's.
    let run = xtask(&["verify", "--module", m], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert!(
        !run.report().iter().any(|l| l.contains(": image ")),
        "{run:?}"
    );
    let overlay = Sandbox::with_cuda_overlay();
    let run = xtask_in(&overlay, &["verify", "--module", m]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report = run.report();
    // Beside the manifest's gap, the image's: its 0.3.11.post1 core has no group_ids. The
    // ROCm image's core (0.3.12.post1) has it.
    let undeclared = format!(
        "{m}:{line}: native ReplicateConfig.group_ids: undeclared: expected a [[native]] entry"
    );
    assert!(report.iter().any(|l| l.starts_with(&undeclared)), "{run:?}");
    let image: Vec<&str> = report
        .iter()
        .copied()
        .filter(|l| l.contains(": image "))
        .collect();
    assert_eq!(image, [group_ids_line(m, line)], "{run:?}");

    // bump to it refuses, naming the same, and writes nothing.
    let run = overlay.run_writing_nothing(1, || bump(&overlay, m));
    assert!(
        run.stdout.lines().any(|l| l == group_ids_line(m, line)),
        "{run:?}"
    );
    run.assert_refused("bump");
}

/// A sandbox whose api.toml declares every use the 0.3.13.post1 module makes, so that only
/// the images can refuse it.
fn declaring_the_0_3_13_surface() -> Sandbox {
    let repo = Sandbox::with_cuda_overlay();
    // It reads replica_num too.
    repo.edit(
        "api.toml",
        "access = \"write\"\nby = \"consumer\"",
        "access = \"read-write\"\nby = \"consumer\"",
    );
    // put_tensor keeps its overload: the module reaches it through a forwarding helper, with
    // and without config=, and one of the two paths fits.
    let mut more = String::from(
        "\n[[native]]\nobject = \"ReplicateConfig\"\nattribute = \"group_ids\"\ninstance = true\naccess = \"read-write\"\nreason = \"#3133\"\n\
         \n[[native]]\nobject = \"MooncakeDistributedStore.is_exist\"\nuse = \"optional\"\nreason = \"probe\"\n\
         \n[[native]]\nobject = \"MooncakeDistributedStore.pub_tensor\"\nuse = \"optional\"\nreason = \"probe\"\n\
         \n[[sibling]]\nmodule = \"mooncake._fast_copy\"\nuse = \"optional\"\nreason = \"probe\"\n",
    );
    for name in [
        "data_type",
        "nof_replica_num",
        "prefer_alloc_in_same_node",
        "preferred_nof_segments",
        "preferred_segment",
        "preferred_segments",
        "with_hard_pin",
        "with_soft_pin",
    ] {
        more.push_str(&format!(
            "\n[[native]]\nobject = \"ReplicateConfig\"\nattribute = \"{name}\"\ninstance = true\naccess = \"read-write\"\nuse = \"optional\"\nreason = \"copied where present\"\n"
        ));
    }
    let text = repo.read("api.toml");
    repo.write("api.toml", &format!("{text}{more}"));
    repo
}

#[test]
fn bump_refuses_a_module_an_image_core_cannot_serve_and_writes_nothing() {
    let repo = declaring_the_0_3_13_surface();
    let module = module_of("0.3.13.post1", repo.root());
    let m = module.to_str().unwrap();
    let line = line_of(&std::fs::read_to_string(&module).unwrap(), GROUP_IDS);
    // The manifest declares the module whole: only the image is left.
    let run = xtask_in(&repo, &["verify", "--module", m]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(run.report(), [group_ids_line(m, line)], "{run:?}");

    let run = repo.run_writing_nothing(1, || bump(&repo, m));
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines[0], group_ids_line(m, line), "{run:?}");
    assert!(
        lines.last().unwrap().starts_with("bump: refused: "),
        "{run:?}"
    );
}

#[test]
fn an_image_moved_to_a_core_that_serves_the_module_lets_bump_through() {
    let repo = declaring_the_0_3_13_surface();
    // The CUDA image on the 0.3.12.post1 wheel, whose core has group_ids: recorded from the
    // real wheel (the cores cache makes it quick), then checked from the record.
    repo.edit(
        "api.toml",
        "base_version = \"0.3.11.post1\"",
        "base_version = \"0.3.12.post1\"",
    );
    std::fs::remove_file(repo.path(PINNED_RECORD)).unwrap();
    let module = module_of("0.3.13.post1", repo.root());
    let m = module.to_str().unwrap();
    let run = xtask_in(&repo, &["verify", "--module", m]);
    assert_eq!(run.code, Some(2), "no record yet: {run:?}");
    let whl = crate::common::cores::cuda13_wheel("0.3.12.post1");
    let libs = crate::common::cores::cuda13_libs();
    let run = xtask_in(
        &repo,
        &[
            "core",
            "--record",
            "--lib-dir",
            &libs,
            whl.to_str().unwrap(),
        ],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(repo.path(PINNED_RECORD).is_file());
    // The record written from the wheel is the one committed for the pinned CUDA image.
    assert_eq!(
        repo.read(PINNED_RECORD),
        std::fs::read_to_string(mooncake_sos_testkit::repo_root().join(PINNED_RECORD)).unwrap()
    );
    let run = bump(&repo, m);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        repo.read("api.toml")
            .contains(&format!("commit = \"{COMMIT}\""))
    );
}

#[test]
fn a_missing_record_stops_verify_before_any_output_naming_the_command() {
    let repo = Sandbox::new();
    std::fs::remove_file(repo.path(ROCM_RECORD)).unwrap();
    let module = module_of("0.3.12.post1", repo.root());
    let m = module.to_str().unwrap();
    for args in [
        vec!["verify", "--module", m],
        vec!["verify", "--module", m, "--surface"],
        vec!["bump", "--commit", COMMIT, "--module", m],
    ] {
        let run = xtask_in(&repo, &args);
        assert_eq!(run.code, Some(2), "{run:?}");
        assert_eq!(run.stdout, "", "no partial output: {run:?}");
        let want = format!(
            "{}: error: no record of image `rocm`'s native core mooncake-transfer-engine-non-cuda 0.3.12.post1: write it with `cargo xtask core --record WHEEL` on that release's wheel",
            repo.path(ROCM_RECORD).display()
        );
        assert!(run.stderr.starts_with(&want), "{run:?}");
    }
    // A record of another release under that name is refused too.
    std::fs::copy(repo.path(CUDA_RECORD), repo.path(ROCM_RECORD)).unwrap();
    let run = xtask_in(&repo, &["verify", "--module", m]);
    assert_eq!(run.code, Some(2), "{run:?}");
    run.assert_stderr_has("error: records mooncake-transfer-engine-cuda13 0.3.11.post1, not mooncake-transfer-engine-non-cuda 0.3.12.post1");
}

/// The CUDA 13 0.3.14 wheel, and its module.
fn release_0_3_14() -> (PathBuf, ModuleSource) {
    let whl = crate::common::cores::cuda13_0_3_14_wheel();
    let module = ModuleSource::read_wheel(&whl, "mooncake.structured_object_store").unwrap();
    (whl, module)
}

const SIBLINGS: [&str; 2] = ["_partial_read", "_structured_ranges"];

#[test]
fn siblings_the_base_lacks_are_refused_unless_the_overlay_brings_them() {
    let (whl, module) = release_0_3_14();
    let w = whl.to_str().unwrap();
    let sibling_line = |image: &str, name: &str, provided: &str| {
        format!(
            "{}:{}: sibling mooncake.{name}: image {image}: expected the module in the image ({provided}), as it is imported at module level, found none",
            module.display,
            line_of(&module.text, &format!("from mooncake.{name} import"))
        )
    };
    let cuda = "its base mooncake-transfer-engine-cuda13 0.3.11.post1, the module, or an [[upstream.file]]";
    let rocm = "the core's extension modules, or the pure-Python files of mooncake-transfer-engine-non-cuda 0.3.12.post1";
    let repo = Sandbox::with_cuda_overlay();
    let run = xtask_in(&repo, &["verify", "--wheel", w]);
    assert_eq!(run.code, Some(1), "{run:?}");
    for name in SIBLINGS {
        for (image, provided) in [("cuda", cuda), ("rocm", rocm)] {
            let want = sibling_line(image, name, provided);
            assert!(
                run.report().contains(&want.as_str()),
                "no {want:?}: {run:?}"
            );
        }
    }

    // Declared as a file set, the overlay brings both files: the CUDA image has them; the
    // ROCm image's fill does not take the file set.
    let mut files = String::new();
    for name in SIBLINGS {
        let bytes = wheel_member(&whl, &format!("mooncake/{name}.py"));
        files.push_str(&format!(
            "\n[[upstream.file]]\npath = \"mooncake-wheel/mooncake/{name}.py\"\nsha256 = \"{}\"\n",
            sha256_hex(&bytes)
        ));
    }
    repo.edit(
        "api.toml",
        "\n# The Python shim",
        &format!("{files}\n# The Python shim"),
    );
    let run = xtask_in(&repo, &["verify", "--wheel", w]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let report = run.report();
    for name in SIBLINGS {
        let rocm_line = sibling_line("rocm", name, rocm);
        assert!(report.contains(&rocm_line.as_str()), "{run:?}");
    }
    assert!(
        !report
            .iter()
            .any(|l| l.contains(": sibling ") && l.contains(": image cuda:")),
        "{run:?}"
    );

    // 0.3.14's `mooncake/store/` package in the set would hide the base's store.so.
    let store = wheel_member(&whl, "mooncake/store/__init__.py");
    repo.edit(
        "api.toml",
        "\n# The Python shim",
        &format!(
            "\n[[upstream.file]]\npath = \"mooncake-wheel/mooncake/store/__init__.py\"\nsha256 = \"{}\"\n\n# The Python shim",
            sha256_hex(&store)
        ),
    );
    let run = xtask_in(&repo, &["verify", "--wheel", w]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let want = "api.toml [[upstream.file]] mooncake-wheel/mooncake/store/__init__.py: package mooncake.store: image cuda: expected a file that shadows no native module of the base, found the package mooncake.store over the base's native module of that name, which it would hide on import (mooncake-transfer-engine-cuda13 0.3.11.post1)";
    assert!(run.report().contains(&want), "no {want:?}: {run:?}");
}

#[test]
fn the_0_3_12_module_is_served_by_every_image() {
    let whl = wheel("0.3.12.post1");
    let run = xtask(&["verify", "--wheel", whl.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let want = format!("served by every image ({})", crate::verify_surface::IMAGES);
    run.assert_stdout_has(&want);
}
