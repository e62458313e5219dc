//! The statements the walk binds names in: imports, classes, functions (their scopes),
//! assignments of every shape, `with ... as`.

use super::{Val, Walk, dotted};
use crate::flow::Binder;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{Expr, Stmt};

impl<'a> Visitor<'a> for Walk<'a, '_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Import(i) => self.import(i),
            Stmt::ImportFrom(i) => self.import_from(i),
            Stmt::ClassDef(c) => self.class_def(c),
            Stmt::FunctionDef(f) => {
                self.scopes.push(&f.body);
                visitor::walk_stmt(self, s);
                self.scopes.pop();
            }
            Stmt::Assign(a) => self.bind_assignment(a),
            Stmt::With(w) => {
                self.bind_with(w);
                self.visit_body(&w.body);
            }
            Stmt::AnnAssign(a) => {
                let val = a.value.as_deref().and_then(|v| self.eval(v));
                match (dotted(&a.target), val) {
                    (Some(key), Some(v)) => self.bind(key, v),
                    _ => self.visit_expr(&a.target),
                }
            }
            _ => visitor::walk_stmt(self, s),
        }
    }

    fn visit_expr(&mut self, e: &'a Expr) {
        self.eval(e);
    }
}

impl<'a> Binder<'a> for Walk<'a, '_> {
    type Value = Option<Val>;
    fn evaluate(&mut self, e: &'a Expr) -> Option<Val> {
        self.eval(e)
    }
    /// `target = <val>`: a name or `a.b` target holds it; any other is walked.
    fn assign_to(&mut self, target: &'a Expr, val: Option<Val>) {
        match (dotted(target), val) {
            (Some(key), Some(v)) => self.bind(key, v),
            _ => self.visit_expr(target),
        }
    }
}
