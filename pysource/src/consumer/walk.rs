//! The walk over a consumer's source: which names hold the API module, its symbols and their
//! instances (and the native module's classes and instances, for dict-taking calls), and every
//! use made through them.
//!
//! Flow-insensitive by design: a name (or `self.attr`) bound anywhere in the file to an
//! instance of a class holds it everywhere; passes repeat until no binding changes, then one
//! more pass records the uses.

mod classes;
mod special;
mod visit;

pub(super) use special::COMPUTED;

use super::keys::Search;
use super::{ConsumerUse, UseKind};
use crate::flow::Binder;
use crate::source::Lines;
use mooncake_sos_contract::signature::CallShape;
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
    /// What a `*` import binds, as far as api.toml knows: every symbol, and the native
    /// module's declared top-level names.
    pub symbols: Vec<&'a str>,
    pub native_names: Vec<&'a str>,
    /// Native callables declared with `dict_keys`, as `Class.method` paths, with the name of
    /// the dict's parameter (it may be passed by keyword).
    pub dict_members: BTreeMap<&'a str, Option<String>>,
}

pub(super) fn uses(body: &[Stmt], text: &str, names: &Names<'_>) -> Vec<ConsumerUse> {
    let mut walk = Walk {
        names,
        text,
        lines: Lines::new(text),
        bindings: HashMap::new(),
        scopes: vec![body],
        keys: Search::default(),
        subclasses: HashMap::new(),
        class: None,
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

use classes::Subclass;

struct Walk<'a, 'n> {
    names: &'n Names<'n>,
    text: &'a str,
    lines: Lines,
    bindings: HashMap<String, Val>,
    /// The bodies of the enclosing functions, the module's first.
    scopes: Vec<&'a [Stmt]>,
    /// The keys of the dicts passed to `dict_keys` callables, each name worked out once.
    keys: Search,
    /// The file's classes that derive from an API class: the API class, and what they
    /// define themselves (which is not the API's).
    subclasses: HashMap<String, Subclass>,
    /// The subclass whose body is being walked (`self` and `super()` in it).
    class: Option<String>,
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
                Some(origin) if name == "*" => {
                    if origin == Origin::Api {
                        self.push(self.line(alias), name.to_owned(), UseKind::Import);
                    }
                    let names = match origin {
                        Origin::Api => &self.names.symbols,
                        Origin::Native => &self.names.native_names,
                    };
                    for n in names.clone() {
                        self.bind(n.to_owned(), Val::Name(origin, n.to_owned()));
                    }
                }
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
        let (origin, mut class, on_class) = match base? {
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
        // A subclass's own member is not the API's; any other is its API class's.
        if let Some(sub) = self.subclasses.get(&class) {
            if sub.own.contains(attr) {
                return None;
            }
            class = sub.base.clone();
        }
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
            Expr::Named(n) => {
                let val = self.eval(&n.value);
                self.assign_to(&n.target, val.clone());
                val
            }
            // Flow-insensitive: either arm.
            Expr::If(i) => {
                self.eval(&i.test);
                let body = self.eval(&i.body);
                let orelse = self.eval(&i.orelse);
                body.or(orelse)
            }
            _ => {
                visitor::walk_expr(self, e);
                None
            }
        }
    }

    /// What `func` names when it is called: a member read for a call records no reference.
    fn callee(&mut self, func: &'a Expr, line: usize) -> Option<Val> {
        match func {
            Expr::Attribute(a) if dotted(func).is_none_or(|k| !self.bindings.contains_key(&k)) => {
                let base = self.eval(&a.value);
                self.member(base, &a.attr, line, true)
            }
            other => self.eval(other),
        }
    }

    fn call(&mut self, c: &'a ast::ExprCall) -> Option<Val> {
        let line = self.line(c);
        if let Some(made) = self.special_call(c, line) {
            return made;
        }
        let func = self.callee(&c.func, line);
        for a in &c.arguments.args {
            self.eval(a);
        }
        for k in &c.arguments.keywords {
            self.eval(&k.value);
        }
        if self.class.is_some()
            && matches!(&*c.func, Expr::Name(n) if n.id.as_str() == "super")
            && c.arguments.is_empty()
        {
            let sub = &self.subclasses[self.class.as_deref()?];
            return Some(Val::Instance(Origin::Api, sub.base.clone()));
        }
        match func? {
            Val::Name(Origin::Api, name) if self.subclasses.contains_key(&name) => {
                // Its own `__init__` takes what it likes; otherwise the API class's does.
                let sub = &self.subclasses[&name];
                if !sub.own.contains("__init__") {
                    let base = sub.base.clone();
                    let kind = self.call_use(c, false);
                    self.push(line, base, kind);
                }
                Some(Val::Instance(Origin::Api, name))
            }
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
            } if name == "__init__" => {
                // `super().__init__(...)`, `Class.__init__(self, ...)`: the constructor.
                let mut kind = self.call_use(c, false);
                if on_class {
                    kind.drop_first_positional();
                }
                self.push(line, class, kind);
                None
            }
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
                let dict = self
                    .names
                    .dict_members
                    .get(path.as_str())
                    .and_then(|param| {
                        c.arguments.args.first().or_else(|| {
                            let param = param.as_deref()?;
                            let by_name = c.arguments.keywords.iter();
                            by_name
                                .filter(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == param))
                                .map(|k| &k.value)
                                .next()
                        })
                    });
                // Only the recording pass needs the keys.
                if let Some(first) = dict.filter(|_| self.record) {
                    let keys = self.keys.of(first, &self.scopes);
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
        let passed = crate::surface::keyword_args(&args.keywords);
        let mut keywords: Vec<String> = passed
            .iter()
            .filter_map(|(name, _)| name.map(str::to_owned))
            .collect();
        keywords.sort();
        let literals = passed
            .iter()
            .filter_map(|(name, value)| Some(((*name)?.to_owned(), self.literal(value)?)))
            .collect::<BTreeMap<_, _>>();
        let positional_literals = args
            .args
            .iter()
            .take_while(|a| !a.is_starred_expr())
            .enumerate()
            .filter_map(|(i, a)| Some((i, self.literal(a)?)))
            .collect();
        UseKind::Call {
            shape: CallShape {
                positional: args.args.iter().filter(|a| !a.is_starred_expr()).count(),
                starred: args.args.iter().any(Expr::is_starred_expr),
                keywords,
                double_starred: passed.iter().any(|(name, _)| name.is_none()),
            },
            on_class,
            literals,
            positional_literals,
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
