//! Native cores read from the real wheels: `cargo xtask core`, the cache, the committed record
//! of the CUDA image's core and its drift check, the offline image check, and `matrix --core`.

use crate::common::cores::{cuda13_libs, cuda13_wheel, reader};
use crate::common::{Sandbox, repo_root, xtask, xtask_on_releases};
use mooncake_sos_manifest::load_str;
use mooncake_sos_native::read::Origin;
use mooncake_sos_native::table::ModuleNeeds;
use mooncake_sos_pysource::source::{ModuleSource, sha256_hex};
use mooncake_sos_testkit::{wheel, wheel_member, wheels_dir};
use serde_json::Value;

const CUDA_RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.11.post1.json";
/// The record of the release the CUDA image pins.
const PINNED_RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json";
const ROCM_RECORD: &str = "cores/mooncake-transfer-engine-non-cuda-0.3.12.post1.json";

fn members<'a>(surface: &'a Value, class: &str) -> &'a serde_json::Map<String, Value> {
    surface["classes"][class]["members"].as_object().unwrap()
}

#[test]
fn three_releases_show_where_replicate_config_changed() {
    let releases = ["0.3.11.post1", "0.3.12.post1", "0.3.13.post1"];
    let run = xtask_on_releases(&["core", "--json"], &releases);
    assert_eq!(run.code, Some(0), "{run:?}");
    // Object defaults are printed without their address: the output is the same every run.
    assert!(!run.stdout.contains(" at 0x"), "{run:?}");
    let all: Vec<Value> = serde_json::from_str(&run.stdout).expect("JSON");
    let [old, mid, new] = &all[..] else {
        panic!("{run:?}")
    };
    for (surface, version) in [
        (old, "0.3.11.post1"),
        (mid, "0.3.12.post1"),
        (new, "0.3.13.post1"),
    ] {
        assert_eq!(surface["wheel"]["version"], version);
        assert_eq!(
            surface["wheel"]["package"],
            "mooncake-transfer-engine-non-cuda"
        );
        assert_eq!(surface["core"]["module"], "mooncake.store");
        assert_eq!(surface["core"]["file"], "mooncake/store.so");
        let so = wheel_member(&wheel(version), "mooncake/store.so");
        assert_eq!(surface["core"]["sha256"], sha256_hex(&so));
        let whl = std::fs::read(wheel(version)).unwrap();
        assert_eq!(surface["wheel"]["sha256"], sha256_hex(&whl));
        // The overloads api.toml declares, read from the docstrings.
        let store = members(surface, "MooncakeDistributedStore");
        assert!(
            store["setup"]["overloads"]
                .as_array()
                .unwrap()
                .contains(&Value::from("config: dict"))
        );
        assert_eq!(
            store["put"]["overloads"][0],
            "key: str, value: Buffer, config: mooncake.store.ReplicateConfig = <mooncake.store.ReplicateConfig object>"
        );
        // A property written back on an instance made with no arguments.
        let rc = &surface["classes"]["ReplicateConfig"]["instance"];
        assert_eq!(
            rc["members"]["replica_num"],
            serde_json::json!({"read": true, "write": true})
        );
        assert_eq!(rc["new_attributes"], false);
    }
    // group_ids arrives in 0.3.12 (upstream #2180); with_soft_pin leaves in 0.3.13 (#2909).
    assert!(!members(old, "ReplicateConfig").contains_key("group_ids"));
    for surface in [mid, new] {
        assert_eq!(
            members(surface, "ReplicateConfig")["group_ids"]["kind"],
            "property"
        );
        let instance = &surface["classes"]["ReplicateConfig"]["instance"]["members"];
        assert_eq!(instance["group_ids"]["write"], true);
    }
    assert!(members(mid, "ReplicateConfig").contains_key("with_soft_pin"));
    assert!(!members(new, "ReplicateConfig").contains_key("with_soft_pin"));
    // Read-only members are told apart: a def_readonly property fails the write-back.
    let task = &old["classes"]["QueryTaskResponse"];
    assert_eq!(task["members"]["status"]["readonly"], true);
    assert_eq!(task["instance"]["members"]["status"]["write"], false);
    // A class without a default constructor says why.
    assert!(
        old["classes"]["BufferHandle"]["instance"]["error"]
            .as_str()
            .unwrap()
            .contains("No constructor defined"),
        "{}",
        old["classes"]["BufferHandle"]
    );
}

#[test]
fn a_surface_is_cached_by_the_wheel_sha256_and_reads_the_same_every_time() {
    let whl = wheel("0.3.13.post1");
    let cache = tempfile::tempdir().unwrap();
    let cached = mooncake_sos_native::Reader {
        cache_dir: Some(cache.path().to_path_buf()),
        ..mooncake_sos_native::Reader::new()
    };
    let (first, origin) = cached.read_traced(&whl, "mooncake.store").unwrap();
    assert_eq!(origin, Origin::Read);
    let files: Vec<String> = std::fs::read_dir(cache.path())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    let sha = sha256_hex(&std::fs::read(&whl).unwrap());
    let [file] = &files[..] else {
        panic!("{files:?}")
    };
    assert!(
        file.starts_with(&format!("{sha}-")) && file.ends_with(".json"),
        "{file}"
    );
    let (again, origin) = cached.read_traced(&whl, "mooncake.store").unwrap();
    assert_eq!(origin, Origin::Cache);
    assert_eq!(again.to_json(), first.to_json());
    // A fresh read, without the cache, is byte-identical.
    let (fresh, origin) = mooncake_sos_native::Reader::new()
        .read_traced(&whl, "mooncake.store")
        .unwrap();
    assert_eq!(origin, Origin::Read);
    assert_eq!(fresh.to_json(), first.to_json());
    // The entry: its key, its body's sha256, the surface as read.
    let entry = std::fs::read_to_string(cache.path().join(file)).unwrap();
    let body = entry.splitn(4, '\n').nth(3).unwrap();
    assert_eq!(body, first.to_json());
    // A damaged entry, and one edited by hand into another valid surface (a class
    // dropped), are read again, not trusted.
    let edited = {
        let mut surface: serde_json::Value = serde_json::from_str(body).unwrap();
        let classes = surface["classes"].as_object_mut().unwrap();
        let first_class = classes.keys().next().unwrap().clone();
        classes.remove(&first_class);
        entry.replace(body, &serde_json::to_string_pretty(&surface).unwrap())
    };
    for damaged in ["{".to_owned(), edited] {
        std::fs::write(cache.path().join(file), &damaged).unwrap();
        let (healed, origin) = cached.read_traced(&whl, "mooncake.store").unwrap();
        assert_eq!(origin, Origin::Read);
        assert_eq!(healed, first);
        assert_eq!(
            std::fs::read_to_string(cache.path().join(file)).unwrap(),
            entry
        );
    }
}

#[test]
fn the_cuda_image_core_record_matches_its_wheel_read_against_the_driver_stub() {
    let whl = cuda13_wheel("0.3.11.post1").display().to_string();
    let libs = cuda13_libs();
    let run = xtask(&["core", "--check", "--lib-dir", &libs, &whl], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("current: {CUDA_RECORD}\n"), "{run:?}");
    // The record is what the reader makes of that wheel, field for field.
    let record = mooncake_sos_native::record::load(&repo_root().join(CUDA_RECORD)).unwrap();
    assert_eq!(
        record.wheel.sha256,
        sha256_hex(&std::fs::read(&whl).unwrap())
    );
    assert_eq!(record.core.file, "mooncake/store.so");
}

#[test]
fn the_rocm_image_core_record_matches_its_wheel_and_what_is_known_of_the_base() {
    let whl = wheel("0.3.12.post1").display().to_string();
    let run = xtask(&["core", "--check", &whl], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(run.stdout, format!("current: {ROCM_RECORD}\n"), "{run:?}");
    // What is known of the core the ROCm base builds (docs/upstream.md): the release standing for it has
    // setup(config: dict) and remove(key, force).
    let record = mooncake_sos_native::record::load(&repo_root().join(ROCM_RECORD)).unwrap();
    let store = &record.classes["MooncakeDistributedStore"].members;
    let overloads = |name: &str| store[name].overloads().unwrap().to_vec();
    assert!(overloads("setup").contains(&"config: dict".to_owned()));
    assert!(overloads("remove").contains(&"key: str, force: bool = False".to_owned()));
    // The record lists the package's modules: the fill's pure-Python files among them.
    use mooncake_sos_manifest::core_record::ModuleKind;
    assert_eq!(
        record.modules["mooncake.structured_object_store"],
        ModuleKind::Python
    );
    assert_eq!(record.modules["mooncake.store"], ModuleKind::Extension);
    assert!(!record.modules.contains_key("mooncake._partial_read"));
}

#[test]
fn the_0_3_13_module_needs_group_ids_which_the_next_cuda13_core_has() {
    let api = load_str(
        "api.toml",
        &std::fs::read_to_string(repo_root().join("api.toml")).unwrap(),
    )
    .unwrap();
    let module = ModuleSource::read_wheel(&wheel("0.3.13.post1"), &api.upstream.module).unwrap();
    let row = ModuleNeeds::from_source(&api, &module, "0.3.13.post1".into()).unwrap();
    let libs = std::env::split_paths(&cuda13_libs()).collect();
    let cores = reader();
    let read = |version: &str| {
        mooncake_sos_native::Reader {
            lib_dirs: libs,
            ..cores.clone()
        }
        .read(&cuda13_wheel(version), "mooncake.store")
        .unwrap_or_else(|e| panic!("{e}"))
    };
    let next = read("0.3.12.post1");
    assert_eq!(next.wheel.package, "mooncake-transfer-engine-cuda13");
    let verdict = mooncake_sos_native::serve(&next, &row.needs);
    assert!(verdict.compatible, "{verdict:#?}");
    let recorded = mooncake_sos_native::record::load(&repo_root().join(CUDA_RECORD)).unwrap();
    let verdict = mooncake_sos_native::serve(&recorded, &row.needs);
    let missed = verdict.missing_objects();
    assert_eq!(missed, ["ReplicateConfig.group_ids"], "{verdict:#?}");
}

#[test]
fn image_cores_are_checked_offline_against_the_manifest() {
    // No interpreter is needed: the records are data.
    let run = xtask(
        &["core", "--images", "--core-python", "/nonexistent/python3"],
        &[],
    );
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "image cuda: core mooncake-transfer-engine-cuda13 0.3.12.post1 ({PINNED_RECORD}) serves api.toml's 12 native needs\n\
             image rocm: core mooncake-transfer-engine-non-cuda 0.3.12.post1 ({ROCM_RECORD}) serves api.toml's 12 native needs\n"
        ),
        "{run:?}"
    );

    // The CUDA image back on its base's 0.3.11.post1 core (strategy overlay) lacks group_ids.
    let repo = Sandbox::with_cuda_overlay();
    let manifest = repo.root().join("api.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    std::fs::write(
        &manifest,
        format!(
            "{text}\n[[native]]\nobject = \"ReplicateConfig\"\nattribute = \"group_ids\"\ninstance = true\nreason = \"modules from #3133 on set it on every put\"\n"
        ),
    )
    .unwrap();
    let manifest = manifest.display().to_string();
    let run = xtask(&["core", "--images", "--manifest", &manifest], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout,
        format!(
            "image cuda: core mooncake-transfer-engine-cuda13 0.3.11.post1 ({CUDA_RECORD}) does not serve 1 of api.toml's native needs:\n  ReplicateConfig.group_ids (read on instance): absent [api.toml [[native]] #13]\n\
             image rocm: core mooncake-transfer-engine-non-cuda 0.3.12.post1 ({ROCM_RECORD}) serves api.toml's 13 native needs\n"
        ),
        "{run:?}"
    );
    // Without the records there is nothing to check the images against.
    std::fs::remove_dir_all(repo.root().join("cores")).unwrap();
    let run = xtask(&["core", "--images", "--manifest", &manifest], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines,
        [
            format!(
                "image cuda: no record of its native core mooncake-transfer-engine-cuda13 0.3.11.post1 ({CUDA_RECORD}): run `cargo xtask core --record` on that wheel"
            ),
            format!(
                "image rocm: no record of its native core mooncake-transfer-engine-non-cuda 0.3.12.post1 ({ROCM_RECORD}): run `cargo xtask core --record` on that wheel"
            ),
        ],
        "{run:?}"
    );
}

#[test]
fn matrix_shows_each_release_module_over_cores_from_wheels_and_records() {
    let wheels = wheels_dir().display().to_string();
    let cuda_next = cuda13_wheel("0.3.12.post1").display().to_string();
    let libs = cuda13_libs();
    let mut args = vec!["matrix", &wheels, "--core", &wheels, "--core", CUDA_RECORD];
    args.extend(["--core", &cuda_next, "--lib-dir", &libs]);
    let run = xtask(&args, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    // The releases x declared API table is still there, verdict and all.
    assert!(
        lines.contains(&"| `FieldSchema` | ✗ missing | ✓ | ✓ |"),
        "{run:?}"
    );
    run.assert_stdout_has("Drop condition: the first release carrying the whole API is mooncake-transfer-engine-non-cuda 0.3.12.post1.\n\nModules over native cores\n");
    // A row per release's module, from the uses its source makes. The 0.3.12 module probes
    // what 0.3.11 cores lack (the BufferPool's capsule, the tensor codec): it falls back.
    let absent = "✗ `ReplicateConfig.group_ids (write on instance): absent`";
    for want in [
        "| module \\ core | mooncake-transfer-engine-cuda13 0.3.11.post1 | mooncake-transfer-engine-cuda13 0.3.12.post1 | mooncake-transfer-engine-non-cuda 0.3.11.post1 | mooncake-transfer-engine-non-cuda 0.3.12.post1 | mooncake-transfer-engine-non-cuda 0.3.13.post1 |",
        "| api.toml [[native]] (pin 4dbe5a4c) | ✓ | ✓ | ✓ | ✓ | ✓ |",
        "| module 0.3.11.post1 | ✓ | ✓ | ✓ | ✓ | ✓ |",
        "| module 0.3.12.post1 | ✓ (6 probed use(s) missing) | ✓ | ✓ (6 probed use(s) missing) | ✓ | ✓ |",
        &format!(
            "| module 0.3.13.post1 | {absent} | ✓ | {absent} | ✓ | ✓ (2 probed use(s) missing) |"
        ),
    ] {
        assert!(lines.contains(&want), "no row {want:?}: {run:?}");
    }

    let mut json_args = args.clone();
    json_args.push("--json");
    let run = xtask(&json_args, &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    let v: Value = serde_json::from_str(&run.stdout).expect("JSON");
    assert_eq!(v["first_release"]["version"], "0.3.12.post1");
    let table = &v["module_x_core"];
    assert_eq!(table["modules"][3], "module 0.3.13.post1");
    assert_eq!(table["cores"][0]["source"], CUDA_RECORD);
    let cell = &table["cells"][3][0];
    assert_eq!(cell["compatible"], false);
    let miss = &cell["missing"][0];
    assert_eq!(miss["requirement"]["object"], "ReplicateConfig.group_ids");
    assert_eq!(miss["why"], "absent");
    // Its origin is the module's line that writes it.
    let module =
        ModuleSource::read_wheel(&wheel("0.3.13.post1"), "mooncake.structured_object_store")
            .unwrap();
    let line = module
        .line_of("    grouped_config.group_ids = [group_id]")
        .unwrap();
    assert_eq!(
        miss["requirement"]["origin"],
        format!("{}:{line}", module.display)
    );
    assert_eq!(table["cells"][3][1]["compatible"], true);
}
