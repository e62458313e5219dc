//! The mapping from a derived surface to requirements, on synthetic modules, and what a small
//! core then serves.

use super::*;
use crate::needs::{Why, serve};
use crate::test_cores::{class, method, surface_json};
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface::{SurfaceConfig, derive};

fn needs(module: &str) -> Vec<Requirement> {
    let config = SurfaceConfig {
        module: "mooncake.structured_object_store".into(),
        native_module: "mooncake.store".into(),
        package: "mooncake".into(),
        roles: [
            ("store".into(), "Store".into()),
            ("config".into(), "ReplicateConfig".into()),
        ]
        .into(),
        others: Vec::new(),
        api: None,
    };
    let source = ModuleSource::from_bytes("m.py", module.as_bytes().to_vec()).unwrap();
    of_surface(&derive(&source, &config).unwrap())
}

/// `origin: object (usage): required|optional`, one per requirement.
fn lines(module: &str) -> Vec<String> {
    needs(module)
        .iter()
        .map(|r| {
            let usage = if r.required { "required" } else { "optional" };
            format!("{}: {} ({}): {usage}", r.origin, r.object, r.usage.label())
        })
        .collect()
}

const MODULE: &str = "\
from mooncake.store import ReplicateConfig
import mooncake.buffer_pool

def put(store, config):
    cfg = ReplicateConfig()
    cfg.group_ids = [1]
    cfg.group_ids = [2]
    store.put('k', b'v', config=cfg)
    store.put('k', b'v', config=cfg)
    fast = getattr(store, 'put_from', None)
    if fast is not None:
        fast('k', 1, 2)
    if hasattr(config, 'soft_pin'):
        config.soft_pin = True
    name = getattr(store, 'a' if config is None else 'b', None)
    forward(name, 'k', config=config)

def forward(fn, *args, config=None):
    if config is None:
        return fn(*args)
    return fn(*args, config=config)
";

#[test]
fn uses_become_requirements_once_each_at_their_first_line() {
    assert_eq!(
        lines(MODULE),
        [
            "m.py:1: ReplicateConfig (read on class): required",
            "m.py:5: ReplicateConfig (call()): required",
            "m.py:6: ReplicateConfig.group_ids (write on instance): required",
            "m.py:8: Store.put (call(2 args, config=)): required",
            "m.py:10: Store.put_from (read on instance): optional",
            "m.py:12: Store.put_from (call(3 args)): optional",
            // hasattr probes need nothing; the guarded write does.
            "m.py:14: ReplicateConfig.soft_pin (write on instance): optional",
            "m.py:15: Store.a (read on instance): optional",
            "m.py:15: Store.b (read on instance): optional",
            // Through the helper: the shapes of its two calls are alternatives.
            "m.py:20: Store.a (call(1 arg) | call(1 arg, config=)): optional",
            "m.py:20: Store.b (call(1 arg) | call(1 arg, config=)): optional",
        ],
        "{:#?}",
        needs(MODULE)
    );
}

fn core(store_members: serde_json::Value, config_members: serde_json::Value) -> CoreSurface {
    let store = class(store_members, serde_json::json!({"error": "no"}));
    let config = class(
        serde_json::json!({"__init__": method("")}),
        serde_json::json!({"members": config_members, "new_attributes": false}),
    );
    let surface = surface_json(
        "p",
        "1",
        "mooncake.store",
        serde_json::json!({"classes": {"Store": store, "ReplicateConfig": config}}),
    );
    serde_json::from_value(surface).unwrap()
}

#[test]
fn a_probed_member_may_be_absent_but_not_unfit() {
    let rw = serde_json::json!({"read": true, "write": true});
    let put = "key: str, value: Buffer, config: X = <X object>";
    // Everything there and fitting: served, nothing missing.
    let full = core(
        serde_json::json!({
            "put": method(put),
            "put_from": method("key: str, ptr: int, size: int"),
            "a": method("key: str"),
            "b": method("key: str, config: X = <X object>"),
        }),
        serde_json::json!({"group_ids": rw, "soft_pin": rw}),
    );
    let verdict = serve(&full, &needs(MODULE));
    assert!(verdict.compatible, "{verdict:#?}");
    assert!(verdict.optional_missing.is_empty(), "{verdict:#?}");

    // Probed members absent: the module falls back; a required one absent is a miss.
    let bare = core(
        serde_json::json!({"put": method(put)}),
        serde_json::json!({}),
    );
    let verdict = serve(&bare, &needs(MODULE));
    let missed = verdict.missing_objects();
    assert_eq!(missed, ["ReplicateConfig.group_ids"], "{verdict:#?}");
    assert_eq!(verdict.optional_missing.len(), 7, "{verdict:#?}");

    // A probed member that is there but does not take the call is a miss: the module calls it.
    let unfit = core(
        serde_json::json!({
            "put": method(put),
            "put_from": method("key: str, ptr: int"),
            "a": method("key: str"),
            "b": method("key: str"),
        }),
        serde_json::json!({"group_ids": rw, "soft_pin": {"read": true, "write": false}}),
    );
    let verdict = serve(&unfit, &needs(MODULE));
    let missed: Vec<String> = verdict
        .missing
        .iter()
        .map(|m| format!("{}: {}", m.requirement.object, m.reason()))
        .collect();
    assert_eq!(
        missed,
        [
            "Store.put_from: no overload takes the call (3 positional argument(s) where it takes at most 2); found (key: str, ptr: int)",
            "ReplicateConfig.soft_pin: read-only",
        ],
        "{verdict:#?}"
    );
    // `b` fits one of the helper's two shapes: served.
    assert!(
        verdict
            .missing
            .iter()
            .all(|m| m.requirement.object != "Store.b")
    );
    assert!(matches!(verdict.missing[0].why, Why::CallDiffers { .. }));
}
