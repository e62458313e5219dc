//! `verify --consumer PATH... [--json]` (a directory: every `.py` under it): what consumer sources use of the API and of the
//! native core, against api.toml and every image's core.

use crate::exit::{Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_contract::escape::text;
use mooncake_sos_native::images::{self, ImageFinding};
use mooncake_sos_pysource::consumer;
use std::path::PathBuf;

/// Prints every use (or the JSON report), the failures, the images' findings and a summary;
/// declarations no consumer uses go to stderr in text mode. Exit 1 on any failure or finding.
pub fn run(manifest: &Manifest, files: &[PathBuf], json: bool) -> Result {
    let api = &manifest.api;
    let sources = consumer::read(files)?;
    let sides = images::load_all(manifest.root(), api)?;
    let report = consumer::check(api, &sources, &images::extensions(&sides))?;
    let findings: Vec<ImageFinding> = report
        .files
        .iter()
        .flat_map(|f| images::check(&sides, &f.file, &f.native))
        .collect();
    let ok = report.ok() && findings.is_empty();
    if json {
        crate::upstream::print_json_report(&report, &findings, ok)?;
    } else {
        let native_module = &api.upstream.native_module;
        for line in report.use_lines(native_module) {
            println!("{}", text(&line));
        }
        for line in report.failure_lines() {
            println!("{}", text(&line));
        }
        for line in findings.iter().map(ImageFinding::line) {
            println!("{}", text(&line));
        }
        for item in &report.unused {
            eprintln!(
                "api.toml: warning: {}: declared, no consumer uses it",
                text(item)
            );
        }
        for note in &report.notes {
            eprintln!("verify --consumer: warning: {}", text(note));
        }
        let uses: usize = report
            .files
            .iter()
            .map(|f| f.uses.len() + f.native.len())
            .sum();
        let verdict = if ok {
            "every use is declared and fits api.toml and every image's core".to_owned()
        } else {
            format!(
                "{} mismatch(es) against api.toml, {} finding(s) against the images",
                report.failure_count(),
                findings.len()
            )
        };
        println!(
            "verify --consumer: {} file(s), {uses} uses; {verdict}",
            report.files.len()
        );
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Failed })
}
