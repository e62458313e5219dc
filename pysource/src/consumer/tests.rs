use super::{ConsumerFile, ConsumerReport, UseKind, check};
use crate::source::ModuleSource;
use mooncake_sos_manifest::model::Api;

const API: &str = include_str!("../../../api.toml");

/// The shipped api.toml (the other consumer test modules share it).
pub(crate) fn api() -> Api {
    mooncake_sos_manifest::load_str("api.toml", API).unwrap_or_else(|d| panic!("{d}"))
}

/// `source` as the module `module`, named on the command line.
fn file(source: ModuleSource, module: &str) -> ConsumerFile {
    ConsumerFile {
        source,
        module: module.into(),
        named: true,
    }
}

/// The report on `text` as consumer.py, the module `module`.
fn run_in(module: &str, text: &str) -> ConsumerReport {
    let source = ModuleSource::from_bytes("consumer.py", text.as_bytes().to_vec()).unwrap();
    check(&api(), &[file(source, module)], &[]).unwrap()
}

fn run(text: &str) -> ConsumerReport {
    run_in("consumer", text)
}

pub(crate) fn failures(text: &str) -> Vec<String> {
    run(text).failure_lines()
}

/// `text` fails once per `(start, end)` of `expect`, in order: each line starts with `start`
/// and ends with `end` (`""` ends any line).
fn assert_failures<S: AsRef<str>>(text: &str, expect: &[(S, S)]) {
    let lines = failures(text);
    assert_eq!(lines.len(), expect.len(), "{lines:#?}");
    for (line, (start, end)) in lines.iter().zip(expect) {
        let (start, end) = (start.as_ref(), end.as_ref());
        assert!(
            line.starts_with(start) && line.ends_with(end),
            "{line}\n  should start with {start:?} and end with {end:?}"
        );
    }
}

/// `text`, checked within `seconds`, fails `times` times, the first at the undeclared
/// setup key `bogus`.
fn assert_bogus_found_in_time(text: &str, seconds: u64, times: usize) {
    let started = std::time::Instant::now();
    let lines = failures(text);
    assert!(
        started.elapsed().as_secs() < seconds,
        "{:?}",
        started.elapsed()
    );
    let first = &lines[..lines.len().min(3)];
    assert_eq!(lines.len(), times, "the first: {first:#?}");
    assert!(lines[0].ends_with("found \"bogus\""), "{}", lines[0]);
}

/// Reading the file found no native use.
fn assert_no_native(report: &ConsumerReport) {
    assert!(
        report.files[0].native.is_empty(),
        "{:?}",
        report.files[0].native
    );
}

const HEAD: &str = "from mooncake.store import MooncakeDistributedStore, ReplicateConfig\n\
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer, export_ref, import_ref\n";

/// A consumer's first lines when it makes a store `s` and nothing else.
const STORE: &str =
    "from mooncake.store import MooncakeDistributedStore\ns = MooncakeDistributedStore()\n";

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
    let UseKind::Call { args, .. } = &put.kind else {
        panic!("{put:?}")
    };
    let type_ = args.iter().find(|a| a.keyword.as_deref() == Some("type"));
    assert_eq!(type_.unwrap().literals, ["\"dict\""]);
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
    assert_failures(
        &text,
        &[
            (
                "consumer.py:3:46: export_dataproto_ref_v2: undeclared: expected a [[symbol]] entry, found an import",
                "",
            ),
            (
                "consumer.py:5:7: native MooncakeDistributedStore.setup: dict key: expected one of the dict_keys api.toml declares (",
                "found \"enable_offload\"",
            ),
            (
                "consumer.py:7:24: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=...",
                "no parameter `compress`",
            ),
            (
                "consumer.py:8:3: MooncakeBundleTransfer.get: call: expected a call that fits (ref, *,",
                "misses required `ref`",
            ),
        ],
    );
}

#[test]
fn module_aliases_and_native_writes_are_followed() {
    let text = "import mooncake.structured_object_store as sos\n\
from mooncake import store as native\n\
cfg = native.ReplicateConfig()\n\
cfg.replica_num = 2\n\
cfg.replica_count = 2\n\
sos.export_ref(sos.import_ref({}), extra=1)\n";
    assert_failures(
        text,
        &[
            (
                "consumer.py:5:5: native ReplicateConfig.replica_count: undeclared",
                "",
            ),
            (
                "consumer.py:6:36: export_ref: call:",
                "no parameter `extra`",
            ),
        ],
    );
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
    let e = check(&api(), &[file(source, "consumer")], &[]).unwrap_err();
    assert_eq!(e.location, "bad.py:1:7");
}

/// Setup dicts built in the ways a consumer may build them: each holds one undeclared key,
/// which fails at the setup call's line (each used to pass: the dict passed by keyword, a
/// module-level dict used in a function, `|=`, `|`, `**`, `dict(d, k=...)`, a nested function).
#[test]
fn every_way_of_building_a_setup_dict_is_followed() {
    let cases: &[(&str, usize)] = &[
        ("s.setup(config={\"bogus\": 1})", 3),
        (
            "CFG = {\"protocol\": \"tcp\", \"bogus\": 1}\ndef main():\n    s.setup(CFG)",
            5,
        ),
        (
            "CFG = {\"protocol\": \"tcp\"}\ndef main():\n    CFG[\"bogus\"] = 2\n    s.setup(CFG)",
            6,
        ),
        ("e = {}\ne |= {\"bogus\": 1}\ns.setup(e)", 5),
        ("e = {}\ns.setup(e | {\"bogus\": 1})", 4),
        (
            "b = {\"bogus\": 1}\ns.setup({**b, \"protocol\": \"tcp\"})",
            4,
        ),
        ("b = {\"protocol\": \"tcp\"}\ns.setup(dict(b, bogus=1))", 4),
        (
            "def f():\n    def g():\n        return {\"bogus\": 1}\n    return g()\ns.setup(f())",
            7,
        ),
    ];
    for (body, line) in cases {
        let text = format!("{STORE}{body}\n");
        let lines = failures(&text);
        assert_eq!(lines.len(), 1, "{body}: {lines:#?}");
        assert!(
            lines[0].starts_with(&format!("consumer.py:{line}:"))
                && lines[0].contains(": native MooncakeDistributedStore.setup: dict key:")
                && lines[0].ends_with("found \"bogus\""),
            "{body}: {}",
            lines[0]
        );
    }
    // A name assigned in the function is the function's own: the module's keys are not its.
    let text = format!(
        "{STORE}CFG = {{\"bogus\": 1}}\ndef f():\n    CFG = {{\"protocol\": \"tcp\"}}\n    s.setup(CFG)\n"
    );
    assert!(failures(&text).is_empty(), "{:#?}", failures(&text));
}

/// A name assigned from itself many times (`d = d`, 50 times) used to take 50^8 lookups:
/// each name is worked out once, and a cycle holds keys not known statically.
#[test]
fn self_referring_names_do_not_hang() {
    let text = format!(
        "{STORE}d = {{\"bogus\": 1}}\n{}s.setup(d)\n",
        "d = d\n".repeat(200)
    );
    assert_bogus_found_in_time(&text, 10, 1);
}

/// A class deriving from an API class: calls on its instances, on `self` and on `super()` in
/// it reach the API class's declarations (they used to pass unchecked); what it defines
/// itself (methods, class attributes, `self.x`) is not the API's, and an own `__init__` (or
/// one a decorator such as `@dataclass` may write) takes what it likes.
#[test]
fn subclasses_of_api_classes_are_checked() {
    let text =
        "from mooncake.structured_object_store import MooncakeBundleTransfer as MBT, FieldSchema
class My(MBT):
    limit = 3
    def go(self):
        self.count = 1
        self.put({}, bad_a=True)
        super().get()
        return self.limit, self.count, self.go
class Mine(My):
    def __init__(self, x, y):
        super().__init__(x, bogus_init=y)
m = My(None, bad_b=1)
m.put({}, type=\"dict\")
m.go()
n = Mine(1, 2)
n.put({}, bad_c=True)
class Plain:
    def f(self):
        self.put({}, not_api=1)
@dataclass
class F(FieldSchema):
    extra: int = 0
F(\"ndarray\", extra=1).extra
";
    assert_failures(
        text,
        &[
            (
                "consumer.py:6:22: MooncakeBundleTransfer.put: call:",
                "no parameter `bad_a`",
            ),
            (
                "consumer.py:7:17: MooncakeBundleTransfer.get: call:",
                "misses required `ref`",
            ),
            (
                "consumer.py:11:29: MooncakeBundleTransfer: call:",
                "no parameter `bogus_init`",
            ),
            (
                "consumer.py:12:14: MooncakeBundleTransfer: call:",
                "no parameter `bad_b`",
            ),
            (
                "consumer.py:16:11: MooncakeBundleTransfer.put: call:",
                "no parameter `bad_c`",
            ),
        ],
    );
}

/// `from module import *` fails with what it is (not "undeclared `*`"), and the declared
/// names it binds are followed: their calls are checked as if imported by name.
#[test]
fn a_star_import_fails_as_such_and_its_names_are_followed() {
    let text = "from mooncake.structured_object_store import *
t = MooncakeBundleTransfer(None)
t.put({}, compression=True)
export_ref(1, 2)
";
    assert_failures(
        text,
        &[
            (
                "consumer.py:1:46: *: star import: expected named imports",
                "",
            ),
            (
                "consumer.py:3:11: MooncakeBundleTransfer.put: call:",
                "no parameter `compression`",
            ),
            ("consumer.py:4:1: export_ref: call:", ""),
        ],
    );
}

/// `importlib.import_module("the module")` binds the module as `import` does, and
/// `functools.partial(f, ...)` is a call of `f` with those arguments and more to come: both
/// used to pass whatever they were given.
#[test]
fn import_module_and_partial_are_followed() {
    let text = "import functools, importlib
from functools import partial
from importlib import import_module
from mooncake.structured_object_store import MooncakeBundleTransfer
sos = importlib.import_module(\"mooncake.structured_object_store\")
sos.not_there()
sos2 = import_module(\"mooncake.structured_object_store\")
sos2.export_ref(1, 2)
t = MooncakeBundleTransfer(None)
p = functools.partial(t.put, compression=True)
q = partial(MooncakeBundleTransfer.get, t, type=\"dict\")
r = partial(sos.export_ref, 1, 2)
ok = partial(t.put, type=\"dict\")
";
    assert_failures(
        text,
        &[
            ("consumer.py:6:5: not_there: undeclared:", "found a call"),
            ("consumer.py:8:6: export_ref: call:", "takes at most 1"),
            (
                "consumer.py:10:30: MooncakeBundleTransfer.put: call:",
                "no parameter `compression`",
            ),
            ("consumer.py:12:17: export_ref: call:", "takes at most 1"),
        ],
    );
}

/// An instance reached through `with ... as`, a conditional expression, `getattr(x, "m")`,
/// tuple assignment or `:=` is followed (each call below used to pass).
#[test]
fn instances_bound_in_other_ways_are_followed() {
    let text = "from mooncake.structured_object_store import MooncakeBundleTransfer as M
t = M(None)
with M(None) as u:
    u.put({}, typo1=1)
w = t if t else None
w.put({}, typo2=1)
getattr(t, \"put\")({}, typo3=1)
c, d = M(None), 1
c.put({}, typo4=1)
(e := M(None)).put({}, typo5=1)
d.put({}, fine=1)
";
    let expect: Vec<(String, String)> =
        [(4, 15, 1), (6, 11, 2), (7, 23, 3), (9, 11, 4), (10, 24, 5)]
            .into_iter()
            .map(|(at, col, typo)| {
                (
                    format!("consumer.py:{at}:{col}: MooncakeBundleTransfer.put: call:"),
                    format!("no parameter `typo{typo}`; did you mean `type`?"),
                )
            })
            .collect();
    assert_failures(text, &expect);
}

/// 5,000 `d["k"] = ...` and 5,000 `s.setup(d)`: each call used to work `d` out again, in each
/// of the walk's passes (21 s); one search serves the file.
#[test]
fn many_setup_calls_on_one_dict_stay_linear() {
    let writes: String = (0..5000)
        .map(|i| format!("d[\"protocol\"] = {i}\n"))
        .collect();
    let text = format!(
        "{STORE}d = {{}}\n{writes}d[\"bogus\"] = 1\n{}",
        "s.setup(d)\n".repeat(5000)
    );
    // One failure per call.
    assert_bogus_found_in_time(&text, 8, 5000);
}

#[test]
fn parameters_named_like_roles_are_not_native() {
    // `native_roles` name the module's parameters; a consumer's `store` is a torch store and
    // its `config` a model config.
    let report = run_in(
        "model.layers",
        "def tune(store, config):\n    store.set_timeout(30)\n    return config.hidden_size\n",
    );
    assert!(report.ok(), "{:?}", report.failure_lines());
    assert_no_native(&report);
}

#[test]
fn relative_imports_are_the_consumers_package() {
    // In app.p2p, `.store` is app.store and `.mixin` app.mixin: neither is mooncake's.
    let report = run_in(
        "app.p2p",
        "from .store import MooncakeDistributedStore\nfrom .mixin import M\nfrom . import engine\n\
         s = MooncakeDistributedStore()\ns.put_parts(1)\n",
    );
    assert!(report.ok(), "{:?}", report.failure_lines());
    assert_no_native(&report);
    // The package's `__init__` resolves `.x` inside the package itself.
    let report = run_in(
        "app.__init__",
        "from .store import MooncakeDistributedStore\n",
    );
    assert_no_native(&report);
}

#[test]
fn module_names_come_from_the_package_layout() {
    let tmp = tempfile::tempdir().unwrap();
    let pkg = tmp.path().join("top/app/sub");
    std::fs::create_dir_all(&pkg).unwrap();
    for init in ["top/app/__init__.py", "top/app/sub/__init__.py"] {
        std::fs::write(tmp.path().join(init), "").unwrap();
    }
    let name = |p: &std::path::Path| super::module_name(p, None);
    assert_eq!(name(&pkg.join("p2p.py")), "app.sub.p2p");
    assert_eq!(name(&pkg.join("__init__.py")), "app.sub.__init__");
    assert_eq!(name(&tmp.path().join("top/run.py")), "run");
    // Under a directory given, the directories on the way are packages (namespace ones too).
    std::fs::create_dir_all(tmp.path().join("top/app/ns/deep")).unwrap();
    let deep = tmp.path().join("top/app/ns/deep/m.py");
    let top = tmp.path().join("top");
    assert_eq!(super::module_name(&deep, Some(&top)), "app.ns.deep.m");
    // Given the package itself, its own name comes first.
    let app = tmp.path().join("top/app");
    assert_eq!(super::module_name(&deep, Some(&app)), "app.ns.deep.m");
}

#[test]
fn files_found_that_do_not_name_the_package_are_not_read() {
    let file = |module: &str, text: &str, named: bool| ConsumerFile {
        source: ModuleSource::from_bytes(format!("{module}.py"), text.as_bytes().to_vec()).unwrap(),
        module: module.into(),
        named,
    };
    // Found in a directory, a file that cannot use the package is not parsed: its syntax
    // error is not bad input. Named on the command line, it is.
    let broken = "def f(:\n";
    let files = [
        file(
            "app.store",
            "from mooncake.store import ReplicateConfig\nReplicateConfig()\n",
            false,
        ),
        file("app.legacy", broken, false),
    ];
    let report = check(&api(), &files, &[]).unwrap();
    assert_eq!(report.files.len(), 2);
    assert_eq!(
        report.files[0].native.len(),
        2,
        "{:?}",
        report.files[0].native
    );
    assert!(report.files[1].native.is_empty() && report.files[1].uses.is_empty());
    let e = check(&api(), &[file("app.legacy", broken, true)], &[]).unwrap_err();
    assert_eq!(e.location, "app.legacy.py:1:7");
}

#[test]
fn a_native_class_returned_in_a_tuple_keeps_its_writes() {
    // sglang's store: the class comes back from a helper beside a flag; its instance's
    // `group_ids` write is a use (undeclared in api.toml, so a finding at its line).
    let report = run_in(
        "app.store",
        "def semantics():\n    from mooncake.store import ReplicateConfig\n    return ReplicateConfig, True\n\
         \nclass S:\n    def __init__(self):\n        self.cls, self.ok = semantics()\n\
         \n    def config(self, ids):\n        c = self.cls()\n        c.group_ids = ids\n        return c\n",
    );
    let lines = report.failure_lines();
    assert_eq!(
        lines,
        [
            "consumer.py:11:11: native ReplicateConfig.group_ids: undeclared: expected a [[native]] entry, found required write on an instance"
        ],
        "{lines:#?}"
    );
}

#[test]
fn literal_dict_keywords_are_keywords() {
    // `**{"compression": "zstd"}` passes exactly `compression=`, which put() does not take;
    // `**{"namespace": "n"}` fits; a `**mapping` of unknown keys is not a finding.
    let text = format!(
        "{HEAD}\
t = MooncakeBundleTransfer(MooncakeDistributedStore())
t.put(1, type=\"dict\", **{{\"compression\": \"zstd\"}})
t.put(1, type=\"dict\", **{{\"namespace\": \"n\"}})
t.put(1, **opts)
"
    );
    assert_eq!(
        failures(&text),
        [
            "consumer.py:4:26: MooncakeBundleTransfer.put: call: expected a call that fits (data, *, type=..., namespace=..., partition=..., stage=..., chunk_bytes=..., policy=..., config=..., field_schemas=...), found call(1 arg, compression=, type=): no parameter `compression`"
        ]
    );
    let report = run(&text);
    let put = report.files[0]
        .uses
        .iter()
        .find(|u| u.line == 5 && u.subject == "MooncakeBundleTransfer.put")
        .unwrap();
    assert_eq!(
        put.describe(),
        "MooncakeBundleTransfer.put: call(1 arg(s), namespace=\"n\", type=\"dict\")"
    );
}

#[test]
fn computed_names_on_the_way_to_the_api_are_findings() {
    let text = format!(
        "{HEAD}\
import importlib
t = MooncakeBundleTransfer(MooncakeDistributedStore())
getattr(t, \"p\" + \"ut\")(1)
importlib.import_module(\"mooncake.\" + name)
__import__(f\"mooncake.{{name}}\")
getattr(other, \"p\" + \"ut\")
importlib.import_module(\"json\" + name)
"
    );
    assert_eq!(
        failures(&text),
        [
            "consumer.py:5:1: MooncakeBundleTransfer.<computed>: computed name: expected a name written in the source, which api.toml can check, found a name computed at run time",
            "consumer.py:6:25: <computed>: computed name: expected a name written in the source, which api.toml can check, found a name computed at run time",
            "consumer.py:7:12: <computed>: computed name: expected a name written in the source, which api.toml can check, found a name computed at run time",
        ]
    );
}

#[test]
fn literal_dict_keywords_reach_native_calls_too() {
    let report = run(&format!(
        "{HEAD}s = MooncakeDistributedStore()\ns.setup({{}}, **{{\"enable_ssd_offload\": True}})\n"
    ));
    let lines = report.use_lines("mooncake.store");
    assert!(
        lines.contains(&"consumer.py:4: native MooncakeDistributedStore.setup: call(1 arg, enable_ssd_offload=) on an instance: required".to_owned()),
        "{lines:#?}"
    );
}

/// A container crosses a call into a parameter once it holds an object the analysis follows,
/// even when that object is put in after the call is walked (a list made empty, filled later,
/// a dict holding a list that holds it); a container of only strings and literals does not
/// cross (nothing in it can be called), so a module's many metadata dicts stay cheap.
#[test]
fn a_container_holding_an_object_crosses_a_call_into_a_parameter() {
    let text = "from mooncake.structured_object_store import MooncakeBundleTransfer as M
def first(pool):
    pool[0].put({}, typo1=1)
def nested(d):
    d[\"pools\"][0].put({}, typo2=1)
def names(meta):
    return meta[\"name\"].upper()
def main():
    pool = []
    first(pool)
    nested({\"pools\": pool})
    names({\"name\": \"x\"})
    pool.append(M(None))
main()
";
    let expect: Vec<(String, String)> = [(3, 21, 1), (5, 27, 2)]
        .into_iter()
        .map(|(at, col, typo)| {
            (
                format!("consumer.py:{at}:{col}: MooncakeBundleTransfer.put: call:"),
                format!("no parameter `typo{typo}`; did you mean `type`?"),
            )
        })
        .collect();
    assert_failures(text, &expect);
}
