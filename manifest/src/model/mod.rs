//! Step 2 of 3: the typed contract. Renderers see only this; it holds no paths outside the
//! repository, and of the spans only the lines a check points at in api.toml (an image's
//! `strategy`), which no renderer reads, so output is a pure function of it.

pub mod layers;
pub mod names;
pub mod native;
pub mod python;
pub mod scenarios;
pub mod strategy;
pub use strategy::Strategy;
mod validate;
pub mod values;

pub use layers::{CoreSource, ImageCore, Release, UpstreamFile, Wheel};
pub use python::{PyData, PyExpr, PyLiteral, ValueType};
pub use scenarios::Scenario;
pub use validate::validate;
pub use values::RelPath;

use mooncake_sos_support::input::hex;
use serde::Serialize;
use sha2::{Digest, Sha256};

/// The whole manifest.
#[derive(Clone, Debug, Serialize)]
pub struct Api {
    /// Names the regions and prefixes the Docker ARGs, e.g. `mooncake-sos`.
    pub name: String,
    pub upstream: Upstream,
    pub shim: Shim,
    pub drop: DropCondition,
    pub symbols: Vec<Symbol>,
    /// What the run-time checkers verify: the required members of `surface` they can express.
    pub native: Vec<NativeRequirement>,
    /// Everything api.toml declares the module and the consumer use of the native core, and
    /// the sibling modules the module imports; `verify` compares the module's source with it.
    pub surface: native::NativeSurface,
    pub images: Vec<Image>,
    /// `[[release]]`: the releases (with every wheel's sha256) `pin` images install.
    pub releases: Vec<Release>,
    /// The consumer's calls with its values (`[[scenario]]`).
    pub scenarios: Vec<Scenario>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Upstream {
    /// `owner/name` on GitHub.
    pub repo: String,
    /// The module file inside the repository.
    pub path: String,
    /// Dotted import name, e.g. `mooncake.structured_object_store`.
    pub module: String,
    /// The native core the module stands on, e.g. `mooncake.store`.
    pub native_module: String,
    pub commit: String,
    pub sha256: String,
    pub prs: Vec<u32>,
    pub raw_base_url: String,
    /// `[[upstream.file]]`: more files at `commit` the overlay installs with the module.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<UpstreamFile>,
}

impl Upstream {
    /// The URL an image layer downloads the pinned module from.
    pub fn raw_url(&self) -> String {
        format!(
            "{}/{}/{}/{}",
            self.raw_base_url, self.repo, self.commit, self.path
        )
    }

    pub fn short_commit(&self) -> &str {
        &self.commit[..8]
    }

    /// The top-level package, e.g. `mooncake`.
    pub fn package(&self) -> &str {
        self.module.split('.').next().unwrap_or(&self.module)
    }

    /// The directory of `path` the package sits in (`mooncake-wheel/` for
    /// `mooncake-wheel/mooncake/structured_object_store.py`), when `path` ends with the
    /// module's own path.
    pub fn source_root(&self) -> Option<&str> {
        layers::source_root(&self.path, &self.module)
    }

    /// The module's file name, e.g. `structured_object_store.py`.
    pub fn file_name(&self) -> &str {
        self.path.rsplit('/').next().unwrap_or(&self.path)
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Shim {
    /// Python module name of the generated shim; its file is `render::shim_path`.
    pub module: String,
}

#[derive(Clone, Debug, Serialize)]
pub struct DropCondition {
    pub condition: String,
    /// The first release found carrying the whole API (package, version), if recorded.
    pub first_release: Option<(String, String)>,
}

#[derive(Clone, Debug, Serialize)]
pub struct Symbol {
    pub name: String,
    pub kind: SymbolKind,
}

#[derive(Clone, Debug, Serialize)]
pub enum SymbolKind {
    Dataclass {
        frozen: bool,
        fields: Vec<Param>,
    },
    Class {
        init: Vec<Param>,
        methods: Vec<Method>,
    },
    Function {
        params: Vec<Param>,
        returns: ValueType,
    },
    /// `name = target` at module level; the target is a function with `params`.
    Alias {
        target: String,
        params: Vec<Param>,
        returns: ValueType,
    },
}

impl SymbolKind {
    pub fn as_str(&self) -> &'static str {
        match self {
            Self::Dataclass { .. } => "dataclass",
            Self::Class { .. } => "class",
            Self::Function { .. } => "function",
            Self::Alias { .. } => "alias",
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct Method {
    pub name: String,
    pub staticmethod: bool,
    /// Declared parameters, without `self`.
    pub params: Vec<Param>,
    pub returns: ValueType,
}

/// A parameter, or a dataclass field (then `kind` is positional).
#[derive(Clone, Debug, Serialize)]
pub struct Param {
    pub name: String,
    pub kind: ParamKind,
    pub annotation: Option<String>,
    /// What the annotation says the value is.
    pub value_type: ValueType,
    pub default: Option<DefaultValue>,
    /// The only values the module accepts (its `Literal[...]` annotation, or the strings a
    /// closed dispatch on it compares against), in the order written; `None`: any value.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub domain: Option<Vec<String>>,
    /// Set when the parameter is part of the generated Rust option struct.
    pub rust: Option<RustType>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ParamKind {
    /// Positional-or-keyword.
    Positional,
    KeywordOnly,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum DefaultValue {
    /// A Python expression as written in the source, e.g. `'bundle'` or `None`.
    Expr(PyExpr),
    /// A dataclass `field(default_factory=...)`.
    Factory(String),
}

/// The Rust type an option-struct field gets in the generated bindings.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum RustType {
    String,
    U64,
    Bool,
    Strings,
    Rows,
    FieldSchemas,
    ReplicateConfig,
}

impl RustType {
    pub const ALL: [(&'static str, RustType); 7] = [
        ("string", RustType::String),
        ("u64", RustType::U64),
        ("bool", RustType::Bool),
        ("strings", RustType::Strings),
        ("rows", RustType::Rows),
        ("field_schemas", RustType::FieldSchemas),
        ("replicate_config", RustType::ReplicateConfig),
    ];
}

/// Something the module or the consumer needs from the native core.
#[derive(Clone, Debug, Serialize)]
pub struct NativeRequirement {
    /// Another extension module of the package (`mooncake.engine`); `None`: the native core.
    pub module: Option<String>,
    /// Dotted path inside the module, e.g. `MooncakeDistributedStore.setup`.
    pub object: String,
    pub check: NativeCheck,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub enum NativeCheck {
    /// A pybind11 docstring overload whose parameters after `self` are exactly this text.
    Overload(String),
    /// An attribute on the object, or on an instance made with no arguments.
    Attribute { name: String, instance: bool },
}

#[derive(Clone, Debug, Serialize)]
pub struct Image {
    /// The `[image.<id>]` key, e.g. `cuda`.
    pub id: String,
    /// The 1-based line of its `strategy` in api.toml (watch's annotations point there).
    pub strategy_line: usize,
    pub dockerfile: RelPath,
    pub base_image: String,
    pub base_tag: String,
    pub layer: Layer,
    pub build_py: Option<BuildPyVariant>,
    /// The native core the image runs on.
    pub core: ImageCore,
    /// The base image's other users of the package (its framework, e.g. sglang), whose
    /// recorded uses `verify` checks across a pin (`consumers/<package>-<version>.json`).
    pub users: Vec<ImageUser>,
    /// Extension modules of the package those users import unguarded (`mooncake.engine`
    /// for sglang): the image's check step loads each as it loads the native core, and
    /// `verify` checks the list against the users' records.
    pub user_modules: Vec<String>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct ImageUser {
    /// The distribution, normalised (`sglang`).
    pub package: String,
    pub version: String,
}

#[derive(Clone, Debug, Serialize)]
pub enum Layer {
    /// Download the pinned module over the base image's installed package.
    Overlay {
        base_package: String,
        base_version: String,
    },
    /// Fill the pure-Python files missing from the base image from a release wheel.
    Fill { package: String, version: String },
    /// Install the base image's package at a release that carries the API, over the one the
    /// base ships (`base_version`), hash-checked: module and native core from one wheel.
    Pin {
        base_package: String,
        base_version: String,
        /// The `[[release]]` of `base_package` installed.
        release: Release,
    },
    /// The base image already ships a release that carries the API: no layer, only the
    /// checks run.
    Check {
        base_package: String,
        base_version: String,
    },
}

impl Layer {
    /// A pin's base package, the version the base ships, and the release it installs.
    pub fn pin(&self) -> Option<(&str, &str, &Release)> {
        match self {
            Layer::Pin {
                base_package,
                base_version,
                release,
            } => Some((base_package, base_version, release)),
            _ => None,
        }
    }

    /// The package whose releases the layer takes.
    pub fn package(&self) -> &str {
        match self {
            Layer::Overlay { base_package, .. }
            | Layer::Pin { base_package, .. }
            | Layer::Check { base_package, .. } => base_package,
            Layer::Fill { package, .. } => package,
        }
    }

    pub fn strategy(&self) -> Strategy {
        match self {
            Layer::Overlay { .. } => Strategy::Overlay,
            Layer::Fill { .. } => Strategy::Fill,
            Layer::Pin { .. } => Strategy::Pin,
            Layer::Check { .. } => Strategy::Check,
        }
    }
}

#[derive(Clone, Debug, Serialize)]
pub struct BuildPyVariant {
    pub path: RelPath,
    pub variant: String,
}

impl Api {
    /// Each image's layer package and core package, in manifest order (repeats kept).
    pub fn image_packages(&self) -> impl Iterator<Item = &str> {
        self.images
            .iter()
            .flat_map(|i| [i.layer.package(), i.core.package.as_str()])
    }

    /// Every distribution api.toml names (the images' packages and cores, the releases, the
    /// first release that carries the API), sorted, each once.
    pub fn distributions(&self) -> Vec<&str> {
        let mut out: Vec<&str> = self.image_packages().collect();
        out.extend(self.releases.iter().map(|r| r.package.as_str()));
        out.extend(self.drop.first_release.iter().map(|(p, _)| p.as_str()));
        out.sort_unstable();
        out.dedup();
        out
    }

    /// sha256 of the canonical form of the API part (upstream pin, symbols, native surface):
    /// the same contract gives the same fingerprint wherever it is rendered.
    pub fn fingerprint(&self) -> String {
        #[derive(Serialize)]
        struct Contract<'a> {
            upstream: &'a Upstream,
            symbols: &'a [Symbol],
            native: &'a [NativeRequirement],
            surface: &'a native::NativeSurface,
        }
        let canonical = serde_json::to_string(&Contract {
            upstream: &self.upstream,
            symbols: &self.symbols,
            native: &self.native,
            surface: &self.surface,
        })
        .unwrap_or_default();
        hex(&Sha256::digest(canonical.as_bytes()))
    }

    pub fn symbol_names(&self) -> Vec<&str> {
        self.symbols.iter().map(|s| s.name.as_str()).collect()
    }
}
