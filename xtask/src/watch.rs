//! `cargo xtask watch [--json | --markdown | --github] [--offline]`: every release of every
//! package api.toml's images name, checked against the contract, and per image the transition
//! the releases now allow. Exit 0: nothing to do; 1: a transition is possible or a newer
//! release would break an image; 2: an error. The work is `mooncake_sos_upstream::watch`.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::ManifestArg;
use crate::upstream::{FetchArgs, Reading};
use mooncake_sos_upstream::source::{ModuleSource, sha256_hex};
use mooncake_sos_upstream::watch::{self, index::Index, render};
use std::path::PathBuf;
use std::time::Duration;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("format").args(["json", "markdown", "github"])))]
pub struct Args {
    /// The report as JSON.
    #[arg(long)]
    json: bool,
    /// A Markdown table, for a pull request's body.
    #[arg(long)]
    markdown: bool,
    /// GitHub workflow annotations against api.toml's lines.
    #[arg(long)]
    github: bool,
    /// Only the cache: no pip, no download.
    #[arg(long)]
    offline: bool,
    /// The package index pip reads (a PEP 503 simple index); default: pip's configuration.
    #[arg(long, value_name = "URL")]
    index_url: Option<String>,
    /// Where wheels and listings are kept (default: mooncake-sos/watch in the target directory).
    #[arg(long, value_name = "DIR")]
    watch_cache: Option<PathBuf>,
    /// The cache's bound in MiB: least recently used wheels are removed past it.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    max_cache_mib: u64,
    /// Check every listed release, not only those from the oldest api.toml names.
    #[arg(long)]
    all: bool,
    /// Print how long listing, downloads and checks took (stderr).
    #[arg(long)]
    timings: bool,
    /// Seconds one pip run may take.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pip_timeout: u64,
    #[command(flatten)]
    reading: Reading,
    #[command(flatten)]
    fetch: FetchArgs,
    #[command(flatten)]
    manifest: ManifestArg,
}

pub fn run(args: &Args) -> Result {
    let manifest = args.manifest.load()?;
    let api = &manifest.api;
    let cache_dir = match &args.watch_cache {
        Some(dir) => dir.clone(),
        None => crate::upstream::cache_dir()?.with_file_name("watch"),
    };
    let index = Index {
        python: args.reading.python.clone(),
        url: args.index_url.clone(),
        cache_dir,
        max_cache_bytes: args.max_cache_mib << 20,
        offline: args.offline,
        timeout: Duration::from_secs(args.pip_timeout),
    };
    let reader = args.reading.reader()?;
    let pinned = pinned(args, &manifest)
        .inspect_err(|why| eprintln!("watch: the pinned module: {why}"))
        .ok();
    let (report, timings) = watch::run(
        api,
        manifest.root(),
        &manifest.text,
        watch::Options {
            index: &index,
            reader: &reader,
            all: args.all,
            pinned,
        },
    )
    .map_err(BadInput::from)?;
    if args.json {
        println!("{}", render::json(&report));
    } else if args.markdown {
        print!("{}", render::markdown(&report));
    } else if args.github {
        print!("{}", render::github(&report, &manifest.display));
    } else {
        print!("{}", render::text(&report));
    }
    if args.timings {
        eprintln!(
            "watch timings: total {:.3} s, listing {:.3} s, download {:.3} s ({} wheels, {} bytes), checks {:.3} s",
            timings.total.as_secs_f64(),
            timings.listing.as_secs_f64(),
            timings.download.as_secs_f64(),
            timings.downloads,
            timings.downloaded_bytes,
            timings.checks.as_secs_f64()
        );
    }
    Ok(if report.actionable() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}

/// The pinned module: from `--fetch`'s cache (sha256-checked), else downloaded unless offline.
fn pinned(
    args: &Args,
    manifest: &crate::manifest::Manifest,
) -> std::result::Result<ModuleSource, String> {
    let up = &manifest.api.upstream;
    let fetch = args.fetch.fetcher(manifest);
    let cached = fetch.cache_dir.join(&up.commit).join(up.file_name());
    if let Ok(bytes) = std::fs::read(&cached)
        && sha256_hex(&bytes) == up.sha256
    {
        return ModuleSource::from_bytes(up.path.clone(), bytes).map_err(|e| e.to_string());
    }
    if args.offline {
        return Err("not in the cache".into());
    }
    fetch
        .module(up, &up.commit, Some(&up.sha256))
        .map(|mut s| {
            s.display = up.path.clone();
            s
        })
        .map_err(|e| e.message)
}
