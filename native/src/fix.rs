//! `verify --fix`: the declarations api.toml lacks for a module's derived surface, planned from
//! facts the tool already has — each use (where, required or not, its accesses and call
//! shapes) and the images' core records (the overloads that serve the calls, whether an
//! attribute is read-write) — and what needs a person instead (a use an image's core cannot
//! serve, a call that no longer fits its declared overload, a required use declared
//! optional, a computed name). Pure: the caller writes the plan into api.toml.

use crate::images::{ImageFinding, ImageSide};
use mooncake_sos_manifest::core_record::{CoreSurface, Instance, Member};
use mooncake_sos_manifest::edit::{Attribute, Edit};
use mooncake_sos_manifest::signature::overload_params;
use mooncake_sos_manifest::signature::{CallShape, fits};
use mooncake_sos_pysource::surface::{Access, On, SurfaceReport, Target, Use};
use std::collections::BTreeMap;

/// What `--fix` would do: the edits, or why it must not (then nothing is written).
#[derive(Debug, Default)]
pub struct Plan {
    pub edits: Vec<Edit>,
    /// One line each: where, what, and the choices a person has.
    pub refusals: Vec<String>,
}

/// Plans the declarations `report` (the module against api.toml) and `findings` (its uses
/// against each image's core) call for. `source` is the module's text (for the function a
/// reason names), `file` its file name as reasons cite it.
pub fn plan(
    report: &SurfaceReport,
    findings: &[ImageFinding],
    sides: &[ImageSide],
    source: &str,
    file: &str,
    prune: bool,
) -> Plan {
    let mut plan = Plan::default();
    for f in findings {
        plan.refusals.push(format!(
            "{}: the module needs what an image's core does not serve; stay on the current pin, \
             or move the image to a core that serves it (watch, adopt)",
            f.line()
        ));
    }
    let mut by_path: BTreeMap<&str, Vec<&Use>> = BTreeMap::new();
    for u in &report.uses {
        by_path.entry(u.subject()).or_default().push(u);
    }
    for failure in &report.failures {
        let at = failure
            .line
            .map_or(report.file.clone(), |l| format!("{}:{l}", report.file));
        let line = format!(
            "{at}: {}: {}: expected {}, found {}",
            failure.subject, failure.what, failure.expected, failure.found
        );
        let (kind, path) = failure
            .subject
            .split_once(' ')
            .unwrap_or(("", &failure.subject));
        let uses = by_path.get(path).map(Vec::as_slice).unwrap_or_default();
        let edit = match (kind, failure.what.as_str()) {
            ("native", "undeclared") => native(path, uses, sides, source, file),
            ("sibling", "undeclared") => Ok(sibling(path, uses, source, file)),
            ("native", "access") => widen(path, sides),
            _ => Err(format!(
                "{line}: a declaration changed meaning; a person decides (keep the pin, or edit \
                 api.toml by hand)"
            )),
        };
        match edit {
            Ok(e) => plan.edits.push(e),
            Err(why) if why.starts_with(&at) => plan.refusals.push(why),
            Err(why) => plan.refusals.push(format!("{line}: {why}")),
        }
    }
    if prune {
        for w in report.warnings.iter().filter(|w| w.what == "unused") {
            match w.subject.split_once(' ') {
                Some(("native", path)) => plan.edits.push(Edit::RemoveNative { path: path.into() }),
                Some(("sibling", m)) => plan.edits.push(Edit::RemoveSibling { module: m.into() }),
                _ => {}
            }
        }
    }
    plan
}

/// The first use a reason cites: a required one if any.
fn first<'a>(uses: &[&'a Use]) -> Option<&'a Use> {
    uses.iter().find(|u| u.required()).or(uses.first()).copied()
}

/// `file:line, function` of the first use.
fn reason(uses: &[&Use], source: &str, file: &str) -> String {
    let Some(u) = first(uses) else {
        return format!("used in {file}");
    };
    match enclosing_function(source, u.line) {
        Some(f) => format!("{file}:{}, {f}", u.line),
        None => format!("{file}:{}, at module level", u.line),
    }
}

/// The name of the innermost `def` around 1-based `line`, by indentation.
fn enclosing_function(source: &str, line: usize) -> Option<&str> {
    let lines: Vec<&str> = source.lines().collect();
    let indent = |l: &str| l.len() - l.trim_start().len();
    let mut limit = indent(lines.get(line.checked_sub(1)?)?);
    for l in lines[..line - 1].iter().rev() {
        let trimmed = l.trim_start();
        // Blank lines, comments and the closing line of a bracketed signature do not
        // open a block.
        let closing = trimmed.starts_with([')', ']', '}']);
        if trimmed.is_empty() || trimmed.starts_with('#') || closing || indent(l) >= limit {
            continue;
        }
        let def = trimmed
            .strip_prefix("async def ")
            .or_else(|| trimmed.strip_prefix("def "));
        if let Some(rest) = def {
            return rest
                .split(|c: char| !(c.is_alphanumeric() || c == '_'))
                .next();
        }
        limit = indent(l);
    }
    None
}

fn optional(uses: &[&Use]) -> bool {
    uses.iter().all(|u| !u.required())
}

fn sibling(module: &str, uses: &[&Use], source: &str, file: &str) -> Edit {
    Edit::AddSibling {
        module: module.into(),
        optional: optional(uses),
        reason: reason(uses, source, file),
    }
}

/// What a core has under a dotted path of its native module.
enum Found<'a> {
    Callable(&'a [String]),
    Attribute { read: bool, write: bool },
}

fn lookup<'a>(core: &'a CoreSurface, path: &str) -> Option<Found<'a>> {
    let Some((owner, name)) = path.split_once('.') else {
        if let Some(f) = core.functions.get(path) {
            return Some(Found::Callable(&f.overloads));
        }
        let class = core.classes.get(path)?;
        return match class.members.get("__init__").and_then(Member::overloads) {
            Some(o) => Some(Found::Callable(o)),
            None => Some(Found::Callable(&[])),
        };
    };
    let class = core.classes.get(owner)?;
    match class.members.get(name) {
        Some(Member::Property { readonly }) => Some(Found::Attribute {
            read: true,
            write: !readonly,
        }),
        Some(m) => m.overloads().map(Found::Callable),
        None => match &class.instance {
            Instance::Made { members, .. } => members.get(name).map(|a| Found::Attribute {
                read: a.read,
                write: a.write,
            }),
            Instance::Failed { .. } => None,
        },
    }
}

/// The accesses `uses` make of an attribute, as api.toml spells them.
fn access_of(uses: &[&Use]) -> &'static str {
    let read = uses
        .iter()
        .any(|u| matches!(u.access, Access::Read | Access::Probe));
    let write = uses.iter().any(|u| u.access == Access::Write);
    match (read, write) {
        (true, true) => "read-write",
        (false, true) => "write",
        _ => "read",
    }
}

fn shapes<'a>(uses: &[&'a Use]) -> Vec<&'a CallShape> {
    uses.iter()
        .filter_map(|u| match &u.access {
            Access::Call(shape) => Some(shape),
            _ => None,
        })
        .collect()
}

/// The first overload every call fits (pybind11 tries them in order).
fn fitting<'a>(overloads: &'a [String], calls: &[&CallShape]) -> Option<&'a String> {
    overloads.iter().find(|o| {
        overload_params(o).is_ok_and(|params| calls.iter().all(|c| fits(&params, c).is_ok()))
    })
}

fn native(
    path: &str,
    uses: &[&Use],
    sides: &[ImageSide],
    source: &str,
    file: &str,
) -> Result<Edit, String> {
    let reason = reason(uses, source, file);
    let optional = optional(uses);
    let found = sides.iter().find_map(|s| lookup(&s.core, path));
    let on_instance = uses.iter().any(|u| {
        matches!(
            u.target,
            Target::Native {
                on: On::Instance,
                ..
            }
        )
    });
    match found {
        Some(Found::Callable(overloads)) => {
            let calls = shapes(uses);
            let overload = if overloads.is_empty() {
                None
            } else {
                let o = fitting(overloads, &calls).ok_or_else(|| {
                    format!(
                        "no overload of the core fits the module's calls ({}): the module and \
                         the core disagree; stay on the pin, or move the image",
                        overloads.join(" | ")
                    )
                })?;
                Some(o.clone())
            };
            Ok(Edit::AddNative {
                object: path.into(),
                attribute: None,
                overload,
                optional,
                reason,
            })
        }
        Some(Found::Attribute { .. }) | None if !shapes(uses).is_empty() => Err(
            "called, but no image's core has it as a callable: stay on the pin, or move the \
             image to a core that has it"
                .into(),
        ),
        Some(Found::Attribute { .. }) | None => {
            // An attribute no core has is declarable only as an optional probe or read.
            if found.is_none() && !optional {
                return Err(
                    "required, and no image's core has it: stay on the pin, or move \
                            the image to a core that has it"
                        .into(),
                );
            }
            let (object, name) = path.rsplit_once('.').ok_or_else(|| {
                "a module-level name no image's core has: stay on the pin, or move the image"
                    .to_owned()
            })?;
            Ok(Edit::AddNative {
                object: object.into(),
                attribute: Some(Attribute {
                    name: name.into(),
                    instance: on_instance,
                    access: access_of(uses),
                }),
                overload: None,
                optional,
                reason,
            })
        }
    }
}

/// A declared attribute used in more ways: read-write if every core lets it be written and read.
fn widen(path: &str, sides: &[ImageSide]) -> Result<Edit, String> {
    let served = sides.iter().all(|s| {
        matches!(
            lookup(&s.core, path),
            Some(Found::Attribute {
                read: true,
                write: true
            })
        )
    });
    if !served {
        return Err(
            "an access api.toml does not declare, which not every image's core allows: \
                    a person decides"
                .into(),
        );
    }
    Ok(Edit::SetAccess {
        path: path.into(),
        access: "read-write",
    })
}

#[cfg(test)]
mod tests {
    use super::enclosing_function;

    #[test]
    fn the_enclosing_function_is_found_by_indentation() {
        let src = "def a():\n    x = 1\n\nclass C:\n    def put(self):\n        if x:\n            y()\n    z = 2\n    def get(\n        self,\n    ) -> None:\n        w()\n";
        assert_eq!(enclosing_function(src, 2), Some("a"));
        assert_eq!(enclosing_function(src, 7), Some("put"));
        assert_eq!(enclosing_function(src, 8), None);
        assert_eq!(enclosing_function(src, 12), Some("get"));
    }
}
