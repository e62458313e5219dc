//! `cargo xtask verify --python PYTHON`: the generated shim's own check (`python -m <shim>
//! --json`) run in that interpreter, so it sees the installed module and native core exactly
//! as an image would.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_codegen::render::shim_path;
use mooncake_sos_support::bounded;
use mooncake_sos_support::escape::text;
use serde::Deserialize;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

/// The time bound unless `MOONCAKE_SOS_PYTHON_TIMEOUT_SECS` says otherwise; the check takes
/// 1-3 s here.
const DEFAULT_TIMEOUT: Duration = Duration::from_secs(60);

fn timeout() -> Duration {
    std::env::var("MOONCAKE_SOS_PYTHON_TIMEOUT_SECS")
        .ok()
        .and_then(|s| s.parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s > 0.0)
        .map_or(DEFAULT_TIMEOUT, Duration::from_secs_f64)
}

/// What `python -m <shim> --json` prints.
#[derive(Deserialize)]
struct ShimReport {
    ok: bool,
    misses: Vec<String>,
    installed: Installed,
}

#[derive(Deserialize)]
struct Installed {
    distributions: Vec<String>,
    module_file: Option<String>,
    module_sha256: Option<String>,
}

/// `sha256`: the installed module must also be the pinned file.
pub fn run(manifest: &Manifest, python: &Path, sha256: bool) -> Result {
    let api = &manifest.api;
    let shim = manifest.root().join(shim_path(api).as_str());
    if !shim.is_file() {
        return Err(BadInput(format!(
            "{}: error: the shim is missing; run `cargo xtask regen`",
            shim.display()
        )));
    }
    let shim_dir = shim.parent().unwrap_or(Path::new("."));
    // The shim's directory goes first; the caller's PYTHONPATH (an unpacked wheel, say) after.
    let mut path = std::ffi::OsString::from(shim_dir);
    if let Some(existing) = std::env::var_os("PYTHONPATH").filter(|p| !p.is_empty()) {
        path.push(":");
        path.push(existing);
    }
    let mut cmd = Command::new(python);
    cmd.args(["-m", &api.shim.module, "--json"])
        .env("PYTHONPATH", path);
    let limit = timeout();
    let out = bounded::run(&mut cmd, &bounded::Limits::within(limit)).map_err(|e| match e {
        bounded::Error::Spawn(e) => BadInput(format!(
            "{}: error: cannot run the interpreter: {e}",
            python.display()
        )),
        bounded::Error::TimedOut(_) => BadInput(format!(
            "{}: error: the interpreter: no answer after {limit:.0?}; stopped it \
             (MOONCAKE_SOS_PYTHON_TIMEOUT_SECS sets the bound)",
            python.display()
        )),
        other => BadInput(format!(
            "{}: error: the interpreter: {other}",
            python.display()
        )),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: ShimReport = serde_json::from_str(&stdout).map_err(|e| {
        BadInput(format!(
            "{}: error: `-m {} --json` printed no JSON report ({e}; exit {}):\n{}{}",
            python.display(),
            api.shim.module,
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        ))
    })?;
    let installed = &report.installed;
    let location = installed
        .module_file
        .clone()
        .unwrap_or_else(|| api.upstream.module.clone());
    let mut misses = report.misses;
    let found_sha = installed.module_sha256.as_deref().unwrap_or("nothing");
    if sha256 && found_sha != api.upstream.sha256 {
        misses.push(format!(
            "upstream.sha256: file hash: expected {} (the pinned file at {}), found {found_sha}",
            api.upstream.sha256,
            api.upstream.short_commit()
        ));
    }
    for miss in &misses {
        println!("{}: {}", text(&location), text(miss));
    }
    let dists = if installed.distributions.is_empty() {
        "no mooncake distribution".to_owned()
    } else {
        text(&installed.distributions.join(", ")).into_owned()
    };
    if report.ok && misses.is_empty() {
        println!(
            "verify --python: {} in {} ({dists}) matches api.toml ({} symbols, {} native requirements)",
            api.upstream.module,
            text(&python.display().to_string()),
            api.symbols.len(),
            api.native.len()
        );
        return Ok(Outcome::Ok);
    }
    println!(
        "verify --python: {} problem(s) with {} in {} ({dists})",
        misses.len().max(1),
        api.upstream.module,
        text(&python.display().to_string())
    );
    Ok(Outcome::Failed)
}
