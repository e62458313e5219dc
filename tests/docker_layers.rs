//! What the generated layers install, built for real by `docker/build.py` on the stand-in
//! bases of scripts/make-base-images.sh, from a repository regenerated from an edited api.toml:
//! - the overlay's file set (`[[upstream.file]]`): every file downloaded from a server on
//!   127.0.0.1 and checked against its sha256 before any is installed, each where its path
//!   says (a subpackage's directory made); one file that does not match fails the step, and
//!   the image gets none of them;
//! - the fill's subpackages: every `*.py` of the wheel's package and its subpackages lands
//!   where nothing is installed, except a package that would shadow an installed native
//!   module (0.3.14's `mooncake/store/` beside the source build's `store.so`).
//!
//! These are the layers' file mechanics, not whether the core serves the consumer: the builds
//! pass MOONCAKE_SOS_SMOKE=0 (the overlay is over the 0.3.11.post1 core, which fails the
//! smoke: tests/docker_pin.rs).

use mooncake_sos_testkit::{FileServer, wheels_dir};
use mooncake_sos_tests::docker::fixtures::{
    module_of_release, overlay_manifest, pinned_path, regenerated_repo, sha256_hex,
    shipped_manifest,
};
use mooncake_sos_tests::docker::{Bases, Build, LocalIndex, package_files};
use std::collections::HashMap;
use std::io::Read;
use std::path::PathBuf;

/// `$MC_TEST_OTHER_WHEELS`: the CUDA 13 0.3.14 wheel.
fn other_wheels() -> PathBuf {
    std::env::var_os("MC_TEST_OTHER_WHEELS")
        .map(PathBuf::from)
        .expect(mooncake_sos_tests::SETUP_HINT)
}

fn wheel_0_3_14() -> PathBuf {
    std::fs::read_dir(other_wheels())
        .expect("list MC_TEST_OTHER_WHEELS")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.to_string_lossy()
                .contains("mooncake_transfer_engine_cuda13-0.3.14-")
        })
        .expect(mooncake_sos_tests::SETUP_HINT)
}

fn member(wheel: &std::path::Path, name: &str) -> Vec<u8> {
    let mut zip = zip::ZipArchive::new(std::fs::File::open(wheel).unwrap()).unwrap();
    let mut bytes = Vec::new();
    zip.by_name(name).unwrap().read_to_end(&mut bytes).unwrap();
    bytes
}

/// The file set: two sibling modules 0.3.14's module imports, and a file of a subpackage.
fn file_set() -> Vec<(&'static str, Vec<u8>)> {
    let whl = wheel_0_3_14();
    [
        "mooncake/_partial_read.py",
        "mooncake/_structured_ranges.py",
        "mooncake/reshard/_typing.py",
    ]
    .into_iter()
    .map(|name| (name, member(&whl, name)))
    .collect()
}

/// api.toml with `files` as `[[upstream.file]]`.
fn manifest_with(files: &[(&str, Vec<u8>)]) -> String {
    let mut set = String::new();
    for (name, bytes) in files {
        set.push_str(&format!(
            "\n[[upstream.file]]\npath = \"mooncake-wheel/{name}\"\nsha256 = \"{}\"\n",
            sha256_hex(bytes)
        ));
    }
    let shipped = overlay_manifest();
    assert!(shipped.contains("\n# The Python shim"));
    shipped.replacen(
        "\n# The Python shim",
        &format!("{set}\n# The Python shim"),
        1,
    )
}

#[test]
fn the_overlay_installs_every_file_of_the_set_or_none() {
    let files = file_set();
    let manifest = manifest_with(&files);
    let api = mooncake_sos_tests::docker::fixtures::api_of(&manifest);
    let repo = regenerated_repo(&manifest);
    let module = module_of_release("0.3.12.post1");
    let root = format!(
        "/{}/{}/mooncake-wheel",
        api.upstream.repo, api.upstream.commit
    );
    let serve = |files: &[(&str, Vec<u8>)]| {
        let mut served = HashMap::from([(pinned_path(&api), module.clone())]);
        for (name, bytes) in files {
            served.insert(format!("{root}/{name}"), bytes.clone());
        }
        FileServer::start(served)
    };
    let build = |server: &FileServer| {
        Build::cuda()
            .context(repo.path())
            .arg("MOONCAKE_SOS_BASE_URL", &server.base_url)
            .arg("MOONCAKE_SOS_SHA256", &sha256_hex(&module))
            .arg("MOONCAKE_SOS_SMOKE", "0")
            .run()
    };

    let server = serve(&files);
    let (image, log) = build(&server).expect_ok();
    assert_eq!(
        server.requests().len(),
        1 + files.len(),
        "each file fetched once"
    );
    for (name, _) in &files {
        assert!(
            log.contains(&format!("/{name}: OK")),
            "{name} not checked: {log}"
        );
    }
    let inside = package_files(&image.tag);
    assert_eq!(
        inside.python["mooncake/structured_object_store.py"],
        sha256_hex(&module)
    );
    for (name, bytes) in &files {
        assert_eq!(inside.python.get(*name), Some(&sha256_hex(bytes)), "{name}");
    }

    // One file of the set is not the declared one: the step fails at the checksum, after
    // every download and before any install; no image.
    let mut tampered = files.clone();
    tampered[1].1.extend_from_slice(b"\nimport os\n");
    let failure = build(&serve(&tampered)).expect_failure();
    assert!(failure.instruction.contains("sha256sum -c"), "{failure}");
    failure.assert_says("/mooncake/_structured_ranges.py: FAILED");
    failure.assert_says("/mooncake/_partial_read.py: OK");
    failure.assert_says("WARNING: 1 computed checksum did NOT match");
    failure.assert_never_says("mooncake-sos check");
}

#[test]
fn the_fill_copies_subpackages_but_never_shadows_a_native_module() {
    // The fill from the 0.3.14 wheel, whose `mooncake.store` is a package choosing a backend,
    // over the stand-in source build of the 0.3.12.post1 core (store.so).
    let manifest = shipped_manifest().replacen(
        "fill_package = \"mooncake-transfer-engine-non-cuda\"",
        "fill_package = \"mooncake-transfer-engine-cuda13\"",
        1,
    );
    let repo = regenerated_repo(&manifest);
    let index = LocalIndex::start(&[&wheels_dir(), &other_wheels()]);
    let bases = Bases::get();
    let before = package_files(&bases.rocm);
    assert!(
        before.native.contains_key("mooncake/store.so"),
        "{before:?}"
    );
    let built = Build::rocm()
        .context(repo.path())
        .arg("MOONCAKE_SOS_PIP_INDEX_URL", &index.url)
        .arg("MOONCAKE_VERSION", "0.3.14")
        .arg("MOONCAKE_SOS_SMOKE", "0")
        .run();
    let log = built.log.clone();
    assert!(
        log.contains(
            "fill: skipped store/__init__.py: store/ would shadow the native module store"
        ),
        "{log}"
    );
    let (image, _) = built.expect_ok();
    let after = package_files(&image.tag);
    assert_eq!(after.native, before.native, "a native file changed");
    // Not one file of the package that would shadow store.so; every other *.py of the wheel,
    // subpackages included, where nothing was installed.
    assert!(
        !after
            .python
            .keys()
            .any(|k| k.starts_with("mooncake/store/")),
        "{:?}",
        after.python.keys()
    );
    let whl = wheel_0_3_14();
    let mut zip = zip::ZipArchive::new(std::fs::File::open(&whl).unwrap()).unwrap();
    let names: Vec<String> = zip
        .file_names()
        .filter_map(|n| n.ok().map(|n| n.into_owned()))
        .filter(|n| n.starts_with("mooncake/") && n.ends_with(".py"))
        .filter(|n| !n.starts_with("mooncake/store/"))
        .collect();
    assert!(
        names
            .iter()
            .any(|n| n.starts_with("mooncake/reshard/kv_cache/"))
    );
    for name in &names {
        let mut bytes = Vec::new();
        zip.by_name(name).unwrap().read_to_end(&mut bytes).unwrap();
        let found = after.python.get(name);
        match before.python.get(name) {
            // Installed by the source build: left as it was.
            Some(kept) => assert_eq!(found, Some(kept), "{name} overwritten"),
            None => assert_eq!(found, Some(&sha256_hex(&bytes)), "{name}"),
        }
    }
}
