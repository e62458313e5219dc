//! How a stub module writes a type and a signature: the names it knows (builtins, its own
//! imports, its classes, the classes of the other stub modules), each parameter list from a
//! pybind11 docstring as the binding takes it, and `Any` for whatever it cannot write.

use mooncake_sos_manifest::model::python::stub_type;
use mooncake_sos_manifest::model::values::is_python_identifier;
use mooncake_sos_manifest::signature::{OverloadParamKind, WrittenParam, written_params};
use std::cell::RefCell;
use std::collections::{BTreeMap, BTreeSet};

/// Builtins a stub writes as they are, with the form of the bare generic ones.
const BUILTINS: &[(&str, &str)] = &[
    ("bool", "bool"),
    ("bytearray", "bytearray"),
    ("bytes", "bytes"),
    ("complex", "complex"),
    ("dict", "dict[Any, Any]"),
    ("float", "float"),
    ("frozenset", "frozenset[Any]"),
    ("int", "int"),
    ("list", "list[Any]"),
    ("memoryview", "memoryview"),
    ("object", "object"),
    ("set", "set[Any]"),
    ("str", "str"),
    ("tuple", "tuple[Any, ...]"),
    ("type", "type[Any]"),
];

/// The names every stub imports (the template's import lines) that an annotation may use,
/// with their bare form.
const IMPORTED: &[(&str, &str)] = &[
    ("Any", "Any"),
    ("Buffer", "Buffer"),
    ("Callable", "Callable[..., Any]"),
    ("Iterable", "Iterable[Any]"),
    ("Literal", "Any"),
    ("Mapping", "Mapping[Any, Any]"),
    ("Optional", "Any"),
    ("Sequence", "Sequence[Any]"),
    ("Union", "Any"),
];

/// Imported names no annotation uses, which a stub's own names must not shadow either.
const IMPORTED_OTHERS: &[&str] = &[
    "Never",
    "TypedDict",
    "dataclass",
    "overload",
    "type_check_only",
    "pybind11_type",
];

/// Whether a stub can bind `name` at module level: an identifier that hides none of the
/// names its annotations use (a class `int` or `Any` would change what they say).
pub fn is_free_name(name: &str) -> bool {
    is_python_identifier(name)
        && !BUILTINS.iter().any(|(b, _)| *b == name)
        && !IMPORTED.iter().any(|(i, _)| *i == name)
        && !IMPORTED_OTHERS.contains(&name)
}

/// Whether a class body can bind `name`: an identifier that is not one of the stub's imports
/// (a builtin it shadows is written `builtins.X` in that class), nor mangled (`__x`).
pub fn is_member_name(name: &str) -> bool {
    let mangled = name.starts_with("__") && !name.ends_with("__");
    is_python_identifier(name)
        && !IMPORTED.iter().any(|(i, _)| *i == name)
        && !IMPORTED_OTHERS.contains(&name)
        && !mangled
}

/// The names one stub module knows, and the modules its annotations import.
pub struct Scope<'a> {
    /// The module this stub is of (`mooncake.store`).
    pub module: &'a str,
    /// Every stub module's top-level classes, by module (this one's too).
    pub classes: &'a BTreeMap<String, BTreeSet<String>>,
    /// The members of the class whose body is being written: names that hide builtins there.
    pub members: BTreeSet<String>,
    imports: RefCell<BTreeSet<String>>,
}

impl<'a> Scope<'a> {
    pub fn new(module: &'a str, classes: &'a BTreeMap<String, BTreeSet<String>>) -> Self {
        Self {
            module,
            classes,
            members: BTreeSet::new(),
            imports: RefCell::new(BTreeSet::new()),
        }
    }

    /// The modules written types name (`import mooncake.store`), sorted.
    pub fn imports(&self) -> Vec<String> {
        self.imports.borrow().iter().cloned().collect()
    }

    /// `text` (an annotation) as this stub writes it; `Any` when it cannot.
    pub fn type_of(&self, text: &str) -> String {
        stub_type(text, &|name, applied| self.name(name, applied)).unwrap_or_else(|| "Any".into())
    }

    /// How a name reads here (`applied`: it is subscripted), `None` for a name this stub does
    /// not have.
    fn name(&self, name: &str, applied: bool) -> Option<String> {
        let pick = |&(n, bare): &(&'static str, &'static str)| {
            (n == name).then_some(if applied { n } else { bare })
        };
        if let Some(written) = BUILTINS.iter().find_map(pick) {
            if !self.members.contains(name) {
                return Some(written.to_owned());
            }
            self.imports.borrow_mut().insert("builtins".into());
            return Some(format!("builtins.{written}"));
        }
        if let Some(written) = IMPORTED.iter().find_map(pick) {
            return Some(written.to_owned());
        }
        if applied {
            // No class of a core's is generic.
            return None;
        }
        let (module, class) = match name.rsplit_once('.') {
            Some((module, class)) => (module, class),
            None => (self.module, name),
        };
        if !self.classes.get(module).is_some_and(|c| c.contains(class)) {
            return None;
        }
        if module == self.module && !self.members.contains(class) {
            return Some(class.to_owned());
        }
        self.imports.borrow_mut().insert(module.to_owned());
        Some(format!("{module}.{class}"))
    }
}

/// How a callable binds its first argument.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Binding {
    Method,
    Static,
    Class,
    /// A module-level function.
    Function,
}

impl Binding {
    fn first(self) -> Option<&'static str> {
        match self {
            Binding::Method => Some("self"),
            Binding::Class => Some("cls"),
            Binding::Static | Binding::Function => None,
        }
    }

    pub fn decorator(self) -> Option<&'static str> {
        match self {
            Binding::Static => Some("@staticmethod"),
            Binding::Class => Some("@classmethod"),
            Binding::Method | Binding::Function => None,
        }
    }
}

/// One parameter as a stub writes it.
#[derive(Clone, Debug)]
pub struct StubParam {
    pub name: String,
    pub kind: OverloadParamKind,
    pub ty: String,
    pub default: bool,
}

/// The signatures (`(self, key: str, /) -> Any`) a pybind11 docstring overload is written as:
/// one, or two where a parameter with a default comes before one without (pybind11 allows
/// it, Python does not: the call that passes all of them by position, and the one that
/// passes the later ones by keyword). A text that does not read as a parameter list takes
/// anything. `dict_type`: the type of a parameter annotated `dict` (the setup dict's keys).
pub fn docstring_signatures(
    text: &str,
    binding: Binding,
    returns: &str,
    scope: &Scope,
    dict_type: Option<&str>,
) -> Vec<String> {
    let Ok(written) = written_params(text) else {
        return vec![anything(binding, returns)];
    };
    let params: Vec<StubParam> = written
        .iter()
        .map(|w| StubParam {
            name: w.param.name.clone(),
            kind: w.param.kind,
            ty: docstring_type(w, scope, dict_type),
            default: w.param.has_default,
        })
        .collect();
    expanded(params)
        .into_iter()
        .map(|params| {
            signature(&params, binding, returns).unwrap_or_else(|| anything(binding, returns))
        })
        .collect()
}

fn docstring_type(w: &WrittenParam, scope: &Scope, dict_type: Option<&str>) -> String {
    let ty = match (w.annotation.map(str::trim), dict_type) {
        (Some("dict"), Some(dict_type)) => dict_type.to_owned(),
        (Some(annotation), _) => scope.type_of(annotation),
        (None, _) => "Any".to_owned(),
    };
    if w.default.map(str::trim) == Some("None") {
        or_none(ty)
    } else {
        ty
    }
}

/// `ty`, or None: the type of a parameter whose default is `None`.
pub fn or_none(ty: String) -> String {
    if ty == "Any" || ty == "object" || ty.split(" | ").any(|t| t == "None") {
        ty
    } else {
        format!("{ty} | None")
    }
}

/// `params` as Python writes them: one list, or, where a positional parameter with a default
/// comes before one without, the list with those defaults dropped and the list with the later
/// parameters keyword-only (when they can be passed by keyword).
fn expanded(params: Vec<StubParam>) -> Vec<Vec<StubParam>> {
    use OverloadParamKind::{Positional, PositionalOnly};
    let positional = |p: &StubParam| matches!(p.kind, PositionalOnly | Positional);
    let Some(last_required) = params.iter().rposition(|p| positional(p) && !p.default) else {
        return vec![params];
    };
    let Some(first_default) = params[..last_required]
        .iter()
        .position(|p| positional(p) && p.default)
    else {
        return vec![params];
    };
    let mut by_position = params.clone();
    for p in &mut by_position[..last_required] {
        p.default = false;
    }
    let mut lists = vec![by_position];
    let later = &params[first_default + 1..];
    if later.iter().all(|p| p.kind != PositionalOnly) {
        let mut by_keyword = params.clone();
        let first_required = first_default
            + 1
            + later
                .iter()
                .position(|p| positional(p) && !p.default)
                .unwrap_or_default();
        for p in &mut by_keyword[first_required..] {
            if positional(p) {
                p.kind = OverloadParamKind::KeywordOnly;
            }
        }
        lists.push(by_keyword);
    }
    lists
}

/// `(self, a: int, /, b: str = ..., *, c: bool = ...) -> Any`; `None` when the parameters
/// are in no order Python takes, or a name comes twice.
pub fn signature(params: &[StubParam], binding: Binding, returns: &str) -> Option<String> {
    use OverloadParamKind::*;
    let rank = |k: OverloadParamKind| match k {
        PositionalOnly => 0,
        Positional => 1,
        VarPositional => 2,
        KeywordOnly => 3,
        VarKeyword => 4,
    };
    let mut names: BTreeSet<&str> = binding.first().into_iter().collect();
    let mut last = 0;
    let mut var = [false; 2];
    let mut positional_default = false;
    for p in params {
        let r = rank(p.kind);
        let once = match p.kind {
            VarPositional => !std::mem::replace(&mut var[0], true),
            VarKeyword => !std::mem::replace(&mut var[1], true),
            _ => true,
        };
        if r < last || !once || !names.insert(&p.name) || !is_python_identifier(&p.name) {
            return None;
        }
        if r <= 1 {
            if positional_default && !p.default {
                return None;
            }
            positional_default |= p.default;
        }
        last = r;
    }
    let mut parts: Vec<String> = binding.first().map(String::from).into_iter().collect();
    let mut starred = false;
    for (i, p) in params.iter().enumerate() {
        if p.kind == KeywordOnly && !starred {
            parts.push("*".into());
            starred = true;
        }
        let default = if p.default { " = ..." } else { "" };
        parts.push(match p.kind {
            VarPositional => {
                starred = true;
                format!("*{}: {}", p.name, p.ty)
            }
            VarKeyword => format!("**{}: {}", p.name, p.ty),
            _ => format!("{}: {}{default}", p.name, p.ty),
        });
        let next_named = params.get(i + 1).is_none_or(|n| n.kind != PositionalOnly);
        if p.kind == PositionalOnly && next_named {
            parts.push("/".into());
        }
    }
    Some(format!("({}) -> {returns}", parts.join(", ")))
}

/// The signature of a callable whose parameters are not known: it takes anything.
pub fn anything(binding: Binding, returns: &str) -> String {
    let first = binding
        .first()
        .map(|f| format!("{f}, "))
        .unwrap_or_default();
    format!("({first}*args: Any, **kwargs: Any) -> {returns}")
}
