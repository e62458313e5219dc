//! `cargo xtask verify`: the upstream module against api.toml, statically (`--module`,
//! `--wheel`, `--fetch`) or in a real interpreter through the generated shim (`--python`).

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::FetchArgs;
use mooncake_sos_pysource::source::ModuleSource;
use std::path::PathBuf;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["module", "wheel", "python", "fetch", "consumer"])))]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// The upstream module source, a `.py` file.
    #[arg(long, value_name = "FILE")]
    module: Option<PathBuf>,
    /// A wheel; the module is read out of it.
    #[arg(long, value_name = "FILE")]
    wheel: Option<PathBuf>,
    /// Run the generated shim's check in this interpreter (its installed module and core).
    #[arg(long, value_name = "PYTHON")]
    python: Option<PathBuf>,
    /// Download the module at the pinned commit (checked against the pinned sha256, cached).
    #[arg(long)]
    fetch: bool,
    /// Also require the file to be the pinned one (its sha256 in api.toml).
    #[arg(long)]
    sha256: bool,
    /// Print the module's native surface (each use of the native core and of its package's
    /// modules) and check only that against api.toml.
    #[arg(long, conflicts_with_all = ["python", "sha256"])]
    surface: bool,
    /// Read consumer sources (a directory: every `.py` under it, hidden directories,
    /// site-packages and virtualenvs skipped): every use of the API and of the native core they make must be
    /// declared (and fit); declarations no consumer uses are listed.
    #[arg(long, value_name = "PATH", num_args = 1.., conflicts_with_all = ["sha256", "surface"])]
    consumer: Vec<PathBuf>,
    /// Write the declarations the module needs into api.toml (each undeclared [[native]]
    /// use with the overload the images' cores serve it with, each [[sibling]], each
    /// parameter's `domain` as the module gives it), then regen,
    /// as one change; prints the diff of api.toml. Refuses, writing nothing, what needs a
    /// person (a use a core cannot serve, a changed signature, a required use declared
    /// optional).
    #[arg(long, conflicts_with_all = ["python", "sha256", "surface", "consumer", "json"])]
    fix: bool,
    /// With --fix: also remove declarations nothing uses any more.
    #[arg(long, requires = "fix")]
    prune: bool,
    /// With --fix: print the diff of api.toml only; write nothing.
    #[arg(long, requires = "fix")]
    dry_run: bool,
    /// With --surface or --consumer: the report as JSON (with --consumer: the same as
    /// --format json).
    #[arg(long, conflicts_with = "format")]
    json: bool,
    /// With --consumer: the report's format: text, json, github (workflow commands) or sarif
    /// (SARIF 2.1.0).
    #[arg(long, value_enum, value_name = "FORMAT", requires = "consumer")]
    format: Option<mooncake_sos_checks::findings::Format>,
    /// With --consumer: report only these files (a commit's), read with the program the
    /// consumer paths hold.
    #[arg(long, value_name = "FILE", num_args = 1.., requires = "consumer")]
    only: Vec<PathBuf>,
    /// With --consumer: also list every use found, before the findings.
    #[arg(long, requires = "consumer")]
    uses: bool,
    /// With --consumer: also list api.toml's declarations no file given uses.
    #[arg(long, requires = "consumer")]
    unused: bool,
    #[command(flatten)]
    fetch_args: FetchArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let api = &manifest.api;
    if args.json && !args.surface && args.consumer.is_empty() {
        return Err(BadInput(
            "error: --json goes with --surface or --consumer".into(),
        ));
    }
    if !args.consumer.is_empty() {
        let options = mooncake_sos_checks::consumer::Options {
            format: mooncake_sos_checks::args::format(args.json, false, args.format),
            uses: args.uses,
            unused: args.unused,
            only: args.only.clone(),
        };
        let contract = crate::upstream::contract(manifest);
        return mooncake_sos_checks::consumer::verify(&contract, &args.consumer, &options);
    }
    if let Some(python) = &args.python {
        return crate::verify_python::run(manifest, python, args.sha256);
    }
    let source = if let Some(path) = &args.module {
        ModuleSource::read_module(path)
    } else if let Some(path) = &args.wheel {
        ModuleSource::read_wheel(path, &api.upstream.module)
    } else {
        let u = &api.upstream;
        let fetch = args.fetch_args.fetcher(manifest);
        fetch.module(u, &u.commit, Some(&u.sha256))
    }?;
    if args.surface {
        return crate::verify_surface::run(manifest, &source, args.json);
    }
    if args.fix {
        return crate::verify_fix::run(manifest, &source, args.prune, args.dry_run);
    }
    let checked = mooncake_sos_checks::module::check(
        &crate::upstream::contract(manifest),
        &source,
        args.sha256,
    )?;
    checked.print();
    Ok(if checked.ok() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
