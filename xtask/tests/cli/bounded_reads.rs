//! Every reader bounded: wheels whose core, METADATA or module inflates to gigabytes from a
//! few MB (with honest or lying headers), `/dev/zero` or a FIFO where a wheel, a record or a
//! cache entry belongs, a package of 100,000 modules. Each is exit 2 with one located error,
//! within seconds and in bounded memory (measured: before, up to 3.2 GB, a hang, or exit 0).

use crate::common::cores::make_wheel;
use crate::common::measured::{Measured, run, run_within};
use crate::common::{Sandbox, XTASK, repo_root};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

/// Peak memory any refusal may take (the tool's own, ~20 MiB, and its allocator's slack).
const MAX_RSS_MIB: u64 = 256;

/// Writes a zip at `path`: each member `NAME=@TEXT` (deflated text, `\n` escaped) or
/// `NAME=MIB[:DECLARED]`: MIB MiB of zeros, about 1 KB a MiB (one MiB deflated with a full
/// flush is self-contained, so it is repeated), its headers declaring DECLARED bytes (default:
/// the truth).
const BOMB_PY: &str = r#"
import struct, sys, zlib
body, central, n = b"", b"", 0
for spec in sys.argv[2:]:
    name, _, value = spec.partition("=")
    if value.startswith("@"):
        raw = value[1:].replace("\\n", "\n").encode()
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        data, crc, size = c.compress(raw) + c.flush(), zlib.crc32(raw), len(raw)
        declared = size
    else:
        mib, _, declared = value.partition(":")
        c = zlib.compressobj(9, zlib.DEFLATED, -15)
        chunk = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)
        data, crc, size = chunk * int(mib) + b"\x03\x00", 0, int(mib) << 20
        for _ in range(int(mib)):
            crc = zlib.crc32(bytes(1 << 20), crc)
        declared = int(declared) if declared else size
    nm = name.encode()
    local = struct.pack("<IHHHHHIIIHH", 0x04034b50, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF, 0xFFFFFFFF,
                        len(nm), 20) + nm + struct.pack("<HHQQ", 1, 16, declared, len(data))
    central += struct.pack("<IHHHHHHIIIHHHHHII", 0x02014b50, 45, 45, 0, 8, 0, 0, crc, 0xFFFFFFFF,
                           0xFFFFFFFF, len(nm), 28, 0, 0, 0, 0o100644 << 16, 0xFFFFFFFF)
    central += nm + struct.pack("<HHQQQ", 1, 24, declared, len(data), len(body))
    body += local + data
    n += 1
end = struct.pack("<IQHHIIQQQQ", 0x06064b50, 44, 45, 45, 0, 0, n, n, len(central), len(body))
end += struct.pack("<IIQI", 0x07064b50, 0, len(body) + len(central), 1)
end += struct.pack("<IHHHHIIH", 0x06054b50, 0, 0, 0xFFFF, 0xFFFF, 0xFFFFFFFF, 0xFFFFFFFF, 0)
open(sys.argv[1], "wb").write(body + central + end)
"#;

fn zip(path: &Path, members: &[&str]) -> String {
    let status = Command::new("python3")
        .args(["-c", BOMB_PY])
        .arg(path)
        .args(members)
        .status()
        .unwrap();
    assert!(status.success());
    let size = std::fs::metadata(path).unwrap().len();
    assert!(size < 4 << 20, "{} is {size} bytes", path.display());
    path.display().to_string()
}

fn metadata(dist: &str) -> String {
    let stem = dist.replace('-', "_");
    format!(
        "{stem}-1.0.dist-info/METADATA=@Metadata-Version: 2.1\\nName: {dist}\\nVersion: 1.0\\n\\n"
    )
}

fn xtask(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(XTASK);
    cmd.args(args).current_dir(dir);
    cmd
}

/// Exit 2, nothing on stdout, one error `LOCATION: error: WHAT...`, quick, bounded memory.
fn refused(what: &str, r: &Measured, location: &str, says: &str) {
    assert_eq!(r.code, Some(2), "{what}: {}{}", r.stdout, r.stderr);
    assert_eq!(r.stdout, "", "{what}");
    assert_eq!(
        r.stderr.matches(": error: ").count(),
        1,
        "{what}: {}",
        r.stderr
    );
    let want = format!("{location}: error: {says}");
    assert!(
        r.stderr.contains(&want),
        "{what}: want {want:?}: {}",
        r.stderr
    );
    assert!(r.took < Duration::from_secs(20), "{what}: {:?}", r.took);
    assert!(r.max_rss_mib < MAX_RSS_MIB, "{what}: {} MiB", r.max_rss_mib);
    eprintln!("{what}: exit 2 in {:?}, peak {} MiB", r.took, r.max_rss_mib);
}

#[test]
fn wheels_that_inflate_to_gigabytes_are_refused_in_bounded_memory() {
    let dir = tempfile::tempdir().unwrap();
    let at = |name: &str| dir.path().join(name);
    let core = |name: &str, members: &[&str]| {
        let mut all = vec![
            metadata("mooncake-bomb"),
            "mooncake/__init__.py=@".to_owned(),
        ];
        all.extend(members.iter().map(|m| (*m).to_owned()));
        let all: Vec<&str> = all.iter().map(String::as_str).collect();
        zip(&at(name), &all)
    };
    let user = |name: &str, module: &str| zip(&at(name), &[&metadata("sglang"), module]);
    let lying = "larger than its declared uncompressed size";
    // (what, the command's arguments but the wheel, the wheel, what the error says)
    let cases: Vec<(&str, &[&str], String, String)> = vec![
        (
            "a 3 GiB core",
            &["core", "--no-cache"],
            core("a.whl", &["mooncake/store.so=3072"]),
            "its members inflate to 3072 MiB together, past the 1024 MiB a wheel may".into(),
        ),
        (
            "a 512 MiB core",
            &["core", "--no-cache"],
            core("b.whl", &["mooncake/store.so=512"]),
            "mooncake/store.so inflates past 128 MiB (512 MiB declared): not a native core \
             this tool reads"
                .into(),
        ),
        (
            "a 512 MiB core declaring 1000 bytes",
            &["core", "--no-cache"],
            core("c.whl", &["mooncake/store.so=512:1000"]),
            format!("cannot unpack mooncake/store.so: File is {lying}"),
        ),
        (
            "a 512 MiB METADATA",
            &["core", "--no-cache"],
            zip(
                &at("d.whl"),
                &[
                    "mooncake_bomb-1.0.dist-info/METADATA=512",
                    "mooncake/store.so=@x",
                ],
            ),
            "mooncake_bomb-1.0.dist-info/METADATA inflates past 4 MiB (512 MiB declared): not \
             a METADATA this tool reads"
                .into(),
        ),
        (
            "a 512 MiB METADATA declaring 100 bytes",
            &["core", "--no-cache"],
            zip(
                &at("e.whl"),
                &[
                    "mooncake_bomb-1.0.dist-info/METADATA=512:100",
                    "mooncake/store.so=@x",
                ],
            ),
            format!("cannot unpack mooncake_bomb-1.0.dist-info/METADATA: File is {lying}"),
        ),
        (
            "a user's 2 GiB module",
            &["users", "--record"],
            user("f.whl", "sglang/a.py=2048"),
            "its members inflate to 2048 MiB together, past the 1024 MiB a wheel may".into(),
        ),
        (
            "a user's 512 MiB module",
            &["users", "--record"],
            user("g.whl", "sglang/a.py=512"),
            "sglang/a.py inflates past 8 MiB (512 MiB declared): not a module this tool reads"
                .into(),
        ),
        (
            "a user's 512 MiB module declaring 10 bytes",
            &["users", "--record"],
            user("h.whl", "sglang/a.py=512:10"),
            format!("cannot unpack sglang/a.py: File is {lying}"),
        ),
    ];
    let sandbox = Sandbox::new();
    for (what, args, wheel, says) in cases {
        let mut all = args.to_vec();
        all.push(&wheel);
        let r = run(&mut xtask(sandbox.root(), &all));
        refused(what, &r, &wheel, &says);
    }
}

fn mkfifo(path: &Path) {
    let c = std::ffi::CString::new(path.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
}

const RECORD: &str = "cores/mooncake-transfer-engine-cuda13-0.3.11.post1.json";

/// `/dev/zero` or a FIFO as a diff's side, a FIFO as a core or user record in the
/// repository: refused at once (before, `/dev/zero` grew past 12 GB and a FIFO hung).
#[test]
fn devices_and_fifos_as_wheels_and_records_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo.json");
    mkfifo(&fifo);
    let fifo = fifo.display().to_string();
    let root = repo_root();
    let device = "is a character device, not a regular file";
    let named_fifo = "is a FIFO, not a regular file";
    let cases: [(&[&str], &str, String); 4] = [
        (
            &["core", "--diff", RECORD, "/dev/zero"],
            "/dev/zero",
            format!("cannot read the wheel: {device}"),
        ),
        (
            &["core", "--diff", "/dev/zero", RECORD],
            "/dev/zero",
            format!("cannot read the wheel: {device}"),
        ),
        (
            &["core", "--diff", RECORD, &fifo],
            &fifo,
            format!("cannot read the core record: {named_fifo}"),
        ),
        (
            &["core", "--diff", &fifo, RECORD],
            &fifo,
            format!("cannot read the core record: {named_fifo}"),
        ),
    ];
    for (args, location, says) in cases {
        let r = run_within(&mut xtask(&root, args), Duration::from_secs(30));
        refused(&format!("{args:?}"), &r, location, &says);
    }
    // The repository's own records, each replaced by a FIFO.
    let module = mooncake_sos_testkit::wheel("0.3.12.post1");
    for (record, command) in [
        (
            "cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json",
            vec!["verify", "--wheel", module.to_str().unwrap()],
        ),
        ("consumers/sglang-0.5.16.json", vec!["users"]),
    ] {
        let sandbox = Sandbox::new();
        std::fs::remove_file(sandbox.path(record)).unwrap();
        mkfifo(&sandbox.path(record));
        let manifest = sandbox.manifest();
        let mut args = command.clone();
        args.extend(["--manifest", manifest.to_str().unwrap()]);
        let r = run_within(&mut xtask(sandbox.root(), &args), Duration::from_secs(30));
        let what = if record.starts_with("cores/") {
            "core"
        } else {
            "user"
        };
        refused(
            &format!("{command:?} with {record} a FIFO"),
            &r,
            &sandbox.path(record).display().to_string(),
            &format!("cannot read the {what} record: {named_fifo}"),
        );
    }
}

/// A stand-in native core that imports (a module with nothing in it), built without
/// Python's headers: the stable ABI's module definition, laid out by hand.
const EMPTY_CORE_C: &str = r#"
typedef struct { long ob_refcnt; void *ob_type; } Head;
typedef struct { Head ob_base; void *m_init; long m_index; void *m_copy; } DefBase;
typedef struct { DefBase m_base; const char *m_name; const char *m_doc; long m_size;
                 void *m_methods; void *m_slots; void *m_traverse; void *m_clear;
                 void *m_free; } Def;
extern void *PyModule_Create2(Def *, int);
static Def def = {{{1, 0}, 0, 0, 0}, "store", 0, -1, 0, 0, 0, 0, 0};
void *PyInit_store(void) { return PyModule_Create2(&def, 1013); }
"#;

/// A package of 5,000 modules (their names, 230 KB, more than one argument may hold) is read:
/// the core reader hands the module list to the import as a file; before, the import failed
/// with "Argument list too long". One of 100,001 is refused before anything runs.
#[test]
fn a_package_of_thousands_of_modules_is_read_and_one_of_100000_refused() {
    let dir = tempfile::tempdir().unwrap();
    let so = crate::common::cores::compile_shared(dir.path(), "store", EMPTY_CORE_C);
    let names: Vec<String> = (0..5000)
        .map(|i| format!("mooncake/module_with_a_rather_long_name_{i:05}.py"))
        .collect();
    let mut files: Vec<(&str, &[u8])> =
        vec![("mooncake/__init__.py", b""), ("mooncake/store.so", &so)];
    files.extend(names.iter().map(|n| (n.as_str(), &b"x = 1\n"[..])));
    let whl = make_wheel(dir.path(), "mooncake-many", "1.0", &files);
    let root = repo_root();
    let args = ["core", "--no-cache", "--json", whl.to_str().unwrap()];
    let r = run_within(&mut xtask(&root, &args), Duration::from_secs(300));
    assert!(
        r.code == Some(0) || r.code == Some(1),
        "{}{}",
        r.stdout,
        r.stderr
    );
    let report: serde_json::Value = serde_json::from_str(&r.stdout).unwrap();
    let python = report[0]["python"]
        .as_object()
        .unwrap_or_else(|| panic!("{report:#}"));
    assert_eq!(
        python.len(),
        5001,
        "every Python module read (and the package)"
    );
    assert_eq!(
        python["mooncake.module_with_a_rather_long_name_04999"],
        serde_json::json!(["x"])
    );

    let many = dir.path().join("mooncake_huge-1.0-py3-none-any.whl");
    huge_package(&many);
    let r = run(&mut xtask(
        &root,
        &["core", "--no-cache", many.to_str().unwrap()],
    ));
    refused(
        "100,001 modules",
        &r,
        many.to_str().unwrap(),
        "the package `mooncake` has 100002 modules, past the 10000 the core reader lists",
    );
}

/// A wheel of 100,000 empty modules beside a core, made in Python (their names would not fit
/// on a command line).
fn huge_package(path: &PathBuf) {
    let script = "import sys, zipfile\n\
        with zipfile.ZipFile(sys.argv[1], 'w') as z:\n\
        \x20   z.writestr('mooncake_huge-1.0.dist-info/METADATA', 'Metadata-Version: 2.1\\nName: mooncake-huge\\nVersion: 1.0\\n\\n')\n\
        \x20   z.writestr('mooncake/__init__.py', '')\n\
        \x20   z.writestr('mooncake/store.so', 'x')\n\
        \x20   for i in range(100000):\n\
        \x20       z.writestr(f'mooncake/m{i}.py', '')\n";
    let status = Command::new("python3")
        .args(["-c", script])
        .arg(path)
        .status()
        .unwrap();
    assert!(status.success());
}
