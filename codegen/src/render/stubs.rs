//! generated/stubs/<package>-stubs/: typed stubs of the contract, a partial PEP 561 stub
//! package (`py.typed` says `partial`: the package's other modules stay the checkers' to
//! read) that mypy, pyright and editors take from site-packages beside the package. One
//! `.pyi` per module: the module itself, from the contract's symbols ([`symbols`]), and
//! each native module the contract uses, from the images' core records ([`native`]).

mod cores;
mod native;
mod scope;
mod symbols;

pub use cores::Cores;

use super::{HEADER, Output, RenderError, lines};
use askama::Template;
use mooncake_sos_manifest::model::{Api, RelPath};
use std::collections::BTreeSet;

/// `py.typed` of a partial stub package, as PEP 561 spells it (mypy reads nothing else in it).
const PY_TYPED: &str = include_str!("../../templates/py.typed");

/// Where the stub packages are written, relative to the repository root.
pub const DIR: &str = "generated/stubs";

/// One module's stub, as the template writes it.
#[derive(Template)]
#[template(path = "stubs.pyi", escape = "none")]
struct ModuleStub {
    header: &'static str,
    /// The module docstring (a string literal): what the stub holds and where it comes from.
    about: String,
    /// Modules the types name (`mooncake.store`).
    imports: Vec<String>,
    typed_dicts: Vec<TypedDictStub>,
    /// Whether the classes are pybind11's (of its metaclass, which the stub declares).
    pybind11: bool,
    classes: Vec<ClassStub>,
    functions: Vec<DefStub>,
    /// `NAME: type` at module level.
    values: Vec<(String, String)>,
    /// `Name = Class`: another name of a class or a function.
    aliases: Vec<(String, String)>,
}

/// A stub-only TypedDict (never at run time): a dict's keys, each of any value.
struct TypedDictStub {
    name: String,
    keys: Vec<String>,
}

struct ClassStub {
    name: String,
    decorator: Option<&'static str>,
    body: Vec<Item>,
}

/// A member in a class body.
enum Item {
    /// A dataclass field.
    Field {
        name: String,
        ty: String,
        default: bool,
    },
    /// A class attribute (an enum value), or a member known only by name (`Any`).
    Value {
        name: String,
        ty: String,
    },
    Property {
        name: String,
        writable: bool,
    },
    Def(DefStub),
}

/// A function or method: one signature (`(self, key: str) -> Any`), or its `@overload`s.
struct DefStub {
    name: String,
    decorator: Option<&'static str>,
    signatures: Vec<String>,
}

/// Every stub package: a `.pyi` per module, a `py.typed` per top-level package.
pub fn render(api: &Api, cores: &Cores) -> Result<Vec<Output>, RenderError> {
    let mut known = native::classes(api, cores);
    known.insert(api.upstream.module.clone(), symbols::classes(api));
    let mut stubs = vec![(api.upstream.module.clone(), symbols::stub(api, &known))];
    for module in native::modules(api) {
        if module == api.upstream.module {
            continue;
        }
        if let Some(stub) = native::stub(api, cores, &module, &known) {
            stubs.push((module, stub));
        }
    }
    let mut packages = BTreeSet::new();
    let mut out = Vec::new();
    for (module, stub) in stubs {
        let (package, path) = stub_path(&module);
        packages.insert(package);
        out.push(Output::File {
            path: rel(&path)?,
            contents: lines(stub.render()?),
        });
    }
    for package in packages {
        out.push(Output::File {
            path: rel(&format!("{DIR}/{package}-stubs/py.typed"))?,
            contents: PY_TYPED.to_owned(),
        });
    }
    Ok(out)
}

/// The top-level package of `module` and its stub's path: `mooncake.store` →
/// `generated/stubs/mooncake-stubs/store.pyi`; a package's own is its `__init__.pyi`.
fn stub_path(module: &str) -> (String, String) {
    let mut parts = module.split('.');
    let package = parts.next().unwrap_or_default().to_owned();
    let rest: Vec<&str> = parts.collect();
    let file = if rest.is_empty() {
        "__init__".to_owned()
    } else {
        rest.join("/")
    };
    let path = format!("{DIR}/{package}-stubs/{file}.pyi");
    (package, path)
}

fn rel(path: &str) -> Result<RelPath, RenderError> {
    RelPath::new(path).ok_or_else(|| RenderError(format!("{path} is not a repository path")))
}
