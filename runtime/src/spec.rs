//! The API a build was generated for, as static data the generated crate fills in, and the
//! load-time check of the installed module against it (the Rust twin of the Python shim's
//! import check).

use std::ffi::CString;

use pyo3::prelude::*;
use pyo3::types::PyModule;

use crate::error::{Error, PyContext, Result, SpecMismatch};

mod native;
use native::check_native;

/// Everything the runtime checks before the first call.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ApiSpec {
    /// Dotted module name, e.g. `mooncake.structured_object_store`.
    pub module: &'static str,
    /// Upstream repository, commit and module sha256 the manifest pins.
    pub repo: &'static str,
    pub commit: &'static str,
    pub sha256: &'static str,
    /// The wheel the manifest names as carrying the API, e.g. `name==version`.
    pub wheel: &'static str,
    /// Hash of the manifest's API section, so two builds can tell they agree.
    pub fingerprint: &'static str,
    pub symbols: &'static [SymbolSpec],
    pub native: &'static [NativeSpec],
}

/// A top-level name of the module.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SymbolSpec {
    pub name: &'static str,
    pub kind: SymbolKind,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SymbolKind {
    /// A dataclass: its fields are the constructor's parameters.
    Dataclass {
        frozen: bool,
        fields: &'static [ParamSpec],
    },
    /// A class: constructor parameters (without self) and the methods used.
    Class {
        init: &'static [ParamSpec],
        methods: &'static [MethodSpec],
    },
    Function {
        params: &'static [ParamSpec],
    },
    /// `name = target` at module level: must be the very same function, with `params`.
    Alias {
        target: &'static str,
        params: &'static [ParamSpec],
    },
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MethodSpec {
    pub name: &'static str,
    pub staticmethod: bool,
    /// Parameters without `self`.
    pub params: &'static [ParamSpec],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ParamSpec {
    pub name: &'static str,
    pub kind: ParamKind,
    pub has_default: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ParamKind {
    /// Positional-or-keyword.
    Positional,
    KeywordOnly,
}

impl ParamKind {
    fn as_str(self) -> &'static str {
        match self {
            ParamKind::Positional => "positional",
            ParamKind::KeywordOnly => "keyword_only",
        }
    }
}

/// Something the module or the consumer needs from the native core.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NativeSpec {
    /// The native module, e.g. `mooncake.store`.
    pub module: &'static str,
    /// Dotted path inside it, e.g. `MooncakeDistributedStore.setup`.
    pub object: &'static str,
    pub check: NativeCheck,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NativeCheck {
    /// A pybind11 docstring overload whose parameters after `self` are exactly this text.
    Overload(&'static str),
    /// An attribute on the object, or on an instance made with no arguments.
    Attribute { name: &'static str, instance: bool },
}

impl ApiSpec {
    /// The same spec for a module importable under another name (tests check doctored copies).
    pub const fn with_module(self, module: &'static str) -> ApiSpec {
        ApiSpec { module, ..self }
    }

    /// `repo@commit (module sha256 ...; wheel ...)`, the pin as errors print it.
    pub fn pin(&self) -> String {
        format!(
            "{}@{} (module sha256 {}; wheel {})",
            self.repo, self.commit, self.sha256, self.wheel
        )
    }
}

const INTROSPECT: &str = include_str!("py/introspect.py");

/// The helper module, loaded once per call site; cheap next to an import.
pub(crate) fn helper(py: Python<'_>) -> Result<Bound<'_, PyModule>> {
    let code = CString::new(INTROSPECT).map_err(|e| Error::Interpreter(e.to_string()))?;
    PyModule::from_code(
        py,
        &code,
        c"mooncake_sos_introspect.py",
        c"mooncake_sos_introspect",
    )
    .context(|| "load the runtime's introspection helper".into())
}

/// The installed mooncake wheels, `name==version, ...`.
pub fn installed_wheels(py: Python<'_>) -> Result<String> {
    helper(py)?
        .call_method0("installed_wheels")
        .and_then(|v| v.extract::<String>())
        .context(|| "importlib.metadata".into())
}

/// Checks every symbol, parameter and native requirement; `Ok(module)` or one error listing
/// every miss with the pin and the installed wheel version.
pub fn check<'py>(py: Python<'py>, spec: &ApiSpec) -> Result<Bound<'py, PyAny>> {
    let helper = helper(py)?;
    let mut misses = Vec::new();
    let module = resolve(&helper, spec.module, "");
    let module = match module {
        Ok(m) => Some(m),
        Err(why) => {
            misses.push(why);
            None
        }
    };
    if let Some(module) = &module {
        for symbol in spec.symbols {
            check_symbol(&helper, module, spec.module, symbol, &mut misses)?;
        }
    }
    let mut unimportable: Vec<&str> = Vec::new();
    for native in spec.native {
        if unimportable.contains(&native.module) {
            continue; // its import failure is already listed once
        }
        let before = misses.len();
        check_native(&helper, native, &mut misses)?;
        if misses[before..]
            .iter()
            .any(|m| m.contains(&format!("import {} failed", native.module)))
        {
            unimportable.push(native.module);
        }
    }
    match (module, misses.is_empty()) {
        (Some(module), true) => Ok(module),
        _ => Err(Error::Spec(SpecMismatch {
            module: spec.module.to_owned(),
            misses,
            pin: spec.pin(),
            installed: installed_wheels(py)?,
            hint: None,
        })),
    }
}

fn resolve<'py>(
    helper: &Bound<'py, PyModule>,
    module: &str,
    dotted: &str,
) -> std::result::Result<Bound<'py, PyAny>, String> {
    let pair = helper
        .call_method1("resolve", (module, dotted))
        .and_then(|r| r.extract::<(Bound<'py, PyAny>, Option<String>)>())
        .map_err(|e| format!("resolve {module}.{dotted}: {e}"))?;
    match pair {
        (_, Some(why)) => Err(why),
        (obj, None) => Ok(obj),
    }
}

fn check_symbol(
    helper: &Bound<'_, PyModule>,
    module: &Bound<'_, PyAny>,
    module_name: &str,
    symbol: &SymbolSpec,
    misses: &mut Vec<String>,
) -> Result<()> {
    let item = format!("{module_name}.{}", symbol.name);
    let Ok(obj) = module.getattr(symbol.name) else {
        misses.push(format!("{item}: missing"));
        return Ok(());
    };
    match symbol.kind {
        SymbolKind::Alias { target, params } => match module.getattr(target) {
            Ok(t) if t.is(&obj) => check_params(helper, &obj, false, &item, params, misses)?,
            Ok(_) => misses.push(format!(
                "{item}: expected an alias of {target}, found another object"
            )),
            Err(_) => misses.push(format!("{item}: alias target {target} is missing")),
        },
        SymbolKind::Function { params } => {
            check_params(helper, &obj, false, &item, params, misses)?;
        }
        SymbolKind::Dataclass { frozen, fields } => {
            let found: Option<bool> = helper
                .call_method1("dataclass_frozen", (&obj,))
                .and_then(|r| r.extract())
                .context(|| format!("inspect {item}"))?;
            match found {
                None => misses.push(format!(
                    "{item}: expected a dataclass, found {}",
                    obj.get_type()
                )),
                Some(f) if f != frozen => misses.push(format!(
                    "{item}: expected frozen={frozen}, found frozen={f}"
                )),
                Some(_) => {}
            }
            check_params(helper, &obj, false, &item, fields, misses)?;
        }
        SymbolKind::Class { init, methods } => {
            check_params(helper, &obj, false, &item, init, misses)?;
            for method in methods {
                let name = format!("{item}.{}", method.name);
                let (found, is_static, callable): (bool, bool, Bound<'_, PyAny>) = helper
                    .call_method1("member", (&obj, method.name))
                    .and_then(|r| r.extract())
                    .context(|| format!("inspect {name}"))?;
                if !found {
                    misses.push(format!("{name}: missing"));
                    continue;
                }
                if is_static != method.staticmethod {
                    let say = |s: bool| {
                        if s {
                            "a staticmethod"
                        } else {
                            "an instance method"
                        }
                    };
                    misses.push(format!(
                        "{name}: expected {}, found {}",
                        say(method.staticmethod),
                        say(is_static)
                    ));
                }
                check_params(helper, &callable, !is_static, &name, method.params, misses)?;
            }
        }
    }
    Ok(())
}

/// Every expected parameter present, in order, with the same kind and default-presence; a
/// found parameter the manifest does not name is accepted only if it has a default (an
/// addition that cannot break a caller).
fn check_params(
    helper: &Bound<'_, PyModule>,
    obj: &Bound<'_, PyAny>,
    drop_self: bool,
    item: &str,
    expected: &[ParamSpec],
    misses: &mut Vec<String>,
) -> Result<()> {
    let (text, found): (Option<String>, Bound<'_, PyAny>) = helper
        .call_method1("signature", (obj, drop_self))
        .and_then(|r| r.extract())
        .context(|| format!("inspect.signature({item})"))?;
    let Some(text) = text else {
        misses.push(format!(
            "{item}: {}",
            found.str().map(|s| s.to_string()).unwrap_or_default()
        ));
        return Ok(());
    };
    let found: Vec<(String, String, bool)> =
        found.extract().context(|| format!("{item} params"))?;
    let mut want = render_expected(expected);
    if drop_self {
        // Printed beside inspect's text, which shows self for methods.
        want = if expected.is_empty() {
            "(self)".to_owned()
        } else {
            want.replacen('(', "(self, ", 1)
        };
    }
    let mut problems = Vec::new();
    let mut at = 0usize;
    for param in expected {
        match found[at..].iter().position(|(n, _, _)| n == param.name) {
            None => problems.push(format!("parameter {} missing", param.name)),
            Some(offset) => {
                for (name, kind, has_default) in &found[at..at + offset] {
                    if !has_default && !kind.starts_with("var_") {
                        problems.push(format!("unexpected required parameter {name}"));
                    }
                }
                let (_, kind, has_default) = &found[at + offset];
                if kind != param.kind.as_str() {
                    problems.push(format!(
                        "{} is {kind}, expected {}",
                        param.name,
                        param.kind.as_str()
                    ));
                }
                if *has_default != param.has_default {
                    let say = |d: bool| if d { "has a default" } else { "is required" };
                    problems.push(format!(
                        "{} {}, expected it {}",
                        param.name,
                        say(*has_default),
                        say(param.has_default)
                    ));
                }
                at += offset + 1;
            }
        }
    }
    for (name, kind, has_default) in &found[at.min(found.len())..] {
        if !has_default && !kind.starts_with("var_") {
            problems.push(format!("unexpected required parameter {name}"));
        }
    }
    if !problems.is_empty() {
        misses.push(format!(
            "{item}: {}; expected {want}, found {text}",
            problems.join(", ")
        ));
    }
    Ok(())
}

/// The expected signature in inspect's notation, `(a, b=..., *, c=...)`.
pub fn render_expected(params: &[ParamSpec]) -> String {
    let mut parts = Vec::new();
    let mut star = false;
    for p in params {
        if p.kind == ParamKind::KeywordOnly && !star {
            parts.push("*".to_owned());
            star = true;
        }
        let default = if p.has_default { "=..." } else { "" };
        parts.push(format!("{}{default}", p.name));
    }
    format!("({})", parts.join(", "))
}

#[cfg(test)]
mod tests {
    use super::*;

    const fn p(name: &'static str, kind: ParamKind, has_default: bool) -> ParamSpec {
        ParamSpec {
            name,
            kind,
            has_default,
        }
    }

    #[test]
    fn expected_signatures_read_like_inspect() {
        let ps = [
            p("data", ParamKind::Positional, false),
            p("type", ParamKind::KeywordOnly, true),
            p("stage", ParamKind::KeywordOnly, true),
        ];
        assert_eq!(render_expected(&ps), "(data, *, type=..., stage=...)");
        assert_eq!(render_expected(&[]), "()");
    }
}
