//! Is the master still there? Asked before every call of a transfer over a distributed store,
//! because on a dead master the native client takes seconds per call to give up (and a get then
//! fails as a JSON decode error).
//!
//! The answer must be cheap on the healthy path: a TCP connect per call cost ~90-165 µs against
//! the real master. So one connection to the master's RPC port is kept open and watched: while
//! the master runs it stays open and quiet (the master keeps idle connections); when the
//! master's process ends, its kernel closes the connection, which a non-blocking peek sees at
//! once, for about a microsecond per call. Only then, or after a failed call, is a fresh
//! connect made: it fails fast on a dead master and re-arms the watch on a restarted one.
//! TCP keep-alive covers a master whose host vanishes without closing anything.

use std::io::ErrorKind;
use std::net::{SocketAddr, TcpStream, ToSocketAddrs};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// Watches one master (see the module docs).
#[derive(Debug)]
pub struct Liveness {
    addr: String,
    timeout: Duration,
    /// The watched connection; `None` after it closed, until the next connect. The lock is
    /// only ever held for a peek or a swap, never across a connect or a Python call.
    watch: Mutex<Option<TcpStream>>,
}

impl Liveness {
    /// Connects to the master at `addr` (within `timeout`) and starts watching it.
    pub fn connect(addr: &str, timeout: Duration) -> Result<Liveness> {
        let liveness = Liveness {
            addr: addr.to_owned(),
            timeout,
            watch: Mutex::new(None),
        };
        liveness.reconnect()?;
        Ok(liveness)
    }

    /// `Ok` while the master is up, else an error naming `call`.
    pub fn check(&self, call: &dyn std::fmt::Display) -> Result<()> {
        if self.watching() {
            return Ok(());
        }
        self.reconnect().map_err(|e| named(call, e))
    }

    /// True while the watched connection is open and quiet: one non-blocking peek. A closed
    /// connection (EOF), an error, or bytes the master never sends end the watch.
    pub fn watching(&self) -> bool {
        let mut watch = self.watch.lock().unwrap_or_else(PoisonError::into_inner);
        let open = watch.as_ref().is_some_and(|stream| {
            matches!(stream.peek(&mut [0u8; 1]), Err(e) if e.kind() == ErrorKind::WouldBlock)
        });
        if !open {
            *watch = None;
        }
        open
    }

    /// A fresh connect: `Ok` (and watching again) if the master accepts it.
    pub fn reconnect(&self) -> Result<()> {
        let stream = connect("master", &self.addr, self.timeout)?;
        stream
            .set_nonblocking(true)
            .map_err(|e| Error::Connect(format!("master at {}: {e}", self.addr)))?;
        keep_alive(&stream);
        *self.watch.lock().unwrap_or_else(PoisonError::into_inner) = Some(stream);
        Ok(())
    }

    /// Stops watching, e.g. when the store is closed.
    pub fn stop(&self) {
        *self.watch.lock().unwrap_or_else(PoisonError::into_inner) = None;
    }

    /// After `call` failed with `error`: if the master is gone, say so (keeping the call's own
    /// error), so a call in flight when the master died does not read as a decode error.
    pub fn explain(&self, call: &dyn std::fmt::Display, error: Error) -> Error {
        match self.check(call) {
            Ok(()) => error,
            Err(Error::Connect(gone)) => {
                Error::Connect(format!("{gone}; the call failed with: {error}"))
            }
            Err(other) => other,
        }
    }
}

fn named(call: &dyn std::fmt::Display, error: Error) -> Error {
    match error {
        Error::Connect(why) => Error::Connect(format!("{call}: {why}")),
        other => other,
    }
}

/// Probes after 1 s of silence, every 1 s, 3 times: a master whose host is gone without a word
/// ends the watch within ~4 s. Best effort: without it only a closed connection ends the watch.
fn keep_alive(stream: &TcpStream) {
    use std::os::fd::AsRawFd;
    let fd = stream.as_raw_fd();
    let set = |level: libc::c_int, name: libc::c_int, value: libc::c_int| {
        // SAFETY: fd is an open socket owned by `stream`; the option value is a live c_int
        // and its size is passed with it.
        unsafe {
            libc::setsockopt(
                fd,
                level,
                name,
                (&value as *const libc::c_int).cast(),
                std::mem::size_of::<libc::c_int>() as libc::socklen_t,
            )
        }
    };
    set(libc::SOL_SOCKET, libc::SO_KEEPALIVE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPIDLE, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPINTVL, 1);
    set(libc::IPPROTO_TCP, libc::TCP_KEEPCNT, 3);
}

/// Connects to `addr` within `timeout`, or says why not (`what` names the server).
pub fn connect(what: &str, addr: &str, timeout: Duration) -> Result<TcpStream> {
    let started = Instant::now();
    let addrs: Vec<SocketAddr> = addr
        .to_socket_addrs()
        .map_err(|e| Error::Connect(format!("{what} address {addr:?} does not resolve: {e}")))?
        .collect();
    let mut last = String::from("no address");
    for sa in &addrs {
        let left = timeout
            .saturating_sub(started.elapsed())
            .max(Duration::from_millis(1));
        match TcpStream::connect_timeout(sa, left) {
            Ok(stream) => return Ok(stream),
            Err(e) => last = e.to_string(),
        }
    }
    Err(Error::Connect(format!(
        "{what} at {addr} is not reachable ({last}, after {:.1?}); is mooncake_master running?",
        started.elapsed()
    )))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::net::TcpListener;

    fn listener(port: u16) -> TcpListener {
        let l = TcpListener::bind(("127.0.0.1", port)).expect("bind");
        l.set_nonblocking(true).expect("nonblocking");
        l
    }

    /// How long a test waits for the kernel to deliver what it asserts on (a connection to
    /// the accept queue, a close to the peer): generous, for a loaded machine; each wait ends
    /// as soon as it holds.
    const PATIENCE: Duration = Duration::from_secs(30);

    /// Waits until `done` holds, polling; fails naming `what` after [`PATIENCE`].
    fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let until = Instant::now() + PATIENCE;
        while !done() {
            assert!(Instant::now() < until, "{what} after {PATIENCE:?}");
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Accepts `n` connections (kept open in `kept`): connect returns a moment before the
    /// listener can accept.
    fn accept(l: &TcpListener, n: usize, kept: &mut Vec<TcpStream>) {
        let want = kept.len() + n;
        wait_until(&format!("not {n} connection(s)"), || {
            if let Ok((s, _)) = l.accept() {
                kept.push(s);
            }
            kept.len() == want
        });
    }

    /// Connects to `l` from the test itself and accepts up to that connection: how many
    /// connections something else made before it (the accept queue is in order of
    /// connection).
    fn others_before_a_probe(l: &TcpListener, kept: &mut Vec<TcpStream>) -> usize {
        let probe = TcpStream::connect(l.local_addr().expect("addr")).expect("probe");
        let peer = probe.local_addr().expect("probe addr");
        let mut others = 0;
        wait_until("no probe connection", || match l.accept() {
            Ok((s, from)) => {
                kept.push(s);
                others += usize::from(from != peer);
                from == peer
            }
            Err(_) => false,
        });
        others
    }

    #[test]
    fn a_healthy_master_costs_no_connection_per_call() {
        let l = listener(0);
        let addr = l.local_addr().expect("addr").to_string();
        let liveness = Liveness::connect(&addr, Duration::from_secs(2)).expect("connect");
        let mut kept = Vec::new();
        accept(&l, 1, &mut kept);
        for _ in 0..1000 {
            liveness.check(&"put").expect("alive");
        }
        assert_eq!(
            others_before_a_probe(&l, &mut kept),
            0,
            "a check connected again"
        );
    }

    #[test]
    fn a_master_that_went_away_fails_the_next_call_and_a_restart_is_seen() {
        let l = listener(0);
        let port = l.local_addr().expect("addr").port();
        let addr = format!("127.0.0.1:{port}");
        // A connect timeout far above the bound below: a refused connect must not wait it out.
        let liveness = Liveness::connect(&addr, PATIENCE).expect("connect");
        let mut kept = Vec::new();
        accept(&l, 1, &mut kept);
        // The master's process ends: its sockets close, and the watch sees it.
        drop((l, kept));
        wait_until("the watch still open", || !liveness.watching());
        let started = Instant::now();
        let err = liveness
            .check(&"MooncakeBundleTransfer.put")
            .expect_err("gone");
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{:?}",
            started.elapsed()
        );
        let text = err.to_string();
        assert!(
            text.contains(&format!(
                "MooncakeBundleTransfer.put: master at {addr} is not reachable"
            )),
            "{text}"
        );
        // A failed call is explained by the dead master, keeping its own error.
        let explained = liveness.explain(&"get", Error::Value("JSONDecodeError".into()));
        assert!(
            explained
                .to_string()
                .contains("the call failed with: value conversion: JSONDecodeError"),
            "{explained}"
        );
        // Restarted on the same port: the next check connects and watches again.
        let l = listener(port);
        liveness.check(&"put").expect("restarted");
        let mut kept = Vec::new();
        accept(&l, 1, &mut kept);
        assert!(liveness.watching());
        // A live master leaves a failed call's error alone.
        let own = liveness.explain(&"get", Error::Value("bad".into()));
        assert_eq!(own.to_string(), "value conversion: bad");
    }

    #[test]
    fn a_closed_port_fails_fast_and_names_the_address() {
        let port = listener(0).local_addr().expect("addr").port();
        let started = Instant::now();
        let err =
            connect("master", &format!("127.0.0.1:{port}"), PATIENCE).expect_err("nothing listens");
        // Refused, not timed out.
        assert!(started.elapsed() < Duration::from_secs(10));
        assert!(
            err.to_string()
                .contains(&format!("127.0.0.1:{port} is not reachable")),
            "{err}"
        );
        // An address that is no address (no port): said, with no name lookup.
        let err = connect("master", "127.0.0.1", PATIENCE).expect_err("no port");
        assert!(
            err.to_string()
                .starts_with("store connection: master address \"127.0.0.1\" does not resolve: "),
            "{err}"
        );
    }
}
