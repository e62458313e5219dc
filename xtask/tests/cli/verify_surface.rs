//! `cargo xtask verify` and the native surface: the real released modules (the wheels
//! `scripts/setup-test-env.sh` downloads), api.toml edited in a sandbox, and bad input.

use crate::common::cores::cuda13_0_3_14_wheel;
use crate::common::{Run, Sandbox, line_of, lines_where, write_file};
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_testkit::wheel;

/// The images and their cores, as verify's summary names them.
pub const IMAGES: &str = "cuda: mooncake-transfer-engine-cuda13 0.3.12.post1, rocm: mooncake-transfer-engine-non-cuda 0.3.12.post1";

fn xtask(args: &[&str]) -> Run {
    crate::common::xtask(args, &[])
}

/// The release's module, from its non-cuda wheel, in a temp dir of its own (which must
/// outlive the path): (the dir, the path, the text).
fn module_file(version: &str) -> (tempfile::TempDir, String, String) {
    let dir = tempfile::tempdir().unwrap();
    let source = ModuleSource::read_wheel(&wheel(version), "mooncake.structured_object_store")
        .unwrap_or_else(|e| panic!("{e}"));
    let path = write_file(dir.path(), "structured_object_store.py", &source.text);
    (dir, path.display().to_string(), source.text)
}

#[test]
fn the_0_3_12_module_passes_with_its_surface_listed_use_by_use() {
    let (_dir, path, text) = module_file("0.3.12.post1");
    let m = path.as_str();
    let run = xtask(&["verify", "--module", m, "--surface"]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert_eq!(
        run.stderr, "",
        "no warnings: every declaration is used: {run:?}"
    );
    let mut lines: Vec<&str> = run.stdout.lines().collect();
    let summary = lines.pop().unwrap();
    assert_eq!(
        summary,
        format!(
            "verify: native surface of {m}: {} uses of 19 native members and 1 sibling modules; matches api.toml; served by every image ({IMAGES})",
            lines.len()
        )
    );
    assert!(
        lines.iter().all(|l| l.starts_with(&format!("{m}:"))),
        "{run:?}"
    );
    let remove = line_of(&text, "status = store.remove(key, True)");
    let want = format!(
        "{m}:{remove}: native MooncakeDistributedStore.remove: call(2 args) on an instance: required"
    );
    assert!(lines.contains(&want.as_str()), "no {want:?}: {run:?}");

    // Plain verify checks the symbols and the surface together.
    let run = xtask(&["verify", "--module", m]);
    assert_eq!(run.code, Some(0), "{run:?}");
    assert!(
        run.stdout.contains("matches api.toml")
            && run
                .stdout
                .contains("native surface: 27 members, 1 sibling modules"),
        "{run:?}"
    );
}

#[test]
fn the_0_3_13_module_fails_on_replicate_config_group_ids() {
    let (_dir, path, text) = module_file("0.3.13.post1");
    let m = path.as_str();
    let line = line_of(&text, "    grouped_config.group_ids = [group_id]");
    let want = format!(
        "{m}:{line}: native ReplicateConfig.group_ids: undeclared: expected a [[native]] entry, found required write on an instance"
    );
    for args in [
        vec!["verify", "--module", m],
        vec!["verify", "--module", m, "--surface"],
    ] {
        let run = xtask(&args);
        assert_eq!(run.code, Some(1), "{args:?}: {run:?}");
        assert!(
            run.stdout.lines().any(|l| l.starts_with(&want)),
            "{args:?}: no {want:?}: {run:?}"
        );
        assert!(run.last_line().contains("mismatch(es)"), "{run:?}");
    }
}

#[test]
fn the_0_3_14_module_fails_on_its_two_new_sibling_modules() {
    let whl = cuda13_0_3_14_wheel();
    let w = whl.to_str().unwrap();
    let run = xtask(&["verify", "--wheel", w]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let source = ModuleSource::read_wheel(&whl, "mooncake.structured_object_store").unwrap();
    for module in ["mooncake._partial_read", "mooncake._structured_ranges"] {
        let want = format!(
            "{}:{}: sibling {module}: undeclared: expected a [[sibling]] entry, found required import at module level",
            source.display,
            line_of(&source.text, &format!("from {module} import"))
        );
        assert!(
            run.stdout.lines().any(|l| l == want),
            "no {want:?}: {run:?}"
        );
    }
}

#[test]
fn json_carries_the_same_facts_as_the_text() {
    let (_dir, path, text) = module_file("0.3.13.post1");
    let m = path.as_str();
    let run = xtask(&["verify", "--module", m, "--surface", "--json"]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let v: serde_json::Value = serde_json::from_str(&run.stdout).expect("valid JSON");
    assert_eq!(v["ok"], false);
    assert_eq!(v["file"], m);
    let uses = v["uses"].as_array().unwrap();
    // The text lists the same uses, in the same order, then the same failures.
    let text_run = xtask(&["verify", "--module", m, "--surface"]);
    let lines: Vec<&str> = text_run.stdout.lines().collect();
    assert!(
        lines
            .last()
            .unwrap()
            .contains(&format!(": {} uses of ", uses.len())),
        "{text_run:?}"
    );
    for (u, l) in uses.iter().zip(&lines) {
        assert!(l.starts_with(&format!("{m}:{}: ", u["line"])), "{u} vs {l}");
    }
    let failures = v["failures"].as_array().unwrap();
    // And what the images cannot serve: nothing, since the CUDA image pins 0.3.12.post1, whose
    // core has group_ids (tests/cli/verify_images.rs: the overlay's 0.3.11.post1 core lacks it).
    let images = v["images"].as_array().unwrap();
    assert!(images.is_empty(), "{v:#}");
    assert_eq!(
        lines.len(),
        uses.len() + failures.len() + images.len() + 1,
        "{text_run:?}"
    );
    let line = line_of(&text, "    grouped_config.group_ids = [group_id]");
    let failure = v["failures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|f| f["subject"] == "native ReplicateConfig.group_ids")
        .expect("group_ids failure");
    assert_eq!(failure["line"], line);
    assert_eq!(failure["what"], "undeclared");
    let write = uses
        .iter()
        .find(|u| u["line"] == line)
        .expect("the use at that line");
    assert_eq!(write["target"]["path"], "ReplicateConfig.group_ids");
    assert_eq!(write["target"]["on"], "instance");
    assert_eq!(write["access"]["kind"], "write");
    assert_eq!(write["optional"], serde_json::Value::Null);
    // A probed use keeps its fallback.
    let probe = uses
        .iter()
        .find(|u| u["optional"]["fallback"] == "SimpleNamespace")
        .expect("the getattr(..., SimpleNamespace) probe");
    assert_eq!(probe["target"]["path"], "ReplicateConfig");
    // Deterministic: the same bytes twice.
    assert_eq!(
        run.stdout,
        xtask(&["verify", "--module", m, "--surface", "--json"]).stdout
    );
}

#[test]
fn each_kind_of_manifest_gap_is_named() {
    let (_dir, path, text) = module_file("0.3.12.post1");
    let m = path.as_str();
    let sb = Sandbox::new();
    // The sibling undeclared, `get` declared optional, an attribute nothing uses.
    sb.edit(
        "api.toml",
        "[[sibling]]\nmodule = \"mooncake.buffer_pool\"\nuse = \"optional\"\n",
        "",
    );
    sb.edit(
        "api.toml",
        "reason = \"the native BufferPool for pool-backed gets; imported lazily, inside try\"\n",
        "",
    );
    sb.edit(
        "api.toml",
        "object = \"MooncakeDistributedStore.get\"\n",
        "object = \"MooncakeDistributedStore.get\"\nuse = \"optional\"\n",
    );
    sb.edit(
        "api.toml",
        "# The fast data path",
        "[[native]]\nobject = \"MooncakeDistributedStore.is_exist\"\nuse = \"optional\"\nreason = \"x\"\n\n# The fast data path",
    );
    let manifest = sb.manifest();
    let run = xtask(&[
        "verify",
        "--manifest",
        manifest.to_str().unwrap(),
        "--module",
        m,
        "--surface",
    ]);
    assert_eq!(run.code, Some(1), "{run:?}");
    let get = line_of(
        &text,
        "manifest = _decode_manifest(self._store.get(ref.manifest_key))",
    );
    let pool = line_of(&text, "from mooncake.buffer_pool import BufferPool");
    let failures = lines_where(&run.stdout, |l| {
        l.contains(": undeclared: ") || l.contains(": use: ")
    });
    assert_eq!(
        failures,
        [
            format!(
                "{m}:{get}: native MooncakeDistributedStore.get: use: expected optional (as declared), found required call(1 arg) on an instance (unguarded)"
            ),
            format!(
                "{m}:{pool}: sibling mooncake.buffer_pool: undeclared: expected a [[sibling]] entry, found optional import"
            ),
        ]
    );
    assert_eq!(
        run.stderr,
        format!(
            "{m}: warning: native MooncakeDistributedStore.is_exist: unused: expected a use in the module (or `by = \"consumer\"`), found none\n"
        )
    );
}

#[test]
fn a_module_that_is_not_python_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let bad = write_file(dir.path(), "notes.py", "This is not Python: (\n");
    let b = bad.to_str().unwrap();
    let binary = write_file(dir.path(), "store.so", b"\x7fELF\x02\x01\x01\x00\xff\xfe");
    let s = binary.to_str().unwrap();
    for (args, want) in [
        (
            vec!["verify", "--module", b, "--surface"],
            format!("{b}:1:1: error: Python syntax error"),
        ),
        (
            vec!["verify", "--module", b, "--surface", "--json"],
            format!("{b}:1:1: error: Python syntax error"),
        ),
        (
            vec!["verify", "--module", s, "--surface"],
            format!("{s}:1:9: error: cannot read the module: not UTF-8: invalid byte at line 1"),
        ),
    ] {
        let run = xtask(&args);
        assert_eq!(run.code, Some(2), "{args:?}: {run:?}");
        assert_eq!(run.stdout, "", "no partial output: {run:?}");
        assert!(run.stderr.starts_with(&want), "want {want:?}: {run:?}");
    }
    // --json only goes with --surface.
    let run = xtask(&["verify", "--module", b, "--json"]);
    assert_eq!(run.code, Some(2), "{run:?}");
}
