//! `core --diff OLD NEW`: what the newer core breaks for code written against the older one,
//! as text, JSON, Markdown, GitHub workflow commands or SARIF (a finding per breaking change,
//! at the NEW side). Each side is a wheel (read as `core` reads it) or a record from `cores/`.

use crate::findings::{self, Finding, Format, RuleInfo};
use crate::{Outcome, Result};
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_native::core_diff::{Change, CoreDiff, Impact, diff};
use mooncake_sos_native::{Reader, record};
use mooncake_sos_support::escape;
use std::path::{Path, PathBuf};

/// The rule of a breaking change.
pub const RULE: RuleInfo = RuleInfo {
    id: "core-breaking",
    summary: "the newer native core breaks code written against the older one",
    help: "Code that uses what changed must change with the core, or the image must stay on the older core (api.toml's pin).",
};

/// Prints the diff of `old` → `new`; `Failed` when something breaks.
pub fn run(reader: &Reader, native_module: &str, sides: &[PathBuf], format: Format) -> Result {
    let [old, new] = sides else {
        unreachable!("clap takes exactly two values for --diff")
    };
    let (old_core, new_core) = (
        load(reader, native_module, old)?,
        load(reader, native_module, new)?,
    );
    let diff = diff(&old_core, &new_core);
    let breaking: Vec<Finding> = diff
        .breaking()
        .map(|c| Finding {
            file: new.display().to_string(),
            line: 0,
            column: 0,
            rule: RULE.id,
            message: format!("{}: {}", c.path, c.what),
            images: Vec::new(),
        })
        .collect();
    let summary = || {
        format!(
            "core --diff: {} -> {}: {}",
            diff.old,
            diff.new,
            counts(&diff)
        )
    };
    match format {
        Format::Text => print!("{}", text(&diff)),
        Format::Markdown => print!("{}", markdown(&diff)),
        Format::Json => println!(
            "{}",
            escape::json(&serde_json::to_string_pretty(&diff).unwrap_or_default())
        ),
        Format::Github => print!("{}", findings::github(&breaking, &summary())),
        Format::Sarif => println!(
            "{}",
            findings::sarif("core --diff", &[RULE], &breaking, &summary())
        ),
    }
    Ok(Outcome::of(breaking.is_empty()))
}

/// A `.json` file is a record; anything else a wheel.
fn load(reader: &Reader, native_module: &str, side: &Path) -> Result<CoreSurface> {
    if side.extension().is_some_and(|e| e == "json") {
        Ok(record::load(side)?)
    } else {
        Ok(reader.read(side, native_module)?)
    }
}

const SECTIONS: [(Impact, &str); 3] = [
    (Impact::Breaking, "breaking"),
    (Impact::Added, "added"),
    (Impact::Compatible, "changed, still compatible"),
];

fn counts(diff: &CoreDiff) -> String {
    SECTIONS
        .iter()
        .map(|(impact, _)| {
            let n = diff.of(*impact).count();
            match impact {
                Impact::Breaking => format!("{n} breaking"),
                Impact::Added => format!("{n} added"),
                Impact::Compatible => format!("{n} compatible"),
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

/// One line per change; every name from the cores escaped ([`escape::text`]).
pub fn text(diff: &CoreDiff) -> String {
    let mut out = format!(
        "{} -> {}: {}\n",
        escape::text(&diff.old),
        escape::text(&diff.new),
        counts(diff)
    );
    for (impact, title) in SECTIONS {
        let changes: Vec<&Change> = diff.of(impact).collect();
        if changes.is_empty() {
            continue;
        }
        out.push_str(&format!("{title}:\n"));
        for c in changes {
            out.push_str(&format!(
                "  {}: {}\n",
                escape::text(&c.path),
                escape::text(&c.what)
            ));
        }
    }
    out
}

/// A heading and a table per section; every name from the cores a code span
/// ([`escape::markdown`]), so none can add a row, a heading, a link or an image.
pub fn markdown(diff: &CoreDiff) -> String {
    let mut out = format!(
        "### {} → {}\n\n{}\n",
        escape::markdown(&diff.old),
        escape::markdown(&diff.new),
        counts(diff)
    );
    for (impact, title) in SECTIONS {
        let changes: Vec<&Change> = diff.of(impact).collect();
        if changes.is_empty() {
            continue;
        }
        let mut title = title.to_owned();
        title[..1].make_ascii_uppercase();
        out.push_str(&format!(
            "\n**{title}** ({})\n\n| What | Change |\n|---|---|\n",
            changes.len()
        ));
        for c in changes {
            out.push_str(&format!(
                "| {} | {} |\n",
                escape::markdown(&c.path),
                escape::markdown(&c.what)
            ));
        }
    }
    out
}
