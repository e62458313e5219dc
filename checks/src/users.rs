//! `users`: the images' other users of the package (`[image.<id>] users`), recorded in
//! `consumers/` (`--record`: each user's wheel from the package index, through watch's index
//! and sha256-keyed cache; `--record WHEEL...`: from wheel files), and checked offline across
//! each pin image's pin (what `verify` runs too).

use crate::args::IndexArgs;
use crate::findings::{self, Finding, Format, RuleInfo};
use crate::{BadInput, Contract, Outcome, Result};
use mooncake_sos_manifest::core_record::Read;
use mooncake_sos_manifest::model::{Api, Image, Layer};
use mooncake_sos_native::record;
use mooncake_sos_native::users::{self, UserRecord};
use mooncake_sos_native::users_check::pin_users;
use mooncake_sos_pysource::source::LoadError;
use mooncake_sos_support::escape::text;
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct UsersArgs {
    /// Derive users' uses of the package and write consumers/<package>-<version>.json, all or
    /// nothing. Without WHEEL: every user a pin image names, its wheel from the package index
    /// (watch's index and cache: --index-url, --watch-cache, --offline); with WHEEL...: those
    /// files (each a user a pin image names).
    #[arg(long, value_name = "WHEEL", num_args = 0.., conflicts_with = "format")]
    pub record: Option<Vec<PathBuf>>,
    /// For --record without WHEEL: the interpreter whose pip downloads, as watch's (its tags
    /// choose the wheel file of the release).
    #[arg(long = "core-python", value_name = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// The check's report: text, json, github or sarif (a finding per use a pin breaks).
    #[arg(long, value_enum, value_name = "FORMAT")]
    pub format: Option<Format>,
    #[command(flatten)]
    pub index: IndexArgs,
}

/// The rule of a user's use a pin breaks.
pub const RULE: RuleInfo = RuleInfo {
    id: "user-pin",
    summary: "a use an image's other user makes that its base core served and the pinned core does not",
    help: "The pin breaks the image's own framework there: pin a release whose core serves the use, or keep the base's core.",
};

/// Records (`--record`), or checks every pin image's users.
pub fn run(args: &UsersArgs, contract: &Contract, cache: &Path) -> Result {
    let (api, root) = (&contract.api, contract.root.as_path());
    let records = match &args.record {
        None => return check_pins(api, root, args.format.unwrap_or(Format::Text)),
        Some(wheels) if wheels.is_empty() => from_index(args, contract, cache)?,
        Some(wheels) => wheels
            .iter()
            .map(|wheel| derive(api, root, wheel))
            .collect::<Result<Vec<_>>>()?,
    };
    for r in &records {
        let path = users::path(&contract.out, &r.package, &r.version);
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir)
                .map_err(|e| BadInput(format!("{}: error: cannot write: {e}", dir.display())))?;
        }
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
fn from_index(args: &UsersArgs, contract: &Contract, cache: &Path) -> Result<Vec<UserRecord>> {
    let (api, root) = (&contract.api, contract.root.as_path());
    let index = args
        .index
        .open(crate::args::interpreter(&args.python), cache);
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
                    contract.display,
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

/// One pin image's user in the JSON report.
#[derive(Serialize)]
struct Checked {
    image: String,
    user: String,
    version: String,
    base: String,
    pinned: String,
    uses: usize,
    broken: usize,
    warnings: Vec<String>,
}

/// Each pin user's warnings and misses, and a line per user; `Failed` on any miss. Images of
/// other strategies say why they are not checked.
pub fn check_pins(api: &Api, root: &Path, format: Format) -> Result {
    let pins = pin_users(api, root)?;
    let mut found = Vec::new();
    let mut checked = Vec::new();
    for pin in &pins {
        found.extend(pin.verdict.failures.iter().map(|f| located(f, &pin.image)));
        checked.push(Checked {
            image: pin.image.clone(),
            user: pin.user.package.clone(),
            version: pin.user.version.clone(),
            base: pin.base.clone(),
            pinned: pin.pinned.clone(),
            uses: pin.verdict.checked,
            broken: pin.verdict.failures.len(),
            warnings: pin.verdict.warnings.clone(),
        });
    }
    let summary = format!(
        "users: {} user(s) across their pins, {} broken use(s)",
        pins.len(),
        found.len()
    );
    match format {
        Format::Text => print_text(api, &pins),
        Format::Json => {
            let json = serde_json::json!({
                "findings": found,
                "users": checked,
                "ok": found.is_empty(),
            });
            println!("{}", findings::json_text(&json)?);
        }
        Format::Github => print!("{}", findings::github(&found, &summary)),
        Format::Sarif => println!("{}", findings::sarif("users", &[RULE], &found, &summary)),
        Format::Markdown => {
            return Err(BadInput(
                "error: users prints text, json, github or sarif, not markdown".into(),
            ));
        }
    }
    Ok(Outcome::of(found.is_empty()))
}

fn print_text(api: &Api, pins: &[mooncake_sos_native::users_check::PinUser]) {
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
    for pin in pins {
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
    }
}

/// A failure line of the users' check (`FILE:LINE: WHAT`, the file inside the user's
/// package) as a finding.
fn located(failure: &str, image: &str) -> Finding {
    let place = failure.split_once(": ").and_then(|(at, what)| {
        let (file, line) = at.rsplit_once(':')?;
        Some((file, line.parse::<usize>().ok()?, what))
    });
    let (file, line, message) = place.unwrap_or(("", 0, failure));
    Finding {
        file: file.to_owned(),
        line,
        column: 0,
        rule: RULE.id,
        message: message.to_owned(),
        images: vec![image.to_owned()],
    }
}
