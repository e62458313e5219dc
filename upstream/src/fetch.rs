//! `--fetch`: the module at a commit from `<raw_base_url>/<repo>/<commit>/<path>`, checked
//! against its sha256 and cached. Offline unless asked.
//!
//! `http://` is a tiny HTTP/1.1 GET over std::net: one request, one response, no redirects,
//! which is all a raw-file server or a local mirror needs; an HTTP crate would bring an async
//! runtime or a TLS stack for that. `https://` (the real raw.githubusercontent.com) runs the
//! system `curl` instead of linking a TLS implementation.

use crate::source::{LoadError, ModuleSource, sha256_hex};
use mooncake_sos_codegen::model::Upstream;
use std::io::{Read, Write};
use std::net::{TcpStream, ToSocketAddrs};
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Where to download from and where to keep the files.
#[derive(Clone, Debug)]
pub struct Fetch {
    pub base_url: String,
    pub cache_dir: PathBuf,
}

impl Fetch {
    pub fn url(&self, upstream: &Upstream, commit: &str) -> String {
        format!(
            "{}/{}/{}/{}",
            self.base_url.trim_end_matches('/'),
            upstream.repo,
            commit,
            upstream.path
        )
    }

    /// The module at `commit`; when `sha256` is given the file must have it (a cached copy
    /// is used only then: without a known hash there is nothing to trust it by).
    pub fn module(
        &self,
        upstream: &Upstream,
        commit: &str,
        sha256: Option<&str>,
    ) -> Result<ModuleSource, LoadError> {
        let url = self.url(upstream, commit);
        let cached = self.cache_dir.join(commit).join(upstream.file_name());
        if let Some(want) = sha256
            && let Ok(bytes) = std::fs::read(&cached)
            && sha256_hex(&bytes) == want
        {
            return ModuleSource::from_bytes(cached.display().to_string(), bytes);
        }
        let bytes = get(&url).map_err(|e| LoadError::new(&url, e))?;
        let found = sha256_hex(&bytes);
        if let Some(want) = sha256
            && found != want
        {
            return Err(LoadError::new(
                &url,
                format!("sha256 is {found}, expected {want} (the pin in api.toml)"),
            ));
        }
        store(&cached, &bytes).map_err(|e| {
            LoadError::new(cached.display().to_string(), format!("cannot cache: {e}"))
        })?;
        ModuleSource::from_bytes(cached.display().to_string(), bytes)
    }
}

/// Writes through a temporary file, so a reader never sees half a module.
fn store(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    let dir = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(dir)?;
    let tmp = dir.join(format!(".{}.part", std::process::id()));
    std::fs::write(&tmp, bytes)?;
    std::fs::rename(&tmp, path)
}

/// The body of a 200 response to GET `url`.
pub fn get(url: &str) -> Result<Vec<u8>, String> {
    if url.starts_with("https://") {
        return curl(url);
    }
    let rest = url
        .strip_prefix("http://")
        .ok_or("the URL must start with http:// or https://")?;
    let (authority, path) = rest.split_at(rest.find('/').unwrap_or(rest.len()));
    let path = if path.is_empty() { "/" } else { path };
    let host_port = if authority.contains(':') {
        authority.to_owned()
    } else {
        format!("{authority}:80")
    };
    let addr = host_port
        .to_socket_addrs()
        .map_err(|e| format!("cannot resolve {authority}: {e}"))?
        .next()
        .ok_or_else(|| format!("no address for {authority}"))?;
    let mut stream = TcpStream::connect_timeout(&addr, Duration::from_secs(10))
        .map_err(|e| format!("cannot connect to {authority}: {e}"))?;
    stream
        .set_read_timeout(Some(Duration::from_secs(60)))
        .map_err(|e| e.to_string())?;
    let request = format!(
        "GET {path} HTTP/1.1\r\nHost: {authority}\r\nUser-Agent: mooncake-sos-xtask\r\n\
         Accept-Encoding: identity\r\nConnection: close\r\n\r\n"
    );
    stream
        .write_all(request.as_bytes())
        .map_err(|e| format!("cannot send the request: {e}"))?;
    let mut response = Vec::new();
    stream
        .read_to_end(&mut response)
        .map_err(|e| format!("cannot read the response: {e}"))?;
    parse_response(&response)
}

fn parse_response(response: &[u8]) -> Result<Vec<u8>, String> {
    let split = response
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or("malformed HTTP response (no end of headers)")?;
    let head = String::from_utf8_lossy(&response[..split]);
    let body = &response[split + 4..];
    let mut lines = head.split("\r\n");
    let status = lines.next().unwrap_or_default();
    let code = status.split(' ').nth(1).unwrap_or_default();
    if code != "200" {
        return Err(format!("server answered `{status}`"));
    }
    let header = |name: &str| {
        head.split("\r\n").skip(1).find_map(|l| {
            let (k, v) = l.split_once(':')?;
            k.trim()
                .eq_ignore_ascii_case(name)
                .then(|| v.trim().to_owned())
        })
    };
    if header("transfer-encoding").is_some_and(|v| v.eq_ignore_ascii_case("chunked")) {
        return dechunk(body);
    }
    match header("content-length").map(|v| v.parse::<usize>()) {
        Some(Ok(n)) if body.len() >= n => Ok(body[..n].to_vec()),
        Some(Ok(n)) => Err(format!("response cut short: {} of {n} bytes", body.len())),
        Some(Err(_)) => Err("malformed Content-Length".into()),
        None => Ok(body.to_vec()),
    }
}

fn dechunk(mut body: &[u8]) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    loop {
        let eol = body
            .windows(2)
            .position(|w| w == b"\r\n")
            .ok_or("malformed chunked body")?;
        let size_text = String::from_utf8_lossy(&body[..eol]);
        let size_text = size_text.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16).map_err(|_| "malformed chunk size")?;
        body = &body[eol + 2..];
        if size == 0 {
            return Ok(out);
        }
        let chunk = body.get(..size).ok_or("chunked body cut short")?;
        out.extend_from_slice(chunk);
        body = body.get(size + 2..).ok_or("chunked body cut short")?;
    }
}

fn curl(url: &str) -> Result<Vec<u8>, String> {
    let out = std::process::Command::new("curl")
        .args(["-fsSL", "--max-time", "120", url])
        .output()
        .map_err(|e| format!("https needs `curl` on PATH ({e}); or use an http:// mirror"))?;
    if !out.status.success() {
        return Err(format!(
            "curl failed ({}): {}",
            out.status,
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(out.stdout)
}

#[cfg(test)]
mod tests {
    use super::parse_response;

    #[test]
    fn reads_length_and_chunked_bodies() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello";
        assert_eq!(parse_response(plain).unwrap(), b"hello");
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), b"hello");
        let missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n";
        assert_eq!(
            parse_response(missing).unwrap_err(),
            "server answered `HTTP/1.1 404 Not Found`"
        );
        let short = b"HTTP/1.1 200 OK\r\nContent-Length: 9\r\n\r\nhello";
        assert!(parse_response(short).unwrap_err().contains("cut short"));
    }
}
