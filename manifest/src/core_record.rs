//! A native core's record (`cores/<package>-<version>.json`): its surface as the core reader
//! found it, and where it came from. The repository holds these beside api.toml; the checkers
//! read them (`native`) and the stubs are rendered from them (`codegen`). Maps are ordered,
//! so the JSON of a surface is byte-identical wherever it is written.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Bumped when the shape of [`CoreSurface`] changes; a record of another format is refused.
/// 2: `modules`, the modules of the wheel's package.
/// 3: `extensions` (every other extension module's surface) and `python` (each pure-Python
///    module's public names): the whole package.
pub const FORMAT: u32 = 3;

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreSurface {
    pub format: u32,
    pub wheel: WheelInfo,
    pub core: CoreInfo,
    /// Every class of the native module, by name.
    pub classes: BTreeMap<String, Class>,
    /// Module-level functions.
    pub functions: BTreeMap<String, Function>,
    /// Every other module attribute (enum values exported to the module, constants).
    pub values: BTreeMap<String, Value>,
    /// Every module of the wheel's top-level package (the core's, e.g. `mooncake`), by dotted
    /// name: what a module put over this wheel can import. Read from the wheel's file list.
    pub modules: BTreeMap<String, ModuleKind>,
    /// Every other extension module of the package (`mooncake.engine`, the torch-specific
    /// `mooncake.ep_2_12_1` builds, ...): its surface, or why it could not be read.
    #[serde(default)]
    pub extensions: BTreeMap<String, Read<Namespace>>,
    /// Every pure-Python module and package: the names `from M import X` can take, read from
    /// its source (never imported).
    #[serde(default)]
    pub python: BTreeMap<String, Read<Vec<String>>>,
}

/// Where a path a use names lies: in the native core's own namespace (a bare path) or in
/// another extension module's (a path qualified by it, `mooncake.engine.TransferEngine`).
pub enum Place<'a> {
    Found(NamespaceRef<'a>, &'a str),
    /// The path's module is not in the wheel.
    NoModule(&'a str),
    /// An extension of the wheel whose surface could not be read here, and why.
    Unread(&'a str, &'a str),
}

/// A borrowed [`Namespace`]: the core's own members are fields of [`CoreSurface`].
#[derive(Clone, Copy)]
pub struct NamespaceRef<'a> {
    pub classes: &'a BTreeMap<String, Class>,
    pub functions: &'a BTreeMap<String, Function>,
    pub values: &'a BTreeMap<String, Value>,
}

impl<'a> From<&'a Namespace> for NamespaceRef<'a> {
    fn from(n: &'a Namespace) -> Self {
        Self {
            classes: &n.classes,
            functions: &n.functions,
            values: &n.values,
        }
    }
}

impl CoreSurface {
    /// The namespace of extension module `module`: the core's own, or another extension's
    /// that was read.
    pub fn module(&self, module: &str) -> Option<NamespaceRef<'_>> {
        if module == self.core.module {
            return Some(self.own());
        }
        self.extensions.get(module)?.read().map(Into::into)
    }

    /// The core's own namespace.
    pub fn own(&self) -> NamespaceRef<'_> {
        NamespaceRef {
            classes: &self.classes,
            functions: &self.functions,
            values: &self.values,
        }
    }

    /// Where `path` lies: qualified by a module of the wheel's package (the longest that
    /// prefixes it), or bare in the core's own namespace.
    pub fn place<'a>(&'a self, path: &'a str) -> Place<'a> {
        let package = self.core.module.split('.').next().unwrap_or_default();
        if !path.starts_with(&format!("{package}.")) {
            return Place::Found(self.own(), path);
        }
        let dots: Vec<usize> = path.match_indices('.').map(|(i, _)| i).collect();
        let known = dots.iter().rev().find(|&&i| {
            let m = &path[..i];
            m == self.core.module || self.modules.contains_key(m)
        });
        let Some(&i) = known else {
            let upto = dots.get(1).map_or(path, |&i| &path[..i]);
            return Place::NoModule(upto);
        };
        let (name, rest) = (&path[..i], &path[i + 1..]);
        if name == self.core.module {
            return Place::Found(self.own(), rest);
        }
        match self.extensions.get(name) {
            Some(Read::Read(ns)) => Place::Found(ns.into(), rest),
            Some(Read::Unread { unread }) => Place::Unread(name, unread),
            None => Place::NoModule(name),
        }
    }
}

/// A module's classes, functions and values, as the core's own are recorded.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Namespace {
    pub classes: BTreeMap<String, Class>,
    pub functions: BTreeMap<String, Function>,
    pub values: BTreeMap<String, Value>,
}

/// What was read of a module, or why nothing could be: an extension that does not import here
/// (a torch-specific build without torch, a plain shared library), a source that does not parse.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Read<T> {
    Read(T),
    Unread { unread: String },
}

impl<T> Read<T> {
    pub fn read(&self) -> Option<&T> {
        match self {
            Read::Read(t) => Some(t),
            Read::Unread { .. } => None,
        }
    }
}

/// What provides a module of the package.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ModuleKind {
    /// A `.py` file.
    Python,
    /// A directory with an `__init__.py`.
    Package,
    /// A compiled extension module (`.so`).
    Extension,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct WheelInfo {
    /// The distribution as its METADATA names it, normalised (`mooncake-transfer-engine-cuda13`).
    pub package: String,
    pub version: String,
    /// sha256 of the wheel file.
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CoreInfo {
    /// The module imported: `mooncake.store`, or `mooncake._store` once `mooncake.store` is a
    /// package choosing a backend (0.3.14 on).
    pub module: String,
    /// The extension module inside the wheel, e.g. `mooncake/store.so`.
    pub file: String,
    /// sha256 of that file: two wheels with the same core have the same one.
    pub sha256: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Class {
    /// Base classes other than `object` and pybind11's common base.
    pub bases: Vec<String>,
    /// The class's own and inherited members (Python's and pybind11's plumbing left out).
    pub members: BTreeMap<String, Member>,
    /// What an instance made with no arguments showed, or why none could be made.
    pub instance: Instance,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Member {
    /// A method: the parameter lists after `self` of its pybind11 docstring overloads.
    Method {
        overloads: Vec<String>,
    },
    Staticmethod {
        overloads: Vec<String>,
    },
    Classmethod {
        overloads: Vec<String>,
    },
    /// A descriptor; `readonly` when it has no setter.
    Property {
        readonly: bool,
    },
    /// A class attribute (an enum value, a constant), with its type's name.
    Value {
        r#type: String,
    },
    /// A nested class.
    Class,
}

impl Member {
    pub fn overloads(&self) -> Option<&[String]> {
        match self {
            Member::Method { overloads }
            | Member::Staticmethod { overloads }
            | Member::Classmethod { overloads } => Some(overloads),
            _ => None,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Instance {
    Made {
        /// The class's data members (properties, values) and the attributes only the
        /// instance has: whether reading works, and whether writing back the value read does.
        members: BTreeMap<String, Access>,
        /// Whether the instance takes an attribute its class does not define.
        new_attributes: bool,
    },
    /// The constructor's error (`TypeError: ... No constructor defined!`), or a crash.
    Failed { error: String },
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Access {
    pub read: bool,
    pub write: bool,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Function {
    pub overloads: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Value {
    /// The value's type name; `class` for another name bound to a class.
    pub r#type: String,
    /// For a class alias: the class's qualified name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub of: Option<String>,
}

impl CoreSurface {
    /// Pretty JSON with a closing newline: the form cached and committed (escaped, so the
    /// file shows no character of the wheel's that does not print).
    pub fn to_json(&self) -> String {
        let text = serde_json::to_string_pretty(self).unwrap_or_default();
        let mut text = mooncake_sos_support::escape::json(&text).into_owned();
        text.push('\n');
        text
    }

    /// `package version`, how tables and messages name the core.
    pub fn label(&self) -> String {
        format!("{} {}", self.wheel.package, self.wheel.version)
    }
}
