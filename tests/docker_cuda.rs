//! The CUDA recipe as an overlay (api.toml's CUDA image back on strategy overlay, regenerated:
//! the overlay region and check step) built for real by `docker/build.py cu130` on the
//! stand-in bases of scripts/make-base-images.sh: the real
//! mooncake-transfer-engine-cuda13 0.3.11.post1 wheel, whose module lacks the API and whose
//! store.so needs the GPU driver's libcuda.so.1, on a builder without a GPU. The overlay
//! downloads from a server on 127.0.0.1; the good file is the 0.3.12.post1 module (the same
//! API as the pin, which is not on disk), its sha256 passed as MOONCAKE_SOS_SHA256.
//! Every failure is asserted on docker's own output. These are the overlay's and the check's
//! mechanics; the 0.3.11.post1 core fails the smoke (tests/docker_pin.rs), so a build here
//! that must pass turns it off (MOONCAKE_SOS_SMOKE=0) and the log says it did not run.

use mooncake_sos_manifest::model::Api;
use mooncake_sos_tests::docker::fixtures::{
    BUILDER_HAS_NO_DRIVER, NO_DRIVER, api_of, assert_check_step, assert_in_order,
    assert_passed_without_the_core, assert_refused_without_a_driver, module_of_release, overlay,
    overlay_manifest, pinned_path, regenerated_repo, sha256_hex, shim_ok,
};
use mooncake_sos_tests::docker::{Bases, Failure, derived_image, python_json, run_python};
use std::sync::OnceLock;

/// sha256 of the module in the 0.3.12.post1 wheel (`cargo xtask verify --wheel` prints it).
const M312_SHA256: &str = "611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f";

fn good_module() -> Vec<u8> {
    let module = module_of_release("0.3.12.post1");
    assert_eq!(sha256_hex(&module), M312_SHA256);
    module
}

/// The good module with `old` (present once) replaced by `new`.
fn edited_module(old: &str, new: &str) -> Vec<u8> {
    let text = String::from_utf8(good_module()).unwrap();
    assert_eq!(text.matches(old).count(), 1, "{old:?} in the module");
    text.replacen(old, new, 1).into_bytes()
}

/// The repository regenerated with the CUDA image on strategy overlay, once per test binary.
fn overlay_repo() -> &'static tempfile::TempDir {
    static REPO: OnceLock<tempfile::TempDir> = OnceLock::new();
    REPO.get_or_init(|| regenerated_repo(&overlay_manifest()))
}

fn api() -> Api {
    api_of(&overlay_manifest())
}

fn overlay_with(module: &[u8], args: &[(&str, &str)]) -> mooncake_sos_tests::docker::Built {
    overlay(&api(), overlay_repo().path(), module, args).built
}

/// The overlay of `module` with `args` fails at the generated check step (not at the
/// overlay's download step).
fn check_fails(module: &[u8], args: &[(&str, &str)]) -> Failure {
    let failure = overlay_with(module, args).expect_failure();
    assert_check_step(&failure);
    failure
}

/// The good module overlaid on `base` changed by the shell command `run` (the image's
/// SGLANG_IMAGE_TAG), with `args` besides, fails at the check step.
fn check_fails_on_a_changed_base(base: &str, run: &str, args: &[(&str, &str)]) -> Failure {
    let changed = derived_image(base, run);
    let mut all = vec![("SGLANG_IMAGE_TAG", changed.tag_only())];
    all.extend_from_slice(args);
    check_fails(&good_module(), &all)
}

#[test]
fn good_file_builds_and_the_check_loads_the_core_against_the_driver_stub() {
    let bases = Bases::get();
    let api = api();
    let run = overlay(
        &api,
        overlay_repo().path(),
        &good_module(),
        &[("MOONCAKE_SOS_SMOKE", "0")],
    );
    assert_eq!(
        run.requests(),
        1,
        "the overlay fetched the pinned path once"
    );
    let (image, log) = run.built.expect_ok();
    assert_in_order(
        &log,
        &[
            "/tmp/tmp.",
            ": OK",
            &format!(
                "mooncake-sos check: {NO_DRIVER}: loading the native core against the driver stub /usr/local/cuda/lib64/stubs/libcuda.so for this check only"
            ),
            &shim_ok(&api),
            "mooncake-sos check: passed, the native core loaded against the driver stub; not proved: that it works with a real driver and GPU, nor the consumer's scenarios (MOONCAKE_SOS_SMOKE=0: the smoke did not run)",
        ],
    );
    let labels = image.labels();
    let label = |k: &str| labels.get(k).map(String::as_str);
    assert_eq!(
        label("org.opencontainers.image.base.name"),
        Some(bases.cuda.as_str())
    );
    assert_eq!(label("io.mooncake-sos.module-sha256"), Some(M312_SHA256));
    assert_eq!(
        label("io.mooncake-sos.module-commit"),
        Some(api.upstream.commit.as_str())
    );
    // Inside the image: the overlaid module, the shim on the path, and no trace of the
    // check's libcuda.so.1 link (the stub was on the loader path for that step only).
    let inside = python_json(
        &image.tag,
        "import hashlib, importlib.util, json, os, glob; \
             spec = importlib.util.find_spec('mooncake.structured_object_store'); \
             print(json.dumps({'module': hashlib.sha256(open(spec.origin, 'rb').read()).hexdigest(), \
             'shim': importlib.util.find_spec('mooncake_sos') is not None, \
             'links': glob.glob('/tmp/**/libcuda.so.1', recursive=True) + glob.glob('/usr/**/libcuda.so.1', recursive=True), \
             'ld_path': os.environ.get('LD_LIBRARY_PATH')}))",
    );
    assert_eq!(inside["module"], M312_SHA256, "{inside}");
    assert_eq!(inside["shim"], true, "{inside}");
    assert_eq!(inside["links"], serde_json::json!([]), "{inside}");
    assert_eq!(
        inside["ld_path"], "/usr/local/nvidia/lib:/usr/local/nvidia/lib64",
        "{inside}"
    );
    // At run time the CUDA core needs a driver: the shim says so, naming the library.
    let (ok, out) = run_python(&image.tag, "import mooncake_sos");
    assert!(!ok && out.contains("libcuda.so.1"), "{out}");
}

#[test]
fn tampered_file_fails_the_build_at_the_checksum() {
    let mut tampered = good_module();
    tampered.extend_from_slice(b"\nimport os; os.system('echo owned')\n");
    let api = api();
    // Served: the tampered file; expected: the good file's sha256.
    let server = mooncake_sos_testkit::FileServer::start([(pinned_path(&api), tampered)]);
    let failure = mooncake_sos_tests::docker::Build::cuda()
        .context(overlay_repo().path())
        .arg("MOONCAKE_SOS_BASE_URL", &server.base_url)
        .arg("MOONCAKE_SOS_SHA256", M312_SHA256)
        .run()
        .expect_failure();
    assert!(
        failure.instruction.starts_with("RUN set -eu;")
            && failure.instruction.contains("sha256sum -c"),
        "{failure}"
    );
    failure.assert_says(": FAILED");
    failure.assert_says("WARNING: 1 computed checksum did NOT match");
    failure.assert_never_says("mooncake-sos check");
}

#[test]
fn a_module_lacking_a_symbol_fails_the_check_naming_it() {
    let module = edited_module(
        "\nimport_ref = import_dataproto_ref\n",
        "\n_import_ref_removed = import_dataproto_ref\n",
    );
    let failure = check_fails(&module, &[]);
    failure.assert_says(
        "ImportError: cannot import name 'import_ref' from 'mooncake.structured_object_store'",
    );
}

#[test]
fn a_module_lacking_a_method_fails_the_check_naming_it() {
    let module = edited_module("    def release_result(", "    def release_result_removed(");
    let failure = check_fails(&module, &[]);
    failure.assert_says("AssertionError: missing: ['MooncakeBundleTransfer.release_result']");
}

#[test]
fn without_driver_or_stub_the_check_refuses_unless_the_build_arg_says_so() {
    let bases = Bases::get();
    let nostub = ("SGLANG_IMAGE_TAG", bases.cuda_nostub_tag());
    let failure = overlay_with(&good_module(), &[nostub]).expect_failure();
    assert_refused_without_a_driver(&failure);

    let (_image, log) = overlay_with(&good_module(), &[nostub, BUILDER_HAS_NO_DRIVER]).expect_ok();
    assert_passed_without_the_core(&log, &api(), "");
}

#[test]
fn without_the_driver_a_module_lacking_a_symbol_still_fails() {
    let bases = Bases::get();
    let module = edited_module(
        "\nexport_ref = export_dataproto_ref\n",
        "\n_export_ref_removed = export_dataproto_ref\n",
    );
    let failure = check_fails(
        &module,
        &[
            ("SGLANG_IMAGE_TAG", bases.cuda_nostub_tag()),
            BUILDER_HAS_NO_DRIVER,
        ],
    );
    failure.assert_says("ImportError: cannot import name 'export_ref'");
}

#[test]
fn a_core_missing_another_library_is_broken_even_without_a_driver() {
    let failure = check_fails_on_a_changed_base(
        &Bases::get().cuda_nostub,
        "rm -f /usr/lib/x86_64-linux-gnu/libnuma.so.1*",
        &[BUILDER_HAS_NO_DRIVER],
    );
    assert!(
        failure.output.contains(
            "mooncake-sos check: error: the native core \
             /usr/local/lib/python3.11/dist-packages/mooncake/store.so, \
             /usr/local/lib/python3.11/dist-packages/mooncake/engine.so is broken: \
             libnuma.so.1, libcuda.so.1 not found (ldd)"
        ) || failure.output.contains(
            "mooncake-sos check: error: the native core \
             /usr/local/lib/python3.11/dist-packages/mooncake/store.so, \
             /usr/local/lib/python3.11/dist-packages/mooncake/engine.so is broken: \
             libcuda.so.1, libnuma.so.1 not found (ldd)"
        ),
        "{failure}"
    );
}

#[test]
fn a_missing_core_fails_the_check_saying_so() {
    let failure = check_fails_on_a_changed_base(
        &Bases::get().cuda,
        "rm /usr/local/lib/python3.11/dist-packages/mooncake/store.so",
        &[],
    );
    failure.assert_says(
        "no native library mooncake.store is installed\nmooncake-sos check: error: a \
             native module the image needs (mooncake.store, mooncake.engine) is not installed \
             (named above)",
    );
}
