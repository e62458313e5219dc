//! What a newer core breaks for code written against an older one: modules, classes, members
//! removed; overloads that no longer take a call the old one took; properties made read-only;
//! torch-specific builds dropped. Additions and compatible changes are listed beside them.
//!
//! A call is judged by its shape only (how many positional arguments, which keywords), as
//! [`mooncake_sos_manifest::signature::fits`] judges a consumer's call; parameter types are not compared, since
//! pybind11's docstring types name C++ types that move between builds without breaking anyone.

use mooncake_sos_manifest::core_record::{
    Access, Class, CoreSurface, Instance, Member, ModuleKind, Namespace, Read,
};
use overloads::overloads;
use serde::Serialize;
use std::collections::BTreeMap;

mod overloads;
#[cfg(test)]
mod tests;

/// How a change stands for code written against the old core.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Impact {
    /// Code the old core served may fail.
    Breaking,
    /// Something new.
    Added,
    /// Changed, and everything the old one took still works.
    Compatible,
}

#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Change {
    pub impact: Impact,
    /// The dotted name of what changed (`mooncake.store.MooncakeDistributedStore.setup`), or
    /// `torch X.Y.Z` for a torch-specific build.
    pub path: String,
    /// What happened to it, in words.
    pub what: String,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct CoreDiff {
    /// `package version` of each side.
    pub old: String,
    pub new: String,
    /// Sorted: breaking first, then additions, then compatible changes; by path within each.
    pub changes: Vec<Change>,
}

impl CoreDiff {
    pub fn breaking(&self) -> impl Iterator<Item = &Change> {
        self.of(Impact::Breaking)
    }

    pub fn of(&self, impact: Impact) -> impl Iterator<Item = &Change> {
        self.changes.iter().filter(move |c| c.impact == impact)
    }
}

/// Every change from `old` to `new`.
pub fn diff(old: &CoreSurface, new: &CoreSurface) -> CoreDiff {
    let mut out = Changes::default();
    modules(&mut out, &old.modules, &new.modules);
    let module = &new.core.module;
    if old.core.module != new.core.module {
        out.push(
            Impact::Compatible,
            &new.core.module,
            format!(
                "the core is now `{}` (was `{}`)",
                new.core.module, old.core.module
            ),
        );
    }
    let core = |s: &CoreSurface| Namespace {
        classes: s.classes.clone(),
        functions: s.functions.clone(),
        values: s.values.clone(),
    };
    namespace(&mut out, module, &core(old), &core(new));
    extensions(&mut out, old, new);
    python(&mut out, old, new);
    let mut changes = out.0;
    changes.sort();
    changes.dedup();
    CoreDiff {
        old: old.label(),
        new: new.label(),
        changes,
    }
}

#[derive(Default)]
struct Changes(Vec<Change>);

impl Changes {
    fn push(&mut self, impact: Impact, path: &str, what: impl Into<String>) {
        self.0.push(Change {
            impact,
            path: path.to_owned(),
            what: what.into(),
        });
    }
}

/// A torch-specific build: `mooncake.ep_2_12_1` is `mooncake.ep` for torch 2.12.1.
fn torch_build(module: &str) -> Option<(&str, String)> {
    let mut parts = module.rsplitn(4, '_');
    let (patch, minor, major, base) = (parts.next()?, parts.next()?, parts.next()?, parts.next()?);
    let numeric = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    (numeric(major) && numeric(minor) && numeric(patch))
        .then(|| (base, format!("{major}.{minor}.{patch}")))
}

/// The torch versions with a build, each with the builds made for it.
type TorchBuilds<'a> = BTreeMap<String, Vec<&'a str>>;

fn torch_builds(modules: &BTreeMap<String, ModuleKind>) -> TorchBuilds<'_> {
    let mut builds: TorchBuilds = BTreeMap::new();
    for (name, kind) in modules {
        if let (ModuleKind::Extension, Some((_, torch))) = (kind, torch_build(name)) {
            builds.entry(torch).or_default().push(name);
        }
    }
    builds
}

fn modules(
    out: &mut Changes,
    old: &BTreeMap<String, ModuleKind>,
    new: &BTreeMap<String, ModuleKind>,
) {
    // Per torch version: the builds one side has and the other does not.
    let sides = [
        (old, new, Impact::Breaking, "torch build dropped"),
        (new, old, Impact::Added, "torch build"),
    ];
    for (these, others, impact, what) in sides {
        for (torch, builds) in torch_builds(these) {
            let only: Vec<&str> = builds
                .into_iter()
                .filter(|b| !others.contains_key(*b))
                .collect();
            if !only.is_empty() {
                let what = format!("{what} ({})", only.join(", "));
                out.push(impact, &format!("torch {torch}"), what);
            }
        }
    }
    let is_torch_build = |name: &str, kind: &ModuleKind| {
        *kind == ModuleKind::Extension && torch_build(name).is_some()
    };
    for (name, kind) in old {
        match new.get(name) {
            None if is_torch_build(name, kind) => {}
            None => out.push(
                Impact::Breaking,
                name,
                format!("module removed (was {})", word(*kind)),
            ),
            // A module that became a package (or back) still imports.
            Some(now) if now != kind => out.push(
                Impact::Compatible,
                name,
                format!("now {} (was {})", word(*now), word(*kind)),
            ),
            Some(_) => {}
        }
    }
    for (name, kind) in new {
        if !old.contains_key(name) && !is_torch_build(name, kind) {
            out.push(Impact::Added, name, format!("module ({})", word(*kind)));
        }
    }
}

fn word(kind: ModuleKind) -> &'static str {
    match kind {
        ModuleKind::Python => "Python",
        ModuleKind::Package => "a package",
        ModuleKind::Extension => "an extension",
    }
}

fn class(out: &mut Changes, path: &str, old: &Class, new: &Class) {
    for base in old.bases.iter().filter(|b| !new.bases.contains(b)) {
        out.push(
            Impact::Breaking,
            path,
            format!("no longer derives from `{base}`"),
        );
    }
    for (name, old_member) in &old.members {
        let path = format!("{path}.{name}");
        match new.members.get(name) {
            None => out.push(
                Impact::Breaking,
                &path,
                format!("{} removed", kind(old_member)),
            ),
            Some(new_member) => member(out, &path, old_member, new_member),
        }
    }
    for (name, new_member) in &new.members {
        if !old.members.contains_key(name) {
            out.push(Impact::Added, &format!("{path}.{name}"), kind(new_member));
        }
    }
    instance(out, path, old, new);
}

/// An instance's attributes: one readable or writable before must still be. A class member
/// that changed was reported above, so only the unchanged ones and the instance's own are.
fn instance(out: &mut Changes, path: &str, old: &Class, new: &Class) {
    let (Instance::Made { members: was, .. }, Instance::Made { members: now, .. }) =
        (&old.instance, &new.instance)
    else {
        return;
    };
    let reported = |name: &String| {
        old.members
            .get(name)
            .is_some_and(|m| new.members.get(name) != Some(m))
    };
    for (name, before) in was.iter().filter(|(n, _)| !reported(n)) {
        let path = format!("{path}.{name}");
        let after = now.get(name).copied().unwrap_or(Access {
            read: false,
            write: false,
        });
        if before.read && !after.read {
            out.push(
                Impact::Breaking,
                &path,
                "an instance's attribute no longer readable",
            );
        } else if before.write && !after.write {
            out.push(
                Impact::Breaking,
                &path,
                "an instance's attribute no longer writable",
            );
        }
    }
}

fn kind(member: &Member) -> &'static str {
    match member {
        Member::Method { .. } => "method",
        Member::Staticmethod { .. } => "staticmethod",
        Member::Classmethod { .. } => "classmethod",
        Member::Property { readonly: true } => "read-only property",
        Member::Property { readonly: false } => "property",
        Member::Value { .. } => "value",
        Member::Class => "nested class",
    }
}

fn member(out: &mut Changes, path: &str, old: &Member, new: &Member) {
    match (old, new) {
        (Member::Property { readonly: false }, Member::Property { readonly: true }) => {
            out.push(Impact::Breaking, path, "property made read-only");
        }
        (Member::Property { readonly: true }, Member::Property { readonly: false }) => {
            out.push(Impact::Compatible, path, "property made writable");
        }
        _ => match (old.overloads(), new.overloads()) {
            (Some(old_o), Some(new_o)) if kind(old) == kind(new) => {
                overloads(out, path, old_o, new_o);
            }
            _ if kind(old) != kind(new) => out.push(
                Impact::Breaking,
                path,
                format!("now a {} (was a {})", kind(new), kind(old)),
            ),
            _ => {}
        },
    }
}

/// A module's classes, functions and values.
fn namespace(out: &mut Changes, module: &str, old_ns: &Namespace, new_ns: &Namespace) {
    for (name, old_class) in &old_ns.classes {
        let path = format!("{module}.{name}");
        match new_ns.classes.get(name) {
            None => out.push(Impact::Breaking, &path, "class removed"),
            Some(new_class) => class(out, &path, old_class, new_class),
        }
    }
    for (name, new_class) in &new_ns.classes {
        if !old_ns.classes.contains_key(name) {
            let n = new_class.members.len();
            out.push(
                Impact::Added,
                &format!("{module}.{name}"),
                format!("class ({n} members)"),
            );
        }
    }
    for (name, old_fn) in &old_ns.functions {
        let path = format!("{module}.{name}");
        match new_ns.functions.get(name) {
            None => out.push(Impact::Breaking, &path, "function removed"),
            Some(new_fn) => overloads(out, &path, &old_fn.overloads, &new_fn.overloads),
        }
    }
    for name in new_ns
        .functions
        .keys()
        .filter(|n| !old_ns.functions.contains_key(*n))
    {
        out.push(Impact::Added, &format!("{module}.{name}"), "function");
    }
    for (name, value) in &old_ns.values {
        if !new_ns.values.contains_key(name) {
            let path = format!("{module}.{name}");
            out.push(
                Impact::Breaking,
                &path,
                format!("value removed (a {})", value.r#type),
            );
        }
    }
    for (name, value) in &new_ns.values {
        if !old_ns.values.contains_key(name) {
            let path = format!("{module}.{name}");
            out.push(Impact::Added, &path, format!("value (a {})", value.r#type));
        }
    }
}

/// The other extension modules, where both sides were read (a torch build without torch is
/// not; a module gone is reported by [`modules`]). One read before and unread now is a
/// breaking change: it no longer imports where it did.
fn extensions(out: &mut Changes, old: &CoreSurface, new: &CoreSurface) {
    for (name, was) in &old.extensions {
        match (was, new.extensions.get(name)) {
            (Read::Read(a), Some(Read::Read(b))) => namespace(out, name, a, b),
            (Read::Read(_), Some(Read::Unread { unread })) => {
                out.push(
                    Impact::Breaking,
                    name,
                    format!("no longer imports: {unread}"),
                );
            }
            _ => {}
        }
    }
}

/// A pure-Python module's public names: one gone breaks `from M import X`.
fn python(out: &mut Changes, old: &CoreSurface, new: &CoreSurface) {
    for (module, was) in &old.python {
        let (Some(was), Some(now)) = (was.read(), new.python.get(module).and_then(Read::read))
        else {
            continue;
        };
        for name in was.iter().filter(|n| !now.contains(n)) {
            out.push(
                Impact::Breaking,
                &format!("{module}.{name}"),
                "name removed",
            );
        }
        for name in now.iter().filter(|n| !was.contains(n)) {
            out.push(Impact::Added, &format!("{module}.{name}"), "name");
        }
    }
}
