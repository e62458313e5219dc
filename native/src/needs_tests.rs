//! `serve` over a small surface written out by hand: each way a use can be served or not.

use super::*;
use crate::test_cores::{class, method, surface_json};
use serde_json::json;

fn core() -> CoreSurface {
    let config = class(
        json!({
            "__init__": method(""),
            "replica_num": {"kind": "property", "readonly": false},
            "frozen": {"kind": "property", "readonly": true},
            "raises": {"kind": "property", "readonly": false},
            "describe": method("verbose: bool = False")
        }),
        json!({
            "members": {
                "replica_num": {"read": true, "write": true},
                "frozen": {"read": true, "write": false},
                "raises": {"read": false, "write": false},
                "set_by_init": {"read": true, "write": true}
            },
            "new_attributes": false
        }),
    );
    let open = class(
        json!({"__init__": method("")}),
        json!({"members": {}, "new_attributes": true}),
    );
    let handle = class(
        json!({
            "__init__": method("ptr: int,  size: int"),
            "size": {"kind": "property", "readonly": false},
            "ro": {"kind": "property", "readonly": true},
            "KIND": {"kind": "value", "type": "int"},
            "Inner": {"kind": "class"}
        }),
        json!({"error": "TypeError: incompatible constructor arguments"}),
    );
    let surface = surface_json(
        "p",
        "1",
        "m.store",
        json!({
            "classes": {"Config": config, "Open": open, "Handle": handle},
            "functions": {"bind": {"overloads": ["node: int"]}},
            "values": {"VERSION": {"type": "str"}}
        }),
    );
    serde_json::from_value(surface).unwrap()
}

fn need(object: &str, usage: Usage) -> Requirement {
    Requirement {
        object: object.into(),
        usage,
        required: true,
        origin: "test".into(),
    }
}

fn why(object: &str, usage: Usage) -> Option<Why> {
    serve(&core(), &[need(object, usage)])
        .missing
        .into_iter()
        .next()
        .map(|m| m.why)
}

fn call(overload: Option<&str>) -> Usage {
    Usage::Call {
        overload: overload.map(Into::into),
        shapes: Vec::new(),
    }
}

const READ: Usage = Usage::Read { on: On::Instance };
const WRITE: Usage = Usage::Write { on: On::Instance };

#[test]
fn calls_match_overloads_up_to_whitespace() {
    assert_eq!(why("Config.describe", call(None)), None);
    assert_eq!(
        why("Config.describe", call(Some("verbose:  bool = False"))),
        None
    );
    assert_eq!(
        why("Config.describe", call(Some("verbose: bool"))),
        Some(Why::OverloadDiffers {
            found: vec!["verbose: bool = False".into()]
        })
    );
    assert_eq!(why("bind", call(Some("node: int"))), None);
    assert_eq!(
        why("Config.replica_num", call(None)),
        Some(Why::NotCallable)
    );
    assert_eq!(why("VERSION", call(None)), Some(Why::NotCallable));
    assert_eq!(why("Handle.Inner", call(None)), None);
}

#[test]
fn absent_names_the_first_missing_part() {
    let absent = |m: &str| Some(Why::Absent { missing: m.into() });
    assert_eq!(why("Config.group_ids", WRITE), absent("Config.group_ids"));
    assert_eq!(why("Nope.put", call(None)), absent("Nope"));
    assert_eq!(why("bind.x", READ), absent("bind"));
    assert_eq!(why("Handle.Inner.x", READ), absent("Handle.Inner.x"));
    assert_eq!(
        why("nothing", Usage::Read { on: On::Class }),
        absent("nothing")
    );
}

#[test]
fn instance_reads_and_writes_follow_the_probe() {
    assert_eq!(why("Config.replica_num", WRITE), None);
    assert_eq!(why("Config.frozen", READ), None);
    assert_eq!(why("Config.frozen", WRITE), Some(Why::ReadOnly));
    assert_eq!(why("Config.raises", READ), Some(Why::Unreadable));
    // Set by the constructor: only the instance has it.
    assert_eq!(why("Config.set_by_init", WRITE), None);
    assert_eq!(
        why("Config.set_by_init", Usage::Read { on: On::Class }),
        Some(Why::Absent {
            missing: "Config.set_by_init".into()
        })
    );
    assert_eq!(
        why("Config.set_by_init", Usage::Write { on: On::Class }),
        None
    );
    // A method cannot be assigned on an instance without a __dict__ ...
    assert_eq!(why("Config.describe", WRITE), Some(Why::ReadOnly));
    // ... while an instance taking new attributes takes any name.
    assert_eq!(why("Open.anything", WRITE), None);
}

#[test]
fn without_an_instance_the_class_decides_what_it_can() {
    assert_eq!(why("Handle.size", WRITE), None);
    assert_eq!(why("Handle.ro", WRITE), Some(Why::ReadOnly));
    assert!(matches!(
        why("Handle.KIND", WRITE),
        Some(Why::Unverified { .. })
    ));
    assert_eq!(why("Handle.KIND", READ), None);
}

#[test]
fn construction_needs_an_instance_or_a_matching_init() {
    assert_eq!(why("Config", Usage::Construct { overload: None }), None);
    assert_eq!(
        why("Config", call(None)),
        None,
        "calling a class constructs it"
    );
    assert_eq!(
        why("Handle", Usage::Construct { overload: None }),
        Some(Why::NotConstructible {
            error: "TypeError: incompatible constructor arguments".into()
        })
    );
    let init = |o: &str| Usage::Construct {
        overload: Some(o.into()),
    };
    assert_eq!(why("Handle", init("ptr: int, size: int")), None);
    assert!(matches!(
        why("Handle", init("ptr: int")),
        Some(Why::OverloadDiffers { .. })
    ));
    assert_eq!(why("bind", init("")), Some(Why::NotCallable));
}

#[test]
fn probed_uses_never_make_a_core_incompatible_and_order_is_kept() {
    let mut optional = need("MooncakeDistributedStore.put_from", call(None));
    optional.required = false;
    let needs = [
        optional,
        need("Config.raises", READ),
        need("Config.frozen", WRITE),
    ];
    let verdict = serve(&core(), &needs);
    assert!(!verdict.compatible);
    assert_eq!(verdict.optional_missing.len(), 1);
    let first = verdict.first_missing().unwrap();
    assert_eq!(first.requirement.object, "Config.raises");
    assert_eq!(
        first.line(),
        "Config.raises (read on instance): unreadable on an instance [test]"
    );
    assert_eq!(verdict.missing[1].reason(), "read-only");
    let only_probed = serve(&core(), &needs[..1]);
    assert!(only_probed.compatible);
}

#[test]
fn manifest_entries_become_calls_and_reads() {
    use mooncake_sos_manifest::model::{NativeCheck, NativeRequirement};
    let native = [
        NativeRequirement {
            module: None,
            object: "Config.describe".into(),
            check: NativeCheck::Overload("verbose: bool = False".into()),
            reason: "r".into(),
        },
        NativeRequirement {
            module: None,
            object: "Config".into(),
            check: NativeCheck::Attribute {
                name: "replica_num".into(),
                instance: true,
            },
            reason: "r".into(),
        },
    ];
    let needs = from_manifest(&native);
    assert_eq!(needs[0].usage, call(Some("verbose: bool = False")));
    assert_eq!(needs[1].object, "Config.replica_num");
    assert_eq!(needs[1].usage, READ);
    assert_eq!(needs[1].origin, "api.toml [[native]] #2");
    assert!(serve(&core(), &needs).compatible);
}
