//! Which function bodies read which values, so each fixpoint pass re-walks only the bodies
//! whose inputs changed (a module of 6,000 lines settles in a few passes; most bodies never
//! see a native value and are walked once). Inputs are tracked per name: per scope, per
//! class attribute and per function result.

use super::index::{FuncId, Index};
use super::value::Vals;

/// What one name (a variable, `self.<name>`, a function's result) may hold, and which
/// function bodies read it.
#[derive(Default)]
pub(super) struct Slot<'a> {
    pub vals: Vals<'a>,
    readers: Vec<FuncId>,
    /// The reader last added, to skip repeats.
    last: Option<FuncId>,
}

impl<'a> Slot<'a> {
    /// The body of `reader` (if in one) reads this name.
    pub fn read(&mut self, reader: Option<FuncId>) -> &Vals<'a> {
        if let Some(r) = reader
            && self.last != Some(r)
        {
            self.last = Some(r);
            self.readers.push(r);
        }
        &self.vals
    }

    /// Adds `vals`; when that is new, every body that read the name must be walked again.
    pub fn extend(&mut self, vals: Vals<'a>, deps: &mut Deps) -> bool {
        let before = self.vals.len();
        self.vals.extend(vals);
        let grew = self.vals.len() != before;
        if grew {
            for &r in &self.readers {
                deps.dirty[r] = true;
            }
        }
        grew
    }
}

pub(super) struct Deps {
    /// Per function: an input changed since its body was last walked.
    dirty: Vec<bool>,
    /// Per function, the functions defined directly in its body (walked with it).
    children: Vec<Vec<FuncId>>,
}

impl Deps {
    pub fn new(index: &Index<'_>) -> Self {
        // The function each scope belongs to (a method's class body belongs to no function).
        let mut owner = vec![None; index.scopes.len()];
        for (fid, f) in index.funcs.iter().enumerate() {
            owner[f.scope] = Some(fid);
        }
        let mut children = vec![Vec::new(); index.funcs.len()];
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
        Self {
            dirty: vec![true; index.funcs.len()],
            children,
        }
    }

    /// Whether the body of `fid` (or of a function defined in it) has a changed input.
    pub fn needs_walk(&self, fid: FuncId) -> bool {
        self.dirty[fid] || self.children[fid].iter().any(|c| self.needs_walk(*c))
    }

    /// Something `fid`'s body depends on besides names changed (a new call of it).
    pub fn mark(&mut self, fid: FuncId) {
        self.dirty[fid] = true;
    }

    /// Every body must be walked again (a fact every caller reads changed).
    pub fn mark_all(&mut self) {
        self.dirty.iter_mut().for_each(|d| *d = true);
    }

    /// The body of `fid` is being walked: it is up to date until an input changes again.
    pub fn walking(&mut self, fid: FuncId) {
        self.dirty[fid] = false;
    }
}
