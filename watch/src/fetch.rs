//! `--fetch`: the module at a commit from `<raw_base_url>/<repo>/<commit>/<path>`, checked
//! against its sha256 and cached. Offline unless asked.

use mooncake_sos_manifest::model::Upstream;
use mooncake_sos_pysource::source::{LoadError, MAX_MODULE_BYTES, ModuleSource, sha256_hex};
use mooncake_sos_support::input::{self, ReadError};
use std::path::{Path, PathBuf};
use std::process::Command;
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

    fn cached_path(&self, upstream: &Upstream, commit: &str) -> PathBuf {
        self.cache_dir.join(commit).join(upstream.file_name())
    }

    /// The module at `commit` from the cache, when it is there with the sha256 `want`. A
    /// FIFO or a device where it belongs is an error, never waited on.
    pub fn cached(
        &self,
        upstream: &Upstream,
        commit: &str,
        want: &str,
    ) -> Result<Option<ModuleSource>, LoadError> {
        let cached = self.cached_path(upstream, commit);
        let display = cached.display().to_string();
        match input::read_bytes(&cached, MAX_MODULE_BYTES) {
            Ok(bytes) if sha256_hex(&bytes) == want => {
                ModuleSource::from_bytes(display, bytes).map(Some)
            }
            Err(e @ ReadError::NotAFile(_)) => Err(LoadError::new(
                &display,
                format!("cannot read the cached module: {e}"),
            )),
            _ => Ok(None),
        }
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
        let cached = self.cached_path(upstream, commit);
        if let Some(want) = sha256
            && let Some(module) = self.cached(upstream, commit, want)?
        {
            return Ok(module);
        }
        let bytes = get(&url, Limits::default())
            .map_err(|e| LoadError::new(&url, e))?
            .body;
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

/// Bounds on one download: the module is a few hundred KB.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    pub max_bytes: usize,
    pub timeout: Duration,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_bytes: 16 << 20,
            timeout: Duration::from_secs(120),
        }
    }
}

/// GET through python3's urllib: python3 is already a dependency of the tool (`verify
/// --python`, the images), and urllib gives http and https (chunked bodies, TLS) with no HTTP
/// or TLS crate linked in. Redirects are followed only within the URL's own scheme, host and
/// port ([`crate::redirect::ORIGIN_PY`]); the URL finally read is printed after the body's end,
/// on stderr.
const URLLIB_GET: &str = r#"
import json, sys, urllib.error, urllib.parse, urllib.request
url, limit, timeout = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
class Guard(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        if origin(newurl) != origin(url):
            sys.stderr.write("\n@refused " + json.dumps([req.full_url, code, msg, newurl]) + "\n")
            sys.exit(4)
        return super().redirect_request(req, fp, code, msg, headers, newurl)
request = urllib.request.Request(url, headers={"User-Agent": "mooncake-sos-xtask", "Accept-Encoding": "identity"})
try:
    with urllib.request.build_opener(Guard).open(request, timeout=timeout) as response:
        body = response.read(limit + 1)
        final = response.geturl()
except urllib.error.HTTPError as e:
    version = getattr(e.fp, "version", 11)
    sys.stderr.write(f"server answered `HTTP/{version // 10}.{version % 10} {e.code} {e.reason}`")
    sys.exit(3)
except (urllib.error.URLError, OSError, ValueError) as e:
    sys.stderr.write(f"cannot download: {getattr(e, 'reason', e)}")
    sys.exit(3)
if len(body) > limit:
    sys.stderr.write(f"the response is larger than {limit} bytes")
    sys.exit(3)
sys.stdout.buffer.write(body)
sys.stderr.write("\n@final " + final + "\n")
"#;

/// A 200 response's body, and the URL it came from (after redirects within the origin).
#[derive(Debug)]
pub struct Response {
    pub body: Vec<u8>,
    pub url: String,
}

/// The body of a 200 response to GET `url`, within `limits`.
pub fn get(url: &str, limits: Limits) -> Result<Response, String> {
    if !(url.starts_with("http://") || url.starts_with("https://")) {
        return Err("the URL must start with http:// or https://".into());
    }
    let mut cmd = Command::new("python3");
    cmd.args([
        "-c",
        &format!("{}{URLLIB_GET}", crate::redirect::ORIGIN_PY),
        url,
    ])
    .arg(limits.max_bytes.to_string())
    .arg(limits.timeout.as_secs_f64().to_string());
    // urllib's timeout is per socket operation; this bounds the whole download.
    let bound = mooncake_sos_support::bounded::Limits {
        max_capture: limits.max_bytes + 1,
        ..mooncake_sos_support::bounded::Limits::within(limits.timeout + Duration::from_secs(5))
    };
    let done = mooncake_sos_support::bounded::run(&mut cmd, &bound).map_err(|e| match e {
        mooncake_sos_support::bounded::Error::Spawn(e) => {
            format!("downloads run python3's urllib: cannot run python3: {e}")
        }
        mooncake_sos_support::bounded::Error::TimedOut(_) => {
            format!("no complete response within {} s", limits.timeout.as_secs())
        }
        mooncake_sos_support::bounded::Error::Wait(e) => e.to_string(),
    })?;
    let (status, body) = (done.status, done.stdout);
    let message = String::from_utf8_lossy(&done.stderr).into_owned();
    let marked = |mark: &str| {
        message
            .lines()
            .rev()
            .find_map(|l| l.strip_prefix(mark))
            .map(str::to_owned)
    };
    if let Some(refused) = marked("@refused ") {
        return Err(crate::redirect::refused_redirect(&refused));
    }
    if !status.success() {
        return Err(if message.is_empty() {
            format!("python3 failed ({status})")
        } else {
            message
        });
    }
    if body.len() > limits.max_bytes {
        return Err(format!(
            "the response is larger than {} bytes",
            limits.max_bytes
        ));
    }
    let url = marked("@final ").unwrap_or_else(|| url.to_owned());
    Ok(Response { body, url })
}

#[cfg(test)]
mod tests {
    use super::{Limits, get};
    use std::io::{BufRead, BufReader, Write};
    use std::net::TcpListener;
    use std::time::{Duration, Instant};

    /// A one-connection server on 127.0.0.1 answering `response`, or never (`None`).
    fn serve_once(response: Option<Vec<u8>>) -> String {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let url = format!("http://{}/m.py", listener.local_addr().unwrap());
        std::thread::spawn(move || {
            let (stream, _) = listener.accept().unwrap();
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut line = String::new();
            while reader.read_line(&mut line).is_ok_and(|n| n > 2) {
                line.clear();
            }
            match response {
                Some(r) => {
                    let _ = (&stream).write_all(&r);
                }
                None => std::thread::sleep(Duration::from_secs(30)),
            }
        });
        url
    }

    fn ok(body: &[u8]) -> Vec<u8> {
        let mut r =
            format!("HTTP/1.1 200 OK\r\nContent-Length: {}\r\n\r\n", body.len()).into_bytes();
        r.extend_from_slice(body);
        r
    }

    #[test]
    fn reads_length_and_chunked_bodies_and_names_the_status() {
        let limits = Limits::default();
        assert_eq!(
            get(&serve_once(Some(ok(b"hello"))), limits).unwrap().body,
            b"hello"
        );
        let chunked = b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nhel\r\n2\r\nlo\r\n0\r\n\r\n";
        assert_eq!(
            get(&serve_once(Some(chunked.to_vec())), limits)
                .unwrap()
                .body,
            b"hello"
        );
        let missing = b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n".to_vec();
        assert_eq!(
            get(&serve_once(Some(missing)), limits).unwrap_err(),
            "server answered `HTTP/1.1 404 Not Found`"
        );
        assert!(get("ftp://x/y", limits).unwrap_err().contains("http://"));
    }

    #[test]
    fn a_body_over_the_size_bound_is_refused() {
        let limits = Limits {
            max_bytes: 1024,
            ..Limits::default()
        };
        let err = get(&serve_once(Some(ok(&[b'x'; 2048]))), limits).unwrap_err();
        assert_eq!(err, "the response is larger than 1024 bytes");
    }

    #[test]
    fn a_server_that_never_answers_is_given_up_on_in_time() {
        let limits = Limits {
            timeout: Duration::from_secs(1),
            ..Limits::default()
        };
        let start = Instant::now();
        let err = get(&serve_once(None), limits).unwrap_err();
        assert!(start.elapsed() < Duration::from_secs(10), "{err}");
        assert!(err.contains("timed out"), "{err}");
    }
}
