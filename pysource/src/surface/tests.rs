//! Synthetic modules, one per pattern the analysis follows; each asserts the exact uses.

use super::*;
use mooncake_sos_manifest::model::native::{
    Access as Declared, MemberKind, NativeMember, NativeSurface, NeededBy, Sibling, Usage,
};

fn config() -> SurfaceConfig {
    SurfaceConfig {
        module: "mooncake.structured_object_store".into(),
        native_module: "mooncake.store".into(),
        others: Vec::new(),
        package: "mooncake".into(),
        roles: [
            ("store".into(), "Store".into()),
            ("config".into(), "ReplicateConfig".into()),
        ]
        .into(),
        api: None,
    }
}

fn surface(module: &str) -> Surface {
    let source = ModuleSource::from_bytes("m.py", module.as_bytes().to_vec()).unwrap();
    derive(&source, &config()).unwrap_or_else(|e| panic!("{e}"))
}

/// `LINE: native Path: access...: required|optional, why` per use.
fn uses(module: &str) -> Vec<String> {
    surface(module)
        .uses
        .iter()
        .map(|u| format!("{}: {}", u.line, u.describe("mooncake.store")))
        .collect()
}

fn assert_uses(module: &str, want: &[&str]) {
    assert_eq!(uses(module), want, "\n{module}");
}

#[test]
fn the_native_module_however_imported() {
    assert_uses(
        "import mooncake.store as _s\n\
         import mooncake.store\n\
         from mooncake import store as st\n\
         from mooncake.store import ReplicateConfig as RC\n\
         import importlib\n\
         a = _s.ReplicateConfig()\n\
         b = mooncake.store.Store()\n\
         c = st.f(1, x=2)\n\
         d = RC()\n\
         e = importlib.import_module('mooncake.store').g\n",
        &[
            "4: native ReplicateConfig: read: required",
            "6: native ReplicateConfig: call(): required",
            "7: native Store: call(): required",
            "8: native f: call(1 arg, x=): required",
            "9: native ReplicateConfig: call(): required",
            "10: native g: read: required",
        ],
    );
}

#[test]
fn getattr_probes_are_optional_and_keep_their_fallback() {
    assert_uses(
        "class T:\n\
         \x20   def __init__(self, store):\n\
         \x20       self._put_from = getattr(store, 'put_from', None)\n\
         \x20       self._store = store\n\
         \x20   def write(self, k):\n\
         \x20       put_from = self._put_from\n\
         \x20       if callable(put_from):\n\
         \x20           put_from(k, 1, 2, config=None)\n\
         \x20       return getattr(self._store, 'put')(k)\n",
        &[
            "3: native Store.put_from: read on an instance: optional, probed by getattr at line 3 (fallback None)",
            "8: native Store.put_from: call(3 args, config=) on an instance: optional, probed by getattr at line 3 (fallback None)",
            "9: native Store.put: read on an instance: required",
            "9: native Store.put: call(1 arg) on an instance: required",
        ],
    );
}

#[test]
fn hasattr_guards_and_early_exits() {
    assert_uses(
        "def f(store, config):\n\
         \x20   if hasattr(store, 'x'):\n\
         \x20       store.x(1)\n\
         \x20   if hasattr(store, 'y') and store.y():\n\
         \x20       pass\n\
         \x20   if not hasattr(config, 'a'):\n\
         \x20       return\n\
         \x20   config.a = 1\n\
         \x20   if not hasattr(config, 'b'):\n\
         \x20       raise NotImplementedError('b')\n\
         \x20   config.b = 2\n\
         \x20   ids = getattr(config, 'c', None)\n\
         \x20   if ids is None:\n\
         \x20       return\n\
         \x20   config.c = [ids]\n\
         \x20   store.z()\n\
         \x20   if not hasattr(store, 'q'):\n\
         \x20       pass\n\
         \x20   elif ids:\n\
         \x20       store.q()\n\
         \x20   else:\n\
         \x20       store.q(1)\n",
        &[
            "2: native Store.x: probe (hasattr) on an instance: optional, probed by hasattr at line 2",
            "3: native Store.x: call(1 arg) on an instance: optional, only where the test at line 2 finds it",
            "4: native Store.y: probe (hasattr) on an instance: optional, probed by hasattr at line 4",
            "4: native Store.y: call() on an instance: optional, only where the test at line 4 finds it",
            "6: native ReplicateConfig.a: probe (hasattr) on an instance: optional, probed by hasattr at line 6",
            "8: native ReplicateConfig.a: write on an instance: optional, only where the test at line 6 finds it",
            "9: native ReplicateConfig.b: probe (hasattr) on an instance: optional, probed by hasattr at line 9",
            // Raising is no fallback: the module needs `b`.
            "11: native ReplicateConfig.b: write on an instance: required",
            "12: native ReplicateConfig.c: read on an instance: optional, probed by getattr at line 12 (fallback None)",
            "15: native ReplicateConfig.c: write on an instance: optional, only where the test at line 13 finds it",
            "16: native Store.z: call() on an instance: required",
            "17: native Store.q: probe (hasattr) on an instance: optional, probed by hasattr at line 17",
            // An elif and the else run only where the tests above failed.
            "20: native Store.q: call() on an instance: optional, only where the test at line 17 finds it",
            "22: native Store.q: call(1 arg) on an instance: optional, only where the test at line 17 finds it",
        ],
    );
}

#[test]
fn setattr_through_a_tuple_of_field_names() {
    assert_uses(
        "import copy\n\
         FIELDS = ('replica_num', 'group_ids')\n\
         def clone(config):\n\
         \x20   try:\n\
         \x20       return copy.copy(config)\n\
         \x20   except TypeError:\n\
         \x20       pass\n\
         \x20   copied = type(config)()\n\
         \x20   for name in FIELDS:\n\
         \x20       if not hasattr(config, name):\n\
         \x20           continue\n\
         \x20       setattr(copied, name, getattr(config, name))\n\
         \x20   return copied\n\
         def grouped(config):\n\
         \x20   c = clone(config)\n\
         \x20   c.group_ids = ['g']\n",
        &[
            "8: native ReplicateConfig: call() on the class: required",
            "10: native ReplicateConfig.group_ids: probe (hasattr) on an instance: optional, probed by hasattr at line 10",
            "10: native ReplicateConfig.replica_num: probe (hasattr) on an instance: optional, probed by hasattr at line 10",
            "12: native ReplicateConfig.group_ids: read on an instance: optional, only where the test at line 10 finds it",
            "12: native ReplicateConfig.group_ids: write on an instance: optional, only where the test at line 10 finds it",
            "12: native ReplicateConfig.replica_num: read on an instance: optional, only where the test at line 10 finds it",
            "12: native ReplicateConfig.replica_num: write on an instance: optional, only where the test at line 10 finds it",
            // The function's result is the copy: the write after it is unguarded.
            "16: native ReplicateConfig.group_ids: write on an instance: required",
        ],
    );
}

#[test]
fn conditional_construction_carries_both_arms() {
    assert_uses(
        "from types import SimpleNamespace\n\
         try:\n\
         \x20   import mooncake.store as _s\n\
         except ImportError:\n\
         \x20   _s = None\n\
         def with_group(config, group):\n\
         \x20   cfg = (\n\
         \x20       getattr(_s, 'ReplicateConfig', SimpleNamespace)()\n\
         \x20       if config is None\n\
         \x20       else config\n\
         \x20   )\n\
         \x20   cfg.group_ids = [group]\n\
         \x20   return cfg\n",
        &[
            "8: native ReplicateConfig: read: optional, probed by getattr at line 8 (fallback SimpleNamespace)",
            "8: native ReplicateConfig: call(): optional, probed by getattr at line 8 (fallback SimpleNamespace)",
            "12: native ReplicateConfig.group_ids: write on an instance: required",
        ],
    );
}

#[test]
fn sibling_imports_hard_guarded_lazy_and_relative() {
    assert_uses(
        "import numpy as np\n\
         import mooncake._partial_read\n\
         from . import _structured_ranges\n\
         from mooncake import store\n\
         from typing import TYPE_CHECKING\n\
         try:\n\
         \x20   from mooncake._fast_copy import concat as _concat\n\
         except ImportError:\n\
         \x20   _concat = None\n\
         if TYPE_CHECKING:\n\
         \x20   from mooncake.types import Hint\n\
         def pool(store):\n\
         \x20   from mooncake.buffer_pool import BufferPool\n\
         \x20   return BufferPool(store)\n\
         def codec():\n\
         \x20   import importlib\n\
         \x20   return importlib.import_module('mooncake._store')\n",
        &[
            "2: sibling mooncake._partial_read: import at module level: required",
            "3: sibling mooncake._structured_ranges: import at module level: required",
            "7: sibling mooncake._fast_copy: import: optional, a failure is caught at line 8",
            "13: sibling mooncake.buffer_pool: import: optional, lazy, in the function at line 12",
            "17: sibling mooncake._store: import: optional, lazy, in the function at line 15",
        ],
    );
}

#[test]
fn forwarded_calls_get_the_shape_of_each_call_site() {
    assert_uses(
        "def _call(fn, *args, config=None):\n\
         \x20   if config is None:\n\
         \x20       return fn(*args)\n\
         \x20   return fn(*args, config=config)\n\
         def put(store, key, value, config=None):\n\
         \x20   return _call(store.put, key, value, config=config)\n\
         def put_from(store, key, ptr, size, config=None):\n\
         \x20   fn = getattr(store, 'put_from', None)\n\
         \x20   return _call(fn, key, ptr, size, config=config)\n",
        &[
            "3: native Store.put: call(2 args) on an instance: required (arguments from the call at line 6)",
            "3: native Store.put_from: call(3 args) on an instance: optional, probed by getattr at line 8 (fallback None) (arguments from the call at line 9)",
            "4: native Store.put: call(2 args, config=) on an instance: required (arguments from the call at line 6)",
            "4: native Store.put_from: call(3 args, config=) on an instance: optional, probed by getattr at line 8 (fallback None) (arguments from the call at line 9)",
            "6: native Store.put: read on an instance: required",
            "8: native Store.put_from: read on an instance: optional, probed by getattr at line 8 (fallback None)",
        ],
    );
}

#[test]
fn try_swallowing_a_failure_makes_a_use_optional_re_raising_does_not() {
    assert_uses(
        "def f(store, keys, strict):\n\
         \x20   try:\n\
         \x20       store.close()\n\
         \x20   except AttributeError:\n\
         \x20       pass\n\
         \x20   for key in keys:\n\
         \x20       try:\n\
         \x20           store.remove(key, True)\n\
         \x20       except Exception:\n\
         \x20           if strict:\n\
         \x20               raise\n\
         \x20           continue\n",
        &[
            "3: native Store.close: call() on an instance: optional, a failure is caught at line 4",
            "8: native Store.remove: call(2 args) on an instance: required",
        ],
    );
}

#[test]
fn computed_names_follow_constants_else_are_reported() {
    assert_uses(
        "import mooncake.store as _s\n\
         def helper(name):\n\
         \x20   return getattr(_s, name, None)\n\
         def enc(x):\n\
         \x20   return helper('_serialize_tensor')(x)\n\
         def anything(store, name):\n\
         \x20   return getattr(store, name)\n",
        &[
            "3: native _serialize_tensor: read: optional, probed by getattr at line 3 (fallback None)",
            "5: native _serialize_tensor: call(1 arg): optional, probed by getattr at line 3 (fallback None)",
            "7: native Store.<computed>: read on an instance: required",
        ],
    );
}

#[test]
fn names_without_a_role_are_not_native() {
    // `client` has no role; a module function's result is no native instance either.
    assert_uses(
        "import mooncake.store as _s\n\
         def f(client, x):\n\
         \x20   client.put(x)\n\
         \x20   t = _s.decode(x)\n\
         \x20   return t.dtype\n",
        &["4: native decode: call(1 arg): required"],
    );
}

#[test]
fn a_tuple_assignment_pairs_its_values_a_starred_target_included() {
    // `pair, *rest = (store, 1), 2` gives pair (store, 1); `a, *more = 1, store` gives a 1.
    assert_uses(
        "def f(store):\n\
         \x20   pair, *rest = (store, 1), 2\n\
         \x20   s, n = pair\n\
         \x20   s.frobnicate('k')\n\
         \x20   a, *more = 1, store\n\
         \x20   a.nothing()\n",
        &["4: native Store.frobnicate: call(1 arg) on an instance: required"],
    );
}

#[test]
fn output_is_sorted_and_deterministic() {
    let module = "def f(store):\n    store.b()\n    store.a()\n    store.b(1)\n";
    let first = surface(module).uses;
    assert_eq!(first, surface(module).uses);
    let lines: Vec<usize> = first.iter().map(|u| u.line).collect();
    assert_eq!(lines, [2, 3, 4]);
}

#[test]
fn a_module_that_is_not_python_is_a_located_error() {
    let source = ModuleSource::from_bytes("bad.py", b"def f(:\n".to_vec()).unwrap();
    let e = derive(&source, &config()).unwrap_err();
    assert_eq!(e.location, "bad.py:1:7");
    assert!(e.message.starts_with("Python syntax error"), "{e}");
}

fn method(object: &str, usage: Usage, overload: Option<&str>) -> NativeMember {
    NativeMember {
        module: None,
        object: object.into(),
        kind: MemberKind::Callable {
            overload: overload.map(Into::into),
        },
        usage,
        by: NeededBy::Module,
        dict_keys: Vec::new(),
        reason: "r".into(),
    }
}

fn attribute(object: &str, name: &str, access: Declared, by: NeededBy) -> NativeMember {
    NativeMember {
        module: None,
        object: object.into(),
        kind: MemberKind::Attribute {
            name: name.into(),
            instance: true,
            access,
        },
        usage: Usage::Required,
        by,
        dict_keys: Vec::new(),
        reason: "r".into(),
    }
}

fn report(module: &str, declared: NativeSurface) -> (Vec<String>, Vec<String>) {
    let r = compare(&declared, surface(module));
    assert_eq!(r.ok(), r.failures.is_empty());
    (r.failure_lines(), r.warning_lines())
}

#[test]
fn compare_names_each_difference() {
    let module = "import mooncake._partial_read\n\
                  def f(store, config):\n\
                  \x20   store.remove(1, 2, 3)\n\
                  \x20   g = getattr(store, 'get_into', None)\n\
                  \x20   config.group_ids = [1]\n\
                  \x20   store.put_from(1)\n\
                  \x20   from mooncake.buffer_pool import BufferPool\n";
    let declared = NativeSurface {
        roles: Vec::new(),
        members: vec![
            method(
                "Store.remove",
                Usage::Required,
                Some("key: str, force: bool = False"),
            ),
            method("Store.get_into", Usage::Optional, None),
            method("Store.put_from", Usage::Optional, None),
            method("Store.unused", Usage::Optional, None),
            attribute(
                "ReplicateConfig",
                "group_ids",
                Declared::Read,
                NeededBy::Module,
            ),
            attribute(
                "ReplicateConfig",
                "replica_num",
                Declared::Write,
                NeededBy::Consumer,
            ),
        ],
        siblings: vec![Sibling {
            module: "mooncake.buffer_pool".into(),
            usage: Usage::Optional,
            reason: "r".into(),
        }],
    };
    let (failures, warnings) = report(module, declared);
    assert_eq!(
        failures,
        [
            "m.py:1: sibling mooncake._partial_read: undeclared: expected a [[sibling]] entry, found required import at module level",
            "m.py:3: native Store.remove: call: expected a call that fits (key: str, force: bool = False), found call(3 args): 3 positional argument(s) where it takes at most 2",
            "m.py:5: native ReplicateConfig.group_ids: access: expected read (as declared), found a write",
            "m.py:6: native Store.put_from: use: expected optional (as declared), found required call(1 arg) on an instance (unguarded)",
        ]
    );
    // The consumer-only declaration is not reported; the unused module one is.
    assert_eq!(
        warnings,
        [
            "m.py: warning: native Store.unused: unused: expected a use in the module (or `by = \"consumer\"`), found none"
        ]
    );
}

#[test]
fn call_shapes_against_overloads() {
    let declared = |overload: &str| NativeSurface {
        roles: Vec::new(),
        members: vec![method("Store.m", Usage::Required, Some(overload))],
        siblings: Vec::new(),
    };
    for (call, overload, problem) in [
        ("store.m(1)", "key: str, force: bool = False", None),
        (
            "store.m(1, force=True)",
            "key: str, force: bool = False",
            None,
        ),
        ("store.m(*xs)", "key: str, size: int", None),
        ("store.m()", "key: str", Some("misses required `key`")),
        (
            "store.m(1, config=c)",
            "key: str",
            Some("no parameter `config`"),
        ),
        (
            "store.m(1, key=2)",
            "key: str",
            Some("`key` is given by position and by keyword"),
        ),
        ("store.m(1, b=2)", "a, *, b", None),
        (
            "store.m(1, 2)",
            "a, *, b",
            Some("2 positional argument(s) where it takes at most 1"),
        ),
        ("store.m(1, anything=2)", "a, **kw", None),
    ] {
        let module = format!("def f(store, xs, c):\n    {call}\n");
        let (failures, _) = report(&module, declared(overload));
        match problem {
            None => assert!(failures.is_empty(), "{call} vs ({overload}): {failures:?}"),
            Some(p) => assert!(
                failures.len() == 1 && failures[0].ends_with(p),
                "{call} vs ({overload}): {failures:?}"
            ),
        }
    }
}

#[test]
fn forwarded_calls_are_alternatives_per_call_site() {
    // One path through the helper passes config=, the other does not: a member that takes no
    // config fits one of them, which is the path the module takes for it.
    let module = "def _call(fn, *args, config=None):\n\
                  \x20   if config is None:\n\
                  \x20       return fn(*args)\n\
                  \x20   return fn(*args, config=config)\n\
                  def f(store, config):\n\
                  \x20   _call(store.m, 1, 2, config=config)\n\
                  \x20   _call(store.n, 1, 2, 3, config=config)\n";
    let declared = NativeSurface {
        roles: Vec::new(),
        members: vec![
            method("Store.m", Usage::Required, Some("key: str, tensor: object")),
            method("Store.n", Usage::Required, Some("key: str, tensor: object")),
        ],
        siblings: Vec::new(),
    };
    let (failures, _) = report(module, declared);
    // m fits the call without config; n fits neither: named once, at the call site.
    assert_eq!(failures.len(), 1, "{failures:?}");
    assert!(
        failures[0].starts_with("m.py:3: native Store.n: call:"),
        "{failures:?}"
    );
}
