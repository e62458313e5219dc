//! `cargo xtask bump --commit SHA (--module FILE | --fetch)`: moves the upstream pin, but only
//! to a module that carries the whole declared API and that every image can serve (its core,
//! its package's modules); then regenerates every output.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::FetchArgs;
use mooncake_sos_manifest::edit as pin;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_manifest::model::values::is_hex;
use mooncake_sos_pysource::source::{ModuleSource, sha256_hex};
use mooncake_sos_support::escape::text;
use mooncake_sos_watch::fetch::{Fetch, Limits, get};
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["module", "fetch"])))]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// The new upstream commit (40 lowercase hex digits).
    #[arg(long, value_name = "SHA")]
    commit: String,
    /// The module file at that commit.
    #[arg(long, value_name = "FILE")]
    module: Option<PathBuf>,
    /// Download the module at that commit instead.
    #[arg(long)]
    fetch: bool,
    #[command(flatten)]
    fetch_args: FetchArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let api = &manifest.api;
    let commit = &args.commit;
    if !is_hex(commit, 40) {
        return Err(BadInput(format!(
            "error: --commit {commit:?}: expected 40 lowercase hex digits"
        )));
    }
    let source = match &args.module {
        Some(path) => ModuleSource::read_module(path),
        None => {
            let fetch = args.fetch_args.fetcher(manifest);
            fetch_file_set(&fetch, api, commit)?;
            fetch.module(&api.upstream, commit, None)
        }
    }?;
    let checked =
        mooncake_sos_checks::module::check(&crate::upstream::contract(manifest), &source, false)?;
    checked.print();
    if !checked.ok() {
        println!(
            "bump: refused: {} does not carry the API api.toml declares; nothing written",
            text(&source.display)
        );
        return Ok(Outcome::Failed);
    }
    let outcome = crate::manifest::written(
        manifest.edit("bump", |text| pin::set_pin(text, commit, &source.sha256))?,
    )?;
    println!(
        "bump: {}: upstream pin {} -> {} (sha256 {})",
        manifest.display,
        api.upstream.short_commit(),
        &commit[..8],
        &source.sha256[..12]
    );
    Ok(outcome)
}

/// With `--fetch`: every `[[upstream.file]]` at the new commit must have the sha256 api.toml
/// declares (the file set is declared for the commit bump moves to); the image layer checks
/// the same hashes when it downloads them.
fn fetch_file_set(fetch: &Fetch, api: &Api, commit: &str) -> Result<()> {
    for file in &api.upstream.files {
        let base = fetch.base_url.trim_end_matches('/');
        let url = format!("{base}/{}/{commit}/{}", api.upstream.repo, file.path);
        let response =
            get(&url, Limits::default()).map_err(|e| BadInput(format!("{url}: error: {e}")))?;
        let found = sha256_hex(&response.body);
        if found != file.sha256 {
            return Err(BadInput(format!(
                "{url}: error: sha256 is {found}, expected {} ([[upstream.file]] {} in api.toml)",
                file.sha256, file.path
            )));
        }
    }
    Ok(())
}
