//! `verify --consumer PATH... [--only FILE...]` (a directory: every `.py` under it): what
//! consumer sources use of the API and of the native modules, against api.toml and every
//! image's core. Text: findings first, each at its place (`FILE:LINE:COL`) with its rule,
//! then one summary line; or JSON, GitHub workflow commands, SARIF ([`Format`]).

use crate::findings::{self, Finding, Format, RuleInfo};
use crate::{BadInput, Contract, Outcome, Result};
use mooncake_sos_native::images;
use mooncake_sos_native::sites::{SiteFinding, check_each, suggestion};
use mooncake_sos_pysource::consumer;
use mooncake_sos_pysource::rules::Rule;
use mooncake_sos_support::escape;
use serde::Serialize;
use std::path::{Path, PathBuf};

/// What to print, and of which files.
#[derive(Clone, Debug)]
pub struct Options {
    pub format: Format,
    /// Text: also list every use found, before the findings.
    pub uses: bool,
    /// Text: also list api.toml's declarations no file given uses.
    pub unused: bool,
    /// Report only these files (a commit's), read with the rest of the program the paths
    /// hold: a file's imports and callers are followed as the whole scan follows them.
    pub only: Vec<PathBuf>,
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

/// The rules of this check, for SARIF: pysource's, each with what to do about a finding.
pub fn rules() -> Vec<RuleInfo> {
    Rule::ALL
        .iter()
        .map(|&rule| RuleInfo {
            id: rule.id(),
            summary: rule.summary(),
            help: help(rule),
        })
        .collect()
}

fn help(rule: Rule) -> &'static str {
    match rule {
        Rule::ApiUndeclared => {
            "Use only what api.toml declares, or declare the name ([[symbol]]) in the contract and regenerate."
        }
        Rule::ApiCall => {
            "Call it as its declared signature allows (the message names the declared parameters), or change the declaration."
        }
        Rule::ApiValue => {
            "Pass one of the values the parameter's `domain` in api.toml allows, or widen the domain."
        }
        Rule::ComputedName => {
            "Name the API statically (no getattr with a computed name, no `*` import), so the check can follow it."
        }
        Rule::DictKey => {
            "Use one of the dict keys api.toml declares for that call, or declare the key."
        }
        Rule::NativeUndeclared => {
            "Declare the native member or sibling module in api.toml ([[native]], [[sibling]]), or stop using it."
        }
        Rule::NativeUse => {
            "Use it as declared (required or optional, read, write or call, with the declared call shape), or change the declaration."
        }
        Rule::NativeUnused => "Remove the declaration, or use it.",
        Rule::ImageCore => {
            "An image's native core cannot serve this use: guard it, or move the image (watch, adopt) to a core that serves it."
        }
    }
}

/// Prints the report in `options.format`; `Failed` on any finding.
pub fn verify(contract: &Contract, paths: &[PathBuf], options: &Options) -> Result {
    let api = &contract.api;
    let sources = consumer::read(paths)?;
    if sources.is_empty() {
        let given: Vec<String> = paths.iter().map(|p| p.display().to_string()).collect();
        return Err(BadInput(format!(
            "{}: error: no Python file to read there (no `.py` file, directories like \
             site-packages, virtualenvs and hidden ones left out)",
            escape::text(&given.join(", "))
        )));
    }
    let sides = images::load_all(&contract.root, api)?;
    let mut report = consumer::check(api, &sources, &images::extensions(&sides))?;
    if !options.only.is_empty() {
        let only: Vec<PathBuf> = options.only.iter().map(|p| same_file(p)).collect();
        report
            .files
            .retain(|f| only.contains(&same_file(Path::new(&f.file))));
    }
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
    let verdict = match ok {
        true => "every use is declared and fits api.toml and every image's core".to_owned(),
        false => format!(
            "{} finding(s): {} against api.toml, {} against the images",
            summary.findings, summary.api, summary.images
        ),
    };
    let summary_line = format!(
        "verify --consumer: {} file(s), {} uses; {verdict}",
        summary.files, summary.uses
    );
    let notes = || {
        for note in &report.notes {
            eprintln!("verify --consumer: warning: {note}");
        }
    };
    match options.format {
        Format::Json => {
            let json = serde_json::json!({
                "findings": findings,
                "summary": summary,
                "notes": report.notes,
                "ok": ok,
            });
            println!("{}", findings::json_text(&json)?);
        }
        Format::Github => {
            notes();
            print!("{}", findings::github(&findings, &summary_line));
        }
        Format::Sarif => {
            notes();
            let sarif = findings::sarif("verify --consumer", &rules(), &findings, &summary_line);
            println!("{sarif}");
        }
        Format::Markdown => {
            return Err(BadInput(
                "error: verify --consumer prints text, json, github or sarif, not markdown".into(),
            ));
        }
        Format::Text => {
            if options.uses {
                for line in report.use_lines(&api.upstream.native_module) {
                    println!("{}", escape::text(&line));
                }
            }
            for x in &findings {
                println!(
                    "{}: {} [{}]",
                    escape::text(&x.place()),
                    escape::text(&x.message),
                    x.rule
                );
            }
            if options.unused {
                for item in &report.unused {
                    eprintln!("api.toml: warning: {item}: declared, no file given uses it");
                }
            }
            notes();
            println!("{summary_line}");
        }
    }
    Ok(Outcome::of(ok))
}

/// A path as the same file is named however it was given (relative, `./`, a symlink).
fn same_file(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf())
}
