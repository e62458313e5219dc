//! A consumer's uses against the symbols, signatures and dict keys api.toml declares.

use super::values::outside_domains;
use super::{ConsumerUse, UseKind};
use crate::surface::Finding;
use mooncake_sos_contract::model::{Api, Param, ParamKind, SymbolKind};
use mooncake_sos_contract::signature::{CallShape, declared_params, fits, misfit};

/// What a subject names in the manifest.
enum Declared<'a> {
    /// A callable with these parameters; `bound`: called through its class, `self` first.
    Callable {
        params: &'a [Param],
        static_method: bool,
    },
    /// A dataclass field, or a class's method read as a value.
    Value,
}

fn declared<'a>(api: &'a Api, subject: &str) -> Option<Declared<'a>> {
    let (head, member) = match subject.split_once('.') {
        Some((h, m)) => (h, Some(m)),
        None => (subject, None),
    };
    let symbol = api.symbols.iter().find(|s| s.name == head)?;
    let callable = |params, static_method| Declared::Callable {
        params,
        static_method,
    };
    match (&symbol.kind, member) {
        (SymbolKind::Function { params, .. } | SymbolKind::Alias { params, .. }, None) => {
            Some(callable(params, true))
        }
        (SymbolKind::Class { init, .. }, None) => Some(callable(init, true)),
        (SymbolKind::Dataclass { fields, .. }, None) => Some(callable(fields, true)),
        (SymbolKind::Class { methods, .. }, Some(m)) => methods
            .iter()
            .find(|x| x.name == m)
            .map(|x| callable(&x.params, x.staticmethod)),
        (SymbolKind::Dataclass { fields, .. }, Some(m)) => fields
            .iter()
            .any(|f| f.name == m)
            .then_some(Declared::Value),
        _ => None,
    }
}

/// Every use that api.toml does not declare, or whose call does not fit the declaration.
pub(super) fn api_failures(api: &Api, uses: &[ConsumerUse]) -> Vec<Finding> {
    let mut out = Vec::new();
    for u in uses {
        let finding = |what: &str, expected: String, found: String| Finding {
            line: Some(u.line),
            subject: u.subject.clone(),
            what: what.into(),
            expected,
            found,
        };
        if let UseKind::DictKeys { keys, .. } = &u.kind {
            let Some(member) = api.surface.members.iter().find(|m| m.object == u.subject) else {
                continue;
            };
            for k in keys.iter().filter(|k| !member.dict_keys.contains(k)) {
                out.push(Finding {
                    subject: format!("native {}", u.subject),
                    ..finding(
                        "dict key",
                        format!(
                            "one of the dict_keys api.toml declares ({})",
                            member.dict_keys.join(", ")
                        ),
                        format!("{k:?}"),
                    )
                });
            }
            continue;
        }
        match (declared(api, &u.subject), &u.kind) {
            // What `*` binds is known only at run time; the declared names it binds are
            // followed, so their calls are checked too.
            (None, _) if u.subject.ends_with(super::COMPUTED) => out.push(finding(
                "computed name",
                "a name written in the source, which api.toml can check".into(),
                "a name computed at run time".into(),
            )),
            (None, UseKind::Import) if u.subject == "*" => out.push(finding(
                "star import",
                "named imports (`from module import A, B`)".into(),
                "`import *`, whose names are known only at run time".into(),
            )),
            (None, _) => {
                let entry = if u.subject.contains('.') {
                    "a method of the [[symbol]] entry"
                } else {
                    "a [[symbol]] entry"
                };
                let found = match &u.kind {
                    UseKind::Import => "an import",
                    UseKind::Call { .. } => "a call",
                    _ => "a use",
                };
                out.push(finding("undeclared", entry.into(), found.into()));
            }
            (
                Some(Declared::Callable {
                    params,
                    static_method,
                }),
                UseKind::Call {
                    shape,
                    on_class,
                    literals,
                    positional_literals,
                },
            ) => {
                // A method called through its class takes the instance first.
                let through_class = *on_class && !static_method && shape.positional > 0;
                let skip = usize::from(through_class);
                for x in outside_domains(params, positional_literals, literals, skip) {
                    out.push(finding(&x.param, x.expected, x.found));
                }
                let shifted;
                let shape = if through_class {
                    shifted = CallShape {
                        positional: shape.positional - 1,
                        ..shape.clone()
                    };
                    &shifted
                } else {
                    shape
                };
                if let Err(why) = fits(&declared_params(params), shape) {
                    let (expected, found) = misfit(&signature(params), shape, &why);
                    out.push(finding("call", expected, found));
                }
            }
            (Some(Declared::Value), UseKind::Call { .. }) => {
                out.push(finding(
                    "call",
                    "a callable".into(),
                    "a call of a field".into(),
                ));
            }
            _ => {}
        }
    }
    out
}

fn signature(params: &[Param]) -> String {
    let mut out = Vec::new();
    let mut star = false;
    for p in params {
        if p.kind == ParamKind::KeywordOnly && !star {
            out.push("*".to_owned());
            star = true;
        }
        out.push(match &p.default {
            Some(_) => format!("{}=...", p.name),
            None => p.name.clone(),
        });
    }
    out.join(", ")
}
