//! `cargo xtask matrix WHEEL_OR_DIR... [--json] [--record]`: releases × the declared API,
//! and the drop condition's verdict.

use crate::verify::Common;
use crate::{EXIT_DRIFT, EXIT_ERROR};
use mooncake_sos_upstream::core::table;
use mooncake_sos_upstream::{matrix, pin, source};
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
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
    /// wheels, or a record (cores/*.json). Repeatable.
    #[arg(long = "core", value_name = "WHEEL_DIR_OR_RECORD")]
    cores: Vec<PathBuf>,
    /// Another module row for modules x cores: its uses of the core, as JSON
    /// (`{"label", "needs": [{"object", "usage", "required", "origin"}]}`). Repeatable.
    #[arg(long = "needs", value_name = "FILE", requires = "cores")]
    needs: Vec<PathBuf>,
    #[command(flatten)]
    reading: crate::core::Reading,
    #[command(flatten)]
    common: Common,
}

/// Exit 0 when some release carries the whole API, 1 when none does, 2 on bad input.
pub fn run(args: &Args) -> ExitCode {
    match matrix(args) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn matrix(args: &Args) -> Result<ExitCode, String> {
    let (manifest, text, api) = args.common.load()?;
    let mut wheels = Vec::new();
    for input in &args.inputs {
        if input.is_dir() {
            wheels.extend(
                source::wheels_in(input, api.upstream.package()).map_err(|e| format!("{e}\n"))?,
            );
        } else {
            wheels.push(input.clone());
        }
    }
    let m = matrix::build(&api, &wheels).map_err(|e| format!("{e}\n"))?;
    let cores = if args.cores.is_empty() {
        None
    } else {
        let mut rows = vec![table::ModuleNeeds::from_manifest(&api)];
        for path in &args.needs {
            rows.push(table::ModuleNeeds::load(path).map_err(|e| format!("{e}\n"))?);
        }
        let columns = crate::core::columns(&args.cores, &args.reading, &api)?;
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
        return Ok(ExitCode::from(EXIT_DRIFT));
    };
    let recorded = api.drop.first_release.as_ref();
    let current = recorded == Some(&(first.package.clone(), first.version.clone()));
    if args.record && !current {
        let edited = pin::set_first_release(&text, &first.package, &first.version)?;
        let display = manifest.display().to_string();
        mooncake_sos_codegen::load_str(&display, &edited).map_err(|d| d.to_string())?;
        crate::bump::write_atomically(&manifest, &edited)?;
        eprintln!(
            "matrix: recorded {} {} in {display} [drop]",
            first.package, first.version
        );
        return Ok(crate::regen::write_outputs(&manifest));
    } else if !current {
        let was = recorded.map_or("nothing".to_owned(), |(p, v)| format!("{p} {v}"));
        eprintln!(
            "matrix: api.toml records {was}; `--record` writes {} {}",
            first.package, first.version
        );
    }
    Ok(ExitCode::SUCCESS)
}
