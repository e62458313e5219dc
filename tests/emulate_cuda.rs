//! The CUDA recipe (docker/Dockerfile, overlay region) built for real in a stand-in base
//! image: a venv with mooncake-transfer-engine-non-cuda==0.3.11.post1, whose module lacks the
//! API (the same pure-Python module as the cuda13 0.3.11.post1 wheel of the sglang image).
//! The overlay downloads from a local HTTP server; the file's sha256 is set for the run
//! with MOONCAKE_SOS_SHA256, since the pinned 4dbe5a4c file is not on disk: the good file is
//! the 0.3.12.post1 module, which carries the same API.

use mooncake_sos_codegen::model::Api;
use mooncake_sos_tests::emulate::{
    FileServer, Image, OverlayRun, Venv, base_venv, build_overlay, file_sha256, round_trip,
    sha256_hex, wheel, wheel_member,
};
use mooncake_sos_tests::repo_root;
use std::sync::OnceLock;

/// sha256 of the module in the 0.3.12.post1 wheel (MOONCAKE.md).
const M312_SHA256: &str = "611ebb876be7cd3b6f8d611ac6f821b722ef857aad88aec264bd9053ef3c7a7f";
const MODULE: &str = "mooncake/structured_object_store.py";

fn base() -> &'static Venv {
    static BASE: OnceLock<Venv> = OnceLock::new();
    BASE.get_or_init(|| base_venv("0.3.11.post1"))
}

fn api() -> Api {
    mooncake_sos_codegen::load(&repo_root().join("api.toml"), "api.toml")
        .unwrap_or_else(|d| panic!("{d}"))
}

/// Where the layer downloads the pinned module from, below MOONCAKE_SOS_BASE_URL.
fn pinned_path() -> String {
    let u = api().upstream;
    format!("/{}/{}/{}", u.repo, u.commit, u.path)
}

/// `base_image:base_tag` of the CUDA image in api.toml.
fn cuda_base() -> String {
    let api = api();
    let image = api
        .images
        .iter()
        .find(|i| i.id == "cuda")
        .expect("[image.cuda]");
    format!("{}:{}", image.base_image, image.base_tag)
}

fn good_module() -> Vec<u8> {
    let module = wheel_member(&wheel("0.3.12.post1"), MODULE);
    assert_eq!(sha256_hex(&module), M312_SHA256);
    module
}

/// The good module with `old` (present once) replaced by `new`.
fn edited_module(old: &str, new: &str) -> Vec<u8> {
    let text = String::from_utf8(good_module()).unwrap();
    assert_eq!(
        text.matches(old).count(),
        1,
        "{old:?} in the 0.3.12.post1 module"
    );
    text.replacen(old, new, 1).into_bytes()
}

fn overlay(module: &[u8]) -> OverlayRun {
    build_overlay(base(), &repo_root(), &pinned_path(), module)
}

#[test]
fn good_file_passes_the_check_and_round_trips_on_a_real_master() {
    let run = overlay(&good_module());
    let log = run
        .result
        .unwrap_or_else(|e| panic!("the overlay build failed:\n{e}"));
    assert_eq!(log.from, [cuda_base()]);
    // The hand-written labels after the region see the region's ARGs and the base tag.
    let label = |k: &str| log.labels.get(k).map(String::as_str);
    assert_eq!(
        label("org.opencontainers.image.base.name"),
        Some(cuda_base().as_str())
    );
    assert_eq!(label("io.mooncake-sos.module-sha256"), Some(M312_SHA256));
    let commit = api().upstream.commit;
    assert_eq!(
        label("io.mooncake-sos.module-commit"),
        Some(commit.as_str())
    );
    // The layer fetched the pinned path, once, from the ARG's base URL.
    assert_eq!(run.server.requests(), [pinned_path()]);
    assert_eq!(file_sha256(&run.image.venv.module_file()), M312_SHA256);
    assert!(
        log.output().contains("ok: mooncake.structured_object_store provides FieldSchema, MooncakeBundleTransfer, export_ref, import_ref"),
        "{}",
        log.output()
    );
    let (ok, out) = round_trip(&run.image);
    assert!(ok, "round trip failed:\n{out}");
    assert!(
        out.contains("round trip ok: input_ids, prompts, rewards"),
        "{out}"
    );
}

#[test]
fn tampered_file_fails_on_the_checksum_and_installs_nothing() {
    let good = good_module();
    let mut tampered = good.clone();
    tampered.extend_from_slice(b"\nimport os; os.system('echo owned')\n");
    let image = Image::from_base(base());
    let server = FileServer::start(vec![(pinned_path(), tampered)]);
    let sha = sha256_hex(&good);
    let args = [
        ("MOONCAKE_SOS_BASE_URL", server.base_url.as_str()),
        ("MOONCAKE_SOS_SHA256", sha.as_str()),
    ];
    let err = image
        .build(&repo_root(), "docker/Dockerfile", "overlay", &args)
        .unwrap_err();
    assert!(
        err.instruction.starts_with("RUN set -eu;") && err.instruction.contains("sha256sum -c"),
        "{err}"
    );
    assert!(err.output.contains(": FAILED"), "{err}");
    assert!(
        err.output
            .contains("WARNING: 1 computed checksum did NOT match"),
        "{err}"
    );
    // The base image's module is untouched and the later steps did not run.
    assert_eq!(
        file_sha256(&image.venv.module_file()),
        file_sha256(&base().module_file())
    );
    assert!(!image.venv.site_packages().join("mooncake_sos.py").exists());
}

#[test]
fn a_module_lacking_a_symbol_fails_the_check_naming_it() {
    let module = edited_module(
        "\nimport_ref = import_dataproto_ref\n",
        "\n_import_ref_removed = import_dataproto_ref\n",
    );
    let err = overlay(&module).result.unwrap_err();
    assert!(
        err.instruction.starts_with(
            "RUN python3 -c \"from mooncake.structured_object_store import FieldSchema"
        ),
        "{err}"
    );
    assert!(
        err.output.contains(
            "ImportError: cannot import name 'import_ref' from 'mooncake.structured_object_store'"
        ),
        "{err}"
    );
}

#[test]
fn a_module_lacking_a_method_fails_the_check_naming_it() {
    let module = edited_module("    def release_result(", "    def release_result_removed(");
    let err = overlay(&module).result.unwrap_err();
    assert!(err.instruction.starts_with("RUN python3 -c "), "{err}");
    assert!(
        err.output
            .contains("AssertionError: missing: ['MooncakeBundleTransfer.release_result']"),
        "{err}"
    );
}
