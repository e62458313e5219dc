//! `cargo xtask users`: the images' other users of the package (`[image.<id>] users`), recorded
//! from their wheels in `consumers/` (`--record WHEEL...`), and checked offline across each pin
//! image's pin (what `verify` runs too).

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::ManifestArg;
use mooncake_sos_codegen::model::{Api, Layer};
use mooncake_sos_upstream::core::model::Read;
use mooncake_sos_upstream::core::users::{self, UserRecord};
use mooncake_sos_upstream::core::users_check::{UsersVerdict, check};
use mooncake_sos_upstream::core::{CoreSurface, record};
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

/// One pin image's recorded user, checked across the pin.
pub struct PinUser {
    pub image: String,
    pub user: UserRecord,
    pub base: String,
    pub pinned: String,
    pub verdict: UsersVerdict,
}

impl PinUser {
    /// `sglang 0.5.16: 50 uses across the cuda pin 0.3.11.post1 -> 0.3.12.post1`.
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
pub fn pin_users(api: &Api, root: &Path) -> Result<Vec<PinUser>> {
    let mut out = Vec::new();
    for image in &api.images {
        let Layer::Pin {
            base_package,
            base_version,
            release,
        } = &image.layer
        else {
            continue;
        };
        if image.users.is_empty() {
            continue;
        }
        let load = |version: &str| -> Result<CoreSurface> {
            Ok(record::load(&record::path(root, base_package, version))?)
        };
        let (base, pinned) = (load(base_version)?, load(&release.version)?);
        for user in &image.users {
            let path = users::path(root, &user.package, &user.version);
            if !path.exists() {
                return Err(BadInput(format!(
                    "{}: error: image {}'s user {} {} has no record: run `cargo xtask users \
                     --record WHEEL` on its wheel",
                    path.display(),
                    image.id,
                    user.package,
                    user.version
                )));
            }
            let record = users::load(&path)?;
            let verdict = check(&image.id, &record, &base, &pinned);
            out.push(PinUser {
                image: image.id.clone(),
                user: record,
                base: base.wheel.version.clone(),
                pinned: pinned.wheel.version.clone(),
                verdict,
            });
        }
    }
    Ok(out)
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
