//! The modules × cores table's verdicts, proven by running the pairing for real: the
//! 0.3.13.post1 module overlaid on an installed wheel, a put through MooncakeBundleTransfer
//! against that wheel's own mooncake_master (client and master from one release).
//!
//! The table, from the cores' read surfaces and the module's uses (derived from its source,
//! statically), predicts: the 0.3.11.post1 core lacks `ReplicateConfig.group_ids`, written at
//! the module's line that sets it on every put; the 0.3.12.post1 core serves the module. The
//! runs agree.

use mooncake_sos_manifest::load_str;
use mooncake_sos_native::needs::{On, Usage, Verdict, Why};
use mooncake_sos_native::table::{ModuleNeeds, build};
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_testkit::{wheel, wheel_member};
use mooncake_sos_tests::process::run_logged;
use mooncake_sos_tests::venvs::ReleaseVenv;
use mooncake_sos_tests::{Master, SETUP_HINT, repo_root};
use std::path::PathBuf;
use std::process::Command;
use std::time::Duration;

const MODULE: &str = "mooncake/structured_object_store.py";
const PUT_SCRIPT: &str = include_str!("support/core_pairing.py");

/// A reader sharing `cargo xtask core`'s cache (`target/mooncake-sos/cores`).
fn reader() -> mooncake_sos_native::Reader {
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| repo_root().join("target"));
    mooncake_sos_native::Reader {
        cache_dir: Some(target.join("mooncake-sos/cores")),
        ..mooncake_sos_native::Reader::new()
    }
}

/// The 0.3.13.post1 module, as the wheel ships it.
fn module_0_3_13() -> ModuleSource {
    ModuleSource::read_wheel(&wheel("0.3.13.post1"), "mooncake.structured_object_store")
        .unwrap_or_else(|e| panic!("{e} ({SETUP_HINT})"))
}

/// The table's cell for the 0.3.13.post1 module over the core of `core_version`: the row is
/// the module's own uses, derived from its source.
fn predicted(core_version: &str) -> Verdict {
    let text = std::fs::read_to_string(repo_root().join("api.toml")).unwrap();
    let api = load_str("api.toml", text.as_str()).unwrap_or_else(|d| panic!("{d}"));
    let row = ModuleNeeds::from_source(&api, &module_0_3_13(), "0.3.13.post1 module".into())
        .unwrap_or_else(|e| panic!("{e}"));
    let whl = wheel(core_version);
    let core = reader()
        .read(&whl, &api.upstream.native_module)
        .unwrap_or_else(|e| panic!("{e} ({SETUP_HINT})"));
    let table = build(&[row], &[(core, whl.display().to_string())]);
    table.cells[0][0].clone()
}

/// A throwaway venv with the `core_version` wheel (and numpy, msgpack) installed offline,
/// the 0.3.13.post1 module file overlaid on it; then one put against its own master.
fn put_with_module_0_3_13_over(core_version: &str) -> (Option<i32>, String) {
    let venv = ReleaseVenv::new(core_version);
    venv.overlay(MODULE, &wheel_member(&wheel("0.3.13.post1"), MODULE));
    let (dir, env) = (venv.dir.path(), &venv.env);
    let master = Master::start(env);
    let mut put = Command::new(&env.python);
    put.args(["-c", PUT_SCRIPT])
        .current_dir(dir)
        .env("MC_PAIR_MASTER", format!("127.0.0.1:{}", master.rpc_port))
        .env("MC_TCP_BIND_ADDRESS", "127.0.0.1");
    let (st, log) = run_logged(put, Duration::from_secs(120)).unwrap();
    drop(master);
    (st.and_then(|s| s.code()), log)
}

#[test]
fn module_0_3_13_over_the_0_3_11_core_fails_at_the_first_put_on_group_ids_as_the_table_says() {
    let verdict = predicted("0.3.11.post1");
    assert!(!verdict.compatible, "{verdict:?}");
    let first = verdict.first_missing().unwrap();
    assert_eq!(first.requirement.object, "ReplicateConfig.group_ids");
    assert_eq!(first.requirement.usage, Usage::Write { on: On::Instance });
    assert!(first.requirement.required);
    assert_eq!(
        first.why,
        Why::Absent {
            missing: "ReplicateConfig.group_ids".into()
        }
    );
    // At the line that writes it on every put.
    let module = module_0_3_13();
    let line = module
        .line_of("    grouped_config.group_ids = [group_id]")
        .unwrap();
    assert_eq!(
        first.requirement.origin,
        format!("{}:{line}", module.display)
    );
    // Everything else the module needs unguarded, the old core serves: group_ids is the one
    // difference (what it only probes, it does without).
    assert_eq!(verdict.missing.len(), 1, "{verdict:?}");

    let (code, log) = put_with_module_0_3_13_over("0.3.11.post1");
    assert_eq!(code, Some(3), "the put did not fail as predicted:\n{log}");
    assert!(log.contains("setup rc=0"), "{log}");
    assert!(log.contains("in put"), "not the put that failed:\n{log}");
    // A write on an instance, the use the table named.
    assert!(log.contains(".group_ids = "), "{log}");
    assert!(
        log.lines()
            .any(|l| l.starts_with("put failed: AttributeError:")
                && l.contains(
                    "'mooncake.store.ReplicateConfig' object has no attribute 'group_ids'"
                )),
        "{log}"
    );
}

#[test]
fn module_0_3_13_over_the_0_3_12_core_puts_as_the_table_says() {
    let verdict = predicted("0.3.12.post1");
    assert!(verdict.compatible, "{verdict:?}");
    let (code, log) = put_with_module_0_3_13_over("0.3.12.post1");
    assert_eq!(code, Some(0), "{log}");
    assert!(
        log.contains("setup rc=0") && log.contains("put ok"),
        "{log}"
    );
}
