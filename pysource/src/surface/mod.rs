//! The module's native surface, derived from its source without running it: every use it makes
//! of the native core and of the sibling modules of its package, each with its line, whether
//! the module needs it (required) or falls back without it (optional, and why), and for calls
//! the call shape. [`compare`] checks it against what api.toml declares.
//!
//! How native objects are recognised (a small flow-insensitive type inference, per scope):
//! - the native module however imported (`import mooncake.store as s`, `from mooncake import
//!   store`, `import mooncake.store`, `importlib.import_module("mooncake.store")`), and its
//!   members however reached (`s.X`, `from mooncake.store import X as Y`,
//!   `getattr(s, "X", default)`);
//! - roles from the manifest: a parameter named like a key of `[upstream] native_roles` (in
//!   any function of the module) holds an instance of that class, e.g. `store` the
//!   `MooncakeDistributedStore` the module is given and `config` the consumer's
//!   `ReplicateConfig`;
//! - what flows from those: `self.x = store` types `self.x` in every method of the class (and
//!   of its subclasses), an assignment types its name in its scope, a call of a module function
//!   types its parameters (and its result), `X()` of a native class is an instance of it, so is
//!   `type(cfg)()` and `copy.copy(cfg)`; a conditional expression carries both arms.
//!
//! A use is optional when the module probes it (`getattr(obj, name, default)`, `hasattr`), when
//! it is reached through a probed value, inside `if hasattr(obj, name)` (or after `if not
//! hasattr(obj, name): continue`), or inside a `try` whose handler swallows the failure (for
//! members: AttributeError, Exception, BaseException or bare; for imports: ImportError,
//! ModuleNotFoundError, ...). A sibling import inside a function is lazy, hence optional.
//! Names computed at run time are followed through constants, tuples of constants (`for name in
//! FIELDS`) and the constant arguments a function is called with.

pub mod api;
pub mod api_use;
mod call;
mod containers;
mod deps;
mod expr;
mod guard;
mod held;
mod imports;
pub(crate) mod index;
mod keys;
mod program;
pub mod reach;
mod remote;
mod render;
mod stmt;
mod value;
mod walk;
mod world;

pub use crate::rules::Finding;
pub use crate::rules::native::{SurfaceReport, compare, compare_each};
pub use program::{MAX_ROUNDS, Program, derive_program};

use crate::semantic::{Model, SourceFile, with_model};
use crate::source::{LoadError, ModuleSource};
use mooncake_sos_manifest::model::Api;
use mooncake_sos_manifest::signature::CallShape;
use serde::Serialize;
use std::collections::BTreeMap;

/// What the analysis needs from the manifest.
#[derive(Clone, Debug)]
pub struct SurfaceConfig {
    /// The module being read, e.g. `mooncake.structured_object_store` (for relative imports).
    pub module: String,
    /// The native core, e.g. `mooncake.store`.
    pub native_module: String,
    /// The package's other extension modules read with it (`mooncake.engine`): a use of one
    /// is named by its qualified path (`mooncake.engine.TransferEngine.initialize`).
    pub others: Vec<String>,
    /// The top-level package, e.g. `mooncake`: its other modules are siblings.
    pub package: String,
    /// Parameter name -> native class.
    pub roles: BTreeMap<String, String>,
    /// The API module's names, for the consumer scan (`None`: its values are not followed).
    pub api: Option<api_use::ApiNames>,
}

impl SurfaceConfig {
    pub fn from_api(api: &Api) -> Self {
        Self {
            module: api.upstream.module.clone(),
            native_module: api.upstream.native_module.clone(),
            others: Vec::new(),
            package: api.upstream.package().to_owned(),
            roles: api
                .surface
                .roles
                .iter()
                .map(|r| (r.param.clone(), r.class.clone()))
                .collect(),
            api: None,
        }
    }
}

impl SurfaceConfig {
    /// The native module `module` is, by its number (0: the core).
    pub(crate) fn native(&self, module: &str) -> Option<u16> {
        std::iter::once(&self.native_module)
            .chain(&self.others)
            .position(|m| m == module)
            .and_then(|i| u16::try_from(i).ok())
    }

    /// The path of member `name` of native module `m` (`""`: the module itself, as a dynamic
    /// use's owner names it): bare in the core, qualified in another.
    pub(crate) fn member_path(&self, m: u16, name: &str) -> String {
        match (
            usize::from(m)
                .checked_sub(1)
                .and_then(|i| self.others.get(i)),
            name,
        ) {
            (None, _) => name.to_owned(),
            (Some(module), "") => module.clone(),
            (Some(module), _) => format!("{module}.{name}"),
        }
    }

    /// The module `module` is, as a value (a native module, the API module): not a package
    /// on the way to one.
    fn module_itself(&self, module: &str) -> Option<value::Val<'static>> {
        self.module_value(module)
            .filter(|v| !matches!(v, value::Val::Package(_)))
    }

    /// What importing `module` gives: a native module, the API module, or a package on the
    /// way to one.
    fn module_value(&self, module: &str) -> Option<value::Val<'static>> {
        if let Some(m) = self.native(module) {
            return Some(value::Val::NativeModule(m));
        }
        let api = self.api.as_ref().map(|a| &a.module);
        if api.is_some_and(|a| a == module) {
            return Some(value::Val::Api(value::ApiVal::Module));
        }
        let below = format!("{module}.");
        std::iter::once(&self.native_module)
            .chain(&self.others)
            .chain(api)
            .any(|m| m.starts_with(&below))
            .then(|| value::Val::Package(module.to_owned()))
    }
}

/// Where a member is looked up.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum On {
    /// The native module itself (a class or function of it).
    Module,
    /// A class object.
    Class,
    /// An instance.
    Instance,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Target {
    /// A member of the native module: `ReplicateConfig`, `MooncakeDistributedStore.put`,
    /// `ReplicateConfig.group_ids`.
    Native { path: String, on: On },
    /// A member whose name is computed at run time on `owner` (`""`: the native module).
    Dynamic { owner: String, on: On },
    /// A module of the same package, e.g. `mooncake.buffer_pool`.
    Sibling { module: String },
    /// Another extension module of the package imported whole (`import mooncake.engine`,
    /// `from mooncake import engine`): the import fails where it cannot load. A member taken
    /// from it (`from mooncake.engine import TransferEngine`) is that member's use instead.
    Extension { module: String },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Access {
    Read,
    Write,
    /// `hasattr`.
    Probe,
    Call(CallShape),
    Import,
}

/// Why a use is optional: what the module does without it.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(tag = "kind", rename_all = "lowercase")]
pub enum Guard {
    /// Probed with `getattr(obj, name, fallback)` at `line`.
    Getattr { line: usize, fallback: String },
    /// Reached only where the test at `line` found it: `if hasattr(obj, name)`, `if x is not
    /// None` for a probed `x`, or after `if not hasattr(obj, name): continue`.
    Guarded { line: usize },
    /// Inside a `try` whose handler at `line` swallows the failure.
    Try { line: usize },
    /// An import inside the function defined at `line`: it runs only when called.
    Lazy { line: usize },
}

/// One use of the native core or of a sibling module.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct Use {
    pub line: usize,
    pub target: Target,
    pub access: Access,
    /// `None`: required (the module fails without it).
    pub optional: Option<Guard>,
    /// For a call made through a forwarding helper (`fn(*args)`): the line of the call that
    /// passed the member and its arguments.
    pub via: Option<usize>,
    /// The 1-based line and column of the member's own name (`(line, 0)`: not known).
    #[serde(skip)]
    pub pos: (usize, usize),
}

impl Use {
    /// The dotted name a declaration must carry: the member's path or the sibling module.
    pub fn subject(&self) -> &str {
        match &self.target {
            Target::Native { path, .. } => path,
            Target::Dynamic { owner, .. } => owner,
            Target::Sibling { module } | Target::Extension { module } => module,
        }
    }

    pub fn required(&self) -> bool {
        self.optional.is_none()
    }
}

/// Every use, sorted by line (then target and access), each once.
#[derive(Clone, Debug, Serialize)]
pub struct Surface {
    pub file: String,
    pub sha256: String,
    pub native_module: String,
    pub uses: Vec<Use>,
}

/// Parses `source` (nesting bounded: [`crate::bounded_parse`]) and derives its surface; a syntax
/// error is a located [`LoadError`].
pub fn derive(source: &ModuleSource, config: &SurfaceConfig) -> Result<Surface, LoadError> {
    let files = [SourceFile {
        source,
        module: &config.module,
        seed: true,
    }];
    with_model(&files, |model| derive_file(model, 0, config))?
}

/// The surface of file `i` of `model`, read on its own.
pub(crate) fn derive_file(
    model: &Model<'_>,
    i: usize,
    config: &SurfaceConfig,
) -> Result<Surface, LoadError> {
    let file = model.file(i)?;
    Ok(Surface {
        file: file.source.display.clone(),
        sha256: file.source.sha256.clone(),
        native_module: config.native_module.clone(),
        uses: walk::analyze(&file, config),
    })
}

/// Derives the surface of `source` and compares it with what `api` declares.
pub fn check(api: &Api, source: &ModuleSource) -> Result<SurfaceReport, LoadError> {
    let surface = derive(source, &SurfaceConfig::from_api(api))?;
    Ok(compare(&api.surface, surface))
}

#[cfg(test)]
mod tests;
