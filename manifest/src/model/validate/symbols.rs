//! Symbols, methods and parameters, with Python's own ordering rules.

use super::Name;
use super::Validator;
use crate::model::names;
use crate::model::python;
use crate::model::values::*;
use crate::model::*;
use crate::parse::{RawParam, RawSymbol, S};
use mooncake_sos_support::diag::Diagnostic;
use std::collections::BTreeSet;

impl Validator<'_> {
    pub(super) fn symbols(&mut self, raw: &[S<RawSymbol>]) -> Vec<Symbol> {
        let mut seen = BTreeSet::new();
        let mut out = Vec::new();
        for s in raw {
            let name = self.unique_name(&s.get_ref().name, Name::Python, "symbol", &mut seen);
            // Classes and dataclasses become Rust types; functions and aliases functions.
            let problem = match s.get_ref().kind.get_ref().as_str() {
                "class" | "dataclass" => names::rust_type_name_problem(&name),
                _ => names::rust_value_name_problem(&name),
            };
            if let Some(problem) = problem {
                self.error(&s.get_ref().name, problem);
            }
            if let Some(kind) = self.symbol_kind(s) {
                out.push(Symbol { name, kind });
            }
        }
        if out.is_empty() && raw.is_empty() {
            self.diags.push(Diagnostic::new(
                self.source,
                0..0,
                "the manifest declares no [[symbol]]",
            ));
        }
        out
    }

    fn symbol_kind(&mut self, s: &S<RawSymbol>) -> Option<SymbolKind> {
        let r = s.get_ref();
        let kind = r.kind.get_ref().as_str();
        // Keys that do not belong to this kind are errors, not silently ignored.
        let allowed: &[&str] = match kind {
            "dataclass" => &["frozen", "fields"],
            "class" => &["init", "method"],
            "function" => &["params", "returns"],
            "alias" => &["target", "params", "returns"],
            _ => {
                self.error(
                    &r.kind,
                    format!(
                        "unknown symbol kind {kind:?}: expected dataclass, class, function or alias"
                    ),
                );
                return None;
            }
        };
        let present = [
            ("frozen", r.frozen.as_ref().map(|x| x.span())),
            ("fields", r.fields.as_ref().map(|x| x.span())),
            ("init", r.init.as_ref().map(|x| x.span())),
            ("method", r.method.first().map(|x| x.span())),
            ("target", r.target.as_ref().map(|x| x.span())),
            ("params", r.params.as_ref().map(|x| x.span())),
            ("returns", r.returns.as_ref().map(|x| x.span())),
        ];
        for (key, span) in present {
            if let Some(span) = span.filter(|_| !allowed.contains(&key)) {
                let msg = format!("`{key}` does not apply to a {kind} symbol");
                self.diags.push(Diagnostic::new(self.source, span, msg));
            }
        }
        let params = |v: &mut Self, p: &Option<S<Vec<S<RawParam>>>>, fields: bool| {
            p.as_ref()
                .map(|p| v.params(p.get_ref(), fields))
                .unwrap_or_default()
        };
        Some(match kind {
            "dataclass" => SymbolKind::Dataclass {
                frozen: r.frozen.as_ref().is_some_and(|f| *f.get_ref()),
                fields: params(self, &r.fields, true),
            },
            "class" => {
                let mut seen_methods = BTreeSet::new();
                let methods = r
                    .method
                    .iter()
                    .map(|m| {
                        let m = m.get_ref();
                        let name = self.rust_value_name(&m.name, "method", &mut seen_methods);
                        Method {
                            name,
                            staticmethod: m.staticmethod.as_ref().is_some_and(|s| *s.get_ref()),
                            params: self.params(&m.params, false),
                            returns: self.value_type(m.returns.as_ref()),
                        }
                    })
                    .collect();
                SymbolKind::Class {
                    init: params(self, &r.init, false),
                    methods,
                }
            }
            "function" => SymbolKind::Function {
                params: params(self, &r.params, false),
                returns: self.value_type(r.returns.as_ref()),
            },
            _ => {
                let target = match &r.target {
                    Some(t) => self.text(
                        t,
                        is_python_identifier,
                        "alias target (a Python identifier)",
                    ),
                    None => {
                        self.error(&r.name, "an alias needs `target`, the name it points to");
                        String::new()
                    }
                };
                SymbolKind::Alias {
                    target,
                    params: params(self, &r.params, false),
                    returns: self.value_type(r.returns.as_ref()),
                }
            }
        })
    }

    /// A unique Python name that also becomes a Rust value name (a method, a parameter).
    fn rust_value_name(
        &mut self,
        value: &S<String>,
        what: &str,
        seen: &mut BTreeSet<String>,
    ) -> String {
        let name = self.unique_name(value, Name::Python, what, seen);
        if let Some(problem) = names::rust_value_name_problem(&name) {
            self.error(value, problem);
        }
        name
    }

    /// Parameters (or dataclass fields) in order, with Python's own ordering rules.
    fn params(&mut self, raw: &[S<RawParam>], fields: bool) -> Vec<Param> {
        let mut seen = BTreeSet::new();
        let (mut saw_default, mut saw_keyword) = (false, false);
        let mut out = Vec::new();
        for p in raw {
            let r = p.get_ref();
            let name = self.rust_value_name(&r.name, "parameter", &mut seen);
            let kind = match r.kind.as_ref().map(|k| k.get_ref().as_str()) {
                None | Some("positional") => ParamKind::Positional,
                Some("keyword") if !fields => ParamKind::KeywordOnly,
                Some(other) => {
                    let kinds = if fields {
                        "positional"
                    } else {
                        "positional or keyword"
                    };
                    self.error(
                        r.kind.as_ref().expect("matched Some"),
                        format!("unknown parameter kind {other:?}: expected {kinds}"),
                    );
                    ParamKind::Positional
                }
            };
            let default = match (&r.default, &r.default_factory) {
                (Some(d), None) => match python::parse_expr(d.get_ref()) {
                    Ok(e) => Some(DefaultValue::Expr(e)),
                    Err(why) => {
                        self.error(d, format!("invalid default {:?}: {why}", d.get_ref()));
                        None
                    }
                },
                (None, Some(f)) if fields => Some(DefaultValue::Factory(self.text(
                    f,
                    is_dotted_name,
                    "default_factory (a dotted Python name)",
                ))),
                (None, Some(f)) => {
                    self.error(f, "default_factory applies to dataclass fields only");
                    None
                }
                (Some(d), Some(_)) => {
                    self.error(d, "give either default or default_factory, not both");
                    None
                }
                (None, None) => None,
            };
            if kind == ParamKind::Positional {
                if saw_keyword {
                    self.error(
                        &r.name,
                        format!("positional parameter `{name}` after a keyword-only one"),
                    );
                } else if saw_default && default.is_none() {
                    self.error(
                        &r.name,
                        format!("parameter `{name}` without a default follows one with a default"),
                    );
                }
                saw_default |= default.is_some();
            } else {
                saw_keyword = true;
            }
            if fields {
                self.dataclass_field_binding(r, &default);
            }
            let domain = r.domain.as_ref().map(|d| self.domain(d, r, &default));
            let by_keyword = kind == ParamKind::KeywordOnly || default.is_some();
            let rust = r
                .rust
                .as_ref()
                .and_then(|t| self.rust_type(t, by_keyword && !fields));
            let annotation = r.annotation.as_ref().map(|a| a.get_ref().clone());
            out.push(Param {
                name,
                kind,
                value_type: self.value_type(r.annotation.as_ref()),
                annotation,
                default,
                domain,
                rust,
            });
        }
        out
    }

    /// A parameter's `domain`: at least one value, each once, holding a literal default.
    fn domain(
        &mut self,
        raw: &S<Vec<S<String>>>,
        param: &RawParam,
        default: &Option<DefaultValue>,
    ) -> Vec<String> {
        if raw.get_ref().is_empty() {
            self.error(
                raw,
                "an empty domain: list the values the module accepts, or leave `domain` out",
            );
        }
        let mut values: Vec<String> = Vec::new();
        for v in raw.get_ref() {
            if values.contains(v.get_ref()) {
                self.error(v, format!("duplicate domain value {:?}", v.get_ref()));
            } else {
                values.push(v.get_ref().clone());
            }
        }
        if let (Some(DefaultValue::Expr(e)), Some(at)) = (default, &param.default) {
            let inside = match &e.literal {
                Some(PyLiteral::Str(s)) => values.contains(s),
                // `None` stands for "not given"; another literal is no string of the domain.
                Some(PyLiteral::None) | None => true,
                Some(_) => false,
            };
            if !inside {
                self.error(
                    at,
                    format!("default {} is not in the parameter's domain", e.text),
                );
            }
        }
        values
    }

    /// A dataclass field becomes a Rust struct field: its type and default need a Rust form
    /// (the bindings renderer's field types and default values accept exactly these).
    fn dataclass_field_binding(&mut self, r: &RawParam, default: &Option<DefaultValue>) {
        if let Some(a) = &r.annotation {
            // `Any` is an object the bindings carry as JSON; other objects have no Rust form.
            let bound = match python::value_type(Some(a.get_ref())) {
                Ok(ValueType::Str | ValueType::Bool | ValueType::Int | ValueType::Float) => true,
                Ok(ValueType::StrDict) => true,
                Ok(ValueType::Object) => a.get_ref().trim() == "Any",
                _ => false,
            };
            if !bound {
                self.error(
                    a,
                    format!(
                        "dataclass field type {:?} has no Rust binding: expected str, bool, \
                         int, float, Any or dict[str, ...]",
                        a.get_ref()
                    ),
                );
            }
        }
        match (default, &r.default, &r.default_factory) {
            (Some(DefaultValue::Expr(e)), Some(d), _)
                if !matches!(
                    e.literal,
                    Some(PyLiteral::Bool(_) | PyLiteral::Int(_) | PyLiteral::Str(_))
                ) =>
            {
                self.error(
                    d,
                    format!(
                        "dataclass field default {:?} has no Rust value: expected True, \
                         False, an integer or a string",
                        e.text
                    ),
                );
            }
            (Some(DefaultValue::Factory(f)), _, Some(raw)) if f != "dict" => {
                self.error(
                    raw,
                    format!("dataclass default_factory {f:?}: expected \"dict\""),
                );
            }
            _ => {}
        }
    }

    /// The type an annotation (`type` or `returns`) names; a located error when it is not a
    /// Python expression.
    fn value_type(&mut self, annotation: Option<&S<String>>) -> ValueType {
        let Some(a) = annotation else {
            return ValueType::Object;
        };
        python::value_type(Some(a.get_ref())).unwrap_or_else(|why| {
            self.error(a, format!("invalid annotation {:?}: {why}", a.get_ref()));
            ValueType::Object
        })
    }

    /// `optional`: the parameter can be left out and passed by keyword, so it can be an
    /// `Option` field of the option struct.
    fn rust_type(&mut self, t: &S<String>, optional: bool) -> Option<RustType> {
        let found = RustType::ALL
            .iter()
            .find(|(n, _)| n == t.get_ref())
            .map(|(_, ty)| *ty);
        match found {
            None => {
                let names: Vec<_> = RustType::ALL.iter().map(|(n, _)| *n).collect();
                self.error(
                    t,
                    format!(
                        "unknown rust type {:?}: expected one of {}",
                        t.get_ref(),
                        names.join(", ")
                    ),
                );
                None
            }
            Some(_) if !optional => {
                self.error(
                    t,
                    "`rust` applies to parameters with a default or keyword-only ones, not to \
                     dataclass fields: they form the option struct",
                );
                None
            }
            some => some,
        }
    }
}
