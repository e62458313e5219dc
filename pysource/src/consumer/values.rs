//! A consumer's literal arguments against the domains api.toml declares (`domain = [...]`):
//! `get(ref, type="tensor")`, `FieldSchema("ndarry")`. Only literals are judged: a name, a
//! call or an f-string may hold anything, and is never a finding.

use crate::domain::{one_of, repr};
use mooncake_sos_contract::model::python::parse_expr;
use mooncake_sos_contract::model::{Param, ParamKind, PyLiteral};
use std::collections::BTreeMap;

/// A literal outside its parameter's domain.
pub(super) struct Outside {
    pub param: String,
    /// `one of 'a', 'b'`.
    pub expected: String,
    /// The value: a string as Python's repr writes it, another literal as written.
    pub found: String,
}

/// The literal arguments of a call (`positional` by position, after `skip` leading ones
/// that are not the callee's parameters; `keywords` by name) that lie outside their
/// parameter's domain, positional ones first.
pub(super) fn outside_domains(
    params: &[Param],
    positional: &BTreeMap<usize, String>,
    keywords: &BTreeMap<String, String>,
    skip: usize,
) -> Vec<Outside> {
    let by_position: Vec<&Param> = params
        .iter()
        .filter(|p| p.kind == ParamKind::Positional)
        .collect();
    let passed = positional
        .iter()
        .filter_map(|(i, text)| Some((*by_position.get(i.checked_sub(skip)?)?, text)))
        .chain(
            keywords
                .iter()
                .filter_map(|(name, text)| Some((params.iter().find(|p| &p.name == name)?, text))),
        );
    let mut out = Vec::new();
    for (param, text) in passed {
        let Some(domain) = &param.domain else {
            continue;
        };
        // The walk keeps only literals, so this parses; if not, there is nothing to judge.
        let Ok(expr) = parse_expr(text) else {
            continue;
        };
        let found = match &expr.literal {
            Some(PyLiteral::Str(s)) if domain.contains(s) => continue,
            Some(PyLiteral::Str(s)) => repr(s),
            _ => expr.text,
        };
        out.push(Outside {
            param: param.name.clone(),
            expected: one_of(Some(domain)),
            found,
        });
    }
    out
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
