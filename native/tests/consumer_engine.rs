//! The package's other extension modules (`mooncake.engine`) in consumer code: their uses are
//! checked like the native core's, against the `[[native]]` entries that name the module,
//! and fitted to each image's core record.

use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images;
use mooncake_sos_pysource::consumer::{ConsumerFile, check};
use mooncake_sos_pysource::source::ModuleSource;

const API: &str = include_str!("../../api.toml");

fn failures(text: &str, api: &Api, extensions: &[&str]) -> Vec<String> {
    let source = ModuleSource::from_bytes("c.py", text.as_bytes().to_vec()).unwrap();
    let file = ConsumerFile {
        source,
        module: "c".into(),
        named: true,
    };
    let extensions: Vec<String> = extensions.iter().map(|&e| e.to_owned()).collect();
    check(api, &[file], &extensions).unwrap().failure_lines()
}

const ENGINE_USER: &str = "\
from mooncake.engine import TransferEngine
import mooncake.engine as me

def make():
    e = TransferEngine()
    e.initialize(\"h\", \"P2PHANDSHAKE\", \"rdma\", \"\")
    e.initialize(\"h\", \"P2PHANDSHAKE\")
    e.get_rpc_port()
    return e

def other():
    me.TransferEngine().register_memory(1, 2)
    me.TransferEngine().batch_transfer_sync_write(\"s\", [1], [2], [3], transport_hint=\"x\", bogus=1)
    getattr(me.TransferEngine(), \"regis\" + \"ter_memory\")(1, 2)
";

#[test]
fn engine_calls_are_checked_like_the_cores() {
    let api = mooncake_sos_manifest::load_str("api.toml", API).unwrap();
    // Against api.toml: an undeclared member and a computed name. Its engine entries declare
    // no overload (the releases' docstrings differ): the calls are fitted to the cores below.
    assert_eq!(
        failures(ENGINE_USER, &api, &[]),
        [
            "c.py:8:7: native mooncake.engine.TransferEngine.get_rpc_port: undeclared: expected a \
             [[native]] entry, found required call() on an instance",
            "c.py:14: native mooncake.engine.TransferEngine.<computed>: computed member name: \
             expected a member name api.toml can declare, found read of a name known only at \
             run time",
        ]
    );
    // Against each image's core record: every call fits an overload of its engine.
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let sides = images::load_all(&root, &api).unwrap();
    let source = ModuleSource::from_bytes("c.py", ENGINE_USER.as_bytes().to_vec()).unwrap();
    let file = ConsumerFile {
        source,
        module: "c".into(),
        named: true,
    };
    let report = check(&api, &[file], &images::extensions(&sides)).unwrap();
    let found: Vec<String> = images::check(&sides, "c.py", &report.files[0].native)
        .iter()
        .map(|f| format!("{} {} {}", f.origin, f.subject, f.image))
        .collect();
    assert_eq!(
        found,
        [
            "c.py:7 native mooncake.engine.TransferEngine.initialize cuda",
            "c.py:13 native mooncake.engine.TransferEngine.batch_transfer_sync_write cuda",
            "c.py:7 native mooncake.engine.TransferEngine.initialize rocm",
            "c.py:13 native mooncake.engine.TransferEngine.batch_transfer_sync_write rocm",
        ]
    );
}

/// Without a `[[native]]` entry naming the module, a module the images' cores record as an
/// extension is still native: its uses are undeclared members, not a sibling import.
#[test]
fn an_extension_api_toml_does_not_name_is_native_when_the_cores_say_so() {
    let text = API
        .split("\n[[native]]\nmodule = \"mooncake.engine\"")
        .enumerate()
        .map(|(i, part)| match i {
            0 => part.to_owned(),
            // Drop each engine entry: up to the next blank line.
            _ => part.find("\n\n").map_or("", |at| &part[at..]).to_owned(),
        })
        .collect::<String>();
    let api = mooncake_sos_manifest::load_str("api.toml", &text).unwrap_or_else(|d| panic!("{d}"));
    assert!(api.surface.members.iter().all(|m| m.module.is_none()));
    let user = "from mooncake.engine import TransferEngine\nTransferEngine().initialize(\"h\")\n";
    assert_eq!(
        failures(user, &api, &["mooncake.engine"]),
        [
            "c.py:1:29: native mooncake.engine.TransferEngine: undeclared: expected a [[native]] \
             entry, found required read",
            "c.py:2:1: native mooncake.engine.TransferEngine: undeclared: expected a [[native]] \
             entry, found required call()",
            "c.py:2:18: native mooncake.engine.TransferEngine.initialize: undeclared: expected a \
             [[native]] entry, found required call(1 arg) on an instance",
        ]
    );
    // Known to nothing, it is a module of the package like any other.
    assert_eq!(
        failures(user, &api, &[]),
        [
            "c.py:1:29: sibling mooncake.engine: undeclared: expected a [[sibling]] entry, found \
          required import at module level"
        ]
    );
}

/// Importing the module whole is its use, listed, that api.toml declares nothing for (the
/// members used of it are what is declared): no failure, no sibling.
#[test]
fn an_extension_imported_whole_is_listed_as_its_import() {
    let api = mooncake_sos_manifest::load_str("api.toml", API).unwrap();
    let user = "import mooncake.engine\n\
                def lazy():\n\
                \x20   from mooncake import engine as e\n\
                \x20   return e\n";
    let source = ModuleSource::from_bytes("c.py", user.as_bytes().to_vec()).unwrap();
    let file = ConsumerFile {
        source,
        module: "c".into(),
        named: true,
    };
    let report = check(&api, &[file], &["mooncake.engine".to_owned()]).unwrap();
    assert_eq!(report.failure_lines(), Vec::<String>::new());
    assert_eq!(
        report.use_lines("mooncake.store"),
        [
            "c.py:1: extension mooncake.engine: import at module level: required",
            "c.py:3: extension mooncake.engine: import: optional, lazy, in the function at line 2",
        ]
    );
}
