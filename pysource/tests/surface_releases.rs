//! The native surface of the real released modules (the wheels `scripts/setup-test-env.sh`
//! downloads) against the repository's api.toml.

use mooncake_sos_manifest::model::Api;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface::{self, SurfaceReport};
use std::path::PathBuf;

const HINT: &str = "run scripts/test.sh, or eval \"$(bash scripts/setup-test-env.sh)\" first";
const MODULE: &str = "mooncake.structured_object_store";

fn api() -> Api {
    let manifest = concat!(env!("CARGO_MANIFEST_DIR"), "/../api.toml");
    mooncake_sos_manifest::load(manifest.as_ref(), "api.toml").unwrap_or_else(|d| panic!("{d}"))
}

/// The module out of the wheel `<dist>-<version>-*.whl` in `$<var>`.
fn module(var: &str, dist: &str, version: &str) -> ModuleSource {
    let dir = std::env::var_os(var)
        .map(PathBuf::from)
        .unwrap_or_else(|| panic!("{var} is not set: {HINT}"));
    let prefix = format!("{dist}-{version}-");
    let wheel = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}: {HINT}", dir.display()))
        .filter_map(|e| e.ok().map(|e| e.path()))
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with(&prefix))
        })
        .unwrap_or_else(|| panic!("no {prefix}*.whl in {}: {HINT}", dir.display()));
    ModuleSource::read_wheel(&wheel, MODULE).unwrap_or_else(|e| panic!("{e}"))
}

fn non_cuda(version: &str) -> ModuleSource {
    module(
        "MC_TEST_WHEELS",
        "mooncake_transfer_engine_non_cuda",
        version,
    )
}

fn check(source: &ModuleSource) -> SurfaceReport {
    surface::check(&api(), source).unwrap_or_else(|e| panic!("{e}"))
}

fn line_of(source: &ModuleSource, text: &str) -> usize {
    let at = source
        .text
        .find(text)
        .unwrap_or_else(|| panic!("{text:?} not in {}", source.display));
    source.text[..at].matches('\n').count() + 1
}

#[test]
fn the_0_3_12_module_uses_exactly_what_api_toml_declares() {
    let source = non_cuda("0.3.12.post1");
    let report = check(&source);
    assert!(report.ok(), "{:#?}", report.failure_lines());
    // Every declaration the module side needs is used: nothing stale either.
    assert_eq!(report.warning_lines(), Vec::<String>::new());
    assert_eq!(report.counts(), (19, 1), "{:#?}", report.use_lines());
    // The store's fast paths are probed, its put/get/remove are not.
    let lines = report.use_lines();
    let get = line_of(&source, "self._store.get(ref.manifest_key)");
    let probe = line_of(&source, "getattr(store, \"register_buffer\", None)");
    for want in [
        format!(
            "{}:{get}: native MooncakeDistributedStore.get: call(1 arg) on an instance: required",
            source.display
        ),
        format!(
            "{}:{probe}: native MooncakeDistributedStore.register_buffer: read on an instance: optional, probed by getattr at line {probe} (fallback None)",
            source.display,
        ),
        format!(
            "{}:{}: sibling mooncake.buffer_pool: import: optional, a failure is caught at line {}",
            source.display,
            line_of(&source, "from mooncake.buffer_pool import BufferPool"),
            line_of(
                &source,
                "except (ImportError, AttributeError, RuntimeError, TypeError)"
            )
        ),
    ] {
        assert!(lines.contains(&want), "no {want:?} in {lines:#?}");
    }
}

#[test]
fn the_0_3_13_module_writes_replicate_config_group_ids_which_api_toml_lacks() {
    let source = non_cuda("0.3.13.post1");
    let report = check(&source);
    assert!(!report.ok());
    let line = line_of(&source, "    grouped_config.group_ids = [group_id]\n");
    let want = format!(
        "{}:{line}: native ReplicateConfig.group_ids: undeclared: expected a [[native]] entry, found required write on an instance",
        source.display
    );
    let failures = report.failure_lines();
    assert!(
        failures.iter().any(|f| f.starts_with(&want)),
        "no {want:?} in {failures:#?}"
    );
    // Its other new needs are named too: the guarded copy of the config's fields, the C
    // fast path.
    for subject in [
        ": native ReplicateConfig.with_hard_pin: undeclared:",
        ": sibling mooncake._fast_copy: undeclared:",
    ] {
        assert!(
            failures.iter().any(|f| f.contains(subject)),
            "{subject}: {failures:#?}"
        );
    }
}

#[test]
fn the_0_3_14_module_imports_sibling_modules_no_older_wheel_has() {
    let source = module(
        "MC_TEST_OTHER_WHEELS",
        "mooncake_transfer_engine_cuda13",
        "0.3.14",
    );
    let report = check(&source);
    assert!(!report.ok());
    let failures = report.failure_lines();
    for (module, import) in [
        (
            "mooncake._partial_read",
            "from mooncake._partial_read import",
        ),
        (
            "mooncake._structured_ranges",
            "from mooncake._structured_ranges import",
        ),
    ] {
        let want = format!(
            "{}:{}: sibling {module}: undeclared: expected a [[sibling]] entry, found required import at module level",
            source.display,
            line_of(&source, import)
        );
        assert!(failures.contains(&want), "no {want:?} in {failures:#?}");
    }
}

#[test]
fn the_surface_of_a_real_module_is_deterministic() {
    let source = non_cuda("0.3.13.post1");
    let config = surface::SurfaceConfig::from_api(&api());
    let first = surface::derive(&source, &config).unwrap();
    let again = surface::derive(&source, &config).unwrap();
    assert_eq!(first.uses, again.uses);
    assert_eq!(
        serde_json::to_string(&first).unwrap(),
        serde_json::to_string(&again).unwrap()
    );
    assert!(
        first.uses.windows(2).all(|w| w[0] < w[1]),
        "sorted, each once"
    );
}
