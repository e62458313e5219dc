//! sglang 0.5.16's recorded uses across the CUDA image's real pin, and across doctored copies
//! of the pinned 0.3.12.post1 record: each doctoring must fail naming sglang's file:line and
//! the member.

use super::check;
use crate::{record, users};
use mooncake_sos_manifest::core_record::{CoreSurface, Member, Read};
use std::path::{Path, PathBuf};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn core(version: &str) -> CoreSurface {
    record::load(&record::path(
        &root(),
        "mooncake-transfer-engine-cuda13",
        version,
    ))
    .unwrap()
}

fn sglang() -> users::UserRecord {
    users::load(&users::path(&root(), "sglang", "0.5.16")).unwrap()
}

const STORE_PY: &str = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py";
const ENGINE_PY: &str = "sglang/srt/distributed/device_communicators/mooncake_transfer_engine.py";

fn failures(pinned: &CoreSurface) -> Vec<String> {
    check("cuda", &sglang(), &core("0.3.11.post1"), pinned).failures
}

#[test]
fn the_real_pin_serves_every_use_sglang_makes() {
    let verdict = check(
        "cuda",
        &sglang(),
        &core("0.3.11.post1"),
        &core("0.3.12.post1"),
    );
    assert_eq!(verdict.failures, Vec::<String>::new());
    assert_eq!(verdict.checked, 67);
    // group_ids is probed, and 0.3.11.post1 lacks it: sglang's fallback, before and after;
    // its write (behind `_can_use_group_semantics()`, which the analysis does not follow) is
    // not served by the base either.
    assert_eq!(verdict.warnings.len(), 3, "{:?}", verdict.warnings);
    assert!(verdict.warnings[0].starts_with(&format!(
        "{STORE_PY}:270: mooncake.store.ReplicateConfig.group_ids: image cuda: probed"
    )));
}

#[test]
fn a_store_method_sglang_calls_removed_fails_at_its_line() {
    let mut pinned = core("0.3.12.post1");
    let store = pinned.classes.get_mut("MooncakeDistributedStore").unwrap();
    store.members.remove("batch_get_into").unwrap();
    // The embedding store, a subclass of the store's class in another file, calls it too.
    let embedding = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_embedding_store.py";
    assert_eq!(
        failures(&pinned),
        [
            format!(
                "{embedding}:40: mooncake.store.MooncakeDistributedStore.batch_get_into: image \
                 cuda: served by the base core 0.3.11.post1, absent from the pinned 0.3.12.post1"
            ),
            format!(
                "{STORE_PY}:1281: mooncake.store.MooncakeDistributedStore.batch_get_into: image \
                 cuda: served by the base core 0.3.11.post1, absent from the pinned 0.3.12.post1"
            )
        ]
    );
}

#[test]
fn an_engine_overload_narrowed_fails_at_each_call() {
    let mut pinned = core("0.3.12.post1");
    let Some(Read::Read(engine)) = pinned.extensions.get_mut("mooncake.engine") else {
        panic!("the pinned record reads mooncake.engine");
    };
    let initialize = engine
        .classes
        .get_mut("TransferEngine")
        .unwrap()
        .members
        .get_mut("initialize")
        .unwrap();
    *initialize = Member::Method {
        overloads: vec!["local_hostname: str, metadata_server: str, protocol: str".into()],
    };
    let found = failures(&pinned);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(
        found[0].starts_with(&format!(
            "{ENGINE_PY}:205: mooncake.engine.TransferEngine.initialize: image cuda: served by the \
         base core 0.3.11.post1, the call does not fit (4 positional argument(s) where it takes \
         at most 3;"
        )),
        "{found:?}"
    );
    assert!(found[1].contains(
        "remote_instance_weight_transporter.py:45: mooncake.engine.TransferEngine.initialize"
    ));
}

#[test]
fn the_torch_build_sglang_needs_dropped_fails() {
    let mut pinned = core("0.3.12.post1");
    pinned.modules.remove("mooncake.ep_2_11_0").unwrap();
    let found = failures(&pinned);
    assert_eq!(found.len(), 1, "{found:?}");
    assert!(found[0].ends_with(
        ": mooncake.ep_2_11_0: image cuda: sglang requires torch==2.11.0: its build is in the base \
         core 0.3.11.post1, absent from the pinned 0.3.12.post1"
    ), "{found:?}");
}

#[test]
fn a_probed_member_gone_is_a_warning_and_a_module_gone_a_failure() {
    let mut pinned = core("0.3.12.post1");
    let Some(Read::Read(engine)) = pinned.extensions.get_mut("mooncake.engine") else {
        panic!("the pinned record reads mooncake.engine");
    };
    let class = engine.classes.get_mut("TransferEngine").unwrap();
    class.members.remove("batch_transfer_sync_write").unwrap();
    let verdict = check("cuda", &sglang(), &core("0.3.11.post1"), &pinned);
    // Called at 245 (required), probed at 250 (sglang falls back).
    assert_eq!(verdict.failures.len(), 1, "{:?}", verdict.failures);
    assert!(verdict.failures[0].starts_with(&format!("{ENGINE_PY}:245: ")));
    assert!(
        verdict
            .warnings
            .iter()
            .any(|w| w.starts_with(&format!("{ENGINE_PY}:250: "))
                && w.ends_with(
                    "(probed: probed by hasattr at line 250; the fallback is now taken)"
                ))
    );
    let mut pinned = core("0.3.12.post1");
    pinned
        .modules
        .remove("mooncake.mooncake_ep_buffer")
        .unwrap();
    let found = failures(&pinned);
    assert_eq!(found.len(), 2, "{found:?}");
    assert!(found[0].ends_with(
        ": mooncake.mooncake_ep_buffer: image cuda: served by the base core 0.3.11.post1, no module \
         mooncake.mooncake_ep_buffer in the pinned 0.3.12.post1"
    ), "{found:?}");
}

/// sglang imports `mooncake.engine` unguarded: `[image.cuda] user_modules` must list it (the
/// check step loads what it lists); a listed module no user imports so is a warning.
#[test]
fn an_engine_sglang_imports_must_be_in_user_modules() {
    let shipped = std::fs::read_to_string(root().join("api.toml")).unwrap();
    let with = |user_modules: &str| {
        let text = shipped.replacen(
            "user_modules = [\"mooncake.engine\"]",
            &format!("user_modules = [{user_modules}]"),
            1,
        );
        assert!(text.contains(&format!("user_modules = [{user_modules}]")));
        let api = mooncake_sos_manifest::load_str("api.toml", &text).unwrap();
        let users = super::pin_users(&api, &root()).unwrap();
        assert_eq!(users.len(), 1);
        users.into_iter().next().unwrap().verdict
    };
    let shipped_verdict = with("\"mooncake.engine\"");
    assert_eq!(shipped_verdict.failures, Vec::<String>::new());
    assert_eq!(
        with("").failures,
        [format!(
            "{ENGINE_PY}:114: mooncake.engine: image cuda: sglang imports it unguarded, so the \
             image's check step must load it: add \"mooncake.engine\" to [image.cuda] user_modules"
        )]
    );
    let extra = with("\"mooncake.engine\", \"mooncake.ep\"");
    assert_eq!(extra.failures, Vec::<String>::new());
    assert_eq!(
        extra.warnings.last().unwrap(),
        "api.toml: mooncake.ep: image cuda: in user_modules, but no user of the image imports it \
         unguarded"
    );
}
