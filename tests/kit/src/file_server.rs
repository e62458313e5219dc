//! A minimal HTTP/1.1 file server on loopback: the download source of the overlay layer and
//! of `--fetch`.

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader, Write};
use std::net::{TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

/// A file server on 127.0.0.1 (an ephemeral port) answering GET for the given paths (404 for
/// any other), or `302 Found` for the paths it redirects; it logs every requested path;
/// stopped on drop.
pub struct FileServer {
    pub base_url: String,
    requests: Arc<Mutex<Vec<String>>>,
    stop: Arc<AtomicBool>,
    port: u16,
    thread: Option<JoinHandle<()>>,
}

impl FileServer {
    pub fn start(files: impl IntoIterator<Item = (String, Vec<u8>)>) -> FileServer {
        Self::redirecting(files, [])
    }

    /// Also answers each path of `redirects` with `302 Found` to its location.
    pub fn redirecting(
        files: impl IntoIterator<Item = (String, Vec<u8>)>,
        redirects: impl IntoIterator<Item = (String, String)>,
    ) -> FileServer {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind a loopback port");
        let port = listener.local_addr().expect("local addr").port();
        let (requests, stop) = (
            Arc::new(Mutex::new(Vec::new())),
            Arc::new(AtomicBool::new(false)),
        );
        let (log, flag) = (requests.clone(), stop.clone());
        let files: BTreeMap<String, Vec<u8>> = files.into_iter().collect();
        let redirects: BTreeMap<String, String> = redirects.into_iter().collect();
        let thread = std::thread::spawn(move || {
            for conn in listener.incoming() {
                if flag.load(Ordering::SeqCst) {
                    break;
                }
                if let Ok(conn) = conn {
                    serve(conn, &files, &redirects, &log);
                }
            }
        });
        FileServer {
            base_url: format!("http://127.0.0.1:{port}"),
            requests,
            stop,
            port,
            thread: Some(thread),
        }
    }

    /// The paths requested so far, in order.
    pub fn requests(&self) -> Vec<String> {
        self.requests.lock().expect("request log").clone()
    }
}

fn serve(
    mut conn: TcpStream,
    files: &BTreeMap<String, Vec<u8>>,
    redirects: &BTreeMap<String, String>,
    log: &Mutex<Vec<String>>,
) {
    let _ = conn.set_read_timeout(Some(Duration::from_secs(10)));
    let mut reader = BufReader::new(conn.try_clone().expect("clone stream"));
    let mut first = String::new();
    if reader.read_line(&mut first).is_err() {
        return;
    }
    // The rest of the request head; a GET has no body.
    let mut line = String::new();
    while reader.read_line(&mut line).is_ok_and(|n| n > 0) && line != "\r\n" {
        line.clear();
    }
    let path = first.split_whitespace().nth(1).unwrap_or("").to_owned();
    log.lock().expect("request log").push(path.clone());
    if let Some(to) = redirects.get(&path) {
        let head = format!(
            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        );
        let _ = conn.write_all(head.as_bytes());
        return;
    }
    let (status, body) = match files.get(&path) {
        Some(b) => ("200 OK", b.as_slice()),
        None => ("404 Not Found", b"not found\n".as_slice()),
    };
    // A path ending in `/` is a page (a PEP 503 index's): pip reads only text/html there.
    let kind = if path.ends_with('/') {
        "Content-Type: text/html\r\n"
    } else {
        ""
    };
    let head = format!(
        "HTTP/1.1 {status}\r\n{kind}Content-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    );
    let _ = conn
        .write_all(head.as_bytes())
        .and_then(|_| conn.write_all(body));
}

impl Drop for FileServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        // Wake the accept loop so it sees the flag.
        let _ = TcpStream::connect(("127.0.0.1", self.port));
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}
