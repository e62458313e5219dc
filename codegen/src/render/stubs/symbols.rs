//! The stub of the module itself (`mooncake.structured_object_store`): the symbols the
//! contract holds, each parameter with its annotation, its domain as a `Literal` and its
//! default as `...`; a parameter api.toml leaves unannotated that carries a native object
//! (`[upstream] native_roles`) is typed as that class.

use super::scope::{Binding, Scope, StubParam, anything, is_free_name, or_none, signature};
use super::{ClassStub, DefStub, HEADER, Item, ModuleStub};
use crate::render::python::str_literal;
use mooncake_sos_manifest::model::{Api, Param, ParamKind, SymbolKind, ValueType};
use mooncake_sos_manifest::signature::OverloadParamKind;
use std::collections::{BTreeMap, BTreeSet};

/// The classes and dataclasses of the contract, by name (what the stub defines).
pub fn classes(api: &Api) -> BTreeSet<String> {
    (api.symbols.iter())
        .filter(|s| {
            matches!(
                s.kind,
                SymbolKind::Class { .. } | SymbolKind::Dataclass { .. }
            )
        })
        .map(|s| s.name.clone())
        .filter(|n| is_free_name(n))
        .collect()
}

pub fn stub(api: &Api, known: &BTreeMap<String, BTreeSet<String>>) -> ModuleStub {
    let module = &api.upstream.module;
    let scope = Scope::new(module, known);
    let (mut classes, mut functions, mut aliases) = (Vec::new(), Vec::new(), Vec::new());
    for symbol in api.symbols.iter().filter(|s| is_free_name(&s.name)) {
        let name = symbol.name.clone();
        match &symbol.kind {
            SymbolKind::Dataclass { frozen, fields } => {
                let body = fields
                    .iter()
                    .map(|f| Item::Field {
                        name: f.name.clone(),
                        ty: param_type(f, api, &scope),
                        default: f.default.is_some(),
                    })
                    .collect();
                let decorator = if *frozen {
                    "@dataclass(frozen=True)"
                } else {
                    "@dataclass"
                };
                classes.push(ClassStub {
                    name,
                    decorator: Some(decorator),
                    body,
                });
            }
            SymbolKind::Class { init, methods } => {
                let mut body = vec![Item::Def(def(
                    "__init__",
                    init,
                    Binding::Method,
                    "None",
                    api,
                    &scope,
                ))];
                for m in methods {
                    let binding = if m.staticmethod {
                        Binding::Static
                    } else {
                        Binding::Method
                    };
                    let returns = returns(&m.returns);
                    body.push(Item::Def(def(
                        &m.name, &m.params, binding, returns, api, &scope,
                    )));
                }
                classes.push(ClassStub {
                    name,
                    decorator: None,
                    body,
                });
            }
            SymbolKind::Function { params, returns: r } => {
                functions.push(def(
                    &name,
                    params,
                    Binding::Function,
                    returns(r),
                    api,
                    &scope,
                ));
            }
            SymbolKind::Alias {
                target,
                params,
                returns: r,
            } => {
                let defined = if is_free_name(target) {
                    target.clone()
                } else {
                    name.clone()
                };
                functions.push(def(
                    &defined,
                    params,
                    Binding::Function,
                    returns(r),
                    api,
                    &scope,
                ));
                if defined != name {
                    aliases.push((name, defined));
                }
            }
        }
    }
    ModuleStub {
        header: HEADER,
        about: str_literal(&format!(
            "The contract's symbols of {module} (api.toml): their parameters, defaults and \
             domains."
        )),
        imports: scope.imports(),
        typed_dicts: Vec::new(),
        pybind11: false,
        classes,
        functions,
        values: Vec::new(),
        aliases,
    }
}

fn def(
    name: &str,
    params: &[Param],
    binding: Binding,
    returns: &str,
    api: &Api,
    scope: &Scope,
) -> DefStub {
    let params: Vec<StubParam> = params
        .iter()
        .map(|p| StubParam {
            name: p.name.clone(),
            kind: match p.kind {
                ParamKind::Positional => OverloadParamKind::Positional,
                ParamKind::KeywordOnly => OverloadParamKind::KeywordOnly,
            },
            ty: param_type(p, api, scope),
            default: p.default.is_some(),
        })
        .collect();
    let signature =
        signature(&params, binding, returns).unwrap_or_else(|| anything(binding, returns));
    DefStub {
        name: name.to_owned(),
        decorator: binding.decorator(),
        signatures: vec![signature],
    }
}

/// A parameter's type: its domain's `Literal`, its annotation, or the class of its native
/// role; `Any` when api.toml says nothing of it. A `None` default adds `| None`.
fn param_type(p: &Param, api: &Api, scope: &Scope) -> String {
    let role = api.surface.role(&p.name);
    let ty = match (&p.domain, &p.annotation) {
        (Some(domain), _) => {
            let values: Vec<String> = domain.iter().map(|v| str_literal(v)).collect();
            format!("Literal[{}]", values.join(", "))
        }
        (None, Some(annotation)) => scope.type_of(annotation),
        (None, None) if !role.is_empty() => {
            scope.type_of(&format!("{}.{role}", api.upstream.native_module))
        }
        (None, None) => "Any".to_owned(),
    };
    let none_default = matches!(
        &p.default,
        Some(mooncake_sos_manifest::model::DefaultValue::Expr(e))
            if e.literal == Some(mooncake_sos_manifest::model::PyLiteral::None)
    );
    if none_default { or_none(ty) } else { ty }
}

fn returns(value: &ValueType) -> &'static str {
    match value {
        ValueType::Str => "str",
        ValueType::Bool => "bool",
        ValueType::Int => "int",
        ValueType::Float => "float",
        ValueType::StrDict => "dict[str, Any]",
        ValueType::Nothing => "None",
        // What the module defines beyond the contract (its BundleStore protocol, its ref
        // class) the stub has no name for.
        ValueType::Store | ValueType::DataProtoRef | ValueType::Object => "Any",
    }
}
