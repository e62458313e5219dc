//! The manifest on disk, for every command that reads or changes it: loaded and validated,
//! locked while outputs are planned or written (a write a killed run left half-made is
//! finished first), edited as one change with every output it renders (`sync`), and regen
//! itself. Errors are located messages; what was written or found is a value to print.

use crate::render::{self, Cores};
use crate::sync::{self, Status};
use mooncake_sos_manifest::layout::Layout;
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::Api;
use mooncake_sos_support::diag::Source;
use std::fmt;
use std::fs::File;
use std::path::{Path, PathBuf};

/// A located message (`FILE[:LINE:COL]: error: ...`).
pub type Result<T> = std::result::Result<T, String>;

/// Reads the images' core records (`cores/` under the manifest's directory) the stubs are
/// rendered from; `Err`: the first that cannot be read, where and why.
pub type CoreRecords = fn(&Path, &Api) -> std::result::Result<Cores, Unreadable>;

/// A core record that cannot be read: its path, and what is wrong (and how to write it).
pub struct Unreadable {
    pub location: String,
    pub message: String,
}

/// A manifest as read from disk, validated.
pub struct Manifest {
    pub path: PathBuf,
    /// Reads the images' core records the stubs are rendered from.
    pub cores: CoreRecords,
    /// How messages name it: relative to the working directory when it is below it.
    pub display: String,
    pub text: String,
    pub api: Api,
}

impl Manifest {
    /// Reads and validates the manifest (without its lock: commands that write take it in
    /// [`Manifest::edit`] and check there that nothing changed meanwhile).
    pub fn load(path: &Path, cores: CoreRecords) -> Result<Manifest> {
        let display = display_name(path);
        if sync::pending(path) {
            // A write a killed run left is finished (rolled back, if it was not committed)
            // before anything is read.
            lock(path, &display, true)?;
        }
        let text = read(path, &display)?;
        let api = load_str(&display, &text).map_err(|d| d.to_string())?;
        Ok(Manifest {
            path: path.to_owned(),
            cores,
            display,
            text,
            api,
        })
    }

    /// The outputs that are not what this manifest renders (stale, missing, hand-edited,
    /// orphaned), read under the manifest's lock.
    pub fn stale_outputs(&self) -> Result<Vec<String>> {
        let _lock = lock(&self.path, &self.display, false)?;
        let changes = plan_outputs(
            &self.path,
            &self.display,
            self.text.clone(),
            true,
            self.cores,
        )?;
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
    ) -> Result<Written> {
        self.edit_renaming(command, edit, &[])
    }

    /// [`Manifest::edit`], with regions renamed in the same change (`adopt`: an image that
    /// changes strategy keeps its region's place in its Dockerfile).
    pub fn edit_renaming(
        &self,
        command: &str,
        edit: impl FnOnce(&str) -> std::result::Result<String, String>,
        renames: &[sync::Rename],
    ) -> Result<Written> {
        let _lock = lock(&self.path, &self.display, true)?;
        if read(&self.path, &self.display)? != self.text {
            return Err(format!(
                "{}: error: changed while {command} ran; run {command} again",
                self.display
            ));
        }
        let (layout, plain) = Layout::split(&self.text);
        let edited = edit(&plain).map_err(|e| format!("{}: {e}", self.display))?;
        let edited = layout.restore(&edited);
        let root = self.root();
        let changes = sync::plan_manifest_edit(
            root,
            &Source::new(self.display.clone(), edited),
            false,
            renames,
            // Located in the edited manifest: the record's path and what is wrong with it.
            &|api: &Api| {
                (self.cores)(root, api).map_err(|e| format!("{}: {}", e.location, e.message))
            },
        )
        .map_err(|d| d.to_string())?;
        sync::apply(&self.path, &changes).map_err(|e| format!("error: writing: {e}"))?;
        // An editor waiting for this lock reads the new text next and refuses.
        Ok(Written {
            changes,
            display: self.display.clone(),
        })
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

/// Regen of the manifest at `path` (`--check`: nothing written, the drift found), under its
/// lock: a second regen waits instead of interleaving writes; checks share the lock.
pub fn regen(path: &Path, mode: Mode, cores: CoreRecords) -> Result<Regen> {
    let display = display_name(path);
    let _lock = lock(path, &display, matches!(mode, Mode::Write { .. }))?;
    let text = read(path, &display)?;
    // --check reports hand edits as drift; regen refuses them unless --force.
    let accept_hand_edits = match mode {
        Mode::Write { force } => force,
        Mode::Check => true,
    };
    let changes = plan_outputs(path, &display, text, accept_hand_edits, cores)?;
    let written = Written { changes, display };
    if let Mode::Check = mode {
        return Ok(Regen::Checked(written));
    }
    sync::apply(path, &written.changes).map_err(|e| format!("error: writing outputs: {e}"))?;
    Ok(Regen::Written(written))
}

/// What a regen did.
pub enum Regen {
    /// The outputs written (those that changed).
    Written(Written),
    /// `--check`: nothing written; the outputs as planned against the files on disk.
    Checked(Written),
}

impl Regen {
    /// Whether every output is current (always, after a write).
    pub fn current(&self) -> bool {
        match self {
            Regen::Written(_) => true,
            Regen::Checked(w) => w.changes.iter().all(|c| c.status == Status::Unchanged),
        }
    }
}

impl fmt::Display for Regen {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Regen::Written(w) => w.fmt(f),
            Regen::Checked(w) => drift(f, &w.changes, &w.display),
        }
    }
}

/// The outputs of one regen or manifest edit, planned against the files on disk.
pub struct Written {
    pub changes: Vec<sync::Change>,
    /// How messages name the manifest.
    pub display: String,
}

/// Every output of the manifest at `path` (`text`), planned against the files on disk.
fn plan_outputs(
    path: &Path,
    display: &str,
    text: String,
    accept_hand_edits: bool,
    cores: CoreRecords,
) -> Result<Vec<sync::Change>> {
    let api = load_str(display, &text).map_err(|d| d.to_string())?;
    let cores =
        cores(root_of(path), &api).map_err(|e| format!("{}: error: {}", e.location, e.message))?;
    let outputs = render::render_all(&api, &cores).map_err(|e| format!("error: {e}"))?;
    let source = Source::new(display, text);
    sync::plan(
        root_of(path),
        &source,
        &api.name,
        &outputs,
        accept_hand_edits,
    )
    .map_err(|d| d.to_string())
}

/// One line per file (`written`, `unchanged`, `removed`), then the totals.
impl fmt::Display for Written {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let changes = &self.changes;
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
            writeln!(f, "{verb} {}", c.path)?;
        }
        writeln!(
            f,
            "regen: {written} written, {} unchanged ({})",
            changes.len() - written,
            self.display
        )
    }
}

/// Each output out of date with its diff, then the count and what to run.
fn drift(f: &mut fmt::Formatter<'_>, changes: &[sync::Change], display: &str) -> fmt::Result {
    let drifted: Vec<_> = changes
        .iter()
        .filter(|c| c.status != Status::Unchanged)
        .collect();
    for c in &drifted {
        writeln!(f, "{}: {}", c.status.label(), c.path)?;
        // The outputs hold what api.toml took from index pages (wheel file names).
        write!(f, "{}", mooncake_sos_support::escape::lines(&c.diff()))?;
    }
    if drifted.is_empty() {
        return writeln!(
            f,
            "regen --check: all {} outputs are current ({display})",
            changes.len()
        );
    }
    let hint = if drifted.iter().any(|c| c.status == Status::HandEdited) {
        "`cargo xtask regen --force` (hand edits belong in api.toml)"
    } else {
        "`cargo xtask regen`"
    };
    writeln!(
        f,
        "regen --check: {} of {} outputs out of date ({display}); run {hint}",
        drifted.len(),
        changes.len()
    )
}

/// The manifest's lock: a flock on the manifest file itself (exclusive to write, shared to
/// check), so anyone who locks api.toml to change it in place is kept out too. A write a
/// killed run left half-made is rolled back first, under the exclusive lock, whoever finds
/// it: every command then starts from whole files.
fn lock(path: &Path, display: &str, exclusive: bool) -> Result<File> {
    // Only a regular file: a FIFO or a device is refused here, not waited on.
    let file = mooncake_sos_support::input::open_regular(path)
        .map_err(|e| e.diagnostic(display, "the manifest").to_string())?;
    let cannot = |e: std::io::Error| format!("{display}: error: cannot lock the manifest: {e}");
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
            format!("{display}: error: undoing a write that was stopped half-way: {e}")
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
    mooncake_sos_manifest::read_manifest(path, display).map_err(|d| d.to_string())
}

pub fn root_of(path: &Path) -> &Path {
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
