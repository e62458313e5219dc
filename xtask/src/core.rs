//! `cargo xtask core`: read wheels' native cores (what each serves), record image cores in
//! `cores/`, check the records for drift, and check the images' recorded cores offline
//! against api.toml's `[[native]]` needs.

use crate::{EXIT_DRIFT, EXIT_ERROR, project_root};
use mooncake_sos_codegen::model::Api;
use mooncake_sos_upstream::core::needs::{from_manifest, serve};
use mooncake_sos_upstream::core::read::{Origin, Reader};
use mooncake_sos_upstream::core::record::{self, Drift};
use mooncake_sos_upstream::core::{CoreSurface, model::Member};
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::Duration;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("what").required(true).multiple(true).args(["wheels", "images"])))]
pub struct Args {
    /// Wheels whose native core is read (the package's `store` extension module).
    #[arg(value_name = "WHEEL")]
    wheels: Vec<PathBuf>,
    /// Print the surfaces as a JSON array instead of one summary line per core.
    #[arg(long, conflicts_with_all = ["record", "check"])]
    json: bool,
    /// Write each surface to cores/<package>-<version>.json (nothing is written if any wheel
    /// fails).
    #[arg(long, conflicts_with = "check")]
    record: bool,
    /// Compare each surface with its record; exit 1 with a diff on any difference.
    #[arg(long)]
    check: bool,
    /// Check every overlay image's recorded core against api.toml's [[native]] needs,
    /// offline; exit 1 when one is not served or not recorded.
    #[arg(long)]
    images: bool,
    #[command(flatten)]
    pub reading: Reading,
    /// The manifest; cores/ is beside it.
    #[arg(long, value_name = "PATH")]
    manifest: Option<PathBuf>,
}

/// How cores are read; `matrix` takes the same options.
#[derive(clap::Args, Clone)]
pub struct Reading {
    /// Directories the core's shared libraries are loaded from (before LD_LIBRARY_PATH): a
    /// CUDA runtime, a driver stub. Repeatable; a value may list several, `:`-separated.
    #[arg(long = "lib-dir", value_name = "DIR")]
    pub lib_dirs: Vec<PathBuf>,
    /// The interpreter that makes the throwaway venv (the wheel must be built for it).
    #[arg(long = "core-python", value_name = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// Seconds reading one core may take (venv, install, import).
    #[arg(long = "core-timeout", value_name = "SECS", default_value_t = 120.0)]
    pub timeout: f64,
    /// Read every core afresh (the cache is target/mooncake-sos/cores/).
    #[arg(long)]
    pub no_cache: bool,
}

impl Reading {
    pub fn reader(&self) -> Result<Reader, String> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(format!(
                "error: --core-timeout must be a positive number of seconds, not {}\n",
                self.timeout
            ));
        }
        Ok(Reader {
            python: self.python.clone(),
            cache_dir: (!self.no_cache).then(cache_dir),
            lib_dirs: self
                .lib_dirs
                .iter()
                .flat_map(std::env::split_paths)
                .collect(),
            timeout: Duration::from_secs_f64(self.timeout),
        })
    }
}

/// `$CARGO_TARGET_DIR/mooncake-sos/cores`, else `target/mooncake-sos/cores` in the repository.
pub fn cache_dir() -> PathBuf {
    std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| project_root().join("target"))
        .join("mooncake-sos/cores")
}

/// Core columns for `matrix --core`: wheels, directories of wheels, or records (`*.json`).
pub fn columns(
    inputs: &[PathBuf],
    reading: &Reading,
    api: &Api,
) -> Result<Vec<(CoreSurface, String)>, String> {
    let reader = reading.reader()?;
    let mut wheels = Vec::new();
    let mut columns = Vec::new();
    for input in inputs {
        if input.is_dir() {
            wheels.extend(
                mooncake_sos_upstream::source::wheels_in(input, api.upstream.package())
                    .map_err(|e| format!("{e}\n"))?,
            );
        } else if input.extension().is_some_and(|x| x == "json") {
            let surface = record::load(input).map_err(|e| format!("{e}\n"))?;
            columns.push((surface, input.display().to_string()));
        } else {
            wheels.push(input.clone());
        }
    }
    for wheel in wheels {
        let surface = reader
            .read(&wheel, &api.upstream.native_module)
            .map_err(|e| format!("{e}\n"))?;
        columns.push((surface, wheel.display().to_string()));
    }
    Ok(columns)
}

pub fn run(args: &Args) -> ExitCode {
    match core(args) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn core(args: &Args) -> Result<ExitCode, String> {
    let manifest = args
        .manifest
        .clone()
        .unwrap_or_else(|| project_root().join("api.toml"));
    let display = manifest.display().to_string();
    let text = std::fs::read_to_string(&manifest)
        .map_err(|e| format!("{display}: error: cannot read the manifest: {e}\n"))?;
    let api = mooncake_sos_codegen::load_str(&display, &text).map_err(|d| d.to_string())?;
    let root = manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
        .to_path_buf();
    let reader = args.reading.reader()?;
    // Every wheel is read before anything is printed or written.
    let mut surfaces = Vec::new();
    for wheel in &args.wheels {
        let (surface, origin) = reader
            .read_traced(wheel, &api.upstream.native_module)
            .map_err(|e| format!("{e}\n"))?;
        surfaces.push((wheel, surface, origin));
    }
    let mut code = ExitCode::SUCCESS;
    if args.json {
        let all: Vec<&CoreSurface> = surfaces.iter().map(|(_, s, _)| s).collect();
        println!("{}", serde_json::to_string_pretty(&all).unwrap_or_default());
    } else if args.record {
        for (_, surface, _) in &surfaces {
            let state = match record::drift(&root, surface) {
                Drift::Current => "unchanged",
                _ => {
                    record::write(&root, surface).map_err(|e| {
                        format!("{}: error: cannot write the record: {e}\n", root.display())
                    })?;
                    "written"
                }
            };
            let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
            println!("{state}: {rel}");
        }
    } else if args.check {
        for (wheel, surface, _) in &surfaces {
            let rel = record::relative_path(&surface.wheel.package, &surface.wheel.version);
            match record::drift(&root, surface) {
                Drift::Current => println!("current: {rel}"),
                Drift::Missing => {
                    println!(
                        "missing: {rel} (`cargo xtask core --record {}`)",
                        wheel.display()
                    );
                    code = ExitCode::from(EXIT_DRIFT);
                }
                Drift::Differs(diff) => {
                    print!(
                        "stale: {rel} (`cargo xtask core --record {}`)\n{diff}",
                        wheel.display()
                    );
                    code = ExitCode::from(EXIT_DRIFT);
                }
            }
        }
    } else {
        for (wheel, surface, origin) in &surfaces {
            println!("{}", summary(&api, wheel, surface, *origin));
        }
    }
    if args.images && !images(&api, &root)? {
        code = ExitCode::from(EXIT_DRIFT);
    }
    Ok(code)
}

/// `package version: file (sha256 12…): N classes, N methods, N functions; api.toml's N
/// native needs: served | first missing ...`.
fn summary(api: &Api, wheel: &Path, surface: &CoreSurface, origin: Origin) -> String {
    let methods: usize = surface
        .classes
        .values()
        .flat_map(|c| c.members.values())
        .filter(|m| matches!(m, Member::Method { .. } | Member::Staticmethod { .. }))
        .count();
    let needs = from_manifest(&api.native);
    let verdict = serve(surface, &needs);
    let served = match verdict.first_missing() {
        None => "served".to_owned(),
        Some(miss) => format!(
            "{} not served, first: {}",
            verdict.missing.len(),
            miss.line()
        ),
    };
    format!(
        "{}: {} `{}` (sha256 {}): {} classes, {methods} methods, {} functions; api.toml's {} native needs: {served}{}",
        surface.label(),
        surface.core.file,
        surface.core.module,
        &surface.core.sha256[..12],
        surface.classes.len(),
        surface.functions.len(),
        needs.len(),
        match origin {
            Origin::Cache => format!(" (cached; {})", wheel.display()),
            Origin::Read => format!(" ({})", wheel.display()),
        }
    )
}

/// One line per overlay image; `false` when any image's core is unrecorded or misses a need.
fn images(api: &Api, root: &Path) -> Result<bool, String> {
    let needs = from_manifest(&api.native);
    let mut ok = true;
    for image in record::image_cores(root, api) {
        let rel = record::relative_path(&image.package, &image.version);
        match image.record {
            Some(Ok(surface)) => {
                let verdict = serve(&surface, &needs);
                if verdict.compatible {
                    println!(
                        "image {}: core {} ({rel}) serves api.toml's {} native needs",
                        image.image,
                        surface.label(),
                        needs.len()
                    );
                } else {
                    ok = false;
                    println!(
                        "image {}: core {} ({rel}) does not serve {} of api.toml's native needs:",
                        image.image,
                        surface.label(),
                        verdict.missing.len()
                    );
                    for miss in &verdict.missing {
                        println!("  {}", miss.line());
                    }
                }
            }
            Some(Err(e)) => return Err(format!("{e}\n")),
            None => {
                ok = false;
                println!(
                    "image {}: no record of its core {} {} ({rel}): run `cargo xtask core --record` on that wheel",
                    image.image, image.package, image.version
                );
            }
        }
    }
    Ok(ok)
}
