//! What a subject of the consumer's uses names in the manifest: the rules' shared lookup.

use mooncake_sos_manifest::model::{Api, Param, ParamKind, SymbolKind};

/// What a subject names in the manifest.
pub(crate) enum Declared<'a> {
    /// A callable with these parameters; `static_method`: a call through its class passes
    /// no instance first.
    Callable {
        params: &'a [Param],
        static_method: bool,
    },
    /// A dataclass field.
    Value,
}

/// `export_ref`, `MooncakeBundleTransfer`, `MooncakeBundleTransfer.put`, `FieldSchema.codec`.
pub(crate) fn declared<'a>(api: &'a Api, subject: &str) -> Option<Declared<'a>> {
    let (head, member) = match subject.split_once('.') {
        Some((h, m)) => (h, Some(m)),
        None => (subject, None),
    };
    let symbol = api.symbols.iter().find(|s| s.name == head)?;
    let callable = |params, static_method| Declared::Callable {
        params,
        static_method,
    };
    match (&symbol.kind, member) {
        (SymbolKind::Function { params, .. } | SymbolKind::Alias { params, .. }, None) => {
            Some(callable(params, true))
        }
        (SymbolKind::Class { init, .. }, None) => Some(callable(init, true)),
        (SymbolKind::Dataclass { fields, .. }, None) => Some(callable(fields, true)),
        (SymbolKind::Class { methods, .. }, Some(m)) => methods
            .iter()
            .find(|x| x.name == m)
            .map(|x| callable(&x.params, x.staticmethod)),
        (SymbolKind::Dataclass { fields, .. }, Some(m)) => fields
            .iter()
            .any(|f| f.name == m)
            .then_some(Declared::Value),
        _ => None,
    }
}

/// The names a use of `subject` could have meant: the symbols, or the members of its class.
pub(super) fn neighbours<'a>(api: &'a Api, subject: &str) -> Vec<&'a str> {
    let Some((head, _)) = subject.split_once('.') else {
        return api.symbols.iter().map(|s| s.name.as_str()).collect();
    };
    let Some(symbol) = api.symbols.iter().find(|s| s.name == head) else {
        return Vec::new();
    };
    match &symbol.kind {
        SymbolKind::Class { methods, .. } => methods.iter().map(|m| m.name.as_str()).collect(),
        SymbolKind::Dataclass { fields, .. } => fields.iter().map(|f| f.name.as_str()).collect(),
        _ => Vec::new(),
    }
}

/// `(data, *, type=..., namespace=...)`: the parameters as a misfit shows them.
pub(super) fn signature(params: &[Param]) -> String {
    let mut out = Vec::new();
    let mut star = false;
    for p in params {
        if p.kind == ParamKind::KeywordOnly && !star {
            out.push("*".to_owned());
            star = true;
        }
        out.push(match &p.default {
            Some(_) => format!("{}=...", p.name),
            None => p.name.clone(),
        });
    }
    out.join(", ")
}
