//! Small value checks. Versions go through pep440_rs; the rest are hand-written on purpose:
//! each is a few lines, and a crate with full Unicode identifier tables would add far more
//! than the ASCII names here need.

use serde::Serialize;
use std::fmt;
use std::str::FromStr;

/// A repository-relative path with `/` separators that cannot leave the repository.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct RelPath(String);

impl RelPath {
    /// `None` unless every `/`-separated part is a plain file name (see [`RelPath::parse`]).
    pub fn new(path: &str) -> Option<Self> {
        Self::parse(path).ok()
    }

    /// A path whose every `/`-separated part is a plain file name: `[A-Za-z0-9._-]`, not `.`
    /// or `..`, not starting with `-`. Paths land in shell words, URLs and COPY lines, so
    /// nothing in them may quote, expand, separate or look like an option. The error says
    /// which rule the path breaks.
    pub fn parse(path: &str) -> Result<Self, String> {
        for part in path.split('/') {
            if part.is_empty() {
                return Err(
                    "an empty part (a leading, trailing or doubled `/`): give a relative path"
                        .into(),
                );
            }
            if part == "." || part == ".." {
                return Err(format!(
                    "a `{part}` part: give a relative path inside the repository, without `.` or `..`"
                ));
            }
            if part.starts_with('-') {
                return Err(format!(
                    "the part {part:?} starts with `-`, which a command would read as an option"
                ));
            }
            if let Some(c) = part
                .chars()
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-')))
            {
                return Err(format!(
                    "the character {c:?}: a path goes into shell words, URLs and COPY lines, \
                     so only A-Z a-z 0-9 . _ - and / are allowed"
                ));
            }
        }
        Ok(Self(path.to_string()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    pub fn file_name(&self) -> &str {
        self.0.rsplit('/').next().unwrap_or(&self.0)
    }
}

impl fmt::Display for RelPath {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

const PYTHON_KEYWORDS: &[&str] = &[
    "False", "None", "True", "and", "as", "assert", "async", "await", "break", "class", "continue",
    "def", "del", "elif", "else", "except", "finally", "for", "from", "global", "if", "import",
    "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise", "return", "try", "while",
    "with", "yield",
];

/// An ASCII Python identifier that is not a keyword (the manifest's names are all ASCII).
pub fn is_python_identifier(s: &str) -> bool {
    is_python_name(s) && !PYTHON_KEYWORDS.contains(&s)
}

/// An ASCII name of identifier form, a keyword too: what a module or an object can hold as
/// an attribute for `getattr` to reach (a pybind11 enum may have a value `None`).
pub fn is_python_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c == '_' || c.is_ascii_alphabetic())
        && chars.all(|c| c == '_' || c.is_ascii_alphanumeric())
}

/// A dotted Python name such as `mooncake.store` or `Class.method`.
pub fn is_dotted_name(s: &str) -> bool {
    s.split('.').all(is_python_identifier)
}

/// A release version as a wheel names it: PEP 440 (parsed by pep440_rs, the one grammar the
/// project uses), written in its normal form (`0.3.12.post1`, not `v0.3.12-1`) and without a
/// local part (`+...`, which PyPI does not take). `None` for anything else.
pub fn parse_version(s: &str) -> Option<pep440_rs::Version> {
    let version = pep440_rs::Version::from_str(s).ok()?;
    (!version.is_local() && version.to_string() == s).then_some(version)
}

pub fn is_version(s: &str) -> bool {
    parse_version(s).is_some()
}

pub fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

/// A PyPI distribution name (PEP 508 shape).
/// A distribution name in its normal form (PEP 503): lower case, each run of `-`, `_`, `.`
/// one `-`.
pub fn pep503(name: &str) -> String {
    name.to_ascii_lowercase()
        .split(['-', '_', '.'])
        .filter(|p| !p.is_empty())
        .collect::<Vec<_>>()
        .join("-")
}

pub fn is_dist_name(s: &str) -> bool {
    let b = s.as_bytes();
    !b.is_empty()
        && b[0].is_ascii_alphanumeric()
        && b[b.len() - 1].is_ascii_alphanumeric()
        && b.iter()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'-' | b'_' | b'.'))
}

/// A Docker image name (`owner/name`, lowercase) or tag (`[A-Za-z0-9_.-]`, at most 128).
pub fn is_image_name(s: &str) -> bool {
    parts_all(
        s,
        '/',
        |c| matches!(c, b'a'..=b'z' | b'0'..=b'9' | b'.' | b'_' | b'-'),
    )
}

pub fn is_image_tag(s: &str) -> bool {
    (1..=128).contains(&s.len())
        && s.as_bytes()[0] != b'.'
        && s.as_bytes()[0] != b'-'
        && s.bytes()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, b'_' | b'.' | b'-'))
}

/// Lowercase words joined by `-`: region and ARG names derive from it.
pub fn is_kebab(s: &str) -> bool {
    parts_all(s, '-', |c| c.is_ascii_lowercase() || c.is_ascii_digit())
}

/// `s` split at `sep` into parts none of which is empty, each of bytes `ok` takes.
fn parts_all(s: &str, sep: char, ok: fn(u8) -> bool) -> bool {
    s.split(sep)
        .all(|part| !part.is_empty() && part.bytes().all(ok))
}

/// `sys.stdlib_module_names` of CPython 3.11, one per line (top-level names only).
const STDLIB_MODULE_NAMES: &str = include_str!("../../data/stdlib_module_names.txt");

/// Whether `name` is a top-level module of Python's standard library.
pub fn is_stdlib_module(name: &str) -> bool {
    STDLIB_MODULE_NAMES.lines().any(|line| line == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        for ok in [
            "0.3.12.post1",
            "1",
            "1.2rc3",
            "2.0.dev4",
            "0.3.11.post1.dev2",
        ] {
            assert!(is_version(ok), "{ok}");
        }
        for bad in [
            "",
            "v1.2",
            "1..2",
            "1.2.",
            "1.2post1",
            "1.2.post",
            "1.2-3",
            "1.x",
            "1.0+local",
        ] {
            assert!(!is_version(bad), "{bad}");
        }
    }

    #[test]
    fn paths() {
        assert!(RelPath::new("docker/Dockerfile").is_some());
        for bad in [
            "",
            "/etc/passwd",
            "../x",
            "a/../b",
            "a//b",
            "./a",
            "a\\b",
            "C:x",
            "a b",
            "x\"; touch pwned; echo \".py",
            "a/$(id)",
            "-rf",
            "a\nRUN x",
            "é",
        ] {
            assert!(RelPath::new(bad).is_none(), "{bad}");
        }
    }

    #[test]
    fn identifiers() {
        assert!(is_python_identifier("_x9"));
        for bad in ["", "9x", "a-b", "class", "None", "é"] {
            assert!(!is_python_identifier(bad), "{bad}");
        }
        assert!(is_dotted_name("mooncake.store"));
        assert!(!is_dotted_name("mooncake..store"));
        assert!(is_python_name("None") && is_python_name("_x9"));
        for bad in ["", "9x", "a-b", "é", "put\x1b[31m", "a\nb", "a\u{202e}"] {
            assert!(!is_python_name(bad), "{bad:?}");
        }
    }
}
