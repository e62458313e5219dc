//! The files created, moved in and removed in one directory, as inotify(7) reports them: the
//! kill tests wait for a write's journal to appear and aim their kills from that moment, not
//! from a guess of when the write starts.

use std::collections::VecDeque;
use std::ffi::CString;
use std::io::Read;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;
use std::process::Child;
use std::time::{Duration, Instant};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// Created, or renamed into the directory.
    Appeared,
    Removed,
}

pub struct DirEvents {
    file: std::fs::File,
    pending: VecDeque<(Event, String)>,
}

impl DirEvents {
    /// Starts watching `dir` (events from now on).
    pub fn watch(dir: &Path) -> DirEvents {
        // SAFETY: plain syscalls; the descriptor is owned by the File from here on.
        let fd = unsafe { libc::inotify_init1(libc::IN_CLOEXEC) };
        assert!(
            fd >= 0,
            "inotify_init1: {}",
            std::io::Error::last_os_error()
        );
        let fd = unsafe { OwnedFd::from_raw_fd(fd) };
        let name = CString::new(dir.as_os_str().as_bytes()).expect("a path without NUL");
        let mask = libc::IN_CREATE | libc::IN_MOVED_TO | libc::IN_DELETE;
        let wd = unsafe { libc::inotify_add_watch(fd.as_raw_fd(), name.as_ptr(), mask) };
        assert!(
            wd >= 0,
            "inotify_add_watch {}: {}",
            dir.display(),
            std::io::Error::last_os_error()
        );
        DirEvents {
            file: fd.into(),
            pending: VecDeque::new(),
        }
    }

    /// The next event whose file name satisfies `wanted`, waiting while `child` runs (and
    /// for what it did before it exited), at most until `deadline`; `None` when none came.
    pub fn wait_for(
        &mut self,
        child: &mut Child,
        deadline: Instant,
        wanted: impl Fn(Event, &str) -> bool,
    ) -> Option<(Event, String)> {
        loop {
            while let Some((event, name)) = self.pending.pop_front() {
                if wanted(event, &name) {
                    return Some((event, name));
                }
            }
            let exited = child.try_wait().expect("try_wait").is_some();
            let left = deadline.saturating_duration_since(Instant::now());
            // While it runs, look at it again every 20 ms; once it has exited, only take
            // the events already queued.
            let within = if exited {
                Duration::ZERO
            } else {
                left.min(Duration::from_millis(20))
            };
            if self.readable(within) {
                self.read_events();
            } else if exited || left.is_zero() {
                return None;
            }
        }
    }

    fn readable(&self, within: Duration) -> bool {
        let mut fds = libc::pollfd {
            fd: self.file.as_raw_fd(),
            events: libc::POLLIN,
            revents: 0,
        };
        let ms = within.as_millis().min(i32::MAX as u128) as i32;
        // SAFETY: one pollfd, owned here.
        let n = unsafe { libc::poll(&mut fds, 1, ms) };
        n > 0
    }

    /// Reads what is there (at least one event: the descriptor was readable).
    fn read_events(&mut self) {
        let mut buf = [0u8; 8192];
        let n = self.file.read(&mut buf).expect("read inotify events");
        let header = std::mem::size_of::<libc::inotify_event>();
        let mut at = 0;
        while at + header <= n {
            // inotify_event: wd i32, mask u32, cookie u32, len u32, then len bytes of name.
            let field = |i: usize| u32::from_ne_bytes(buf[at + i..at + i + 4].try_into().unwrap());
            let (mask, len) = (field(4), field(12) as usize);
            let name = &buf[at + header..at + header + len];
            let name = name.split(|b| *b == 0).next().unwrap_or_default();
            let event = if mask & libc::IN_DELETE != 0 {
                Event::Removed
            } else {
                Event::Appeared
            };
            self.pending
                .push_back((event, String::from_utf8_lossy(name).into_owned()));
            at += header + len;
        }
    }
}
