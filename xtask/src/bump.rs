//! `cargo xtask bump --commit SHA (--module FILE | --fetch)`: moves the upstream pin, but only
//! to a module that carries the whole declared API; then regenerates every output.

use crate::verify::Common;
use crate::{EXIT_DRIFT, EXIT_ERROR};
use mooncake_sos_upstream::pin;
use mooncake_sos_upstream::source::ModuleSource;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(clap::Args)]
#[command(group(clap::ArgGroup::new("input").required(true).args(["module", "fetch"])))]
pub struct Args {
    /// The new upstream commit (40 lowercase hex digits).
    #[arg(long, value_name = "SHA")]
    commit: String,
    /// The module file at that commit.
    #[arg(long, value_name = "FILE")]
    module: Option<PathBuf>,
    /// Download the module at that commit instead.
    #[arg(long)]
    fetch: bool,
    #[command(flatten)]
    common: Common,
}

pub fn run(args: &Args) -> ExitCode {
    match bump(args) {
        Ok(code) => code,
        Err(message) => {
            eprint!("{message}");
            ExitCode::from(EXIT_ERROR)
        }
    }
}

fn bump(args: &Args) -> Result<ExitCode, String> {
    let (manifest, text, api) = args.common.load()?;
    // Hold regen's lock from here to the rename, so no regen reads a half-bumped pin, and
    // refuse if the manifest changed between reading and locking it.
    let display = manifest.display().to_string();
    let lock = mooncake_sos_codegen::input::open_regular(&manifest)
        .map_err(|e| e.to_string())
        .and_then(|f| f.lock().map(|()| f).map_err(|e| e.to_string()))
        .map_err(|e| format!("{display}: error: cannot lock the manifest: {e}\n"))?;
    if mooncake_sos_codegen::read_manifest(&manifest, &display)
        .ok()
        .as_deref()
        != Some(text.as_str())
    {
        return Err(format!(
            "{}: error: changed while bump read it; run bump again\n",
            manifest.display()
        ));
    }
    let commit = &args.commit;
    if commit.len() != 40
        || !commit
            .bytes()
            .all(|b| b.is_ascii_digit() || (b'a'..=b'f').contains(&b))
    {
        return Err(format!(
            "error: --commit {commit:?}: expected 40 lowercase hex digits\n"
        ));
    }
    let source = match &args.module {
        Some(path) => ModuleSource::read_module(path),
        None => args
            .common
            .fetcher(&api)
            .module(&api.upstream, commit, None),
    }
    .map_err(|e| format!("{e}\n"))?;
    let (lines, summary) =
        crate::verify::check(&api, &source, false).map_err(|e| format!("{e}\n"))?;
    for line in &lines {
        println!("{line}");
    }
    println!("{summary}");
    if !lines.is_empty() {
        println!(
            "bump: refused: {} does not carry the API api.toml declares; nothing written",
            source.display
        );
        return Ok(ExitCode::from(EXIT_DRIFT));
    }
    let edited = pin::set_pin(&text, commit, &source.sha256)?;
    // The edited manifest must still be valid before anything is written.
    mooncake_sos_codegen::load_str(&display, &edited).map_err(|d| d.to_string())?;
    if edited != text {
        write_atomically(&manifest, &edited)?;
    }
    drop(lock);
    println!(
        "bump: {display}: upstream pin {} -> {} (sha256 {})",
        api.upstream.short_commit(),
        &commit[..8],
        &source.sha256[..12]
    );
    Ok(crate::regen::write_outputs(&manifest))
}

/// Replaces `path` the way regen writes its outputs (`sync::write_atomic`: a temporary file
/// beside it, fsync, rename; the file's mode kept), so a reader sees the old or the new text.
pub fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    mooncake_sos_codegen::sync::write_atomic(path, text.as_bytes())
        .map_err(|e| format!("{}: error: cannot write: {e}\n", path.display()))
}
