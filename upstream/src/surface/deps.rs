//! Which function bodies read which values, so each fixpoint pass re-walks only the bodies
//! whose inputs changed (a module of 6,000 lines settles in a few passes; most bodies never
//! see a native value and are walked once).

use super::index::{ClassId, FuncId, Index, ScopeId};

#[derive(Clone, Copy)]
pub(super) enum Key {
    /// The names bound in a scope.
    Scope(ScopeId),
    /// `self.<name>` of a class.
    Class(ClassId),
    /// What a function returns.
    Return(FuncId),
}

pub(super) struct Deps {
    scopes: usize,
    classes: usize,
    /// Per key, the functions that read it (a reader may appear more than once).
    readers: Vec<Vec<FuncId>>,
    /// Per key, the reader last added, to skip repeats.
    last: Vec<Option<FuncId>>,
    /// Per function: an input changed since its body was last walked.
    dirty: Vec<bool>,
    /// Per function, the functions defined directly in its body (walked with it).
    children: Vec<Vec<FuncId>>,
}

impl Deps {
    pub fn new(index: &Index<'_>) -> Self {
        let (scopes, classes, funcs) = (index.scopes.len(), index.classes.len(), index.funcs.len());
        // The function each scope belongs to (a method's class body belongs to no function).
        let mut owner = vec![None; scopes];
        for (fid, f) in index.funcs.iter().enumerate() {
            owner[f.scope] = Some(fid);
        }
        let mut children = vec![Vec::new(); funcs];
        for (fid, f) in index.funcs.iter().enumerate() {
            let mut scope = index.scopes[f.scope].parent;
            while let Some(s) = scope {
                if let Some(parent) = owner[s] {
                    children[parent].push(fid);
                    break;
                }
                scope = index.scopes[s].parent;
            }
        }
        let keys = scopes + classes + funcs;
        Self {
            scopes,
            classes,
            readers: vec![Vec::new(); keys],
            last: vec![None; keys],
            dirty: vec![true; funcs],
            children,
        }
    }

    fn index(&self, key: Key) -> usize {
        match key {
            Key::Scope(s) => s,
            Key::Class(c) => self.scopes + c,
            Key::Return(f) => self.scopes + self.classes + f,
        }
    }

    /// The body of `reader` (if in one) read `key`.
    pub fn read(&mut self, reader: Option<FuncId>, key: Key) {
        let (Some(reader), k) = (reader, self.index(key)) else {
            return;
        };
        if self.last[k] != Some(reader) {
            self.last[k] = Some(reader);
            self.readers[k].push(reader);
        }
    }

    /// `key` learnt a value: every body that read it must be walked again.
    pub fn changed(&mut self, key: Key) {
        let k = self.index(key);
        for &r in &self.readers[k] {
            self.dirty[r] = true;
        }
    }

    /// Whether the body of `fid` (or of a function defined in it) has a changed input.
    pub fn needs_walk(&self, fid: FuncId) -> bool {
        self.dirty[fid] || self.children[fid].iter().any(|c| self.needs_walk(*c))
    }

    /// The body of `fid` is being walked: it is up to date until an input changes again.
    pub fn walking(&mut self, fid: FuncId) {
        self.dirty[fid] = false;
    }
}
