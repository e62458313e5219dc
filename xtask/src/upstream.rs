//! What several commands take from the command line about upstream: where `--fetch` reads
//! the module, the caches, the package index and the core reader (the checks crate's), and
//! how `watch` and `adopt` are put together from them.

use crate::exit::BadInput;
use crate::manifest::{Manifest, repo_root};
use mooncake_sos_native::images::ImageFinding;
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_support::escape::{self, lines};
use mooncake_sos_watch as watch;
use mooncake_sos_watch::fetch::Fetch;
use std::path::PathBuf;
use std::time::Duration;

/// Where `--fetch` downloads from and keeps the files.
#[derive(clap::Args, Clone, Debug)]
pub struct FetchArgs {
    /// The raw-file server the upstream module is downloaded from (default:
    /// upstream.raw_base_url in api.toml).
    #[arg(long, value_name = "URL")]
    raw_base_url: Option<String>,
    /// Where downloaded upstream modules are kept (default: target/upstream-cache beside the
    /// manifest).
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
