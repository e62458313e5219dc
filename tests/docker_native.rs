//! Native-core compatibility in real builds, from the real wheels: a pure-Python module
//! overlaid on a native core (store.so) that lacks what it needs imports cleanly and fails
//! at the first put; a need declared in api.toml ([[native]]) turns that into a failed build.
//!
//! Pairings (module over core), on the CUDA recipe as an overlay (api.toml's CUDA image back on
//! strategy overlay): the 0.3.13.post1 module over the CUDA stand-in's 0.3.11.post1
//! core (loaded against the driver stub) builds with the shipped api.toml's needs, which do not
//! include `ReplicateConfig.group_ids`, when the smoke is off (MOONCAKE_SOS_SMOKE=0: with it on,
//! the build fails at `setup`, tests/docker_pin.rs), and fails at the first put in a container; with a
//! manifest declaring that need the same build fails at the check, naming it; the same
//! manifest over the ROCm stand-in's 0.3.12.post1 core (which has group_ids) builds. (The
//! API module over the 0.3.12.post1 core round-trips in tests/docker_rocm.rs.)

use mooncake_sos_manifest::model::Api;
use mooncake_sos_tests::docker::fixtures::{
    api, api_of, module_of_release, overlay, overlay_manifest, regenerated_repo, shim_ok,
    wheels_index,
};
use mooncake_sos_tests::docker::{Build, Client, StoreMaster, Topology};
use std::time::Duration;

const GROUP_IDS_REASON: &str = "modules from #3133 on set ReplicateConfig.group_ids on every put";
const GROUP_IDS_ERROR: &str =
    "AttributeError: 'mooncake.store.ReplicateConfig' object has no attribute 'group_ids'";
/// Loads the CUDA core against the image's driver stub, as the build's check does.
const WITH_STUB: &str = "d=\"$(mktemp -d)\"; \
    ln -s /usr/local/cuda/lib64/stubs/libcuda.so \"$d/libcuda.so.1\"; \
    export LD_LIBRARY_PATH=\"$d:$LD_LIBRARY_PATH\"; exec \"$@\"";

/// The repository regenerated from the overlay manifest declaring the group_ids need, and
/// that manifest's Api.
fn regenerated_declaring_group_ids() -> (tempfile::TempDir, Api) {
    let manifest = format!(
        "{}\n[[native]]\nobject = \"ReplicateConfig\"\nattribute = \"group_ids\"\ninstance = true\nreason = \"{GROUP_IDS_REASON}\"\n",
        overlay_manifest()
    );
    (regenerated_repo(&manifest), api_of(&manifest))
}

#[test]
fn module_0_3_13_over_the_0_3_11_core_builds_with_the_shipped_manifest_then_fails_at_the_first_put()
{
    let manifest = overlay_manifest();
    let repo = regenerated_repo(&manifest);
    let api = api_of(&manifest);
    let (image, log) = overlay(
        &api,
        repo.path(),
        &module_of_release("0.3.13.post1"),
        &[("MOONCAKE_SOS_SMOKE", "0")],
    )
    .built
    .expect_ok();
    assert!(log.contains(&shim_ok(&api)), "{log}");
    // The image's own master and a client, on the host's loopback.
    let topology = Topology::Loopback;
    let master = StoreMaster::start(&image.tag, &topology);
    let client = Client::start(
        &image.tag,
        &topology,
        &master,
        "cycle",
        &[
            ("SEED", "3"),
            ("MIB", "1"),
            ("REPLICAS", "1"),
            ("DEADLINE", "30"),
        ],
        Some(WITH_STUB),
    );
    let (ok, lines) = client.finish(Duration::from_secs(120));
    let text: Vec<&str> = lines.iter().map(|(_, l)| l.as_str()).collect();
    assert!(!ok, "the round trip passed: {text:?}");
    assert!(
        !text.iter().any(|l| l.starts_with("cycle ")),
        "a cycle passed: {text:?}"
    );
    let last = text.last().copied().unwrap_or_default();
    assert!(last.contains(GROUP_IDS_ERROR), "{text:?}");
    assert!(!last.contains("setup returned"), "{text:?}");
}

#[test]
fn a_declared_need_the_core_lacks_fails_the_build_naming_it() {
    let (repo, api) = regenerated_declaring_group_ids();
    let shim = std::fs::read_to_string(repo.path().join("generated/python/mooncake_sos.py"))
        .expect("the regenerated shim");
    assert!(
        shim.contains(GROUP_IDS_REASON),
        "the shim lacks the new need"
    );
    let failure = overlay(&api, repo.path(), &module_of_release("0.3.13.post1"), &[])
        .built
        .expect_failure();
    assert!(failure.instruction.contains("say() {"), "{failure}");
    failure.assert_says(&format!(
        "mooncake.store.ReplicateConfig.group_ids: missing (needed because {GROUP_IDS_REASON})"
    ));
    // Nothing else is missing: the need is the only difference between this core and module.
    failure.assert_says("(1 problem(s))");
}

#[test]
fn the_same_declared_need_passes_over_the_0_3_12_core() {
    let (repo, declaring) = regenerated_declaring_group_ids();
    let index = wheels_index();
    let (_image, log) = Build::rocm()
        .context(repo.path())
        .pip_index(&index)
        .run()
        .expect_ok();
    assert_eq!(declaring.native.len(), api().native.len() + 1);
    assert!(log.contains(&shim_ok(&declaring)), "{log}");
}
