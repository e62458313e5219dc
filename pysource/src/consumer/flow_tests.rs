//! The everyday ways Python carries a value to a call, each caught when the call is wrong and
//! silent when it is right: objects kept in containers and dataclass fields, a base class
//! given the object through `super().__init__`, keywords forwarded through a wrapper's
//! `**kwargs`, the keys of a dict passed as `**name`.

use super::ConsumerFile;
use super::tests::{api, failures};
use crate::source::ModuleSource;

const HEAD: &str = "from mooncake.store import MooncakeDistributedStore
from mooncake.structured_object_store import FieldSchema, MooncakeBundleTransfer
";

/// The failures of `body` after HEAD: each `(line, col, ends with)`.
fn assert_caught(body: &str, want: &[(usize, usize, &str)]) {
    let lines = failures(&format!("{HEAD}{body}"));
    let got: Vec<(String, &str)> = lines
        .iter()
        .map(|l| {
            let at = l.splitn(4, ':').take(3).collect::<Vec<_>>().join(":");
            (at, l.as_str())
        })
        .collect();
    assert_eq!(got.len(), want.len(), "{lines:#?}");
    for ((at, line), (l, c, end)) in got.iter().zip(want) {
        assert_eq!(at, &format!("consumer.py:{l}:{c}"), "{line}");
        assert!(line.ends_with(end), "{line}\n  should end with {end:?}");
    }
}

#[test]
fn an_object_kept_in_a_container_is_followed_out_of_it() {
    assert_caught(
        "t = MooncakeBundleTransfer(MooncakeDistributedStore())
by_name = {\"main\": t, \"other\": None}
by_name[\"main\"].put({}, type=\"dict\", namespce=\"x\")
pool = [t]
pool[0].get(1, typ=\"dict\")
later = []
later.append(t)
for each in later:
    each.cleanup_dataproto(1, 2)
kept = {}
kept[\"t\"] = t
kept.get(\"t\").release_result(1, 2)
a, b = t, None
a.put({}, type=\"dict\")
by_name[\"main\"].put({}, type=\"dict\", namespace=\"x\")
",
        &[
            (5, 38, "no parameter `namespce`; did you mean `namespace`?"),
            (7, 16, "no parameter `typ`; did you mean `type`?"),
            (11, 10, "2 positional argument(s) where it takes at most 1"),
            (14, 15, "2 positional argument(s) where it takes at most 1"),
        ],
    );
}

#[test]
fn an_object_kept_in_a_dataclass_field_is_followed() {
    assert_caught(
        "from dataclasses import dataclass
from typing import NamedTuple

@dataclass
class Holder:
    transfer: MooncakeBundleTransfer
    tries: int = 3

class Pair(NamedTuple):
    name: str
    transfer: MooncakeBundleTransfer

class Client:
    def __init__(self, store):
        self.h = Holder(transfer=MooncakeBundleTransfer(store), tries=1)
        self.p = Pair(\"x\", MooncakeBundleTransfer(store))

    def go(self, v):
        self.h.transfer.put(v, type=\"dict\", stagee=\"a\")
        self.p.transfer.get(v, rowz=[0])
        self.h.transfer.put(v, type=\"dict\", stage=\"a\")
",
        &[
            (21, 45, "no parameter `stagee`; did you mean `stage`?"),
            (22, 32, "no parameter `rowz`; did you mean `rows`?"),
        ],
    );
}

#[test]
fn keywords_forwarded_through_a_wrappers_kwargs_are_checked_at_each_caller() {
    assert_caught(
        "class Wrapper:
    def __init__(self):
        self.t = MooncakeBundleTransfer(MooncakeDistributedStore())

    def put(self, value, retries=1, **kw):
        return self.t.put(value, type=\"dict\", **kw)

w = Wrapper()
w.put({}, retries=2, namespace=\"m\", chunk_bytes=4096)
w.put({}, namspace=\"m\")
w.put({}, **{\"partition\": \"p\"})
w.put({}, **{\"partitoin\": \"p\"})
",
        &[
            (12, 11, "no parameter `namspace`; did you mean `namespace`?"),
            (
                14,
                14,
                "no parameter `partitoin`; did you mean `partition`?",
            ),
        ],
    );
}

#[test]
fn the_keys_of_a_dict_passed_as_double_star_are_its_keywords() {
    assert_caught(
        "t = MooncakeBundleTransfer(MooncakeDistributedStore())
opts = {\"type\": \"dict\"}
opts[\"namespace\"] = \"miles\"
opts[\"compress\"] = True
t.put({}, **opts)
more = dict(type=\"dict\", stage=\"s\")
more.update(partition=\"p\")
t.put({}, **more)
bad = dict(type=\"dict\")
bad.update(partion=\"p\")
t.put({}, **bad)
t.put({}, **{\"type\": \"tensor\"})
unknown = dict(load())
t.put({}, **unknown)
",
        &[
            (7, 11, "no parameter `compress`"),
            (13, 11, "no parameter `partion`; did you mean `partition`?"),
            (14, 22, "found 'tensor'"),
        ],
    );
}

/// vllm's store worker hands the store to its base class with `super().__init__(store,
/// ...)`; the base class's calls on it are the store's (in another file too).
#[test]
fn a_store_handed_to_the_base_class_through_super_init_is_followed() {
    let base = "\
class StoreBase:
    def __init__(self, store, prefix):
        self.store = store
        self.prefix = prefix

    def fetch(self, keys, ptrs, sizes):
        return self.store.batch_get_into_multi_buffers(keys, ptrs, sizes)
";
    let worker = "\
from mooncake.store import MooncakeDistributedStore
from .base import StoreBase

class Worker(StoreBase):
    def __init__(self):
        store = MooncakeDistributedStore()
        super().__init__(store, \"p\")

    def put(self, k, v):
        self.store.put(k, v)
        self.store.put_parts(k, v)
";
    let files: Vec<ConsumerFile> = [("pkg.base", base), ("pkg.worker", worker)]
        .iter()
        .map(|(module, text)| ConsumerFile {
            source: ModuleSource::from_bytes(format!("{module}.py"), text.as_bytes().to_vec())
                .unwrap(),
            module: (*module).to_owned(),
            named: false,
        })
        .collect();
    let report = super::check(&api(), &files, &[]).unwrap();
    assert_eq!(
        report.failure_lines(),
        [
            "pkg.base.py:7:27: native MooncakeDistributedStore.batch_get_into_multi_buffers: undeclared: expected a [[native]] entry, found required call(3 args) on an instance",
            "pkg.worker.py:11:20: native MooncakeDistributedStore.put_parts: undeclared: expected a [[native]] entry, found required call(2 args) on an instance",
        ]
    );
}
