//! `cargo xtask adopt --image ID --strategy pin|check|overlay [--version V]`: moves an image
//! to another strategy where watch's verdict allows it (else refuses, writing nothing, and
//! says why), rewriting api.toml (toml_edit; a pin records its release's wheel hashes) and
//! regenerating every output as one change, the image's Dockerfile region renamed in place.
//! The decision is `mooncake_sos_watch::adopt`'s; the edit is `mooncake_sos_manifest::edit`'s.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::WatchArgs;
use mooncake_sos_codegen::sync::Rename;
use mooncake_sos_manifest::edit;
use mooncake_sos_manifest::model::Strategy;
use mooncake_sos_support::escape::text;
use mooncake_sos_watch as watch;
use watch::adopt::Target;

/// A strategy `adopt` moves an image to, by its api.toml name.
fn adoptable(name: &str) -> std::result::Result<Strategy, String> {
    match Strategy::from_name(name) {
        Some(s) if s.adoptable() => Ok(s),
        _ => {
            let names: Vec<&str> = Strategy::ALL
                .iter()
                .filter(|s| s.adoptable())
                .map(|s| s.name())
                .collect();
            Err(format!("expected one of: {}", names.join(", ")))
        }
    }
}

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// The image, as `[image.<ID>]` names it.
    #[arg(long, value_name = "ID")]
    image: String,
    /// Where the image goes: overlay, pin or check (a fill is chosen by hand).
    #[arg(long, value_parser = adoptable)]
    strategy: Strategy,
    /// For pin: the release (default: the one watch proposes).
    #[arg(long, value_name = "VERSION")]
    version: Option<String>,
    #[command(flatten)]
    watch: WatchArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let api = &manifest.api;
    let Some(image) = api.images.iter().find(|i| i.id == args.image) else {
        return Err(BadInput(format!(
            "{}: error: no [image.{}]",
            manifest.display, args.image
        )));
    };
    let (report, _) = args.watch.run(manifest)?;
    let plan = report.images.iter().find(|p| p.image == args.image);
    let target = match args.strategy {
        Strategy::Check => Target::Check,
        Strategy::Overlay => Target::Overlay,
        Strategy::Fill => return Err(BadInput("adopt: --strategy fill is chosen by hand".into())),
        Strategy::Pin => {
            let proposed = plan
                .and_then(|p| p.transition.as_ref())
                .filter(|s| s.to == Strategy::Pin)
                .and_then(|s| s.version.clone());
            match args.version.clone().or(proposed) {
                Some(version) => Target::Pin { version },
                None => {
                    println!(
                        "adopt: refused: watch proposes no release to pin image `{}`; name one with --version; nothing written",
                        text(&args.image)
                    );
                    return Ok(Outcome::Failed);
                }
            }
        }
    };
    let why = match watch::adopt::decide(api, &report, &args.image, &target) {
        Ok(why) => why,
        Err(why) => {
            println!(
                "adopt: refused: image `{}` -> {}: {}; nothing written",
                text(&args.image),
                target.strategy(),
                text(&why)
            );
            return Ok(Outcome::Failed);
        }
    };
    let package = image.layer.package().to_owned();
    let wheels = match &target {
        Target::Pin { version } => args.watch.index()?.release_files(&package, version)?,
        _ => Vec::new(),
    };
    let from = image.layer.strategy();
    let renames = [Rename {
        file: image.dockerfile.as_str().to_owned(),
        from: from.name().to_owned(),
        to: target.strategy().name().to_owned(),
    }];
    let outcome = crate::manifest::written(manifest.edit_renaming(
        "adopt",
        |text| {
            let pin = match &target {
                Target::Pin { version } => Some(version.as_str()),
                Target::Check | Target::Overlay => None,
            };
            edit::move_image(text, &args.image, target.strategy(), pin, &package, &wheels)
        },
        &renames,
    )?)?;
    println!(
        "adopt: image `{}`: {from} -> {}{}: {}",
        text(&args.image),
        target.strategy(),
        match &target {
            Target::Pin { version } => format!(
                " at {} ({} wheel hashes recorded)",
                text(version),
                wheels.len()
            ),
            _ => String::new(),
        },
        text(&why)
    );
    Ok(outcome)
}
