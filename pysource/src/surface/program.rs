//! Several files read as one program (`verify --consumer DIR`): what a module-level name, a
//! function's result or a class's `self.` attribute holds in one file is known in the files
//! that import it, a class defined in one file can be subclassed in another, and what one file
//! passes to another's function reaches its parameters. Each file is analysed on its own with
//! what the others exported in the last round ([`World`]); rounds repeat until nothing new is
//! learnt. Only values the analysis follows cross: native objects and references to the
//! other files' functions, classes and instances.

use super::world::{Round, World};
use super::{SurfaceConfig, Use};
use crate::semantic::Model;
use crate::source::LoadError;
use rayon::prelude::*;
use std::collections::BTreeSet;

/// Rounds are bounded. Each round moves a value one file further (a result returned through
/// a chain of 20 files takes 21) and re-reads only the files whose imports changed, so the
/// bound is generous; a program that reaches it is said so ([`Program::unsettled`]).
pub const MAX_ROUNDS: usize = 256;

/// Each file's uses (`None`: not read), and whether the flow between files settled.
pub struct Program {
    pub files: Vec<Option<Vec<Use>>>,
    /// Each file's uses of the API module (the consumer scan's; empty without
    /// [`SurfaceConfig::api`]).
    pub api: Vec<Vec<super::api_use::ConsumerUse>>,
    /// The flow was still moving after [`MAX_ROUNDS`] rounds: values passed through more
    /// files than that were not followed to their end.
    pub unsettled: bool,
}

/// The uses of `config`'s native module in each file of `files` (`None`: not read), read as
/// one program. The files read start with the seeds; a file that imports one whose exports
/// carry a native value joins in the next round.
pub fn derive_program(model: &Model<'_>, config: &SurfaceConfig) -> Result<Program, LoadError> {
    let files = model.files;
    let mut read: Vec<bool> = files.iter().map(|f| f.seed).collect();
    // A file is analysed again only when what it reads of the world changed.
    let mut dirty = read.clone();
    let mut rounds: Vec<Option<Round>> = files.iter().map(|_| None).collect();
    let known: BTreeSet<String> = files.iter().map(|f| f.module.to_owned()).collect();
    let mut world = World {
        known: known.clone(),
        ..World::default()
    };
    for round in 0.. {
        let fresh: Vec<Option<Result<Round, LoadError>>> = (0..files.len())
            .into_par_iter()
            .map(|i| {
                dirty[i].then(|| {
                    let file = model.file(i)?;
                    let config = SurfaceConfig {
                        module: file.module.to_owned(),
                        ..config.clone()
                    };
                    Ok(super::walk::analyze_in(&file, &config, &world))
                })
            })
            .collect();
        // The first file in order that does not parse.
        for (slot, r) in rounds.iter_mut().zip(fresh) {
            if let Some(r) = r {
                *slot = Some(r?);
            }
        }
        let mut next = World {
            known: known.clone(),
            ..World::default()
        };
        for (f, r) in files.iter().zip(&rounds) {
            if let Some(r) = r {
                next.modules
                    .insert(f.module.to_owned(), std::sync::Arc::clone(&r.exports));
            }
        }
        for r in rounds.iter().flatten() {
            for (key, params) in &r.outbound {
                let entry = next.inbound.entry(key.clone()).or_default();
                for (i, vals) in params {
                    entry.entry(*i).or_default().extend(vals.iter().cloned());
                }
            }
        }
        let carriers: BTreeSet<&str> = next
            .modules
            .iter()
            .filter(|(_, e)| e.carries())
            .map(|(m, _)| m.as_str())
            .collect();
        let changed: BTreeSet<&str> = next
            .modules
            .iter()
            .filter(|(m, e)| {
                world
                    .modules
                    .get(*m)
                    .is_none_or(|old| !std::sync::Arc::ptr_eq(old, e) && **old != ***e)
            })
            .map(|(m, _)| m.as_str())
            .chain(
                world
                    .modules
                    .keys()
                    .filter(|m| !next.modules.contains_key(*m))
                    .map(String::as_str),
            )
            .collect();
        let called: BTreeSet<&str> = next
            .inbound
            .iter()
            .filter(|(k, v)| world.inbound.get(*k) != Some(*v))
            .map(|((m, _), _)| m.as_str())
            .collect();
        // Nothing carries, nothing calls, nothing changed: no file joins or needs reading again.
        let quiet = carriers.is_empty() && called.is_empty() && changed.is_empty();
        for (i, f) in files.iter().enumerate() {
            if quiet {
                dirty[i] = false;
                continue;
            }
            // It imports a file that carries a native value, or a read file passes one to it.
            let imports = model.imports(i);
            let joins = !read[i]
                && (imports.iter().any(|m| carriers.contains(m.as_str()))
                    || called.contains(f.module));
            read[i] |= joins;
            // Analysed again only when a fact of another file it read changed.
            let stale = || {
                rounds[i].as_ref().is_none_or(|r| {
                    r.reads
                        .iter()
                        .any(|x| changed.contains(x.module()) && !x.same(&world, &next))
                })
            };
            dirty[i] = read[i] && (joins || called.contains(f.module) || stale());
        }
        let settled = !dirty.contains(&true);
        if settled || round + 1 == MAX_ROUNDS {
            let (files, api) = rounds
                .into_iter()
                .map(|r| match r {
                    Some(r) => (Some(r.uses), r.api_uses),
                    None => (None, Vec::new()),
                })
                .unzip();
            return Ok(Program {
                files,
                api,
                unsettled: !settled,
            });
        }
        world = next;
    }
    unreachable!("the loop returns")
}
