//! `cargo xtask verify --python PYTHON`: the generated shim's own check (`python -m <shim>
//! --json`) run in that interpreter, so it sees the installed module and native core exactly
//! as an image would.

use crate::EXIT_DRIFT;
use crate::verify::shim_path;
use mooncake_sos_codegen::model::Api;
use std::path::Path;
use std::process::{Command, ExitCode};

/// `sha256`: the installed module must also be the pinned file.
pub fn run(api: &Api, manifest: &Path, python: &Path, sha256: bool) -> Result<ExitCode, String> {
    let shim = shim_path(api, manifest);
    if !shim.is_file() {
        return Err(format!(
            "{}: error: the shim is missing; run `cargo xtask regen`\n",
            shim.display()
        ));
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
    let out = crate::bounded::output(&mut cmd, crate::bounded::timeout()).map_err(|e| match e {
        crate::bounded::Error::Spawn(e) => {
            format!(
                "{}: error: cannot run the interpreter: {e}\n",
                python.display()
            )
        }
        other => format!("{}: error: the interpreter: {other}\n", python.display()),
    })?;
    let stdout = String::from_utf8_lossy(&out.stdout);
    let report: serde_json::Value = serde_json::from_str(&stdout).map_err(|e| {
        format!(
            "{}: error: `-m {} --json` printed no JSON report ({e}; exit {}):\n{}{}",
            python.display(),
            api.shim.module,
            out.status,
            stdout,
            String::from_utf8_lossy(&out.stderr)
        )
    })?;
    let installed = &report["installed"];
    let location = installed["module_file"]
        .as_str()
        .map_or_else(|| api.upstream.module.clone(), str::to_owned);
    let mut misses: Vec<String> = report["misses"]
        .as_array()
        .map(|m| {
            m.iter()
                .filter_map(|v| v.as_str().map(str::to_owned))
                .collect()
        })
        .unwrap_or_default();
    let found_sha = installed["module_sha256"].as_str().unwrap_or("nothing");
    if sha256 && found_sha != api.upstream.sha256 {
        misses.push(format!(
            "upstream.sha256: file hash: expected {} (the pinned file at {}), found {found_sha}",
            api.upstream.sha256,
            api.upstream.short_commit()
        ));
    }
    let ok = report["ok"].as_bool();
    if ok.is_none() {
        return Err(format!(
            "{}: error: the shim's report has no \"ok\": {stdout}\n",
            python.display()
        ));
    }
    for miss in &misses {
        println!("{location}: {miss}");
    }
    let dists = installed["distributions"]
        .as_array()
        .map(|d| {
            d.iter()
                .filter_map(|v| v.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        })
        .unwrap_or_default();
    let dists = if dists.is_empty() {
        "no mooncake distribution".to_owned()
    } else {
        dists
    };
    if ok == Some(true) && misses.is_empty() {
        println!(
            "verify --python: {} in {} ({dists}) matches api.toml ({} symbols, {} native requirements)",
            api.upstream.module,
            python.display(),
            api.symbols.len(),
            api.native.len()
        );
        return Ok(ExitCode::SUCCESS);
    }
    println!(
        "verify --python: {} problem(s) with {} in {} ({dists})",
        misses.len().max(1),
        api.upstream.module,
        python.display()
    );
    Ok(ExitCode::from(EXIT_DRIFT))
}
