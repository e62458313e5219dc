//! `cargo xtask`: the project's command line. Each command is a module that returns an
//! [`exit::Result`]; `main` alone turns it into the exit code. Commands share only the leaf
//! modules [`manifest`] (where api.toml is, load, edit under its lock, regen), [`upstream`]
//! (reading and checking the upstream module) and [`exit`]; no command imports another.

mod adopt;
mod bump;
mod core;
mod exit;
mod manifest;
mod matrix;
mod regen;
mod upstream;
mod users;
mod verify;
mod verify_fix;
mod verify_python;
mod verify_surface;
mod watch;

use clap::{Parser, Subcommand};
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
    /// Read wheels' native cores; record image cores in cores/ and check them.
    Core(core::Args),
    /// Record the images' other users of the package (consumers/) and check them across pins.
    Users(users::Args),
    /// Move the upstream pin to a commit whose module carries the API, then regen.
    Bump(bump::Args),
    /// Releases on the package index x the contract; per image the transition they allow.
    Watch(watch::Args),
    /// Move an image to another strategy (pin, check, overlay) where watch allows it, then regen.
    Adopt(adopt::Args),
}

fn main() -> ExitCode {
    // Rust ignores SIGPIPE, so `println!` into a closed pipe (`cargo xtask matrix | head`)
    // panics. Restore the default action, as C tools have it: the process ends quietly.
    // SAFETY: signal(2) with SIG_DFL, before any thread is started.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
    let cli = Cli::parse();
    // Scratch directories of earlier runs that were killed before they could remove them.
    mooncake_sos_support::bounded::sweep_stale(&std::env::temp_dir());
    exit::code(dispatch(cli.command))
}

/// Regen takes the manifest's path (it loads under its lock); the others the loaded manifest.
fn dispatch(command: Command) -> exit::Result {
    match command {
        Command::Regen(args) => regen::run(&args),
        Command::Verify(args) => verify::run(&args, &args.manifest.load()?),
        Command::Matrix(args) => matrix::run(&args, &args.manifest.load()?),
        Command::Bump(args) => bump::run(&args, &args.manifest.load()?),
        Command::Core(args) => core::run(&args, &args.manifest.load()?),
        Command::Users(args) => users::run(&args, &args.manifest.load()?),
        Command::Watch(args) => watch::run(&args, &args.manifest.load()?),
        Command::Adopt(args) => adopt::run(&args, &args.manifest.load()?),
    }
}
