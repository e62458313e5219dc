//! The package index, and the wheel cache. A package's releases are read from its index
//! page as pip would list them ([`listing`]); pip downloads one release's wheel for this interpreter (`pip
//! download --no-deps --only-binary=:all:`); the wheel is kept by its sha256 under
//! `<cache>/blobs/`, and what each index answered is kept under `<cache>/index/<key>/`, so
//! `--offline` repeats the last online run without pip. A download that finished is kept
//! (an interrupted run resumes at the first release not in the cache), every wheel is
//! bounded in size, and the cache as a whole too (least recently used wheels go first).

use super::{links, listing, redirect};
use mooncake_sos_pysource::archive::MAX_WHEEL_BYTES;
use mooncake_sos_pysource::source::{LoadError, sha256_hex};
use mooncake_sos_pysource::version::Release;
use mooncake_sos_support::bounded::step::bounded;
use mooncake_sos_support::{input, kept};
use serde::{Deserialize, Serialize};
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Where releases come from and where their wheels are kept.
#[derive(Clone, Debug)]
pub struct Index {
    /// The interpreter whose pip runs (wheels are chosen for it).
    pub python: PathBuf,
    /// `--index-url` for pip; `None`: pip's own configuration (PyPI by default).
    pub url: Option<String>,
    pub cache_dir: PathBuf,
    /// The cache's bound: after a run, least recently used wheels are removed past it.
    pub max_cache_bytes: u64,
    /// Only the cache: no pip.
    pub offline: bool,
    /// Bound on one pip run.
    pub timeout: Duration,
}

/// One release's wheel, in the cache.
#[derive(Clone, Debug, Serialize, Deserialize)]
pub struct Wheel {
    pub package: String,
    pub version: String,
    /// The wheel's file name as the index serves it.
    pub file: String,
    pub sha256: String,
    pub size: u64,
    /// Where it was downloaded from, as the `--index-url` page links it (`None`: pip's own
    /// index, or a cache entry older than this field).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Where it is kept (not part of any output: machine-specific).
    #[serde(skip)]
    pub path: PathBuf,
    /// Whether this run downloaded it.
    #[serde(skip)]
    pub downloaded: bool,
}

/// Bumped when what the cache keeps of an index's answers changes.
const FORMAT: &str = "watch-index-2";
/// The largest answer kept (an index page; real ones are under 100 KB).
const MAX_ANSWER_BYTES: u64 = 16 << 20;

#[derive(Serialize, Deserialize)]
struct Versions {
    versions: Vec<String>,
}

impl Index {
    /// The cache's subdirectory for this index (by its URL): two indexes may serve different
    /// files under one name.
    fn index_dir(&self) -> PathBuf {
        let url = self.url.as_deref().unwrap_or("pip's configured index");
        let key = sha256_hex(url.as_bytes());
        self.cache_dir.join("index").join(&key[..16])
    }

    /// The releases of `package` the index lists for this interpreter, in version order.
    pub fn versions(&self, package: &str) -> Result<Vec<String>, LoadError> {
        let record = self.index_dir().join(format!("{package}.versions.json"));
        let key = self.answer_key(&["versions", package]);
        if self.offline {
            let text = self.kept_answer(&record, &key)?.ok_or_else(|| {
                LoadError::new(
                    package,
                    "--offline: the cache has no listing of this package; run watch online once",
                )
            })?;
            let v: Versions = serde_json::from_str(&text).map_err(|e| {
                LoadError::new(record.display().to_string(), format!("not a listing: {e}"))
            })?;
            return Ok(v.versions);
        }
        let python = listing::Interpreter::of(&self.python, &self.cache_dir, self.timeout)?;
        let url = format!("{}/{package}/", self.listing_url().trim_end_matches('/'));
        let limits = crate::fetch::Limits {
            max_bytes: 16 << 20,
            timeout: self.timeout,
        };
        let page = crate::fetch::get(&url, limits)
            .map_err(|e| LoadError::new(package, format!("listing its releases: {url}: {e}")))?;
        let versions = listing::versions(&String::from_utf8_lossy(&page.body), package, &python);
        if versions.is_empty() {
            return Err(LoadError::new(
                package,
                format!("listing its releases: {url} lists none this interpreter can install"),
            ));
        }
        let json = serde_json::to_string_pretty(&Versions {
            versions: versions.clone(),
        })
        .unwrap_or_default();
        store(&record, &key, json.as_bytes(), package)?;
        Ok(versions)
    }

    /// The index listings are read from: `--index-url`, else pip's `PIP_INDEX_URL`, else PyPI
    /// (pip's default; an index set only in a pip configuration file is not read).
    fn listing_url(&self) -> String {
        self.url
            .clone()
            .or_else(|| {
                std::env::var("PIP_INDEX_URL")
                    .ok()
                    .filter(|u| !u.is_empty())
            })
            .unwrap_or_else(|| "https://pypi.org/simple/".to_owned())
    }

    /// The wheel of `package==version`: from the cache, else downloaded into it.
    pub fn wheel(&self, package: &str, version: &str) -> Result<Wheel, LoadError> {
        let label = format!("{package} {version}");
        let record = self
            .index_dir()
            .join(package)
            .join(format!("{version}.json"));
        let key = self.answer_key(&["wheel", package, version]);
        if let Some(mut wheel) = self.cached(&record, &key)? {
            touch(&wheel.path);
            wheel.downloaded = false;
            return Ok(wheel);
        }
        if self.offline {
            return Err(LoadError::new(
                &label,
                "--offline: this release's wheel is not in the cache; run once without --offline",
            ));
        }
        let listed = links::vetted_page(self.url.as_deref(), package, &label, self.timeout)?;
        let page_url = self
            .url
            .as_deref()
            .map(|base| links::page_url(base, package));
        if let (Some(listed), Some(url)) = (&listed, &page_url)
            && !links::lists_wheel(&listed.page, package, version)
        {
            return Err(LoadError::new(
                &label,
                format!("the index lists no wheel of this release ({url})"),
            ));
        }
        // pip keeps what it finished in its --dest and skips it next time: an interrupted
        // run resumes here.
        let partial = self
            .cache_dir
            .join("partial")
            .join(format!("{package}-{version}"));
        std::fs::create_dir_all(&partial)
            .map_err(|e| LoadError::new(partial.display().to_string(), e.to_string()))?;
        let args = [
            "download".into(),
            "--no-deps".into(),
            "--only-binary=:all:".into(),
            "--dest".into(),
            partial.clone().into_os_string(),
            format!("{package}=={version}").into(),
        ];
        let redirects = self.pip(&args, &label, "downloading its wheel")?;
        let mut wheel = self.settle(&partial, package, version)?;
        // What pip fetched is the file the checked page lists (when it gives a hash).
        if let Some(want) = listed
            .as_ref()
            .and_then(|l| links::listed_sha256(&l.page, &wheel.file))
            && want != wheel.sha256
        {
            let _ = std::fs::remove_dir_all(wheel.path.parent().unwrap_or(&wheel.path));
            return Err(LoadError::new(
                &label,
                format!(
                    "{} has sha256 {}, the index page lists {want}",
                    wheel.file, wheel.sha256
                ),
            ));
        }
        // Where the file was read: its link, after the redirects pip followed.
        wheel.url = listed
            .as_ref()
            .and_then(|l| links::file_url(&l.page, &l.url, &wheel.file))
            .map(|url| redirect::redirected(&url, &redirects));
        let json = serde_json::to_string_pretty(&wheel).unwrap_or_default();
        store(&record, &key, json.as_bytes(), &label)?;
        Ok(Wheel {
            downloaded: true,
            ..wheel
        })
    }

    /// Every wheel file of `package==version` the index's page lists, with the sha256 the
    /// page gives it (PEP 503 `#sha256=` fragments), in name order: what a pin installs
    /// hash-checked, whichever file pip picks. The page is kept for `--offline`.
    pub fn release_files(
        &self,
        package: &str,
        version: &str,
    ) -> Result<Vec<(String, String)>, LoadError> {
        let record = self.index_dir().join(format!("{package}.page.html"));
        let key = self.answer_key(&["page", package]);
        let base = self.url.as_deref().unwrap_or("https://pypi.org/simple/");
        let url = format!("{}/{package}/", base.trim_end_matches('/'));
        let page = if self.offline {
            self.kept_answer(&record, &key)?.ok_or_else(|| {
                LoadError::new(
                    package,
                    "--offline: the cache has no index page of this package; run adopt online once",
                )
            })?
        } else {
            let limits = crate::fetch::Limits {
                max_bytes: 16 << 20,
                timeout: self.timeout,
            };
            let bytes = crate::fetch::get(&url, limits)
                .map_err(|e| LoadError::new(&url, e))?
                .body;
            store(&record, &key, &bytes, package)?;
            String::from_utf8_lossy(&bytes).into_owned()
        };
        let mut files: Vec<(String, String)> = page
            .split("href=\"")
            .skip(1)
            .filter_map(|rest| {
                let href = &rest[..rest.find('"')?];
                let (path, fragment) = href.split_once('#')?;
                let sha256 = fragment.strip_prefix("sha256=")?;
                let file = path.rsplit('/').next()?.to_owned();
                (mooncake_sos_manifest::model::layers::is_wheel_of(&file, package, version)
                    && mooncake_sos_manifest::model::values::is_hex(sha256, 64))
                .then(|| (file, sha256.to_owned()))
            })
            .collect();
        files.sort();
        files.dedup();
        Ok(files)
    }

    /// Removes least recently used wheels (not in `keep`) until the cache is within bound,
    /// and what a killed run left in `partial/` over an hour ago.
    pub fn trim(&self, keep: &[&Wheel]) -> Vec<String> {
        let mut removed = self.sweep_partial(std::time::Duration::from_secs(3600));
        removed.extend(self.trim_blobs(keep));
        removed
    }

    /// `partial/` entries not modified for `age`: an interrupted download resumes from its
    /// entry only while it is fresh.
    fn sweep_partial(&self, age: std::time::Duration) -> Vec<String> {
        let Ok(entries) = std::fs::read_dir(self.cache_dir.join("partial")) else {
            return Vec::new();
        };
        entries
            .filter_map(|e| e.ok())
            .filter(|e| {
                let modified = e.metadata().and_then(|m| m.modified());
                modified.is_ok_and(|t| t.elapsed().is_ok_and(|a| a >= age))
            })
            .filter(|e| std::fs::remove_dir_all(e.path()).is_ok())
            .map(|e| e.path().display().to_string())
            .collect()
    }

    fn trim_blobs(&self, keep: &[&Wheel]) -> Vec<String> {
        let blobs = self.cache_dir.join("blobs");
        let Ok(entries) = std::fs::read_dir(&blobs) else {
            return Vec::new();
        };
        // Each blob is a directory holding one wheel.
        let mut files: Vec<(std::time::SystemTime, u64, PathBuf)> = entries
            .filter_map(|e| e.ok())
            .filter_map(|e| std::fs::read_dir(e.path()).ok()?.next()?.ok())
            .filter_map(|e| {
                let m = e.metadata().ok()?;
                Some((m.modified().ok()?, m.len(), e.path()))
            })
            .collect();
        let mut total: u64 = files.iter().map(|f| f.1).sum();
        files.sort();
        let mut removed = Vec::new();
        for (_, size, path) in files {
            if total <= self.max_cache_bytes {
                break;
            }
            if keep.iter().any(|w| w.path == path) {
                continue;
            }
            if let Some(dir) = path.parent()
                && std::fs::remove_dir_all(dir).is_ok()
            {
                total -= size;
                removed.push(path.display().to_string());
            }
        }
        removed
    }

    /// The cached wheel its record names, when the blob's bytes still have the record's
    /// sha256: trusted only by its hash, taken again on every use (a file altered in place
    /// keeps its size, mtime and inode, not its hash); a damaged or replaced one is
    /// downloaded again.
    fn cached(&self, record: &Path, key: &str) -> Result<Option<Wheel>, LoadError> {
        let Some(text) = self.kept_answer(record, key)? else {
            return Ok(None);
        };
        let Ok(mut wheel) = serde_json::from_str::<Wheel>(&text) else {
            return Ok(None);
        };
        wheel.path = self.blob(&wheel.sha256, &wheel.file);
        match hash_file(&wheel.path) {
            Ok(sha256) => Ok((sha256 == wheel.sha256).then_some(wheel)),
            Err(e @ input::ReadError::NotAFile(_)) => {
                let display = wheel.path.display().to_string();
                Err(LoadError::new(
                    &display,
                    format!("cannot read the cached wheel: {e}"),
                ))
            }
            Err(_) => Ok(None),
        }
    }

    /// The key of what the index answered for `what` (`["wheel", package, version]`): the
    /// index's URL and the question.
    fn answer_key(&self, what: &[&str]) -> String {
        let url = self.url.as_deref().unwrap_or("pip's configured index");
        sha256_hex(format!("{FORMAT}\0{url}\0{}", what.join("\0")).as_bytes())
    }

    /// An answer this tool kept at `path` for `key`, as it wrote it.
    fn kept_answer(&self, path: &Path, key: &str) -> Result<Option<String>, LoadError> {
        kept::read_text(path, key, MAX_ANSWER_BYTES).map_err(|e| {
            let display = path.display().to_string();
            LoadError::new(e.location(&display), format!("cannot read the cache: {e}"))
        })
    }

    /// `blobs/<sha256>/<file name>`: keyed by hash, under the name pip needs to install it.
    fn blob(&self, sha256: &str, file: &str) -> PathBuf {
        self.cache_dir.join("blobs").join(sha256).join(file)
    }

    /// What a finished `pip download` left in `partial`: moved into the cache, or refused
    /// (too large, no wheel); either way `partial` is gone, so nothing outlives the run
    /// outside the cache's bound.
    fn settle(&self, partial: &Path, package: &str, version: &str) -> Result<Wheel, LoadError> {
        let label = format!("{package} {version}");
        let kept = only_wheel(partial, package, version)
            .ok_or_else(|| LoadError::new(&label, "pip download left no wheel of this release"))
            .and_then(|file| self.keep(package, version, &partial.join(&file), &file));
        let _ = std::fs::remove_dir_all(partial);
        kept
    }

    /// Moves a downloaded wheel into the cache under its hash.
    fn keep(
        &self,
        package: &str,
        version: &str,
        path: &Path,
        file: &str,
    ) -> Result<Wheel, LoadError> {
        let label = format!("{package} {version}");
        let size = std::fs::metadata(path)
            .map_err(|e| LoadError::new(&label, e.to_string()))?
            .len();
        if size > MAX_WHEEL_BYTES {
            return Err(LoadError::new(
                &label,
                format!(
                    "{file} is larger than the {} MiB a wheel may be",
                    MAX_WHEEL_BYTES >> 20
                ),
            ));
        }
        let sha256 = hash_file(path).map_err(|e| LoadError::new(&label, e.to_string()))?;
        if Path::new(file).file_name() != Some(std::ffi::OsStr::new(file)) {
            return Err(LoadError::new(
                &label,
                format!("{file:?} is not a plain file name"),
            ));
        }
        let blob = self.blob(&sha256, file);
        if let Some(dir) = blob.parent() {
            std::fs::create_dir_all(dir).map_err(|e| LoadError::new(&label, e.to_string()))?;
        }
        std::fs::rename(path, &blob)
            .map_err(|e| LoadError::new(&label, format!("cannot cache {file}: {e}")))?;
        Ok(Wheel {
            package: package.to_owned(),
            version: version.to_owned(),
            file: file.to_owned(),
            sha256,
            size,
            url: None,
            path: blob,
            downloaded: true,
        })
    }

    /// Runs `pip ARGS` against the index, bounded in time, its temporary files in a scratch
    /// directory (gone with it on every path; a killed run's swept at the next start). With
    /// `--index-url`, pip follows redirects only within the index's scheme, host and port;
    /// returns the redirects it followed (`[from, status, reason, to]` lines).
    fn pip(&self, args: &[OsString], label: &str, doing: &str) -> Result<String, LoadError> {
        let work = mooncake_sos_support::bounded::scratch("pip").map_err(|e| {
            LoadError::new(label, format!("cannot make a temporary directory: {e}"))
        })?;
        let log = work.path().join("redirects.jsonl");
        let mut cmd = Command::new(&self.python);
        match &self.url {
            Some(url) => {
                let guard = format!("{}{}", redirect::ORIGIN_PY, redirect::PIP_GUARD_PY);
                cmd.arg("-c").arg(guard).arg(url).arg(&log);
            }
            None => {
                cmd.args(["-m", "pip"]);
            }
        }
        cmd.args(["--disable-pip-version-check", "--no-input"])
            .args(args)
            .env("TMPDIR", work.path())
            // Only the index answers: a find-links directory would add releases it lacks.
            .env_remove("PIP_FIND_LINKS")
            .env_remove("PIP_NO_INDEX");
        if let Some(url) = &self.url {
            cmd.args(["--index-url", url]);
            cmd.env_remove("PIP_EXTRA_INDEX_URL");
        }
        let done = bounded(cmd, Instant::now() + self.timeout).map_err(|e| {
            LoadError::new(label, format!("pip, {doing}: {}", e.describe(self.timeout)))
        })?;
        let redirects = input::read_text(&log, MAX_ANSWER_BYTES).unwrap_or_default();
        if done.status.code() == Some(redirect::REDIRECT_REFUSED)
            && let Some(last) = redirects.lines().last()
        {
            let first = serde_json::from_str::<(String, u16, String, String)>(last).map_or_else(
                |_| label.to_owned(),
                |r| redirect::redirected_from(&r.0, &redirects),
            );
            return Err(LoadError::new(first, redirect::refused_redirect(last)));
        }
        if !done.status.success() {
            if links::pip_found_no_release(&done.stderr) {
                let index = self.url.as_deref().unwrap_or("pip's configured index");
                return Err(LoadError::new(
                    label,
                    format!("the index lists no wheel of this release ({index})"),
                ));
            }
            let why = links::pip_hash_mismatch(&done.stderr)
                .unwrap_or_else(|| format!("pip, {doing}, {}", done.failure(3)));
            return Err(LoadError::new(label, why));
        }
        Ok(redirects)
    }
}

/// The one wheel of `package==version` in `dir`.
fn only_wheel(dir: &Path, package: &str, version: &str) -> Option<String> {
    let want = Release {
        package: package.to_owned(),
        version: version.to_owned(),
    };
    std::fs::read_dir(dir)
        .ok()?
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .find(|name| {
            Release::from_wheel(Path::new(name)).is_some_and(|r| {
                r.package.eq_ignore_ascii_case(&want.package) && r.version == want.version
            })
        })
}

/// sha256 of a wheel file, read in blocks, within the wheel bound.
fn hash_file(path: &Path) -> Result<String, input::ReadError> {
    input::sha256_file(path, MAX_WHEEL_BYTES)
}

/// Marks a cached wheel as just used (the trim removes the least recently used first).
fn touch(path: &Path) {
    if let Ok(f) = std::fs::File::options().append(true).open(path) {
        let _ = f.set_modified(std::time::SystemTime::now());
    }
}

fn store(path: &Path, key: &str, bytes: &[u8], label: &str) -> Result<(), LoadError> {
    kept::write(path, key, bytes).map_err(|e| {
        LoadError::new(
            label,
            format!("cannot write the cache ({}): {e}", path.display()),
        )
    })
}

#[cfg(test)]
#[path = "index_tests.rs"]
mod tests;
