//! The watch report as text (default), a Markdown table for a PR body, GitHub workflow
//! annotations against api.toml's lines, or JSON. Every format carries the same facts and
//! nothing machine-specific (no cache paths, no timings). What a release, its core, its
//! module or the index page says goes through [`escape`] for the format it lands in.

use super::Report;
use super::release::{CoreVerdict, ReleaseReport, Smoke};
use mooncake_sos_support::escape;

/// One line about a release: what it carries, its core, the layers, the changes.
pub fn release_summary(r: &ReleaseReport) -> String {
    if !r.carries_api {
        return r.api_reason();
    }
    let mut parts = vec!["carries the API".to_owned()];
    parts.push(match &r.core {
        CoreVerdict::Serves { .. } => "its core serves it".into(),
        CoreVerdict::Fails { missing, .. } => format!(
            "its core does not serve it ({})",
            missing.first().map_or("", String::as_str)
        ),
        CoreVerdict::Unknown { reason } => format!("its core not checked: {}", summary(reason)),
    });
    if let Some(first) = r.undeclared_uses.first() {
        parts.push(format!(
            "{} use(s) api.toml does not declare (first: {first})",
            r.undeclared_uses.len()
        ));
    }
    for l in &r.layers {
        parts.push(match l.findings.first() {
            None => format!("{} in image {} works", l.layer, l.image),
            Some(f) => format!("{} in image {} breaks: {f}", l.layer, l.image),
        });
    }
    if !r.changes.is_empty() {
        let list: Vec<String> = r.changes.iter().map(|c| c.line()).collect();
        parts.push(format!("changes: {}", list.join("; ")));
    } else {
        parts.push("no changes from the baseline".into());
    }
    parts.push(match &r.smoke {
        Smoke::Passed { summary } => format!("smoke passed ({summary})"),
        Smoke::Failed { output } => format!("smoke FAILED: {}", first_line(output)),
        Smoke::NotRun { reason } => format!("smoke not run ({reason})"),
    });
    parts.join("; ")
}

fn first_line(s: &str) -> &str {
    s.lines().next().unwrap_or("")
}

/// A several-line reason on one line: its first line and, when that ends in `:` (an error
/// that follows), the last line of what follows (the error itself).
fn summary(s: &str) -> String {
    let first = first_line(s);
    match (
        first.strip_suffix(':'),
        s.lines().skip(1).filter(|l| !l.trim().is_empty()).last(),
    ) {
        (Some(head), Some(last)) => format!("{head}: {}", last.trim()),
        _ => first.to_owned(),
    }
}

/// How many of the releases whose module carries the API had their own core checked (read
/// here and fitted to the module): `4 of the 4 API-carrying releases' cores checked`. A core
/// that could not be read here (a library it needs) is the difference.
pub fn cores_checked(report: &Report) -> String {
    let carrying: Vec<&ReleaseReport> = report
        .packages
        .iter()
        .flat_map(|p| &p.releases)
        .filter(|r| r.carries_api)
        .collect();
    let checked = carrying
        .iter()
        .filter(|r| !matches!(r.core, CoreVerdict::Unknown { .. }))
        .count();
    format!(
        "{checked} of the {} API-carrying releases' cores checked",
        carrying.len()
    )
}

pub fn text(report: &Report) -> String {
    let t = |s: &str| escape::text(s).into_owned();
    let mut out = String::new();
    out.push_str(&format!("baseline: {}\n", t(&report.baseline)));
    for p in &report.packages {
        out.push_str(&format!(
            "\n{} ({} listed, {} checked)\n",
            p.package,
            p.listed.len(),
            p.releases.len()
        ));
        if !p.skipped.is_empty() {
            out.push_str(&format!(
                "  not checked ({}, past --max-releases): {}\n",
                p.skipped.len(),
                p.skipped.join(", ")
            ));
        }
        for r in &p.releases {
            out.push_str(&format!("  {}: {}\n", r.version, t(&release_summary(r))));
        }
    }
    out.push_str(&format!("\ncores: {}\n", cores_checked(report)));
    for i in &report.images {
        out.push_str(&format!(
            "\nimage {}: {} on {} {}\n",
            i.image, i.strategy, i.package, i.version
        ));
        match &i.transition {
            Some(s) => out.push_str(&format!(
                "  transition: {} -> {}\n",
                i.strategy,
                t(&s.to_string())
            )),
            None => out.push_str("  transition: none now\n"),
        }
        for b in &i.blocked {
            out.push_str(&format!("  blocked: {}\n", t(&b.to_string())));
        }
        for b in &i.breaking {
            out.push_str(&format!("  breaks: {}\n", t(&b.to_string())));
        }
    }
    out
}

pub fn markdown(report: &Report) -> String {
    let mut out = String::from(
        "| image | now | transition | blocked | newer releases that break it |\n|---|---|---|---|---|\n",
    );
    for i in &report.images {
        let transition = i.transition.as_ref().map_or("none now".to_owned(), |s| {
            format!(
                "**{} → {}**: {}",
                i.strategy,
                s.target(),
                escape::markdown(&s.reason)
            )
        });
        let list = |steps: &[super::plan::Step]| {
            if steps.is_empty() {
                "—".to_owned()
            } else {
                steps
                    .iter()
                    .map(|b| escape::markdown(&b.to_string()))
                    .collect::<Vec<_>>()
                    .join("<br>")
            }
        };
        out.push_str(&format!(
            "| {} | {} on {} {} | {} | {} | {} |\n",
            escape::markdown(&i.image),
            i.strategy,
            i.package,
            i.version,
            transition,
            list(&i.blocked),
            list(&i.breaking)
        ));
    }
    out.push_str("\n| package | release | verdict |\n|---|---|---|\n");
    for p in &report.packages {
        for r in &p.releases {
            out.push_str(&format!(
                "| {} | {} | {} |\n",
                p.package,
                r.version,
                escape::markdown(&release_summary(r))
            ));
        }
        if !p.skipped.is_empty() {
            out.push_str(&format!(
                "| {} | {} | not checked (past --max-releases) |\n",
                p.package,
                p.skipped.join(", ")
            ));
        }
    }
    out.push_str(&format!(
        "\nBaseline: {}\n",
        escape::markdown(&report.baseline)
    ));
    out.push_str(&format!("\nCores: {}\n", cores_checked(report)));
    out
}

/// `::notice` for a transition, `::warning` for a newer release that breaks the image, at
/// the line of the image's `strategy` in `manifest` (the path as the workflow names it).
pub fn github(report: &Report, manifest: &str) -> String {
    let (manifest, esc) = (escape::github_property(manifest), escape::github_data);
    let mut out = String::new();
    for i in &report.images {
        if let Some(s) = &i.transition {
            out.push_str(&format!(
                "::warning file={manifest},line={}::image {}: {} -> {} is possible: {}\n",
                i.line,
                i.image,
                i.strategy,
                s.target(),
                esc(&s.reason)
            ));
        }
        for b in &i.breaking {
            out.push_str(&format!(
                "::warning file={manifest},line={}::image {}: {} {} would break it: {}\n",
                i.line,
                i.image,
                i.package,
                b.version.as_deref().unwrap_or(""),
                esc(&b.reason)
            ));
        }
    }
    out
}

pub fn json(report: &Report) -> String {
    let json = serde_json::to_string_pretty(report).unwrap_or_default();
    escape::json(&json).into_owned()
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod hostile;

#[cfg(test)]
mod tests {
    use super::summary;

    #[test]
    fn a_reason_that_ends_in_a_colon_keeps_its_error() {
        let reason = "the native core m/store.so (`m.store`) does not import:\nTraceback\n  ...\nImportError: undefined symbol: cuGetErrorName\n";
        assert_eq!(
            summary(reason),
            "the native core m/store.so (`m.store`) does not import: ImportError: undefined symbol: cuGetErrorName"
        );
        assert_eq!(summary("one line\nmore"), "one line");
        assert_eq!(summary("ends:"), "ends:");
    }
}
