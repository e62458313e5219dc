//! Guards: why a use is optional. `hasattr` tests and tests of a probed value, early exits,
//! `try` blocks whose handlers swallow the failure, lazy imports.

use super::Guard;
use super::value::Val;
use super::walk::{Analyzer, TryGuard, builtin_name, strings};
use crate::source::Lines;
use ruff_python_ast::{self as ast, BoolOp, CmpOp, Expr, Stmt, UnaryOp};

impl<'a> Analyzer<'a> {
    /// Why a use of the member `path` here is optional, if it is.
    pub fn guard_for(&self, path: &str) -> Option<Guard> {
        if let Some((_, line)) = self.guards.iter().rev().find(|(p, _)| p == path) {
            return Some(Guard::Guarded { line: *line });
        }
        self.tries
            .iter()
            .rev()
            .find(|t| t.attribute)
            .map(|t| Guard::Try { line: t.line })
    }

    /// Why an import here is optional: a swallowing `try`, else a function body (`lazy`:
    /// only for sibling modules; a native member imported in a function is still needed).
    pub fn import_guard(&self, lazy: bool) -> Option<Guard> {
        if let Some(t) = self.tries.iter().rev().find(|t| t.import) {
            return Some(Guard::Try { line: t.line });
        }
        match self.func {
            Some(fid) if lazy => Some(Guard::Lazy {
                line: self.line(&self.index.funcs[fid].def.name),
            }),
            _ => None,
        }
    }

    /// The members a test proves present when true, and those it proves present when false.
    pub fn guard_paths(&mut self, test: &'a Expr) -> (Vec<String>, Vec<String>) {
        self.silent += 1;
        let paths = self.test_paths(test);
        self.silent -= 1;
        paths
    }

    fn test_paths(&mut self, test: &'a Expr) -> (Vec<String>, Vec<String>) {
        match test {
            Expr::BoolOp(b) => {
                let parts: Vec<_> = b.values.iter().map(|v| self.test_paths(v)).collect();
                let (pos, neg): (Vec<_>, Vec<_>) = parts.into_iter().unzip();
                match b.op {
                    BoolOp::And => (pos.concat(), Vec::new()),
                    BoolOp::Or => (Vec::new(), neg.concat()),
                }
            }
            Expr::UnaryOp(u) if u.op == UnaryOp::Not => {
                let (pos, neg) = self.test_paths(&u.operand);
                (neg, pos)
            }
            Expr::Call(c) => match (builtin_name(self, &c.func), &c.arguments.args[..]) {
                (Some("hasattr"), [obj, name]) => {
                    let (objs, names) = (self.eval(obj), self.eval(name));
                    let mut paths = Vec::new();
                    for v in &objs {
                        for s in strings(&names) {
                            paths.extend(self.member_of(v, s).map(|(path, _)| path));
                        }
                    }
                    (paths, Vec::new())
                }
                (Some("callable"), [inner]) => (self.probed(inner), Vec::new()),
                _ => (self.probed(test), Vec::new()),
            },
            // `x = getattr(obj, "n", None)` then `if x is not None:` / `if x is None: return`.
            Expr::Compare(c)
                if c.comparators.len() == 1 && c.comparators[0].is_none_literal_expr() =>
            {
                let probed = self.probed(&c.left);
                match c.ops[0] {
                    CmpOp::IsNot | CmpOp::NotEq => (probed, Vec::new()),
                    CmpOp::Is | CmpOp::Eq => (Vec::new(), probed),
                    _ => (Vec::new(), Vec::new()),
                }
            }
            Expr::Name(_) | Expr::Attribute(_) => (self.probed(test), Vec::new()),
            _ => (Vec::new(), Vec::new()),
        }
    }

    /// The members a value came from by a getattr probe: it is truthy or not None only when
    /// they exist. Only a name, an attribute or a `getattr(obj, name, default)` can carry one
    /// here; other tests are not read again.
    fn probed(&mut self, e: &'a Expr) -> Vec<String> {
        let carries = match e {
            Expr::Name(_) | Expr::Attribute(_) => true,
            Expr::Call(c) => {
                builtin_name(self, &c.func) == Some("getattr") && c.arguments.args.len() == 3
            }
            _ => false,
        };
        if !carries {
            return Vec::new();
        }
        self.eval(e)
            .into_iter()
            .filter_map(|v| match v {
                Val::Member(m) if m.probe.is_some() => Some(m.path),
                _ => None,
            })
            .collect()
    }
}

/// A block that falls back: it ends in continue, break or return. (One that raises is no
/// fallback: `if not hasattr(cfg, "x"): raise ...` still needs `x`.)
pub(super) fn exits(body: &[Stmt]) -> bool {
    matches!(
        body.last(),
        Some(Stmt::Continue(_) | Stmt::Break(_) | Stmt::Return(_))
    )
}

/// Whether a block raises anywhere (nested definitions aside).
fn raises(body: &[Stmt]) -> bool {
    body.iter().any(|s| match s {
        Stmt::Raise(_) => true,
        Stmt::If(i) => raises(&i.body) || i.elif_else_clauses.iter().any(|c| raises(&c.body)),
        Stmt::For(f) => raises(&f.body) || raises(&f.orelse),
        Stmt::While(w) => raises(&w.body) || raises(&w.orelse),
        Stmt::With(w) => raises(&w.body),
        Stmt::Try(t) => {
            raises(&t.body)
                || raises(&t.orelse)
                || raises(&t.finalbody)
                || t.handlers
                    .iter()
                    .any(|ast::ExceptHandler::ExceptHandler(h)| raises(&h.body))
        }
        Stmt::Match(m) => m.cases.iter().any(|c| raises(&c.body)),
        _ => false,
    })
}

pub(super) fn is_type_checking(test: &Expr) -> bool {
    match test {
        Expr::Name(n) => n.id.as_str() == "TYPE_CHECKING",
        Expr::Attribute(a) => a.attr.as_str() == "TYPE_CHECKING",
        _ => false,
    }
}

/// Which failures a `try` survives: those a handler catches without raising (a handler
/// that may re-raise, `if strict: raise`, is no fallback).
pub(super) fn try_guard(t: &ast::StmtTry, lines: &Lines) -> TryGuard {
    let mut guard = TryGuard {
        line: lines.line(t.range.start()),
        attribute: false,
        import: false,
    };
    for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
        if raises(&h.body) {
            continue;
        }
        let mut names = Vec::new();
        match h.type_.as_deref() {
            None => names.push("BaseException"),
            Some(Expr::Tuple(t)) => names.extend(t.elts.iter().filter_map(last_name)),
            Some(e) => names.extend(last_name(e)),
        }
        let catches = |wanted: &[&str]| names.iter().any(|n| wanted.contains(n));
        let before = (guard.attribute, guard.import);
        guard.attribute |= catches(&["AttributeError", "Exception", "BaseException"]);
        guard.import |= catches(&[
            "ImportError",
            "ModuleNotFoundError",
            "Exception",
            "BaseException",
        ]);
        if (guard.attribute, guard.import) != before {
            guard.line = lines.line(h.range.start());
        }
    }
    guard
}

fn last_name(e: &Expr) -> Option<&str> {
    match e {
        Expr::Name(n) => Some(n.id.as_str()),
        Expr::Attribute(a) => Some(a.attr.as_str()),
        _ => None,
    }
}
