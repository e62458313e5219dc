//! The manifest, for every command: where it is (`--manifest`, else the api.toml of the
//! checkout this runs in, found at run time), loading it, editing it under the lock regen
//! takes, and regen itself.

use crate::exit::{BadInput, Outcome, Result};
use mooncake_sos_codegen::render::{self, Cores};
use mooncake_sos_codegen::sync::{self, Status};
use mooncake_sos_manifest::layout::Layout;
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_pysource::source::LoadError;
use mooncake_sos_support::diag::Source;
use std::fs::File;
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
        Manifest::load(&self.path()?)
    }
}

/// `path` from the working directory, its directory resolved (symlinks included), its file
/// name kept: outputs are planned against the same directory the writes check, whatever the
/// working directory and however the manifest is named (a symlinked api.toml stays one, and
/// an edit replaces the file it points to).
fn absolute(path: &Path) -> Result<PathBuf> {
    let dir = root_of(path);
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

/// A manifest as read from disk, validated.
pub struct Manifest {
    pub path: PathBuf,
    /// How messages name it: relative to the working directory when it is below it.
    pub display: String,
    pub text: String,
    pub api: Api,
}

impl Manifest {
    /// Reads and validates the manifest (without its lock: commands that write take it in
    /// [`Manifest::edit`] and check there that nothing changed meanwhile).
    pub fn load(path: &Path) -> Result<Manifest> {
        let display = display_name(path);
        if sync::pending(path) {
            // A write a killed run left is finished (rolled back, if it was not committed)
            // before anything is read.
            lock(path, &display, true)?;
        }
        let text = read(path, &display)?;
        let api = load_str(&display, &text)?;
        Ok(Manifest {
            path: path.to_owned(),
            display,
            text,
            api,
        })
    }

    /// The outputs that are not what this manifest renders (stale, missing, hand-edited,
    /// orphaned), read under the manifest's lock.
    pub fn stale_outputs(&self) -> Result<Vec<String>> {
        let _lock = lock(&self.path, &self.display, false)?;
        let changes = plan_outputs(&self.path, &self.display, self.text.clone(), true)?;
        Ok(changes
            .iter()
            .filter(|c| c.status != Status::Unchanged)
            .map(|c| c.path.to_string())
            .collect())
    }

    /// The directory outputs are written relative to.
    pub fn root(&self) -> &Path {
        root_of(&self.path)
    }

    /// The manifest's text as an edit takes it: no byte order mark, LF line ends (toml_edit
    /// keeps neither); [`Manifest::edit`] gives the edited text the file's own back.
    pub fn editable(&self) -> String {
        Layout::split(&self.text).1
    }

    /// Rewrites the manifest with `edit` (of [`Manifest::editable`]'s text; its byte order
    /// mark and line ending put back after) and regenerates every output from the edited
    /// text, as one change: under the manifest's lock (the one regen takes) the file is read
    /// again, and if it is no longer the text this command read and decided on, nothing is
    /// written. The manifest and the outputs are planned together and applied all or nothing
    /// (`sync::plan_manifest_edit`), so api.toml is never written when its regen would fail.
    pub fn edit(
        &self,
        command: &str,
        edit: impl FnOnce(&str) -> std::result::Result<String, String>,
    ) -> Result {
        self.edit_renaming(command, edit, &[])
    }

    /// [`Manifest::edit`], with regions renamed in the same change (`adopt`: an image that
    /// changes strategy keeps its region's place in its Dockerfile).
    pub fn edit_renaming(
        &self,
        command: &str,
        edit: impl FnOnce(&str) -> std::result::Result<String, String>,
        renames: &[sync::Rename],
    ) -> Result {
        let _lock = lock(&self.path, &self.display, true)?;
        if read(&self.path, &self.display)? != self.text {
            return Err(BadInput(format!(
                "{}: error: changed while {command} ran; run {command} again",
                self.display
            )));
        }
        let (layout, plain) = Layout::split(&self.text);
        let edited = edit(&plain).map_err(|e| BadInput(format!("{}: {e}", self.display)))?;
        let edited = layout.restore(&edited);
        let root = self.root();
        let changes = sync::plan_manifest_edit_renaming(
            root,
            &Source::new(self.display.clone(), edited),
            false,
            renames,
            // Located in the edited manifest: the record's path and what is wrong with it.
            &|api: &Api| cores(root, api).map_err(|e| format!("{}: {}", e.location, e.message)),
        )?;
        sync::apply(&self.path, &changes).map_err(|e| format!("error: writing: {e}"))?;
        print_written(&changes, &self.display);
        // An editor waiting for this lock reads the new text next and refuses.
        Ok(Outcome::Ok)
    }
}

/// What regen does with the rendered outputs.
#[derive(Clone, Copy, Debug)]
pub enum Mode {
    /// Write what changed; `force` overwrites regions edited by hand.
    Write { force: bool },
    /// Write nothing; report drift.
    Check,
}

/// `cargo xtask regen [--check] [--force]` for the manifest at `path`, under its lock: a
/// second regen waits instead of interleaving writes; checks share the lock.
pub fn regen(path: &Path, mode: Mode) -> Result {
    let display = display_name(path);
    let _lock = lock(path, &display, matches!(mode, Mode::Write { .. }))?;
    let text = read(path, &display)?;
    // --check reports hand edits as drift; regen refuses them unless --force.
    let accept_hand_edits = match mode {
        Mode::Write { force } => force,
        Mode::Check => true,
    };
    let changes = plan_outputs(path, &display, text, accept_hand_edits)?;
    if let Mode::Check = mode {
        return Ok(report_drift(&changes, &display));
    }
    sync::apply(path, &changes).map_err(|e| format!("error: writing outputs: {e}"))?;
    print_written(&changes, &display);
    Ok(Outcome::Ok)
}

/// Every output of the manifest at `path` (`text`), planned against the files on disk.
fn plan_outputs(
    path: &Path,
    display: &str,
    text: String,
    accept_hand_edits: bool,
) -> Result<Vec<sync::Change>> {
    let api = load_str(display, &text)?;
    let cores = cores(root_of(path), &api)?;
    let outputs = render::render_all(&api, &cores).map_err(|e| format!("error: {e}"))?;
    let source = Source::new(display, text);
    Ok(sync::plan(
        root_of(path),
        &source,
        &api.name,
        &outputs,
        accept_hand_edits,
    )?)
}

/// The images' core records (`cores/`, relative to `root`) the stubs are rendered from, as
/// the native crate reads them; `Err`: the first that cannot be read, and how to write it.
pub fn cores(root: &Path, api: &Api) -> std::result::Result<Cores, LoadError> {
    let records = mooncake_sos_native::images::cores(root, api)?;
    let texts: Vec<String> = records.iter().map(|r| r.to_json()).collect();
    Cores::from_records(&texts)
        .map_err(|e| LoadError::new(root.join("cores").display().to_string(), e))
}

/// One line per file (`written`, `unchanged`, `removed`), then the totals.
fn print_written(changes: &[sync::Change], display: &str) {
    let written = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .count();
    for c in changes {
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
}

fn report_drift(changes: &[sync::Change], display: &str) -> Outcome {
    let drifted: Vec<_> = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .collect();
    for c in &drifted {
        println!("{}: {}", c.status.label(), c.path);
        // The outputs hold what api.toml took from index pages (wheel file names).
        print!("{}", mooncake_sos_support::escape::lines(&c.diff()));
    }
    if drifted.is_empty() {
        println!(
            "regen --check: all {} outputs are current ({display})",
            changes.len()
        );
        return Outcome::Ok;
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
    Outcome::Failed
}

/// The manifest's lock: a flock on the manifest file itself (exclusive to write, shared to
/// check), so anyone who locks api.toml to change it in place is kept out too. A write a
/// killed run left half-made is rolled back first, under the exclusive lock, whoever finds
/// it: every command then starts from whole files.
fn lock(path: &Path, display: &str, exclusive: bool) -> Result<File> {
    // Only a regular file: a FIFO or a device is refused here, not waited on.
    let file = mooncake_sos_support::input::open_regular(path)
        .map_err(|e| BadInput(e.diagnostic(display, "the manifest").to_string()))?;
    let cannot =
        |e: std::io::Error| BadInput(format!("{display}: error: cannot lock the manifest: {e}"));
    if exclusive {
        file.lock().map_err(cannot)?;
    } else {
        file.lock_shared().map_err(cannot)?;
    }
    if sync::pending(path) {
        if !exclusive {
            // flock turns this one lock exclusive, and back to shared after.
            file.lock().map_err(cannot)?;
        }
        let journal = sync::recover(path).map_err(|e| {
            BadInput(format!(
                "{display}: error: undoing a write that was stopped half-way: {e}"
            ))
        })?;
        sync::sweep(path);
        match journal {
            Some(0) => {
                eprintln!("{display}: removed the temporary files of a run that was stopped")
            }
            Some(restored) => eprintln!(
                "{display}: a run was stopped while writing; undone: {restored} file(s) put \
                 back as they were before it"
            ),
            None => {}
        }
        if !exclusive {
            file.lock_shared().map_err(cannot)?;
        }
    }
    Ok(file)
}

/// The manifest's text: a regular file, bounded in size, UTF-8 (a bad byte is located).
fn read(path: &Path, display: &str) -> Result<String> {
    Ok(mooncake_sos_manifest::read_manifest(path, display)?)
}

fn root_of(path: &Path) -> &Path {
    path.parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."))
}

/// How messages name the manifest: relative to the working directory when it is below it.
fn display_name(manifest: &Path) -> String {
    let cwd = std::env::current_dir().unwrap_or_default();
    manifest
        .strip_prefix(&cwd)
        .unwrap_or(manifest)
        .display()
        .to_string()
}
