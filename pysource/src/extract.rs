//! Parses a module with ruff's parser and keeps what the check needs: the module-level
//! bindings (classes, functions, `name = other` aliases), their methods, parameters, dataclass
//! fields and defaults, each with its line.

use crate::default_expr::canonical;
use crate::domain::literal_domain;
pub use crate::facts::*;
use crate::source::Lines;
use crate::source::{LoadError, ModuleSource};
use ruff_python_ast::{self as ast, Expr, Stmt};
use ruff_text_size::Ranged;
use std::collections::HashMap;

struct Extractor<'s> {
    text: &'s str,
    lines: Lines,
}

/// Parses `source` (nesting bounded, on a big stack: [`crate::bounded_parse`]); a syntax error or
/// a module nested too deeply is a located [`LoadError`].
pub fn extract(source: &ModuleSource) -> Result<ModuleFacts, LoadError> {
    crate::bounded_parse::with_parsed(source, |parsed| facts(parsed.suite(), source))
}

/// The facts of a module already parsed.
pub(crate) fn facts(body: &[Stmt], source: &ModuleSource) -> ModuleFacts {
    let ex = Extractor {
        text: &source.text,
        lines: Lines::new(&source.text),
    };
    let mut facts = ModuleFacts::default();
    ex.suite(body, &mut facts);
    crate::domain::attach_dispatched(body, &ex.lines, &mut facts);
    facts
}

impl Extractor<'_> {
    fn line(&self, node: &impl Ranged) -> usize {
        self.lines.line(node.start())
    }

    fn source(&self, node: &impl Ranged) -> &str {
        &self.text[node.range()]
    }

    /// Module level, including both arms of top-level `if`/`try` (e.g. optional imports).
    fn suite(&self, body: &[Stmt], facts: &mut ModuleFacts) {
        for stmt in body {
            let mut bind = |name: &str, line: usize, kind: BindingKind| {
                facts
                    .bindings
                    .insert(name.to_owned(), Binding { line, kind });
            };
            match stmt {
                Stmt::ClassDef(c) => bind(&c.name, self.line(&c.name), self.class(c)),
                Stmt::FunctionDef(f) => bind(
                    &f.name,
                    self.line(&f.name),
                    BindingKind::Function(self.function(f)),
                ),
                Stmt::Assign(a) => {
                    let kind = || match &*a.value {
                        Expr::Name(n) => BindingKind::Alias(n.id.to_string()),
                        other => BindingKind::Value(self.source(other).to_owned()),
                    };
                    for target in &a.targets {
                        if let Expr::Name(n) = target {
                            bind(&n.id, self.line(n), kind());
                        }
                    }
                }
                Stmt::AnnAssign(a) => {
                    if let (Expr::Name(n), Some(v)) = (&*a.target, &a.value) {
                        bind(
                            &n.id,
                            self.line(n),
                            BindingKind::Value(self.source(&**v).into()),
                        );
                    }
                }
                Stmt::Import(i) => {
                    for alias in &i.names {
                        let name = alias.asname.as_ref().unwrap_or(&alias.name);
                        let first = name.split('.').next().unwrap_or(name);
                        bind(first, self.line(alias), BindingKind::Import);
                    }
                }
                Stmt::ImportFrom(i) => {
                    for alias in &i.names {
                        let name = alias.asname.as_ref().unwrap_or(&alias.name);
                        bind(name, self.line(alias), BindingKind::Import);
                    }
                }
                Stmt::If(s) => {
                    self.suite(&s.body, facts);
                    for clause in &s.elif_else_clauses {
                        self.suite(&clause.body, facts);
                    }
                }
                Stmt::Try(t) => {
                    self.suite(&t.body, facts);
                    for ast::ExceptHandler::ExceptHandler(h) in &t.handlers {
                        self.suite(&h.body, facts);
                    }
                    self.suite(&t.orelse, facts);
                    self.suite(&t.finalbody, facts);
                }
                _ => {}
            }
        }
    }

    fn class(&self, c: &ast::StmtClassDef) -> BindingKind {
        let dataclass = c
            .decorator_list
            .iter()
            .find_map(|d| dataclass_frozen(&d.expression));
        let mut class = ClassFacts {
            dataclass,
            fields: Vec::new(),
            methods: HashMap::new(),
        };
        for stmt in &c.body {
            match stmt {
                Stmt::FunctionDef(f) => {
                    class.methods.insert(f.name.to_string(), self.function(f));
                }
                Stmt::AnnAssign(a) if dataclass.is_some() => {
                    if let Some(field) = self.field(a) {
                        class.fields.push(field);
                    }
                }
                _ => {}
            }
        }
        BindingKind::Class(class)
    }

    /// A dataclass field, unless it is a `ClassVar` or has `init=False`.
    fn field(&self, a: &ast::StmtAnnAssign) -> Option<ParamFacts> {
        let Expr::Name(name) = &*a.target else {
            return None;
        };
        if dotted(&a.annotation).is_some_and(|n| n == "ClassVar" || n == "typing.ClassVar")
            || matches!(&*a.annotation, Expr::Subscript(s)
                if dotted(&s.value).is_some_and(|n| n.ends_with("ClassVar")))
        {
            return None;
        }
        let mut default = a.value.as_deref().map(|v| self.default(v));
        if let Some(Expr::Call(call)) = a.value.as_deref()
            && dotted(&call.func).is_some_and(|n| n == "field" || n == "dataclasses.field")
        {
            default = None;
            for kw in &call.arguments.keywords {
                match kw.arg.as_ref().map(|a| a.as_str()) {
                    Some("init") if matches!(kw.value, Expr::BooleanLiteral(ref b) if !b.value) => {
                        return None;
                    }
                    Some("default") => default = Some(self.default(&kw.value)),
                    Some("default_factory") => {
                        let mut d = self.default(call_as_expr(a));
                        d.factory = Some(canonical(&kw.value));
                        default = Some(d);
                    }
                    _ => {}
                }
            }
        }
        let line = self.line(name);
        Some(ParamFacts {
            name: name.id.to_string(),
            line,
            kind: FoundKind::Positional,
            default,
            domain: literal_domain(&a.annotation, line),
        })
    }

    fn default(&self, expr: &Expr) -> FoundDefault {
        FoundDefault {
            text: self.source(expr).to_owned(),
            canonical: canonical(expr),
            factory: None,
        }
    }

    fn function(&self, f: &ast::StmtFunctionDef) -> FunctionFacts {
        let decorated = |want: &str| {
            f.decorator_list
                .iter()
                .any(|d| dotted(&d.expression).is_some_and(|n| n == want))
        };
        let p = &f.parameters;
        let mut params = Vec::new();
        let mut push = |pd: &ast::ParameterWithDefault, kind| {
            let line = self.line(&pd.parameter);
            let annotation = pd.parameter.annotation.as_deref();
            params.push(ParamFacts {
                name: pd.parameter.name.to_string(),
                line,
                kind,
                default: pd.default.as_deref().map(|d| self.default(d)),
                domain: annotation.and_then(|a| literal_domain(a, line)),
            })
        };
        p.posonlyargs
            .iter()
            .for_each(|a| push(a, FoundKind::PositionalOnly));
        p.args.iter().for_each(|a| push(a, FoundKind::Positional));
        p.kwonlyargs
            .iter()
            .for_each(|a| push(a, FoundKind::KeywordOnly));
        for (var, kind) in [
            (&p.vararg, FoundKind::VarPositional),
            (&p.kwarg, FoundKind::VarKeyword),
        ] {
            if let Some(v) = var {
                params.push(ParamFacts {
                    name: v.name.to_string(),
                    line: self.line(&**v),
                    kind,
                    default: None,
                    domain: None,
                });
            }
        }
        FunctionFacts {
            line: self.line(&f.name),
            staticmethod: decorated("staticmethod"),
            classmethod: decorated("classmethod"),
            params,
        }
    }
}

/// The whole `field(...)` call, so a factory default reports the text as written.
fn call_as_expr(a: &ast::StmtAnnAssign) -> &Expr {
    a.value.as_deref().unwrap_or(&a.annotation)
}

/// `Some(frozen)` for `dataclass`, `dataclass(...)`, `dataclasses.dataclass(...)`.
fn dataclass_frozen(expr: &Expr) -> Option<bool> {
    let (func, keywords) = match expr {
        Expr::Call(c) => (&*c.func, &c.arguments.keywords[..]),
        other => (other, &[][..]),
    };
    let name = dotted(func)?;
    if name != "dataclass" && name != "dataclasses.dataclass" {
        return None;
    }
    let frozen = keywords.iter().any(|k| {
        k.arg.as_ref().is_some_and(|a| a.as_str() == "frozen")
            && matches!(k.value, Expr::BooleanLiteral(ref b) if b.value)
    });
    Some(frozen)
}

/// `a.b.c` for a name or attribute chain.
fn dotted(expr: &Expr) -> Option<String> {
    match expr {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr)),
        _ => None,
    }
}
