//! `cargo xtask`: the project's command line.

mod bench;
mod bounded;
mod bump;
mod matrix;
mod regen;
mod verify;
mod verify_python;

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
    /// Check the upstream module (a file, a wheel, a download, or an interpreter) against the manifest.
    Verify(verify::Args),
    /// Releases x declared API, and the first release carrying all of it.
    Matrix(matrix::Args),
    /// Move the upstream pin to a commit whose module carries the API, then regen.
    Bump(bump::Args),
    /// Time `verify --module` against the same extraction in Python's `ast` (run by hand).
    #[command(hide = true)]
    BenchVerify(bench::Args),
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

/// Rust ignores SIGPIPE, so `println!` into a closed pipe (`cargo xtask matrix | head`)
/// panics. Restore the default action, as C tools have it: the process ends quietly.
#[cfg(unix)]
fn default_sigpipe() {
    unsafe extern "C" {
        fn signal(signum: i32, handler: usize) -> usize;
    }
    const SIGPIPE: i32 = 13;
    const SIG_DFL: usize = 0;
    // SAFETY: libc's signal(2) with SIG_DFL, called before any thread is started.
    unsafe {
        signal(SIGPIPE, SIG_DFL);
    }
}

#[cfg(not(unix))]
fn default_sigpipe() {}

fn main() -> ExitCode {
    default_sigpipe();
    let cli = Cli::parse();
    match cli.command {
        Command::Regen(args) => regen::run(&args),
        Command::Verify(args) => verify::run(&args),
        Command::Matrix(args) => matrix::run(&args),
        Command::Bump(args) => bump::run(&args),
        Command::BenchVerify(args) => bench::run(&args),
    }
}
