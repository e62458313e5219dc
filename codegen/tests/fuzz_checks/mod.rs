//! Checks shared by the proptest suite (`codegen/tests/fuzz_props.rs`) and the cargo-fuzz
//! target (`fuzz/fuzz_targets/parsers.rs`, which includes this file by path): whatever the
//! input, the manifest parser and the region parser return a value or a located error, and
//! never panic. Also a byte-driven mutator of the repository's real inputs, so both harnesses
//! explore "almost valid" files, not just noise.

#![allow(dead_code)] // each harness uses a different subset

use mooncake_sos_codegen::diag::Diagnostic;
use mooncake_sos_codegen::diag::Source;
use mooncake_sos_codegen::{load_str, region, render};

pub mod structure;

pub const API_TOML: &str = include_str!("../../../api.toml");
pub const DOCKERFILE: &str = include_str!("../../../docker/Dockerfile");
pub const DOCKERFILE_ROCM: &str = include_str!("../../../docker/Dockerfile.rocm");
pub const BUILD_PY: &str = include_str!("../../../docker/build.py");

/// The project's region name and the region ids the renderers splice.
pub const REGION_NAME: &str = "mooncake-sos";
pub const REGION_IDS: &[&str] = &["overlay", "fill", "pins"];

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
            if let Err(e) = render::render_all(&api) {
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
            let new_body = "RUN true\n";
            let spliced = region::splice(text, &found, REGION_NAME, id, new_body);
            let again = region::find(
                &Source::new("Dockerfile", spliced.as_str()),
                REGION_NAME,
                id,
            )
            .unwrap_or_else(|d| panic!("the spliced region is lost: {d}"));
            assert_eq!(&spliced[again.body.clone()], new_body);
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
    match mode % 4 {
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
        _ => {
            let base = [DOCKERFILE, DOCKERFILE_ROCM, BUILD_PY][usize::from(mode / 4) % 3];
            let text = mutate(base, rest, REGION_SNIPPETS);
            for id in REGION_IDS {
                check_region(&text, id);
            }
        }
    }
}

/// The structure of every output, in render order: `(path, shape)`. Panics when an output
/// does not parse as what it is (Rust, Python, a Dockerfile region): a generator bug.
pub fn output_shapes(api: &mooncake_sos_codegen::model::Api) -> Vec<(String, Vec<String>)> {
    let outputs = render::render_all(api)
        .unwrap_or_else(|e| panic!("a manifest that validated failed to render: {e}"));
    outputs
        .iter()
        .map(|o| {
            let path = o.path().to_string();
            let shape = match o {
                render::Output::File { contents, .. } if path.ends_with(".rs") => {
                    structure::rust_shape(contents)
                }
                render::Output::File { contents, .. } if path.ends_with(".py") => {
                    structure::python_shape(contents)
                }
                render::Output::File { contents, .. } => {
                    Ok(contents.lines().map(String::from).collect())
                }
                render::Output::Region { region, body, .. } if *region == "pins" => {
                    structure::python_shape(body)
                }
                render::Output::Region { body, .. } => structure::dockerfile_shape(body),
            };
            let shape = shape.unwrap_or_else(|e| panic!("generated {path} is broken: {e}"));
            (path, shape)
        })
        .collect()
}

/// A manifest holding a hostile value, beside its `twin` (the same manifest with that value
/// spelt safely): the hostile one is a located error, or renders outputs that all parse and,
/// when the twin is accepted too, have the twin's structure. A quote, a newline or `$(` in
/// a value never ends a string, a line or an instruction.
pub fn check_value_structure(hostile: &str, twin: &str) -> Outcome {
    match load_str("api.toml", hostile) {
        Err(diags) => {
            for d in &diags.0 {
                assert_located(d, "api.toml", hostile);
            }
            Outcome::Rejected
        }
        Ok(api) => {
            let shapes = output_shapes(&api);
            if let Ok(twin_api) = load_str("api.toml", twin) {
                let expected = output_shapes(&twin_api);
                for ((path, got), (_, want)) in shapes.iter().zip(&expected) {
                    assert_eq!(got, want, "{path}: a value changed the structure");
                }
                assert_eq!(shapes.len(), expected.len(), "another set of outputs");
            }
            Outcome::Parsed
        }
    }
}
