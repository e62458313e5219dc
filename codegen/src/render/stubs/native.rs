//! The stubs of the native modules the contract uses (the core, `mooncake.store`, and the
//! other extension modules `[[native]]` names, `mooncake.engine`): what every image's core
//! has, typed from its pybind11 docstrings, with the contract's facts on top (the keys of the
//! setup dict). A member whose images disagree is written as what they all take.

use super::cores::Cores;
use super::scope::{Binding, Scope, anything, docstring_signatures, is_free_name, is_member_name};
use super::{ClassStub, DefStub, HEADER, Item, ModuleStub, TypedDictStub};
use crate::render::python::str_literal;
use heck::ToUpperCamelCase;
use mooncake_sos_manifest::core_record::{Function, Member, NamespaceRef, Value};
use mooncake_sos_manifest::model::Api;
use mooncake_sos_manifest::model::native::MemberKind;
use std::collections::{BTreeMap, BTreeSet};

/// The extension modules to write stubs of, in order: the core first, then each other module
/// `[[native]]` names, as first named.
pub fn modules(api: &Api) -> Vec<String> {
    let mut out = vec![api.upstream.native_module.clone()];
    for m in &api.surface.members {
        if let Some(module) = &m.module
            && !out.contains(module)
        {
            out.push(module.clone());
        }
    }
    out
}

/// A member as every image has it.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Common {
    Callable {
        binding: Binding,
        /// The overloads every image has (none: no constructor, for `__init__`); `None` when
        /// the images have different ones.
        overloads: Option<Vec<String>>,
    },
    Property {
        readonly: bool,
    },
    Value {
        r#type: String,
    },
    /// A nested class, or a member the images have as different things.
    Opaque,
}

fn callable(binding: Binding, overloads: &[String]) -> Common {
    Common::Callable {
        binding,
        overloads: Some(overloads.to_vec()),
    }
}

fn common(member: &Member) -> Common {
    match member {
        Member::Method { overloads } => callable(Binding::Method, overloads),
        Member::Staticmethod { overloads } => callable(Binding::Static, overloads),
        Member::Classmethod { overloads } => callable(Binding::Class, overloads),
        Member::Property { readonly } => Common::Property {
            readonly: *readonly,
        },
        Member::Value { r#type } => Common::Value {
            r#type: r#type.clone(),
        },
        Member::Class => Common::Opaque,
    }
}

fn both(a: Common, b: Common) -> Common {
    match (a, b) {
        (
            Common::Callable {
                binding,
                overloads: mine,
            },
            Common::Callable {
                binding: theirs,
                overloads,
            },
        ) if binding == theirs => {
            let overloads = mine.zip(overloads).and_then(|(mine, theirs)| {
                let shared: Vec<String> = (mine.iter())
                    .filter(|o| theirs.contains(o))
                    .cloned()
                    .collect();
                let none_of_them = mine.is_empty() && theirs.is_empty();
                (!shared.is_empty() || none_of_them).then_some(shared)
            });
            Common::Callable { binding, overloads }
        }
        (Common::Property { readonly }, Common::Property { readonly: theirs }) => {
            Common::Property {
                readonly: readonly || theirs,
            }
        }
        (a, b) if a == b => a,
        _ => Common::Opaque,
    }
}

/// What every one of `readings` has: classes (with their common members), functions, values
/// (their type where all agree, else `None`).
struct Shared {
    classes: BTreeMap<String, BTreeMap<String, Common>>,
    functions: BTreeMap<String, Common>,
    values: BTreeMap<String, Option<Value>>,
}

fn shared(readings: &[NamespaceRef<'_>]) -> Shared {
    let (first, rest) = readings.split_first().expect("a module with a reading");
    let mut classes = BTreeMap::new();
    for (name, class) in first.classes {
        let others: Option<Vec<_>> = rest.iter().map(|r| r.classes.get(name)).collect();
        let Some(others) = others else { continue };
        let mut members = BTreeMap::new();
        for (m, member) in &class.members {
            let theirs: Option<Vec<_>> = others.iter().map(|c| c.members.get(m)).collect();
            if let Some(theirs) = theirs {
                let merged = theirs.into_iter().map(common).fold(common(member), both);
                members.insert(m.clone(), merged);
            }
        }
        classes.insert(name.clone(), members);
    }
    let mut functions = BTreeMap::new();
    for (name, f) in first.functions {
        let others: Option<Vec<_>> = rest.iter().map(|r| r.functions.get(name)).collect();
        if let Some(others) = others {
            let function = |f: &Function| callable(Binding::Function, &f.overloads);
            let merged = others.into_iter().map(function).fold(function(f), both);
            functions.insert(name.clone(), merged);
        }
    }
    let mut values = BTreeMap::new();
    for (name, v) in first.values {
        let others: Option<Vec<_>> = rest.iter().map(|r| r.values.get(name)).collect();
        if let Some(others) = others {
            let agreed = others.iter().all(|o| *o == v).then(|| v.clone());
            values.insert(name.clone(), agreed);
        }
    }
    Shared {
        classes,
        functions,
        values,
    }
}

/// Every native module's classes, for the stubs' cross-module types; `None` for a module no
/// image's record read (it gets no stub: the checkers fall back to the module itself).
pub fn classes(api: &Api, cores: &Cores) -> BTreeMap<String, BTreeSet<String>> {
    modules(api)
        .into_iter()
        .filter_map(|module| {
            let readings = cores.readings(&module);
            let shared = (!readings.is_empty()).then(|| shared(&readings))?;
            let names = shared
                .classes
                .into_keys()
                .filter(|c| is_free_name(c))
                .collect();
            Some((module, names))
        })
        .collect()
}

/// The stub of `module`, if some image's core has a reading of it.
pub fn stub(
    api: &Api,
    cores: &Cores,
    module: &str,
    known: &BTreeMap<String, BTreeSet<String>>,
) -> Option<ModuleStub> {
    let readings = cores.readings(module);
    if readings.is_empty() {
        return None;
    }
    let shared = shared(&readings);
    let mut scope = Scope::new(module, known);
    let taken: BTreeSet<&str> = (shared.classes.keys())
        .chain(shared.functions.keys())
        .chain(shared.values.keys())
        .map(String::as_str)
        .collect();
    let dicts = setup_dicts(api, module, &taken);
    let mut classes = Vec::new();
    for (name, members) in shared.classes.iter().filter(|(n, _)| is_free_name(n)) {
        scope.members = members.keys().cloned().collect();
        let mut body = Vec::new();
        for (member, common) in members.iter().filter(|(m, _)| is_member_name(m)) {
            let path = format!("{name}.{member}");
            let dict = dicts.iter().find(|d| d.path == path);
            body.extend(item(member, common, &scope, dict));
        }
        classes.push(ClassStub {
            name: name.clone(),
            decorator: None,
            body,
        });
    }
    scope.members.clear();
    let mut functions = Vec::new();
    for (name, common) in shared.functions.iter().filter(|(n, _)| is_free_name(n)) {
        let dict = dicts.iter().find(|d| d.path == *name);
        if let Some(Item::Def(def)) = item(name, common, &scope, dict) {
            functions.push(def);
        }
    }
    let (mut values, mut aliases) = (Vec::new(), Vec::new());
    for (name, value) in shared.values.iter().filter(|(n, _)| is_free_name(n)) {
        match value {
            Some(Value {
                of: Some(class), ..
            }) if shared.classes.contains_key(class) && is_free_name(class) => {
                aliases.push((name.clone(), class.clone()));
            }
            Some(Value { r#type, of: None }) => values.push((name.clone(), scope.type_of(r#type))),
            _ => values.push((name.clone(), "Any".to_owned())),
        }
    }
    let mut labels: Vec<String> = (cores.images.iter())
        .filter(|c| c.module(module).is_some())
        .map(|c| c.label())
        .collect();
    labels.dedup();
    Some(ModuleStub {
        header: HEADER,
        about: str_literal(&format!(
            "The native module {module} as every image's core has it ({}), typed from its \
             pybind11 docstrings.",
            labels.join(", ")
        )),
        imports: scope.imports(),
        typed_dicts: dicts.into_iter().map(|d| d.stub).collect(),
        pybind11: true,
        classes,
        functions,
        values,
        aliases,
    })
}

/// A member's stub, or none (a class without a constructor has no `__init__`).
fn item(name: &str, common: &Common, scope: &Scope, dict: Option<&SetupDict>) -> Option<Item> {
    Some(match common {
        Common::Callable { binding, overloads } => {
            let returns = if name == "__init__" { "None" } else { "Any" };
            if name == "__init__" && overloads.as_ref().is_some_and(Vec::is_empty) {
                // pybind11 defines no constructor: the class takes no argument a caller
                // could pass (and raises without one; no stub can say that).
                return Some(Item::Def(DefStub {
                    name: name.to_owned(),
                    decorator: None,
                    signatures: vec!["(self, *args: Never, **kwargs: Never) -> None".into()],
                }));
            }
            let mut signatures: Vec<String> = Vec::new();
            for o in overloads.iter().flatten() {
                let dict_type = dict
                    .filter(|d| d.overload.as_ref().is_none_or(|only| only == o))
                    .map(|d| format!("{} | dict[str, Any]", d.stub.name));
                signatures.extend(docstring_signatures(
                    o,
                    *binding,
                    returns,
                    scope,
                    dict_type.as_deref(),
                ));
            }
            if signatures.is_empty() {
                signatures.push(anything(*binding, returns));
            }
            Item::Def(DefStub {
                name: name.to_owned(),
                decorator: binding.decorator(),
                signatures,
            })
        }
        Common::Property { readonly } => Item::Property {
            name: name.to_owned(),
            writable: !readonly,
        },
        Common::Value { r#type } => Item::Value {
            name: name.to_owned(),
            ty: scope.type_of(r#type),
        },
        Common::Opaque => Item::Value {
            name: name.to_owned(),
            ty: "Any".to_owned(),
        },
    })
}

/// A `[[native]]` callable with `dict_keys`: its TypedDict, for its `dict` parameter.
struct SetupDict {
    /// `Class.method` or `function`, in the module.
    path: String,
    /// The declared overload the dict belongs to (`config: dict`); `None`: every overload.
    overload: Option<String>,
    stub: TypedDictStub,
}

fn setup_dicts(api: &Api, module: &str, taken: &BTreeSet<&str>) -> Vec<SetupDict> {
    let in_module =
        |m: &Option<String>| m.as_deref().unwrap_or(&api.upstream.native_module) == module;
    let mut names: BTreeSet<String> = BTreeSet::new();
    let mut out = Vec::new();
    for m in api.surface.members.iter().filter(|m| in_module(&m.module)) {
        let MemberKind::Callable { overload } = &m.kind else {
            continue;
        };
        if m.dict_keys.is_empty() {
            continue;
        }
        let mut name: String = m
            .object
            .split('.')
            .map(|p| p.to_upper_camel_case())
            .collect();
        name.push_str("Config");
        while taken.contains(name.as_str()) || names.contains(&name) {
            name.push('_');
        }
        names.insert(name.clone());
        let keys = (m.dict_keys.iter())
            .filter(|k| is_member_name(k))
            .cloned()
            .collect();
        out.push(SetupDict {
            path: m.object.clone(),
            overload: overload.clone(),
            stub: TypedDictStub { name, keys },
        });
    }
    out
}
