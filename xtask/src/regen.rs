//! `cargo xtask regen [--check] [--force] [--manifest PATH]`.

use crate::exit::Result;
use crate::manifest::{self, ManifestArg, Mode};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// Write nothing; exit 1 if any output is stale, missing, orphaned or hand-edited. (A
    /// write a killed run left half-made is still finished first, as by every command.)
    #[arg(long)]
    check: bool,
    /// Overwrite regions that were edited by hand.
    #[arg(long)]
    force: bool,
}

pub fn run(args: &Args) -> Result {
    let mode = if args.check {
        Mode::Check
    } else {
        Mode::Write { force: args.force }
    };
    manifest::regen(&args.manifest.path()?, mode)
}
