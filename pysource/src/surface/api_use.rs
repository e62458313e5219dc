//! What the consumer scan finds of the API module: its uses (imports, references, calls with
//! their arguments), and the calls a function forwards its `**kwargs` to. The analysis
//! records them ([`super::api`]); the rules read them.

use mooncake_sos_manifest::signature::CallShape;
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// What the consumer scan knows of the API module, from the manifest.
#[derive(Clone, Debug, Default)]
pub struct ApiNames {
    /// The module, e.g. `mooncake.structured_object_store`.
    pub module: String,
    /// Symbols whose call makes an instance (classes and dataclasses).
    pub classes: BTreeSet<String>,
    /// Every symbol: what a `*` import binds, as far as api.toml knows.
    pub symbols: Vec<String>,
    /// Native callables declared with `dict_keys` (`Class.method`), with the name of the
    /// dict's parameter (it may be passed by keyword).
    pub dict_members: BTreeMap<String, Option<String>>,
}

/// The subject of a use whose name is computed at run time.
pub const COMPUTED: &str = "<computed>";

/// One use of the API (or of a native dict-taking callable) by the consumer.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct ConsumerUse {
    pub line: usize,
    /// 1-based column of the name used (the member, the imported name, the callee).
    pub col: usize,
    /// `export_ref`, `MooncakeBundleTransfer.put`, or a native path for [`UseKind::DictKeys`].
    pub subject: String,
    pub kind: UseKind,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum UseKind {
    /// `from <module> import NAME`.
    Import,
    /// A name or member read without calling it (`Class.release_result` passed on).
    Reference,
    Call {
        shape: CallShape,
        /// A method called on its class rather than on an instance.
        on_class: bool,
        /// The arguments, in the order the call gives them (a `**` spelt out as its keys).
        args: Vec<Arg>,
    },
    /// The keys of the dict passed first; `unknown`: it may hold keys not known statically.
    DictKeys { keys: Vec<String>, unknown: bool },
}

/// An argument of a call of the API.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Arg {
    /// The keyword it is passed by (`None`: by position, or a `**mapping` of keys not known).
    pub keyword: Option<String>,
    /// Its place among the positional arguments (`None`: by keyword).
    pub position: Option<usize>,
    /// Where it is (a keyword's name, else its value).
    pub line: usize,
    pub col: usize,
    /// Where its value is (the keyword's, for one spelt out of a `**` dict).
    pub value: (usize, usize),
    /// The literals it may hold, as written (`"dict"`, `None`): each one certain on some path.
    pub literals: Vec<String>,
}

impl UseKind {
    /// A call whose first positional argument is not the callee's (`Class.__init__(self,
    /// ...)`, `partial(f, ...)`): the rest move up one place.
    pub(crate) fn drop_first_positional(&mut self) {
        if let UseKind::Call { shape, args, .. } = self {
            shape.positional = shape.positional.saturating_sub(1);
            args.retain(|a| a.position != Some(0));
            for a in args.iter_mut() {
                if let Some(p) = a.position.as_mut() {
                    *p -= 1;
                }
            }
        }
    }
}

/// A call of the API that a function makes with its own `**kwargs` (`def put(self, v,
/// **kw): self.t.put(v, **kw)`): the function takes that call's parameters too, and each of
/// its callers' keywords it does not name itself reach that call.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub(super) struct Forward {
    pub subject: String,
    pub on_class: bool,
    /// The inner call's shape and arguments, without the `**kwargs`.
    pub shape: CallShape,
    pub args: Vec<Arg>,
}
