//! `verify --surface [--json]`: the module's native surface and how it compares with api.toml;
//! and the surface check plain `verify` runs beside the symbol check.

use crate::EXIT_DRIFT;
use mooncake_sos_codegen::model::Api;
use mooncake_sos_upstream::source::{LoadError, ModuleSource};
use mooncake_sos_upstream::surface;
use std::process::ExitCode;

/// Prints every use (or the JSON report), the failures, and a summary; warnings go to stderr
/// in text mode. Exit 1 on any failure.
pub fn run(api: &Api, source: &ModuleSource, json: bool) -> Result<ExitCode, String> {
    let report = surface::check(api, source).map_err(|e| format!("{e}\n"))?;
    if json {
        let mut value = serde_json::to_value(&report)
            .map_err(|e| format!("error: cannot write the JSON report: {e}\n"))?;
        value["ok"] = report.ok().into();
        println!("{value:#}");
    } else {
        for line in report.use_lines() {
            println!("{line}");
        }
        for line in report.failure_lines() {
            println!("{line}");
        }
        for line in report.warning_lines() {
            eprintln!("{line}");
        }
        let (members, siblings) = report.counts();
        let verdict = if report.ok() {
            "matches api.toml".to_owned()
        } else {
            format!(
                "{} mismatch(es) against api.toml (pin {})",
                report.failures.len(),
                api.upstream.short_commit()
            )
        };
        println!(
            "verify: native surface of {}: {} uses of {members} native members and {siblings} sibling modules; {verdict}",
            source.display,
            report.uses.len()
        );
    }
    Ok(if report.ok() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(EXIT_DRIFT)
    })
}

/// Plain `verify`: the symbol mismatch lines followed by the surface's failures, and the
/// summary over both. The surface's warnings go to stderr.
pub fn check(
    api: &Api,
    source: &ModuleSource,
    sha256: bool,
) -> Result<(Vec<String>, String), LoadError> {
    let (symbols, surface) = mooncake_sos_upstream::verify_with_surface(api, source)?;
    let mut lines = symbols.lines();
    if sha256 && let Some(line) = mooncake_sos_upstream::sha256_mismatch(api, source) {
        lines.push(line);
    }
    lines.extend(surface.failure_lines());
    for line in surface.warning_lines() {
        eprintln!("{line}");
    }
    let counts = (api.surface.members.len(), api.surface.siblings.len());
    let summary = crate::verify::summary(
        api,
        source,
        sha256,
        symbols.items.len(),
        Some(counts),
        &lines,
    );
    Ok((lines, summary))
}
