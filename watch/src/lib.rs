//! `watch`: the releases on the package index of every package api.toml's images name, each
//! checked against the contract ([`release`]), and per image the transition the releases now
//! allow ([`plan`]). [`index`] lists and downloads through pip into a cache keyed by sha256;
//! [`module_diff`] compares a release's module with the pinned one; [`render`] prints the report.

pub mod adopt;
pub mod fetch;
pub mod index;
pub mod links;
pub mod listing;
pub mod module_diff;
pub mod plan;
pub mod redirect;
pub mod release;
pub mod render;
pub mod smoke;
pub mod verdicts;

use index::{Index, Wheel};
use mooncake_sos_manifest::model::{Api, Layer};
use mooncake_sos_native::images;
use mooncake_sos_native::read::Reader;
use mooncake_sos_pysource::extract::extract;
use mooncake_sos_pysource::source::{LoadError, ModuleSource};
use mooncake_sos_pysource::version::{Release, compare};
use plan::ImagePlan;
use rayon::prelude::*;
use release::ReleaseReport;
use serde::Serialize;
use std::path::Path;
use std::time::{Duration, Instant};

/// What watch found; the same facts in every output format.
#[derive(Clone, Debug, Serialize)]
pub struct Report {
    /// What each release's module is compared with.
    pub baseline: String,
    pub packages: Vec<PackageReport>,
    pub images: Vec<ImagePlan>,
}

#[derive(Clone, Debug, Serialize)]
pub struct PackageReport {
    pub package: String,
    /// Every release the index lists (for this interpreter).
    pub listed: Vec<String>,
    /// The ones checked: from the oldest release api.toml names on (all with `--all`), at
    /// most `--max-releases` of them: those api.toml names, then the newest.
    pub releases: Vec<ReleaseReport>,
    /// The ones past `--max-releases`, not checked (each costs a download and a check).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub skipped: Vec<String>,
}

impl Report {
    pub fn actionable(&self) -> bool {
        self.images.iter().any(ImagePlan::actionable)
    }
}

/// How long the parts took, for `--timings` and the benchmark; not part of the report.
#[derive(Clone, Debug, Default)]
pub struct Timings {
    pub listing: Duration,
    pub download: Duration,
    pub downloads: usize,
    pub downloaded_bytes: u64,
    pub checks: Duration,
    /// Releases whose verdict an earlier run kept (the rest were checked).
    pub kept: usize,
    pub checked: usize,
    pub total: Duration,
}

pub struct Options<'a> {
    pub index: &'a Index,
    pub reader: &'a Reader,
    /// Every listed release, not only those from the oldest api.toml names.
    pub all: bool,
    /// The most releases of one package checked (those api.toml names first, then the
    /// newest); the rest are reported as skipped.
    pub max_releases: usize,
    /// The pinned module, when it could be had (`--fetch`'s cache or a download).
    pub pinned: Option<ModuleSource>,
    /// `--smoke`: the consumer's scenarios against each release that runs here.
    pub smoker: Option<&'a smoke::Smoker>,
    /// Where each step is shown (stderr).
    pub progress: &'a mooncake_sos_native::progress::Progress,
}

/// The packages the images name, in the order api.toml names them: each overlay's base
/// package, each fill's package and its core's.
pub fn packages(api: &Api) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for p in api.image_packages() {
        if !out.iter().any(|o| o == p) {
            out.push(p.to_owned());
        }
    }
    out
}

/// The releases api.toml names (an image's, its pin's, a core's, [drop]'s), oldest first.
fn named(api: &Api) -> Vec<String> {
    let mut named: Vec<Release> = Vec::new();
    let mut add = |version: &String| {
        named.push(Release {
            package: String::new(),
            version: version.clone(),
        })
    };
    for image in &api.images {
        match &image.layer {
            Layer::Overlay { base_version, .. } | Layer::Check { base_version, .. } => {
                add(base_version)
            }
            Layer::Pin {
                base_version,
                release,
                ..
            } => {
                add(base_version);
                add(&release.version);
            }
            Layer::Fill { version, .. } => add(version),
        }
        add(&image.core.version);
    }
    if let Some((_, v)) = &api.drop.first_release {
        add(v);
    }
    named.sort_by(compare);
    named.into_iter().map(|r| r.version).collect()
}

/// Of the releases `wanted` (version order), at most `max`: those api.toml names, then the
/// newest; and the others.
fn cap<'a>(
    wanted: Vec<&'a String>,
    named: &[String],
    max: usize,
) -> (Vec<&'a String>, Vec<String>) {
    if wanted.len() <= max {
        return (wanted, Vec::new());
    }
    let mut keep: Vec<bool> = wanted.iter().map(|v| named.contains(v)).collect();
    let mut left = max.saturating_sub(keep.iter().filter(|k| **k).count());
    for k in keep.iter_mut().rev() {
        if left == 0 {
            break;
        }
        if !*k {
            *k = true;
            left -= 1;
        }
    }
    let (mut kept, mut skipped) = (Vec::new(), Vec::new());
    for (version, keep) in wanted.into_iter().zip(keep) {
        if keep {
            kept.push(version);
        } else {
            skipped.push(version.clone());
        }
    }
    (kept, skipped)
}

/// Lists, downloads and checks every release, then plans every image. `manifest_text` is
/// api.toml's text (for the lines annotations point at).
pub fn run(
    api: &Api,
    root: &Path,
    manifest_text: &str,
    options: Options,
) -> Result<(Report, Timings), LoadError> {
    let started = Instant::now();
    let mut timings = Timings::default();
    let named = named(api);
    let floor = if options.all {
        None
    } else {
        named.first().cloned()
    };
    // 1. list and download
    let t = Instant::now();
    let progress = options.progress;
    let names = packages(api);
    progress.expect(names.len() as u64);
    let listings = names
        .into_par_iter()
        .map(|package| {
            progress.start(&format!("listing {package}"));
            let versions = options.index.versions(&package)?;
            progress.done();
            Ok((versions, package))
        })
        .collect::<Vec<Result<_, LoadError>>>()
        .into_iter()
        // The first error in api.toml's order, whichever thread met it first.
        .collect::<Result<Vec<_>, _>>()?;
    timings.listing = t.elapsed();
    let mut listed = Vec::new();
    for (versions, package) in listings {
        let wanted: Vec<&String> = versions
            .iter()
            .filter(|v| at_least(v, floor.as_deref()))
            .collect();
        let (wanted, skipped) = cap(wanted, &named, options.max_releases);
        // Each release is fetched, then checked. Fetched in parallel: a download is mostly
        // pip starting up.
        progress.expect(2 * wanted.len() as u64);
        let t = Instant::now();
        let wheels = wanted
            .par_iter()
            .map(|version| {
                progress.start(&format!(
                    "{package} {version}: the wheel (cache or download)"
                ));
                let wheel = options.index.wheel(&package, version);
                progress.done();
                wheel
            })
            .collect::<Vec<_>>()
            .into_iter()
            // The first error in version order, whichever thread met it first.
            .collect::<Result<Vec<Wheel>, LoadError>>()?;
        let downloaded: Vec<&Wheel> = wheels.iter().filter(|w| w.downloaded).collect();
        if !downloaded.is_empty() {
            timings.download += t.elapsed();
        }
        timings.downloads += downloaded.len();
        timings.downloaded_bytes += downloaded.iter().map(|w| w.size).sum::<u64>();
        listed.push((package, versions, wheels, skipped));
    }
    let all: Vec<&Wheel> = listed.iter().flat_map(|(_, _, w, _)| w).collect();
    options.index.trim(&all);
    // 2. the baseline: the pinned module, else the module of [drop]'s first release.
    let t = Instant::now();
    let (baseline, baseline_source) = baseline(api, &options, &all)?;
    let mut sides = Vec::new();
    for (mut side, image) in images::load_all(root, api)?.into_iter().zip(&api.images) {
        let layer = match &image.layer {
            Layer::Overlay { .. } => "one-file overlay",
            Layer::Fill { .. } => "fill",
            // A pin takes module and core from one wheel (its own core verdict says it all);
            // the module alone over the base's wheel is what an overlay would do, when the
            // base's core is recorded.
            Layer::Pin {
                base_package,
                base_version,
                ..
            } => {
                let path = mooncake_sos_native::record::path(root, base_package, base_version);
                let Ok(core) = mooncake_sos_native::record::load(&path) else {
                    continue;
                };
                side.record =
                    mooncake_sos_native::record::relative_path(base_package, base_version);
                side.provided_by = format!("its base {}", core.label());
                side.core = core;
                "one-file overlay"
            }
            Layer::Check { .. } => "one-file overlay",
        };
        sides.push((side, Some(layer), image.layer.package().to_owned()));
    }
    // Pin images' recorded users: a release that breaks one is not fit for that pin (a
    // missing record is verify's to report).
    let mut users = Vec::new();
    let mut user_texts = Vec::new();
    for image in api
        .images
        .iter()
        .filter(|i| matches!(i.layer, Layer::Pin { .. }))
    {
        for user in &image.users {
            let path = mooncake_sos_native::users::path(root, &user.package, &user.version);
            if path.exists() {
                let record = mooncake_sos_native::users::load(&path)?;
                // The record as loaded is part of the verdicts' key.
                user_texts.push(record.to_json());
                users.push((image.id.clone(), record));
            }
        }
    }
    let verdicts = verdicts::Verdicts::new(
        Some(options.index.cache_dir.join("verdicts")),
        &verdicts::Inputs {
            manifest: manifest_text,
            baseline: &baseline,
            baseline_sha256: baseline_source.as_ref().map_or("", |s| s.sha256.as_str()),
            sides: &sides_identity(&sides),
            users: &user_texts.join("\0"),
            reader: &options.reader.identity(),
            smoke: &options
                .smoker
                .map_or_else(|| "no smoke".to_owned(), |s| s.identity()),
            tool: &verdicts::tool_identity(),
        },
    );
    // 3. every release: an earlier verdict on the same inputs, else checked (in parallel:
    // each is a parse, a core read, a smoke, independent of the others).
    let found: Vec<Option<ReleaseReport>> = all
        .iter()
        .map(|w| {
            let kept = verdicts.get(w)?;
            if kept.is_some() {
                progress.start(&format!("{} {}: checking", w.package, w.version));
                progress.done();
            }
            Ok(kept)
        })
        .collect::<Result<_, LoadError>>()?;
    timings.kept = found.iter().flatten().count();
    let missing: Vec<&Wheel> = all
        .iter()
        .zip(&found)
        .filter(|(_, f)| f.is_none())
        .map(|(w, _)| *w)
        .collect();
    let checked = if missing.is_empty() {
        Vec::new()
    } else {
        let facts = baseline_source.as_ref().map(extract).transpose()?;
        let cx = release::Context {
            api,
            reader: options.reader,
            sides: &sides,
            baseline: facts.as_ref(),
            smoker: options.smoker,
            users: &users,
        };
        let checked = missing
            .par_iter()
            .map(|w| {
                progress.start(&format!("{} {}: checking", w.package, w.version));
                let checked = release::check(&cx, w);
                progress.done();
                checked
            })
            .collect::<Vec<_>>()
            .into_iter()
            .collect::<Result<Vec<_>, _>>()?;
        timings.checked = checked.len();
        for (w, report) in missing.iter().zip(&checked) {
            verdicts.put(w, report);
        }
        checked
    };
    let mut checked = checked.into_iter();
    let mut found = found.into_iter();
    let mut packages = Vec::new();
    for (package, versions, wheels, skipped) in listed {
        let releases = wheels
            .iter()
            .map(|_| {
                found
                    .next()
                    .flatten()
                    .or_else(|| checked.next())
                    .expect("a verdict for every wheel")
            })
            .collect();
        packages.push(PackageReport {
            package,
            listed: versions,
            releases,
            skipped,
        });
    }
    let releases: Vec<ReleaseReport> = packages
        .iter()
        .flat_map(|p| p.releases.iter().cloned())
        .collect();
    let images = api
        .images
        .iter()
        .map(|image| plan::plan(image, image.strategy_line, &releases))
        .collect();
    timings.checks = t.elapsed();
    timings.total = started.elapsed();
    progress.finish();
    Ok((
        Report {
            baseline,
            packages,
            images,
        },
        timings,
    ))
}

fn at_least(version: &str, floor: Option<&str>) -> bool {
    let Some(floor) = floor else { return true };
    let r = |v: &str| Release {
        package: String::new(),
        version: v.to_owned(),
    };
    compare(&r(version), &r(floor)) != std::cmp::Ordering::Less
}

fn baseline(
    api: &Api,
    options: &Options,
    wheels: &[&Wheel],
) -> Result<(String, Option<ModuleSource>), LoadError> {
    if let Some(pinned) = &options.pinned {
        let label = format!(
            "the pinned module ({} at {}, sha256 {})",
            api.upstream.path,
            api.upstream.short_commit(),
            &pinned.sha256[..12]
        );
        return Ok((label, Some(pinned.clone())));
    }
    // Why the pinned module is missing goes to stderr (the caller's): the report stays the
    // same online and offline.
    let why = "which is neither in the --fetch cache nor downloadable here";
    let Some((package, version)) = &api.drop.first_release else {
        return Ok((format!("none (the pinned module: {why})"), None));
    };
    let Some(wheel) = wheels
        .iter()
        .find(|w| &w.package == package && &w.version == version)
    else {
        return Ok((
            format!("none (the pinned module: {why}; {package} {version} not listed)"),
            None,
        ));
    };
    let mut source = ModuleSource::read_wheel(&wheel.path, &api.upstream.module)?;
    source.display = wheel.file.clone();
    Ok((
        format!(
            "the module of {package} {version} ([drop] first_release), standing for the pinned one ({why})"
        ),
        Some(source),
    ))
}

/// Everything a release is checked against on the images' side, as text for the verdicts'
/// key: each side's image, record (the core as loaded from cores/), modules, layer, package.
fn sides_identity(sides: &[(images::ImageSide, Option<&'static str>, String)]) -> String {
    sides
        .iter()
        .map(|(side, layer, package)| {
            format!(
                "{}\n{}\n{}\n{:?}\n{}\n{:?}\n{layer:?}\n{package}\n",
                side.image,
                side.record,
                side.core.to_json(),
                side.modules,
                side.provided_by,
                side.shadowing
            )
        })
        .collect()
}

#[cfg(test)]
mod tests {
    #[test]
    fn past_the_cap_the_named_releases_and_the_newest_are_checked() {
        let wanted: Vec<String> = (0..8).map(|i| format!("0.{i}")).collect();
        let refs: Vec<&String> = wanted.iter().collect();
        let named = ["0.1".to_owned(), "0.3".to_owned()];
        let (kept, skipped) = super::cap(refs.clone(), &named, 5);
        assert_eq!(kept, ["0.1", "0.3", "0.5", "0.6", "0.7"]);
        assert_eq!(skipped, ["0.0", "0.2", "0.4"]);
        let (kept, skipped) = super::cap(refs.clone(), &named, 8);
        assert_eq!((kept.len(), skipped.len()), (8, 0));
        // More named than the cap: every named one still.
        let (kept, _) = super::cap(refs, &named, 1);
        assert_eq!(kept, ["0.1", "0.3"]);
    }
}
