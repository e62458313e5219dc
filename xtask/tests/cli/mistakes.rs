//! Realistic mistakes, made one at a time in a copy of the consumer fixture (the calls the
//! consumer makes, as it makes them): each is caught at the token at fault, by its rule, and
//! nothing else is said; the right code of the same shape passes. The shapes are the everyday ways
//! Python carries a value to a call: a literal through a local, a module constant or an arm
//! of a conditional; an object kept in a dict, a list or a dataclass field; a base class
//! given its arguments through `super().__init__`; keywords forwarded through a wrapper's
//! `**kwargs`; the keys of a dict passed as `**name`.

use crate::common::{repo_root, xtask};

const FIXTURE: &str = "xtask/tests/cli/consumers/object_store.py";

/// Each edit replaces text found exactly once in the fixture; `extra` is appended to it.
struct Case {
    name: &'static str,
    edits: &'static [(&'static str, &'static str)],
    extra: &'static str,
    /// Each finding's `LINE:COL: ... [rule]` start and end, in order; none: the right code.
    want: &'static [(&'static str, &'static str)],
}

/// What the consumer's store class does, and a wrapper, a holder and a subclass of the kind
/// real code has, appended to the fixture for the shapes it lacks.
const SHAPES: &str = "

from dataclasses import dataclass


@dataclass
class Handles:
    transfer: MooncakeBundleTransfer
    retries: int = 3


class Wrapped(Store):
    def __init__(self, kwargs):
        super().__init__(kwargs, True, 1)
        self.by_name = {\"main\": self._transfer}
        self.pool = [self._transfer]
        self.handles = Handles(transfer=self._transfer)

    def put_with(self, value, retries=1, **kw):
        return self._transfer.put(value, type=\"dict\", **kw)
";

const CASES: &[Case] = &[
    Case {
        name: "a keyword misspelt",
        edits: &[("namespace=\"miles\"", "namespce=\"miles\"")],
        extra: "",
        want: &[(
            "36:13: MooncakeBundleTransfer.put: call:",
            "did you mean `namespace`? [api-call]",
        )],
    },
    Case {
        name: "a literal outside the domain",
        edits: &[(
            "type=\"dict\",\n            namespace",
            "type=\"dicts\",\n            namespace",
        )],
        extra: "",
        want: &[(
            "35:18: MooncakeBundleTransfer.put: type:",
            "found 'dicts'; did you mean `'dict'`? [api-value]",
        )],
    },
    Case {
        name: "a literal through a local",
        edits: &[(
            "        ref = self._transfer.put(\n            value,\n            type=\"dict\",",
            "        kind = \"tensor\"\n        ref = self._transfer.put(\n            value,\n            type=kind,",
        )],
        extra: "",
        want: &[(
            "36:18: MooncakeBundleTransfer.put: type:",
            "found 'tensor' [api-value]",
        )],
    },
    Case {
        name: "a literal through a module constant",
        edits: &[
            ("import os\n", "import os\n\nGET_TYPE = \"dataprot\"\n"),
            (
                "type=\"dict\")\n        return value",
                "type=GET_TYPE)\n        return value",
            ),
        ],
        extra: "",
        want: &[(
            "49:61: MooncakeBundleTransfer.get: type:",
            "found 'dataprot'; did you mean `'dataproto'`? [api-value]",
        )],
    },
    Case {
        name: "the right constant",
        edits: &[
            ("import os\n", "import os\n\nGET_TYPE = \"dataproto\"\n"),
            (
                "type=\"dict\")\n        return value",
                "type=GET_TYPE)\n        return value",
            ),
        ],
        extra: "",
        want: &[],
    },
    Case {
        name: "one arm of a conditional expression",
        edits: &[(
            "type=\"dict\")\n        return value",
            "type=\"dict\" if handle else \"tensor\")\n        return value",
        )],
        extra: "",
        want: &[(
            "47:61: MooncakeBundleTransfer.get: type:",
            "found 'tensor' [api-value]",
        )],
    },
    Case {
        name: "a codec misspelt",
        edits: &[(
            "FieldSchema(codec, nullable=False",
            "FieldSchema(\"ndarry\", nullable=False",
        )],
        extra: "",
        want: &[(
            "40:35: FieldSchema: codec:",
            "found 'ndarry'; did you mean `'ndarray'`? [api-value]",
        )],
    },
    Case {
        name: "a setup key misspelt",
        edits: &[("\"local_hostname\": kwargs", "\"local_hostnam\": kwargs")],
        extra: "",
        want: &[(
            "27:18: native MooncakeDistributedStore.setup: dict key:",
            "found \"local_hostnam\"; did you mean `local_hostname`? [dict-key]",
        )],
    },
    Case {
        name: "a setup key set by subscript",
        edits: &[(
            "config[\"global_segment_size\"]",
            "config[\"global_segment_sizes\"]",
        )],
        extra: "",
        want: &[(
            "27:18: native MooncakeDistributedStore.setup: dict key:",
            "found \"global_segment_sizes\"; did you mean `global_segment_size`? [dict-key]",
        )],
    },
    Case {
        name: "a required argument left out",
        edits: &[(
            "self._transfer.get(import_ref(handle), type=\"dict\")",
            "self._transfer.get(type=\"dict\")",
        )],
        extra: "",
        want: &[(
            "47:32: MooncakeBundleTransfer.get: call:",
            "misses required `ref` [api-call]",
        )],
    },
    Case {
        name: "a method misspelt",
        edits: &[(
            "cleanup_dataproto(import_ref",
            "cleanup_dataprotos(import_ref",
        )],
        extra: "",
        want: &[(
            "51:24: MooncakeBundleTransfer.cleanup_dataprotos: undeclared:",
            "did you mean `cleanup_dataproto`? [api-undeclared]",
        )],
    },
    Case {
        name: "a native attribute misspelt",
        edits: &[("config.replica_num = ", "config.replica_nums = ")],
        extra: "",
        // Undeclared, and absent from every image's core: both said.
        want: &[
            (
                "57:16: native ReplicateConfig.replica_nums: undeclared:",
                "did you mean `ReplicateConfig.replica_num`? [native-undeclared]",
            ),
            (
                "57:16: native ReplicateConfig.replica_nums: image: expected the cores of images cuda",
                "found absent [image-core]",
            ),
        ],
    },
    Case {
        name: "too many positional arguments",
        edits: &[("return export_ref(ref)", "return export_ref(ref, ref)")],
        extra: "",
        want: &[(
            "44:16: export_ref: call:",
            "2 positional argument(s) where it takes at most 1 [api-call]",
        )],
    },
    Case {
        name: "an object kept in a dict",
        edits: &[],
        extra: "\n    def bad(self, v):\n        return self.by_name[\"main\"].put(v, type=\"dict\", stge=\"s\")\n",
        want: &[(
            "81:57: MooncakeBundleTransfer.put: call:",
            "did you mean `stage`? [api-call]",
        )],
    },
    Case {
        name: "an object kept in a list",
        edits: &[],
        extra: "\n    def bad(self, v):\n        return self.pool[0].release_result(v, True)\n",
        want: &[(
            "81:29: MooncakeBundleTransfer.release_result: call:",
            "2 positional argument(s) where it takes at most 1 [api-call]",
        )],
    },
    Case {
        name: "an object kept in a dataclass field",
        edits: &[],
        extra: "\n    def bad(self, ref):\n        return self.handles.transfer.get(ref, typ=\"dict\")\n",
        want: &[(
            "81:47: MooncakeBundleTransfer.get: call:",
            "did you mean `type`? [api-call]",
        )],
    },
    Case {
        name: "the right calls through the same holders",
        edits: &[],
        extra: "\n    def good(self, v, ref):\n        self.by_name[\"main\"].put(v, type=\"dict\", stage=\"s\")\n        self.pool[0].release_result(v)\n        return self.handles.transfer.get(ref, type=\"dict\")\n",
        want: &[],
    },
    Case {
        name: "a keyword forwarded through the wrapper's **kw",
        edits: &[],
        extra: "\n\ndef caller(w, v):\n    return w.put_with(v, retries=2, partiton=\"p\")\n\n\ncaller(Wrapped({}), 1)\n",
        want: &[(
            "82:37: MooncakeBundleTransfer.put: call:",
            "did you mean `partition`? [api-call]",
        )],
    },
    Case {
        name: "the right keywords through the wrapper",
        edits: &[],
        extra: "\n\ndef caller(w, v):\n    return w.put_with(v, retries=2, partition=\"p\", stage=\"s\")\n\n\ncaller(Wrapped({}), 1)\n",
        want: &[],
    },
    Case {
        name: "a key of a dict passed as **name",
        edits: &[],
        extra: "\n    def bad(self, v):\n        opts = {\"type\": \"dict\"}\n        opts[\"chunk_byte\"] = 1\n        return self._transfer.put(v, **opts)\n",
        want: &[(
            "83:38: MooncakeBundleTransfer.put: call:",
            "did you mean `chunk_bytes`? [api-call]",
        )],
    },
    Case {
        name: "a keyword passed to the API class through super().__init__",
        edits: &[],
        extra: "\n\nclass Pooled(MooncakeBundleTransfer):\n    def __init__(self, store):\n        super().__init__(store, key_prefx=\"pooled\")\n",
        want: &[(
            "83:33: MooncakeBundleTransfer: call:",
            "did you mean `key_prefix`? [api-call]",
        )],
    },
];

fn run_case(case: &Case) -> Vec<String> {
    let mut text = std::fs::read_to_string(repo_root().join(FIXTURE)).unwrap();
    for (old, new) in case.edits {
        assert_eq!(
            text.matches(old).count(),
            1,
            "{}: {old:?} must be found once",
            case.name
        );
        text = text.replacen(old, new, 1);
    }
    if !case.extra.is_empty() {
        text.push_str(SHAPES);
        text.push_str(case.extra);
    }
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("object_store.py");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();
    let run = xtask(&["verify", "--consumer", file], &[]);
    let want_code = if case.want.is_empty() { 0 } else { 1 };
    assert_eq!(run.code, Some(want_code), "{}: {run:?}", case.name);
    run.stdout
        .lines()
        .filter(|l| !l.starts_with("verify --consumer: "))
        .map(|l| l.strip_prefix(&format!("{file}:")).unwrap_or(l).to_owned())
        .collect()
}

#[test]
fn each_mistake_is_caught_once_at_its_place_and_the_right_code_passes() {
    let mut wrong = Vec::new();
    for case in CASES {
        let found = run_case(case);
        let right = found.len() == case.want.len()
            && found
                .iter()
                .zip(case.want)
                .all(|(f, (start, end))| f.starts_with(start) && f.ends_with(end));
        if !right {
            wrong.push(format!(
                "{}: want {:?}, found {found:#?}",
                case.name, case.want
            ));
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
