//! The static check: every symbol, member, parameter and field the manifest declares,
//! against the facts extracted from the module.

use crate::default_expr::canonical_declared;
use crate::domain;
use crate::extract::{
    BindingKind, FoundDefault, FoundKind, FunctionFacts, ModuleFacts, ParamFacts,
};
use crate::report::{DomainFix, Items, Mismatch, Report, Severity};
use mooncake_sos_manifest::model::{Api, DefaultValue, Method, Param, ParamKind, SymbolKind};

struct Checker<'a> {
    facts: &'a ModuleFacts,
    items: Items,
    mismatches: Vec<Mismatch>,
    domain_fixes: Vec<DomainFix>,
}

/// Checks `facts` (from the module `display`) against every symbol `api` declares.
pub fn check(api: &Api, facts: &ModuleFacts, display: &str, sha256: &str) -> Report {
    let mut c = Checker {
        facts,
        items: Items::for_api(api),
        mismatches: Vec::new(),
        domain_fixes: Vec::new(),
    };
    for symbol in &api.symbols {
        c.symbol(&symbol.name, &symbol.kind);
    }
    Report {
        file: display.to_owned(),
        sha256: sha256.to_owned(),
        items: c.items,
        mismatches: c.mismatches,
        domain_fixes: c.domain_fixes,
    }
}

fn declared_kind(kind: ParamKind) -> &'static str {
    match kind {
        ParamKind::Positional => "positional",
        ParamKind::KeywordOnly => "keyword-only",
    }
}

fn declared_default(d: &Option<DefaultValue>) -> String {
    match d {
        None => "no default".into(),
        Some(DefaultValue::Expr(e)) => e.text.clone(),
        Some(DefaultValue::Factory(f)) => format!("field(default_factory={f})"),
    }
}

fn found_default(d: &Option<FoundDefault>) -> String {
    d.as_ref().map_or("no default".into(), |d| d.text.clone())
}

fn defaults_match(declared: &Option<DefaultValue>, found: &Option<FoundDefault>) -> bool {
    match (declared, found) {
        (None, None) => true,
        (Some(DefaultValue::Expr(e)), Some(f)) => {
            f.factory.is_none() && canonical_declared(&e.text) == f.canonical
        }
        (Some(DefaultValue::Factory(want)), Some(f)) => {
            f.factory.as_deref() == Some(canonical_declared(want).as_str())
        }
        _ => false,
    }
}

impl Checker<'_> {
    /// Records a mismatch on `item`; the report names it by the item's symbol or member
    /// (`Sym.put(type)` is reported as `Sym.put`, the parameter being in `what`).
    fn miss(
        &mut self,
        item: &str,
        severity: Severity,
        line: usize,
        what: &str,
        diff: (impl Into<String>, impl Into<String>),
    ) {
        let subject = item.split_once('(').map_or(item, |(member, _)| member);
        self.mismatches.push(Mismatch {
            item: self.items.index(item),
            severity,
            line,
            subject: subject.to_owned(),
            what: what.to_owned(),
            expected: diff.0.into(),
            found: diff.1.into(),
        });
    }

    fn symbol(&mut self, name: &str, kind: &SymbolKind) {
        let expected = match kind {
            SymbolKind::Alias { target, .. } => format!("alias of {target}"),
            other => other.as_str().to_owned(),
        };
        let Some(binding) = self.facts.bindings.get(name) else {
            self.miss(name, Severity::Missing, 1, "missing", (expected, "nothing"));
            return;
        };
        let line = binding.line;
        let wrong_kind = |c: &mut Self| {
            let found = binding.kind.describe();
            c.miss(name, Severity::Blocked, line, "kind", (&expected, found));
        };
        match (kind, &binding.kind) {
            (SymbolKind::Dataclass { frozen, fields }, BindingKind::Class(class))
                if class.dataclass.is_some() =>
            {
                let found_frozen = class.dataclass == Some(true);
                if *frozen != found_frozen {
                    let show = |b: bool| if b { "True" } else { "False" };
                    let (want, got) = (show(*frozen), show(found_frozen));
                    self.miss(name, Severity::Differs, line, "frozen", (want, got));
                }
                self.fields(name, line, fields, &class.fields);
            }
            (SymbolKind::Class { init, methods }, BindingKind::Class(class)) => {
                let label = format!("{name}.__init__");
                match class.methods.get("__init__") {
                    Some(f) => self.params(&label, f, init, true),
                    None if class.dataclass.is_some() => {
                        // A dataclass's generated __init__ takes its fields in order.
                        let generated = FunctionFacts {
                            line,
                            staticmethod: false,
                            classmethod: false,
                            params: class.fields.clone(),
                        };
                        self.params(&label, &generated, init, false)
                    }
                    None => self.miss(
                        &label,
                        Severity::Missing,
                        line,
                        "missing",
                        ("method", "nothing"),
                    ),
                }
                for method in methods {
                    self.method(name, line, method, class.methods.get(&method.name));
                }
            }
            (SymbolKind::Function { params, .. }, BindingKind::Function(f)) => {
                self.params(name, f, params, false)
            }
            (SymbolKind::Function { params, .. }, BindingKind::Alias(target)) => {
                match self.facts.bindings.get(target).map(|b| &b.kind) {
                    Some(BindingKind::Function(f)) => self.params(name, f, params, false),
                    _ => wrong_kind(self),
                }
            }
            (SymbolKind::Alias { target, params, .. }, BindingKind::Alias(found)) => {
                if found != target {
                    self.miss(
                        name,
                        Severity::Differs,
                        line,
                        "alias target",
                        (target, found),
                    );
                }
                match self.facts.bindings.get(found) {
                    Some(b) => match &b.kind {
                        BindingKind::Function(f) => self.params(name, f, params, false),
                        other => {
                            let what = format!("alias target {found}");
                            self.miss(
                                name,
                                Severity::Blocked,
                                b.line,
                                &what,
                                ("function", other.describe()),
                            );
                        }
                    },
                    None => {
                        let what = format!("alias target {found}");
                        self.miss(
                            name,
                            Severity::Blocked,
                            line,
                            &what,
                            ("function", "nothing"),
                        );
                    }
                }
            }
            _ => wrong_kind(self),
        }
    }

    fn method(
        &mut self,
        class: &str,
        class_line: usize,
        m: &Method,
        found: Option<&FunctionFacts>,
    ) {
        let label = format!("{class}.{}", m.name);
        let Some(f) = found else {
            let want = if m.staticmethod {
                "staticmethod"
            } else {
                "method"
            };
            self.miss(
                &label,
                Severity::Missing,
                class_line,
                "missing",
                (want, "nothing"),
            );
            return;
        };
        if m.staticmethod != f.staticmethod {
            let describe = |s: bool| if s { "staticmethod" } else { "instance method" };
            let got = if f.classmethod {
                "classmethod"
            } else {
                describe(f.staticmethod)
            };
            let want = describe(m.staticmethod);
            self.miss(
                &label,
                Severity::Blocked,
                f.line,
                "staticmethod",
                (want, got),
            );
            return;
        }
        self.params(&label, f, &m.params, !f.staticmethod);
    }

    /// The declared domain against the one the module gives, located where the module's comes
    /// from (its `Literal`, its dispatch), else at the parameter.
    /// `owner` is what declares the parameter: `Sym`, `Sym.__init__`, `Sym.method`.
    fn domain(&mut self, owner: &str, what: &str, want: &Param, found: &ParamFacts) {
        let have = found.domain.as_ref().map(|d| d.values.as_slice());
        if let Some(diff) = domain::difference(want.domain.as_deref(), have) {
            let line = found.domain.as_ref().map_or(found.line, |d| d.line);
            let item = match what {
                "domain" => format!("{owner}.{}", want.name),
                _ => format!("{owner}({})", want.name),
            };
            self.miss(&item, Severity::Differs, line, what, diff);
            self.domain_fixes.push(DomainFix {
                owner: owner.to_owned(),
                param: want.name.clone(),
                found: have.map(<[String]>::to_vec),
                spans: found
                    .domain
                    .as_ref()
                    .map(|d| d.spans.clone())
                    .unwrap_or_default(),
            });
        }
    }

    /// Dataclass fields: presence, default / default_factory, undeclared required ones.
    fn fields(&mut self, class: &str, class_line: usize, declared: &[Param], found: &[ParamFacts]) {
        for want in declared {
            let label = format!("{class}.{}", want.name);
            match found.iter().find(|f| f.name == want.name) {
                None => self.miss(
                    &label,
                    Severity::Missing,
                    class_line,
                    "missing",
                    ("field", "nothing"),
                ),
                Some(f) => {
                    if !defaults_match(&want.default, &f.default) {
                        let (e, g) = (declared_default(&want.default), found_default(&f.default));
                        self.miss(&label, Severity::Differs, f.line, "default", (e, g));
                    }
                    self.domain(class, "domain", want, f);
                }
            }
        }
        for f in found {
            if f.default.is_none() && !declared.iter().any(|d| d.name == f.name) {
                let got = format!("field {}", f.name);
                self.miss(
                    class,
                    Severity::Differs,
                    f.line,
                    "undeclared required field",
                    ("none", got),
                );
            }
        }
    }

    /// Parameters of a function or method (`skip_first`: drop `self` / `cls`).
    fn params(&mut self, label: &str, f: &FunctionFacts, declared: &[Param], skip_first: bool) {
        let found = &f.params[usize::from(skip_first && !f.params.is_empty())..];
        let positional: Vec<&str> = found
            .iter()
            .filter(|p| matches!(p.kind, FoundKind::Positional | FoundKind::PositionalOnly))
            .map(|p| p.name.as_str())
            .collect();
        let mut declared_position = 0;
        for want in declared {
            let item = format!("{label}({})", want.name);
            let what = |detail: &str| format!("parameter '{}'{detail}", want.name);
            let want_kind = declared_kind(want.kind);
            let Some(p) = found.iter().find(|p| {
                p.name == want.name
                    && !matches!(p.kind, FoundKind::VarPositional | FoundKind::VarKeyword)
            }) else {
                self.miss(
                    &item,
                    Severity::Missing,
                    f.line,
                    &what(""),
                    (want_kind, "nothing"),
                );
                continue;
            };
            let expected_kind = match want.kind {
                ParamKind::Positional => FoundKind::Positional,
                ParamKind::KeywordOnly => FoundKind::KeywordOnly,
            };
            if p.kind != expected_kind {
                self.miss(
                    &item,
                    Severity::Differs,
                    p.line,
                    &what(" kind"),
                    (want_kind, p.kind.as_str()),
                );
            } else if want.kind == ParamKind::Positional {
                // Callers pass positional parameters by position: the order is contract too.
                let at = positional.iter().position(|n| *n == want.name).unwrap_or(0);
                if at != declared_position {
                    let (e, g) = ((declared_position + 1).to_string(), (at + 1).to_string());
                    self.miss(&item, Severity::Differs, p.line, &what(" position"), (e, g));
                }
            }
            if want.kind == ParamKind::Positional {
                declared_position += 1;
            }
            if !defaults_match(&want.default, &p.default) {
                let (e, g) = (declared_default(&want.default), found_default(&p.default));
                self.miss(&item, Severity::Differs, p.line, &what(" default"), (e, g));
            }
            self.domain(label, &what(" domain"), want, p);
        }
        for p in found {
            let variadic = matches!(p.kind, FoundKind::VarPositional | FoundKind::VarKeyword);
            if !variadic && p.default.is_none() && !declared.iter().any(|d| d.name == p.name) {
                let got = format!("{} {}", p.kind.as_str(), p.name);
                self.miss(
                    label,
                    Severity::Differs,
                    p.line,
                    "undeclared required parameter",
                    ("none", got),
                );
            }
        }
    }
}
