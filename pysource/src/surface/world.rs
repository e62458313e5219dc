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
    pub forwards: Vec<super::api::Forward>,
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
    pub modules: BTreeMap<String, Exports>,
    /// (module, function) -> parameter index -> what callers in other files pass.
    pub inbound: BTreeMap<(String, String), BTreeMap<usize, Shared>>,
}

/// One file's analysis in one round.
pub(super) struct Round {
    pub uses: Vec<Use>,
    pub api_uses: Vec<super::api::ConsumerUse>,
    pub exports: Exports,
    /// (module, function) -> parameter index -> what this file passes.
    pub outbound: BTreeMap<(String, String), BTreeMap<usize, Shared>>,
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
