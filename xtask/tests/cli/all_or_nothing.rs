//! `xtask regen` writes every output or none, and only inside the repository: every kind of
//! obstacle (a read-only file, an immutable one, a directory it may not write, a file size
//! limit, a symlink out of the repository, an output that is the manifest, a directory or a
//! FIFO where a file belongs) put on every output in turn, with all of them stale.
//! Each run must exit 2 naming the obstacle, and leave the tree (and anything outside it)
//! byte for byte and mode for mode as it was; or, for a symlink that stays inside, write
//! through it.

use crate::common::RegenIn;
use crate::common::Sandbox;
use std::collections::BTreeMap;
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::time::{Duration, Instant};

const OUTPUTS: [&str; 8] = [
    "docker/Dockerfile",
    "docker/Dockerfile.rocm",
    "docker/build.py",
    "generated/Cargo.toml",
    "generated/python/mooncake_sos.py",
    "generated/src/bindings.rs",
    "generated/src/lib.rs",
    "generated/stubs/mooncake-stubs/store.pyi",
];

/// Everything under `root` (symlinks as their target path): path → (bytes, mode, uid).
type Tree = BTreeMap<String, (Vec<u8>, u32, u32)>;

fn tree(root: &Path) -> Tree {
    fn walk(root: &Path, dir: &Path, out: &mut Tree) {
        for e in std::fs::read_dir(dir).expect("read_dir") {
            let p = e.expect("entry").path();
            let rel = p
                .strip_prefix(root)
                .expect("under root")
                .display()
                .to_string();
            let meta = std::fs::symlink_metadata(&p).expect("lstat");
            let bytes = if meta.is_symlink() {
                std::fs::read_link(&p)
                    .expect("readlink")
                    .into_os_string()
                    .into_encoded_bytes()
            } else if meta.is_file() {
                std::fs::read(&p).expect("read")
            } else {
                Vec::new()
            };
            out.insert(rel, (bytes, meta.mode(), meta.uid()));
            if meta.is_dir() {
                walk(root, &p, out);
            }
        }
    }
    let mut out = Tree::new();
    walk(root, root, &mut out);
    out
}

/// A sandbox in which every output of [`OUTPUTS`] is stale: another pin and base tags in
/// api.toml (five outputs change) and a stray line in those no such edit changes.
fn all_stale() -> Sandbox {
    let sb = Sandbox::new();
    sb.move_pin_and_base_tags();
    let fixed = [
        "generated/Cargo.toml",
        "generated/src/lib.rs",
        "generated/stubs/mooncake-stubs/store.pyi",
    ];
    for fixed in fixed {
        let text = sb.read(fixed);
        sb.write(fixed, &format!("{text}\n"));
    }
    sb
}

/// FS_IOC_SETFLAGS / FS_IMMUTABLE_FL (linux/fs.h): what `chattr +i` does. Even root cannot
/// link, rename over or write an immutable file.
fn set_immutable(path: &Path, on: bool) {
    const FS_IOC_GETFLAGS: libc::c_ulong = 0x8008_6601;
    const FS_IOC_SETFLAGS: libc::c_ulong = 0x4008_6602;
    const FS_IMMUTABLE_FL: libc::c_int = 0x10;
    let f = std::fs::File::open(path).expect("open for ioctl");
    let fd = std::os::fd::AsRawFd::as_raw_fd(&f);
    let mut flags: libc::c_int = 0;
    // SAFETY: the flag ioctls read and write one c_int through a valid pointer.
    unsafe {
        assert_eq!(libc::ioctl(fd, FS_IOC_GETFLAGS, &mut flags), 0, "get flags");
        flags = if on {
            flags | FS_IMMUTABLE_FL
        } else {
            flags & !FS_IMMUTABLE_FL
        };
        assert_eq!(
            libc::ioctl(fd, FS_IOC_SETFLAGS, &flags),
            0,
            "chattr {path:?}"
        );
    }
}

/// Clears the immutable flag even when the test fails, so the temp dir can be removed.
struct Immutable(PathBuf);

impl Drop for Immutable {
    fn drop(&mut self) {
        set_immutable(&self.0, false);
    }
}

fn chown(path: &Path, uid: u32) {
    std::os::unix::fs::lchown(path, Some(uid), Some(uid)).expect("chown");
}

const NOBODY: u32 = 65534;

#[derive(Clone, Copy, Debug)]
enum Obstacle {
    ReadOnly,
    Immutable,
    /// regen runs as `nobody`, who may write everywhere but in this output's directory.
    DirNotWritable,
    /// This output's directory is a symlink to a directory outside the repository.
    DirLinkOut,
    /// This output is a symlink to a file outside the repository.
    FileLinkOut,
    /// This output is a hard link to the manifest.
    TheManifest,
    Directory,
    Fifo,
}

const OBSTACLES: [Obstacle; 8] = [
    Obstacle::ReadOnly,
    Obstacle::Immutable,
    Obstacle::DirNotWritable,
    Obstacle::DirLinkOut,
    Obstacle::FileLinkOut,
    Obstacle::TheManifest,
    Obstacle::Directory,
    Obstacle::Fifo,
];

/// Puts `obstacle` on `output`; returns what the error must say, the command to run, and
/// what must stay alive until the run is checked.
fn put(
    obstacle: Obstacle,
    sb: &Sandbox,
    outside: &Path,
    output: &str,
    xtask_for_nobody: &Path,
) -> (&'static str, Command, Option<Immutable>) {
    let path = sb.path(output);
    let dir = path.parent().expect("parent").to_owned();
    let mut cmd = sb.regen_command(&[]);
    let mut guard = None;
    let says = match obstacle {
        Obstacle::ReadOnly => {
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o444)).unwrap();
            "is read-only"
        }
        Obstacle::Immutable => {
            set_immutable(&path, true);
            guard = Some(Immutable(path.clone()));
            "Operation not permitted"
        }
        Obstacle::DirNotWritable => {
            std::fs::set_permissions(sb.dir.path(), std::fs::Permissions::from_mode(0o755))
                .unwrap();
            for p in tree(sb.dir.path()).keys() {
                chown(&sb.path(p), NOBODY);
            }
            chown(sb.dir.path(), NOBODY);
            chown(&dir, 0);
            cmd = sb.regen_command_by(xtask_for_nobody, &[]);
            cmd.uid(NOBODY).gid(NOBODY);
            "Permission denied"
        }
        Obstacle::DirLinkOut => {
            let away = outside.join("away");
            std::fs::rename(&dir, &away).unwrap();
            std::os::unix::fs::symlink(&away, &dir).unwrap();
            "leads outside the repository"
        }
        Obstacle::FileLinkOut => {
            let away = outside.join("file");
            std::fs::rename(&path, &away).unwrap();
            std::os::unix::fs::symlink(&away, &path).unwrap();
            "leads outside the repository"
        }
        Obstacle::TheManifest => {
            std::fs::remove_file(&path).unwrap();
            std::fs::hard_link(sb.manifest(), &path).unwrap();
            "is the manifest itself"
        }
        Obstacle::Directory => {
            std::fs::remove_file(&path).unwrap();
            std::fs::create_dir(&path).unwrap();
            "is a directory"
        }
        Obstacle::Fifo => {
            std::fs::remove_file(&path).unwrap();
            let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
            // SAFETY: mkfifo(3) on a NUL-terminated path.
            assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o644) }, 0);
            "not a regular file"
        }
    };
    (says, cmd, guard)
}

/// The xtask binary where uid nobody can run it: the build's own may lie below a directory
/// only its owner can enter (a checkout made in `mktemp -d`, mode 0700). A hard link when the
/// file system allows, else a copy; gone with the returned directory.
fn xtask_for_nobody() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("xtask");
    if std::fs::hard_link(crate::common::XTASK, &path).is_err() {
        std::fs::copy(crate::common::XTASK, &path).unwrap();
    }
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

fn run(mut cmd: Command) -> (Output, Duration) {
    let started = Instant::now();
    let out = cmd.output().expect("run xtask");
    (out, started.elapsed())
}

fn text(out: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    )
}

#[test]
fn any_obstacle_on_any_output_changes_nothing() {
    let mut runs = 0;
    let (_keep, xtask_for_nobody) = xtask_for_nobody();
    for obstacle in OBSTACLES {
        for output in OUTPUTS {
            let sb = all_stale();
            let outside = tempfile::tempdir().unwrap();
            let (says, cmd, guard) = put(obstacle, &sb, outside.path(), output, &xtask_for_nobody);
            let (before, outside_before) = (tree(sb.dir.path()), tree(outside.path()));
            let (out, took) = run(cmd);
            let what = format!("{obstacle:?} on {output}");
            assert_eq!(out.status.code(), Some(2), "{what}: {}", text(&out));
            assert!(text(&out).contains(says), "{what}: {}", text(&out));
            assert!(took < Duration::from_secs(10), "{what}: took {took:?}");
            assert_eq!(tree(sb.dir.path()), before, "{what}: the tree changed");
            assert_eq!(
                tree(outside.path()),
                outside_before,
                "{what}: outside changed"
            );
            drop(guard);
            runs += 1;
        }
    }
    eprintln!("{runs} obstacle runs, each exit 2 with nothing changed");
}

#[test]
fn a_file_size_limit_hit_halfway_changes_nothing() {
    let sb = all_stale();
    let before = tree(sb.dir.path());
    let sizes: Vec<u64> = OUTPUTS
        .iter()
        .map(|o| std::fs::metadata(sb.path(o)).unwrap().len())
        .collect();
    // Between the smallest and the biggest output: some stage, then one cannot.
    let limit = (sizes.iter().min().unwrap() + sizes.iter().max().unwrap()) / 2;
    let mut cmd = sb.regen_command(&[]);
    // SAFETY: setrlimit(2) and signal(2) between fork and exec, no allocation.
    unsafe {
        cmd.pre_exec(move || {
            let lim = libc::rlimit {
                rlim_cur: limit,
                rlim_max: limit,
            };
            libc::setrlimit(libc::RLIMIT_FSIZE, &lim);
            // Without this the kernel kills the writer (SIGXFSZ) instead of failing write(2).
            libc::signal(libc::SIGXFSZ, libc::SIG_IGN);
            Ok(())
        });
    }
    let (out, _) = run(cmd);
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("File too large"), "{}", text(&out));
    assert_eq!(tree(sb.dir.path()), before, "the tree changed");
    // Lifted, the same regen writes everything.
    assert_eq!(sb.regen(&[]).0, 0);
    assert_eq!(sb.regen(&["--check"]).0, 0);
}

/// A symlink that stays inside the repository is written through: the link stays a link.
#[test]
fn a_symlink_inside_the_repository_is_written_through() {
    for output in OUTPUTS {
        let sb = all_stale();
        let path = sb.path(output);
        let real = PathBuf::from(format!("{}.real", path.display()));
        std::fs::rename(&path, &real).unwrap();
        std::os::unix::fs::symlink(real.file_name().unwrap(), &path).unwrap();
        let (code, out) = sb.regen(&[]);
        assert_eq!(code, 0, "{output}: {out}");
        assert!(
            std::fs::symlink_metadata(&path).unwrap().is_symlink(),
            "{output}"
        );
        let (code, out) = sb.regen(&["--check"]);
        assert_eq!(code, 0, "{output}: {out}");
        assert!(
            !out.contains(".real"),
            "{output}: the target reported: {out}"
        );
    }
}

/// Two outputs that are one file (a symlink from one to the other) would overwrite each
/// other's regions: refused.
#[test]
fn two_outputs_on_one_file_are_refused() {
    let sb = all_stale();
    std::fs::remove_file(sb.path("docker/Dockerfile.rocm")).unwrap();
    std::os::unix::fs::symlink("Dockerfile", sb.path("docker/Dockerfile.rocm")).unwrap();
    let before = tree(sb.dir.path());
    let (out, _) = run(sb.regen_command(&[]));
    assert_eq!(out.status.code(), Some(2), "{}", text(&out));
    assert!(text(&out).contains("are the same file"), "{}", text(&out));
    assert_eq!(tree(sb.dir.path()), before);
}
