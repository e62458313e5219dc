//! What each image has, from synthetic records in a temporary `cores/`, and what the check
//! then says about a module's imports and uses.

use super::*;
use crate::test_cores::{class, method, surface_json};
use mooncake_sos_manifest::load_str;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface::{SurfaceConfig, derive};

const SHIPPED: &str = include_str!("../../api.toml");
/// The CUDA image back on strategy overlay over its base's 0.3.11.post1 wheel (as before
/// the pin): these cases are the overlay's.
static API: std::sync::LazyLock<String> = std::sync::LazyLock::new(|| {
    let text = SHIPPED.replacen("strategy = \"pin\"", "strategy = \"overlay\"", 1);
    let at = text.find("pin_version = ").expect("pin_version");
    let end = at + text[at..].find('\n').expect("its line") + 1;
    format!("{}{}", &text[..at], &text[end..])
});
const SHA: &str = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";

const CUDA13: &str = "mooncake-transfer-engine-cuda13";
const NON_CUDA: &str = "mooncake-transfer-engine-non-cuda";

/// A record of `package version` whose core has `ReplicateConfig` (with `group_ids` or not)
/// and the package modules given.
fn record(root: &Path, package: &str, version: &str, group_ids: bool, modules: &[(&str, &str)]) {
    let members = if group_ids {
        serde_json::json!({"group_ids": {"read": true, "write": true}})
    } else {
        serde_json::json!({})
    };
    let config = class(
        serde_json::json!({"__init__": method("")}),
        serde_json::json!({"members": members, "new_attributes": false}),
    );
    let modules: serde_json::Map<_, _> = modules
        .iter()
        .map(|(m, k)| (m.to_string(), serde_json::json!(k)))
        .collect();
    let surface = surface_json(
        package,
        version,
        "mooncake.store",
        serde_json::json!({"classes": {"ReplicateConfig": config}, "modules": modules}),
    );
    let path = root.join(record::relative_path(package, version));
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, serde_json::to_string(&surface).unwrap()).unwrap();
}

/// The CUDA base wheel, 0.3.11.post1: no _partial_read, no reshard, store.so; no group_ids.
fn cuda_base_record(root: &Path) {
    record(
        root,
        CUDA13,
        "0.3.11.post1",
        false,
        &[("mooncake", "package"), ("mooncake.store", "extension")],
    );
}

/// What MODULE is told on an image that has only the CUDA base wheel.
const ON_THE_CUDA_BASE: [&str; 3] = [
    "m.py:11: native ReplicateConfig.group_ids: image cuda: absent",
    "m.py:2: sibling mooncake._partial_read: image cuda: none",
    "m.py:3: sibling mooncake.reshard: image cuda: none",
];

const MODULE: &str = "\
from mooncake.store import ReplicateConfig
import mooncake._partial_read
import mooncake.reshard
import mooncake.store
try:
    import mooncake._fast_copy
except ImportError:
    pass

def put(config):
    config.group_ids = [1]
";

fn findings(api: &mooncake_sos_manifest::model::Api, root: &Path) -> Vec<String> {
    let sides = load_all(root, api).unwrap_or_else(|e| panic!("{e}"));
    let source = ModuleSource::from_bytes("m.py", MODULE.as_bytes().to_vec()).unwrap();
    let surface = derive(&source, &SurfaceConfig::from_api(api)).unwrap();
    check(&sides, &surface.file, &surface.uses)
        .iter()
        .map(|f| {
            format!(
                "{}: {}: image {}: {}",
                f.origin, f.subject, f.image, f.found
            )
        })
        .collect()
}

#[test]
fn each_image_has_its_layers_modules_and_its_cores_members() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    cuda_base_record(root);
    // The ROCm core, and its fill (the same release): group_ids, _partial_read, a reshard
    // subpackage.
    record(
        root,
        NON_CUDA,
        "0.3.12.post1",
        true,
        &[
            ("mooncake", "package"),
            ("mooncake._partial_read", "python"),
            ("mooncake.reshard", "package"),
            ("mooncake.reshard.x", "python"),
            ("mooncake.store", "extension"),
            ("mooncake.engine", "extension"),
        ],
    );
    let api = load_str("api.toml", &API).unwrap();
    assert_eq!(findings(&api, root), ON_THE_CUDA_BASE);
    let sides = load_all(root, &api).unwrap();
    let rocm = &sides[1];
    assert_eq!(rocm.image, "rocm");
    assert_eq!(
        rocm.modules["mooncake.engine"],
        "the core built in the base"
    );
    assert!(rocm.modules["mooncake.reshard.x"].starts_with("the fill from"));

    // The overlay's file set brings the two modules; a `store/__init__.py` in it would hide
    // the base's store.so.
    let mut files = String::new();
    for path in [
        "_partial_read.py",
        "reshard/__init__.py",
        "store/__init__.py",
    ] {
        files.push_str(&format!(
            "\n[[upstream.file]]\npath = \"mooncake-wheel/mooncake/{path}\"\nsha256 = \"{SHA}\"\n"
        ));
    }
    let text = API.replacen(
        "\n# The Python shim",
        &format!("{files}\n# The Python shim"),
        1,
    );
    let api = load_str("api.toml", &text).unwrap();
    assert_eq!(
        findings(&api, root),
        [
            "m.py:11: native ReplicateConfig.group_ids: image cuda: absent",
            "api.toml [[upstream.file]] mooncake-wheel/mooncake/store/__init__.py: package mooncake.store: image cuda: the package mooncake.store over the base's native module of that name, which it would hide on import (mooncake-transfer-engine-cuda13 0.3.11.post1)",
        ]
    );
}

#[test]
fn a_fill_skips_a_subpackage_named_like_a_native_module() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    record(root, CUDA13, "0.3.11.post1", true, &[]);
    record(
        root,
        NON_CUDA,
        "0.3.12.post1",
        true,
        &[("mooncake.store", "extension")],
    );
    // The fill from another wheel, whose `store/` is a package with a module in it.
    let text = API.replacen(
        "fill_version = \"0.3.12.post1\"",
        "fill_version = \"0.3.14\"",
        1,
    );
    record(
        root,
        NON_CUDA,
        "0.3.14",
        true,
        &[
            ("mooncake.store", "package"),
            ("mooncake.store.backend", "python"),
            ("mooncake._store", "extension"),
            ("mooncake.storex", "python"),
        ],
    );
    let api = load_str("api.toml", &text).unwrap();
    let sides = load_all(root, &api).unwrap();
    let rocm: Vec<&String> = sides[1].modules.keys().collect();
    assert_eq!(rocm, ["mooncake.store", "mooncake.storex"]);
    assert_eq!(
        sides[1].modules["mooncake.store"],
        "the core built in the base"
    );
}

#[test]
fn a_pin_image_has_its_releases_modules_and_core_and_a_check_image_its_bases() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // The pinned release: group_ids, _partial_read and a reshard package.
    record(
        root,
        CUDA13,
        "0.3.12.post1",
        true,
        &[
            ("mooncake", "package"),
            ("mooncake._partial_read", "python"),
            ("mooncake.reshard", "package"),
            ("mooncake.store", "extension"),
        ],
    );
    cuda_base_record(root);
    record(
        root,
        NON_CUDA,
        "0.3.12.post1",
        true,
        &[
            ("mooncake._partial_read", "python"),
            ("mooncake.reshard", "package"),
            ("mooncake.store", "extension"),
        ],
    );
    let api = load_str("api.toml", SHIPPED).unwrap();
    assert!(
        findings(&api, root).is_empty(),
        "{:?}",
        findings(&api, root)
    );
    let sides = load_all(root, &api).unwrap();
    assert_eq!(
        sides[0].core.label(),
        "mooncake-transfer-engine-cuda13 0.3.12.post1"
    );
    assert_eq!(
        sides[0].modules["mooncake._partial_read"],
        "the pinned mooncake-transfer-engine-cuda13 0.3.12.post1"
    );
    // A check image on the 0.3.11.post1 base has what that wheel has, and no more.
    let check = API.replacen("strategy = \"overlay\"", "strategy = \"check\"", 1);
    let api = load_str("api.toml", &check).unwrap();
    assert_eq!(findings(&api, root), ON_THE_CUDA_BASE);
    let sides = load_all(root, &api).unwrap();
    assert_eq!(
        sides[0].modules["mooncake.store"],
        "the base's mooncake-transfer-engine-cuda13 0.3.11.post1"
    );
    assert!(
        !sides[0]
            .modules
            .contains_key("mooncake.structured_object_store")
    );
}
