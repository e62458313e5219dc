//! `api-value`: a literal argument outside the domain api.toml declares for its parameter
//! (`get(ref, type="tensor")`, `FieldSchema("ndarry")`). The literal may reach the call
//! directly or where its value is certain (a name bound once, a module constant, an arm of a
//! conditional expression, an item of a container); a name, a call, a parameter or an
//! f-string may hold anything, and is never a finding.

use super::{Finding, Rule, nearest};
use crate::domain::{one_of, repr};
use crate::surface::api_use::{Arg, ConsumerUse};
use mooncake_sos_manifest::model::python::parse_expr;
use mooncake_sos_manifest::model::{Param, ParamKind, PyLiteral};

/// One finding per literal outside its parameter's domain, positional arguments first; the
/// first `skip` positional arguments are not the callee's parameters (the instance of a
/// method called through its class).
pub fn check(u: &ConsumerUse, params: &[Param], args: &[Arg], skip: usize) -> Vec<Finding> {
    let by_position: Vec<&Param> = params
        .iter()
        .filter(|p| p.kind == ParamKind::Positional)
        .collect();
    let mut out = Vec::new();
    for arg in args {
        let param = match (&arg.keyword, arg.position) {
            (Some(k), _) => params.iter().find(|p| &p.name == k),
            (None, Some(i)) => i
                .checked_sub(skip)
                .and_then(|i| by_position.get(i).copied()),
            (None, None) => None,
        };
        let Some((param, domain)) = param.and_then(|p| Some((p, p.domain.as_ref()?))) else {
            continue;
        };
        for text in &arg.literals {
            // Literals are kept as written, so this parses; if not, there is nothing to judge.
            let Ok(expr) = parse_expr(text) else {
                continue;
            };
            let (found, near) = match &expr.literal {
                Some(PyLiteral::Str(s)) if domain.contains(s) => continue,
                Some(PyLiteral::Str(s)) => (repr(s), nearest(s, domain.iter().map(String::as_str))),
                _ => (expr.text, None),
            };
            out.push(
                Finding::new(Rule::ApiValue, &u.subject, &param.name)
                    .at(arg.value.0, arg.value.1)
                    .expected(one_of(Some(domain)), found)
                    .suggest(near.map(|n| repr(&n))),
            );
        }
    }
    out
}

#[cfg(test)]
#[path = "api_value_tests.rs"]
mod tests;
