//! What the stubs read besides the manifest: the images' native cores, as their records in
//! `cores/` hold them. `xtask regen` loads each image's record (the native crate reads and
//! checks it) and hands it over as its JSON; this is the part of that format (3) the stubs
//! need, so the renderers stay pure functions of their inputs.

use serde::Deserialize;
use std::collections::BTreeMap;

/// Each image's native core, in image order.
#[derive(Clone, Debug, Default)]
pub struct Cores {
    pub images: Vec<CoreRecord>,
}

impl Cores {
    /// The cores of records given as their JSON text (in image order); `Err` says which does
    /// not have the shape.
    pub fn from_records(records: &[impl AsRef<str>]) -> Result<Self, String> {
        let images = (records.iter().enumerate())
            .map(|(i, r)| {
                serde_json::from_str(r.as_ref()).map_err(|e| format!("core record {}: {e}", i + 1))
            })
            .collect::<Result<_, _>>()?;
        Ok(Self { images })
    }

    /// The surface of extension module `module` in each image whose core's record read it.
    pub fn readings(&self, module: &str) -> Vec<&Namespace> {
        self.images
            .iter()
            .filter_map(|c| c.module(module))
            .collect()
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct CoreRecord {
    pub wheel: Wheel,
    pub core: Core,
    #[serde(flatten)]
    pub own: Namespace,
    #[serde(default)]
    pub extensions: BTreeMap<String, Reading>,
}

impl CoreRecord {
    /// The surface of `module`: the core's own, or another extension module's when read.
    pub fn module(&self, module: &str) -> Option<&Namespace> {
        if module == self.core.module {
            return Some(&self.own);
        }
        match self.extensions.get(module)? {
            Reading::Read(ns) => Some(ns),
            Reading::Unread(_) => None,
        }
    }

    /// `package version`.
    pub fn label(&self) -> String {
        format!("{} {}", self.wheel.package, self.wheel.version)
    }
}

#[derive(Clone, Debug, Deserialize)]
pub struct Wheel {
    pub package: String,
    pub version: String,
}

#[derive(Clone, Debug, Deserialize)]
pub struct Core {
    /// The module the core is imported as (`mooncake.store`).
    pub module: String,
}

/// An extension module's surface, or (`{"unread": why}`) none.
#[derive(Clone, Debug, Deserialize)]
#[serde(untagged)]
pub enum Reading {
    Read(Namespace),
    Unread(serde::de::IgnoredAny),
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Namespace {
    pub classes: BTreeMap<String, Class>,
    pub functions: BTreeMap<String, Function>,
    pub values: BTreeMap<String, Value>,
}

#[derive(Clone, Debug, Default, Deserialize)]
pub struct Class {
    /// The class's own and inherited members.
    pub members: BTreeMap<String, Member>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Member {
    /// Each overload is a pybind11 docstring's parameters after `self`.
    Method {
        overloads: Vec<String>,
    },
    Staticmethod {
        overloads: Vec<String>,
    },
    Classmethod {
        overloads: Vec<String>,
    },
    Property {
        readonly: bool,
    },
    /// A class attribute (an enum value) of a type named.
    Value {
        r#type: String,
    },
    /// A nested class (its members are not recorded).
    Class,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Function {
    pub overloads: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
pub struct Value {
    /// The value's type name; `class` for another name of a class.
    pub r#type: String,
    /// For a class's other name: the class.
    #[serde(default)]
    pub of: Option<String>,
}
