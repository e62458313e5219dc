//! Checks shared by the proptest suite (`codegen/tests/fuzz_props.rs`) and the cargo-fuzz
//! target (`fuzz/fuzz_targets/parsers.rs`, which includes this file by path): whatever the
//! input, the manifest parser and the region parser return a value or a located error, and
//! never panic. Also a byte-driven mutator of the repository's real inputs, so both harnesses
//! explore "almost valid" files, not just noise.

#![allow(dead_code)] // each harness uses a different subset

use mooncake_sos_codegen::render::Output;
use mooncake_sos_codegen::sync::{self, Status};
use mooncake_sos_codegen::{region, render};
use mooncake_sos_manifest::load_str;
use mooncake_sos_manifest::model::RelPath;
use mooncake_sos_support::diag::Diagnostic;
use mooncake_sos_support::diag::Source;
use std::collections::BTreeMap;

pub mod structure;
mod values;

#[allow(unused_imports)] // each harness uses a different subset
pub use values::{HOSTILE, check_value_bytes, check_value_structure, output_shapes, twin};

pub const API_TOML: &str = include_str!("../../../api.toml");
pub const DOCKERFILE: &str = include_str!("../../../docker/Dockerfile");
pub const DOCKERFILE_ROCM: &str = include_str!("../../../docker/Dockerfile.rocm");
pub const BUILD_PY: &str = include_str!("../../../docker/build.py");
/// The core records of api.toml's images (in image order), which the stubs render from.
pub const CORE_RECORDS: &[&str] = &[
    include_str!("../../../cores/mooncake-transfer-engine-cuda13-0.3.12.post1.json"),
    include_str!("../../../cores/mooncake-transfer-engine-non-cuda-0.3.12.post1.json"),
];

/// [`CORE_RECORDS`] read once.
pub fn cores() -> &'static render::Cores {
    static CORES: std::sync::OnceLock<render::Cores> = std::sync::OnceLock::new();
    CORES.get_or_init(|| render::Cores::from_records(CORE_RECORDS).expect("the core records"))
}

/// The project's region name and the region ids the renderers splice.
pub const REGION_NAME: &str = "mooncake-sos";
pub const REGION_IDS: &[&str] = &["overlay", "fill", "pin", "check", "pins"];

/// What a parser did with an input.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Parsed,
    Rejected,
}

/// `d` names `name:line:col` with the line and column inside `text`, its span lies in
/// `text`, and it renders without panicking.
pub fn assert_located(d: &Diagnostic, name: &str, text: &str) {
    let loc = d.location();
    let rest = loc
        .strip_prefix(name)
        .and_then(|r| r.strip_prefix(':'))
        .unwrap_or_else(|| panic!("location {loc:?} does not name {name:?}"));
    let (line, col) = rest
        .split_once(':')
        .and_then(|(l, c)| Some((l.parse::<usize>().ok()?, c.parse::<usize>().ok()?)))
        .unwrap_or_else(|| panic!("location {loc:?} is not file:line:col"));
    let lines: Vec<&str> = text.split('\n').collect();
    assert!(
        (1..=lines.len()).contains(&line),
        "{loc}: line outside the {} lines of the text ({})",
        lines.len(),
        d.message
    );
    let width = lines[line - 1].chars().count();
    assert!(
        (1..=width + 1).contains(&col),
        "{loc}: column outside line {line} of {width} chars ({})",
        d.message
    );
    assert_eq!(&*d.source.text, text, "{loc}: points into another text");
    assert!(
        d.span.start <= d.span.end && d.span.end <= text.len(),
        "{loc}: span {:?} outside a text of {} bytes",
        d.span,
        text.len()
    );
    assert!(!d.message.trim().is_empty(), "{loc}: empty message");
    let shown = d.to_string();
    assert!(shown.starts_with(&loc), "{loc}: rendering starts {shown:?}");
}

/// The manifest parser on `text`: a model that renders, or located errors.
pub fn check_manifest(text: &str) -> Outcome {
    match load_str("api.toml", text) {
        Ok(api) => {
            // A manifest that validates must render: a render error is a generator bug.
            if let Err(e) = render::render_all(&api, cores()) {
                panic!("a manifest that validated failed to render: {e}");
            }
            Outcome::Parsed
        }
        Err(diags) => {
            assert!(!diags.is_empty(), "an error with no diagnostic");
            for d in &diags.0 {
                assert_located(d, "api.toml", text);
            }
            Outcome::Rejected
        }
    }
}

/// The region parser on `text`: a region whose ranges lie in the text and survive a splice,
/// or a located error.
pub fn check_region(text: &str, id: &str) -> Outcome {
    let source = Source::new("Dockerfile", text);
    match region::find(&source, REGION_NAME, id) {
        Ok(found) => {
            let (body, end) = (found.body.clone(), found.end_line.clone());
            assert!(
                body.start <= body.end && body.end <= end.start && end.end <= text.len(),
                "ranges out of order: body {body:?}, end line {end:?}, {} bytes",
                text.len()
            );
            for i in [body.start, body.end, end.end] {
                assert!(text.is_char_boundary(i), "offset {i} splits a character");
            }
            let _ = found.is_hand_edited(text);
            let new_body = "RUN true\nRUN false\n";
            let spliced = region::splice(text, &found, REGION_NAME, id, new_body);
            let again = region::find(
                &Source::new("Dockerfile", spliced.as_str()),
                REGION_NAME,
                id,
            )
            .unwrap_or_else(|d| panic!("the spliced region is lost: {d}"));
            // The body takes its begin marker's line ending.
            let want = if found.crlf {
                crlf(new_body)
            } else {
                new_body.to_owned()
            };
            assert_eq!(&spliced[again.body.clone()], want);
            assert_eq!(region::checksum(&want), region::checksum(new_body));
            assert!(
                !again.is_hand_edited(&spliced),
                "a fresh splice reads as hand-edited"
            );
            assert_eq!(
                &spliced[..body.start],
                &text[..body.start],
                "text before changed"
            );
            Outcome::Parsed
        }
        Err(d) => {
            assert_located(&d, "Dockerfile", text);
            Outcome::Rejected
        }
    }
}

/// Every line ending as CRLF.
pub fn crlf(text: &str) -> String {
    text.replace("\r\n", "\n").replace('\n', "\r\n")
}

/// The repository's region targets by path, optionally in CRLF.
pub fn real_targets(in_crlf: bool) -> BTreeMap<String, String> {
    [
        ("docker/Dockerfile", DOCKERFILE),
        ("docker/Dockerfile.rocm", DOCKERFILE_ROCM),
        ("docker/build.py", BUILD_PY),
    ]
    .into_iter()
    .map(|(p, t)| (p.to_owned(), if in_crlf { crlf(t) } else { t.to_owned() }))
    .collect()
}

/// Render, then plan the outputs against `files` (in memory): never a panic; errors located
/// in the text they name; and a plan that succeeds is a fixed point (planning again
/// against what it would write changes nothing) whose regions hold exactly the rendered
/// bodies, in their begin marker's line ending. `None` when the manifest is rejected.
pub fn check_plan(manifest: &str, files: &BTreeMap<String, String>) -> Option<Outcome> {
    // The repository's manifest is rendered once: rendering (the bindings above all) is
    // most of a run's time, and the fuzzer plans it against edited targets again and again.
    static REAL: std::sync::OnceLock<(String, Vec<Output>)> = std::sync::OnceLock::new();
    let rendered;
    let (name, outputs) = if manifest == API_TOML {
        let (name, outputs) = REAL.get_or_init(|| {
            let api = load_str("api.toml", API_TOML).expect("api.toml loads");
            let outputs = render::render_all(&api, cores()).expect("api.toml renders");
            (api.name, outputs)
        });
        (name.as_str(), outputs)
    } else {
        let api = load_str("api.toml", manifest).ok()?;
        let outputs = render::render_all(&api, cores()).expect("a valid manifest renders");
        rendered = (api.name, outputs);
        (rendered.0.as_str(), &rendered.1)
    };
    let source = Source::new("api.toml", manifest);
    let read = |files: &BTreeMap<String, String>, p: &RelPath| files.get(p.as_str()).cloned();
    let changes = match sync::plan_texts(&source, name, outputs, &|p| read(files, p), false) {
        Ok(changes) => changes,
        Err(diags) => {
            for d in &diags.0 {
                let text = d.source.text.to_string();
                assert_located(d, &d.source.name.clone(), &text);
                let named = d.source.name == "api.toml" || files.contains_key(&d.source.name);
                assert!(named, "an error in an unknown file {}", d.source.name);
            }
            return Some(Outcome::Rejected);
        }
    };
    let mut written = files.clone();
    for c in &changes {
        let new = c.new.clone().expect("no removals without a file system");
        written.insert(c.path.to_string(), new);
    }
    let again = sync::plan_texts(&source, name, outputs, &|p| read(&written, p), false)
        .unwrap_or_else(|d| panic!("what a plan writes fails the next plan: {d}"));
    for c in &again {
        assert_eq!(c.status, Status::Unchanged, "{} changes twice", c.path);
    }
    for o in outputs {
        let Output::Region {
            path,
            region: id,
            body,
        } = o
        else {
            continue;
        };
        let text = &written[path.as_str()];
        let found = region::find(&Source::new(path.as_str(), text.as_str()), name, id)
            .unwrap_or_else(|d| panic!("{path}: the written region is lost: {d}"));
        let want = if found.crlf { crlf(body) } else { body.clone() };
        assert_eq!(&text[found.body.clone()], want, "{path}: region {id}");
        assert!(
            !found.is_hand_edited(text),
            "{path}: fresh region reads as hand-edited"
        );
    }
    Some(Outcome::Parsed)
}

/// Values a mutation may put on the right of `key = `.
const VALUES: &[&str] = &[
    "\"\"",
    "\"x\"",
    "0",
    "-1",
    "99999999999999999999",
    "true",
    "[]",
    "{}",
    "\"4dbe5a4\"",
    "'''",
    "\"\"\"",
    "[1, \"a\"]",
    "{ name = \"x\" }",
    "[{ name = \"a\", kind = \"keyword\" }]",
    "1.5",
    "nan",
    "1979-05-27",
    "\"a\\u0000b\"",
    "\"../../etc/passwd\"",
    "\"héllo 日本\"",
    "\"generated/python/x.py\"",
];

/// Characters a flip may put anywhere.
const CHARS: &[char] = &[
    '"', '\'', '[', ']', '{', '}', '=', '\n', '#', ',', '\\', '.', ' ', 'é', '\0', '\r', 'x', '0',
    '\t', '日', ':', '-',
];

/// Lines a mutation may insert into a manifest.
pub const MANIFEST_SNIPPETS: &[&str] = &[
    "[[symbol]]",
    "[[symbol.method]]",
    "[[native]]",
    "[upstream]",
    "[shim]",
    "[drop]",
    "[image.cuda]",
    "[image.x]",
    "name = \"x\"",
    "kind = \"function\"",
    "kind = \"class\"",
    "kind = \"alias\"",
    "target = \"put\"",
    "params = [ { name = \"a\" } ]",
    "strategy = \"fill\"",
    "x = 1",
    "#",
    "",
];

/// Lines a mutation may insert into a file with regions.
pub const REGION_SNIPPETS: &[&str] = &[
    "# >>> api.toml: mooncake-sos overlay (generated by cargo xtask regen; do not edit)",
    "# >>> api.toml: mooncake-sos fill (generated by cargo xtask regen; do not edit)",
    "# >>> api.toml: mooncake-sos pins (x)",
    "# >>> api.toml: other overlay (x)",
    "# >>> api.toml:",
    "# >>> api.toml: mooncake-sos (x)",
    "# <<< mooncake-sos overlay",
    "# <<< mooncake-sos fill sha256:00000000",
    "# <<< mooncake-sos pins sha256:XYZ",
    "# <<< mooncake-sos overlay sha256:0123abcd extra",
    "# <<< other overlay",
    "# <<<",
    "  # <<< mooncake-sos overlay\r",
    "RUN true",
    "",
];

/// Applies the edits `script` encodes (5 bytes each: op, index, argument) to `base`'s lines:
/// delete, duplicate, swap, flip a character, change a value, truncate, insert a snippet,
/// duplicate a block. Deterministic, so a failing script reproduces.
pub fn mutate(base: &str, script: &[u8], snippets: &[&str]) -> String {
    let mut lines: Vec<String> = base.split_inclusive('\n').map(str::to_owned).collect();
    for op in script.chunks(5) {
        let byte = |i: usize| usize::from(op.get(i).copied().unwrap_or(0));
        let (kind, idx, arg) = (byte(0) % 9, byte(1) << 8 | byte(2), byte(3) << 8 | byte(4));
        if lines.is_empty() {
            lines.push(String::new());
        }
        let n = lines.len();
        let i = idx % n;
        match kind {
            0 => {
                lines.remove(i);
            }
            1 => lines.insert(i, lines[i].clone()),
            2 => lines.swap(i, arg % n),
            3 => {
                let mut chars: Vec<char> = lines[i].chars().collect();
                let c = CHARS[(arg >> 8) % CHARS.len()];
                if chars.is_empty() {
                    chars.push(c);
                } else {
                    let at = arg % chars.len();
                    chars[at] = c;
                }
                lines[i] = chars.into_iter().collect();
            }
            4 => {
                if let Some((key, _)) = lines[i].split_once(" = ") {
                    lines[i] = format!("{key} = {}\n", VALUES[arg % VALUES.len()]);
                }
            }
            5 => {
                let chars: Vec<char> = lines[i].chars().collect();
                lines[i] = chars[..arg % (chars.len() + 1)].iter().collect();
            }
            6 => lines.insert(i, format!("{}\n", snippets[arg % snippets.len()])),
            7 => {
                let block: Vec<String> = lines[i..(i + arg % 24).min(n)].to_vec();
                lines.extend(block);
            }
            _ => {
                // Move a value from one line to another (types and shapes in the wrong place).
                let from = lines[arg % n].split_once(" = ").map(|(_, v)| v.to_owned());
                if let (Some(v), Some((key, _))) = (from, lines[i].split_once(" = ")) {
                    lines[i] = format!("{key} = {v}");
                }
            }
        }
    }
    lines.concat()
}

/// The cargo-fuzz entry: the first byte picks a harness, the rest is its input.
pub fn fuzz_one(data: &[u8]) {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    match mode % 9 {
        // A value of the real manifest replaced by the input: structure never changes.
        8 => check_value_bytes(usize::from(mode / 9), rest),
        0 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                check_manifest(text);
            }
        }
        1 => {
            check_manifest(&mutate(API_TOML, rest, MANIFEST_SNIPPETS));
        }
        2 => {
            if let Ok(text) = std::str::from_utf8(rest) {
                for id in REGION_IDS {
                    check_region(text, id);
                }
            }
        }
        3 => {
            let base = [DOCKERFILE, DOCKERFILE_ROCM, BUILD_PY][usize::from(mode / 8) % 3];
            let text = mutate(base, rest, REGION_SNIPPETS);
            for id in REGION_IDS {
                check_region(&text, id);
            }
        }
        // Render and plan: an edited manifest against the real targets (LF or CRLF).
        4 | 5 => {
            let manifest = mutate(API_TOML, rest, MANIFEST_SNIPPETS);
            check_plan(&manifest, &real_targets(mode % 8 == 5));
        }
        // The real manifest against an edited target (LF or CRLF).
        _ => {
            let mut files = real_targets(mode % 8 == 7);
            let path = [
                "docker/Dockerfile",
                "docker/Dockerfile.rocm",
                "docker/build.py",
            ][usize::from(mode / 8) % 3];
            let text = mutate(&files[path], rest, REGION_SNIPPETS);
            files.insert(path.to_owned(), text);
            check_plan(API_TOML, &files);
        }
    }
}
