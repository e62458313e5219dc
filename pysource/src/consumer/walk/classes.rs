//! Classes of the consumer that derive from an API class: calls on their instances, on
//! `self` and on `super()` in them are the API class's, except what they define themselves.

use super::{Origin, Val, Walk};
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use std::collections::BTreeSet;

pub(super) struct Subclass {
    pub base: String,
    pub own: BTreeSet<String>,
}

/// `self.X = ...` targets anywhere in a class body: the instance's own attributes.
struct SelfAttrs(BTreeSet<String>);

impl<'a> Visitor<'a> for SelfAttrs {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        let targets: Vec<&Expr> = match s {
            Stmt::Assign(a) => a.targets.iter().collect(),
            Stmt::AnnAssign(a) => vec![&a.target],
            Stmt::AugAssign(a) => vec![&a.target],
            _ => Vec::new(),
        };
        for t in targets {
            if let Expr::Attribute(a) = t
                && matches!(&*a.value, Expr::Name(n) if n.id.as_str() == "self")
            {
                self.0.insert(a.attr.to_string());
            }
        }
        visitor::walk_stmt(self, s);
    }
}

/// The names a class body defines: its functions, assigned names and `self.X` attributes.
fn defined(body: &[Stmt]) -> BTreeSet<String> {
    let mut attrs = SelfAttrs(BTreeSet::new());
    attrs.visit_body(body);
    let mut out = attrs.0;
    for s in body {
        match s {
            Stmt::FunctionDef(f) => {
                out.insert(f.name.to_string());
            }
            Stmt::ClassDef(c) => {
                out.insert(c.name.to_string());
            }
            Stmt::Assign(a) => out.extend(a.targets.iter().filter_map(|t| match t {
                Expr::Name(n) => Some(n.id.to_string()),
                _ => None,
            })),
            Stmt::AnnAssign(a) => {
                if let Expr::Name(n) = &*a.target {
                    out.insert(n.id.to_string());
                }
            }
            _ => {}
        }
    }
    out
}

impl<'a> Walk<'a, '_> {
    /// A class; one deriving from an API class is recorded as its subclass, and its body is
    /// walked with `self` an instance of it.
    pub(super) fn class_def(&mut self, c: &'a ast::StmtClassDef) {
        let mut base = None;
        for b in c.arguments.iter().flat_map(|a| a.args.iter()) {
            match self.eval(b) {
                Some(Val::Name(Origin::Api, name))
                    if self.names.classes.contains(name.as_str()) =>
                {
                    base = Some(name)
                }
                Some(Val::Name(Origin::Api, name)) => {
                    if let Some(sub) = self.subclasses.get(&name) {
                        base = Some(sub.base.clone());
                    }
                }
                _ => {}
            }
        }
        for k in c.arguments.iter().flat_map(|a| a.keywords.iter()) {
            self.eval(&k.value);
        }
        for d in &c.decorator_list {
            self.eval(&d.expression);
        }
        let name = c.name.to_string();
        let Some(base) = base else {
            self.visit_body(&c.body);
            return;
        };
        if !self.subclasses.contains_key(&name) {
            let mut own = defined(&c.body);
            // A decorator (`@dataclass` over a FieldSchema subclass) may write `__init__`.
            if !c.decorator_list.is_empty() {
                own.insert("__init__".into());
            }
            self.subclasses.insert(name.clone(), Subclass { base, own });
            self.changed = true;
        }
        self.bind(name.clone(), Val::Name(Origin::Api, name.clone()));
        let outer_self = self
            .bindings
            .insert("self".into(), Val::Instance(Origin::Api, name.clone()));
        let outer_class = self.class.replace(name);
        self.visit_body(&c.body);
        self.class = outer_class;
        match outer_self {
            Some(v) => self.bindings.insert("self".into(), v),
            None => self.bindings.remove("self"),
        };
    }
}
