//! `verify --surface [--json]`: the module's native surface and how it compares with api.toml
//! and with every image (its core's record, the modules of the package it has).

use crate::exit::{Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_native::images::{self, ImageFinding};
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_pysource::surface;
use mooncake_sos_support::escape::text;

/// Prints every use (or the JSON report), the failures, the images' findings and a summary;
/// warnings go to stderr in text mode. Exit 1 on any failure or finding.
pub fn run(manifest: &Manifest, source: &ModuleSource, json: bool) -> Result {
    let api = &manifest.api;
    let sides = images::load_all(manifest.root(), api)?;
    let report = surface::check(api, source)?;
    let findings = images::check(&sides, &report.file, &report.uses);
    let ok = report.ok() && findings.is_empty();
    if json {
        crate::upstream::print_json_report(&report, &findings, ok)?;
    } else {
        for line in report.use_lines() {
            println!("{}", text(&line));
        }
        for line in report.failure_lines() {
            println!("{}", text(&line));
        }
        for line in findings.iter().map(ImageFinding::line) {
            println!("{}", text(&line));
        }
        for line in report.warning_lines() {
            eprintln!("{}", text(&line));
        }
        let (members, siblings) = report.counts();
        let against_manifest = if report.ok() {
            "matches api.toml".to_owned()
        } else {
            format!(
                "{} mismatch(es) against api.toml (pin {})",
                report.failures.len(),
                api.upstream.short_commit()
            )
        };
        let against_images = if findings.is_empty() {
            format!("served by every image ({})", images::summary(&sides))
        } else {
            format!("{} finding(s) against the images", findings.len())
        };
        println!(
            "verify: native surface of {}: {} uses of {members} native members and {siblings} sibling modules; {against_manifest}; {against_images}",
            text(&source.display),
            report.uses.len()
        );
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Failed })
}
