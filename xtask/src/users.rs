//! `cargo xtask users`: the images' other users of the package (`[image.<id>] users`), recorded
//! from their wheels in `consumers/` (`--record WHEEL...`), and checked offline across each pin
//! image's pin (what `verify` runs too).

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::ManifestArg;
use mooncake_sos_codegen::model::{Api, Layer};
use mooncake_sos_upstream::core::model::Read;
use mooncake_sos_upstream::core::record;
use mooncake_sos_upstream::core::users::{self, UserRecord};
use mooncake_sos_upstream::core::users_check::pin_users;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    /// Derive each wheel's uses of the package and write consumers/<package>-<version>.json
    /// (each wheel must be a user an image names; nothing is written if any fails).
    #[arg(long, value_name = "WHEEL", num_args = 1..)]
    record: Vec<PathBuf>,
    #[command(flatten)]
    manifest: ManifestArg,
}

pub fn run(args: &Args) -> Result {
    let manifest = args.manifest.load()?;
    let (api, root) = (&manifest.api, manifest.root());
    if !args.record.is_empty() {
        let mut records = Vec::new();
        for wheel in &args.record {
            records.push(derive(api, root, wheel)?);
        }
        for r in &records {
            let path = users::path(root, &r.package, &r.version);
            mooncake_sos_codegen::sync::write_atomic(&path, r.to_json().as_bytes())
                .map_err(|e| BadInput(format!("{}: error: cannot write: {e}", path.display())))?;
            println!(
                "written: {} ({} uses in {} files; torch: {})",
                users::relative_path(&r.package, &r.version),
                r.uses.len(),
                r.files,
                r.torch.as_deref().unwrap_or("none")
            );
        }
        return Ok(Outcome::Ok);
    }
    check_pins(api, root)
}

/// A user's record from its wheel, followed into every extension module the image's base
/// core record read (`mooncake.store`, `mooncake.engine`).
fn derive(api: &Api, root: &Path, wheel: &Path) -> Result<UserRecord> {
    let display = wheel.display();
    for image in &api.images {
        let Layer::Pin {
            base_package,
            base_version,
            ..
        } = &image.layer
        else {
            continue;
        };
        let base = record::load(&record::path(root, base_package, base_version))?;
        let mut natives = vec![base.core.module.as_str()];
        natives.extend(
            base.extensions
                .iter()
                .filter(|(_, e)| matches!(e, Read::Read(_)))
                .map(|(m, _)| m.as_str()),
        );
        let record = users::derive(wheel, api.upstream.package(), &natives)?;
        if image
            .users
            .iter()
            .any(|u| u.package == record.package && u.version == record.version)
        {
            return Ok(record);
        }
    }
    Err(BadInput(format!(
        "{display}: error: not a user any pin image names in `[image.<id>] users`"
    )))
}

/// `cargo xtask users`: each pin user's warnings and misses, and a line per user; `Failed` on
/// any miss. Images of other strategies say why they are not checked.
pub fn check_pins(api: &Api, root: &Path) -> Result {
    for image in api.images.iter().filter(|i| !i.users.is_empty()) {
        if !matches!(image.layer, Layer::Pin { .. }) {
            println!(
                "image {}: strategy {}: the base's own native modules stay, so its users' uses \
                 are not checked across a pin",
                image.id,
                image.layer.strategy()
            );
        }
    }
    let mut outcome = Outcome::Ok;
    for pin in pin_users(api, root)? {
        for w in &pin.verdict.warnings {
            println!("warning: {w}");
        }
        for f in &pin.verdict.failures {
            println!("{f}");
        }
        println!(
            "image {}: {}: {} broken, {} warnings",
            pin.image,
            pin.summary(),
            pin.verdict.failures.len(),
            pin.verdict.warnings.len()
        );
        if !pin.verdict.failures.is_empty() {
            outcome = Outcome::Failed;
        }
    }
    Ok(outcome)
}
