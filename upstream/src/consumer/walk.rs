//! The walk over a consumer's source: which names hold the API module, its symbols and their
//! instances (and the native module's classes and instances, for dict-taking calls), and every
//! use made through them.
//!
//! Flow-insensitive by design: a name (or `self.attr`) bound anywhere in the file to an
//! instance of a class holds it everywhere; passes repeat until no binding changes, then one
//! more pass records the uses.

use super::keys::Keys;
use super::{ConsumerUse, UseKind};
use crate::extract::Lines;
use crate::surface::CallShape;
use ruff_python_ast::visitor::{self, Visitor};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// Passes over the file before the bindings are taken as settled.
const MAX_PASSES: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Origin {
    Api,
    Native,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Val {
    Module(Origin),
    /// A top-level name of the module: an API symbol, or a native class or function.
    Name(Origin, String),
    Instance(Origin, String),
    /// A member of a class, reached on the class itself or on an instance.
    Member {
        origin: Origin,
        class: String,
        name: String,
        on_class: bool,
    },
}

/// What the walk needs to know of the manifest.
pub(super) struct Names<'a> {
    pub api_module: &'a str,
    pub native_module: &'a str,
    /// API symbols whose call makes an instance (classes and dataclasses).
    pub classes: BTreeSet<&'a str>,
    /// Native callables declared with `dict_keys`, as `Class.method` paths.
    pub dict_members: BTreeSet<&'a str>,
}

pub(super) fn uses(body: &[Stmt], text: &str, names: &Names<'_>) -> Vec<ConsumerUse> {
    let functions = body
        .iter()
        .filter_map(|s| match s {
            Stmt::FunctionDef(f) => Some((f.name.as_str(), &f.body[..])),
            _ => None,
        })
        .collect();
    let mut walk = Walk {
        names,
        text,
        lines: Lines::new(text),
        bindings: HashMap::new(),
        functions,
        scopes: vec![body],
        record: false,
        changed: false,
        uses: Vec::new(),
    };
    for _ in 0..MAX_PASSES {
        walk.changed = false;
        walk.visit_body(body);
        if !walk.changed {
            break;
        }
    }
    walk.record = true;
    walk.visit_body(body);
    let mut uses = walk.uses;
    uses.sort();
    uses.dedup();
    uses
}

struct Walk<'a, 'n> {
    names: &'n Names<'n>,
    text: &'a str,
    lines: Lines,
    bindings: HashMap<String, Val>,
    functions: HashMap<&'a str, &'a [Stmt]>,
    /// The bodies of the enclosing functions, the module's first.
    scopes: Vec<&'a [Stmt]>,
    record: bool,
    changed: bool,
    uses: Vec<ConsumerUse>,
}

/// `a`, `a.b.c` for a name or a chain of attributes on a name.
fn dotted(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}

impl<'a> Walk<'a, '_> {
    fn line(&self, node: &impl Ranged) -> usize {
        self.lines.line(node.start())
    }

    fn bind(&mut self, key: String, val: Val) {
        if let std::collections::hash_map::Entry::Vacant(e) = self.bindings.entry(key) {
            e.insert(val);
            self.changed = true;
        }
    }

    fn push(&mut self, line: usize, subject: String, kind: UseKind) {
        if self.record {
            self.uses.push(ConsumerUse {
                line,
                subject,
                kind,
            });
        }
    }

    fn origin_of(&self, module: &str) -> Option<Origin> {
        if module == self.names.api_module {
            Some(Origin::Api)
        } else if module == self.names.native_module {
            Some(Origin::Native)
        } else {
            None
        }
    }

    fn import(&mut self, s: &ast::StmtImport) {
        for alias in &s.names {
            let Some(origin) = self.origin_of(alias.name.as_str()) else {
                continue;
            };
            let key = alias.asname.as_ref().unwrap_or(&alias.name).to_string();
            self.bind(key, Val::Module(origin));
        }
    }

    fn import_from(&mut self, s: &'a ast::StmtImportFrom) {
        let Some(module) = s.module.as_ref().filter(|_| s.level == 0) else {
            return;
        };
        let from = self.origin_of(module.as_str());
        for alias in &s.names {
            let name = alias.name.as_str();
            let key = alias.asname.as_ref().unwrap_or(&alias.name).to_string();
            match from {
                Some(origin) => {
                    if origin == Origin::Api {
                        self.push(self.line(alias), name.to_owned(), UseKind::Import);
                    }
                    self.bind(key, Val::Name(origin, name.to_owned()));
                }
                None => {
                    if let Some(origin) = self.origin_of(&format!("{module}.{name}")) {
                        self.bind(key, Val::Module(origin));
                    }
                }
            }
        }
    }

    /// `base.attr`, recording a reference to an API member unless it is being called.
    fn member(&mut self, base: Option<Val>, attr: &str, line: usize, called: bool) -> Option<Val> {
        let (origin, class, on_class) = match base? {
            Val::Module(origin) => {
                if origin == Origin::Api && !called {
                    self.push(line, attr.to_owned(), UseKind::Reference);
                }
                return Some(Val::Name(origin, attr.to_owned()));
            }
            Val::Name(origin, class) => (origin, class, true),
            Val::Instance(origin, class) => (origin, class, false),
            Val::Member { .. } => return None,
        };
        if origin == Origin::Api && !called {
            self.push(line, format!("{class}.{attr}"), UseKind::Reference);
        }
        Some(Val::Member {
            origin,
            class,
            name: attr.to_owned(),
            on_class,
        })
    }

    fn eval(&mut self, e: &'a Expr) -> Option<Val> {
        if let Some(key) = dotted(e)
            && let Some(v) = self.bindings.get(&key)
        {
            return Some(v.clone());
        }
        match e {
            Expr::Name(_) => None,
            Expr::Attribute(a) => {
                let base = self.eval(&a.value);
                self.member(base, &a.attr, self.line(e), false)
            }
            Expr::Call(c) => self.call(c),
            _ => {
                visitor::walk_expr(self, e);
                None
            }
        }
    }

    fn call(&mut self, c: &'a ast::ExprCall) -> Option<Val> {
        let line = self.line(c);
        let func = match &*c.func {
            Expr::Attribute(a)
                if dotted(&c.func).is_none_or(|k| !self.bindings.contains_key(&k)) =>
            {
                let base = self.eval(&a.value);
                self.member(base, &a.attr, line, true)
            }
            other => self.eval(other),
        };
        for a in &c.arguments.args {
            self.eval(a);
        }
        for k in &c.arguments.keywords {
            self.eval(&k.value);
        }
        match func? {
            Val::Name(Origin::Api, name) => {
                let made = self.names.classes.contains(name.as_str());
                let kind = self.call_use(c, false);
                self.push(line, name.clone(), kind);
                made.then_some(Val::Instance(Origin::Api, name))
            }
            Val::Name(Origin::Native, name) => Some(Val::Instance(Origin::Native, name)),
            Val::Member {
                origin: Origin::Api,
                class,
                name,
                on_class,
            } => {
                let kind = self.call_use(c, on_class);
                self.push(line, format!("{class}.{name}"), kind);
                None
            }
            Val::Member {
                origin: Origin::Native,
                class,
                name,
                ..
            } => {
                let path = format!("{class}.{name}");
                if self.names.dict_members.contains(path.as_str())
                    && let Some(first) = c.arguments.args.first()
                {
                    let scope = *self.scopes.last().expect("the module scope");
                    let keys = Keys::of(first, scope, &self.functions);
                    let kind = UseKind::DictKeys {
                        keys: keys.known.into_iter().collect(),
                        unknown: keys.unknown,
                    };
                    self.push(line, path, kind);
                }
                None
            }
            _ => None,
        }
    }

    fn call_use(&self, c: &ast::ExprCall, on_class: bool) -> UseKind {
        let args = &c.arguments;
        let mut keywords: Vec<String> = args
            .keywords
            .iter()
            .filter_map(|k| k.arg.as_ref().map(|a| a.to_string()))
            .collect();
        keywords.sort();
        let literals = args
            .keywords
            .iter()
            .filter_map(|k| Some((k.arg.as_ref()?.to_string(), self.literal(&k.value)?)))
            .collect::<BTreeMap<_, _>>();
        UseKind::Call {
            shape: CallShape {
                positional: args.args.iter().filter(|a| !a.is_starred_expr()).count(),
                starred: args.args.iter().any(Expr::is_starred_expr),
                keywords,
                double_starred: args.keywords.iter().any(|k| k.arg.is_none()),
            },
            on_class,
            literals,
        }
    }

    /// The source text of a literal argument (a string, number, bool or None).
    fn literal(&self, e: &Expr) -> Option<String> {
        let literal = matches!(
            e,
            Expr::StringLiteral(_)
                | Expr::NumberLiteral(_)
                | Expr::BooleanLiteral(_)
                | Expr::NoneLiteral(_)
        );
        literal.then(|| self.text[e.range()].to_owned())
    }
}

impl<'a> Visitor<'a> for Walk<'a, '_> {
    fn visit_stmt(&mut self, s: &'a Stmt) {
        match s {
            Stmt::Import(i) => self.import(i),
            Stmt::ImportFrom(i) => self.import_from(i),
            Stmt::FunctionDef(f) => {
                self.scopes.push(&f.body);
                visitor::walk_stmt(self, s);
                self.scopes.pop();
            }
            Stmt::Assign(a) => {
                let val = self.eval(&a.value);
                for t in &a.targets {
                    match (dotted(t), &val) {
                        (Some(key), Some(v)) => self.bind(key, v.clone()),
                        _ => self.visit_expr(t),
                    }
                }
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
