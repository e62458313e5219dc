//! The command line given hostile inputs: a FIFO, a device or a directory where a file
//! belongs (as --module, --wheel, --manifest, a matrix input, for every command that reads
//! one), a small wheel whose module inflates to 2 GiB, a module nested a million deep, a
//! manifest quoting a 10 MB value, an interpreter that hangs or never stops printing. Each
//! is exit 2 with a clear message, within seconds and in bounded memory (measured).

use crate::common::RegenIn;
use crate::common::measured::run;
use crate::common::{Sandbox, XTASK, repo_root, wait_for};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

const SHA: &str = "1111111111111111111111111111111111111111";

fn xtask(args: &[&str]) -> Command {
    let mut cmd = Command::new(XTASK);
    cmd.args(args);
    cmd
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

#[test]
fn fifos_devices_and_directories_as_files_are_exit_2_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    mkfifo(&fifo);
    let module = dir.path().join("m.py");
    std::fs::write(&module, "x = 1\n").unwrap();
    let manifest = repo_root().join("api.toml");
    let sub = dir.path().join("sub");
    std::fs::create_dir(&sub).unwrap();
    // Each behind a symlink named like a wheel, so that matrix reads it as one.
    let specials: Vec<(PathBuf, &str)> = [
        (fifo, "is a FIFO"),
        (sub, "is a directory"),
        (PathBuf::from("/dev/zero"), "is a character device"),
        (PathBuf::from("/dev/urandom"), "is a character device"),
    ]
    .into_iter()
    .enumerate()
    .map(|(i, (target, says))| {
        let link = dir.path().join(format!(
            "mooncake_transfer_engine_non_cuda-0.0.{i}-py3-none-any.whl"
        ));
        std::os::unix::fs::symlink(target, &link).unwrap();
        (link, says)
    })
    .collect();
    let mut runs = 0;
    for (special, says) in &specials {
        let s = special.to_str().unwrap();
        let (m, man) = (module.to_str().unwrap(), manifest.to_str().unwrap());
        let commands: Vec<Vec<&str>> = vec![
            vec!["verify", "--module", s],
            vec!["verify", "--wheel", s],
            vec!["verify", "--manifest", s, "--module", m],
            vec!["regen", "--manifest", s],
            vec!["regen", "--check", "--manifest", s],
            vec!["matrix", "--manifest", s, m],
            vec!["bump", "--commit", SHA, "--module", s, "--manifest", man],
            vec!["bump", "--commit", SHA, "--module", m, "--manifest", s],
        ];
        // A directory given to matrix is a directory of wheels, not a mistake.
        let matrix_input = !special.is_dir();
        let commands = commands
            .into_iter()
            .chain(matrix_input.then(|| vec!["matrix", "--manifest", man, s]));
        for args in commands {
            let r = run(&mut xtask(&args));
            assert_eq!(r.code, Some(2), "{args:?}: {}{}", r.stdout, r.stderr);
            assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
            assert!(
                r.stderr.contains(s),
                "{args:?} does not name the file: {}",
                r.stderr
            );
            assert!(r.took < Duration::from_secs(5), "{args:?}: {:?}", r.took);
            runs += 1;
        }
    }
    eprintln!("{runs} commands, each exit 2 at once");
}

/// A wheel of about 2 MB whose module inflates to 2 GiB of zeros, made with the machine's
/// zlib: one MiB compressed with a full flush is self-contained, so it is repeated.
fn bomb(path: &Path) {
    let script = r#"
import struct, sys, zlib
c = zlib.compressobj(9, zlib.DEFLATED, -15)
chunk = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
n = 2048
data = chunk * n + b"\x03\x00"
crc = 0
for _ in range(n):
    crc = zlib.crc32(bytes(1 << 20), crc)
name = b"mooncake/structured_object_store.py"
size = n << 20
local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                    len(name), 20) + name + struct.pack("<HHQQ", 1, 16, size, len(data))
central = struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF,
                      0xFFFFFFFF, len(name), 28, 0, 0, 0, 0o100644 << 16, 0xFFFFFFFF)
central += name + struct.pack("<HHQQQ", 1, 24, size, len(data), 0)
cd_offset = len(local) + len(data)
eocd64 = cd_offset + len(central)
end = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, 1, 1, len(central), cd_offset)
end += struct.pack("<IIQI", 0x07064b50, 0, eocd64, 1)
end += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
open(sys.argv[1], "wb").write(local + data + central + end)
"#;
    let made = run(Command::new("python3").args(["-c", script, path.to_str().unwrap()]));
    assert_eq!(made.code, Some(0), "{}", made.stderr);
}

#[test]
fn a_zip_bomb_and_a_module_nested_a_million_deep_are_exit_2_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let whl = dir
        .path()
        .join("mooncake_transfer_engine_non_cuda-9.9.9-py3-none-any.whl");
    bomb(&whl);
    let size = std::fs::metadata(&whl).unwrap().len();
    assert!(size < 3 << 20, "the bomb is {size} bytes");
    let deep = dir.path().join("deep.py");
    std::fs::write(&deep, format!("x = {}1\n", "-".repeat(1_000_000))).unwrap();
    let (w, d) = (whl.to_str().unwrap(), deep.to_str().unwrap());
    let cases: [(&[&str], &str); 4] = [
        (&["verify", "--wheel", w], "inflate to 2048 MiB together"),
        (&["matrix", w], "inflate to 2048 MiB together"),
        (&["verify", "--module", d], "deep.py:1:"),
        (
            &["bump", "--commit", SHA, "--module", d],
            "nests too deeply",
        ),
    ];
    for (args, says) in cases {
        let r = run(&mut xtask(args));
        assert_eq!(r.code, Some(2), "{args:?}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{args:?}: {}", r.stderr);
        assert!(r.took < Duration::from_secs(10), "{args:?}: {:?}", r.took);
        assert!(r.max_rss_mib < 200, "{args:?}: {} MiB", r.max_rss_mib);
        eprintln!(
            "{args:?}: exit 2 in {:?}, peak {} MiB",
            r.took, r.max_rss_mib
        );
    }
}

#[test]
fn a_manifest_quoting_a_10_mb_value_gets_a_short_message() {
    let sb = Sandbox::new();
    let huge = "A".repeat(10 << 20);
    sb.edit(
        "api.toml",
        "commit = \"4dbe5a4c194669850e9abad61172e9878b245b15\"",
        &format!("commit = \"{huge}\""),
    );
    let r = run(&mut sb.regen_command(&["--check"]));
    assert_eq!(r.code, Some(2), "{}", &r.stderr[..r.stderr.len().min(2000)]);
    assert!(
        r.stderr
            .starts_with("api.toml:16:10: error: invalid commit"),
        "{}",
        &r.stderr[..200]
    );
    assert!(r.stderr.len() < 2000, "{} bytes of error", r.stderr.len());
    assert!(
        r.stderr.lines().all(|l| l.chars().count() < 300),
        "{}",
        r.stderr
    );
    // Past the size bound: refused before it is parsed.
    sb.write("api.toml", &"#".repeat(20 << 20));
    let r = run(&mut sb.regen_command(&[]));
    assert_eq!(r.code, Some(2));
    assert!(
        r.stderr.contains("larger than the 16 MiB limit"),
        "{}",
        r.stderr
    );
}

/// 50,000 bad symbols: 50,000 located errors, of which 20 are shown and the rest counted;
/// each shown one is drawn from an excerpt, so the run stays quick.
#[test]
fn a_manifest_with_50000_errors_gets_a_bounded_report_quickly() {
    let sb = Sandbox::new();
    let mut text = sb.read("api.toml");
    for i in 0..50_000 {
        text.push_str(&format!(
            "\n[[symbol]]\nname = \"bad name {i}\"\nkind = \"function\"\nparams = []\n"
        ));
    }
    sb.write("api.toml", &text);
    let r = run(&mut sb.regen_command(&["--check"]));
    assert_eq!(r.code, Some(2));
    assert!(r.took < Duration::from_secs(30), "{:?}", r.took);
    assert_eq!(r.stderr.matches(": error: invalid symbol name").count(), 20);
    assert!(
        r.stderr
            .contains("api.toml: error: 49980 more errors not shown"),
        "{}",
        &r.stderr[r.stderr.len().saturating_sub(300)..]
    );
    assert!(r.stderr.len() < 10_000, "{} bytes", r.stderr.len());
    eprintln!("50,000 errors: exit 2 in {:?}", r.took);
}

/// A fake interpreter: a shell script in a temp dir.
fn interpreter(dir: &Path, body: &str) -> PathBuf {
    let path = dir.join("python");
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o755)).unwrap();
    path
}

/// Running (a zombie waiting for its reaper is not).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat"))
        .ok()
        .and_then(|s| s.rsplit_once(") ").map(|(_, rest)| !rest.starts_with('Z')))
        .unwrap_or(false)
}

#[test]
fn an_interpreter_that_hangs_or_floods_is_stopped() {
    let dir = tempfile::tempdir().unwrap();
    let pids = dir.path().join("pids");
    let p = pids.to_str().unwrap();
    // (what, the interpreter, how many pids it writes, what the error says)
    let cases = [
        (
            "hangs, with a child of its own",
            format!("sleep 600 & echo $! >> {p}\necho $$ >> {p}\nsleep 600"),
            2,
            "no answer after 2s",
        ),
        (
            "prints without end",
            "exec yes".to_owned(),
            0,
            "no answer after 2s",
        ),
        (
            "exits, leaving a child that holds its stdout",
            format!("sleep 600 & echo $! >> {p}\necho not json"),
            1,
            "printed no JSON report",
        ),
    ];
    for (what, body, writes, says) in cases {
        let _ = std::fs::remove_file(&pids);
        let python = interpreter(dir.path(), &body);
        let mut cmd = xtask(&["verify", "--python", python.to_str().unwrap()]);
        cmd.env("MOONCAKE_SOS_PYTHON_TIMEOUT_SECS", "2");
        let r = run(&mut cmd);
        assert_eq!(r.code, Some(2), "{what}: {}{}", r.stdout, r.stderr);
        assert!(r.stderr.contains(says), "{what}: {}", r.stderr);
        // Stopped, not waited for: its processes sleep 600 s (the bound leaves room for a
        // loaded machine).
        assert!(r.took < Duration::from_secs(60), "{what}: {:?}", r.took);
        assert!(r.max_rss_mib < 200, "{what}: {} MiB", r.max_rss_mib);
        // Nothing it started is left running: every pid it wrote goes (a killed process
        // takes a moment to be reaped).
        let started: Vec<i32> = std::fs::read_to_string(&pids)
            .unwrap_or_default()
            .lines()
            .map(|l| l.parse().unwrap())
            .collect();
        assert_eq!(started.len(), writes, "{what}: {started:?}");
        wait_for(&format!("{what}: {started:?} still running"), 30, || {
            started.iter().all(|&pid| !alive(pid)).then_some(())
        });
        eprintln!("{what}: exit 2 in {:?}, peak {} MiB", r.took, r.max_rss_mib);
    }
}
