//! `verify --surface [--json]`: the module's native surface and how it compares with api.toml;
//! and the surface check plain `verify` runs beside the symbol check.

use crate::exit::{BadInput, Outcome, Result};
use mooncake_sos_codegen::model::Api;
use mooncake_sos_upstream::source::ModuleSource;
use mooncake_sos_upstream::surface;

/// Prints every use (or the JSON report), the failures, and a summary; warnings go to stderr
/// in text mode. Exit 1 on any failure.
pub fn run(api: &Api, source: &ModuleSource, json: bool) -> Result {
    let report = surface::check(api, source)?;
    if json {
        let mut value = serde_json::to_value(&report)
            .map_err(|e| BadInput(format!("error: cannot write the JSON report: {e}")))?;
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
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}
