//! Line endings and encodings. Region targets and the manifest in CRLF (as a Windows
//! checkout with git's autocrlf has them) are current as they are, keep CRLF on every line
//! when regen rewrites their regions, and read as current again once turned back to LF.
//! A byte that is not UTF-8, put anywhere in the manifest, a region target or a module
//! (seeded, 40 places per file), is an exit-2 error located at that byte's line and column.

use crate::common::RegenIn;
use crate::common::{Sandbox, XTASK};
use std::process::Command;

const TARGETS: [&str; 3] = [
    "docker/Dockerfile",
    "docker/Dockerfile.rocm",
    "docker/build.py",
];

fn crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

fn bare_lf_lines(text: &str) -> Vec<usize> {
    text.split_inclusive('\n')
        .enumerate()
        .filter(|(_, l)| l.ends_with('\n') && !l.ends_with("\r\n"))
        .map(|(i, _)| i + 1)
        .collect()
}

/// The text outside the region bodies (the markers' checksums blanked).
fn outside_regions(text: &str) -> String {
    let mut out = String::new();
    let mut inside = false;
    for line in text.split_inclusive('\n') {
        if line.starts_with("# <<< ") {
            inside = false;
            out.push_str("# <<< END\n");
        } else if !inside {
            out.push_str(line);
        }
        if line.starts_with("# >>> api.toml:") {
            inside = true;
        }
    }
    out
}

#[test]
fn crlf_targets_and_manifest_stay_crlf() {
    let sb = Sandbox::new();
    for path in TARGETS.iter().chain(&["api.toml"]) {
        sb.write(path, &crlf(&sb.read(path)));
    }
    let (code, out) = sb.regen(&["--check"]);
    assert_eq!(code, 0, "a CRLF checkout is current: {out}");
    let before: Vec<String> = TARGETS.iter().map(|p| sb.read(p)).collect();
    // Another pin and base tags: every region is rewritten.
    sb.move_pin_and_base_tags();
    let (code, out) = sb.regen(&[]);
    assert_eq!(code, 0, "{out}");
    for (path, old) in TARGETS.iter().zip(&before) {
        let new = sb.read(path);
        assert_ne!(&new, old, "{path} was not rewritten");
        assert_eq!(
            bare_lf_lines(&new),
            Vec::<usize>::new(),
            "{path}: LF lines in a CRLF file"
        );
        assert_eq!(
            outside_regions(&new),
            outside_regions(old),
            "{path}: changed outside"
        );
    }
    assert_eq!(sb.regen(&["--check"]).0, 0);
    // Back to LF, as a checkout on Linux would have them: still current (the checksum
    // is over LF).
    for path in TARGETS.iter().chain(&["api.toml"]) {
        sb.write(path, &sb.read(path).replace("\r\n", "\n"));
    }
    let (code, out) = sb.regen(&["--check"]);
    assert_eq!(code, 0, "{out}");
}

/// A region's line ending is its begin marker's: an LF file with one CRLF region gets a
/// CRLF body, and the rest of the file stays LF.
#[test]
fn a_region_follows_its_begin_markers_line_ending() {
    let sb = Sandbox::new();
    let text = sb.read("docker/Dockerfile");
    let begin = text.find("# >>> api.toml:").unwrap();
    let end = text.find("# <<< ").unwrap();
    let end = end + text[end..].find('\n').unwrap() + 1;
    let mixed = format!(
        "{}{}{}",
        &text[..begin],
        crlf(&text[begin..end]),
        &text[end..]
    );
    sb.write("docker/Dockerfile", &mixed);
    assert_eq!(sb.regen(&["--check"]).0, 0);
    sb.edit("api.toml", "\"v0.5.16-cu130\"", "\"v0.5.17-cu130\"");
    assert_eq!(sb.regen(&[]).0, 0);
    let new = sb.read("docker/Dockerfile");
    let lines: Vec<&str> = new.split_inclusive('\n').collect();
    let first = text[..begin].matches('\n').count();
    let last = first + text[begin..end].matches('\n').count();
    for (i, line) in lines.iter().enumerate() {
        let want_crlf = (first..last).contains(&i);
        assert_eq!(
            line.ends_with("\r\n"),
            want_crlf,
            "line {}: {line:?}",
            i + 1
        );
    }
}

/// xorshift64*, seeded: the places the bad bytes go.
struct Rng(u64);

impl Rng {
    fn below(&mut self, n: usize) -> usize {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_F491_4F6C_DD1D) % n as u64) as usize
    }
}

/// Sequences that are not UTF-8: a lone 0xff, a cut 2-byte character, a continuation byte,
/// an overlong NUL, a UTF-16 surrogate.
const BAD: &[&[u8]] = &[b"\xff", b"\xc3", b"\x80", b"\xc0\x80", b"\xed\xa0\x80"];

#[test]
fn a_byte_that_is_not_utf8_is_located_anywhere() {
    let sb = Sandbox::new();
    let module = sb.path("m.py");
    std::fs::write(
        &module,
        "class A:\n    def put(self, data, *, é='x'):\n        pass\n",
    )
    .unwrap();
    let mut rng = Rng(0x5eed_1234_abcd_0001);
    let files = ["api.toml", "docker/Dockerfile", "docker/build.py", "m.py"];
    let mut runs = 0;
    for file in files {
        let original = std::fs::read(sb.path(file)).unwrap();
        let text = String::from_utf8(original.clone()).unwrap();
        for _ in 0..40 {
            // A char boundary, and one of the bad sequences there.
            let mut at = rng.below(text.len() + 1);
            while !text.is_char_boundary(at) {
                at -= 1;
            }
            let bad = BAD[rng.below(BAD.len())];
            let mut bytes = original.clone();
            bytes.splice(at..at, bad.iter().copied());
            std::fs::write(sb.path(file), &bytes).unwrap();
            let line = text[..at].matches('\n').count() + 1;
            let col = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
            let args: Vec<String> = if file == "m.py" {
                vec!["verify".into(), "--module".into(), "m.py".into()]
            } else {
                vec!["regen".into(), "--check".into()]
            };
            let out = Command::new(XTASK)
                .args(&args)
                .args(["--manifest", "api.toml"])
                .current_dir(sb.dir.path())
                .output()
                .unwrap();
            let err = String::from_utf8_lossy(&out.stderr);
            assert_eq!(out.status.code(), Some(2), "{file} +{bad:?} at {at}: {err}");
            let want = format!("{file}:{line}:{col}: error: ");
            assert!(
                err.starts_with(&want),
                "{file} +{bad:?} at {at}: want {want}, got {err}"
            );
            assert!(err.contains("not UTF-8"), "{err}");
            runs += 1;
        }
        std::fs::write(sb.path(file), &original).unwrap();
    }
    eprintln!("{runs} bad bytes, each located");
}
