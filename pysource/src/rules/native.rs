//! The native rules: a derived surface (the module's, or a consumer file's) against what
//! api.toml declares. Every use must be declared (`native-undeclared`), a use made unguarded
//! must not be declared optional, accesses and call shapes must fit the declaration
//! (`native-use`); a declaration no use of the module needs is a warning (`native-unused`;
//! `by = "consumer"` ones excepted).

use super::{Finding, Rule, nearest};
use crate::surface::{Access, Surface, Target, Use};
use mooncake_sos_manifest::model::native::{
    MemberKind, NativeMember, NativeSurface, NeededBy, Usage,
};
use mooncake_sos_manifest::signature::CallShape;
use mooncake_sos_manifest::signature::{fits, misfit, overload_params};
use serde::Serialize;
use std::collections::{BTreeMap, BTreeSet};

/// The surface of one module and how it compares with the manifest.
#[derive(Clone, Debug, Serialize)]
pub struct SurfaceReport {
    pub file: String,
    pub sha256: String,
    pub native_module: String,
    pub uses: Vec<Use>,
    /// Each makes `verify` exit 1.
    pub failures: Vec<Finding>,
    pub warnings: Vec<Finding>,
}

impl SurfaceReport {
    pub fn ok(&self) -> bool {
        self.failures.is_empty()
    }

    /// `FILE:LINE: subject: what: expected X, found Y`, one per failure.
    pub fn failure_lines(&self) -> Vec<String> {
        self.failures.iter().map(|f| self.line_of(f, "")).collect()
    }

    /// `FILE: warning: subject: what: expected X, found Y`, one per warning.
    pub fn warning_lines(&self) -> Vec<String> {
        self.warnings
            .iter()
            .map(|f| self.line_of(f, "warning: "))
            .collect()
    }

    fn line_of(&self, f: &Finding, level: &str) -> String {
        let at = match f.line {
            Some(line) => format!("{}:{line}", self.file),
            None => self.file.clone(),
        };
        format!(
            "{at}: {level}{}: {}: expected {}, found {}",
            f.subject, f.what, f.expected, f.found
        )
    }

    /// Distinct native members and sibling modules the module uses.
    pub fn counts(&self) -> (usize, usize) {
        let mut native = BTreeSet::new();
        let mut siblings = BTreeSet::new();
        for u in &self.uses {
            match &u.target {
                Target::Sibling { module } => siblings.insert(module.as_str()),
                _ => native.insert(u.subject()),
            };
        }
        (native.len(), siblings.len())
    }
}

/// Compares `surface` with the declarations in `declared`; an undeclared member is one
/// finding, at its first use, naming the other lines.
pub fn compare(declared: &NativeSurface, surface: Surface) -> SurfaceReport {
    compare_in(declared, surface, false)
}

/// [`compare`] with a finding at every use of an undeclared member (the consumer scan's:
/// each place is one to fix).
pub fn compare_each(declared: &NativeSurface, surface: Surface) -> SurfaceReport {
    compare_in(declared, surface, true)
}

fn compare_in(declared: &NativeSurface, surface: Surface, each: bool) -> SurfaceReport {
    let mut failures = Vec::new();
    let mut warnings = Vec::new();
    // Uses grouped by what they name, in name order.
    let mut native: BTreeMap<&str, Vec<&Use>> = BTreeMap::new();
    let mut siblings: BTreeMap<&str, Vec<&Use>> = BTreeMap::new();
    for u in &surface.uses {
        match &u.target {
            Target::Native { path, .. } => native.entry(path).or_default().push(u),
            Target::Sibling { module } => siblings.entry(module).or_default().push(u),
            // Nothing in api.toml names an extension module's import: the members used of it
            // are what is declared and checked.
            Target::Extension { .. } => {}
            Target::Dynamic { owner, .. } => {
                let owner = if owner.is_empty() {
                    surface.native_module.clone()
                } else {
                    owner.clone()
                };
                failures.push(
                    Finding::new(
                        Rule::ComputedName,
                        format!("native {owner}.<computed>"),
                        "computed member name",
                    )
                    .at_use(u)
                    .expected(
                        "a member name api.toml can declare",
                        format!("{} of a name known only at run time", u.access),
                    ),
                );
            }
        }
    }
    let members: BTreeMap<String, &NativeMember> =
        declared.members.iter().map(|m| (m.path(), m)).collect();
    for (path, uses) in &native {
        let subject = format!("native {path}");
        match members.get(*path) {
            None => {
                let near = nearest_member(path, members.keys().map(String::as_str));
                failures.extend(undeclared(&subject, "[[native]]", uses, each, near));
            }
            Some(m) => member(&subject, m, uses, &mut failures),
        }
    }
    for m in &declared.members {
        if m.by == NeededBy::Module && !native.contains_key(m.path().as_str()) {
            warnings.push(
                Finding::new(Rule::NativeUnused, format!("native {}", m.path()), "unused")
                    .expected("a use in the module (or `by = \"consumer\"`)", "none"),
            );
        }
    }
    for (module, uses) in &siblings {
        let subject = format!("sibling {module}");
        match declared.siblings.iter().find(|s| s.module == *module) {
            None => {
                let known = declared.siblings.iter().map(|s| s.module.as_str());
                let near = nearest(module, known);
                failures.extend(undeclared(&subject, "[[sibling]]", uses, each, near));
            }
            Some(s) => {
                if s.usage == Usage::Optional
                    && let Some(u) = uses.iter().find(|u| u.required())
                {
                    failures.push(
                        Finding::new(Rule::NativeUse, subject.clone(), "use")
                            .at_use(u)
                            .expected(
                                "optional (as declared)",
                                "an import at module level, unguarded (required)",
                            ),
                    );
                }
            }
        }
    }
    for s in &declared.siblings {
        if !siblings.contains_key(s.module.as_str()) {
            warnings.push(
                Finding::new(
                    Rule::NativeUnused,
                    format!("sibling {}", s.module),
                    "unused",
                )
                .expected("an import in the module", "none"),
            );
        }
    }
    failures.sort();
    warnings.sort();
    SurfaceReport {
        file: surface.file,
        sha256: surface.sha256,
        native_module: surface.native_module,
        uses: surface.uses,
        failures,
        warnings,
    }
}

/// A use nothing declares: one finding at its first required use (else its first use)
/// naming the other lines, or with `each` one at every use.
fn undeclared(
    subject: &str,
    table: &str,
    uses: &[&Use],
    each: bool,
    near: Option<String>,
) -> Vec<Finding> {
    let finding = |u: &Use, also: String| {
        let usage = if u.required() { "required" } else { "optional" };
        Finding::new(Rule::NativeUndeclared, subject, "undeclared")
            .at_use(u)
            .expected(
                format!("a {table} entry"),
                format!("{usage} {}{also}", u.describe_access()),
            )
            .suggest(near.clone())
    };
    if each {
        // A probe (`hasattr`) is a place to fix only where nothing else uses the member.
        let used = uses.iter().any(|u| u.access != Access::Probe);
        return uses
            .iter()
            .filter(|u| !used || u.access != Access::Probe)
            .map(|u| finding(u, String::new()))
            .collect();
    }
    let first = uses.iter().find(|u| u.required()).unwrap_or(&uses[0]);
    let others: BTreeSet<usize> = uses
        .iter()
        .map(|u| u.line)
        .filter(|l| *l != first.line)
        .collect();
    let also = if others.is_empty() {
        String::new()
    } else {
        let lines: Vec<String> = others.iter().map(usize::to_string).collect();
        format!("; also used at line(s) {}", lines.join(", "))
    };
    vec![finding(first, also)]
}

/// The declared member nearest `path` among those of the same owner (`Class.membr` ->
/// `Class.member`), as its whole path.
fn nearest_member<'m>(path: &str, declared: impl Iterator<Item = &'m str>) -> Option<String> {
    let (owner, name) = path.rsplit_once('.').unwrap_or(("", path));
    let siblings: Vec<&str> = declared
        .filter_map(|p| {
            let (o, n) = p.rsplit_once('.').unwrap_or(("", p));
            (o == owner).then_some(n)
        })
        .collect();
    let near = nearest(name, siblings)?;
    Some(match owner {
        "" => near,
        _ => format!("{owner}.{near}"),
    })
}

/// A declared member against its uses: optional vs required, access, call shapes.
fn member(subject: &str, m: &NativeMember, uses: &[&Use], failures: &mut Vec<Finding>) {
    let mut fail = |u: &Use, what: &str, expected: String, found: String| {
        failures.push(
            Finding::new(Rule::NativeUse, subject, what)
                .at_use(u)
                .expected(expected, found),
        );
    };
    if m.usage == Usage::Optional
        && let Some(u) = uses.iter().find(|u| u.required())
    {
        let found = format!("required {} (unguarded)", u.describe_access());
        fail(u, "use", "optional (as declared)".into(), found);
    }
    match &m.kind {
        MemberKind::Attribute { access, .. } => {
            if let Some(u) = uses.iter().find(|u| u.access == Access::Write)
                && !access.writes()
            {
                fail(
                    u,
                    "access",
                    format!("{} (as declared)", access.as_str()),
                    "a write".into(),
                );
            }
            if let Some(u) = uses
                .iter()
                .find(|u| matches!(u.access, Access::Read | Access::Call(_)))
                && !access.reads()
            {
                fail(
                    u,
                    "access",
                    format!("{} (as declared)", access.as_str()),
                    "a read".into(),
                );
            }
        }
        MemberKind::Callable { overload } => {
            if let Some(u) = uses.iter().find(|u| u.access == Access::Write) {
                let expected = "a method or function (declared without `attribute`)".into();
                fail(
                    u,
                    "kind",
                    expected,
                    "a write: declare it with `attribute` and `access`".into(),
                );
            }
            let Some(text) = overload else { return };
            // The text was validated with the manifest.
            let Ok(params) = overload_params(text) else {
                return;
            };
            // A call forwarded through a helper (`fn(*args)` / `fn(*args, config=config)`)
            // takes one path through it: its shapes are alternatives per call site, and one
            // must fit (the rule `mooncake_sos_native::requirements` applies against a core).
            let mut seen = BTreeSet::new();
            let mut forwarded: BTreeMap<usize, Vec<(&Use, &CallShape)>> = BTreeMap::new();
            for u in uses {
                let Access::Call(shape) = &u.access else {
                    continue;
                };
                if let Some(site) = u.via {
                    forwarded.entry(site).or_default().push((u, shape));
                } else if seen.insert(shape)
                    && let Err(why) = fits(&params, shape)
                {
                    let (expected, found) = misfit(text, shape, &why);
                    fail(u, "call", expected, found);
                }
            }
            for alternatives in forwarded.values() {
                let misses: Vec<_> = alternatives
                    .iter()
                    .map(|(u, shape)| (u, shape, fits(&params, shape)))
                    .collect();
                if misses.iter().all(|m| m.2.is_err())
                    && let Some((u, shape, Err(why))) = misses.into_iter().next()
                {
                    let (expected, found) = misfit(text, shape, &why);
                    fail(u, "call", expected, found);
                }
            }
        }
    }
}
