//! The files given read as one program: values cross files through imports (results, module
//! names, `self.` attributes of a base class, arguments), and a file joins the analysis only
//! when the flow reaches it.

use super::{ConsumerFile, check};
use crate::source::ModuleSource;
use mooncake_sos_codegen::model::Api;

const API: &str = include_str!("../../../api.toml");

fn api() -> Api {
    mooncake_sos_codegen::load_str("api.toml", API).unwrap()
}

/// Files as a directory walk finds them (`named: false`): `(module, text)`.
fn failures(files: &[(&str, &str)]) -> Vec<String> {
    let files: Vec<ConsumerFile> = files
        .iter()
        .map(|(module, text)| ConsumerFile {
            source: ModuleSource::from_bytes(format!("{module}.py"), text.as_bytes().to_vec())
                .unwrap(),
            module: (*module).to_owned(),
            named: false,
        })
        .collect();
    check(&api(), &files, &[]).unwrap().failure_lines()
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
            "pkg.user.py:9: native mooncake.engine.TransferEngine.transfer_everything: \
             undeclared: expected a [[native]] entry, found required call() on an instance",
            "pkg.user.py:12: native mooncake.engine.TransferEngine.get_rpc_port: undeclared: \
             expected a [[native]] entry, found required call() on an instance",
            "pkg.user.py:14: native ReplicateConfig.bogus: undeclared: expected a [[native]] \
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
            "pkg.helpers.py:2: native mooncake.engine.TransferEngine.warm_up: undeclared: \
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
            "pkg.sub.py:5: native MooncakeDistributedStore.lookup_embedding: undeclared: expected \
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
