//! The module's scopes, functions and classes, found once before the analysis: which names
//! each scope binds (Python's rule: a name assigned anywhere in a function is local to it),
//! each function's parameters and each class's methods and bases.

use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, ExprContext, Stmt};
use ruff_text_size::TextSize;
use std::collections::{HashMap, HashSet};

pub(crate) type ScopeId = usize;
pub(crate) type FuncId = usize;
pub(crate) type ClassId = usize;

pub(crate) const MODULE_SCOPE: ScopeId = 0;

pub(crate) struct Scope {
    pub parent: Option<ScopeId>,
    /// A class body: its names are not visible from the methods.
    pub is_class: bool,
    pub locals: HashSet<String>,
    /// Names declared `global` / `nonlocal` here: never local, whatever the body assigns.
    pub not_local: HashSet<String>,
    /// Names bound at more than one place here (or from another scope): what they hold at a
    /// given point is not certain.
    pub rebound: HashSet<String>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FuncKind {
    Plain,
    /// The first parameter is the instance.
    Method,
    /// The first parameter is the class.
    ClassMethod,
    Static,
    /// A `@property`: reading the attribute calls it.
    Property,
}

pub(crate) struct Func<'a> {
    pub def: &'a ast::StmtFunctionDef,
    pub scope: ScopeId,
    pub class: Option<ClassId>,
    pub kind: FuncKind,
    /// Positional parameters, in order, then keyword-only ones (`.1` = keyword-only).
    pub params: Vec<(&'a str, bool)>,
    pub vararg: Option<&'a str>,
    /// Its `**kwargs` parameter.
    pub kwarg: Option<&'a str>,
}

impl Func<'_> {
    /// How many leading parameters a call through an instance or class binds implicitly.
    pub fn implicit(&self, bound: bool) -> usize {
        match self.kind {
            FuncKind::Method | FuncKind::Property if bound => 1,
            FuncKind::ClassMethod => 1,
            _ => 0,
        }
    }

    pub fn positional(&self) -> usize {
        self.params.iter().filter(|(_, kw)| !kw).count()
    }
}

pub(crate) struct Class<'a> {
    pub name: &'a str,
    pub scope: ScopeId,
    pub methods: HashMap<String, FuncId>,
    pub bases: Vec<ClassId>,
    /// The `self.<name>` its methods assign: the instance's own attributes.
    pub own_attrs: HashSet<&'a str>,
    /// Those assigned at more than one place.
    pub rebound_attrs: HashSet<&'a str>,
    /// It has decorators (`@dataclass` may write its `__init__`).
    pub decorated: bool,
    /// A dataclass or a NamedTuple: its fields in order, which its constructor takes.
    pub fields: Option<Vec<&'a str>>,
}

pub(crate) struct Index<'a> {
    pub scopes: Vec<Scope>,
    pub funcs: Vec<Func<'a>>,
    pub classes: Vec<Class<'a>>,
    pub func_at: HashMap<TextSize, FuncId>,
    pub class_at: HashMap<TextSize, ClassId>,
}

impl<'a> Index<'a> {
    pub fn build(body: &'a [Stmt]) -> Self {
        let mut b = Builder {
            index: Index {
                scopes: vec![Scope {
                    parent: None,
                    is_class: false,
                    locals: HashSet::new(),
                    not_local: HashSet::new(),
                    rebound: HashSet::new(),
                }],
                funcs: Vec::new(),
                classes: Vec::new(),
                func_at: HashMap::new(),
                class_at: HashMap::new(),
            },
            scope: MODULE_SCOPE,
            class: None,
            base_names: Vec::new(),
            method: None,
        };
        b.visit_body(body);
        let mut index = b.index;
        // Bases named in the module: the first class of that name (deterministic).
        let mut by_name: HashMap<&str, ClassId> = HashMap::new();
        for (cid, (name, _)) in b.base_names.iter().enumerate() {
            by_name.entry(name.as_str()).or_insert(cid);
        }
        for (cid, (_, bases)) in b.base_names.iter().enumerate() {
            index.classes[cid].bases = bases
                .iter()
                .filter_map(|n| by_name.get(n.as_str()).copied())
                .filter(|base| *base != cid)
                .collect();
        }
        index
    }

    /// The scope that binds `name` as seen from `scope` (`None`: a builtin or undefined).
    pub fn resolve(&self, mut scope: ScopeId, name: &str) -> Option<ScopeId> {
        let start = scope;
        loop {
            let s = &self.scopes[scope];
            if (!s.is_class || scope == start) && s.locals.contains(name) {
                return Some(scope);
            }
            scope = s.parent?;
        }
    }

    /// `cid` and its bases, nearest first, each once.
    pub fn lineage(&self, cid: ClassId) -> Vec<ClassId> {
        let mut out = vec![cid];
        let mut i = 0;
        while i < out.len() {
            for b in &self.classes[out[i]].bases {
                if !out.contains(b) {
                    out.push(*b);
                }
            }
            i += 1;
        }
        out
    }

    pub fn method(&self, cid: ClassId, name: &str) -> Option<FuncId> {
        self.lineage(cid)
            .into_iter()
            .find_map(|c| self.classes[c].methods.get(name).copied())
    }
}

struct Builder<'a> {
    index: Index<'a>,
    scope: ScopeId,
    /// Set while directly in a class body (its defs are methods).
    class: Option<ClassId>,
    /// Per class: its name and the names of its bases.
    base_names: Vec<(String, Vec<String>)>,
    /// The class whose method (or a function nested in one) is being read: its `self`.
    method: Option<ClassId>,
}

impl Builder<'_> {
    fn local(&mut self, name: &str) {
        let scope = &mut self.index.scopes[self.scope];
        if !scope.not_local.contains(name) && !scope.locals.insert(name.to_owned()) {
            scope.rebound.insert(name.to_owned());
        }
    }

    fn new_scope(&mut self, is_class: bool) -> ScopeId {
        self.index.scopes.push(Scope {
            parent: Some(self.scope),
            is_class,
            locals: HashSet::new(),
            not_local: HashSet::new(),
            rebound: HashSet::new(),
        });
        self.index.scopes.len() - 1
    }
}

/// The fields of a class whose constructor a decorator or base writes from them
/// (`@dataclass`, `@dataclasses.dataclass(...)`, a `NamedTuple`): its annotated class-level
/// names in order, `ClassVar`s left out.
fn record_fields(c: &ast::StmtClassDef) -> Option<Vec<&str>> {
    fn last(e: &Expr) -> Option<&str> {
        match e {
            Expr::Name(n) => Some(n.id.as_str()),
            Expr::Attribute(a) => Some(a.attr.as_str()),
            Expr::Call(call) => last(&call.func),
            _ => None,
        }
    }
    let dataclass = c
        .decorator_list
        .iter()
        .any(|d| last(&d.expression) == Some("dataclass"));
    let named_tuple = c
        .arguments
        .iter()
        .flat_map(|a| a.args.iter())
        .any(|b| last(b) == Some("NamedTuple"));
    if !dataclass && !named_tuple {
        return None;
    }
    let class_var = |e: &Expr| {
        let base = match e {
            Expr::Subscript(s) => &*s.value,
            other => other,
        };
        matches!(last(base), Some("ClassVar" | "KW_ONLY"))
    };
    Some(
        c.body
            .iter()
            .filter_map(|s| match s {
                Stmt::AnnAssign(a) if !class_var(&a.annotation) => match &*a.target {
                    Expr::Name(n) => Some(n.id.as_str()),
                    _ => None,
                },
                _ => None,
            })
            .collect(),
    )
}

fn decorated(f: &ast::StmtFunctionDef, name: &str) -> bool {
    f.decorator_list.iter().any(|d| match &d.expression {
        Expr::Name(n) => n.id.as_str() == name,
        Expr::Attribute(a) => a.attr.as_str() == name,
        _ => false,
    })
}

impl<'a> Visitor<'a> for Builder<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        match stmt {
            Stmt::FunctionDef(f) => {
                self.local(&f.name);
                for d in &f.decorator_list {
                    self.visit_decorator(d);
                }
                for p in f.parameters.iter_non_variadic_params() {
                    if let Some(d) = &p.default {
                        self.visit_expr(d);
                    }
                }
                let kind = match self.class {
                    None => FuncKind::Plain,
                    Some(_) if decorated(f, "staticmethod") => FuncKind::Static,
                    Some(_) if decorated(f, "classmethod") => FuncKind::ClassMethod,
                    Some(_) if decorated(f, "property") => FuncKind::Property,
                    Some(_) => FuncKind::Method,
                };
                let (outer_scope, outer_class) = (self.scope, self.class);
                let scope = self.new_scope(false);
                let p = &f.parameters;
                let mut params: Vec<(&'a str, bool)> = p
                    .posonlyargs
                    .iter()
                    .chain(&p.args)
                    .map(|a| (a.parameter.name.as_str(), false))
                    .collect();
                params.extend(
                    p.kwonlyargs
                        .iter()
                        .map(|a| (a.parameter.name.as_str(), true)),
                );
                let vararg = p.vararg.as_ref().map(|v| v.name.as_str());
                let id = self.index.funcs.len();
                self.index.funcs.push(Func {
                    def: f,
                    scope,
                    class: self.class,
                    kind,
                    params: params.clone(),
                    vararg,
                    kwarg: p.kwarg.as_ref().map(|k| k.name.as_str()),
                });
                self.index.func_at.insert(f.range.start(), id);
                if let Some(cid) = self.class {
                    self.index.classes[cid]
                        .methods
                        .insert(f.name.to_string(), id);
                }
                let outer_method = self.method;
                self.method = self.class.or(self.method);
                self.scope = scope;
                self.class = None;
                for (name, _) in &params {
                    self.local(name);
                }
                for extra in [vararg, p.kwarg.as_ref().map(|k| k.name.as_str())]
                    .into_iter()
                    .flatten()
                {
                    self.local(extra);
                }
                self.visit_body(&f.body);
                (self.scope, self.class, self.method) = (outer_scope, outer_class, outer_method);
            }
            Stmt::ClassDef(c) => {
                self.local(&c.name);
                for d in &c.decorator_list {
                    self.visit_decorator(d);
                }
                let mut bases = Vec::new();
                if let Some(args) = &c.arguments {
                    self.visit_arguments(args);
                    for base in &args.args {
                        if let Expr::Name(n) = base {
                            bases.push(n.id.to_string());
                        }
                    }
                }
                let (outer_scope, outer_class) = (self.scope, self.class);
                let scope = self.new_scope(true);
                let id = self.index.classes.len();
                self.index.classes.push(Class {
                    name: c.name.as_str(),
                    scope,
                    methods: HashMap::new(),
                    bases: Vec::new(),
                    own_attrs: HashSet::new(),
                    rebound_attrs: HashSet::new(),
                    decorated: !c.decorator_list.is_empty(),
                    fields: record_fields(c),
                });
                self.base_names.push((c.name.to_string(), bases));
                self.index.class_at.insert(c.range.start(), id);
                self.scope = scope;
                self.class = Some(id);
                self.visit_body(&c.body);
                (self.scope, self.class) = (outer_scope, outer_class);
            }
            Stmt::Import(i) => {
                for alias in &i.names {
                    let bound = alias.asname.as_ref().unwrap_or(&alias.name);
                    let first = bound.split('.').next().unwrap_or(bound);
                    self.local(first);
                }
            }
            Stmt::ImportFrom(i) => {
                for alias in &i.names {
                    self.local(alias.asname.as_ref().unwrap_or(&alias.name));
                }
            }
            Stmt::Global(ast::StmtGlobal { names, .. })
            | Stmt::Nonlocal(ast::StmtNonlocal { names, .. }) => {
                let scope = &mut self.index.scopes[self.scope];
                for n in names {
                    scope.locals.remove(n.as_str());
                    scope.not_local.insert(n.to_string());
                }
                // Assigned from another scope: the module's (or an outer function's) name is
                // not bound at one place only.
                for s in &mut self.index.scopes {
                    s.rebound.extend(names.iter().map(|n| n.to_string()));
                }
            }
            Stmt::Try(t) => {
                for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
                    if let Some(name) = &h.name {
                        self.local(name);
                    }
                }
                visitor::walk_stmt(self, stmt);
            }
            _ => visitor::walk_stmt(self, stmt),
        }
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        match expr {
            Expr::Name(n) if n.ctx == ExprContext::Store => self.local(&n.id),
            // `self.x = ...` in a method: an attribute of the method's class.
            Expr::Attribute(a) if a.ctx == ExprContext::Store => {
                if let (Expr::Name(base), Some(cid)) = (&*a.value, self.method)
                    && base.id.as_str() == "self"
                {
                    let class = &mut self.index.classes[cid];
                    if !class.own_attrs.insert(a.attr.as_str()) {
                        class.rebound_attrs.insert(a.attr.as_str());
                    }
                }
            }
            _ => {}
        }
        visitor::walk_expr(self, expr);
    }

    // Annotations never run under `from __future__ import annotations`; they bind nothing.
    fn visit_annotation(&mut self, _expr: &'a Expr) {}
}
