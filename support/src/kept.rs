//! Cache entries the tool trusts only as it wrote them (verdicts, core surfaces, an
//! interpreter's tags, what an index answered). Each file holds the key it was made for (a
//! hash of every input it depends on) and the sha256 of its own body: a file whose key or body
//! does not match — edited by hand, cut short, copied from another entry — is a miss, and the
//! value is computed again. Read bounded; a FIFO or a device where an entry belongs is an
//! error, never waited on.

use crate::input::{self, ReadError};
use std::path::Path;

/// The first line of every entry; bumped when the envelope changes.
const HEADER: &str = "mooncake-sos cache entry 1";

/// Writes `body` as the entry for `key` at `path`, atomically.
pub fn write(path: &Path, key: &str, body: &[u8]) -> std::io::Result<()> {
    let mut bytes = envelope(key, body).into_bytes();
    bytes.extend_from_slice(body);
    crate::atomic::write_atomic(path, &bytes)
}

/// The body kept at `path` for `key`, when it is what [`write`] wrote for that key; `None`
/// for a miss (no entry, another key, a body that is not the one written, larger than
/// `limit`). `Err` only for a file that cannot be an entry (a FIFO, a device, a directory).
pub fn read(path: &Path, key: &str, limit: u64) -> Result<Option<Vec<u8>>, ReadError> {
    let bytes = match input::read_bytes(path, limit) {
        Ok(bytes) => bytes,
        Err(e @ ReadError::NotAFile(_)) => return Err(e),
        Err(_) => return Ok(None),
    };
    // The envelope is three lines; the body is everything after them.
    let mut at = 0;
    let mut lines = Vec::new();
    for _ in 0..3 {
        let Some(end) = bytes[at..].iter().position(|&b| b == b'\n') else {
            return Ok(None);
        };
        lines.push(&bytes[at..at + end]);
        at += end + 1;
    }
    let body = &bytes[at..];
    let head = envelope(key, body);
    let expected: Vec<&[u8]> = head.lines().map(str::as_bytes).collect();
    Ok((lines == expected).then(|| body.to_vec()))
}

/// [`read`] as UTF-8 text; a body that is not text is a miss.
pub fn read_text(path: &Path, key: &str, limit: u64) -> Result<Option<String>, ReadError> {
    Ok(read(path, key, limit)?.and_then(|b| String::from_utf8(b).ok()))
}

/// The entry's first three lines: the header, the key, the body's sha256.
fn envelope(key: &str, body: &[u8]) -> String {
    use sha2::{Digest, Sha256};
    let sha = crate::input::hex(&Sha256::digest(body));
    format!("{HEADER}\nkey {key}\nsha256 {sha}\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn an_entry_is_served_only_for_its_key_and_as_written() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("e");
        assert_eq!(read(&path, "k1", 1 << 20).unwrap(), None);
        write(&path, "k1", b"{\"verdict\": 1}\n").unwrap();
        assert_eq!(
            read(&path, "k1", 1 << 20).unwrap().as_deref(),
            Some(&b"{\"verdict\": 1}\n"[..])
        );
        // Another key, a bound it exceeds.
        assert_eq!(read(&path, "k2", 1 << 20).unwrap(), None);
        assert_eq!(read(&path, "k1", 10).unwrap(), None);
        // The body edited by hand, with or without its length changing; cut short.
        let text = std::fs::read_to_string(&path).unwrap();
        for edited in [
            text.replace("1}", "2}"),
            text.replace("1}", "12}"),
            text[..text.len() - 3].to_owned(),
            text.lines().skip(1).collect::<Vec<_>>().join("\n"),
        ] {
            std::fs::write(&path, &edited).unwrap();
            assert_eq!(read(&path, "k1", 1 << 20).unwrap(), None, "{edited}");
        }
        // A FIFO where the entry belongs: an error at once, not a wait.
        let fifo = dir.path().join("fifo");
        let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
        // SAFETY: mkfifo(3) on a NUL-terminated path.
        assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
        assert!(matches!(
            read(&fifo, "k1", 1 << 20),
            Err(ReadError::NotAFile("FIFO"))
        ));
    }
}
