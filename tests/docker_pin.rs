//! The CUDA recipe on strategy pin (docker/Dockerfile: the pin region and the check step with
//! its smoke) built for real by `docker/build.py cu130` on the stand-in bases of
//! scripts/make-base-images.sh: the real mooncake-transfer-engine-cuda13 0.3.11.post1 wheel in
//! the base, the CUDA 13 runtime from PyPI and no GPU driver (with or without the devel images'
//! driver stub). The pin installs the real 0.3.12.post1 wheel, hash-checked, from a PEP 503
//! index on 127.0.0.1; the check step loads its core and runs the consumer's scenarios against
//! it and the wheel's own master. Beside it, the recipe as it was (the module overlaid on the
//! 0.3.11.post1 core) fails at that smoke, naming `setup`. Asserted on docker's own output.

use mooncake_sos_manifest::model::Layer;
use mooncake_sos_testkit::{wheel_in, wheel_member};
use mooncake_sos_tests::docker::fixtures::{
    BUILDER_HAS_NO_DRIVER, NO_DRIVER, api, api_of, assert_check_step, assert_in_order,
    assert_passed_without_the_core, assert_refused_without_a_driver, core_wheels_index,
    from_the_smoke, module_of_release, overlay, overlay_manifest, regenerated_repo, sha256_hex,
    shim_ok,
};
use mooncake_sos_tests::docker::{Bases, Build, LocalIndex, python_json};
use std::io::Read;
use std::path::PathBuf;

/// (package, base version, pinned version) of the shipped CUDA image.
fn pin() -> (String, String, String) {
    let api = api();
    let image = api.images.iter().find(|i| i.id == "cuda").expect("cuda");
    match &image.layer {
        Layer::Pin {
            base_package,
            base_version,
            release,
        } => (
            base_package.clone(),
            base_version.clone(),
            release.version.clone(),
        ),
        other => panic!("[image.cuda] is not a pin: {other:?}"),
    }
}

/// The pinned release's wheel for this machine's python (cp311), from MC_TEST_CORE_WHEELS.
fn pinned_wheel() -> PathBuf {
    let (package, _, version) = pin();
    wheel_in(
        "MC_TEST_CORE_WHEELS",
        &format!("{}-{version}-cp311-", package.replace('-', "_")),
    )
}

/// Every scenario of api.toml passed, the one that needs torch included: the CUDA stand-in
/// holds torch 2.11.0, as the real image's sglang has it.
fn assert_scenarios_pass(log: &str) {
    let after = from_the_smoke(log);
    let api = api();
    assert!(
        api.scenarios.iter().any(|s| s.needs_torch),
        "a torch scenario"
    );
    for s in &api.scenarios {
        assert!(
            after.contains(&format!("smoke {}: ok (", s.name)),
            "{}: {after}",
            s.name
        );
    }
    assert!(
        after.contains(&format!(
            " {} ok, 0 failed, 0 not run;",
            api.scenarios.len()
        )),
        "{after}"
    );
}

#[test]
fn the_cuda_recipe_pins_the_release_hash_checked_and_passes_its_scenarios() {
    let bases = Bases::get();
    let (package, base_version, version) = pin();
    let index = core_wheels_index();
    let (image, log) = Build::cuda().pip_index(&index).run().expect_ok();
    assert_in_order(
        &log,
        &[
            &format!("mooncake-sos pin: {package} {base_version} -> {version}"),
            &format!(
                "mooncake-sos check: {NO_DRIVER}: loading the native core against the driver stub /usr/local/cuda/lib64/stubs/libcuda.so for this check only"
            ),
            &shim_ok(&api()),
            "mooncake-sos check: smoke: the consumer's scenarios",
            &format!(
                "mooncake-sos check: passed, the native core loaded against the driver stub, the \
                 consumer's scenarios (--smoke): {} passed; not proved: that it works with a real \
                 driver and GPU",
                api().scenarios.len()
            ),
        ],
    );
    assert_scenarios_pass(&log);
    // pip took the pinned wheel from the index and nothing else.
    let wheel = pinned_wheel();
    let file = wheel.file_name().unwrap().to_str().unwrap();
    let fetched: Vec<String> = index
        .requests()
        .into_iter()
        .filter(|r| r.starts_with("/files/"))
        .collect();
    assert_eq!(fetched.len(), 1, "{fetched:?}");
    assert!(fetched[0].ends_with(file), "{fetched:?}");
    let labels = image.labels();
    assert_eq!(
        labels.get("io.mooncake-sos.pinned").map(String::as_str),
        Some(format!("{package}=={version}").as_str())
    );
    assert_eq!(
        labels
            .get("org.opencontainers.image.base.name")
            .map(String::as_str),
        Some(bases.cuda.as_str())
    );
    // Module, core and master come from the one wheel; the base's release is gone.
    let inside = python_json(
        &image.tag,
        "import hashlib, importlib.metadata as m, importlib.util, json, os; \
         d = os.path.dirname(importlib.util.find_spec('mooncake.structured_object_store').origin); \
         h = lambda p: hashlib.sha256(open(os.path.join(d, p), 'rb').read()).hexdigest(); \
         print(json.dumps({'version': m.version('mooncake-transfer-engine-cuda13'), \
         'module': h('structured_object_store.py'), 'core': h('store.so'), \
         'engine': h('engine.so'), 'master': h('mooncake_master')}))",
    );
    assert_eq!(inside["version"], version.as_str(), "{inside}");
    for (key, member) in [
        ("module", "mooncake/structured_object_store.py"),
        ("core", "mooncake/store.so"),
        ("engine", "mooncake/engine.so"),
        ("master", "mooncake/mooncake_master"),
    ] {
        assert_eq!(
            inside[key],
            sha256_hex(&wheel_member(&wheel, member)).as_str(),
            "{member} is not the pinned wheel's"
        );
    }
}

/// Item 6 of issue #21: sglang imports `mooncake.engine` unguarded (`[image.cuda]
/// user_modules`), so the check step loads it beside the core: a pinned wheel whose engine
/// cannot load (here its engine.so is another shared object of the wheel, no Python module)
/// fails the build at the check step, naming the module, before anything else is checked.
#[test]
fn a_pinned_wheel_whose_engine_cannot_load_fails_the_check_naming_it() {
    let wheel = pinned_wheel();
    let name = wheel.file_name().unwrap().to_str().unwrap().to_owned();
    let dir = tempfile::tempdir().expect("temp dir");
    let doctored = dir.path().join(&name);
    {
        let mut from =
            zip::ZipArchive::new(std::fs::File::open(&wheel).expect("open")).expect("zip");
        let mut to = zip::ZipWriter::new(std::fs::File::create(&doctored).expect("create"));
        let mut lib = Vec::new();
        from.by_name("mooncake/libasio.so")
            .expect("libasio.so in the wheel")
            .read_to_end(&mut lib)
            .expect("read");
        for i in 0..from.len() {
            let entry = from.by_index(i).expect("entry");
            if entry.name().is_ok_and(|n| n == "mooncake/engine.so") {
                drop(entry);
                let options = zip::write::SimpleFileOptions::default().unix_permissions(0o755);
                to.start_file("mooncake/engine.so", options).expect("start");
                std::io::Write::write_all(&mut to, &lib).expect("write");
            } else {
                to.raw_copy_file(entry).expect("copy");
            }
        }
        to.finish().expect("finish");
    }
    let sha = sha256_hex(&std::fs::read(&doctored).expect("read"));
    let shipped = mooncake_sos_tests::docker::fixtures::shipped_manifest();
    let at = shipped.find(&name).expect("the wheel in [[release]]");
    let old = &shipped[at..at + shipped[at..].find('}').expect("entry end")];
    let manifest = shipped.replacen(old, &format!("{name}\", sha256 = \"{sha}\" "), 1);
    assert_ne!(manifest, shipped);
    let repo = regenerated_repo(&manifest);
    let index = LocalIndex::start(&[dir.path()]);
    let failure = Build::cuda()
        .context(repo.path())
        .pip_index(&index)
        .run()
        .expect_failure();
    assert_check_step(&failure);
    assert_in_order(
        &failure.output,
        &[
            "loading the native core against the driver stub",
            "dynamic module does not define module export function (PyInit_engine)",
            "mooncake-sos check: error: the native modules the image needs (mooncake.store, \
             mooncake.engine) do not all import (the error above)",
        ],
    );
    failure.assert_never_says("ok: ");
}

#[test]
fn a_wheel_whose_sha256_api_toml_does_not_list_is_refused() {
    // The pinned wheel's name with other bytes: what a compromised mirror would serve.
    let dir = tempfile::tempdir().expect("temp dir");
    let wheel = pinned_wheel();
    let mut bytes = std::fs::read(&wheel).expect("read the wheel");
    bytes.extend_from_slice(b"tampered");
    std::fs::write(dir.path().join(wheel.file_name().unwrap()), &bytes).expect("write");
    let index = LocalIndex::start(&[dir.path()]);
    let failure = Build::cuda().pip_index(&index).run().expect_failure();
    assert!(
        failure.instruction.contains("--require-hashes"),
        "not the pin step: {failure}"
    );
    failure.assert_says("THESE PACKAGES DO NOT MATCH THE HASHES FROM THE REQUIREMENTS FILE");
    assert!(
        failure.output.contains(&sha256_hex(&bytes)),
        "pip names the served file's sha256: {failure}"
    );
    failure.assert_never_says("mooncake-sos check");
}

/// Item 6 of issue #14: the recipe as it was (the API module overlaid on the base's
/// 0.3.11.post1 wheel) fails the build at the check step's smoke, naming `setup`: that core
/// refuses the rollout manager's global_segment_size=0.
#[test]
fn the_old_overlay_on_the_0_3_11_core_fails_at_the_smoke_naming_setup() {
    let manifest = overlay_manifest();
    let repo = regenerated_repo(&manifest);
    let dockerfile =
        std::fs::read_to_string(repo.path().join("docker/Dockerfile")).expect("Dockerfile");
    assert!(
        dockerfile.contains("# >>> api.toml: mooncake-sos overlay (")
            && !dockerfile.contains("pip install"),
        "{dockerfile}"
    );
    let failure = overlay(
        &api_of(&manifest),
        repo.path(),
        &module_of_release("0.3.12.post1"),
        &[],
    )
    .built
    .expect_failure();
    assert_check_step(&failure);
    let out = &failure.output;
    assert_in_order(
        out,
        &[
            "loading the native core against the driver stub",
            &shim_ok(&api()),
            "mooncake-sos check: smoke: the consumer's scenarios",
            "smoke rollout-manager-to-trainer: FAILED: ",
        ],
    );
    // The error goes to stderr: docker interleaves the two streams in no fixed order.
    assert!(
        out.contains(
            "mooncake-sos check: error: the smoke failed: the native core of this image cannot \
             serve the consumer"
        ),
        "{out}"
    );
    let line = out
        .lines()
        .find(|l| l.starts_with("smoke rollout-manager-to-trainer: FAILED"))
        .expect("the scenario's line");
    assert!(
        line.contains("rollout_manager: setup") && line.contains("-600"),
        "{line}"
    );
    // The core's own reason, from the log the smoke shows for a failed scenario.
    assert!(
        out.contains("Invalid global_segment_size: 0, must be between 1024 and 1099511627776"),
        "{failure}"
    );
    assert!(!out.contains("mooncake-sos check: passed"), "{failure}");
}

#[test]
fn without_a_driver_or_its_stub_the_pin_build_refuses_unless_the_build_arg_says_so() {
    let bases = Bases::get();
    let index = core_wheels_index();
    let build = || {
        Build::cuda()
            .pip_index(&index)
            .arg("SGLANG_IMAGE_TAG", bases.cuda_nostub_tag())
    };
    let failure = build().run().expect_failure();
    assert_refused_without_a_driver(&failure);
    // (The failed instruction, which docker repeats, names the smoke; its output does not.)
    failure.assert_never_says("mooncake-sos check: smoke:");

    let (_image, log) = build().args(&[BUILDER_HAS_NO_DRIVER]).run().expect_ok();
    assert_passed_without_the_core(&log, &api(), ", nor the consumer's scenarios");
    assert!(
        !log.contains("mooncake-sos check: smoke:") && !log.contains("\nsmoke "),
        "the smoke ran without a core: {log}"
    );
}
