//! The options both command lines give these checks (`cargo xtask` and the package's
//! executable), parsed by clap into plain settings; and where their caches live.

use crate::{BadInput, Result};
use mooncake_sos_native::cuda_runtime::Runtimes;
use mooncake_sos_native::isolate::Isolation;
use mooncake_sos_native::read::Reader;
use mooncake_sos_watch as watch;
use std::path::{Path, PathBuf};
use std::time::Duration;

pub use crate::findings::Format;

/// How cores are read; `matrix` takes the same options.
#[derive(clap::Args, Clone)]
pub struct Reading {
    /// Directories the core's shared libraries are loaded from (before LD_LIBRARY_PATH): a
    /// CUDA runtime, a driver stub. Repeatable; a value may list several, `:`-separated.
    #[arg(long = "lib-dir", value_name = "DIR")]
    pub lib_dirs: Vec<PathBuf>,
    /// The interpreter that makes the throwaway venv (the wheel must be built for it).
    #[arg(long = "core-python", value_name = "PYTHON", default_value = "python3")]
    pub python: PathBuf,
    /// Seconds reading one core may take (venv, install, import).
    #[arg(long = "core-timeout", value_name = "SECS", default_value_t = 120.0)]
    pub timeout: f64,
    /// Read every core afresh (the cache is target/mooncake-sos/cores/).
    #[arg(long)]
    pub no_cache: bool,
    /// Run the wheels' code (a core's import, the smoke) on this host when no isolation
    /// (Linux namespaces through `unshare`) works here.
    #[arg(long)]
    pub unisolated: bool,
    /// Load cores with only --lib-dir and LD_LIBRARY_PATH: no CUDA runtime wheel from the
    /// package index, no driver stub built (both are brought when a core needs them).
    #[arg(long)]
    pub no_runtimes: bool,
}

impl Reading {
    /// `--core-python` as the interpreter's own file (`sys.executable`), not a launcher in
    /// front of it: pyenv's shim rehashes after every `pip install` under a lock, so
    /// installs run side by side fail ("cannot rehash: couldn't acquire lock") and a killed
    /// one leaves the lock behind for every later run.
    pub fn interpreter(&self) -> PathBuf {
        interpreter(&self.python)
    }

    /// The reader, its caches under `cache` (`cores/`, `runtimes/`).
    pub fn reader(&self, cache: &Path) -> Result<Reader> {
        if !(self.timeout.is_finite() && self.timeout > 0.0) {
            return Err(BadInput(format!(
                "error: --core-timeout must be a positive number of seconds, not {}",
                self.timeout
            )));
        }
        let python = self.interpreter();
        Ok(Reader {
            python: python.clone(),
            cache_dir: (!self.no_cache).then(|| cache.join("cores")),
            lib_dirs: self
                .lib_dirs
                .iter()
                .flat_map(std::env::split_paths)
                .collect(),
            timeout: Duration::from_secs_f64(self.timeout),
            isolation: Isolation::choose(self.unisolated),
            runtimes: (!self.no_runtimes).then(|| Runtimes {
                dir: cache.join("runtimes"),
                python,
                index_url: None,
                offline: false,
                timeout: Duration::from_secs(600),
            }),
        })
    }
}

/// `python` as the interpreter's own file (`sys.executable`), resolved once per process.
pub fn interpreter(python: &Path) -> PathBuf {
    static RESOLVED: std::sync::OnceLock<PathBuf> = std::sync::OnceLock::new();
    RESOLVED
        .get_or_init(|| {
            let mut cmd = std::process::Command::new(python);
            cmd.args(["-c", "import sys; print(sys.executable)"]);
            let limits = mooncake_sos_support::bounded::Limits::within(Duration::from_secs(30));
            mooncake_sos_support::bounded::run(&mut cmd, &limits)
                .ok()
                .filter(|o| o.status.success())
                .map(|o| PathBuf::from(o.stdout_text().trim()))
                .filter(|p| p.is_file())
                .unwrap_or_else(|| python.to_path_buf())
        })
        .clone()
}

/// The package index and its wheel cache, as `watch`, `adopt` and `users --record` read them.
#[derive(clap::Args, Clone)]
pub struct IndexArgs {
    /// Only the cache: no pip, no download.
    #[arg(long)]
    pub offline: bool,
    /// The package index pip reads (a PEP 503 simple index); default: pip's configuration.
    #[arg(long, value_name = "URL")]
    pub index_url: Option<String>,
    /// Where wheels and listings are kept (default: mooncake-sos/watch in the target directory).
    #[arg(long, value_name = "DIR")]
    pub watch_cache: Option<PathBuf>,
    /// The cache's bound in MiB: least recently used wheels are removed past it.
    #[arg(long, value_name = "MIB", default_value_t = 4096)]
    pub max_cache_mib: u64,
    /// Seconds one pip run may take.
    #[arg(long, value_name = "SECS", default_value_t = 600)]
    pub pip_timeout: u64,
}

impl IndexArgs {
    /// The index, its cache (default: `watch/` under `cache`), and `python`, whose pip
    /// downloads (its tags choose the wheel).
    pub fn open(&self, python: PathBuf, cache: &Path) -> watch::index::Index {
        watch::index::Index {
            python,
            url: self.index_url.clone(),
            cache_dir: self
                .watch_cache
                .clone()
                .unwrap_or_else(|| cache.join("watch")),
            max_cache_bytes: self.max_cache_mib << 20,
            offline: self.offline,
            timeout: Duration::from_secs(self.pip_timeout),
        }
    }
}

/// `--format`, with the older `--json` (and `--markdown`) flags as its aliases.
pub fn format(json: bool, markdown: bool, format: Option<Format>) -> Format {
    match (json, markdown) {
        (true, _) => Format::Json,
        (_, true) => Format::Markdown,
        _ => format.unwrap_or(Format::Text),
    }
}
