//! `cargo xtask core`: read wheels' native cores, record image cores in `cores/`, check the
//! records and the images' cores, diff two cores — the checks crate's pipeline
//! (`mooncake_sos_checks::core`), on this checkout's manifest.

use crate::exit::Result;
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::{cache_root, contract};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    #[command(flatten)]
    pub core: mooncake_sos_checks::core::CoreArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    mooncake_sos_checks::core::run(&args.core, &contract(manifest), &cache_root()?)
}
