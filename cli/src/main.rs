//! `mooncake-sos`: the contract's checks for a repository that uses it, with the contract it
//! was built from (api.toml and its records) inside; `--manifest` reads another. It parses
//! arguments and maps the outcome to the exit code; the pipelines are the checks crate's,
//! the same `cargo xtask` runs.

use clap::{Parser, Subcommand};
use mooncake_sos_checks::{BadInput, Contract, Result, consumer, core, findings::Format, users};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod contract {
    include!(concat!(env!("OUT_DIR"), "/contract.rs"));
}

#[derive(Parser)]
#[command(
    name = "mooncake-sos",
    about = "Check a repository's use of mooncake.structured_object_store against the contract",
    disable_version_flag = true,
    arg_required_else_help = true
)]
struct Cli {
    /// Another contract's api.toml (its cores/ and consumers/ beside it) instead of the
    /// built-in one.
    #[arg(long, value_name = "PATH", global = true)]
    manifest: Option<PathBuf>,
    /// The version, and the contract: the upstream commit, the images and their pins.
    #[arg(short = 'V', long)]
    version: bool,
    #[command(subcommand)]
    command: Option<Command>,
}

#[derive(Subcommand)]
enum Command {
    /// Every use consumer sources make of the API and of the native core must be declared,
    /// fit, and be served by every image's core.
    Verify(Verify),
    /// Read wheels' native cores; check the images' recorded cores; diff two cores.
    Core(core::CoreArgs),
    /// The images' other users of the package: record them, check them across pins.
    Users(users::UsersArgs),
}

#[derive(clap::Args)]
struct Verify {
    /// Consumer sources: files, or directories (every `.py` under them; hidden directories,
    /// site-packages and virtualenvs skipped).
    #[arg(long, value_name = "PATH", num_args = 1.., required = true)]
    consumer: Vec<PathBuf>,
    /// Report only these files (a commit's), read with the program the consumer paths hold.
    #[arg(long, value_name = "FILE", num_args = 1..)]
    only: Vec<PathBuf>,
    /// The report's format.
    #[arg(long, value_enum, value_name = "FORMAT", default_value = "text")]
    format: Format,
    /// The report as JSON (the same as --format json).
    #[arg(long)]
    json: bool,
    /// Text: also list every use found, before the findings.
    #[arg(long)]
    uses: bool,
    /// Text: also list api.toml's declarations no file given uses.
    #[arg(long)]
    unused: bool,
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so `println!` into a closed pipe panics; restore the default.
    // SAFETY: signal(2) with SIG_DFL, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    mooncake_sos_support::bounded::sweep_stale(&std::env::temp_dir());
    mooncake_sos_checks::exit_code(run(cli))
}

fn run(cli: Cli) -> Result {
    let contract = match &cli.manifest {
        Some(path) => Contract::load(path)?,
        None => Contract::from_files(contract::FILES, Path::new("."))?,
    };
    if cli.version {
        println!("mooncake-sos {}", env!("CARGO_PKG_VERSION"));
        let records: Vec<&str> = match cli.manifest {
            Some(_) => Vec::new(),
            None => contract::FILES
                .iter()
                .map(|(rel, _)| *rel)
                .filter(|rel| *rel != "api.toml")
                .collect(),
        };
        for line in contract.describe(&records) {
            println!("{line}");
        }
        return Ok(mooncake_sos_checks::Outcome::Ok);
    }
    match cli.command {
        Some(Command::Verify(args)) => {
            let options = consumer::Options {
                format: mooncake_sos_checks::args::format(args.json, false, Some(args.format)),
                uses: args.uses,
                unused: args.unused,
                only: args.only,
            };
            consumer::verify(&contract, &args.consumer, &options)
        }
        Some(Command::Core(args)) => core::run(&args, &contract, &cache_root()?),
        Some(Command::Users(args)) => users::run(&args, &contract, &cache_root()?),
        None => Err(BadInput("error: a command is needed (see --help)".into())),
    }
}

/// `$XDG_CACHE_HOME/mooncake-sos`, else `~/.cache/mooncake-sos`: the read cores, the CUDA
/// runtimes, the package index's wheels.
fn cache_root() -> Result<PathBuf> {
    let base = std::env::var_os("XDG_CACHE_HOME")
        .filter(|d| !d.is_empty())
        .map(PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".cache")))
        .ok_or_else(|| BadInput("error: neither XDG_CACHE_HOME nor HOME is set".into()))?;
    Ok(base.join("mooncake-sos"))
}
