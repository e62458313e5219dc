//! Reading the files a user names (the manifest, region targets, module sources, wheels):
//! only regular files, opened without blocking (a FIFO or a device is refused, never waited
//! on), read up to a bound whatever the file claims, and text must be UTF-8, with the first
//! bad byte located.

use crate::diag::{Diagnostic, Source};
use std::fmt;
use std::fs::File;
use std::io::{self, Read};
use std::os::unix::fs::{FileTypeExt, OpenOptionsExt};
use std::path::Path;

/// The largest text file (manifest, Dockerfile, build.py) the generator reads. The real ones
/// are under 20 KB; a manifest quoting a 10 MB value still fits, to be reported. A manifest
/// this big, full of bad symbols, takes ~20 s to validate in a debug build (linear).
pub const MAX_TEXT_BYTES: u64 = 16 << 20;

/// Why a file could not be read as input.
#[derive(Debug)]
pub enum ReadError {
    NotFound,
    /// A directory, FIFO, socket or device where a file was expected.
    NotAFile(&'static str),
    TooLarge {
        limit: u64,
    },
    /// Text with a byte sequence that is not UTF-8 at `offset`; `lossy` is the text with
    /// U+FFFD in its place, so a diagnostic can point into it.
    NotUtf8 {
        offset: usize,
        lossy: String,
    },
    Io(io::Error),
}

impl fmt::Display for ReadError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::NotFound => f.write_str("no such file"),
            Self::NotAFile(kind) => write!(f, "is a {kind}, not a regular file"),
            Self::TooLarge { limit } => write!(f, "larger than the {} MiB limit", limit >> 20),
            Self::NotUtf8 { lossy, offset } => {
                let (line, col) = line_col(lossy, *offset);
                write!(f, "not UTF-8: invalid byte at line {line}, column {col}")
            }
            Self::Io(e) => write!(f, "{e}"),
        }
    }
}

impl From<io::Error> for ReadError {
    fn from(e: io::Error) -> Self {
        if e.kind() == io::ErrorKind::NotFound {
            Self::NotFound
        } else {
            Self::Io(e)
        }
    }
}

impl ReadError {
    /// A located error about the file `name`; `what` says what the file is ("the manifest").
    /// Bad UTF-8 is located at its byte; anything else at 1:1.
    pub fn diagnostic(&self, name: &str, what: &str) -> Diagnostic {
        match self {
            Self::NotUtf8 { offset, lossy } => {
                let source = Source::new(name, lossy.as_str());
                let end = lossy[*offset..].chars().next().map_or(0, char::len_utf8);
                Diagnostic::new(
                    &source,
                    *offset..offset + end,
                    format!("{what} is not UTF-8: invalid byte sequence here"),
                )
                .with_label("not UTF-8 (shown as \u{fffd})")
            }
            other => Diagnostic::new(
                &Source::new(name, ""),
                0..0,
                format!("cannot read {what}: {other}"),
            ),
        }
    }

    /// `file:line:col` for bad UTF-8, else `file`; for errors that are not diagnostics.
    pub fn location(&self, name: &str) -> String {
        match self {
            Self::NotUtf8 { offset, lossy } => {
                let (line, col) = line_col(lossy, *offset);
                format!("{name}:{line}:{col}")
            }
            _ => name.to_owned(),
        }
    }
}

/// 1-based line and column (in characters) of a byte offset on a char boundary.
fn line_col(text: &str, offset: usize) -> (usize, usize) {
    let before = &text[..offset];
    let line_start = before.rfind('\n').map_or(0, |i| i + 1);
    (
        before.matches('\n').count() + 1,
        before[line_start..].chars().count() + 1,
    )
}

/// Opens `path` for reading if it is a regular file (after symlinks). Opened non-blocking,
/// so a FIFO with no writer or a terminal is refused at once instead of waited on.
pub fn open_regular(path: &Path) -> Result<File, ReadError> {
    let file = std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(libc::O_NONBLOCK | libc::O_NOCTTY)
        .open(path)?;
    let kind = file.metadata()?.file_type();
    let not = if kind.is_file() {
        return Ok(file);
    } else if kind.is_dir() {
        "directory"
    } else if kind.is_fifo() {
        "FIFO"
    } else if kind.is_socket() {
        "socket"
    } else if kind.is_char_device() {
        "character device"
    } else if kind.is_block_device() {
        "block device"
    } else {
        "special file"
    };
    Err(ReadError::NotAFile(not))
}

/// The bytes of a regular file of at most `limit` bytes. A file that grows while read, or
/// that says it is small and is not (`/proc`), is still cut at the limit.
pub fn read_bytes(path: &Path, limit: u64) -> Result<Vec<u8>, ReadError> {
    let file = open_regular(path)?;
    // The size is a hint only (`/proc` says 0, a file may grow): the limit still decides.
    let size = file.metadata()?.len().min(limit);
    read_into(file, limit, Vec::with_capacity(size as usize + 1))
}

/// At most `limit` bytes from `reader`, or [`ReadError::TooLarge`].
pub fn read_bounded(reader: impl Read, limit: u64) -> Result<Vec<u8>, ReadError> {
    read_into(reader, limit, Vec::new())
}

/// Read in one go into `bytes`' room when it is the file's size, not in doubling steps.
fn read_into(reader: impl Read, limit: u64, mut bytes: Vec<u8>) -> Result<Vec<u8>, ReadError> {
    reader.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(bytes)
}

/// sha256 (lowercase hex) of a regular file of at most `limit` bytes, read in blocks: a
/// wheel is hashed without being held in memory.
pub fn sha256_file(path: &Path, limit: u64) -> Result<String, ReadError> {
    use sha2::{Digest, Sha256};
    let mut reader = open_regular(path)?.take(limit + 1);
    let mut hasher = Sha256::new();
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0u64;
    loop {
        let n = reader.read(&mut buf)?;
        if n == 0 {
            break;
        }
        total += n as u64;
        hasher.update(&buf[..n]);
    }
    if total > limit {
        return Err(ReadError::TooLarge { limit });
    }
    Ok(hex(&hasher.finalize()))
}

/// A regular file of at most `limit` bytes, as UTF-8 text.
pub fn read_text(path: &Path, limit: u64) -> Result<String, ReadError> {
    decode(read_bytes(path, limit)?)
}

/// `bytes` as UTF-8, or where the first bad byte is.
pub fn decode(bytes: Vec<u8>) -> Result<String, ReadError> {
    String::from_utf8(bytes).map_err(|e| {
        let offset = e.utf8_error().valid_up_to();
        ReadError::NotUtf8 {
            offset,
            lossy: String::from_utf8_lossy(e.as_bytes()).into_owned(),
        }
    })
}

/// Lower-case hex of a digest.
pub fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_utf8_is_located_at_its_byte() {
        let cases: [(&[u8], (usize, usize)); 4] = [
            (b"\xff", (1, 1)),
            (b"ab\ncd\xc3", (2, 3)),
            (b"\xc3\xa9\nx\xc3\xa9\xf0\x9f\x98\x80\x80", (2, 4)),
            (b"a\r\nb\xed\xa0\x80", (2, 2)), // a UTF-16 surrogate
        ];
        for (bytes, (line, col)) in cases {
            let e = decode(bytes.to_vec()).unwrap_err();
            assert_eq!(e.location("f"), format!("f:{line}:{col}"), "{bytes:?}");
            let d = e.diagnostic("f", "the file");
            assert_eq!(d.location(), format!("f:{line}:{col}"), "{bytes:?}");
        }
    }

    #[test]
    fn special_files_are_refused_without_blocking() {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        for (path, kind) in [
            (fifo.as_path(), "FIFO"),
            (dir.path(), "directory"),
            (Path::new("/dev/zero"), "character device"),
        ] {
            match read_bytes(path, 10) {
                Err(ReadError::NotAFile(k)) => assert_eq!(k, kind, "{path:?}"),
                other => panic!("{path:?}: {other:?}"),
            }
        }
        let big = dir.path().join("big");
        std::fs::write(&big, [b'a'; 11]).unwrap();
        assert!(matches!(
            read_bytes(&big, 10),
            Err(ReadError::TooLarge { limit: 10 })
        ));
        assert_eq!(read_bytes(&big, 11).unwrap().len(), 11);
        assert!(matches!(
            sha256_file(&big, 10),
            Err(ReadError::TooLarge { limit: 10 })
        ));
        assert_eq!(
            sha256_file(&big, 11).unwrap(),
            hex(&<sha2::Sha256 as sha2::Digest>::digest([b'a'; 11]))
        );
        assert!(matches!(
            sha256_file(&fifo, 10),
            Err(ReadError::NotAFile("FIFO"))
        ));
    }
}
