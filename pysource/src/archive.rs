//! A wheel (a zip archive) read within bounds whatever its headers claim, and listed as pip
//! installs it. The one reader of wheels: the upstream module, a native core's wheel, a user's
//! wheel, a runtime's.
//!
//! - Only a regular file of at most [`MAX_WHEEL_BYTES`] is opened.
//! - Its member list is read once, within [`MAX_DIRECTORY_BYTES`]; each name is taken as the
//!   path pip writes it to (`./a`, `a//b`, `a\b`, `a/../a/b` are `a`, `a/b`, `a/b`, `a/b`),
//!   and a path named twice, or one outside the wheel, is refused: which copy pip installs
//!   depends on the order, and another reader might see the other one.
//! - What the members declare they inflate to is at most [`MAX_INFLATED_BYTES`] together (what
//!   pip writes when it installs the wheel; pip's zipfile stops at the declared size).
//! - A member is inflated only up to what its header declares and the caller's cap (a header
//!   that lies is caught when the bytes run past it), and one reading inflates at most
//!   [`MAX_READ_BYTES`] in all.

use crate::load_error::LoadError;
use mooncake_sos_support::input;
use sha2::{Digest, Sha256};
use std::cell::Cell;
use std::collections::BTreeMap;
use std::fs::File;
use std::io::{self, BufReader, Read, Seek, SeekFrom, Write};
use std::path::Path;
use std::rc::Rc;

/// The largest wheel opened: the real ones are under 60 MB.
pub const MAX_WHEEL_BYTES: u64 = 1 << 30;
/// What the zip reader may read to list a wheel's members (its central directory: 4-18 KB in
/// the mooncake wheels, 95 KB in numpy's; ~80 bytes an entry): ~200,000 entries.
pub const MAX_DIRECTORY_BYTES: u64 = 16 << 20;
/// What a wheel's members may declare together (the real ones: 100-165 MiB).
pub const MAX_INFLATED_BYTES: u64 = 1 << 30;
/// What one reading of a wheel inflates in all (a user's wheel: sglang's 2,859 modules are
/// 40 MiB).
pub const MAX_READ_BYTES: u64 = 256 << 20;

/// One member: its path as pip installs it, where it is in the archive, what it declares.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Member {
    pub name: String,
    index: usize,
    /// The inflated size its header declares.
    pub size: u64,
}

/// An open wheel and its members, listed once.
pub struct Archive {
    display: String,
    archive: zip::ZipArchive<Budget>,
    /// What the zip reader may still read of the file.
    left: Rc<Cell<u64>>,
    members: Vec<Member>,
    by_name: BTreeMap<String, usize>,
    /// What this reading may still inflate.
    inflate_left: u64,
}

impl Archive {
    /// Opens `path` (named `display` in errors) and lists its members.
    pub fn open(path: &Path) -> Result<Archive, LoadError> {
        let display = path.display().to_string();
        let fail = |m: String| LoadError::new(&display, m);
        let file =
            input::open_regular(path).map_err(|e| LoadError::read(&display, "the wheel", &e))?;
        let size = file
            .metadata()
            .map_err(|e| fail(format!("cannot read the wheel: {e}")))?
            .len();
        if size > MAX_WHEEL_BYTES {
            return Err(fail(format!(
                "larger than the {} a wheel may be",
                mib(MAX_WHEEL_BYTES)
            )));
        }
        let left = Rc::new(Cell::new(MAX_DIRECTORY_BYTES));
        let reader = Budget {
            file: BufReader::new(file),
            left: left.clone(),
        };
        let archive = zip::ZipArchive::new(reader)
            .map_err(|e| fail(format!("not a wheel (zip archive): {e}")))?;
        if archive.has_duplicate_names() {
            return Err(fail(
                "the wheel lists a member name more than once: a damaged or forged archive".into(),
            ));
        }
        let mut members = Vec::new();
        let mut by_name: BTreeMap<String, usize> = BTreeMap::new();
        let mut raw_names: Vec<String> = Vec::new();
        let mut total: u64 = 0;
        for index in 0..archive.len() {
            let entry = archive
                .by_index_data(index)
                .map_err(|e| fail(format!("not a wheel (zip archive): {e}")))?;
            let raw = entry
                .name()
                .map_err(|e| fail(format!("not a wheel (zip archive): {e}")))?
                .into_owned();
            let name = installed_path(&raw).map_err(|why| fail(format!("member {raw:?} {why}")))?;
            total = total.saturating_add(entry.size());
            if entry.is_dir() || name.is_empty() {
                continue;
            }
            if let Some(&first) = by_name.get(&name) {
                return Err(fail(format!(
                    "the wheel names {name} twice ({:?} and {raw:?}): which one is installed \
                     depends on their order; a damaged or forged archive",
                    raw_names[first]
                )));
            }
            by_name.insert(name.clone(), members.len());
            raw_names.push(raw);
            members.push(Member {
                name,
                index,
                size: entry.size(),
            });
        }
        if total > MAX_INFLATED_BYTES {
            return Err(fail(format!(
                "its members inflate to {} together, past the {} a wheel may",
                mib(total),
                mib(MAX_INFLATED_BYTES)
            )));
        }
        Ok(Archive {
            display,
            archive,
            left,
            members,
            by_name,
            inflate_left: MAX_READ_BYTES,
        })
    }

    /// How errors name the wheel: its path as given.
    pub fn display(&self) -> &str {
        &self.display
    }

    /// Every member (no directories), in archive order, each path once.
    pub fn members(&self) -> &[Member] {
        &self.members
    }

    /// The member at `name` (a path as pip installs it).
    pub fn member(&self, name: &str) -> Option<&Member> {
        self.by_name.get(name).map(|&i| &self.members[i])
    }

    /// The member `name`'s bytes: at most `cap` (`what` it is names it in the refusal:
    /// "a module").
    pub fn read(&mut self, name: &str, cap: u64, what: &str) -> Result<Vec<u8>, LoadError> {
        let mut bytes = Vec::new();
        self.copy(name, cap, what, &mut bytes)?;
        Ok(bytes)
    }

    /// sha256 (lowercase hex) of the member `name`'s bytes, at most `cap`, without holding
    /// them.
    pub fn sha256(&mut self, name: &str, cap: u64, what: &str) -> Result<String, LoadError> {
        let mut hasher = Hashing(Sha256::new());
        self.copy(name, cap, what, &mut hasher)?;
        Ok(mooncake_sos_support::input::hex(&hasher.0.finalize()))
    }

    /// Inflates the member `name` into `out`, within `cap`, what its header declares, and
    /// what this reading may still inflate.
    pub fn copy(
        &mut self,
        name: &str,
        cap: u64,
        what: &str,
        out: &mut impl Write,
    ) -> Result<u64, LoadError> {
        let member = self
            .member(name)
            .cloned()
            .ok_or_else(|| LoadError::new(&self.display, format!("the wheel has no {name}")))?;
        let fail = |m: String| LoadError::new(&self.display, m);
        if member.size > cap {
            return Err(fail(format!(
                "{name} inflates past {} ({} declared): not {what} this tool reads",
                mib(cap),
                mib(member.size)
            )));
        }
        if member.size > self.inflate_left {
            return Err(fail(format!(
                "reading {name} would inflate the wheel past the {} this tool reads of one",
                mib(MAX_READ_BYTES)
            )));
        }
        self.inflate_left -= member.size;
        // Its compressed bytes, with room for the local header: deflate never needs much
        // more than the bytes it stands for.
        self.left.set(member.size + member.size / 64 + (256 << 10));
        let entry = self
            .archive
            .by_index(member.index)
            .map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
        let mut bounded = entry.take(member.size + 1);
        let copied =
            io::copy(&mut bounded, out).map_err(|e| fail(format!("cannot unpack {name}: {e}")))?;
        if copied > member.size {
            return Err(fail(format!(
                "{name} inflates past the {} bytes its header declares: a damaged or forged \
                 archive",
                member.size
            )));
        }
        Ok(copied)
    }
}

/// Where pip writes a member named `raw`, relative to the install root: `\` as `/`, empty and
/// `.` parts dropped, `..` applied. `Err` for a path outside the root.
pub fn installed_path(raw: &str) -> Result<String, &'static str> {
    if raw.starts_with(['/', '\\']) {
        return Err("is an absolute path");
    }
    let mut parts: Vec<&str> = Vec::new();
    for part in raw.split(['/', '\\']) {
        match part {
            "" | "." => {}
            ".." => {
                parts.pop().ok_or("leads outside the wheel")?;
            }
            p => parts.push(p),
        }
    }
    Ok(parts.join("/"))
}

/// `8 MiB`, or bytes when under one.
pub fn mib(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{} MiB", bytes >> 20)
    } else {
        format!("{bytes} bytes")
    }
}

/// A hasher as a [`Write`].
struct Hashing(Sha256);

impl Write for Hashing {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.0.update(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// A file that refuses to be read past a budget: the zip reader reads what headers tell it
/// to, and a header can claim anything.
struct Budget {
    file: BufReader<File>,
    left: Rc<Cell<u64>>,
}

impl Read for Budget {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.left.get();
        if left == 0 && !buf.is_empty() {
            return Err(io::Error::other(
                "the archive's headers ask for more than a wheel's directory and members need",
            ));
        }
        let want = buf.len().min(usize::try_from(left).unwrap_or(usize::MAX));
        let n = self.file.read(&mut buf[..want])?;
        self.left.set(left - n as u64);
        Ok(n)
    }
}

impl Seek for Budget {
    fn seek(&mut self, pos: SeekFrom) -> io::Result<u64> {
        self.file.seek(pos)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_members_path_is_where_pip_writes_it() {
        for (raw, path) in [
            ("mooncake/a.py", "mooncake/a.py"),
            ("./mooncake/a.py", "mooncake/a.py"),
            ("mooncake//a.py", "mooncake/a.py"),
            ("mooncake\\a.py", "mooncake/a.py"),
            ("mooncake/../mooncake/a.py", "mooncake/a.py"),
            ("mooncake/./x/../a.py", "mooncake/a.py"),
            ("Mooncake/A.py", "Mooncake/A.py"),
            ("mooncake/", "mooncake"),
        ] {
            assert_eq!(installed_path(raw).as_deref(), Ok(path), "{raw}");
        }
        for raw in ["../a.py", "a/../../b", "/etc/x", "\\x"] {
            assert!(installed_path(raw).is_err(), "{raw}");
        }
    }
}
