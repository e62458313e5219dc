//! One model of what a check reports — a finding: which rule, what, where (`file:line:col`),
//! and for a finding against the images, which — and one renderer per output format:
//! `json` (docs/schemas/), `github` (workflow commands, one annotation per finding) and
//! `sarif` (SARIF 2.1.0, as GitHub code scanning takes it). Each check keeps its own `text`
//! (and `markdown`) report; docs/output-formats.md describes them all.

use mooncake_sos_support::escape;
use serde::Serialize;
use serde_json::{Value, json};

/// How a check prints its report.
#[derive(Clone, Copy, Debug, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    // Lines for a person (the default). Plain comments on the variants: doc comments would
    // turn every --help into its long form.
    Text,
    // One JSON document (its shape: docs/schemas/).
    Json,
    // Markdown (core --diff only).
    Markdown,
    // GitHub workflow commands: an annotation per finding.
    Github,
    // SARIF 2.1.0, for GitHub code scanning.
    Sarif,
}

impl Format {
    pub fn name(self) -> &'static str {
        match self {
            Format::Text => "text",
            Format::Json => "json",
            Format::Markdown => "markdown",
            Format::Github => "github",
            Format::Sarif => "sarif",
        }
    }
}

/// A rule a finding names: its id, what it finds, and how to act on one.
#[derive(Clone, Debug)]
pub struct RuleInfo {
    pub id: &'static str,
    pub summary: &'static str,
    pub help: &'static str,
}

/// One finding. `line` and `column` are 1-based, 0 when not known (a finding about a whole
/// file, or a record with no lines).
#[derive(Clone, Debug, Serialize)]
pub struct Finding {
    pub file: String,
    pub line: usize,
    pub column: usize,
    pub rule: &'static str,
    pub message: String,
    /// The images a finding against their cores is about.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub images: Vec<String>,
}

impl Finding {
    /// `FILE:LINE[:COL]`, as the text reports print it.
    pub fn place(&self) -> String {
        match self.column {
            0 => format!("{}:{}", self.file, self.line),
            c => format!("{}:{}:{c}", self.file, self.line),
        }
    }
}

/// GitHub workflow commands, one `::error` per finding (`file`, `line`, `col` where known;
/// the rule as its title), then a `::notice` with the summary; every value encoded so it
/// stays one command ([`escape::github_data`], [`escape::github_property`]).
pub fn github(findings: &[Finding], summary: &str) -> String {
    let mut out = String::new();
    for f in findings {
        let mut props = Vec::new();
        if !f.file.is_empty() {
            props.push(format!("file={}", escape::github_property(&uri(&f.file))));
        }
        if f.line > 0 {
            props.push(format!("line={}", f.line));
            if f.column > 0 {
                props.push(format!("col={}", f.column));
            }
        }
        props.push(format!("title={}", escape::github_property(f.rule)));
        out.push_str(&format!(
            "::error {}::{}\n",
            props.join(","),
            escape::github_data(&with_images(f))
        ));
    }
    out.push_str(&format!("::notice::{}\n", escape::github_data(summary)));
    out
}

fn with_images(f: &Finding) -> String {
    match f.images.is_empty() {
        true => f.message.clone(),
        false => format!("{} (images: {})", f.message, f.images.join(", ")),
    }
}

/// A path as SARIF and GitHub take it: relative to the working directory (the repository's
/// root in CI) with `/`, no leading `./`; a path outside it stays absolute.
fn uri(file: &str) -> String {
    let path = std::path::Path::new(file);
    let relative = std::env::current_dir()
        .ok()
        .and_then(|cwd| path.strip_prefix(cwd).ok().map(|p| p.to_path_buf()))
        .unwrap_or_else(|| path.to_path_buf());
    let text = relative.to_string_lossy().replace('\\', "/");
    let mut text = text.as_str();
    while let Some(rest) = text.strip_prefix("./") {
        text = rest;
    }
    text.to_owned()
}

/// SARIF 2.1.0: one run of the tool, its rules (id, descriptions, help), and a result per
/// finding — one per image for a finding against several images' cores — with its location
/// (a region where the line is known). `command` names the check (`verify --consumer`).
pub fn sarif(command: &str, rules: &[RuleInfo], findings: &[Finding], summary: &str) -> String {
    let rule_index = |id: &str| rules.iter().position(|r| r.id == id);
    let mut results = Vec::new();
    for f in findings {
        let images: Vec<Option<&String>> = match f.images.is_empty() {
            true => vec![None],
            false => f.images.iter().map(Some).collect(),
        };
        for image in images {
            let mut result = json!({
                "ruleId": f.rule,
                "level": "error",
                "message": {"text": match image {
                    Some(image) => format!("{} (image {image})", f.message),
                    None => f.message.clone(),
                }},
            });
            if let Some(index) = rule_index(f.rule) {
                result["ruleIndex"] = index.into();
            }
            if !f.file.is_empty() {
                let mut physical = json!({"artifactLocation": {"uri": uri(&f.file)}});
                if f.line > 0 {
                    let mut region = json!({"startLine": f.line});
                    if f.column > 0 {
                        region["startColumn"] = f.column.into();
                    }
                    physical["region"] = region;
                }
                result["locations"] = json!([{"physicalLocation": physical}]);
            }
            if let Some(image) = image {
                result["properties"] = json!({"image": image});
            }
            results.push(result);
        }
    }
    let rules: Vec<Value> = rules
        .iter()
        .map(|r| {
            json!({
                "id": r.id,
                "name": r.id,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.summary},
                "help": {"text": r.help},
                "defaultConfiguration": {"level": "error"},
            })
        })
        .collect();
    let log = json!({
        "$schema": "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "mooncake-sos",
                "version": env!("CARGO_PKG_VERSION"),
                "rules": rules,
            }},
            "automationDetails": {"id": format!("{command}/")},
            "results": results,
            "properties": {"summary": summary},
        }],
    });
    escape::json(&format!("{log:#}")).into_owned()
}

/// A JSON document, pretty-printed with every non-printing character escaped.
pub fn json_text(value: &impl Serialize) -> crate::Result<String> {
    let text = serde_json::to_string_pretty(value)
        .map_err(|e| crate::BadInput(format!("error: cannot write the JSON report: {e}")))?;
    Ok(escape::json(&text).into_owned())
}
