//! The keys a dict passed to a native callable is known to hold: followed through names,
//! `d["k"] = ...`, `d |= ...`, `d.update(...)`, `d.setdefault("k", ...)`, `**` merges,
//! conditional expressions and the `return`s of the file's functions (nested ones too), each
//! name looked up in the scopes that enclose it.

use ruff_python_ast::{self as ast, Expr, Stmt};
use std::cell::RefCell;
use std::collections::{BTreeSet, HashMap, HashSet};

/// How deep the search follows names and function results.
const MAX_DEPTH: usize = 8;

/// Every statement of `body`, into compound statements but not into nested definitions.
fn each_stmt<'a>(body: &'a [Stmt], f: &mut impl FnMut(&'a Stmt)) {
    for s in body {
        f(s);
        match s {
            Stmt::If(i) => {
                each_stmt(&i.body, f);
                for c in &i.elif_else_clauses {
                    each_stmt(&c.body, f);
                }
            }
            Stmt::For(x) => {
                each_stmt(&x.body, f);
                each_stmt(&x.orelse, f);
            }
            Stmt::While(x) => {
                each_stmt(&x.body, f);
                each_stmt(&x.orelse, f);
            }
            Stmt::With(x) => each_stmt(&x.body, f),
            Stmt::Try(t) => {
                each_stmt(&t.body, f);
                for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
                    each_stmt(&h.body, f);
                }
                each_stmt(&t.orelse, f);
                each_stmt(&t.finalbody, f);
            }
            Stmt::Match(m) => {
                for c in &m.cases {
                    each_stmt(&c.body, f);
                }
            }
            _ => {}
        }
    }
}

/// The keys a dict expression is known to hold, and whether it may hold others.
#[derive(Clone, Default)]
pub(super) struct Keys {
    pub known: BTreeSet<String>,
    pub unknown: bool,
}

fn string(e: &Expr) -> Option<String> {
    match e {
        Expr::StringLiteral(s) => Some(s.value.to_str().to_owned()),
        _ => None,
    }
}

/// Where names are looked up: the bodies of the enclosing functions, the module's first.
type Scopes<'a> = Vec<&'a [Stmt]>;

/// A name or function in a scope chain: `(name, the chain's bodies)`.
type Key = (String, Vec<usize>);

/// Each name and function result is worked out once per search: without that, `d = d`
/// written 50 times made 50^8 lookups (a hang); one met again while it is being worked out
/// (a cycle) holds keys not known statically.
#[derive(Default)]
pub(super) struct Search {
    done: RefCell<HashMap<Key, Keys>>,
    active: RefCell<HashSet<Key>>,
}

impl Search {
    /// The keys of `e`, its names looked up in `scopes` (the enclosing function bodies, the
    /// module's first). One search serves a whole file: 5,000 `setup(d)` calls took 21 s
    /// when each worked `d` out again.
    pub(super) fn of<'a>(&self, e: &'a Expr, scopes: &[&'a [Stmt]]) -> Keys {
        self.keys_of(e, &scopes.to_vec(), 0)
    }

    fn once(&self, name: &str, scopes: &Scopes<'_>, f: impl FnOnce() -> Keys) -> Keys {
        let key = (
            name.to_owned(),
            scopes.iter().map(|b| b.as_ptr() as usize).collect(),
        );
        if let Some(k) = self.done.borrow().get(&key) {
            return k.clone();
        }
        if !self.active.borrow_mut().insert(key.clone()) {
            return Keys {
                unknown: true,
                ..Keys::default()
            };
        }
        let keys = f();
        self.active.borrow_mut().remove(&key);
        self.done.borrow_mut().insert(key, keys.clone());
        keys
    }

    /// The keys of the dict `e` evaluates to, looking for `e`'s names in `scopes`.
    fn keys_of<'a>(&self, e: &'a Expr, scopes: &Scopes<'a>, depth: usize) -> Keys {
        let mut keys = Keys::default();
        if depth > MAX_DEPTH {
            keys.unknown = true;
            return keys;
        }
        match e {
            Expr::Dict(d) => {
                for item in &d.items {
                    match item.key.as_ref().and_then(string) {
                        Some(k) => {
                            keys.known.insert(k);
                        }
                        // `**other`: its keys, when known.
                        None if item.key.is_none() => {
                            keys.merge(self.keys_of(&item.value, scopes, depth + 1));
                        }
                        None => keys.unknown = true,
                    }
                }
            }
            Expr::BinOp(b) if b.op == ast::Operator::BitOr => {
                keys.merge(self.keys_of(&b.left, scopes, depth + 1));
                keys.merge(self.keys_of(&b.right, scopes, depth + 1));
            }
            Expr::Call(c) if matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "dict") => {
                for arg in &c.arguments.args {
                    keys.merge(self.keys_of(arg, scopes, depth + 1));
                }
                for k in &c.arguments.keywords {
                    match &k.arg {
                        Some(a) => {
                            keys.known.insert(a.to_string());
                        }
                        None => keys.merge(self.keys_of(&k.value, scopes, depth + 1)),
                    }
                }
            }
            Expr::Call(c) => match &*c.func {
                Expr::Name(n) => match function(n.id.as_str(), scopes) {
                    Some(chain) => keys.merge(self.once(&format!("{}()", n.id), &chain, || {
                        let body = *chain.last().expect("the function's body");
                        let mut found = false;
                        let mut out = Keys::default();
                        each_stmt(body, &mut |s| {
                            if let Stmt::Return(ast::StmtReturn { value: Some(v), .. }) = s {
                                found = true;
                                out.merge(self.keys_of(v, &chain, depth + 1));
                            }
                        });
                        out.unknown |= !found;
                        out
                    })),
                    None => keys.unknown = true,
                },
                _ => keys.unknown = true,
            },
            Expr::If(i) => {
                keys.merge(self.keys_of(&i.body, scopes, depth + 1));
                keys.merge(self.keys_of(&i.orelse, scopes, depth + 1));
            }
            Expr::Name(n) => keys.merge(self.once(n.id.as_str(), scopes, || {
                self.keys_of_name(n.id.as_str(), scopes, depth)
            })),
            _ => keys.unknown = true,
        }
        keys
    }

    /// The keys a name holds: what it is assigned in the innermost scope that assigns it
    /// (Python's rule for a name), and what that scope and the ones inside it add with
    /// `name["k"] = ...`, `name |= ...`, `name.update(...)` and `name.setdefault("k", ...)`.
    fn keys_of_name<'a>(&self, name: &str, scopes: &Scopes<'a>, depth: usize) -> Keys {
        let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
        let assigns = |body: &'a [Stmt]| {
            let mut found = false;
            each_stmt(body, &mut |s| match s {
                Stmt::Assign(a) => found |= a.targets.iter().any(is_name),
                Stmt::AnnAssign(a) => found |= a.value.is_some() && is_name(&a.target),
                _ => {}
            });
            found
        };
        let Some(home) = scopes.iter().rposition(|body| assigns(body)) else {
            return Keys {
                unknown: true,
                ..Keys::default()
            };
        };
        let mut keys = Keys::default();
        for (i, body) in scopes.iter().enumerate().skip(home) {
            // Names in what it is assigned are looked up where the assignment is.
            let here: Scopes<'a> = scopes[..=i].to_vec();
            each_stmt(body, &mut |s| match s {
                Stmt::Assign(a) => {
                    for t in &a.targets {
                        if is_name(t) && i == home {
                            keys.merge(self.keys_of(&a.value, &here, depth + 1));
                        } else if let Expr::Subscript(sub) = t
                            && is_name(&sub.value)
                        {
                            match string(&sub.slice) {
                                Some(k) => {
                                    keys.known.insert(k);
                                }
                                None => keys.unknown = true,
                            }
                        }
                    }
                }
                Stmt::AnnAssign(a) if is_name(&a.target) && i == home => {
                    if let Some(v) = &a.value {
                        keys.merge(self.keys_of(v, &here, depth + 1));
                    }
                }
                Stmt::AugAssign(a) if is_name(&a.target) => {
                    if a.op == ast::Operator::BitOr {
                        keys.merge(self.keys_of(&a.value, &here, depth + 1));
                    } else {
                        keys.unknown = true;
                    }
                }
                Stmt::Expr(x) => {
                    if let Expr::Call(c) = &*x.value
                        && let Expr::Attribute(a) = &*c.func
                        && is_name(&a.value)
                    {
                        match a.attr.as_str() {
                            "update" => {
                                for arg in &c.arguments.args {
                                    keys.merge(self.keys_of(arg, &here, depth + 1));
                                }
                                for k in &c.arguments.keywords {
                                    match &k.arg {
                                        Some(n) => {
                                            keys.known.insert(n.to_string());
                                        }
                                        None => keys.unknown = true,
                                    }
                                }
                            }
                            "setdefault" => match c.arguments.args.first().and_then(string) {
                                Some(k) => {
                                    keys.known.insert(k);
                                }
                                None => keys.unknown = true,
                            },
                            _ => {}
                        }
                    }
                }
                _ => {}
            });
        }
        keys
    }
}

/// The function `name` a call in `scopes` reaches (the innermost scope that defines it), as
/// the scope chain of its body.
fn function<'a>(name: &str, scopes: &Scopes<'a>) -> Option<Scopes<'a>> {
    for (i, body) in scopes.iter().enumerate().rev() {
        let mut found = None;
        each_stmt(body, &mut |s| {
            if let Stmt::FunctionDef(f) = s
                && f.name.as_str() == name
                && found.is_none()
            {
                found = Some(&f.body[..]);
            }
        });
        if let Some(inner) = found {
            let mut chain = scopes[..=i].to_vec();
            chain.push(inner);
            return Some(chain);
        }
    }
    None
}

impl Keys {
    fn merge(&mut self, other: Keys) {
        self.known.extend(other.known);
        self.unknown |= other.unknown;
    }
}
