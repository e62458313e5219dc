//! `cargo xtask users`: the images' other users of the package (`[image.<id>] users`), recorded
//! in `consumers/` (`--record`: each user's wheel from the package index, through watch's index
//! and sha256-keyed cache; `--record WHEEL...`: from wheel files), and checked offline across
//! each pin image's pin (what `verify` runs too).

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::IndexArgs;
use mooncake_sos_manifest::core_record::Read;
use mooncake_sos_manifest::model::{Api, Image, Layer};
use mooncake_sos_native::record;
use mooncake_sos_native::users::{self, UserRecord};
use mooncake_sos_native::users_check::pin_users;
use mooncake_sos_pysource::source::LoadError;
use mooncake_sos_support::escape::text;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// Derive users' uses of the package and write consumers/<package>-<version>.json, all or
    /// nothing. Without WHEEL: every user a pin image names, its wheel from the package index
    /// (watch's index and cache: --index-url, --watch-cache, --offline); with WHEEL...: those
    /// files (each a user a pin image names).
    #[arg(long, value_name = "WHEEL", num_args = 0..)]
    record: Option<Vec<PathBuf>>,
    /// For --record without WHEEL: the interpreter whose pip downloads, as watch's (its tags
    /// choose the wheel file of the release).
    #[arg(long = "core-python", value_name = "PYTHON", default_value = "python3")]
    python: PathBuf,
    #[command(flatten)]
    index: IndexArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let (api, root) = (&manifest.api, manifest.root());
    let records = match &args.record {
        None => return check_pins(api, root),
        Some(wheels) if wheels.is_empty() => from_index(args, manifest)?,
        Some(wheels) => wheels
            .iter()
            .map(|wheel| derive(api, root, wheel))
            .collect::<Result<Vec<_>>>()?,
    };
    for r in &records {
        let path = users::path(root, &r.package, &r.version);
        mooncake_sos_support::atomic::write_atomic(&path, r.to_json().as_bytes())
            .map_err(|e| BadInput(format!("{}: error: cannot write: {e}", path.display())))?;
        println!(
            "written: {} ({} uses in {} files; torch: {})",
            users::relative_path(&r.package, &r.version),
            r.uses.len(),
            r.files,
            text(r.torch.as_deref().unwrap_or("none"))
        );
    }
    Ok(Outcome::Ok)
}

/// The extension modules a pin image's users are followed into: the base core's own module
/// and every extension its record read (`mooncake.store`, `mooncake.engine`). `None`: another
/// strategy, whose users are not checked across a pin.
fn natives(root: &Path, image: &Image) -> Result<Option<Vec<String>>> {
    let Layer::Pin {
        base_package,
        base_version,
        ..
    } = &image.layer
    else {
        return Ok(None);
    };
    let base = record::load(&record::path(root, base_package, base_version))?;
    let mut natives = vec![base.core.module.clone()];
    natives.extend(
        base.extensions
            .iter()
            .filter(|(_, e)| matches!(e, Read::Read(_)))
            .map(|(m, _)| m.clone()),
    );
    Ok(Some(natives))
}

fn derive_with(
    wheel: &Path,
    api: &Api,
    natives: &[String],
) -> std::result::Result<UserRecord, LoadError> {
    let natives: Vec<&str> = natives.iter().map(String::as_str).collect();
    users::derive(wheel, api.upstream.package(), &natives)
}

/// A user's record from its wheel file, followed into the extension modules of the first
/// pin image that names it.
fn derive(api: &Api, root: &Path, wheel: &Path) -> Result<UserRecord> {
    for image in &api.images {
        let Some(natives) = natives(root, image)? else {
            continue;
        };
        let record = derive_with(wheel, api, &natives)?;
        if image
            .users
            .iter()
            .any(|u| u.package == record.package && u.version == record.version)
        {
            return Ok(record);
        }
    }
    Err(BadInput(format!(
        "{}: error: not a user any pin image names in `[image.<id>] users`",
        wheel.display()
    )))
}

/// Every user each pin image names (once), its wheel from the package index as `watch` gets
/// it (`Index::wheel`: the sha256-keyed cache, else pip's download from the index's own host,
/// bounded, checked against the sha256 the index page lists), then derived. The wheel file is
/// the one pip takes for `--core-python`. The first failure is bad input naming the image and
/// the user; what the wheels came from is printed only once all are derived.
fn from_index(args: &Args, manifest: &Manifest) -> Result<Vec<UserRecord>> {
    let (api, root) = (&manifest.api, manifest.root());
    let index = args
        .index
        .open(crate::upstream::interpreter(&args.python))?;
    let (mut records, mut wheels, mut lines) = (Vec::new(), Vec::new(), Vec::new());
    for image in api.images.iter().filter(|i| !i.users.is_empty()) {
        let Some(natives) = natives(root, image)? else {
            lines.push(format!(
                "image {}: strategy {}: its users are not checked across a pin, so not recorded",
                image.id,
                image.layer.strategy()
            ));
            continue;
        };
        for user in &image.users {
            let done = |r: &UserRecord| r.package == user.package && r.version == user.version;
            if records.iter().any(done) {
                continue;
            }
            let fail = |e: LoadError| {
                let label = format!("{} {}", user.package, user.version);
                let at = (e.location != label).then(|| format!("{}: ", e.location));
                let why: Vec<&str> = e.message.lines().map(str::trim).collect();
                BadInput(format!(
                    "{}: error: image {}'s user {}=={}: {}{}; nothing written",
                    manifest.display,
                    image.id,
                    user.package,
                    user.version,
                    at.unwrap_or_default(),
                    why.into_iter()
                        .filter(|l| !l.is_empty())
                        .collect::<Vec<_>>()
                        .join(" / ")
                ))
            };
            let wheel = index.wheel(&user.package, &user.version).map_err(fail)?;
            let record = derive_with(&wheel.path, api, &natives).map_err(fail)?;
            if !done(&record) {
                return Err(fail(LoadError::new(
                    &wheel.file,
                    format!("its METADATA names {} {}", record.package, record.version),
                )));
            }
            lines.push(format!(
                "read: image {}'s user {}=={}: {}, sha256 {}, {}",
                image.id,
                user.package,
                user.version,
                wheel
                    .url
                    .clone()
                    .unwrap_or_else(|| format!("{} (pip's configured index)", wheel.file)),
                wheel.sha256,
                if wheel.downloaded {
                    format!("downloaded ({} bytes)", wheel.size)
                } else {
                    "cached".to_owned()
                }
            ));
            records.push(record);
            wheels.push(wheel);
        }
    }
    index.trim(&wheels.iter().collect::<Vec<_>>());
    if records.is_empty() {
        lines.push("users --record: no pin image names a user; nothing to record".to_owned());
    }
    for line in lines {
        println!("{}", text(&line));
    }
    Ok(records)
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
            println!("warning: {}", text(w));
        }
        for f in &pin.verdict.failures {
            println!("{}", text(f));
        }
        println!(
            "image {}: {}: {} broken, {} warnings",
            pin.image,
            text(&pin.summary()),
            pin.verdict.failures.len(),
            pin.verdict.warnings.len()
        );
        if !pin.verdict.failures.is_empty() {
            outcome = Outcome::Failed;
        }
    }
    Ok(outcome)
}
