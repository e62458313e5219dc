//! `cargo xtask core --diff OLD NEW` end to end: the real cuda13 records (docs/checks.md's worked
//! example), and a doctored copy of 0.3.11.post1 whose every change the report must name.

use crate::common::{lone_file, repo_root, write_file, xtask};
use serde_json::{Value, json};
use std::path::Path;

pub(crate) const OLD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.11.post1.json";
const NEW: &str = "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json";

/// 0.3.11.post1 with one change of each kind: a method removed, an overload narrowed, a
/// property made read-only, a torch build dropped, a module added, the version bumped.
pub(crate) fn doctored(dir: &Path) -> String {
    let text = std::fs::read_to_string(repo_root().join(OLD)).unwrap();
    let mut core: Value = serde_json::from_str(&text).unwrap();
    core["wheel"]["version"] = json!("0.3.11.post2");
    let store = &mut core["classes"]["MooncakeDistributedStore"]["members"];
    store
        .as_object_mut()
        .unwrap()
        .remove("batch_is_exist")
        .unwrap();
    store["register_buffer"]["overloads"] = json!(["buffer_ptr: int"]);
    core["classes"]["ReplicateConfig"]["members"]["replica_num"]["readonly"] = json!(true);
    let modules = core["modules"].as_object_mut().unwrap();
    modules.remove("mooncake.ep_2_9_1").unwrap();
    modules.insert("mooncake.extra".into(), json!("python"));
    let path = write_file(
        dir,
        "doctored.json",
        serde_json::to_string_pretty(&core).unwrap(),
    );
    path.display().to_string()
}

#[test]
fn a_doctored_core_reports_each_change_exactly() {
    let dir = tempfile::tempdir().unwrap();
    let new = doctored(dir.path());
    let run = xtask(&["core", "--diff", OLD, &new], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout,
        "mooncake-transfer-engine-cuda13 0.3.11.post1 -> mooncake-transfer-engine-cuda13 0.3.11.post2: \
         4 breaking, 1 added, 0 compatible
breaking:
  mooncake.store.MooncakeDistributedStore.batch_is_exist: method removed
  mooncake.store.MooncakeDistributedStore.register_buffer: overload `(buffer_ptr: int, size: int)` \
         no longer accepted: `size` removed
  mooncake.store.ReplicateConfig.replica_num: property made read-only
  torch 2.9.1: torch build dropped (mooncake.ep_2_9_1)
added:
  mooncake.extra: module (Python)
"
    );
    let run = xtask(&["core", "--markdown", "--diff", OLD, &new], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    assert_eq!(
        run.stdout,
        "### `mooncake-transfer-engine-cuda13 0.3.11.post1` → `mooncake-transfer-engine-cuda13 0.3.11.post2`

4 breaking, 1 added, 0 compatible

**Breaking** (4)

| What | Change |
|---|---|
| `mooncake.store.MooncakeDistributedStore.batch_is_exist` | `method removed` |
| `mooncake.store.MooncakeDistributedStore.register_buffer` | ``overload `(buffer_ptr: int, size: int)` \
         no longer accepted: `size` removed`` |
| `mooncake.store.ReplicateConfig.replica_num` | `property made read-only` |
| `torch 2.9.1` | `torch build dropped (mooncake.ep_2_9_1)` |

**Added** (1)

| What | Change |
|---|---|
| `mooncake.extra` | `module (Python)` |
"
    );
    let run = xtask(&["core", "--json", "--diff", OLD, &new], &[]);
    let report: Value = serde_json::from_str(&run.stdout).unwrap();
    assert_eq!(report["changes"].as_array().unwrap().len(), 5, "{run:?}");
    assert_eq!(
        report["changes"][3],
        json!({"impact": "breaking", "path": "torch 2.9.1",
               "what": "torch build dropped (mooncake.ep_2_9_1)"})
    );
    // Nothing breaking the other way round is still a diff, and exits 0 only when nothing
    // breaks: the doctored core against itself.
    let run = xtask(&["core", "--diff", &new, &new], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
}

#[test]
fn the_diff_refuses_a_record_that_is_not_one() {
    let (_dir, bad) = lone_file("bad.json", "{\"format\": 3,\n  \"wheel\": 3}");
    let run = xtask(&["core", "--diff", OLD, &bad], &[]);
    assert_eq!(run.code, Some(2), "{run:?}");
    assert_eq!(run.stdout, "");
    run.assert_stderr(|e| e.starts_with(&format!("{bad}:2:")));
}

#[test]
fn the_real_pin_drops_torch_builds_and_adds_members() {
    let run = xtask(&["core", "--diff", OLD, NEW], &[]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(
        lines[..4],
        [
            "mooncake-transfer-engine-cuda13 0.3.11.post1 -> mooncake-transfer-engine-cuda13 \
             0.3.12.post1: 2 breaking, 56 added, 17 compatible",
            "breaking:",
            "  torch 2.10.0: torch build dropped (mooncake.ep_2_10_0, mooncake.pg_2_10_0)",
            "  torch 2.9.1: torch build dropped (mooncake.ep_2_9_1, mooncake.pg_2_9_1)",
        ]
    );
    for added in [
        "  mooncake.store.ReplicateConfig.group_ids: property",
        "  torch 2.13.0: torch build (mooncake.ep_2_13_0, mooncake.pg_2_13_0)",
    ] {
        assert!(lines.contains(&added), "{added}\n{run:?}");
    }
    assert!(
        lines[lines.len() - 1].starts_with(
            "  mooncake.store.MooncakeDistributedStore.setup: overloads now (local_hostname: str,"
        ),
        "{run:?}"
    );
}

/// A newer core that only adds (a module, a method) breaks nothing: exit 0, the additions
/// listed.
#[test]
fn additions_alone_exit_0() {
    let dir = tempfile::tempdir().unwrap();
    let text = std::fs::read_to_string(repo_root().join(NEW)).unwrap();
    let mut core: Value = serde_json::from_str(&text).unwrap();
    core["wheel"]["version"] = json!("0.3.12.post2");
    let store = &mut core["classes"]["MooncakeDistributedStore"]["members"];
    store["zz_added"] = store["batch_is_exist"].clone();
    let modules = core["modules"].as_object_mut().unwrap();
    modules.insert("mooncake.extra".into(), json!("python"));
    let newer = write_file(
        dir.path(),
        "newer.json",
        serde_json::to_string_pretty(&core).unwrap(),
    );
    let run = xtask(&["core", "--diff", NEW, newer.to_str().unwrap()], &[]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stdout,
        "mooncake-transfer-engine-cuda13 0.3.12.post1 -> mooncake-transfer-engine-cuda13 \
         0.3.12.post2: 0 breaking, 2 added, 0 compatible
added:
  mooncake.extra: module (Python)
  mooncake.store.MooncakeDistributedStore.zz_added: method
"
    );
}
