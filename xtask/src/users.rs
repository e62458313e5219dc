//! `cargo xtask users`: the images' other users of the package, recorded in `consumers/`
//! (`--record`) and checked across each pin image's pin — the checks crate's pipeline
//! (`mooncake_sos_checks::users`), on this checkout's manifest.

use crate::exit::Result;
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::{cache_root, contract};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub users: mooncake_sos_checks::users::UsersArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    mooncake_sos_checks::users::run(&args.users, &contract(manifest), &cache_root()?)
}
