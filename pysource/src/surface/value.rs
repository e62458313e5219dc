//! The values the analysis follows: what a name may hold (native objects, the module's own
//! definitions, constants that can name an attribute), and how they cross to another file of
//! a program.

use super::index::{ClassId, FuncId};
use std::borrow::Cow;
use std::collections::BTreeSet;

/// What a name may hold, as far as the native surface is concerned.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Val<'a> {
    /// A native module: the core (0) or another extension module of the package
    /// ([`super::SurfaceConfig::native_module_name`]).
    NativeModule(u16),
    /// A package on the way to a native module (`mooncake` after `import mooncake.store`).
    Package(String),
    /// A member of the native module or of a native class or instance, as a value.
    Member(Member),
    /// An instance of the native class at this path.
    Instance(String),
    /// The class of a native instance (`type(cfg)`).
    ClassOf(String),
    /// A string constant that could name an attribute or a module.
    Str(&'a str),
    /// A literal (a string, number, bool or None) as written, for the domains its argument
    /// has. It flows only where its value is certain: a name bound once, a conditional
    /// expression's arms, a container's items; never through parameters or results.
    Lit(Cow<'a, str>),
    /// A tuple or list literal: iterating it yields these (never a `Seq`: nesting is dropped,
    /// so `x = [x]` cannot grow without end).
    Seq(Vec<Val<'a>>),
    /// An instance of a class the module defines.
    Object(ClassId),
    Class(ClassId),
    Function(FuncId),
    /// A method reached through an instance (its first parameter is bound).
    Bound(FuncId),
    /// A definition, or an instance of a class, in another file of the program.
    Remote(Remote),
    /// What `super()` gives in a method of this class: its bases' members, on the instance.
    Super(ClassId),
    /// A dict, list, tuple or set of this file ([`super::containers`]).
    Container(usize),
    /// A value of the API module (the consumer scan's).
    Api(ApiVal),
}

/// A value of the API module (`mooncake.structured_object_store`).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum ApiVal {
    Module,
    /// A name the module defines (a symbol), as a value.
    Name(String),
    /// An instance of an API class (or of a class deriving from one).
    Instance(String),
    /// A member of an API class, reached on the class itself or on an instance.
    Member {
        class: String,
        name: String,
        on_class: bool,
    },
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) struct Member {
    pub path: String,
    pub on: super::On,
    /// Set when the value came from `getattr(obj, name, fallback)`.
    pub probe: Option<(usize, String)>,
}

pub(super) type Vals<'a> = BTreeSet<Val<'a>>;

/// A definition in a file of the program, by its module and qualified name.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub(super) enum Remote {
    /// A module of the program (`from . import utils`).
    Module(String),
    /// A function, class or method (`f`, `C`, `C.m`) of `module`.
    Def { module: String, name: String },
    /// An instance of the class `class` of `module`.
    Object { module: String, class: String },
    /// A method reached through such an instance (its `self` is bound).
    Bound { module: String, name: String },
}

/// Values as they cross files: owned, so no file's text is borrowed.
pub(super) type Shared = Vals<'static>;

/// `v` as it crosses to another file, or `None` when it does not (a string, a nested
/// function). `local` names the file's own definitions, `None` when not reachable from outside.
pub(super) fn share(
    v: &Val<'_>,
    local: &dyn Fn(&Val<'_>) -> Option<Remote>,
) -> Option<Val<'static>> {
    Some(match v {
        Val::NativeModule(m) => Val::NativeModule(*m),
        Val::Package(p) => Val::Package(p.clone()),
        Val::Member(m) => Val::Member(m.clone()),
        Val::Instance(c) => Val::Instance(c.clone()),
        Val::ClassOf(c) => Val::ClassOf(c.clone()),
        Val::Remote(r) => Val::Remote(r.clone()),
        Val::Api(a) => Val::Api(a.clone()),
        Val::Seq(items) => {
            let items: Vec<Val<'static>> = items.iter().filter_map(|i| share(i, local)).collect();
            if items.is_empty() {
                return None;
            }
            Val::Seq(items)
        }
        Val::Str(_) => return None,
        Val::Lit(text) => Val::Lit(Cow::Owned(text.clone().into_owned())),
        Val::Object(_) | Val::Class(_) | Val::Function(_) | Val::Bound(_) => Val::Remote(local(v)?),
        Val::Super(_) | Val::Container(_) => return None,
    })
}

/// Whether `v` is a value the analysis is after (native, or the API's): a file that exports
/// one draws the files that import it into the program.
pub(super) fn is_native(v: &Val<'_>) -> bool {
    match v {
        Val::NativeModule(_) | Val::Member(_) | Val::Instance(_) | Val::ClassOf(_) => true,
        Val::Api(_) => true,
        Val::Seq(items) => items.iter().any(is_native),
        _ => false,
    }
}

/// `vals` without literals: what flows where a literal's value is no longer certain.
pub(super) fn without_literals(mut vals: Vals<'_>) -> Vals<'_> {
    vals.retain(|v| !matches!(v, Val::Lit(_)));
    vals
}
