//! `cargo xtask verify`: the upstream module against api.toml, statically (`--module`,
//! `--wheel`, `--fetch`) or in a real interpreter through the generated shim (`--python`).

use crate::{EXIT_DRIFT, EXIT_ERROR, project_root};
use mooncake_sos_codegen::model::Api;
use mooncake_sos_upstream::fetch::Fetch;
use mooncake_sos_upstream::source::{LoadError, ModuleSource};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["module", "wheel", "python", "fetch"])))]
pub struct Args {
    /// The upstream module source, a `.py` file.
    #[arg(long, value_name = "FILE")]
    pub module: Option<PathBuf>,
    /// A wheel; the module is read out of it.
    #[arg(long, value_name = "FILE")]
    pub wheel: Option<PathBuf>,
    /// Run the generated shim's check in this interpreter (its installed module and core).
    #[arg(long, value_name = "PYTHON")]
    pub python: Option<PathBuf>,
    /// Download the module at the pinned commit (checked against the pinned sha256, cached).
    #[arg(long)]
    pub fetch: bool,
    /// Also require the file to be the pinned one (its sha256 in api.toml).
    #[arg(long)]
    pub sha256: bool,
    #[command(flatten)]
    pub common: Common,
}

/// Options verify and bump share.
#[derive(clap::Args, Clone)]
pub struct Common {
    /// The manifest.
    #[arg(long, value_name = "PATH")]
    pub manifest: Option<PathBuf>,
    /// For --fetch: the raw-file server (default: upstream.raw_base_url in api.toml).
    #[arg(long, value_name = "URL")]
    pub raw_base_url: Option<String>,
    /// For --fetch: where downloads are kept.
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
}

impl Common {
    pub fn manifest(&self) -> PathBuf {
        self.manifest
            .clone()
            .unwrap_or_else(|| project_root().join("api.toml"))
    }

    pub fn load(&self) -> Result<(PathBuf, String, Api), String> {
        let path = self.manifest();
        let display = path.display().to_string();
        let text =
            mooncake_sos_codegen::read_manifest(&path, &display).map_err(|d| d.to_string())?;
        let api = mooncake_sos_codegen::load_str(&display, &text).map_err(|d| d.to_string())?;
        Ok((path, text, api))
    }

    pub fn fetcher(&self, api: &Api) -> Fetch {
        Fetch {
            base_url: self
                .raw_base_url
                .clone()
                .unwrap_or_else(|| api.upstream.raw_base_url.clone()),
            cache_dir: self
                .cache_dir
                .clone()
                .unwrap_or_else(|| project_root().join("target/upstream-cache")),
        }
    }
}

pub fn run(args: &Args) -> ExitCode {
    match verify(args) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn verify(args: &Args) -> Result<ExitCode, String> {
    let (_, _, api) = args.common.load()?;
    if let Some(python) = &args.python {
        return crate::verify_python::run(&api, &args.common.manifest(), python, args.sha256);
    }
    let source = if let Some(path) = &args.module {
        ModuleSource::read_module(path)
    } else if let Some(path) = &args.wheel {
        ModuleSource::read_wheel(path, &api.upstream.module)
    } else {
        let fetch = args.common.fetcher(&api);
        fetch.module(
            &api.upstream,
            &api.upstream.commit,
            Some(&api.upstream.sha256),
        )
    }
    .map_err(|e| format!("{e}\n"))?;
    let (lines, summary) = check(&api, &source, args.sha256).map_err(|e| format!("{e}\n"))?;
    for line in &lines {
        println!("{line}");
    }
    println!("{summary}");
    Ok(if lines.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DRIFT)
    })
}

/// The mismatch lines (empty when all match) and the closing one-line summary.
pub fn check(
    api: &Api,
    source: &ModuleSource,
    sha256: bool,
) -> Result<(Vec<String>, String), LoadError> {
    let report = mooncake_sos_upstream::verify(api, source)?;
    let mut lines = report.lines();
    if sha256 && let Some(line) = mooncake_sos_upstream::sha256_mismatch(api, source) {
        lines.push(line);
    }
    let summary = if lines.is_empty() {
        format!(
            "verify: {} matches api.toml: {} symbols, {} items checked{} (sha256 {})",
            source.display,
            api.symbols.len(),
            report.items.len(),
            if sha256 { ", the pinned file" } else { "" },
            &source.sha256[..12]
        )
    } else {
        format!(
            "verify: {} mismatch(es) in {} against api.toml (pin {})",
            lines.len(),
            source.display,
            api.upstream.short_commit()
        )
    };
    Ok((lines, summary))
}

/// The shim file regen writes, next to the manifest.
pub fn shim_path(api: &Api, manifest: &Path) -> PathBuf {
    let root = manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    root.join(api.shim.image_copy_from.as_str())
}
