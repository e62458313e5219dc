//! What a check found: the checked items (the matrix's rows) and each mismatch, located.

use mooncake_sos_manifest::model::{Api, SymbolKind};
use serde::Serialize;
use std::collections::HashMap;

/// How bad a mismatch is for its item, and whether the item's children were checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum Severity {
    /// The item is absent; nothing below it could be checked.
    Missing,
    /// The item is there but is something else (a function for a class); children unchecked.
    Blocked,
    /// The item is there and differs in one respect.
    Differs,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Present,
    Differs,
    Missing,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Present => "present",
            Self::Differs => "differs",
            Self::Missing => "missing",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Mismatch {
    /// Index into [`Items`].
    pub item: usize,
    pub severity: Severity,
    pub line: usize,
    /// `Symbol` or `Symbol.member`.
    pub subject: String,
    pub what: String,
    pub expected: String,
    pub found: String,
}

/// The facts the manifest declares, in declaration order, parents before children:
/// `Sym`, `Sym.field`, `Sym.__init__`, `Sym.__init__(param)`, `Sym.method(param)`, `alias(param)`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct Items {
    pub labels: Vec<String>,
    pub parents: Vec<Option<usize>>,
    #[serde(skip)]
    index: HashMap<String, usize>,
}

impl Items {
    pub fn for_api(api: &Api) -> Self {
        let mut items = Items::default();
        for symbol in &api.symbols {
            let s = items.push(symbol.name.clone(), None);
            match &symbol.kind {
                SymbolKind::Dataclass { fields, .. } => {
                    for f in fields {
                        items.push(format!("{}.{}", symbol.name, f.name), Some(s));
                    }
                }
                SymbolKind::Class { init, methods } => {
                    let member = format!("{}.__init__", symbol.name);
                    items.push_params(member, s, init.iter().map(|p| &p.name));
                    for m in methods {
                        let member = format!("{}.{}", symbol.name, m.name);
                        items.push_params(member, s, m.params.iter().map(|p| &p.name));
                    }
                }
                SymbolKind::Function { params, .. } | SymbolKind::Alias { params, .. } => {
                    for p in params {
                        items.push(format!("{}({})", symbol.name, p.name), Some(s));
                    }
                }
            }
        }
        items
    }

    fn push(&mut self, label: String, parent: Option<usize>) -> usize {
        let i = self.labels.len();
        self.index.insert(label.clone(), i);
        self.labels.push(label);
        self.parents.push(parent);
        i
    }

    fn push_params<'a>(
        &mut self,
        member: String,
        parent: usize,
        params: impl Iterator<Item = &'a String>,
    ) {
        let m = self.push(member.clone(), Some(parent));
        for p in params {
            self.push(format!("{member}({p})"), Some(m));
        }
    }

    /// The item with this label. Every label the checker uses comes from the same model,
    /// so a miss here is a bug; it falls back to the first item rather than panicking.
    pub fn index(&self, label: &str) -> usize {
        debug_assert!(self.index.contains_key(label), "no item {label}");
        self.index.get(label).copied().unwrap_or(0)
    }

    pub fn len(&self) -> usize {
        self.labels.len()
    }

    pub fn is_empty(&self) -> bool {
        self.labels.is_empty()
    }
}

/// The outcome of checking one module against the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    pub file: String,
    pub sha256: String,
    pub items: Items,
    pub mismatches: Vec<Mismatch>,
    /// What `verify --fix` writes for each domain that differs.
    #[serde(skip)]
    pub domain_fixes: Vec<DomainFix>,
}

/// A parameter (or field) whose declared domain differs from the module's.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DomainFix {
    /// What declares it: `Sym` (a dataclass's field, a function's parameter), `Sym.__init__`,
    /// `Sym.method`.
    pub owner: String,
    pub param: String,
    /// The module's domain; `None`: it has none.
    pub found: Option<Vec<String>>,
    /// Where each value of `found` is written in the module (byte ranges of its text).
    pub spans: Vec<std::ops::Range<usize>>,
}

impl Report {
    pub fn ok(&self) -> bool {
        self.mismatches.is_empty()
    }

    /// `FILE:LINE: Symbol.member: what differs: expected X, found Y`, one per mismatch.
    pub fn lines(&self) -> Vec<String> {
        self.mismatches
            .iter()
            .map(|m| {
                format!(
                    "{}:{}: {}: {}: expected {}, found {}",
                    self.file, m.line, m.subject, m.what, m.expected, m.found
                )
            })
            .collect()
    }

    /// Each item's status: its own worst mismatch, or its parent's when the parent's
    /// mismatch kept it from being checked.
    pub fn statuses(&self) -> Vec<Status> {
        let mut own = vec![Status::Present; self.items.len()];
        let mut blocked = vec![false; self.items.len()];
        for m in &self.mismatches {
            let status = match m.severity {
                Severity::Missing => Status::Missing,
                _ => Status::Differs,
            };
            own[m.item] = own[m.item].max(status);
            blocked[m.item] |= m.severity != Severity::Differs;
        }
        for i in 0..self.items.len() {
            if let Some(p) = self.items.parents[i]
                && blocked[p]
            {
                own[i] = own[i].max(own[p]);
                blocked[i] = true;
            }
        }
        own
    }
}

#[cfg(test)]
mod tests {
    use super::Status::{self, Differs, Missing, Present};
    use crate::source::ModuleSource;

    fn statuses(module: &str) -> Vec<(String, Status)> {
        let manifest = mooncake_sos_testkit::repo_root().join("api.toml");
        let api = mooncake_sos_manifest::load(&manifest, "api.toml").expect("api.toml");
        let source = ModuleSource::from_bytes("m.py", module.as_bytes().to_vec()).unwrap();
        let report = crate::verify(&api, &source).unwrap();
        let labels = report.items.labels.clone();
        labels.into_iter().zip(report.statuses()).collect()
    }

    fn status_of(all: &[(String, Status)], label: &str) -> Status {
        all.iter()
            .find(|(l, _)| l == label)
            .unwrap_or_else(|| panic!("no item {label}"))
            .1
    }

    #[test]
    fn children_inherit_missing_and_wrong_kind_but_not_a_difference() {
        let module = "class MooncakeBundleTransfer:\n    def __init__(self, store, key_prefix='x', default_chunk_bytes=1, buffer_pool=None): ...\n\
                      def export_ref(ref): ...\n";
        let all = statuses(module);
        // Absent symbol: it and everything below it are missing.
        assert_eq!(status_of(&all, "FieldSchema"), Missing);
        assert_eq!(status_of(&all, "FieldSchema.codec"), Missing);
        // Present class, absent method: the method and its parameters are missing.
        assert_eq!(status_of(&all, "MooncakeBundleTransfer"), Present);
        assert_eq!(status_of(&all, "MooncakeBundleTransfer.put"), Missing);
        assert_eq!(status_of(&all, "MooncakeBundleTransfer.put(type)"), Missing);
        // One parameter's default differs: only that parameter.
        assert_eq!(status_of(&all, "MooncakeBundleTransfer.__init__"), Present);
        assert_eq!(
            status_of(&all, "MooncakeBundleTransfer.__init__(key_prefix)"),
            Differs
        );
        assert_eq!(
            status_of(&all, "MooncakeBundleTransfer.__init__(store)"),
            Present
        );
        // A function where an alias is declared: it differs, and so does what it could not check.
        assert_eq!(status_of(&all, "export_ref"), Differs);
        assert_eq!(status_of(&all, "export_ref(ref)"), Differs);
    }
}
