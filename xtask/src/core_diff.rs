//! `cargo xtask core --diff OLD NEW`: what the newer core breaks for code written against the
//! older one, as text, JSON or Markdown. Each side is a wheel (read as `core` reads it) or a
//! record from `cores/`.

use crate::exit::{Outcome, Result};
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_native::core_diff::{Change, CoreDiff, Impact, diff};
use mooncake_sos_native::{Reader, record};
use mooncake_sos_support::escape;
use std::path::Path;

/// How the report is printed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Form {
    Text,
    Json,
    Markdown,
}

/// Prints the diff of `old` → `new`; `Failed` when something breaks.
pub fn run(
    reader: &Reader,
    native_module: &str,
    sides: &[std::path::PathBuf],
    form: Form,
) -> Result {
    let [old, new] = sides else {
        unreachable!("clap takes exactly two values for --diff")
    };
    let (old, new) = (
        load(reader, native_module, old)?,
        load(reader, native_module, new)?,
    );
    let diff = diff(&old, &new);
    match form {
        Form::Text => print!("{}", text(&diff)),
        Form::Markdown => print!("{}", markdown(&diff)),
        Form::Json => println!(
            "{}",
            escape::json(&serde_json::to_string_pretty(&diff).unwrap_or_default())
        ),
    }
    Ok(if diff.breaking().next().is_some() {
        Outcome::Failed
    } else {
        Outcome::Ok
    })
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
