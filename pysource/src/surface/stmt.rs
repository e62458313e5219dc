//! Statements: bindings, blocks and their guards, function and class bodies in their scopes.

use super::guard::{exits, is_type_checking, try_guard};
use super::value::{Val, Vals, without_literals};
use super::walk::Analyzer;
use super::{Access, Target};
use crate::flow::Binder;
use ruff_python_ast::visitor;
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;

impl<'a> Analyzer<'a> {
    pub fn body(&mut self, stmts: &'a [Stmt]) {
        let mark = self.guards.len();
        for stmt in stmts {
            self.stmt(stmt);
            // `if not hasattr(obj, name): continue` guards the rest of the block.
            if let Stmt::If(s) = stmt
                && s.elif_else_clauses.is_empty()
                && exits(&s.body)
            {
                let (_, negative) = self.guard_paths(&s.test);
                let line = self.line(&*s.test);
                self.guards.extend(negative.into_iter().map(|p| (p, line)));
            }
        }
        self.guards.truncate(mark);
    }

    fn guarded(&mut self, paths: Vec<String>, line: usize, stmts: &'a [Stmt]) {
        let mark = self.guards.len();
        self.guards.extend(paths.into_iter().map(|p| (p, line)));
        self.body(stmts);
        self.guards.truncate(mark);
    }

    pub fn stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => {
                for d in &f.decorator_list {
                    self.eval(&d.expression);
                }
                for p in f.parameters.iter_non_variadic_params() {
                    if let Some(d) = &p.default {
                        self.eval(d);
                    }
                }
                let Some(&fid) = self.index.func_at.get(&f.range.start()) else {
                    return;
                };
                // Unchanged inputs give the same results and uses: no need to walk it again.
                if !self.deps.needs_walk(fid) {
                    return;
                }
                self.deps.walking(fid);
                self.uses[fid + 1].clear();
                let saved = (
                    self.scope,
                    self.func,
                    std::mem::take(&mut self.guards),
                    std::mem::take(&mut self.tries),
                );
                self.scope = self.index.funcs[fid].scope;
                self.func = Some(fid);
                self.body(&f.body);
                (self.scope, self.func, self.guards, self.tries) = saved;
            }
            Stmt::ClassDef(c) => {
                for d in &c.decorator_list {
                    self.eval(&d.expression);
                }
                let mut bases = Vals::new();
                if let Some(args) = &c.arguments {
                    for b in &args.args {
                        bases.extend(self.eval(b));
                    }
                    for k in &args.keywords {
                        self.eval(&k.value);
                    }
                }
                let Some(&cid) = self.index.class_at.get(&c.range.start()) else {
                    return;
                };
                self.note_bases(cid, &bases);
                let saved = self.scope;
                self.scope = self.index.classes[cid].scope;
                self.body(&c.body);
                self.scope = saved;
            }
            Stmt::Assign(a) => self.bind_assignment(a),
            Stmt::AnnAssign(a) => {
                if let Some(v) = &a.value {
                    let vals = self.eval(v);
                    self.assign(&a.target, vals);
                }
            }
            Stmt::AugAssign(a) => {
                self.eval(&a.value);
                self.eval(&a.target); // read ...
                self.assign(&a.target, Vals::new()); // ... then write
            }
            Stmt::For(f) => {
                let vals = self.eval(&f.iter);
                let items = self.elements(&vals);
                self.assign(&f.target, items);
                self.body(&f.body);
                self.body(&f.orelse);
            }
            Stmt::While(w) => {
                self.eval(&w.test);
                let (positive, _) = self.guard_paths(&w.test);
                let line = self.line(&*w.test);
                self.guarded(positive, line, &w.body);
                self.body(&w.orelse);
            }
            Stmt::If(s) => {
                self.eval(&s.test);
                let (positive, negative) = self.guard_paths(&s.test);
                let line = self.line(&*s.test);
                if !is_type_checking(&s.test) {
                    self.guarded(positive, line, &s.body);
                }
                // Each elif / else runs only where every test above it failed.
                let mark = self.guards.len();
                self.guards.extend(negative.into_iter().map(|p| (p, line)));
                for clause in &s.elif_else_clauses {
                    match &clause.test {
                        Some(test) => {
                            self.eval(test);
                            let (p, n) = self.guard_paths(test);
                            let l = self.line(test);
                            self.guarded(p, l, &clause.body);
                            self.guards.extend(n.into_iter().map(|p| (p, l)));
                        }
                        None => self.body(&clause.body),
                    }
                }
                self.guards.truncate(mark);
            }
            Stmt::Try(t) => {
                self.tries.push(try_guard(t, self.lines));
                self.body(&t.body);
                self.tries.pop();
                for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
                    self.body(&h.body);
                }
                self.body(&t.orelse);
                self.body(&t.finalbody);
            }
            Stmt::With(w) => {
                self.bind_with(w);
                self.body(&w.body);
            }
            Stmt::Return(r) => {
                if let Some(v) = &r.value {
                    // A result may come from any return: no literal is certain in it.
                    let vals = without_literals(self.eval(v));
                    if let Some(fid) = self.func
                        && !vals.is_empty()
                    {
                        self.changed |= self.returns[fid].extend(vals, &mut self.deps);
                    }
                }
            }
            Stmt::Import(i) => self.import(i),
            Stmt::ImportFrom(i) => self.import_from(i),
            Stmt::Expr(e) => {
                self.eval(&e.value);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    /// Binds an assignment target; an attribute of a native object is a write.
    pub fn assign(&mut self, target: &'a Expr, vals: Vals<'a>) {
        match target {
            Expr::Name(n) => self.bind(&n.id, vals),
            Expr::Attribute(a) => {
                let base = self.eval(&a.value);
                let line = self.line(target);
                for v in &base {
                    match v {
                        Val::Object(cid) => self.bind_attr(*cid, &a.attr, vals.clone()),
                        _ => {
                            if let Some((path, on)) = self.member_of(v, &a.attr) {
                                let guard = self.guard_for(&path);
                                self.record_at(
                                    line,
                                    a.attr.start(),
                                    Target::Native { path, on },
                                    Access::Write,
                                    guard,
                                );
                            }
                        }
                    }
                }
            }
            // `cls, ok = helper()` where it returns `(ReplicateConfig, True)`: a sequence keeps
            // no order, so each target may hold any of its items.
            Expr::Tuple(ast::ExprTuple { elts, .. }) | Expr::List(ast::ExprList { elts, .. }) => {
                match self.unpacked(&vals, elts.len()) {
                    // Item by item, when every value is a sequence of as many known items.
                    Some(items) if !elts.iter().any(Expr::is_starred_expr) => {
                        for (e, v) in elts.iter().zip(items) {
                            self.assign(e, v);
                        }
                    }
                    _ => {
                        let items = self.elements(&vals);
                        elts.iter().for_each(|e| self.assign(e, items.clone()))
                    }
                }
            }
            Expr::Subscript(x) => {
                let base = self.eval(&x.value);
                self.store_subscript(&base, &x.slice, vals);
            }
            Expr::Starred(s) => self.assign(&s.value, Vals::new()),
            other => {
                self.eval(other);
            }
        }
    }
}

impl<'a> Binder<'a> for Analyzer<'a> {
    type Value = Vals<'a>;
    fn evaluate(&mut self, e: &'a Expr) -> Vals<'a> {
        self.eval(e)
    }
    fn assign_to(&mut self, target: &'a Expr, value: Vals<'a>) {
        self.assign(target, value);
    }
}
