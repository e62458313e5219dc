//! The files given read as one program: values cross files through imports (results, module
//! names, `self.` attributes of a base class, arguments), and a file joins the analysis only
//! when the flow reaches it.

use super::tests::api;
use super::{ConsumerFile, ConsumerReport, check};
use crate::source::ModuleSource;

/// The report on files as a directory walk finds them (`named: false`): `(module, text)`.
fn walked<S: AsRef<str>>(files: &[(S, S)]) -> ConsumerReport {
    let files: Vec<ConsumerFile> = files
        .iter()
        .map(|(module, text)| ConsumerFile {
            source: ModuleSource::from_bytes(
                format!("{}.py", module.as_ref()),
                text.as_ref().as_bytes().to_vec(),
            )
            .unwrap(),
            module: module.as_ref().to_owned(),
            named: false,
        })
        .collect();
    check(&api(), &files, &[]).unwrap()
}

fn failures(files: &[(&str, &str)]) -> Vec<String> {
    walked(files).failure_lines()
}

const MAKER: &str = "\
from mooncake.engine import TransferEngine
from mooncake.store import ReplicateConfig

def make_engine():
    e = TransferEngine()
    return e

def make_config():
    cfg = ReplicateConfig()
    return cfg, 1

def register(engine, addr):
    engine.register_memory(addr)
";

#[test]
fn a_result_crosses_files_through_an_import() {
    let user = "\
from .maker import make_engine
from . import maker as m

class Sender:
    def __init__(self):
        self._engine = make_engine()

    def send(self):
        return self._engine.transfer_everything()

def other():
    m.make_engine().get_rpc_port()
    cfg, _ = m.make_config()
    cfg.bogus = 2
";
    assert_eq!(
        failures(&[("pkg.maker", MAKER), ("pkg.user", user)]),
        [
            "pkg.user.py:9:29: native mooncake.engine.TransferEngine.transfer_everything: \
             undeclared: expected a [[native]] entry, found required call() on an instance",
            "pkg.user.py:12:21: native mooncake.engine.TransferEngine.get_rpc_port: undeclared: \
             expected a [[native]] entry, found required call() on an instance",
            "pkg.user.py:14:9: native ReplicateConfig.bogus: undeclared: expected a [[native]] \
             entry, found required write on an instance",
        ]
    );
}

#[test]
fn an_argument_reaches_a_function_in_a_file_that_never_names_the_package() {
    // helpers.py names no mooncake module: it joins when the caller passes it an engine.
    let helpers = "def warm(engine):\n    engine.warm_up(1)\n\ndef unrelated(config):\n    config.hidden_size = 4\n";
    let caller = "\
from mooncake.engine import TransferEngine
from .helpers import warm, unrelated

warm(TransferEngine())
unrelated(object())
";
    assert_eq!(
        failures(&[("pkg.helpers", helpers), ("pkg.caller", caller)]),
        [
            "pkg.helpers.py:2:12: native mooncake.engine.TransferEngine.warm_up: undeclared: \
          expected a [[native]] entry, found required call(1 arg) on an instance"
        ]
    );
    // Its parameter is native only because the caller passes one: the maker's `register`
    // gets nothing here, so its call is no finding.
    assert_eq!(failures(&[("pkg.maker", MAKER)]), Vec::<String>::new());
}

#[test]
fn a_subclass_in_another_file_inherits_its_bases_attributes_unless_it_assigns_them() {
    let base = "\
from mooncake.store import MooncakeDistributedStore

class Store:
    def __init__(self):
        self.store = MooncakeDistributedStore()
";
    let sub = "\
from .base import Store

class Embedding(Store):
    def get(self, k):
        return self.store.lookup_embedding(k)
";
    let shadowing = "\
from .base import Store
from other_vendor import Engine

class Vendor(Store):
    def __init__(self):
        self.store = Engine()

    def get(self, k):
        return self.store.lookup_embedding(k)
";
    assert_eq!(
        failures(&[
            ("pkg.base", base),
            ("pkg.sub", sub),
            ("pkg.shadowing", shadowing)
        ]),
        [
            "pkg.sub.py:5:27: native MooncakeDistributedStore.lookup_embedding: undeclared: expected \
          a [[native]] entry, found required call(1 arg) on an instance"
        ]
    );
}

#[test]
fn files_the_flow_does_not_reach_are_not_read() {
    // Broken Python that imports nothing native: never parsed, so no error.
    let broken = "def f(:\n";
    let unrelated = "from .maker import register\n";
    assert_eq!(
        failures(&[
            ("pkg.maker", MAKER),
            ("pkg.broken", broken),
            ("pkg.unrelated", unrelated)
        ]),
        Vec::<String>::new()
    );
}

/// `m0` makes an engine; `m1` .. `m<depth>` each return the one before's; `end` calls a
/// member on the last one's.
fn chain(depth: usize) -> ConsumerReport {
    let mut texts = vec![(
        "pkg.m0".to_owned(),
        "from mooncake.engine import TransferEngine\ndef make():\n    return TransferEngine()\n"
            .to_owned(),
    )];
    for i in 1..=depth {
        texts.push((
            format!("pkg.m{i}"),
            format!(
                "from .m{} import make as inner\ndef make():\n    return inner()\n",
                i - 1
            ),
        ));
    }
    texts.push((
        "pkg.end".to_owned(),
        format!("from .m{depth} import make\nmake().deep_member()\n"),
    ));
    walked(&texts)
}

#[test]
fn a_value_is_followed_through_a_long_chain_of_files_or_the_limit_is_said() {
    let report = chain(40);
    assert_eq!(
        report.failure_lines(),
        [
            "pkg.end.py:2:8: native mooncake.engine.TransferEngine.deep_member: undeclared: expected \
          a [[native]] entry, found required call() on an instance"
        ]
    );
    assert!(report.notes.is_empty(), "{:?}", report.notes);
    // Deeper than the rounds allowed: the end is not reached, and the report says so.
    let report = chain(crate::surface::MAX_ROUNDS + 5);
    assert_eq!(report.failure_lines(), Vec::<String>::new());
    assert_eq!(report.notes.len(), 1);
    assert!(
        report.notes[0].starts_with("the flow between files did not settle in 256 rounds"),
        "{:?}",
        report.notes
    );
}
