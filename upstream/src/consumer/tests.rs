use super::{ConsumerReport, UseKind, check};
use crate::source::ModuleSource;
use mooncake_sos_codegen::model::Api;

const API: &str = include_str!("../../../api.toml");

fn api() -> Api {
    mooncake_sos_codegen::load_str("api.toml", API).unwrap_or_else(|d| panic!("{d}"))
}

fn run(text: &str) -> ConsumerReport {
    let source = ModuleSource::from_bytes("consumer.py", text.as_bytes().to_vec()).unwrap();
    check(&api(), &[source]).unwrap()
}

fn failures(text: &str) -> Vec<String> {
    run(text).failure_lines()
}

const HEAD: &str = "from mooncake.store import MooncakeDistributedStore, ReplicateConfig\n\
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer, export_ref, import_ref\n";

#[test]
fn the_consumers_calls_fit() {
    let text = format!(
        "{HEAD}\
def config(contribute):
    c = {{\"local_hostname\": \"h\", \"metadata_server\": \"P2PHANDSHAKE\", \"protocol\": \"tcp\"}}
    if contribute:
        c[\"global_segment_size\"] = 1 << 30
    return c

class S:
    def __init__(self):
        store = MooncakeDistributedStore()
        store.setup(config(True))
        self._t = MooncakeBundleTransfer(store, key_prefix=\"miles-object-store\")

    def put(self, v):
        s = {{\"x\": FieldSchema(\"ndarray\", nullable=False, metadata={{\"section\": \"non_tensor_batch\"}})}}
        return export_ref(self._t.put(v, type=\"dict\", namespace=\"miles\", field_schemas=s))

    def get(self, h):
        return self._t.get(import_ref(h), type=\"dict\"), MooncakeBundleTransfer.release_result
"
    );
    let report = run(&text);
    assert!(report.ok(), "{:#?}", report.failure_lines());
    let f = &report.files[0];
    let put = f
        .uses
        .iter()
        .find(|u| u.subject == "MooncakeBundleTransfer.put")
        .unwrap();
    let UseKind::Call { literals, .. } = &put.kind else {
        panic!("{put:?}")
    };
    assert_eq!(literals["type"], "\"dict\"");
    let keys = f
        .uses
        .iter()
        .find(|u| u.subject == "MooncakeDistributedStore.setup")
        .unwrap();
    assert_eq!(
        keys.kind,
        UseKind::DictKeys {
            keys: vec![
                "global_segment_size".into(),
                "local_hostname".into(),
                "metadata_server".into(),
                "protocol".into()
            ],
            unknown: false
        }
    );
    assert!(
        f.uses
            .iter()
            .any(|u| u.subject == "MooncakeBundleTransfer.release_result"
                && u.kind == UseKind::Reference)
    );
    // Declared, unused by this consumer: cleanup_dataproto, setup keys, replica_num.
    for item in [
        "method MooncakeBundleTransfer.cleanup_dataproto",
        "dict key MooncakeDistributedStore.setup[\"rdma_devices\"]",
        "native ReplicateConfig.replica_num",
    ] {
        assert!(
            report.unused.contains(&item.to_string()),
            "{item}: {:?}",
            report.unused
        );
    }
}

#[test]
fn an_undeclared_keyword_symbol_or_key_fails_at_its_line() {
    let text = format!(
        "{HEAD}\
from mooncake.structured_object_store import export_dataproto_ref_v2
store = MooncakeDistributedStore()
store.setup({{\"local_hostname\": \"h\", \"enable_offload\": True}})
t = MooncakeBundleTransfer(store)
t.put({{}}, type=\"dict\", compress=True)
t.get()
"
    );
    let lines = failures(&text);
    let expect = [
        "consumer.py:3: export_dataproto_ref_v2: undeclared: expected a [[symbol]] entry, found an import",
        "consumer.py:5: native MooncakeDistributedStore.setup: dict key: expected one of the dict_keys api.toml declares (",
        "consumer.py:7: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=...",
        "consumer.py:8: MooncakeBundleTransfer.get: call: expected a call that fits (ref, *,",
    ];
    assert_eq!(lines.len(), expect.len(), "{lines:#?}");
    for (line, e) in lines.iter().zip(expect) {
        assert!(line.starts_with(e), "{line}\n  should start with {e}");
    }
    assert!(
        lines[1].ends_with("found \"enable_offload\""),
        "{}",
        lines[1]
    );
    assert!(
        lines[2].ends_with("no parameter `compress`"),
        "{}",
        lines[2]
    );
    assert!(lines[3].ends_with("missing `ref`"), "{}", lines[3]);
}

#[test]
fn module_aliases_and_native_writes_are_followed() {
    let text = "import mooncake.structured_object_store as sos\n\
from mooncake import store as native\n\
cfg = native.ReplicateConfig()\n\
cfg.replica_num = 2\n\
cfg.replica_count = 2\n\
sos.export_ref(sos.import_ref({}), extra=1)\n";
    let lines = failures(text);
    assert_eq!(lines.len(), 2, "{lines:#?}");
    assert!(
        lines[0].starts_with("consumer.py:5: native ReplicateConfig.replica_count: undeclared"),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].starts_with("consumer.py:6: export_ref: call:"),
        "{}",
        lines[1]
    );
    assert!(lines[1].ends_with("no parameter `extra`"), "{}", lines[1]);
}

#[test]
fn keys_not_known_statically_are_said_so() {
    let text = "from mooncake.store import MooncakeDistributedStore\n\
s = MooncakeDistributedStore()\n\
s.setup(make_config())\n\
s.setup({\"protocol\": \"tcp\", **extra})\n";
    let report = run(text);
    assert!(report.ok(), "{:#?}", report.failure_lines());
    let lines = report.use_lines("mooncake.store");
    assert!(
        lines.iter().any(|l| l == "consumer.py:4: native MooncakeDistributedStore.setup: dict keys protocol (and keys not known statically)"),
        "{lines:#?}"
    );
    // With a dict not known statically, no key is reported unused.
    assert!(
        !report.unused.iter().any(|u| u.starts_with("dict key")),
        "{:?}",
        report.unused
    );
}

#[test]
fn a_consumer_that_does_not_parse_is_located() {
    let source = ModuleSource::from_bytes("bad.py", b"def f(:\n".to_vec()).unwrap();
    let e = check(&api(), &[source]).unwrap_err();
    assert_eq!(e.location, "bad.py:1:7");
}
