//! A package's releases read from its index page (PEP 503), as `pip index versions` lists
//! them, without pip: the versions of files this interpreter can install (a wheel with one of
//! its tags, or a source archive), whose `data-requires-python` it meets, not yanked, not
//! pre-releases. The interpreter's tags and version are asked of its pip once and kept.

use mooncake_sos_pysource::source::{LoadError, sha256_hex};
use mooncake_sos_pysource::version::{Release, compare};
use mooncake_sos_support::kept;
use pep440_rs::{Version, VersionSpecifiers};
use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::str::FromStr;
use std::time::Duration;

/// What pip installs on this interpreter: its version and its supported wheel tags.
pub struct Interpreter {
    pub version: Version,
    pub tags: BTreeSet<String>,
}

/// The largest tags answer read (pip lists ~1,000 tags, 40 KB).
const MAX_TAGS_BYTES: u64 = 4 << 20;

const TAGS_PY: &str = "import platform\nfrom pip._internal.utils.compatibility_tags import get_supported\nprint(platform.python_version())\nfor t in get_supported():\n    print(t)\n";

impl Interpreter {
    /// Asked of `python`'s pip, kept in `cache_dir` by the interpreter's path, size and mtime
    /// (served only as written: [`kept`]).
    pub fn of(
        python: &Path,
        cache_dir: &Path,
        timeout: Duration,
    ) -> Result<Interpreter, LoadError> {
        let label = python.display().to_string();
        let key = sha256_hex(format!("{TAGS_PY}\0{}", identity(python)).as_bytes());
        let record = cache_dir.join(format!("tags-{}.txt", &key[..16]));
        let kept = kept::read_text(&record, &key, MAX_TAGS_BYTES).map_err(|e| {
            let display = record.display().to_string();
            LoadError::new(
                e.location(&display),
                format!("cannot read the kept tags: {e}"),
            )
        })?;
        let text = match kept {
            Some(text) => text,
            None => {
                let mut cmd = std::process::Command::new(python);
                cmd.args(["-c", TAGS_PY]);
                let done = mooncake_sos_support::bounded::step::bounded(
                    cmd,
                    std::time::Instant::now() + timeout,
                )
                .map_err(|e| {
                    let why = e.describe(timeout);
                    LoadError::new(&label, format!("reading its wheel tags: {why}"))
                })?;
                if !done.status.success() {
                    let why = done.failure(3);
                    return Err(LoadError::new(
                        &label,
                        format!("reading its wheel tags through pip {why}"),
                    ));
                }
                let _ = kept::write(&record, &key, done.stdout.as_bytes());
                done.stdout
            }
        };
        let mut lines = text.lines();
        let version = lines
            .next()
            .and_then(|v| Version::from_str(v.trim()).ok())
            .ok_or_else(|| LoadError::new(&label, "no Python version in its tags' answer"))?;
        Ok(Interpreter {
            version,
            tags: lines.map(|l| l.trim().to_owned()).collect(),
        })
    }

    /// The release a file of `package` on the index is, if this interpreter would take it.
    fn takes(&self, package: &str, file: &str, anchor: &Anchor) -> Option<String> {
        if anchor.yanked {
            return None;
        }
        if let Some(spec) = &anchor.requires_python
            && let Ok(spec) = VersionSpecifiers::from_str(spec)
            && !spec.contains(&self.version)
        {
            return None;
        }
        let version = if let Some(stem) = file.strip_suffix(".whl") {
            let parts: Vec<&str> = stem.split('-').collect();
            if !(5..=6).contains(&parts.len()) || !same_name(parts[0], package) {
                return None;
            }
            let n = parts.len();
            let tagged = parts[n - 3].split('.').any(|py| {
                parts[n - 2].split('.').any(|abi| {
                    parts[n - 1]
                        .split('.')
                        .any(|plat| self.tags.contains(&format!("{py}-{abi}-{plat}")))
                })
            });
            tagged.then(|| parts[1].to_owned())?
        } else {
            let stem = [".tar.gz", ".zip"]
                .iter()
                .find_map(|ext| file.strip_suffix(ext))?;
            let (name, version) = stem.rsplit_once('-')?;
            same_name(name, package).then(|| version.to_owned())?
        };
        let version = Version::from_str(&version).ok()?;
        (!version.any_prerelease()).then(|| version.to_string())
    }
}

/// The releases the page lists for this interpreter, oldest first.
pub fn versions(page: &str, package: &str, python: &Interpreter) -> Vec<String> {
    let found: BTreeSet<String> = anchors(page)
        .iter()
        .filter_map(|a| {
            let path = a.href.split('#').next()?;
            let file = path.rsplit('/').next()?;
            python.takes(package, file, a)
        })
        .collect();
    let mut releases: Vec<Release> = found
        .into_iter()
        .map(|version| Release {
            package: String::new(),
            version,
        })
        .collect();
    releases.sort_by(compare);
    releases.into_iter().map(|r| r.version).collect()
}

/// PEP 503 name comparison: runs of `-`, `_`, `.` are one `-`, case-insensitive.
fn same_name(a: &str, b: &str) -> bool {
    use mooncake_sos_manifest::model::values::pep503;
    pep503(a) == pep503(b)
}

struct Anchor {
    href: String,
    yanked: bool,
    requires_python: Option<String>,
}

/// Every `<a ...>` on the page with the attributes pip reads.
fn anchors(page: &str) -> Vec<Anchor> {
    let lower = page.to_ascii_lowercase();
    let mut out = Vec::new();
    let mut at = 0;
    while let Some(i) = lower[at..].find("<a") {
        let start = at + i;
        let end = lower[start..].find('>').map_or(page.len(), |e| start + e);
        at = end;
        let tag = &page[start..end];
        if !tag[2..].starts_with(|c: char| c.is_ascii_whitespace()) {
            continue;
        }
        let Some(href) = super::links::hrefs(tag).into_iter().next() else {
            continue;
        };
        out.push(Anchor {
            href: unescape(href),
            yanked: attribute(tag, "data-yanked").is_some(),
            requires_python: attribute(tag, "data-requires-python").map(|v| unescape(&v)),
        });
    }
    out
}

/// An attribute's value (empty when it has none) in one tag.
fn attribute(tag: &str, name: &str) -> Option<String> {
    let lower = tag.to_ascii_lowercase();
    let mut at = 0;
    while let Some(i) = lower[at..].find(name) {
        let start = at + i;
        at = start + name.len();
        let before = lower[..start].chars().last();
        if !before.is_some_and(|c| c.is_ascii_whitespace()) {
            continue;
        }
        let rest = tag[at..].trim_start();
        let Some(value) = rest.strip_prefix('=') else {
            let next = rest.chars().next();
            if next.is_none_or(|c| c.is_ascii_whitespace() || c == '/' || c == '>') {
                return Some(String::new());
            }
            continue;
        };
        let value = value.trim_start();
        return Some(match value.as_bytes().first() {
            Some(&q @ (b'"' | b'\'')) => {
                let body = &value[1..];
                body[..body.find(q as char).unwrap_or(body.len())].to_owned()
            }
            _ => value
                .split(|c: char| c.is_ascii_whitespace())
                .next()
                .unwrap_or("")
                .to_owned(),
        });
    }
    None
}

fn unescape(s: &str) -> String {
    s.replace("&lt;", "<")
        .replace("&gt;", ">")
        .replace("&quot;", "\"")
        .replace("&#39;", "'")
        .replace("&#x27;", "'")
        .replace("&amp;", "&")
}

/// The interpreter as the key of its kept tags: its path, and the file it resolves to.
fn identity(python: &Path) -> String {
    let resolved: Option<PathBuf> = if python.components().count() > 1 {
        Some(python.to_path_buf())
    } else {
        std::env::var_os("PATH").and_then(|paths| {
            std::env::split_paths(&paths)
                .map(|d| d.join(python))
                .find(|p| p.is_file())
        })
    };
    let meta = resolved
        .as_ref()
        .and_then(|p| std::fs::canonicalize(p).ok())
        .and_then(|p| Some((std::fs::metadata(&p).ok()?, p)));
    match meta {
        Some((m, p)) => format!(
            "{} {} {} {:?}",
            python.display(),
            p.display(),
            m.len(),
            m.modified().ok()
        ),
        None => format!("{} unresolved", python.display()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cp311() -> Interpreter {
        Interpreter {
            version: Version::from_str("3.11.7").unwrap(),
            tags: ["cp311-cp311-manylinux_2_17_x86_64", "py3-none-any"]
                .iter()
                .map(|t| t.to_string())
                .collect(),
        }
    }

    #[test]
    fn pip_s_choice_of_releases_is_read_from_the_page() {
        let page = r#"<html><body>
<a href="../../files/p_kg-0.1-cp311-cp311-manylinux_2_17_x86_64.manylinux2014_x86_64.whl#sha256=00">a</a>
<a href="/f/p_kg-0.2-cp310-cp310-manylinux_2_17_x86_64.whl">cp310 only</a>
<a href="/f/p_kg-0.3-py3-none-any.whl" data-yanked="">yanked</a>
<a href="/f/p_kg-0.4-py3-none-any.whl" data-requires-python="&gt;=3.12">needs 3.12</a>
<a href="/f/p_kg-0.5rc1-py3-none-any.whl">pre-release</a>
<a href="/f/p-kg-0.6.tar.gz" data-requires-python="&gt;=3.8">sdist</a>
<A HREF='/f/p_kg-0.10.post1-1-py3-none-any.whl'>build tag</A>
<a href="/f/other-0.7-py3-none-any.whl">another package</a>
</body></html>"#;
        assert_eq!(
            versions(page, "p-kg", &cp311()),
            ["0.1", "0.6", "0.10.post1"]
        );
    }
}
