//! The CUDA image's other user of mooncake, sglang 0.5.16 (consumers/sglang-0.5.16.json),
//! checked by `verify` and `users` across the image's pin, on the real records and on the
//! pinned record doctored in a sandbox.

use crate::common::{Sandbox, xtask, xtask_in};
use mooncake_sos_testkit::wheel;
use serde_json::Value;

const PINNED_RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json";
const STORE_PY: &str = "sglang/srt/mem_cache/storage/mooncake_store/mooncake_store.py";

pub(crate) fn doctor(repo: &Sandbox, edit: impl Fn(&mut Value)) {
    let path = repo.path(PINNED_RECORD);
    let mut core: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    edit(&mut core);
    std::fs::write(&path, serde_json::to_string_pretty(&core).unwrap()).unwrap();
}

#[test]
fn verify_says_how_many_of_sglangs_uses_the_pin_serves() {
    let whl = wheel("0.3.12.post1");
    let run = xtask(&["verify", "--wheel", whl.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    run.assert_stdout_has(
        "; sglang 0.5.16: 67 uses across the cuda pin 0.3.11.post1 -> 0.3.12.post1 served",
    );
    assert!(run.stderr.contains(&format!(
        "warning: {STORE_PY}:270: mooncake.store.ReplicateConfig.group_ids: image cuda: probed, \
         absent from the base core 0.3.11.post1 too"
    )));
    let run = xtask(&["users"], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            format!("warning: {STORE_PY}:270: mooncake.store.ReplicateConfig.group_ids: image cuda: probed, absent from the base core 0.3.11.post1 too: the fallback is taken before and after the pin"),
            format!("warning: {STORE_PY}:273: mooncake.store.ReplicateConfig.group_ids: image cuda: probed, absent from the base core 0.3.11.post1 too: the fallback is taken before and after the pin"),
            format!("warning: {STORE_PY}:1260: mooncake.store.ReplicateConfig.group_ids: image cuda: pre-existing: not served by the base core 0.3.11.post1 either (absent)"),
            "image cuda: sglang 0.5.16: 67 uses across the cuda pin 0.3.11.post1 -> 0.3.12.post1: 0 broken, 3 warnings".to_owned(),
        ]
    );
}

#[test]
fn a_pinned_core_that_breaks_sglang_fails_verify_at_sglangs_line() {
    let whl = wheel("0.3.12.post1");
    let whl = whl.to_str().unwrap();
    let repo = Sandbox::new();
    doctor(&repo, |core| {
        let store = &mut core["classes"]["MooncakeDistributedStore"]["members"];
        store
            .as_object_mut()
            .unwrap()
            .remove("batch_get_into")
            .unwrap();
        core["modules"]
            .as_object_mut()
            .unwrap()
            .remove("mooncake.ep_2_11_0")
            .unwrap();
    });
    let run = xtask_in(&repo, &["verify", "--wheel", whl]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    // The embedding store subclasses the store class in another file: its call fails too.
    assert_eq!(
        lines[..3],
        [
            "sglang/srt/mem_cache/storage/mooncake_store/mooncake_embedding_store.py:40: \
             mooncake.store.MooncakeDistributedStore.batch_get_into: image cuda: served by the \
             base core 0.3.11.post1, absent from the pinned 0.3.12.post1"
                .to_owned(),
            format!(
                "{STORE_PY}:1281: mooncake.store.MooncakeDistributedStore.batch_get_into: image \
                 cuda: served by the base core 0.3.11.post1, absent from the pinned 0.3.12.post1"
            ),
            "sglang/srt/distributed/parallel_state.py:309: mooncake.ep_2_11_0: image \
             cuda: sglang requires torch==2.11.0: its build is in the base core 0.3.11.post1, \
             absent from the pinned 0.3.12.post1"
                .to_owned(),
        ],
        "{run:?}"
    );
    assert!(lines[3].starts_with("verify: 3 mismatch(es)"), "{run:?}");
    let run = xtask_in(&repo, &["users"]);
    assert_eq!(run.code, Some(1), "{run:?}");
}

#[test]
fn a_user_without_a_record_is_bad_input_naming_the_command() {
    let repo = Sandbox::new();
    let record = repo.path("consumers/sglang-0.5.16.json");
    std::fs::remove_file(&record).unwrap();
    let whl = wheel("0.3.12.post1");
    let run = xtask_in(&repo, &["verify", "--wheel", whl.to_str().unwrap()]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.starts_with(&format!(
            "{}: error: image cuda's user sglang 0.5.16 has no record: run `cargo xtask users --record WHEEL` on its wheel",
            record.display()
        )),
        "{run:?}"
    );
}
