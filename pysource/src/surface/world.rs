//! What the files of a program tell each other between rounds ([`super::program`]).

use super::Use;
use super::value::{Remote, Shared, is_native};
use std::collections::{BTreeMap, BTreeSet};

/// What a file gives the others.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct Exports {
    /// Its module-level names.
    pub names: BTreeMap<String, Shared>,
    /// Its top-level functions and the methods of its top-level classes (`f`, `C.m`).
    pub funcs: BTreeMap<String, FuncExport>,
    pub classes: BTreeMap<String, ClassExport>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct FuncExport {
    /// Its parameters in order (`.1`: keyword-only), the implicit `self` / `cls` included.
    pub params: Vec<(String, bool)>,
    /// Leading parameters a call through an instance binds (`self`).
    pub bound: usize,
    /// A `@property`: reading the attribute gives its result.
    pub property: bool,
    pub returns: Shared,
    /// The API calls it passes its `**kwargs` to.
    pub forwards: Vec<super::api_use::Forward>,
}

#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct ClassExport {
    /// `self.<name>` and class-level names.
    pub attrs: BTreeMap<String, Shared>,
    pub methods: BTreeSet<String>,
    /// Its bases in other files, and in its own (`Def` references).
    pub bases: BTreeSet<Remote>,
    /// The API class it derives from, if any.
    pub api_base: Option<String>,
}

/// Every file's exports, and what each function receives from calls in other files.
#[derive(Clone, Debug, Default, PartialEq)]
pub(super) struct World {
    /// Every file's module, read or not yet.
    pub known: BTreeSet<String>,
    /// The exports of the files read.
    pub modules: BTreeMap<String, std::sync::Arc<Exports>>,
    /// (module, function) -> parameter index -> what callers in other files pass.
    pub inbound: BTreeMap<(String, String), BTreeMap<usize, Shared>>,
}

/// A fact of another file that a file's analysis read: its presence in the program, one of
/// its module-level names, functions or classes. A file is analysed again only when one of
/// the facts it read changed.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) enum Read {
    Module(String),
    Name(String, String),
    Func(String, String),
    Class(String, String),
}

impl Read {
    pub fn module(&self) -> &str {
        match self {
            Read::Module(m) | Read::Name(m, _) | Read::Func(m, _) | Read::Class(m, _) => m,
        }
    }

    /// Whether this fact is the same in `old` and `new`.
    pub fn same(&self, old: &World, new: &World) -> bool {
        let (o, n) = match (
            old.modules.get(self.module()),
            new.modules.get(self.module()),
        ) {
            (None, None) => return true,
            (Some(o), Some(n)) if std::sync::Arc::ptr_eq(o, n) => return true,
            (Some(o), Some(n)) => (o, n),
            _ => return false,
        };
        match self {
            Read::Module(_) => true,
            Read::Name(_, k) => o.names.get(k) == n.names.get(k),
            Read::Func(_, k) => o.funcs.get(k) == n.funcs.get(k),
            Read::Class(_, k) => o.classes.get(k) == n.classes.get(k),
        }
    }
}

/// One file's analysis in one round.
pub(super) struct Round {
    pub uses: Vec<Use>,
    pub api_uses: Vec<super::api_use::ConsumerUse>,
    pub exports: std::sync::Arc<Exports>,
    /// (module, function) -> parameter index -> what this file passes.
    pub outbound: BTreeMap<(String, String), BTreeMap<usize, Shared>>,
    /// What it read of the other files.
    pub reads: BTreeSet<Read>,
}

impl Exports {
    /// Whether a native value leaves the file: a name, a result or an attribute holds one.
    pub fn carries(&self) -> bool {
        let native = |vals: &Shared| vals.iter().any(is_native);
        self.names.values().any(native)
            || self.funcs.values().any(|f| native(&f.returns))
            || self.classes.values().any(|c| c.attrs.values().any(native))
    }
}
