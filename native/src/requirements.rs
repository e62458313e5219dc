//! A module's derived native surface as uses of a core: the one mapping from
//! [`mooncake_sos_pysource::surface`]'s uses to [`Requirement`]s, shared by `matrix --core` rows and the image
//! checks of `verify` and `bump`.
//!
//! - a read, write or call of a native member is a requirement, required or not as the module
//!   makes it (probed, guarded, inside a swallowing `try`: not required);
//! - `hasattr` probes need nothing (a probe cannot fail), sibling imports are checked against
//!   the package's modules instead ([`super::images`]), and a computed member name cannot be
//!   asked of a core (`verify` already fails on it);
//! - a call made through a forwarding helper (`fn(*args)` / `fn(*args, config=config)`) is one
//!   requirement per member and call site whose shapes are alternatives: each call takes one
//!   path through the helper, and the analysis, path-insensitive, cannot tell which member
//!   takes which;
//! - equal requirements are kept once, at their first line.

use super::needs::{On as NeedOn, Requirement, Usage};
use mooncake_sos_pysource::surface::{Access, On, Surface, Target, Use};
use std::collections::BTreeMap;

/// The requirements of `uses` (sorted by line, as a surface has them), each once, in the order
/// of their first use; `file` names the module in each origin (`FILE:LINE`).
pub fn requirements(file: &str, uses: &[Use]) -> Vec<Requirement> {
    // Key: (path, usage kind and place, required, forwarding call site). Value: index in `out`.
    let mut seen: BTreeMap<(String, String, bool, Option<usize>), usize> = BTreeMap::new();
    let mut out: Vec<Requirement> = Vec::new();
    for u in uses {
        let Target::Native { path, on } = &u.target else {
            continue;
        };
        let on = match on {
            On::Instance => NeedOn::Instance,
            On::Class | On::Module => NeedOn::Class,
        };
        let (usage, kind) = match &u.access {
            Access::Read => (Usage::Read { on }, format!("read {on:?}")),
            Access::Write => (Usage::Write { on }, format!("write {on:?}")),
            Access::Call(shape) => {
                let usage = Usage::Call {
                    overload: None,
                    shapes: vec![shape.clone()],
                };
                // Direct calls are told apart by shape; forwarded ones gather theirs.
                let kind = match u.via {
                    Some(_) => "call".to_owned(),
                    None => format!("call {shape}"),
                };
                (usage, kind)
            }
            Access::Probe | Access::Import => continue,
        };
        let key = (path.clone(), kind, u.required(), u.via);
        if let Some(&i) = seen.get(&key) {
            if let (Usage::Call { shapes, .. }, Access::Call(shape)) =
                (&mut out[i].usage, &u.access)
                && !shapes.contains(shape)
            {
                shapes.push(shape.clone());
            }
            continue;
        }
        seen.insert(key, out.len());
        out.push(Requirement {
            object: path.clone(),
            usage,
            required: u.required(),
            origin: format!("{file}:{}", u.line),
        });
    }
    out
}

/// [`requirements`] of a whole surface.
pub fn of_surface(surface: &Surface) -> Vec<Requirement> {
    requirements(&surface.file, &surface.uses)
}

#[cfg(test)]
#[path = "requirements_tests.rs"]
mod tests;
