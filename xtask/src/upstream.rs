//! The upstream module, as verify and bump both read and check it: from a file, a wheel or
//! a download, parsed and compared with the manifest statically.

use crate::exit::BadInput;
use crate::manifest::{Manifest, repo_root};
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images::{self, ImageFinding};
use mooncake_sos_native::record;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_support::escape::{self, lines, text};
use mooncake_sos_watch as watch;
use mooncake_sos_watch::fetch::Fetch;
use std::path::PathBuf;
use std::time::Duration;

/// Where `--fetch` downloads from and keeps the files.
#[derive(clap::Args, Clone, Debug)]
pub struct FetchArgs {
    /// For --fetch: the raw-file server (default: upstream.raw_base_url in api.toml).
    #[arg(long, value_name = "URL")]
    raw_base_url: Option<String>,
    /// For --fetch: where downloads are kept (default: target/upstream-cache beside the manifest).
    #[arg(long, value_name = "DIR")]
    cache_dir: Option<PathBuf>,
}

impl FetchArgs {
    pub fn fetcher(&self, manifest: &Manifest) -> Fetch {
        Fetch {
            base_url: self
                .raw_base_url
                .clone()
                .unwrap_or_else(|| manifest.api.upstream.raw_base_url.clone()),
            cache_dir: self
                .cache_dir
                .clone()
                .unwrap_or_else(|| manifest.root().join("target/upstream-cache")),
        }
    }
}

/// The checked module: its mismatch lines (none when all match) and a one-line summary.
pub struct Checked {
    pub lines: Vec<String>,
    pub summary: String,
}

impl Checked {
    pub fn ok(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn print(&self) {
        for line in &self.lines {
            println!("{}", text(line));
        }
        println!("{}", text(&self.summary));
    }
}

/// Checks `source` against every declared symbol, its native surface against the declared
/// one (the surface's warnings go to stderr), and against every image: the uses its core's
/// record (`cores/`) must serve, the modules of the package it must have. `sha256`: it must
/// also be the pinned file. A missing or malformed record is bad input, before anything is
/// printed.
pub fn check(
    manifest: &Manifest,
    source: &ModuleSource,
    sha256: bool,
) -> crate::exit::Result<Checked> {
    let api = &manifest.api;
    let sides = images::load_all(manifest.root(), api)?;
    let (symbols, surface) = mooncake_sos_pysource::verify_with_surface(api, source)?;
    let mut lines = symbols.lines();
    if sha256 && let Some(line) = mooncake_sos_pysource::sha256_mismatch(api, source) {
        lines.push(line);
    }
    lines.extend(surface.failure_lines());
    for line in surface.warning_lines() {
        eprintln!("{}", text(&line));
    }
    let findings = images::check(&sides, &surface.file, &surface.uses);
    lines.extend(findings.iter().map(ImageFinding::line));
    // The images' other users of the package, across each pin, from their records.
    let users = mooncake_sos_native::users_check::pin_users(api, manifest.root())?;
    for pin in &users {
        for line in &pin.verdict.warnings {
            eprintln!("warning: {}", text(line));
        }
        lines.extend(pin.verdict.failures.iter().cloned());
    }
    let users: String = users
        .iter()
        .map(|pin| format!("; {} served", pin.summary()))
        .collect();
    let summary = if lines.is_empty() {
        format!(
            "verify: {} matches api.toml: {} symbols, {} items checked, native surface: {} members, {} sibling modules, served by every image ({}){users}{} (sha256 {})",
            source.display,
            api.symbols.len(),
            symbols.items.len(),
            api.surface.members.len(),
            api.surface.siblings.len(),
            images::summary(&sides),
            if sha256 { ", the pinned file" } else { "" },
            &source.sha256[..12]
        )
    } else {
        format!(
            "verify: {} mismatch(es) in {} against api.toml (pin {})",
            lines.len(),
            source.display,
            api.upstream.short_commit()
        )
    };
    Ok(Checked { lines, summary })
}

/// The core reader's options and the package index's, shared with the checks crate (whose
/// pipelines `core` and `users` run).
pub use mooncake_sos_checks::args::{IndexArgs, Reading};

/// The manifest as the checks crate reads it: api.toml, the records beside it.
pub fn contract(manifest: &Manifest) -> mooncake_sos_checks::Contract {
    mooncake_sos_checks::Contract::new(manifest.api.clone(), manifest.root(), &manifest.display)
}

/// `$CARGO_TARGET_DIR/mooncake-sos`, else `target/mooncake-sos` in the repository: the read
/// cores (`cores/`), the CUDA runtimes (`runtimes/`), watch's wheels (`watch/`).
pub fn cache_root() -> crate::exit::Result<PathBuf> {
    let target = match std::env::var_os("CARGO_TARGET_DIR") {
        Some(dir) => PathBuf::from(dir),
        None => repo_root()?.join("target"),
    };
    Ok(target.join("mooncake-sos"))
}

/// Core columns for `matrix --core`: wheels, directories of wheels, or records (`*.json`).
pub fn columns(
    inputs: &[PathBuf],
    reading: &Reading,
    api: &Api,
) -> crate::exit::Result<Vec<(CoreSurface, String)>> {
    let reader = reading.reader(&cache_root()?)?;
    let mut wheels = Vec::new();
    let mut columns = Vec::new();
    for input in inputs {
        if input.is_dir() {
            wheels.extend(mooncake_sos_pysource::source::wheels_in(
                input,
                api.upstream.package(),
            )?);
        } else if input.extension().is_some_and(|x| x == "json") {
            let surface = record::load(input)?;
            columns.push((surface, input.display().to_string()));
        } else {
            wheels.push(input.clone());
        }
    }
    for wheel in wheels {
        let surface = reader.read(&wheel, &api.upstream.native_module)?;
        columns.push((surface, wheel.display().to_string()));
    }
    Ok(columns)
}

/// Prints a report (`verify --surface`, `verify --consumer`) with the images' findings and the
/// verdict as one JSON document: the report's fields, `images` and `ok`.
pub fn print_json_report(
    report: &impl serde::Serialize,
    findings: &[ImageFinding],
    ok: bool,
) -> Result<(), BadInput> {
    let json = |e: serde_json::Error| BadInput(format!("error: cannot write the JSON report: {e}"));
    let mut value = serde_json::to_value(report).map_err(json)?;
    value["images"] = serde_json::to_value(findings).map_err(json)?;
    value["ok"] = ok.into();
    println!("{}", escape::json(&format!("{value:#}")));
    Ok(())
}

/// What `watch` and `adopt` read: the index, the cores, the pinned module.
#[derive(clap::Args, Clone)]
pub struct WatchArgs {
    #[command(flatten)]
    pub index: IndexArgs,
    /// Check every listed release, not only those from the oldest api.toml names.
    #[arg(long)]
    pub all: bool,
    /// The most releases of one package checked (each is a download and a check): those
    /// api.toml names, then the newest; the others are listed as not checked.
    #[arg(long, value_name = "N", default_value_t = 20)]
    pub max_releases: usize,
    /// Run the consumer's scenarios (`python3 -m <shim> --smoke`) against every release whose
    /// wheel runs here, each in a throwaway venv.
    #[arg(long)]
    pub smoke: bool,
    /// For --smoke: a directory of wheels numpy and msgpack are installed from (offline);
    /// default: the index.
    #[arg(long, value_name = "DIR")]
    pub smoke_deps: Option<PathBuf>,
    /// No progress on stderr (by default: a live bar on a terminal, one line per step
    /// otherwise).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub reading: Reading,
    #[command(flatten)]
    pub fetch: FetchArgs,
}

impl WatchArgs {
    pub fn index(&self) -> crate::exit::Result<watch::index::Index> {
        Ok(self.index.open(self.reading.interpreter(), &cache_root()?))
    }

    /// Lists, downloads and checks every release (`mooncake_sos_watch::run`).
    pub fn run(&self, manifest: &Manifest) -> crate::exit::Result<(watch::Report, watch::Timings)> {
        let index = self.index()?;
        let mut reader = self.reading.reader(&cache_root()?)?;
        if let Some(runtimes) = &mut reader.runtimes {
            runtimes.index_url = self.index.index_url.clone();
            runtimes.offline = self.index.offline;
        }
        let pinned = self
            .pinned(manifest)?
            .inspect_err(|why| {
                let why = why.to_string();
                eprintln!("watch: the pinned module: {}", lines(&why));
            })
            .ok();
        let smoker = watch::smoke::Smoker {
            python: self.reading.interpreter(),
            shim: manifest
                .root()
                .join(mooncake_sos_codegen::render::shim_path(&manifest.api).as_str()),
            deps: self.smoke_deps.clone(),
            index_url: self.index.index_url.clone(),
            lib_dirs: reader.lib_dirs.clone(),
            offline: self.index.offline,
            timeout: Duration::from_secs(300),
            cache_dir: index.cache_dir.clone(),
            isolation: reader.isolation.clone(),
            runtimes: reader.runtimes.clone(),
            native_module: manifest.api.upstream.native_module.clone(),
        };
        let progress = mooncake_sos_native::progress::Progress::new("watch", self.quiet);
        let options = watch::Options {
            index: &index,
            reader: &reader,
            all: self.all,
            max_releases: self.max_releases,
            pinned,
            smoker: self.smoke.then_some(&smoker),
            progress: &progress,
        };
        Ok(watch::run(
            &manifest.api,
            manifest.root(),
            &manifest.text,
            options,
        )?)
    }

    /// The pinned module: from `--fetch`'s cache (sha256-checked), else downloaded unless
    /// offline; why it could not be had is not an error (the baseline falls back), a cache
    /// entry that is not a file is.
    fn pinned(
        &self,
        manifest: &Manifest,
    ) -> crate::exit::Result<std::result::Result<ModuleSource, String>> {
        let up = &manifest.api.upstream;
        let fetch = self.fetch.fetcher(manifest);
        let named = |mut s: ModuleSource| {
            s.display = up.path.clone();
            s
        };
        if let Some(module) = fetch.cached(up, &up.commit, &up.sha256)? {
            return Ok(Ok(named(module)));
        }
        if self.index.offline {
            return Ok(Err("not in the cache".into()));
        }
        Ok(fetch
            .module(up, &up.commit, Some(&up.sha256))
            .map(named)
            .map_err(|e| e.message))
    }
}
