//! `cargo xtask regen [--check] [--force] [--manifest PATH]`.

use crate::{EXIT_DRIFT, EXIT_ERROR, project_root};
use mooncake_sos_codegen::diag::Source;
use mooncake_sos_codegen::sync::{self, Status};
use mooncake_sos_codegen::{load_str, render};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct Args {
    /// Write nothing; exit 1 if any output is stale, missing, orphaned or hand-edited.
    #[arg(long)]
    check: bool,
    /// Overwrite regions that were edited by hand.
    #[arg(long)]
    force: bool,
    /// The manifest; outputs are written relative to its directory.
    #[arg(long, value_name = "PATH")]
    manifest: Option<PathBuf>,
}

pub fn run(args: &Args) -> ExitCode {
    let manifest = args
        .manifest
        .clone()
        .unwrap_or_else(|| project_root().join("api.toml"));
    match regen(&manifest, args) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

/// `cargo xtask regen --manifest PATH`, for the commands that edit the manifest (bump).
pub fn write_outputs(manifest: &Path) -> ExitCode {
    run(&Args {
        check: false,
        force: false,
        manifest: Some(manifest.to_owned()),
    })
}

fn regen(manifest: &Path, args: &Args) -> Result<ExitCode, String> {
    let display = display_name(manifest);
    let root = manifest
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    // One regen at a time per manifest: a second one waits instead of interleaving writes.
    // Only a regular file: a FIFO or a device is refused here, not waited on.
    let lock = mooncake_sos_codegen::input::open_regular(manifest)
        .map_err(|e| e.diagnostic(&display, "the manifest").to_string())?;
    let locked = if args.check {
        lock.lock_shared()
    } else {
        lock.lock()
    };
    locked.map_err(|e| format!("{display}: error: cannot lock the manifest: {e}\n"))?;
    let text =
        mooncake_sos_codegen::read_manifest(manifest, &display).map_err(|d| d.to_string())?;
    let api = load_str(&display, &text).map_err(|d| d.to_string())?;
    let outputs = render::render_all(&api).map_err(|e| format!("error: {e}\n"))?;
    let source = Source::new(display.clone(), text);
    // --check reports hand edits as drift; regen refuses them unless --force.
    let changes = sync::plan(root, &source, &api.name, &outputs, args.force || args.check)
        .map_err(|d| d.to_string())?;
    if args.check {
        return Ok(report_drift(&changes, &display));
    }
    sync::apply(root, &changes).map_err(|e| format!("error: writing outputs: {e}\n"))?;
    let written = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .count();
    for c in &changes {
        let verb = match c.status {
            Status::Unchanged => "unchanged",
            Status::Orphaned => "removed  ",
            _ => "written  ",
        };
        println!("{verb} {}", c.path);
    }
    println!(
        "regen: {written} written, {} unchanged ({display})",
        changes.len() - written
    );
    Ok(ExitCode::SUCCESS)
}

fn report_drift(changes: &[sync::Change], display: &str) -> ExitCode {
    let drifted: Vec<_> = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .collect();
    for c in &drifted {
        println!("{}: {}", c.status.label(), c.path);
        print!("{}", c.diff());
    }
    if drifted.is_empty() {
        println!(
            "regen --check: all {} outputs are current ({display})",
            changes.len()
        );
        return ExitCode::SUCCESS;
    }
    let hint = if drifted.iter().any(|c| c.status == Status::HandEdited) {
        "`cargo xtask regen --force` (hand edits belong in api.toml)"
    } else {
        "`cargo xtask regen`"
    };
    println!(
        "regen --check: {} of {} outputs out of date ({display}); run {hint}",
        drifted.len(),
        changes.len()
    );
    ExitCode::from(EXIT_DRIFT)
}

/// How errors name the manifest: relative to the working directory when it is below it.
fn display_name(manifest: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    manifest
        .strip_prefix(&cwd)
        .unwrap_or(manifest)
        .display()
        .to_string()
}
