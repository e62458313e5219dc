//! `cargo xtask watch [--json | --markdown | --github] [--offline]`: every release of every
//! package api.toml's images name, checked against the contract, and per image the transition
//! the releases now allow. Exit 0: nothing to do; 1: a transition is possible or a newer
//! release would break an image; 2: an error. The work is `mooncake_sos_watch`.

use crate::exit::{Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use crate::upstream::WatchArgs;
use mooncake_sos_watch::render;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("format").args(["json", "markdown", "github"])))]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// The report as JSON.
    #[arg(long)]
    json: bool,
    /// A Markdown table, for a pull request's body.
    #[arg(long)]
    markdown: bool,
    /// GitHub workflow annotations against api.toml's lines.
    #[arg(long)]
    github: bool,
    /// Print how long listing, downloads and checks took (stderr).
    #[arg(long)]
    timings: bool,
    #[command(flatten)]
    watch: WatchArgs,
}

pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let (report, timings) = args.watch.run(manifest)?;
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
            "watch timings: total {:.3} s, listing {:.3} s, download {:.3} s ({} wheels, {} bytes), checks {:.3} s ({} kept verdicts, {} checked)",
            timings.total.as_secs_f64(),
            timings.listing.as_secs_f64(),
            timings.download.as_secs_f64(),
            timings.downloads,
            timings.downloaded_bytes,
            timings.checks.as_secs_f64(),
            timings.kept,
            timings.checked
        );
    }
    Ok(if report.actionable() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
}
