//! `cargo xtask core`: read wheels' native cores (what each serves), record image cores in
//! `cores/`, check the records for drift, and check the images' recorded cores offline
//! against api.toml's `[[native]]` needs.

use crate::core_diff::{self, Form};
use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::Reading;
use mooncake_sos_manifest::core_record::{CoreSurface, Member};
use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images::{self, Unread};
use mooncake_sos_native::needs::{from_manifest, serve};
use mooncake_sos_native::read::Origin;
use mooncake_sos_native::record::{self, Drift};
use mooncake_sos_support::escape::{self, text};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["wheels", "images", "diff"])))]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// Wheels whose native core is read (the package's `store` extension module).
    #[arg(value_name = "WHEEL")]
    wheels: Vec<PathBuf>,
    /// Print the surfaces as a JSON array instead of one summary line per core (with
    /// --diff: the diff as JSON).
    #[arg(long, conflicts_with_all = ["record", "check"])]
    json: bool,
    /// What the NEW core breaks for code written against OLD (each a wheel or a cores/
    /// record), and what it adds; exit 1 when anything breaks.
    #[arg(long, num_args = 2, value_names = ["OLD", "NEW"], conflicts_with_all = ["wheels", "record", "check", "images"])]
    diff: Vec<PathBuf>,
    /// With --diff: print the diff as Markdown.
    #[arg(long, requires = "diff", conflicts_with = "json")]
    markdown: bool,
    /// Write each surface to cores/<package>-<version>.json (nothing is written if any wheel
    /// fails).
    #[arg(long, conflicts_with = "check")]
    record: bool,
    /// Compare each surface with its record; exit 1 with a diff on any difference.
    #[arg(long)]
    check: bool,
    /// Check every image's recorded core against api.toml's [[native]] needs, offline; exit 1
    /// when one is not served or not recorded.
    #[arg(long)]
    images: bool,
    #[command(flatten)]
    pub reading: Reading,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let api = &manifest.api;
    let root = manifest.root().to_path_buf();
    let reader = args.reading.reader()?;
    if !args.diff.is_empty() {
        let form = match (args.json, args.markdown) {
            (true, _) => Form::Json,
            (_, true) => Form::Markdown,
            _ => Form::Text,
        };
        return core_diff::run(&reader, &api.upstream.native_module, &args.diff, form);
    }
    // Every wheel is read before anything is printed or written.
    let mut surfaces = Vec::new();
    for wheel in &args.wheels {
        let (surface, origin) = reader.read_traced(wheel, &api.upstream.native_module)?;
        surfaces.push((wheel, surface, origin));
    }
    let mut outcome = Outcome::Ok;
    if args.json {
        let all: Vec<&CoreSurface> = surfaces.iter().map(|(_, s, _)| s).collect();
        let json = serde_json::to_string_pretty(&all).unwrap_or_default();
        println!("{}", escape::json(&json));
    } else if args.record {
        // A name Python could not hold is refused for every wheel before any is written.
        for (wheel, surface, _) in &surfaces {
            if let Some(name) = record::misnamed(surface) {
                return Err(BadInput(format!(
                    "{}: error: its core has a name that is not a Python identifier: {name} (ASCII \
                     letters, digits and `_`, not starting with a digit); nothing written",
                    wheel.display()
                )));
            }
        }
        for (_, surface, _) in &surfaces {
            let state = match record::drift(&root, surface) {
                Drift::Current => "unchanged",
                _ => {
                    record::write(&root, surface).map_err(|e| {
                        BadInput(format!(
                            "{}: error: cannot write the record: {e}",
                            root.display()
                        ))
                    })?;
                    "written"
                }
            };
            let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
            println!("{state}: {}", text(&rel));
        }
    } else if args.check {
        for (wheel, surface, _) in &surfaces {
            let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
            let (rel, wheel) = (text(&rel), wheel.display().to_string());
            match record::drift(&root, surface) {
                Drift::Current => println!("current: {rel}"),
                Drift::Missing => {
                    println!(
                        "missing: {rel} (`cargo xtask core --record {}`)",
                        text(&wheel)
                    );
                    outcome = Outcome::Failed;
                }
                Drift::Differs(diff) => {
                    print!(
                        "stale: {rel} (`cargo xtask core --record {}`)\n{}",
                        text(&wheel),
                        escape::lines(&diff)
                    );
                    outcome = Outcome::Failed;
                }
            }
        }
    } else {
        for (wheel, surface, origin) in &surfaces {
            println!("{}", text(&summary(api, wheel, surface, *origin)));
        }
    }
    if args.images && !images(api, &root)? {
        outcome = Outcome::Failed;
    }
    Ok(outcome)
}

/// `package version: file (sha256 12…): N classes, N methods, N functions; api.toml's N
/// native needs: served | first missing ...`.
fn summary(api: &Api, wheel: &Path, surface: &CoreSurface, origin: Origin) -> String {
    let methods: usize = surface
        .classes
        .values()
        .flat_map(|c| c.members.values())
        .filter(|m| matches!(m, Member::Method { .. } | Member::Staticmethod { .. }))
        .count();
    let needs = from_manifest(&api.native);
    let verdict = serve(surface, &needs);
    let served = match verdict.first_missing() {
        None => "served".to_owned(),
        Some(miss) => format!(
            "{} not served, first: {}",
            verdict.missing.len(),
            miss.line()
        ),
    };
    format!(
        "{}: {} `{}` (sha256 {}): {} classes, {methods} methods, {} functions; api.toml's {} native needs: {served}{}",
        surface.label(),
        surface.core.file,
        surface.core.module,
        &surface.core.sha256[..12],
        surface.classes.len(),
        surface.functions.len(),
        needs.len(),
        match origin {
            Origin::Cache => format!(" (cached; {})", wheel.display()),
            Origin::Read => format!(" ({})", wheel.display()),
        }
    )
}

/// One line per image; `false` when any image's core is unrecorded or misses a need.
fn images(api: &Api, root: &Path) -> Result<bool> {
    let needs = from_manifest(&api.native);
    let mut ok = true;
    for (image, side) in images::load(root, api) {
        match side {
            Ok(side) => {
                let (core, rel) = (&side.core, &side.record);
                let verdict = serve(core, &needs);
                if verdict.compatible {
                    println!(
                        "image {image}: core {} ({rel}) serves api.toml's {} native needs",
                        text(&core.label()),
                        needs.len()
                    );
                } else {
                    ok = false;
                    println!(
                        "image {image}: core {} ({rel}) does not serve {} of api.toml's native needs:",
                        text(&core.label()),
                        verdict.missing.len()
                    );
                    for miss in &verdict.missing {
                        println!("  {}", text(&miss.line()));
                    }
                }
            }
            Err(Unread::Missing(m)) => {
                ok = false;
                println!(
                    "image {image}: no record of its {} {} {} ({}): run `cargo xtask core --record` on that wheel",
                    m.role, m.package, m.version, m.record
                );
            }
            Err(Unread::Bad(e)) => return Err(e.into()),
        }
    }
    Ok(ok)
}
