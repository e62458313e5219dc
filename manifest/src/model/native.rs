//! The native surface api.toml declares: what the upstream module (and the consumer) use of
//! the native core — members required or only probed, with their pybind11 overloads — and the
//! sibling modules of the package the module imports. `cargo xtask verify` derives the same
//! facts from the module's source and compares them with these.

use super::{NativeCheck, NativeRequirement};
use serde::Serialize;

/// `[upstream] native_roles`, `[[native]]` and `[[sibling]]`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NativeSurface {
    /// Parameter names whose value is an instance of a native class, sorted by name.
    pub roles: Vec<NativeRole>,
    pub members: Vec<NativeMember>,
    pub siblings: Vec<Sibling>,
}

/// What the runtime makes of the native core, all of it from api.toml: the store class (the
/// `store` role), its set-up method (its member that takes a dict, with the keys), the
/// replicate-config class (the `config` role) and the attributes callers write on it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct StoreFacts {
    pub class: String,
    pub setup: String,
    pub setup_keys: Vec<String>,
    pub config_class: String,
    pub config_fields: Vec<String>,
    /// The config field a replica count is written to ([`super::scenarios::REPLICA_FIELD`]),
    /// when api.toml declares it writable; else `""`.
    pub replica_field: String,
}

impl NativeSurface {
    /// The class of the parameter role `param` (`store`, `config`), or `""`.
    pub fn role(&self, param: &str) -> &str {
        self.roles
            .iter()
            .find(|r| r.param == param)
            .map_or("", |r| r.class.as_str())
    }

    pub fn store_facts(&self) -> StoreFacts {
        let (class, config_class) = (self.role("store"), self.role("config"));
        let in_core = |m: &&NativeMember| m.module.is_none();
        let setup = self.members.iter().filter(in_core).find(|m| {
            !m.dict_keys.is_empty()
                && m.object
                    .strip_prefix(class)
                    .is_some_and(|rest| rest.starts_with('.'))
        });
        let config_fields: Vec<String> = self
            .members
            .iter()
            .filter(in_core)
            .filter(|m| m.object == config_class)
            .filter_map(|m| match &m.kind {
                MemberKind::Attribute { name, access, .. } if access.writes() => Some(name.clone()),
                _ => None,
            })
            .collect();
        StoreFacts {
            class: class.to_owned(),
            setup: setup
                .and_then(|m| m.object.rsplit_once('.'))
                .map_or(String::new(), |(_, method)| method.to_owned()),
            setup_keys: setup.map(|m| m.dict_keys.clone()).unwrap_or_default(),
            config_class: config_class.to_owned(),
            replica_field: config_fields
                .iter()
                .find(|f| *f == super::scenarios::REPLICA_FIELD)
                .cloned()
                .unwrap_or_default(),
            config_fields,
        }
    }
}

/// A parameter named `param` (in any function of the module) carries an instance of `class`,
/// e.g. `store` -> `MooncakeDistributedStore`.
#[derive(Clone, Debug, Serialize)]
pub struct NativeRole {
    pub param: String,
    /// Dotted path in the native module.
    pub class: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Usage {
    /// Used unguarded: without it the module fails.
    Required,
    /// Probed (getattr with a default, hasattr) or guarded: the module falls back without it.
    Optional,
}

impl Usage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Optional => "optional",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NeededBy {
    Module,
    /// Only the consumer uses it (e.g. `setup(config: dict)`); no module use is expected.
    Consumer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

impl Access {
    pub const ALL: [(&'static str, Access); 3] = [
        ("read", Access::Read),
        ("write", Access::Write),
        ("read-write", Access::ReadWrite),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::ReadWrite => "read-write",
        }
    }

    pub fn reads(self) -> bool {
        self != Self::Write
    }

    pub fn writes(self) -> bool {
        self != Self::Read
    }
}

/// One `[[native]]`.
#[derive(Clone, Debug, Serialize)]
pub struct NativeMember {
    /// Another extension module of the package (`mooncake.engine`); `None`: the native core
    /// (`[upstream] native_module`).
    pub module: Option<String>,
    /// Dotted path in the native module: a class, a function, or `Class.method`.
    pub object: String,
    pub kind: MemberKind,
    pub usage: Usage,
    pub by: NeededBy,
    /// For a callable whose first argument is a dict (`setup({...})`): the keys callers may
    /// pass, sorted. `verify --consumer` fails on any other key a consumer passes.
    pub dict_keys: Vec<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub enum MemberKind {
    /// `object` itself (a method, function or class). With an overload (a pybind11 docstring
    /// signature after `self`; a class's is its constructor's), every call must fit it.
    Callable { overload: Option<String> },
    /// An attribute of `object`, looked up on an instance made with no arguments when
    /// `instance`.
    Attribute {
        name: String,
        instance: bool,
        access: Access,
    },
}

impl NativeMember {
    /// The dotted path a use names: `object`, or `object.attribute`; in another extension
    /// module, qualified by it (`mooncake.engine.TransferEngine.initialize`).
    pub fn path(&self) -> String {
        let local = match &self.kind {
            MemberKind::Callable { .. } => self.object.clone(),
            MemberKind::Attribute { name, .. } => format!("{}.{name}", self.object),
        };
        qualified(self.module.as_deref(), &local)
    }

    /// What the run-time checkers (shim, Rust runtime) verify today: required members with a
    /// check they can express. A presence-only `A.b` is the attribute `b` of `A`; a
    /// presence-only top-level name has no such form and is left to `verify`.
    pub fn runtime_requirement(&self) -> Option<NativeRequirement> {
        if self.usage != Usage::Required {
            return None;
        }
        let (object, check) = match &self.kind {
            MemberKind::Callable {
                overload: Some(o), ..
            } => (self.object.clone(), NativeCheck::Overload(o.clone())),
            MemberKind::Callable { overload: None } => {
                let (owner, name) = self.object.rsplit_once('.')?;
                let check = NativeCheck::Attribute {
                    name: name.to_owned(),
                    instance: false,
                };
                (owner.to_owned(), check)
            }
            MemberKind::Attribute { name, instance, .. } => {
                let check = NativeCheck::Attribute {
                    name: name.clone(),
                    instance: *instance,
                };
                (self.object.clone(), check)
            }
        };
        Some(NativeRequirement {
            module: self.module.clone(),
            object,
            check,
            reason: self.reason.clone(),
        })
    }
}

/// A path in an extension module as uses and messages name it: bare in the native core,
/// prefixed by the module's name in any other.
pub fn qualified(module: Option<&str>, path: &str) -> String {
    match module {
        Some(m) => format!("{m}.{path}"),
        None => path.to_owned(),
    }
}

/// One `[[sibling]]`: a module of the same package (e.g. `mooncake.buffer_pool`).
#[derive(Clone, Debug, Serialize)]
pub struct Sibling {
    pub module: String,
    /// Required: imported at module level, unguarded. Optional: guarded by try or lazy.
    pub usage: Usage,
    pub reason: String,
}

#[cfg(test)]
mod tests {
    /// The runtime's store facts are read from api.toml, not written into the runtime.
    #[test]
    fn store_facts_come_from_the_manifest() {
        let api = crate::load_str("api.toml", include_str!("../../../api.toml")).unwrap();
        let facts = api.surface.store_facts();
        assert_eq!(facts.class, "MooncakeDistributedStore");
        assert_eq!(facts.setup, "setup");
        assert_eq!(facts.setup_keys.len(), 7);
        assert!(facts.setup_keys.iter().any(|k| k == "master_server_addr"));
        assert_eq!(facts.config_class, "ReplicateConfig");
        assert_eq!(facts.config_fields, ["replica_num"]);
        assert_eq!(facts.replica_field, "replica_num");
        // Renamed in the manifest, renamed in what the runtime is told.
        let edited = include_str!("../../../api.toml")
            .replace("MooncakeDistributedStore", "DistributedStore")
            .replace("\"master_server_addr\"", "\"master_addr\"");
        let facts = crate::load_str("api.toml", &edited)
            .unwrap()
            .surface
            .store_facts();
        assert_eq!(facts.class, "DistributedStore");
        assert!(facts.setup_keys.iter().any(|k| k == "master_addr"));
    }
}
