//! A recorded user's uses across a pin: each use the base image's core served must be served
//! by the pinned core the same way. A use the base did not serve either is pre-existing (a
//! warning); a probed member that disappears is a warning naming the fallback now taken.

use super::fit::fits_any;
use super::record;
use super::users::{self, UseAccess, UserRecord, UserUse};
use mooncake_sos_manifest::core_record::{CoreSurface, Member, ModuleKind, NamespaceRef, Place};
use mooncake_sos_manifest::model::{Api, Image};
use mooncake_sos_pysource::source::LoadError;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsersVerdict {
    /// Uses checked (each served by the base).
    pub checked: usize,
    /// `FILE:LINE: MEMBER: image ID: served by the base core X, WHY in the pinned Y`.
    pub failures: Vec<String>,
    /// Pre-existing misses and probed members gone.
    pub warnings: Vec<String>,
}

/// Whether `core` serves `usage`: `Err` says how not.
pub fn serves(core: &CoreSurface, usage: &UserUse) -> Result<(), String> {
    let module = usage.module.as_str();
    if !core.modules.contains_key(module) {
        return Err(format!("no module {module}"));
    }
    if usage.member.is_empty() {
        return Ok(());
    }
    let path = if module == core.core.module {
        usage.member.clone()
    } else {
        format!("{module}.{}", usage.member)
    };
    match core.place(&path) {
        Place::Found(ns, local) => member(ns, local, &usage.access),
        Place::NoModule(m) => Err(format!("no module {m}")),
        // Not read here (a torch build): its members cannot be told, so nothing is ruled out.
        Place::Unread(..) => Ok(()),
    }
}

fn member(ns: NamespaceRef<'_>, path: &str, access: &UseAccess) -> Result<(), String> {
    let (head, rest) = path.split_once('.').unwrap_or((path, ""));
    if rest.is_empty() {
        if let Some(f) = ns.functions.get(head) {
            return call(&f.overloads, access);
        }
        if ns.classes.contains_key(head) || ns.values.contains_key(head) {
            // A class called constructs it: its `__init__` overloads.
            return match (ns.classes.get(head), access) {
                (Some(class), UseAccess::Call { .. }) => match class.members.get("__init__") {
                    Some(init) => call(init.overloads().unwrap_or_default(), access),
                    None => Ok(()),
                },
                _ => Ok(()),
            };
        }
        return Err("absent".into());
    }
    let Some(class) = ns.classes.get(head) else {
        return Err(format!("class {head} absent"));
    };
    let name = rest.split('.').next().unwrap_or(rest);
    let Some(found) = class.members.get(name) else {
        return Err("absent".into());
    };
    match (found, access) {
        (Member::Property { readonly: true }, UseAccess::Write) => Err("read-only".into()),
        (m, UseAccess::Call { .. }) if m.overloads().is_some() => {
            call(m.overloads().unwrap_or_default(), access)
        }
        _ => Ok(()),
    }
}

fn call(overloads: &[String], access: &UseAccess) -> Result<(), String> {
    match access.shape() {
        Some(shape) => fits_any(overloads, &shape).map_err(|why| {
            format!(
                "the call does not fit ({why}; overloads: {})",
                overloads.join(" | ")
            )
        }),
        None => Ok(()),
    }
}

/// The torch-specific builds a user on `torch` (`torch==2.11.0`) needs: `mooncake.ep_2_11_0`
/// and `mooncake.pg_2_11_0`, when the user imports `mooncake.ep` / `mooncake.pg`.
fn torch_builds(user: &UserRecord) -> Vec<(String, &UserUse)> {
    let Some(version) = user
        .torch
        .as_deref()
        .and_then(|t| t.split_once("=="))
        .map(|(_, v)| v.trim().replace('.', "_"))
    else {
        return Vec::new();
    };
    // The use to name: one the user does not catch a failure of, if any (an import in a
    // `try` falls back; a lazy one in a function still fails when called).
    let caught = |u: &UserUse| {
        u.guard
            .as_deref()
            .is_some_and(|g| g.starts_with("a failure is caught"))
    };
    let mut out: Vec<(String, &UserUse)> = Vec::new();
    for loader in ["mooncake.ep", "mooncake.pg"] {
        let imports = user
            .uses
            .iter()
            .filter(|u| u.module == loader && u.member.is_empty());
        let mut imports: Vec<&UserUse> = imports.collect();
        imports.sort_by_key(|u| caught(u));
        if let Some(u) = imports.first() {
            out.push((format!("{loader}_{version}"), u));
        }
    }
    out
}

pub fn check(
    image: &str,
    user: &UserRecord,
    base: &CoreSurface,
    pinned: &CoreSurface,
) -> UsersVerdict {
    let mut verdict = UsersVerdict {
        checked: 0,
        failures: Vec::new(),
        warnings: Vec::new(),
    };
    let at = |u: &UserUse| format!("{}:{}", u.file, u.line);
    let subject = |u: &UserUse| {
        if u.member.is_empty() {
            u.module.clone()
        } else {
            format!("{}.{}", u.module, u.member)
        }
    };
    for u in &user.uses {
        match (serves(base, u), serves(pinned, u)) {
            (Ok(()), Ok(())) => verdict.checked += 1,
            (Ok(()), Err(why)) => {
                verdict.checked += 1;
                let prep = if why == "absent" { "from" } else { "in" };
                let line = format!(
                    "{}: {}: image {image}: served by the base core {}, {why} {prep} the pinned {}",
                    at(u),
                    subject(u),
                    base.wheel.version,
                    pinned.wheel.version
                );
                match &u.guard {
                    Some(g) if u.access == UseAccess::Probe => verdict
                        .warnings
                        .push(format!("{line} (probed: {g}; the fallback is now taken)")),
                    _ => verdict.failures.push(line),
                }
            }
            (Err(_), _) if u.access == UseAccess::Probe => verdict.warnings.push(format!(
                "{}: {}: image {image}: probed, absent from the base core {} too: the fallback \
                 is taken before and after the pin",
                at(u),
                subject(u),
                base.wheel.version
            )),
            (Err(why), _) => verdict.warnings.push(format!(
                "{}: {}: image {image}: pre-existing: not served by the base core {} either ({why})",
                at(u),
                subject(u),
                base.wheel.version
            )),
        }
    }
    for (build, u) in torch_builds(user) {
        let torch = user.torch.as_deref().unwrap_or_default();
        match (base.modules.contains_key(&build), pinned.modules.contains_key(&build)) {
            (true, true) => verdict.checked += 1,
            (true, false) => verdict.failures.push(format!(
                "{}: {build}: image {image}: {} requires {torch}: its build is in the base core {}, absent from the pinned {}",
                at(u),
                user.package,
                base.wheel.version,
                pinned.wheel.version
            )),
            (false, _) => verdict.warnings.push(format!(
                "{}: {build}: image {image}: pre-existing: {} requires {torch}, which the base core {} has no build for",
                at(u),
                user.package,
                base.wheel.version
            )),
        }
    }
    verdict
}

/// One pin image's recorded user, checked across the pin.
pub struct PinUser {
    pub image: String,
    pub user: UserRecord,
    pub base: String,
    pub pinned: String,
    pub verdict: UsersVerdict,
}

impl PinUser {
    /// `sglang 0.5.16: 66 uses across the cuda pin 0.3.11.post1 -> 0.3.12.post1`.
    pub fn summary(&self) -> String {
        format!(
            "{} {}: {} uses across the {} pin {} -> {}",
            self.user.package,
            self.user.version,
            self.verdict.checked,
            self.image,
            self.base,
            self.pinned
        )
    }
}

/// Every pin image's users against its base and pinned cores. A user with no record, or a
/// record that is not one, is bad input naming the command that writes it.
pub fn pin_users(api: &Api, root: &Path) -> Result<Vec<PinUser>, LoadError> {
    let mut out = Vec::new();
    for image in &api.images {
        let Some((base_package, base_version, release)) = image.layer.pin() else {
            continue;
        };
        if image.users.is_empty() {
            continue;
        }
        let load = |version: &str| record::load(&record::path(root, base_package, version));
        let (base, pinned) = (load(base_version)?, load(&release.version)?);
        let mut imported = Vec::new();
        for user in &image.users {
            let path = users::path(root, &user.package, &user.version);
            if !path.exists() {
                return Err(LoadError::new(
                    path.display().to_string(),
                    format!(
                        "image {}'s user {} {} has no record: run `cargo xtask users --record \
                         WHEEL` on its wheel",
                        image.id, user.package, user.version
                    ),
                ));
            }
            let record = users::load(&path)?;
            let mut verdict = check(&image.id, &record, &base, &pinned);
            imported.extend(loaded_modules(image, &record, &pinned, &mut verdict));
            out.push(PinUser {
                image: image.id.clone(),
                user: record,
                base: base.wheel.version.clone(),
                pinned: pinned.wheel.version.clone(),
                verdict,
            });
        }
        // A listed module no user imports unguarded: said once, with the image's last user.
        if let Some(last) = out.last_mut() {
            for module in &image.user_modules {
                if !imported.contains(module) {
                    last.verdict.warnings.push(format!(
                        "api.toml: {module}: image {}: in user_modules, but no user of the \
                         image imports it unguarded",
                        image.id
                    ));
                }
            }
        }
    }
    Ok(out)
}

/// The extension modules a user imports unguarded must be loaded by the image's check step:
/// `[image.<id>] user_modules` must list each (the native core is loaded anyway). Returns them.
fn loaded_modules(
    image: &Image,
    user: &UserRecord,
    pinned: &CoreSurface,
    v: &mut UsersVerdict,
) -> Vec<String> {
    let mut imported: BTreeMap<&str, &UserUse> = BTreeMap::new();
    for u in user.uses.iter().filter(|u| u.guard.is_none()) {
        let extension = pinned.modules.get(&u.module) == Some(&ModuleKind::Extension);
        if extension && u.module != pinned.core.module {
            imported.entry(&u.module).or_insert(u);
        }
    }
    for (module, u) in &imported {
        if !image.user_modules.iter().any(|m| m == module) {
            v.failures.push(format!(
                "{}:{}: {module}: image {}: {} imports it unguarded, so the image's check step \
                 must load it: add \"{module}\" to [image.{}] user_modules",
                u.file, u.line, image.id, user.package, image.id
            ));
        }
    }
    imported.into_keys().map(str::to_owned).collect()
}

#[cfg(test)]
#[path = "users_check_tests.rs"]
mod tests;
