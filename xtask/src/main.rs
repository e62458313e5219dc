//! `cargo xtask`: the project's command line.

mod regen;

use clap::{Parser, Subcommand};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "cargo xtask",
    about = "Generate and check everything api.toml drives"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Regenerate every output from the manifest (only files that change are written).
    Regen(regen::Args),
}

/// Exit codes: 0 all good, 1 drift or a failed check, 2 bad input.
pub const EXIT_DRIFT: u8 = 1;
pub const EXIT_ERROR: u8 = 2;

/// The repository root, where api.toml lives by default.
pub fn project_root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .map(PathBuf::from)
        .unwrap_or_default()
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Regen(args) => regen::run(&args),
    }
}
