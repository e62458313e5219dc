//! The upstream module checked as `verify` and `bump` read it: every declared symbol, its
//! native surface, every image's core and modules, and the images' other users across each
//! pin; and the cores `matrix --core` sets beside the releases.

use crate::{Contract, Result};
use mooncake_sos_manifest::core_record::CoreSurface;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_native::images::{self, ImageFinding};
use mooncake_sos_native::{Reader, record};
use mooncake_sos_pysource::source::ModuleSource;
use mooncake_sos_support::escape::text;
use std::path::PathBuf;

/// The checked module: its mismatch lines (none when all match) and a one-line summary.
pub struct Checked {
    pub lines: Vec<String>,
    pub summary: String,
}

impl Checked {
    pub fn ok(&self) -> bool {
        self.lines.is_empty()
    }

    pub fn print(&self) {
        for line in &self.lines {
            println!("{}", text(line));
        }
        println!("{}", text(&self.summary));
    }
}

/// Checks `source` against every declared symbol, its native surface against the declared
/// one (the surface's warnings go to stderr), and against every image: the uses its core's
/// record (`cores/`) must serve, the modules of the package it must have. `sha256`: it must
/// also be the pinned file. A missing or malformed record is bad input, before anything is
/// printed.
pub fn check(contract: &Contract, source: &ModuleSource, sha256: bool) -> Result<Checked> {
    let api = &contract.api;
    let sides = images::load_all(&contract.root, api)?;
    let (symbols, surface) = mooncake_sos_pysource::verify_with_surface(api, source)?;
    let mut lines = symbols.lines();
    if sha256 && let Some(line) = mooncake_sos_pysource::sha256_mismatch(api, source) {
        lines.push(line);
    }
    lines.extend(surface.failure_lines());
    for line in surface.warning_lines() {
        eprintln!("{}", text(&line));
    }
    let findings = images::check(&sides, &surface.file, &surface.uses);
    lines.extend(findings.iter().map(ImageFinding::line));
    // The images' other users of the package, across each pin, from their records.
    let users = mooncake_sos_native::users_check::pin_users(api, &contract.root)?;
    for pin in &users {
        for line in &pin.verdict.warnings {
            eprintln!("warning: {}", text(line));
        }
        lines.extend(pin.verdict.failures.iter().cloned());
    }
    let users: String = users
        .iter()
        .map(|pin| format!("; {} served", pin.summary()))
        .collect();
    let summary = if lines.is_empty() {
        format!(
            "verify: {} matches api.toml: {} symbols, {} items checked, native surface: {} members, {} sibling modules, served by every image ({}){users}{} (sha256 {})",
            source.display,
            api.symbols.len(),
            symbols.items.len(),
            api.surface.members.len(),
            api.surface.siblings.len(),
            images::summary(&sides),
            if sha256 { ", the pinned file" } else { "" },
            &source.sha256[..12]
        )
    } else {
        format!(
            "verify: {} mismatch(es) in {} against api.toml (pin {})",
            lines.len(),
            source.display,
            api.upstream.short_commit()
        )
    };
    Ok(Checked { lines, summary })
}

/// Core columns for `matrix --core`: wheels, directories of wheels, or records (`*.json`).
pub fn columns(
    inputs: &[PathBuf],
    reader: &Reader,
    api: &Api,
) -> Result<Vec<(CoreSurface, String)>> {
    let mut wheels = Vec::new();
    let mut columns = Vec::new();
    for input in inputs {
        if input.is_dir() {
            wheels.extend(mooncake_sos_pysource::source::wheels_in(
                input,
                api.upstream.package(),
            )?);
        } else if input.extension().is_some_and(|x| x == "json") {
            let surface = record::load(input)?;
            columns.push((surface, input.display().to_string()));
        } else {
            wheels.push(input.clone());
        }
    }
    for wheel in wheels {
        let surface = reader.read(&wheel, &api.upstream.native_module)?;
        columns.push((surface, wheel.display().to_string()));
    }
    Ok(columns)
}
