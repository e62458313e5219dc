//! The generated shim (generated/python/mooncake_sos.py), run by a real python3 against
//! package trees made here: it passes when everything api.toml declares is there and names
//! exactly what is missing otherwise. The native stand-in is built from api.toml's own
//! [[native]] list, so the cases follow the manifest. shim_real.rs runs it on the real wheels.

use mooncake_sos_manifest::model::{Api, NativeCheck};
use mooncake_sos_tests::repo_root;
use std::process::Command;

fn api() -> Api {
    mooncake_sos_manifest::load(&repo_root().join("api.toml"), "api.toml")
        .unwrap_or_else(|d| panic!("{d}"))
}

/// A module carrying the whole API as api.toml declares it.
const MODULE: &str = r#"from __future__ import annotations
from dataclasses import dataclass, field
from typing import Any

try:  # as upstream does: the module imports even when the native core cannot load
    import mooncake.store as _native
except Exception:
    _native = None

DEFAULT_BUNDLE_CHUNK_BYTES = 64 * 1024**2

@dataclass(frozen=True)
class FieldSchema:
    codec: str
    nullable: bool = True
    metadata: dict[str, Any] = field(default_factory=dict)

class MooncakeBundleTransfer:
    def __init__(self, store, key_prefix="bundle", default_chunk_bytes=DEFAULT_BUNDLE_CHUNK_BYTES, buffer_pool=None):
        self.store = store

    def put(self, data, *, type="dataproto", namespace="default", partition="default", stage="default", chunk_bytes=None, policy=None, config=None, field_schemas=None):
        return None

    def get(self, ref, *, type="dataproto", fields=None, batch_fields=None, non_tensor_fields=None, meta_info_keys=None, data_cls=None, destinations=None, rows=None):
        return None

    @staticmethod
    def release_result(result):
        return None

    def cleanup_dataproto(self, ref):
        return None

def export_dataproto_ref(ref):
    return {}

def import_dataproto_ref(handle):
    return None

export_ref = export_dataproto_ref
import_ref = import_dataproto_ref
"#;

/// A pybind11-like native module: docstring signatures and attributes from api.toml.
fn native_module(api: &Api, skip: Option<usize>) -> String {
    let mut classes: std::collections::BTreeMap<String, Vec<String>> = Default::default();
    for (i, n) in api.native.iter().enumerate() {
        if Some(i) == skip {
            continue;
        }
        let (class, member) = n.object.split_once('.').unwrap_or((&n.object, ""));
        let body = classes.entry(class.to_string()).or_default();
        match &n.check {
            // A class's overload is its constructor's.
            NativeCheck::Overload(params) if member.is_empty() => {
                let params = if params.is_empty() { String::new() } else { format!(", {params}") };
                body.push(format!(
                    "    def __init__(self, *args, **kwargs):\n        pass\n    __init__.__doc__ = \
                     \"__init__(self: mooncake.store.{class}{params}) -> None\"\n"
                ))
            }
            NativeCheck::Overload(params) => body.push(format!(
                "    def {member}(self, *args, **kwargs):\n        return 0\n    {member}.__doc__ = \
                 \"{member}(*args, **kwargs)\\nOverloaded function.\\n\\n1. {member}(self: mooncake.store.{class}, other: int) -> int\\n\\n\
                 2. {member}(self: mooncake.store.{class}, {params}) -> int\\n\\nDoes things.\"\n"
            )),
            NativeCheck::Attribute { name, .. } => body.push(format!("    {name} = 1\n")),
        }
    }
    let mut out = String::new();
    for (class, members) in classes {
        out.push_str(&format!("class {class}:\n{}\n", members.concat()));
    }
    out
}

struct Tree {
    dir: tempfile::TempDir,
}

impl Tree {
    fn new(module: &str, native: &str) -> Tree {
        let dir = tempfile::tempdir().unwrap();
        let pkg = dir.path().join("mooncake");
        std::fs::create_dir_all(&pkg).unwrap();
        std::fs::write(pkg.join("__init__.py"), "").unwrap();
        std::fs::write(pkg.join("structured_object_store.py"), module).unwrap();
        // The native core and every other extension module the contract names get the same
        // stand-in (each holds every class; only the entries' own are looked up).
        std::fs::write(pkg.join("store.py"), native).unwrap();
        for m in api().native.iter().filter_map(|n| n.module.as_deref()) {
            let leaf = m
                .strip_prefix("mooncake.")
                .expect("a module of the package");
            std::fs::write(pkg.join(format!("{leaf}.py")), native).unwrap();
        }
        // The installed wheel's metadata, which the report names.
        let dist = dir
            .path()
            .join("mooncake_transfer_engine_cuda13-0.3.11.post1.dist-info");
        std::fs::create_dir_all(&dist).unwrap();
        std::fs::write(
            dist.join("METADATA"),
            "Metadata-Version: 2.1\nName: mooncake-transfer-engine-cuda13\nVersion: 0.3.11.post1\n",
        )
        .unwrap();
        std::fs::copy(
            repo_root().join("generated/python/mooncake_sos.py"),
            dir.path().join("mooncake_sos.py"),
        )
        .unwrap();
        Tree { dir }
    }

    fn python(&self, args: &[&str]) -> (i32, String, String) {
        let out = Command::new("python3")
            .args([
                "-I",
                "-c",
                "import sys; sys.path.insert(0, sys.argv.pop(1)); exec(sys.argv.pop(1))",
            ])
            .arg(self.dir.path())
            .args(args)
            .output()
            .expect("python3 runs");
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        (
            out.status.code().unwrap_or(-1),
            text(out.stdout),
            text(out.stderr),
        )
    }

    /// The problems `import mooncake_sos` raises, one per line.
    fn import_misses(&self) -> Vec<String> {
        let (code, out, err) = self.python(&[
            "try:\n    import mooncake_sos\nexcept ImportError as e:\n    print(e)\nelse:\n    print('imported')",
        ]);
        assert_eq!(code, 0, "{out}{err}");
        if out.trim() == "imported" {
            return vec![];
        }
        assert!(
            out.contains("problem(s)"),
            "not the shim's ImportError: {out}"
        );
        out.lines()
            .filter_map(|l| l.strip_prefix("  - "))
            .map(str::to_string)
            .collect()
    }
}

fn misses_with(find: &str, replace: &str) -> Vec<String> {
    assert!(MODULE.contains(find), "{find:?}");
    Tree::new(
        &MODULE.replacen(find, replace, 1),
        &native_module(&api(), None),
    )
    .import_misses()
}

#[test]
fn passes_when_everything_is_there_and_re_exports_the_module() {
    let tree = Tree::new(MODULE, &native_module(&api(), None));
    assert_eq!(tree.import_misses(), Vec::<String>::new());
    let (code, out, err) = tree.python(&[
        "import mooncake_sos, mooncake.structured_object_store as m\n\
         assert mooncake_sos.FieldSchema is m.FieldSchema and mooncake_sos.import_ref is m.import_ref\n\
         print(sorted(mooncake_sos.__all__), mooncake_sos.API_FINGERPRINT)",
    ]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(
        out.contains(
            "'FieldSchema', 'MooncakeBundleTransfer', 'check', 'export_ref', 'import_ref'"
        ),
        "{out}"
    );
    assert!(out.contains(&api().fingerprint()), "{out}");
}

#[test]
fn names_exactly_the_missing_symbols() {
    assert_eq!(
        misses_with(
            "@dataclass(frozen=True)\nclass FieldSchema:",
            "@dataclass(frozen=True)\nclass Other:"
        ),
        ["FieldSchema: missing"]
    );
    assert_eq!(
        misses_with(
            "export_ref = export_dataproto_ref\nimport_ref = import_dataproto_ref\n",
            ""
        ),
        ["export_ref: missing", "import_ref: missing"]
    );
    assert_eq!(
        misses_with(
            "    def cleanup_dataproto(self, ref):",
            "    def cleanup(self, ref):"
        ),
        ["MooncakeBundleTransfer.cleanup_dataproto: missing"]
    );
}

#[test]
fn names_exactly_the_parameter_problems() {
    let cases: &[(&str, &str, &str)] = &[
        (
            ", config=None, field_schemas=None):",
            ", config=None):",
            "MooncakeBundleTransfer.put: parameter 'field_schemas' missing",
        ),
        (
            "def put(self, data, *, type=\"dataproto\", namespace=\"default\",",
            "def put(self, data, namespace=\"default\", *, type=\"dataproto\",",
            "MooncakeBundleTransfer.put: parameter 'namespace' is positional, expected keyword-only",
        ),
        (
            "def get(self, ref, *, type=\"dataproto\"",
            "def get(self, ref, *, type=\"dict\"",
            "MooncakeBundleTransfer.get: parameter 'type': default is 'dict', expected 'dataproto'",
        ),
        (
            "def get(self, ref, *,",
            "def get(self, ref, extra, *,",
            "MooncakeBundleTransfer.get: undeclared required parameter 'extra'",
        ),
        (
            "key_prefix=\"bundle\"",
            "key_prefix",
            "MooncakeBundleTransfer.__init__: parameter 'key_prefix': has no default, expected 'bundle'",
        ),
        (
            "    @staticmethod\n",
            "",
            "MooncakeBundleTransfer.release_result: is not a staticmethod",
        ),
        (
            "export_ref = export_dataproto_ref",
            "export_ref = import_dataproto_ref",
            "export_ref: is not an alias of export_dataproto_ref",
        ),
        (
            "@dataclass(frozen=True)\nclass FieldSchema",
            "@dataclass\nclass FieldSchema",
            "FieldSchema: is not frozen",
        ),
        (
            "field(default_factory=dict)",
            "field(default_factory=list)",
            "FieldSchema.metadata: default_factory is list, expected dict",
        ),
        (
            "nullable: bool = True",
            "nullable: bool = False",
            "FieldSchema.nullable: default is False, expected True",
        ),
        (
            "@dataclass(frozen=True)\nclass FieldSchema:\n    codec: str\n",
            "@dataclass(frozen=True)\nclass FieldSchema:\n    kind: str\n",
            "FieldSchema.codec: field missing",
        ),
        (
            "class MooncakeBundleTransfer:",
            "def MooncakeBundleTransfer(*a):\n    pass\nclass _Old:",
            "MooncakeBundleTransfer: is not a class",
        ),
    ];
    for (find, replace, want) in cases {
        let misses = misses_with(find, replace);
        assert_eq!(misses.len(), 1, "{want}: {misses:#?}");
        assert!(
            misses[0].starts_with(want),
            "want {want:?}, got {misses:#?}"
        );
    }
}

#[test]
fn names_each_missing_native_requirement() {
    let api = api();
    assert!(!api.native.is_empty());
    for (i, n) in api.native.iter().enumerate() {
        let misses = Tree::new(MODULE, &native_module(&api, Some(i))).import_misses();
        let module = n.module.as_deref().unwrap_or("mooncake.store");
        let label = format!("{module}.{}", n.object);
        assert_eq!(misses.len(), 1, "{label}: {misses:#?}");
        assert!(misses[0].starts_with(&label), "{label}: {misses:#?}");
        assert!(
            misses[0].contains(&n.reason),
            "the miss says why it is needed: {misses:#?}"
        );
    }
    let broken = Tree::new(
        MODULE,
        "raise ImportError('libibverbs.so.1: cannot open shared object file')",
    );
    let misses = broken.import_misses();
    // One miss per module that cannot be imported: the core, then each other extension
    // module the contract names (its entries are not looked at).
    let mut expected = vec!["mooncake.store: cannot import the native core".to_owned()];
    let mut others: Vec<&str> = Vec::new();
    for m in api.native.iter().filter_map(|n| n.module.as_deref()) {
        if !others.contains(&m) {
            others.push(m);
        }
    }
    expected.extend(
        others
            .iter()
            .map(|m| format!("{m}: cannot import an extension module the contract uses")),
    );
    let found: Vec<&str> = misses
        .iter()
        .map(|m| m.split(" (").next().unwrap())
        .collect();
    assert_eq!(found, expected, "{misses:#?}");
    assert!(
        misses.iter().all(|m| m.contains("(libibverbs.so.1")),
        "{misses:#?}"
    );
}

#[test]
fn the_report_names_the_pin_the_installed_wheel_and_the_fix() {
    let tree = Tree::new(
        &MODULE.replacen("class FieldSchema", "class Gone", 1),
        &native_module(&api(), None),
    );
    let (code, out, err) =
        tree.python(&["import runpy; runpy.run_module('mooncake_sos', run_name='__main__')"]);
    assert_eq!(code, 1, "{out}{err}");
    let api = api();
    assert!(
        err.contains(&format!(
            "pinned:    {}@{}",
            api.upstream.repo, api.upstream.commit
        )),
        "{err}"
    );
    assert!(
        err.contains("installed: mooncake-transfer-engine-cuda13 0.3.11.post1"),
        "{err}"
    );
    assert!(
        err.contains(
            "fix:       install mooncake-wheel/mooncake/structured_object_store.py at 4dbe5a4c"
        ),
        "{err}"
    );
    let (code, out, _) = tree.python(&["import sys, runpy; sys.argv = ['x', '--json']; runpy.run_module('mooncake_sos', run_name='__main__')"]);
    assert_eq!(code, 1);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], false);
    assert_eq!(
        report["misses"],
        serde_json::json!(["FieldSchema: missing"])
    );
    assert_eq!(report["fingerprint"], api.fingerprint());
}

/// `check()` and `report()` only report: run under another name (as the Rust runtime runs the
/// file), the shim raises and prints nothing even when the module misses names, and its
/// `module` argument checks another copy.
#[test]
fn check_has_no_side_effects_and_takes_another_module_name() {
    let tree = Tree::new(
        &MODULE.replacen("class FieldSchema", "class Gone", 1),
        &native_module(&api(), None),
    );
    std::fs::create_dir(tree.dir.path().join("other")).unwrap();
    std::fs::write(tree.dir.path().join("other/__init__.py"), "").unwrap();
    std::fs::write(
        tree.dir.path().join("other/structured_object_store.py"),
        MODULE,
    )
    .unwrap();
    let (code, out, err) = tree.python(&[
        "import importlib.util, json, sys\n\
         spec = importlib.util.spec_from_file_location('elsewhere', sys.path[0] + '/mooncake_sos.py')\n\
         shim = importlib.util.module_from_spec(spec)\n\
         spec.loader.exec_module(shim)\n\
         r = shim.report()\n\
         print(json.dumps([shim.check(), shim.check('other.structured_object_store'), r['ok'], r['module'], r['pinned'], r['fix']]))",
    ]);
    assert_eq!((code, err.as_str()), (0, ""), "{out}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let api = api();
    assert_eq!(v[0], serde_json::json!(["FieldSchema: missing"]));
    assert_eq!(
        v[1],
        serde_json::json!([]),
        "the good copy under another name"
    );
    assert_eq!(v[2], false);
    assert_eq!(v[3], "mooncake.structured_object_store");
    assert!(v[4].as_str().unwrap().contains(&api.upstream.commit), "{v}");
    assert!(v[5].as_str().unwrap().starts_with("install "), "{v}");
}

/// The command line is strict: unknown arguments are an error (exit 2, usage on stderr).
#[test]
fn unknown_arguments_exit_2() {
    let tree = Tree::new(MODULE, &native_module(&api(), None));
    let run = |args: &str| {
        tree.python(&[&format!(
            "import sys, runpy; sys.argv = ['x'{args}]; runpy.run_module('mooncake_sos', run_name='__main__')"
        )])
    };
    let (code, out, _) = run("");
    assert_eq!(code, 0, "{out}");
    assert!(
        out.starts_with("ok: mooncake.structured_object_store provides"),
        "{out}"
    );
    for bad in [", '--jsn'", ", '--json', 'extra'", ", '-x'"] {
        let (code, out, err) = run(bad);
        assert_eq!(code, 2, "{bad}: {out}{err}");
        assert!(
            err.contains("usage: python3 -m mooncake_sos [-h] [--json]")
                && err.contains("unrecognized arguments"),
            "{bad}: {err}"
        );
        assert_eq!(out, "", "{bad}");
    }
    let (code, out, _) = run(", '--json'");
    assert_eq!(code, 0);
    let report: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(report["ok"], true);
}

/// The shim parses with Python 3.9's grammar and imports only the standard library, except
/// the smoke's value builder, which imports what the consumer's values are made of (numpy,
/// torch), only when `--smoke` runs.
#[test]
fn shim_is_python_3_9_and_stdlib_only() {
    let shim = repo_root().join("generated/python/mooncake_sos.py");
    let program = r#"
import ast, sys
tree = ast.parse(open(sys.argv[1]).read(), feature_version=(3, 9))
found = []
def walk(node, fn):
    for child in ast.iter_child_nodes(node):
        inner = child.name if isinstance(child, ast.FunctionDef) else fn
        if isinstance(child, ast.Import):
            found.extend((a.name.split('.')[0], fn) for a in child.names)
        if isinstance(child, ast.ImportFrom) and child.module:
            found.append((child.module.split('.')[0], fn))
        walk(child, inner)
walk(tree, None)
bad = sorted({(m, f) for m, f in found if m not in sys.stdlib_module_names} - {("numpy", "_value"), ("torch", "_value")})
print(bad)
"#;
    let out = Command::new("python3")
        .args(["-c", program])
        .arg(&shim)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "[]");
}
