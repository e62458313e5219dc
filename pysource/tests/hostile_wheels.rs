//! Upstream wheels are untrusted: headers that lie (zip64 sizes, entry counts, directory
//! sizes), a small wheel whose member inflates to 2 GiB, a central directory of 400,000
//! entries, duplicate members (also under two spellings of one path), random damage
//! (proptest); FIFOs, devices and directories
//! given as files. Each is a value or an error within seconds: never a panic, a hang or an
//! unbounded read.

use mooncake_sos_pysource::source::{self, LoadError, ModuleSource};
use proptest::prelude::*;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const MODULE: &str = "mooncake.structured_object_store";
const MEMBER: &str = "mooncake/structured_object_store.py";
const TEXT: &[u8] =
    b"class MooncakeBundleTransfer:\n    def put(self, data, *, type='dict'):\n        pass\n";

/// One member of a hand-made zip; every size and count can lie.
struct Entry {
    name: Vec<u8>,
    /// 0 stored, 8 deflated.
    method: u16,
    data: Vec<u8>,
    crc: u32,
    /// What the headers claim (zip64 fields); `None` tells the truth.
    claim_size: Option<u64>,
    claim_compressed: Option<u64>,
}

impl Entry {
    fn stored(name: &str, data: &[u8]) -> Entry {
        Entry {
            name: name.as_bytes().to_vec(),
            method: 0,
            data: data.to_vec(),
            crc: crc32(data),
            claim_size: None,
            claim_compressed: None,
        }
    }
}

/// The archive's own claims in its end records.
#[derive(Default, Clone, Copy)]
struct Claims {
    entries: Option<u64>,
    directory_size: Option<u64>,
}

fn u16le(v: &mut Vec<u8>, x: u16) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn u32le(v: &mut Vec<u8>, x: u32) {
    v.extend_from_slice(&x.to_le_bytes());
}

fn u64le(v: &mut Vec<u8>, x: u64) {
    v.extend_from_slice(&x.to_le_bytes());
}

/// The fields a local header and its central header share, from "version needed" to the
/// extra field's length: sizes in the zip64 extra (`u32::MAX` here).
fn shared_header_fields(v: &mut Vec<u8>, e: &Entry, extra_len: u16) {
    u16le(v, 45);
    u16le(v, 0);
    u16le(v, e.method);
    u32le(v, 0);
    u32le(v, e.crc);
    u32le(v, u32::MAX);
    u32le(v, u32::MAX);
    u16le(v, e.name.len() as u16);
    u16le(v, extra_len);
}

/// A zip64 archive: local headers, data, central directory, zip64 end record and locator,
/// end record. `true_size` is what the member inflates to.
fn zip(entries: &[(Entry, u64)], claims: Claims) -> Vec<u8> {
    let mut out = Vec::new();
    let mut central = Vec::new();
    for (e, true_size) in entries {
        let offset = out.len() as u64;
        let size = e.claim_size.unwrap_or(*true_size);
        let compressed = e.claim_compressed.unwrap_or(e.data.len() as u64);
        // Local header with a zip64 extra (sizes).
        u32le(&mut out, 0x0403_4b50);
        shared_header_fields(&mut out, e, 20);
        out.extend_from_slice(&e.name);
        u16le(&mut out, 1);
        u16le(&mut out, 16);
        u64le(&mut out, size);
        u64le(&mut out, compressed);
        out.extend_from_slice(&e.data);
        // Its central header, zip64 extra with sizes and offset.
        u32le(&mut central, 0x0201_4b50);
        u16le(&mut central, 45 | (3 << 8));
        shared_header_fields(&mut central, e, 28);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u16le(&mut central, 0);
        u32le(&mut central, 0o100644 << 16);
        u32le(&mut central, u32::MAX);
        central.extend_from_slice(&e.name);
        u16le(&mut central, 1);
        u16le(&mut central, 24);
        u64le(&mut central, size);
        u64le(&mut central, compressed);
        u64le(&mut central, offset);
    }
    let cd_offset = out.len() as u64;
    out.extend_from_slice(&central);
    let eocd64 = out.len() as u64;
    let count = claims.entries.unwrap_or(entries.len() as u64);
    let cd_size = claims.directory_size.unwrap_or(central.len() as u64);
    u32le(&mut out, 0x0606_4b50);
    u64le(&mut out, 44);
    u16le(&mut out, 45);
    u16le(&mut out, 45);
    u32le(&mut out, 0);
    u32le(&mut out, 0);
    u64le(&mut out, count);
    u64le(&mut out, count);
    u64le(&mut out, cd_size);
    u64le(&mut out, cd_offset);
    u32le(&mut out, 0x0706_4b50);
    u32le(&mut out, 0);
    u64le(&mut out, eocd64);
    u32le(&mut out, 1);
    u32le(&mut out, 0x0605_4b50);
    u16le(&mut out, 0);
    u16le(&mut out, 0);
    u16le(&mut out, u16::MAX);
    u16le(&mut out, u16::MAX);
    u32le(&mut out, u32::MAX);
    u32le(&mut out, u32::MAX);
    u16le(&mut out, 0);
    out
}

/// CRC-32 (IEEE), bitwise: the test's own, so that the archives are valid zip files.
fn crc32(data: &[u8]) -> u32 {
    let mut crc = !0u32;
    for &b in data {
        crc ^= u32::from(b);
        for _ in 0..8 {
            crc = (crc >> 1) ^ (0xEDB8_8320 & (!(crc & 1)).wrapping_add(1));
        }
    }
    !crc
}

/// A deflate stream of `mib` MiB of zeros, about 1 KB per MiB, and its CRC: real zlib (the
/// machine's python3) compresses one MiB with a full flush, which makes the chunk
/// self-contained, so repeating it repeats the MiB; an empty final block ends the stream.
fn zeros_bomb(mib: u64) -> (Vec<u8>, u32) {
    let script = "import sys, zlib\n\
        c = zlib.compressobj(9, zlib.DEFLATED, -15)\n\
        chunk = c.compress(bytes(1 << 20)) + c.flush(zlib.Z_FULL_FLUSH)\n\
        crc = 0\n\
        for _ in range(int(sys.argv[1])): crc = zlib.crc32(bytes(1 << 20), crc)\n\
        print(chunk.hex(), crc)\n";
    let out = std::process::Command::new("python3")
        .args(["-c", script, &mib.to_string()])
        .output()
        .expect("python3 (the test set-up installs it)");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let text = String::from_utf8(out.stdout).unwrap();
    let (hex, crc) = text.trim().split_once(' ').unwrap();
    let chunk: Vec<u8> = (0..hex.len())
        .step_by(2)
        .map(|i| u8::from_str_radix(&hex[i..i + 2], 16).unwrap())
        .collect();
    let mut stream = chunk.repeat(mib as usize);
    stream.extend_from_slice(&[0x03, 0x00]);
    (stream, crc.parse().unwrap())
}

fn write_temp(dir: &Path, name: &str, bytes: &[u8]) -> PathBuf {
    let path = dir.join(name);
    std::fs::write(&path, bytes).unwrap();
    path
}

/// `read_wheel_if_present` on `bytes`, timed.
fn read_wheel(bytes: &[u8]) -> (Result<Option<ModuleSource>, LoadError>, Duration) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_temp(dir.path(), "x.whl", bytes);
    let started = Instant::now();
    let result = ModuleSource::read_wheel_if_present(&path, MODULE);
    (result, started.elapsed())
}

#[test]
fn a_honest_hand_made_wheel_reads() {
    let (result, _) = read_wheel(&zip(
        &[(Entry::stored(MEMBER, TEXT), TEXT.len() as u64)],
        Claims::default(),
    ));
    let source = result.unwrap().expect("the module");
    assert_eq!(source.text.as_bytes(), TEXT);
}

#[test]
fn lying_and_hostile_wheels_are_errors_within_seconds() {
    let bomb_mib = 2048;
    let (stream, crc) = zeros_bomb(bomb_mib);
    let bomb = |claim_size: Option<u64>| Entry {
        name: MEMBER.as_bytes().to_vec(),
        method: 8,
        data: stream.clone(),
        crc,
        claim_size,
        claim_compressed: None,
    };
    let many: Vec<(Entry, u64)> = (0..400_000)
        .map(|i| (Entry::stored(&format!("m/{i:06}.py"), b""), 0))
        .collect();
    let honest = || vec![(Entry::stored(MEMBER, TEXT), TEXT.len() as u64)];
    let lie = |size: Option<u64>, compressed: Option<u64>| {
        let mut e = Entry::stored(MEMBER, TEXT);
        (e.claim_size, e.claim_compressed) = (size, compressed);
        vec![(e, TEXT.len() as u64)]
    };
    let read = TEXT.len();
    // (what, archive, the error it gives, or the module it reads: the real bytes)
    let cases: Vec<(&str, Vec<u8>, Result<usize, &str>)> = vec![
        (
            "2 GiB of zeros in 2 MB, honest headers",
            zip(&[(bomb(None), bomb_mib << 20)], Claims::default()),
            Err("its members inflate to 2048 MiB together, past the 1024 MiB a wheel may"),
        ),
        (
            "2 GiB of zeros in 2 MB, headers claiming 512 MiB",
            zip(
                &[(bomb(Some(512 << 20)), bomb_mib << 20)],
                Claims::default(),
            ),
            Err("inflates past 8 MiB (512 MiB declared): not a module this tool reads"),
        ),
        (
            "2 GiB of zeros in 2 MB, headers claiming 100 bytes",
            zip(&[(bomb(Some(100)), bomb_mib << 20)], Claims::default()),
            Err("larger than its declared uncompressed size"),
        ),
        // An old reader reserved what the header claimed first: a capacity-overflow panic.
        (
            "zip64 size 2^63",
            zip(&lie(Some(1 << 63), None), Claims::default()),
            Err("past the 1024 MiB a wheel may"),
        ),
        (
            "zip64 size u64::MAX",
            zip(&lie(Some(u64::MAX), None), Claims::default()),
            Err("past the 1024 MiB a wheel may"),
        ),
        (
            "compressed size 2^62",
            zip(&lie(None, Some(1 << 62)), Claims::default()),
            Err("larger than its declared uncompressed size"),
        ),
        (
            "2^40 entries claimed",
            zip(
                &honest(),
                Claims {
                    entries: Some(1 << 40),
                    directory_size: None,
                },
            ),
            Err("inconsistent number of files"),
        ),
        (
            "a 2^60-byte directory claimed",
            zip(
                &honest(),
                Claims {
                    entries: None,
                    directory_size: Some(1 << 60),
                },
            ),
            Ok(read),
        ),
        (
            "400,000 entries (a 34 MB directory)",
            zip(&many, Claims::default()),
            Err("ask for more than a wheel's directory and members need"),
        ),
        (
            "the module twice",
            zip(
                &[
                    (Entry::stored(MEMBER, TEXT), TEXT.len() as u64),
                    (Entry::stored(MEMBER, b"x = 1\n"), 6),
                ],
                Claims::default(),
            ),
            Err("lists a member name more than once"),
        ),
        // pip writes `./m/x.py` and `m//x.py` where it writes `m/x.py`: the reader would read
        // one copy and pip install the other.
        (
            "the module twice, once as ./",
            zip(
                &[
                    (Entry::stored(MEMBER, TEXT), TEXT.len() as u64),
                    (Entry::stored(&format!("./{MEMBER}"), b"x = 1\n"), 6),
                ],
                Claims::default(),
            ),
            Err("the wheel names mooncake/structured_object_store.py twice \
                 (\"mooncake/structured_object_store.py\" and \"./mooncake/structured_object_store.py\")"),
        ),
        (
            "the module twice, once through ..",
            zip(
                &[
                    (
                        Entry::stored(
                            "mooncake/../mooncake//structured_object_store.py",
                            b"x = 1\n",
                        ),
                        6,
                    ),
                    (Entry::stored(MEMBER, TEXT), TEXT.len() as u64),
                ],
                Claims::default(),
            ),
            Err("the wheel names mooncake/structured_object_store.py twice"),
        ),
        (
            "a member outside the wheel",
            zip(
                &[
                    (Entry::stored(MEMBER, TEXT), TEXT.len() as u64),
                    (Entry::stored("../evil.py", b""), 0),
                ],
                Claims::default(),
            ),
            Err("member \"../evil.py\" leads outside the wheel"),
        ),
        (
            "the module not UTF-8",
            zip(
                &[(Entry::stored(MEMBER, b"x = 1\ny = '\xff'\n"), 14)],
                Claims::default(),
            ),
            Err(
                "x.whl!mooncake/structured_object_store.py:2:6: error: cannot read the module: not UTF-8",
            ),
        ),
        ("empty", Vec::new(), Err("not a wheel")),
        (
            "random bytes",
            (0..5000u32).map(|i| (i * 7919 % 251) as u8).collect(),
            Err("not a wheel"),
        ),
    ];
    for (what, bytes, expected) in cases {
        let (result, took) = read_wheel(&bytes);
        assert!(took < Duration::from_secs(10), "{what}: took {took:?}");
        match (&result, expected) {
            (Err(e), Err(says)) => assert!(e.to_string().contains(says), "{what}: {e}"),
            (Ok(Some(s)), Ok(len)) => assert_eq!(s.text.len(), len, "{what}"),
            _ => panic!("{what}: expected {expected:?}, got {result:?}"),
        }
        eprintln!("{what}: {} bytes, {took:?}: {expected:?}", bytes.len());
    }
}

/// Compressed, the 2 GiB member is about 2 MB: the archive is small.
#[test]
fn the_bomb_is_small() {
    let (stream, _) = zeros_bomb(2048);
    assert!(stream.len() < 3 << 20, "{} bytes", stream.len());
}

fn special_files(dir: &Path) -> Vec<(PathBuf, &'static str)> {
    let fifo = dir.join("fifo.whl");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    // SAFETY: mkfifo(3) on a NUL-terminated path.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let sub = dir.join("dir.whl");
    std::fs::create_dir(&sub).unwrap();
    vec![
        (fifo, "is a FIFO"),
        (sub, "is a directory"),
        (PathBuf::from("/dev/zero"), "is a character device"),
        (PathBuf::from("/dev/urandom"), "is a character device"),
    ]
}

#[test]
fn fifos_devices_and_directories_are_refused_at_once() {
    let dir = tempfile::tempdir().unwrap();
    for (path, says) in special_files(dir.path()) {
        let started = Instant::now();
        let module = ModuleSource::read_module(&path).unwrap_err();
        let wheel = ModuleSource::read_wheel(&path, MODULE).unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(5), "{path:?}");
        for e in [module, wheel] {
            assert!(e.to_string().contains(says), "{path:?}: {e}");
        }
    }
    // A directory of wheels holding them: listed, then each refused when read.
    let listed = source::wheels_in(dir.path(), "mooncake").unwrap();
    assert_eq!(listed.len(), 2, "{listed:?}");
    for wheel in listed {
        assert!(ModuleSource::read_wheel(&wheel, MODULE).is_err());
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, max_shrink_iters: 200, ..ProptestConfig::default() })]

    /// A hand-made wheel damaged anywhere (bytes overwritten, or cut): never a panic, fast.
    #[test]
    fn damaged_wheels_never_panic(
        edits in prop::collection::vec((any::<prop::sample::Index>(), any::<u64>(), 1usize..9), 1..6),
        cut in prop::option::of(any::<prop::sample::Index>()),
    ) {
        let mut bytes = zip(
            &[(Entry::stored(MEMBER, TEXT), TEXT.len() as u64)],
            Claims::default(),
        );
        for (at, value, width) in edits {
            let at = at.index(bytes.len());
            let end = (at + width).min(bytes.len());
            bytes[at..end].copy_from_slice(&value.to_le_bytes()[..end - at]);
        }
        if let Some(cut) = cut {
            bytes.truncate(cut.index(bytes.len()));
        }
        let (result, took) = read_wheel(&bytes);
        prop_assert!(took < Duration::from_secs(10));
        if let Ok(Some(s)) = result {
            prop_assert!(s.text.len() as u64 <= source::MAX_MODULE_BYTES);
        }
    }
}
