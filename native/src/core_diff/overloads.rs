//! Whether each overload of an older core is still taken by a newer one's, and why not.

use super::{Changes, Impact};
use mooncake_sos_manifest::signature::{CallShape, fits};
use mooncake_sos_manifest::signature::{OverloadParam, OverloadParamKind, overload_params};
use std::collections::BTreeSet;

/// Each old overload must still be taken: every call of a set that exercises it (see
/// [`calls`]) fits some new overload. A list that does not parse, or an empty one, cannot be
/// judged and is left out.
pub(super) fn overloads(out: &mut Changes, path: &str, old: &[String], new: &[String]) {
    if old == new {
        return;
    }
    let parsed = |list: &[String]| -> Option<Vec<Vec<OverloadParam>>> {
        list.iter().map(|o| overload_params(o).ok()).collect()
    };
    let (Some(old_params), Some(new_params)) = (parsed(old), parsed(new)) else {
        return;
    };
    if new_params.is_empty() {
        return;
    }
    let mut broken = false;
    for (text, params) in old.iter().zip(&old_params) {
        let refused = calls(params)
            .into_iter()
            .find(|call| !new_params.iter().any(|n| takes(n, params, call)));
        if let Some(call) = refused {
            broken = true;
            let why = explain(params, &new_params, &call);
            out.push(
                Impact::Breaking,
                path,
                format!("overload `({text})` no longer accepted: {why}"),
            );
        }
    }
    if !broken {
        let now = new
            .iter()
            .map(|o| format!("({o})"))
            .collect::<Vec<_>>()
            .join(" | ");
        out.push(Impact::Compatible, path, format!("overloads now {now}"));
    }
}

/// Whether `new` takes `call` the way `old` did: it fits, and its positional arguments land
/// the old one was positional-only, whose names no caller sees.
/// both sides are positional-only, whose names no caller sees.
fn takes(new: &[OverloadParam], old: &[OverloadParam], call: &CallShape) -> bool {
    let slots = |ps: &[OverloadParam]| -> Vec<(String, bool)> {
        ps.iter()
            .filter(|p| {
                matches!(
                    p.kind,
                    OverloadParamKind::PositionalOnly | OverloadParamKind::Positional
                )
            })
            .map(|p| (p.name.clone(), p.kind == OverloadParamKind::PositionalOnly))
            .collect()
    };
    let (was, now) = (slots(old), slots(new));
    let same_slots = was
        .iter()
        .zip(&now)
        .take(call.positional)
        .all(|((a, a_only), (b, _))| a == b || *a_only);
    same_slots && fits(new, call).is_ok()
}

/// Calls an overload takes, enough to tell when another does not: the fewest arguments; every
/// positional slot filled with every keyword-only one; everything that can go by keyword by
/// keyword; each optional parameter alone beside the required ones; and, for `*args` /
/// `**kwargs`, one argument more / one unknown keyword.
fn calls(params: &[OverloadParam]) -> Vec<CallShape> {
    use OverloadParamKind::*;
    let slots: Vec<&OverloadParam> = params
        .iter()
        .filter(|p| matches!(p.kind, PositionalOnly | Positional))
        .collect();
    let required_positional = slots.iter().take_while(|p| !p.has_default).count();
    let keyword_only = |all: bool| -> Vec<String> {
        params
            .iter()
            .filter(|p| p.kind == KeywordOnly && (all || !p.has_default))
            .map(|p| p.name.clone())
            .collect()
    };
    let shape = |positional: usize, mut keywords: Vec<String>| {
        keywords.sort();
        CallShape {
            positional,
            keywords,
            ..CallShape::default()
        }
    };
    let mut calls = vec![
        shape(required_positional, keyword_only(false)),
        shape(slots.len(), keyword_only(true)),
    ];
    let positional_only = slots.iter().filter(|p| p.kind == PositionalOnly).count();
    let mut by_name = keyword_only(true);
    by_name.extend(slots.iter().skip(positional_only).map(|p| p.name.clone()));
    calls.push(shape(positional_only, by_name));
    for (i, optional) in slots.iter().enumerate().skip(required_positional) {
        if optional.kind == Positional {
            let mut keywords = keyword_only(false);
            keywords.push(optional.name.clone());
            calls.push(shape(required_positional, keywords));
        } else {
            calls.push(shape(i + 1, keyword_only(false)));
        }
    }
    for p in params
        .iter()
        .filter(|p| p.kind == KeywordOnly && p.has_default)
    {
        let mut keywords = keyword_only(false);
        keywords.push(p.name.clone());
        calls.push(shape(required_positional, keywords));
    }
    if params.iter().any(|p| p.kind == VarPositional) {
        calls.push(shape(slots.len() + 1, keyword_only(false)));
    }
    if params.iter().any(|p| p.kind == VarKeyword) {
        let mut keywords = keyword_only(false);
        keywords.push("<any keyword>".to_owned());
        calls.push(shape(required_positional, keywords));
    }
    calls
}

/// Why the new overloads refuse `call`, told against the new overload most like the old one
/// (the one sharing most parameter names): what was removed, renamed, reordered or made
/// required; else the call and the first refusal.
fn explain(old: &[OverloadParam], new: &[Vec<OverloadParam>], call: &CallShape) -> String {
    let names =
        |ps: &[OverloadParam]| -> BTreeSet<String> { ps.iter().map(|p| p.name.clone()).collect() };
    let old_names = names(old);
    let Some(closest) = new.iter().max_by_key(|n| {
        (
            names(n).intersection(&old_names).count(),
            usize::MAX - n.len(),
        )
    }) else {
        return "no overload left".to_owned();
    };
    if !old_names.is_empty() && names(closest).is_disjoint(&old_names) {
        return "no overload has any of its parameters".to_owned();
    }
    let positions = |ps: &[OverloadParam]| -> Vec<String> {
        ps.iter()
            .filter(|p| {
                matches!(
                    p.kind,
                    OverloadParamKind::PositionalOnly | OverloadParamKind::Positional
                )
            })
            .map(|p| p.name.clone())
            .collect()
    };
    let (old_pos, new_pos) = (positions(old), positions(closest));
    let mut reasons = Vec::new();
    for (i, p) in old.iter().enumerate() {
        match closest.iter().find(|n| n.name == p.name) {
            None => match new_pos.get(i).filter(|n| !old_names.contains(*n)) {
                Some(n) if old_pos.get(i) == Some(&p.name) => {
                    reasons.push(format!("`{}` renamed to `{n}`", p.name));
                }
                _ => reasons.push(format!("`{}` removed", p.name)),
            },
            Some(n) => {
                if p.has_default && !n.has_default {
                    reasons.push(format!("`{}` made required", p.name));
                }
                let at = |list: &[String]| list.iter().position(|x| *x == p.name);
                if let (Some(was), Some(is)) = (at(&old_pos), at(&new_pos))
                    && was != is
                {
                    reasons.push(format!(
                        "`{}` moved from position {} to {}",
                        p.name,
                        was + 1,
                        is + 1
                    ));
                } else if n.kind != p.kind {
                    reasons.push(format!(
                        "`{}` is now {:?} (was {:?})",
                        p.name, n.kind, p.kind
                    ));
                }
            }
        }
    }
    for n in closest.iter().filter(|n| !old_names.contains(&n.name)) {
        let required = !n.has_default
            && !matches!(
                n.kind,
                OverloadParamKind::VarPositional | OverloadParamKind::VarKeyword
            );
        let renamed = reasons
            .iter()
            .any(|r| r.ends_with(&format!("renamed to `{}`", n.name)));
        if required && !renamed {
            reasons.push(format!("new required `{}`", n.name));
        }
    }
    if reasons.is_empty() {
        let why = fits(closest, call)
            .err()
            .map(|m| m.to_string())
            .unwrap_or_default();
        return format!("{call} refused ({why})");
    }
    reasons.join(", ")
}
