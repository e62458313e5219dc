//! Native-core compatibility, from the real wheels: a pure-Python module overlaid on a
//! native core (store.so) that lacks what it needs fails at the first put, not at import.
//! The generated build check verifies what api.toml's [[native]] entries declare, so a
//! declared need turns that run-time failure into a failed build.
//!
//! Pairings (module over core): the API module (0.3.12.post1, same API as the pin) over the
//! 0.3.12.post1 core passes; the 0.3.13.post1 module over the 0.3.11.post1 core builds with
//! the shipped api.toml (the pin does not need `ReplicateConfig.group_ids`) and then fails
//! at the first put; with a manifest declaring the 0.3.13 module's need the build fails,
//! naming it, while the same manifest over the 0.3.12.post1 core (which has group_ids) passes.

use mooncake_sos_codegen::diag::Source;
use mooncake_sos_codegen::{load_str, render, sync};
use mooncake_sos_tests::emulate::{
    Venv, base_venv, build_overlay, round_trip, wheel, wheel_member,
};
use mooncake_sos_tests::repo_root;
use std::sync::OnceLock;

const MODULE: &str = "mooncake/structured_object_store.py";
const GROUP_IDS_REASON: &str = "modules from #3133 on set ReplicateConfig.group_ids on every put";
const GROUP_IDS_ERROR: &str =
    "AttributeError: 'mooncake.store.ReplicateConfig' object has no attribute 'group_ids'";

fn core_0_3_11() -> &'static Venv {
    static BASE: OnceLock<Venv> = OnceLock::new();
    BASE.get_or_init(|| base_venv("0.3.11.post1"))
}

fn core_0_3_12() -> &'static Venv {
    static BASE: OnceLock<Venv> = OnceLock::new();
    BASE.get_or_init(|| base_venv("0.3.12.post1"))
}

fn module_of(version: &str) -> Vec<u8> {
    wheel_member(&wheel(version), MODULE)
}

/// (the overlay's download path below the base URL, the number of [[native]] entries).
fn manifest_facts(text: &str) -> (String, usize) {
    let api = load_str("api.toml", text).unwrap_or_else(|d| panic!("{d}"));
    let u = &api.upstream;
    (
        format!("/{}/{}/{}", u.repo, u.commit, u.path),
        api.native.len(),
    )
}

fn shipped_manifest() -> String {
    std::fs::read_to_string(repo_root().join("api.toml")).unwrap()
}

/// A copy of the repository's docker/ files regenerated from api.toml plus the 0.3.13
/// module's native need, as `cargo xtask regen --manifest` writes them.
fn repo_declaring_group_ids() -> (tempfile::TempDir, String) {
    let text = format!(
        "{}\n[[native]]\nobject = \"ReplicateConfig\"\nattribute = \"group_ids\"\ninstance = true\nreason = \"{GROUP_IDS_REASON}\"\n",
        shipped_manifest()
    );
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("docker")).unwrap();
    for file in [
        "docker/Dockerfile",
        "docker/Dockerfile.rocm",
        "docker/build.py",
    ] {
        std::fs::copy(repo_root().join(file), dir.path().join(file)).unwrap();
    }
    std::fs::write(dir.path().join("api.toml"), &text).unwrap();
    let api = load_str("api.toml", text.as_str()).unwrap_or_else(|d| panic!("{d}"));
    let outputs = render::render_all(&api).unwrap_or_else(|e| panic!("{e}"));
    let source = Source::new("api.toml", text.as_str());
    let changes = sync::plan(dir.path(), &source, &api.name, &outputs, false)
        .unwrap_or_else(|d| panic!("{d}"));
    sync::apply(dir.path(), &changes).unwrap();
    let shim =
        std::fs::read_to_string(dir.path().join("generated/python/mooncake_sos.py")).unwrap();
    assert!(
        shim.contains(GROUP_IDS_REASON),
        "the regenerated shim lacks the new requirement"
    );
    (dir, text)
}

fn ok_line(natives: usize) -> String {
    format!(
        "ok: mooncake.structured_object_store provides FieldSchema, MooncakeBundleTransfer, export_ref, import_ref and {natives} native requirement(s)"
    )
}

#[test]
fn api_module_over_the_0_3_12_core_passes_every_declared_need_and_round_trips() {
    let (path, natives) = manifest_facts(&shipped_manifest());
    let run = build_overlay(
        core_0_3_12(),
        &repo_root(),
        &path,
        &module_of("0.3.12.post1"),
    );
    let log = run
        .result
        .unwrap_or_else(|e| panic!("the overlay build failed:\n{e}"));
    // The overload checks matched the real docstrings, object-default addresses and all.
    assert!(log.output().contains(&ok_line(natives)), "{}", log.output());
    let (ok, out) = round_trip(&run.image);
    assert!(ok && out.contains("round trip ok"), "{out}");
}

#[test]
fn module_0_3_13_over_the_0_3_11_core_builds_with_the_shipped_manifest_then_fails_at_the_first_put()
{
    let (path, natives) = manifest_facts(&shipped_manifest());
    let run = build_overlay(
        core_0_3_11(),
        &repo_root(),
        &path,
        &module_of("0.3.13.post1"),
    );
    let log = run
        .result
        .unwrap_or_else(|e| panic!("the overlay build failed:\n{e}"));
    assert!(log.output().contains(&ok_line(natives)), "{}", log.output());
    let (ok, out) = round_trip(&run.image);
    assert!(!ok, "the round trip passed:\n{out}");
    assert!(out.contains("setup rc=0"), "{out}");
    assert!(out.contains(GROUP_IDS_ERROR), "{out}");
    assert!(
        out.contains("transfer.put("),
        "not the put that failed:\n{out}"
    );
}

#[test]
fn a_declared_need_the_core_lacks_fails_the_build_naming_it() {
    let (repo, text) = repo_declaring_group_ids();
    let (path, _) = manifest_facts(&text);
    let run = build_overlay(
        core_0_3_11(),
        repo.path(),
        &path,
        &module_of("0.3.13.post1"),
    );
    let err = run.result.unwrap_err();
    assert!(
        err.instruction
            .starts_with("RUN python3 -c \"from mooncake.structured_object_store import"),
        "{err}"
    );
    let miss = format!(
        "mooncake.store.ReplicateConfig.group_ids: missing (needed because {GROUP_IDS_REASON})"
    );
    assert!(err.output.contains(&miss), "{err}");
    // Nothing else is missing: the need is the only difference between this core and the module.
    assert!(err.output.contains("(1 problem(s))"), "{err}");
}

#[test]
fn the_same_declared_need_passes_over_the_0_3_12_core() {
    let (repo, text) = repo_declaring_group_ids();
    let (path, natives) = manifest_facts(&text);
    let run = build_overlay(
        core_0_3_12(),
        repo.path(),
        &path,
        &module_of("0.3.13.post1"),
    );
    let log = run
        .result
        .unwrap_or_else(|e| panic!("the overlay build failed:\n{e}"));
    assert!(log.output().contains(&ok_line(natives)), "{}", log.output());
    let (ok, out) = round_trip(&run.image);
    assert!(ok && out.contains("round trip ok"), "{out}");
}
