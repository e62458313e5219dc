//! The keys a dict passed to a native callable is known to hold: followed through names,
//! `d["k"] = ...`, `d.update(...)`, `d.setdefault("k", ...)`, conditional expressions and the
//! `return`s of the module's own functions.

use ruff_python_ast::{self as ast, Expr, Stmt};
use std::collections::{BTreeSet, HashMap};

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
#[derive(Default)]
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

/// The module's functions by name, and the body names are looked up in.
struct Search<'a, 'f> {
    functions: &'f HashMap<&'a str, &'a [Stmt]>,
}

impl<'a> Search<'a, '_> {
    /// The keys of the dict `e` evaluates to, looking for `e`'s names in `scope`.
    fn keys_of(&self, e: &'a Expr, scope: &'a [Stmt], depth: usize) -> Keys {
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
                        None => keys.unknown = true,
                    }
                }
            }
            Expr::Call(c) if matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "dict") => {
                keys.unknown |= !c.arguments.args.is_empty();
                for k in &c.arguments.keywords {
                    match &k.arg {
                        Some(a) => {
                            keys.known.insert(a.to_string());
                        }
                        None => keys.unknown = true,
                    }
                }
            }
            Expr::Call(c) => match &*c.func {
                Expr::Name(n) if self.functions.contains_key(n.id.as_str()) => {
                    let body = self.functions[n.id.as_str()];
                    let mut found = false;
                    each_stmt(body, &mut |s| {
                        if let Stmt::Return(ast::StmtReturn { value: Some(v), .. }) = s {
                            found = true;
                            keys.merge(self.keys_of(v, body, depth + 1));
                        }
                    });
                    keys.unknown |= !found;
                }
                _ => keys.unknown = true,
            },
            Expr::If(i) => {
                keys.merge(self.keys_of(&i.body, scope, depth + 1));
                keys.merge(self.keys_of(&i.orelse, scope, depth + 1));
            }
            Expr::Name(n) => keys.merge(self.keys_of_name(n.id.as_str(), scope, depth)),
            _ => keys.unknown = true,
        }
        keys
    }

    /// The keys a name is given in `scope`: what it is assigned, `name["k"] = ...`,
    /// `name.update(...)` and `name.setdefault("k", ...)`.
    fn keys_of_name(&self, name: &str, scope: &'a [Stmt], depth: usize) -> Keys {
        let is_name = |e: &Expr| matches!(e, Expr::Name(n) if n.id.as_str() == name);
        let mut keys = Keys::default();
        let mut assigned = false;
        each_stmt(scope, &mut |s| match s {
            Stmt::Assign(a) => {
                for t in &a.targets {
                    if is_name(t) {
                        assigned = true;
                        keys.merge(self.keys_of(&a.value, scope, depth + 1));
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
            Stmt::AnnAssign(a) if is_name(&a.target) => {
                if let Some(v) = &a.value {
                    assigned = true;
                    keys.merge(self.keys_of(v, scope, depth + 1));
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
                                keys.merge(self.keys_of(arg, scope, depth + 1));
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
        keys.unknown |= !assigned;
        keys
    }
}

impl Keys {
    /// The keys of `e`, its names looked up in `scope`.
    pub(super) fn of<'a>(
        e: &'a Expr,
        scope: &'a [Stmt],
        functions: &HashMap<&'a str, &'a [Stmt]>,
    ) -> Keys {
        Search { functions }.keys_of(e, scope, 0)
    }

    fn merge(&mut self, other: Keys) {
        self.known.extend(other.known);
        self.unknown |= other.unknown;
    }
}
