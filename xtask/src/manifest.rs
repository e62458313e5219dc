//! Where the manifest is, for every command (`--manifest`, else the api.toml of the checkout
//! this runs in, found at run time); loading, editing and regen are the generator's
//! (`mooncake_sos_codegen::regen`), with the images' core records read as `native` reads them.

use crate::exit::{BadInput, Outcome, Result};
use mooncake_sos_codegen::regen::{self, Unreadable, Written};
pub use mooncake_sos_codegen::regen::{Manifest, Mode};
use mooncake_sos_codegen::render::Cores;
use mooncake_sos_manifest::model::Api;
use std::path::{Path, PathBuf};

const FILE_NAME: &str = "api.toml";

#[derive(clap::Args, Clone, Debug)]
pub struct ManifestArg {
    /// The manifest (default: the api.toml of the checkout); outputs are relative to its directory.
    #[arg(long, value_name = "PATH", global = true)]
    manifest: Option<PathBuf>,
}

impl ManifestArg {
    pub fn path(&self) -> Result<PathBuf> {
        match &self.manifest {
            Some(path) => absolute(path),
            None => Ok(repo_root()?.join(FILE_NAME)),
        }
    }

    pub fn load(&self) -> Result<Manifest> {
        Ok(Manifest::load(&self.path()?, cores)?)
    }
}

/// `path` from the working directory, its directory resolved (symlinks included), its file
/// name kept: outputs are planned against the same directory the writes check, whatever the
/// working directory and however the manifest is named (a symlinked api.toml stays one, and
/// an edit replaces the file it points to).
fn absolute(path: &Path) -> Result<PathBuf> {
    let dir = regen::root_of(path);
    let file = path
        .file_name()
        .ok_or_else(|| BadInput(format!("error: --manifest {}: not a file", path.display())))?;
    let dir = std::fs::canonicalize(dir)
        .map_err(|e| BadInput(format!("error: --manifest {}: {e}", path.display())))?;
    Ok(dir.join(file))
}

/// The checkout this run works on, found at run time, never baked in at build time (a
/// target directory shared by two checkouts would run one checkout's build in the other):
/// `cargo xtask` (cargo run) sets CARGO_MANIFEST_DIR to this checkout's xtask/, whose parent
/// is the root; a binary run by hand walks up from the working directory to an api.toml.
pub fn repo_root() -> Result<PathBuf> {
    let from_cargo = std::env::var_os("CARGO_MANIFEST_DIR")
        .and_then(|dir| Path::new(&dir).parent().map(Path::to_path_buf))
        .filter(|root| root.join(FILE_NAME).is_file());
    if let Some(root) = from_cargo {
        return Ok(root);
    }
    let cwd = std::env::current_dir()
        .map_err(|e| BadInput(format!("error: cannot read the working directory: {e}")))?;
    cwd.ancestors()
        .find(|dir| dir.join(FILE_NAME).is_file())
        .map(Path::to_path_buf)
        .ok_or_else(|| {
            BadInput(format!(
                "error: no {FILE_NAME} in {} or above it; run inside a checkout or pass --manifest",
                cwd.display()
            ))
        })
}

/// `cargo xtask regen [--check] [--force]` for the manifest at `path`: what it wrote, or the
/// drift it found (exit 1).
pub fn regen(path: &Path, mode: Mode) -> Result {
    let done = regen::regen(path, mode, cores)?;
    print!("{done}");
    Ok(if done.current() {
        Outcome::Ok
    } else {
        Outcome::Failed
    })
}

/// A manifest edit's outputs, printed; the edit succeeded.
pub fn written(written: Written) -> Result {
    print!("{written}");
    Ok(Outcome::Ok)
}

/// The images' core records (`cores/`, relative to `root`) the stubs are rendered from, as
/// the native crate reads them; `Err`: the first that cannot be read, and how to write it.
fn cores(root: &Path, api: &Api) -> std::result::Result<Cores, Unreadable> {
    let records = mooncake_sos_native::images::cores(root, api).map_err(|e| Unreadable {
        location: e.location,
        message: e.message,
    })?;
    Ok(Cores::new(records))
}
