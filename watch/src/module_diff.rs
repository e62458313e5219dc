//! How a release's module differs from a baseline module (the pinned one), where the consumer
//! can feel it: the parameters and defaults of every symbol api.toml declares, and the
//! module's constants (`DEFAULT_BUNDLE_CHUNK_BYTES`: a default the consumer relies on).

use mooncake_sos_manifest::model::{Api, SymbolKind};
use mooncake_sos_pysource::extract::{BindingKind, FunctionFacts, ModuleFacts, ParamFacts};
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// One difference.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct Change {
    /// `MooncakeBundleTransfer.get`, or the constant's name.
    pub subject: String,
    /// `added`, `removed` or `changed`.
    pub change: String,
    /// `parameter`, `constant` or `symbol`.
    pub what: String,
    /// `keyword-only parameter batch_slices=None`, `512 * 1024 * 1024 -> 64 * 1024 * 1024`.
    pub detail: String,
}

impl Change {
    pub fn line(&self) -> String {
        match self.what.as_str() {
            "constant" => format!(
                "{} (constant): {} {}",
                self.subject, self.change, self.detail
            ),
            _ => format!("{}: {} {}", self.subject, self.change, self.detail),
        }
    }

    /// Whether a caller written against the baseline can break (a removed or changed
    /// parameter, a parameter added without a default); an added optional parameter and a
    /// changed constant cannot break a call, though a constant can change behaviour.
    pub fn breaks_calls(&self) -> bool {
        match (self.what.as_str(), self.change.as_str()) {
            ("symbol", "removed") => true,
            ("parameter", "added") => self.detail.ends_with("without a default"),
            ("parameter", _) => true,
            _ => false,
        }
    }
}

/// Every difference from `base` to `new`, symbols in manifest order, then constants by name.
pub fn diff(api: &Api, base: &ModuleFacts, new: &ModuleFacts) -> Vec<Change> {
    let mut out = Vec::new();
    for symbol in &api.symbols {
        let name = &symbol.name;
        match &symbol.kind {
            SymbolKind::Dataclass { .. } => {
                let fields = |f: &ModuleFacts| match f.bindings.get(name).map(|b| &b.kind) {
                    Some(BindingKind::Class(c)) => Some(c.fields.clone()),
                    _ => None,
                };
                params(&mut out, name, fields(base), fields(new));
            }
            SymbolKind::Class { methods, .. } => {
                let method = |f: &ModuleFacts, m: &str| match f.bindings.get(name).map(|b| &b.kind)
                {
                    Some(BindingKind::Class(c)) => c.methods.get(m).map(own_params),
                    _ => None,
                };
                let mut names = vec!["__init__".to_owned()];
                names.extend(methods.iter().map(|m| m.name.clone()));
                for m in names {
                    let subject = format!("{name}.{m}");
                    params(&mut out, &subject, method(base, &m), method(new, &m));
                }
            }
            SymbolKind::Function { .. } | SymbolKind::Alias { .. } => {
                params(&mut out, name, function(base, name), function(new, name));
            }
        }
    }
    let (a, b) = (constants(base), constants(new));
    for (name, old) in &a {
        match b.get(name) {
            None => out.push(change(name, "removed", "constant", format!("({old})"))),
            Some(now) if now != old => out.push(change(
                name,
                "changed",
                "constant",
                format!("{old} -> {now}"),
            )),
            _ => {}
        }
    }
    for (name, now) in &b {
        if !a.contains_key(name) {
            out.push(change(name, "added", "constant", format!("= {now}")));
        }
    }
    out
}

fn change(subject: &str, change: &'static str, what: &'static str, detail: String) -> Change {
    Change {
        subject: subject.to_owned(),
        change: change.to_owned(),
        what: what.to_owned(),
        detail,
    }
}

/// A function's parameters, or an alias's target's (`export_ref = export_dataproto_ref`).
fn function(facts: &ModuleFacts, name: &str) -> Option<Vec<ParamFacts>> {
    match &facts.bindings.get(name)?.kind {
        BindingKind::Function(f) => Some(own_params(f)),
        BindingKind::Alias(target) if target != name => function(facts, target),
        _ => None,
    }
}

/// Without the `self` / `cls` a method receives.
fn own_params(f: &FunctionFacts) -> Vec<ParamFacts> {
    let skip = (!f.staticmethod
        && f.params
            .first()
            .is_some_and(|p| p.name == "self" || p.name == "cls")) as usize;
    f.params[skip..].to_vec()
}

fn describe(p: &ParamFacts) -> String {
    let default = p
        .default
        .as_ref()
        .map_or(" without a default".to_owned(), |d| format!("={}", d.text));
    format!("{} parameter {}{default}", p.kind.as_str(), p.name)
}

fn params(
    out: &mut Vec<Change>,
    subject: &str,
    base: Option<Vec<ParamFacts>>,
    new: Option<Vec<ParamFacts>>,
) {
    let (base, new) = match (base, new) {
        (Some(b), Some(n)) => (b, n),
        (Some(_), None) => {
            return out.push(change(subject, "removed", "symbol", "(the symbol)".into()));
        }
        (None, Some(_)) => {
            return out.push(change(subject, "added", "symbol", "(the symbol)".into()));
        }
        (None, None) => return,
    };
    for (i, p) in base.iter().enumerate() {
        match new.iter().position(|q| q.name == p.name) {
            None => out.push(change(subject, "removed", "parameter", describe(p))),
            Some(j) => {
                let q = &new[j];
                let canon = |p: &ParamFacts| p.default.as_ref().map(|d| d.canonical.clone());
                if p.kind != q.kind || canon(p) != canon(q) {
                    let detail = format!("{} -> {}", describe(p), describe(q));
                    out.push(change(subject, "changed", "parameter", detail));
                } else if i != j && p.kind.as_str() == "positional" {
                    let detail = format!(
                        "parameter {} moved from position {} to {}",
                        p.name,
                        i + 1,
                        j + 1
                    );
                    out.push(change(subject, "changed", "parameter", detail));
                }
            }
        }
    }
    for q in &new {
        if !base.iter().any(|p| p.name == q.name) {
            out.push(change(subject, "added", "parameter", describe(q)));
        }
    }
}

/// Module-level public `NAME = value` assignments whose name is all capitals, the value's
/// whitespace collapsed (a reformatted value is no change).
fn constants(facts: &ModuleFacts) -> BTreeMap<&str, String> {
    facts
        .bindings
        .iter()
        .filter_map(|(name, b)| match &b.kind {
            BindingKind::Value(text)
                if !name.starts_with('_')
                    && name.chars().any(|c| c.is_ascii_uppercase())
                    && name
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || c == '_') =>
            {
                Some((name.as_str(), collapse(text)))
            }
            _ => None,
        })
        .collect()
}

fn collapse(text: &str) -> String {
    let joined = text.split_whitespace().collect::<Vec<_>>().join(" ");
    // `( x` and `x )` from a value broken over lines.
    joined
        .replace("( ", "(")
        .replace("[ ", "[")
        .replace("{ ", "{")
        .replace(" )", ")")
        .replace(" ]", "]")
        .replace(" }", "}")
        .replace(",)", ")")
}

#[cfg(test)]
mod tests {
    use super::diff;
    use mooncake_sos_pysource::extract::extract;
    use mooncake_sos_pysource::source::ModuleSource;

    fn facts(text: &str) -> mooncake_sos_pysource::extract::ModuleFacts {
        extract(&ModuleSource::from_bytes("m.py", text.as_bytes().to_vec()).unwrap()).unwrap()
    }

    #[test]
    fn names_parameter_default_and_constant_changes_of_declared_symbols_only() {
        let api = mooncake_sos_manifest::load_str(
            "api.toml",
            &std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/../api.toml")).unwrap(),
        )
        .unwrap();
        let base = "DEFAULT_BUNDLE_CHUNK_BYTES = 512 * 1024**2\nclass MooncakeBundleTransfer:\n    def get(self, ref, *, type='dataproto', rows=None): ...\n    def put(self, data, *, stage='default'): ...\ndef helper(x): ...\n";
        let new = "DEFAULT_BUNDLE_CHUNK_BYTES = 64 * 1024**2\nLIMIT = 3\nclass MooncakeBundleTransfer:\n    def get(self, ref, *, type='dict', rows=None, batch_slices=None): ...\n    def put(self, data): ...\ndef helper(x, y): ...\n";
        let lines: Vec<String> = diff(&api, &facts(base), &facts(new))
            .iter()
            .map(|c| c.line())
            .collect();
        assert_eq!(
            lines,
            [
                "MooncakeBundleTransfer.put: removed keyword-only parameter stage='default'",
                "MooncakeBundleTransfer.get: changed keyword-only parameter type='dataproto' -> keyword-only parameter type='dict'",
                "MooncakeBundleTransfer.get: added keyword-only parameter batch_slices=None",
                "DEFAULT_BUNDLE_CHUNK_BYTES (constant): changed 512 * 1024**2 -> 64 * 1024**2",
                "LIMIT (constant): added = 3",
            ]
        );
    }
}
