//! `verify --consumer PATH... [--json] [--uses] [--unused]` (a directory: every `.py` under
//! it): what consumer sources use of the API and of the native modules, against api.toml and
//! every image's core. Findings first, each at its place (`FILE:LINE:COL`) with its rule,
//! then one summary line.

use crate::exit::{BadInput, Outcome, Result};
use crate::manifest::Manifest;
use mooncake_sos_native::images;
use mooncake_sos_native::sites::{SiteFinding, check_each, suggestion};
use mooncake_sos_pysource::consumer;
use mooncake_sos_pysource::rules::Rule;
use mooncake_sos_support::escape;
use serde::Serialize;
use std::path::PathBuf;

/// What to print besides the findings and the summary.
#[derive(Clone, Copy)]
pub struct Show {
    pub json: bool,
    pub uses: bool,
    pub unused: bool,
}

/// One finding, in the one shape every output shows: where, which rule, what, and for a
/// finding against the images, which.
#[derive(Serialize)]
struct Finding {
    file: String,
    line: usize,
    /// 1-based; 0 when not known.
    column: usize,
    rule: &'static str,
    message: String,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    images: Vec<String>,
}

#[derive(Serialize)]
struct Summary {
    files: usize,
    uses: usize,
    findings: usize,
    /// Findings against api.toml.
    api: usize,
    /// Findings against the images' cores.
    images: usize,
}

/// Prints the findings (or the JSON report) and the summary; exit 1 on any finding.
pub fn run(manifest: &Manifest, paths: &[PathBuf], show: Show) -> Result {
    let api = &manifest.api;
    let sources = consumer::read(paths)?;
    if sources.is_empty() {
        let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(BadInput(format!(
            "{}: error: no Python file to read there (no `.py` file, directories like \
             site-packages, virtualenvs and hidden ones left out)",
            escape::text(&given.join(", "))
        )));
    }
    let sides = images::load_all(manifest.root(), api)?;
    let report = consumer::check(api, &sources, &images::extensions(&sides))?;
    let declared: Vec<String> = api.surface.members.iter().map(|m| m.path()).collect();
    let mut findings = Vec::new();
    let mut against_images = 0;
    for f in &report.files {
        let mut here: Vec<Finding> = f
            .failures
            .iter()
            .map(|x| {
                let (line, column) = x.pos.unwrap_or((x.line.unwrap_or(0), 0));
                let mut x = x.clone();
                // A native member's nearest name is the images' cores' to say too.
                if x.rule == Some(Rule::NativeUndeclared)
                    && let Some(path) = x.subject.strip_prefix("native ")
                {
                    x.suggestion = suggestion(&sides, path, &declared);
                }
                Finding {
                    file: f.file.clone(),
                    line,
                    column,
                    rule: x.rule.unwrap_or(Rule::ApiUndeclared).id(),
                    message: x.message(),
                    images: Vec::new(),
                }
            })
            .collect();
        let sites: Vec<SiteFinding> = check_each(&sides, &f.file, &f.native);
        against_images += sites.len();
        here.extend(sites.into_iter().map(|s| Finding {
            file: f.file.clone(),
            line: s.line,
            column: s.col,
            rule: Rule::ImageCore.id(),
            message: s.message(),
            images: s.images.into_iter().map(|m| m.image).collect(),
        }));
        here.sort_by_key(|x| (x.line, x.column));
        findings.extend(here);
    }
    let uses: usize = report
        .files
        .iter()
        .map(|f| f.uses.len() + f.native.len())
        .sum();
    let summary = Summary {
        files: report.files.len(),
        uses,
        findings: findings.len(),
        api: findings.len() - against_images,
        images: against_images,
    };
    let ok = findings.is_empty();
    if show.json {
        print_json(&findings, &summary, &report.notes, ok)?;
    } else {
        if show.uses {
            for line in report.use_lines(&api.upstream.native_module) {
                println!("{}", escape::text(&line));
            }
        }
        for x in &findings {
            let at = match x.column {
                0 => format!("{}:{}", x.file, x.line),
                c => format!("{}:{}:{c}", x.file, x.line),
            };
            println!(
                "{}: {} [{}]",
                escape::text(&at),
                escape::text(&x.message),
                x.rule
            );
        }
        if show.unused {
            for item in &report.unused {
                eprintln!("api.toml: warning: {item}: declared, no file given uses it");
            }
        }
        for note in &report.notes {
            eprintln!("verify --consumer: warning: {note}");
        }
        let verdict = match ok {
            true => "every use is declared and fits api.toml and every image's core".to_owned(),
            false => format!(
                "{} finding(s): {} against api.toml, {} against the images",
                summary.findings, summary.api, summary.images
            ),
        };
        println!(
            "verify --consumer: {} file(s), {} uses; {verdict}",
            summary.files, summary.uses
        );
    }
    Ok(if ok { Outcome::Ok } else { Outcome::Failed })
}

fn print_json(
    findings: &[Finding],
    summary: &Summary,
    notes: &[String],
    ok: bool,
) -> std::result::Result<(), BadInput> {
    let json = serde_json::json!({
        "findings": findings,
        "summary": summary,
        "notes": notes,
        "ok": ok,
    });
    let text = serde_json::to_string_pretty(&json)
        .map_err(|e| BadInput(format!("error: cannot write the JSON report: {e}")))?;
    println!("{}", escape::json(&text));
    Ok(())
}
