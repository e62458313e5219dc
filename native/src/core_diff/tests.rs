//! The diff on the committed cuda13 records, and on doctored copies of 0.3.11.post1: each
//! doctoring must come out as exactly the breaking change it makes.

use super::{Impact, diff};
use crate::record;
use mooncake_sos_manifest::core_record::{CoreSurface, Member};
use std::path::Path;

fn real(version: &str) -> CoreSurface {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    record::load(&record::path(
        &root,
        "mooncake-transfer-engine-cuda13",
        version,
    ))
    .unwrap()
}

fn breaking(old: &CoreSurface, new: &CoreSurface) -> Vec<String> {
    diff(old, new)
        .breaking()
        .map(|c| format!("{}: {}", c.path, c.what))
        .collect()
}

/// `MooncakeDistributedStore.NAME`'s overloads, replaced.
fn set_overloads(core: &mut CoreSurface, name: &str, overloads: &[&str]) {
    let member = core
        .classes
        .get_mut("MooncakeDistributedStore")
        .unwrap()
        .members
        .get_mut(name)
        .unwrap();
    *member = Member::Method {
        overloads: overloads.iter().map(|o| (*o).to_owned()).collect(),
    };
}

const SETUP: &str = "local_hostname: str, metadata_server: str, global_segment_size: int, \
    local_buffer_size: int, protocol: str, rdma_devices: str, master_server_addr: str, \
    engine: object = None, enable_ssd_offload: bool = False, ssd_offload_path: str = ''";

#[test]
fn the_real_pin_drops_two_torch_builds_and_breaks_nothing_else() {
    let (old, new) = (real("0.3.11.post1"), real("0.3.12.post1"));
    assert_eq!(
        breaking(&old, &new),
        [
            "torch 2.10.0: torch build dropped (mooncake.ep_2_10_0, mooncake.pg_2_10_0)",
            "torch 2.9.1: torch build dropped (mooncake.ep_2_9_1, mooncake.pg_2_9_1)",
        ]
    );
    let d = diff(&old, &new);
    assert_eq!(d.of(Impact::Added).count(), 56);
    // 0.3.12 names the engine's parameters (`arg0` was positional-only): compatible.
    let compatible: Vec<&str> = d.of(Impact::Compatible).map(|c| c.path.as_str()).collect();
    assert_eq!(compatible.len(), 17);
    assert!(compatible.contains(&"mooncake.store.MooncakeDistributedStore.setup"));
    assert!(compatible.contains(&"mooncake.engine.TransferEngine.transfer_sync_write"));
    assert!(diff(&old, &old).changes.is_empty());
}

#[test]
fn removals_are_breaking() {
    let old = real("0.3.11.post1");
    let mut new = old.clone();
    let store = new.classes.get_mut("MooncakeDistributedStore").unwrap();
    store.members.remove("batch_get_into").unwrap();
    new.classes.remove("ReplicateConfig").unwrap();
    new.functions.remove("bind_to_numa_node").unwrap();
    new.values.remove("KVCACHE").unwrap();
    new.modules.remove("mooncake.engine").unwrap();
    new.modules.remove("mooncake.ep_2_9_1").unwrap();
    assert_eq!(
        breaking(&old, &new),
        [
            "mooncake.engine: module removed (was an extension)",
            "mooncake.store.KVCACHE: value removed (a ObjectDataType)",
            "mooncake.store.MooncakeDistributedStore.batch_get_into: method removed",
            "mooncake.store.ReplicateConfig: class removed",
            "mooncake.store.bind_to_numa_node: function removed",
            "torch 2.9.1: torch build dropped (mooncake.ep_2_9_1)",
        ]
    );
}

#[test]
fn narrowed_overloads_say_how() {
    let old = real("0.3.11.post1");
    let cases: [(&str, &[&str], &str); 7] = [
        (
            "register_buffer",
            &["buffer_ptr: int"],
            "overload `(buffer_ptr: int, size: int)` no longer accepted: `size` removed",
        ),
        (
            "register_buffer",
            &["size: int, buffer_ptr: int"],
            "overload `(buffer_ptr: int, size: int)` no longer accepted: `buffer_ptr` moved from \
             position 1 to 2, `size` moved from position 2 to 1",
        ),
        (
            "register_buffer",
            &["buffer_ptr: int, length: int"],
            "overload `(buffer_ptr: int, size: int)` no longer accepted: `size` renamed to `length`",
        ),
        (
            "register_buffer",
            &["buffer_ptr: int, size: int, flags: int"],
            "overload `(buffer_ptr: int, size: int)` no longer accepted: new required `flags`",
        ),
        (
            "batch_put_from",
            &[
                "keys: list[str], buffer_ptrs: list[int], sizes: list[int], config: mooncake.store.ReplicateConfig",
            ],
            "overload `(keys: list[str], buffer_ptrs: list[int], sizes: list[int], config: \
             mooncake.store.ReplicateConfig = <mooncake.store.ReplicateConfig object>)` no longer \
             accepted: `config` made required",
        ),
        (
            "register_buffer",
            &["buffer_ptr: int, size: int, /"],
            "overload `(buffer_ptr: int, size: int)` no longer accepted: `buffer_ptr` is now \
             PositionalOnly (was Positional), `size` is now PositionalOnly (was Positional)",
        ),
        (
            "setup",
            &[SETUP],
            "overload `(config: dict)` no longer accepted: no overload has any of its parameters",
        ),
    ];
    for (member, overloads, why) in cases {
        let mut new = old.clone();
        set_overloads(&mut new, member, overloads);
        let path = format!("mooncake.store.MooncakeDistributedStore.{member}");
        assert_eq!(
            breaking(&old, &new),
            [format!("{path}: {why}")],
            "{overloads:?}"
        );
    }
}

#[test]
fn widened_overloads_and_reordered_overloads_are_compatible() {
    let old = real("0.3.11.post1");
    for overloads in [
        &["buffer_ptr: int, size: int, flags: int = 0"][..],
        &["buffer_ptr: int, size: int = 0"],
        &["buffer_ptr: int, size: int, *args, **kwargs"],
        &["other: str", "buffer_ptr: int, size: int"],
    ] {
        let mut new = old.clone();
        set_overloads(&mut new, "register_buffer", overloads);
        let d = diff(&old, &new);
        assert_eq!(d.breaking().count(), 0, "{overloads:?}");
        assert_eq!(d.of(Impact::Compatible).count(), 1, "{overloads:?}");
    }
}

#[test]
fn a_property_made_read_only_or_a_method_made_a_property_breaks() {
    let old = real("0.3.11.post1");
    let mut new = old.clone();
    let config = new.classes.get_mut("ReplicateConfig").unwrap();
    config
        .members
        .insert("replica_num".into(), Member::Property { readonly: true });
    let store = new.classes.get_mut("MooncakeDistributedStore").unwrap();
    store
        .members
        .insert("is_exist".into(), Member::Property { readonly: true });
    assert_eq!(
        breaking(&old, &new),
        [
            "mooncake.store.MooncakeDistributedStore.is_exist: now a read-only property (was a method)",
            "mooncake.store.ReplicateConfig.replica_num: property made read-only",
        ]
    );
}

#[test]
fn the_engine_and_the_python_modules_are_compared_too() {
    use mooncake_sos_manifest::core_record::Read;
    let old = real("0.3.11.post1");
    let mut new = old.clone();
    let Some(Read::Read(engine)) = new.extensions.get_mut("mooncake.engine") else {
        panic!("0.3.11.post1's record has mooncake.engine read");
    };
    let engine_class = engine.classes.get_mut("TransferEngine").unwrap();
    engine_class.members.remove("get_rpc_port").unwrap();
    engine_class.members.insert(
        "register_memory".into(),
        Member::Method {
            overloads: vec!["arg0: int".into()],
        },
    );
    let Some(Read::Read(names)) = new.python.get_mut("mooncake.mooncake_ep_buffer") else {
        panic!("0.3.11.post1's record has mooncake.mooncake_ep_buffer read");
    };
    names.retain(|n| n != "Buffer");
    assert_eq!(
        breaking(&old, &new),
        [
            "mooncake.engine.TransferEngine.get_rpc_port: method removed",
            "mooncake.engine.TransferEngine.register_memory: overload `(arg0: int, arg1: int)` no \
             longer accepted: `arg1` removed",
            "mooncake.mooncake_ep_buffer.Buffer: name removed",
        ]
    );
    // An extension that imported and no longer does.
    let mut new = old.clone();
    new.extensions.insert(
        "mooncake.engine".into(),
        Read::Unread {
            unread: "ImportError: libfoo.so".into(),
        },
    );
    assert_eq!(
        breaking(&old, &new),
        ["mooncake.engine: no longer imports: ImportError: libfoo.so"]
    );
}
