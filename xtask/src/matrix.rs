//! `cargo xtask matrix WHEEL_OR_DIR... [--json] [--record] [--core ...]`: releases × the
//! declared API, and the drop condition's verdict; with `--core`, the modules of those
//! releases × native cores.

use crate::exit::{Outcome, Result};
use crate::manifest::{Manifest, ManifestArg};
use mooncake_sos_manifest::edit as pin;
use mooncake_sos_native::table;
use mooncake_sos_pysource::{matrix, source};
use std::path::{Path, PathBuf};

#[derive(clap::Args)]
pub struct Args {
    #[command(flatten)]
    pub manifest: ManifestArg,
    /// Wheels, or directories whose *.whl files are read.
    #[arg(required = true, value_name = "WHEEL_OR_DIR")]
    inputs: Vec<PathBuf>,
    /// Print the matrix as JSON instead of a Markdown table.
    #[arg(long)]
    json: bool,
    /// Write the verdict into api.toml's [drop] first_release / first_release_package, then
    /// regen (which prints its own lines, hence not with --json).
    #[arg(long, conflicts_with = "json")]
    record: bool,
    /// Also show modules x native cores, with a column per core: a wheel, a directory of
    /// wheels, or a record (cores/*.json). Repeatable. The rows: api.toml's [[native]], then
    /// the module of each release given, by the uses its source makes.
    #[arg(long = "core", value_name = "WHEEL_DIR_OR_RECORD")]
    cores: Vec<PathBuf>,
    #[command(flatten)]
    reading: crate::upstream::Reading,
}

/// Ok when some release carries the whole API, Failed when none does.
pub fn run(args: &Args, manifest: &Manifest) -> Result {
    let api = &manifest.api;
    let mut wheels = Vec::new();
    for input in &args.inputs {
        if input.is_dir() {
            wheels.extend(source::wheels_in(input, api.upstream.package())?);
        } else {
            wheels.push(input.clone());
        }
    }
    let m = matrix::build(api, &wheels)?;
    let cores = if args.cores.is_empty() {
        None
    } else {
        let mut rows = vec![table::ModuleNeeds::from_manifest(api)];
        let one_package = m
            .releases
            .windows(2)
            .all(|w| w[0].release.package == w[1].release.package);
        for column in &m.releases {
            let wheel = Path::new(&column.wheel);
            let Some(module) =
                source::ModuleSource::read_wheel_if_present(wheel, &api.upstream.module)?
            else {
                continue;
            };
            let r = &column.release;
            let label = if one_package {
                format!("module {}", r.version)
            } else {
                format!("module {} {}", r.package, r.version)
            };
            rows.push(table::ModuleNeeds::from_source(api, &module, label)?);
        }
        let columns = mooncake_sos_checks::module::columns(
            &args.cores,
            &args.reading.reader(&crate::upstream::cache_root()?)?,
            api,
        )?;
        Some(table::build(&rows, &columns))
    };
    if args.json {
        println!("{}", table::json_with_releases(&m, cores.as_ref()));
    } else {
        print!("{}", m.markdown());
        if let Some(cores) = &cores {
            print!("\n{}", cores.markdown());
        }
    }
    let Some(first) = &m.first_release else {
        return Ok(Outcome::Failed);
    };
    let recorded = api.drop.first_release.as_ref();
    if recorded == Some(&(first.package.clone(), first.version.clone())) {
        return Ok(Outcome::Ok);
    }
    if args.record {
        let outcome = crate::manifest::written(manifest.edit("matrix --record", |text| {
            pin::set_first_release(text, &first.package, &first.version)
        })?)?;
        eprintln!(
            "matrix: recorded {} {} in {} [drop]",
            first.package, first.version, manifest.display
        );
        return Ok(outcome);
    }
    let was = recorded.map_or("nothing".to_owned(), |(p, v)| format!("{p} {v}"));
    eprintln!(
        "matrix: api.toml records {was}; `--record` writes {} {}",
        first.package, first.version
    );
    Ok(Outcome::Ok)
}
