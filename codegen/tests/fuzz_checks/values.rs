//! The injection property: a manifest value, however hostile, is a located error or leaves
//! every output's structure as the same value spelt safely leaves it (see `structure`).

use super::{API_TOML, Outcome, assert_located, structure};
use mooncake_sos_codegen::render;
use mooncake_sos_manifest::load_str;

/// The structure of every output, in render order: `(path, shape)`. Panics when an output
/// does not parse as what it is (Rust, Python, a Dockerfile region): a generator bug.
pub fn output_shapes(api: &mooncake_sos_manifest::model::Api) -> Vec<(String, Vec<String>)> {
    let outputs = render::render_all(api, super::cores())
        .unwrap_or_else(|e| panic!("a manifest that validated failed to render: {e}"));
    outputs
        .iter()
        .map(|o| {
            let path = o.path().to_string();
            let shape = match o {
                render::Output::File { contents, .. } if path.ends_with(".rs") => {
                    structure::rust_shape(contents)
                }
                render::Output::File { contents, .. } if path.ends_with(".pyi") => {
                    structure::stub_shape(contents)
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
/// spelt safely): the hostile one is a located error, or renders outputs that all parse and
/// have the twin's structure. Where the twin is refused (`x` for `>` spoils a version
/// specifier), the real api.toml is the reference instead: every parsed shape blanks names and
/// literals, so only the plain files (lines as they are) are left out of that comparison.
/// A quote, a newline or `$(` in a value never ends a string, a line or an instruction.
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
            let (expected, plain_too) = match load_str("api.toml", twin) {
                Ok(twin_api) => (output_shapes(&twin_api), true),
                Err(_) => (real_shapes().clone(), false),
            };
            let paths =
                |s: &[(String, Vec<String>)]| s.iter().map(|(p, _)| p.clone()).collect::<Vec<_>>();
            assert_eq!(paths(&shapes), paths(&expected), "another set of outputs");
            for ((path, got), (_, want)) in shapes.iter().zip(&expected) {
                if plain_too || is_parsed(path) {
                    assert_eq!(got, want, "{path}: a value changed the structure");
                }
            }
            Outcome::Parsed
        }
    }
}

/// The output shapes of the repository's own api.toml, rendered once.
fn real_shapes() -> &'static Vec<(String, Vec<String>)> {
    static REAL: std::sync::OnceLock<Vec<(String, Vec<String>)>> = std::sync::OnceLock::new();
    REAL.get_or_init(|| output_shapes(&load_str("api.toml", API_TOML).expect("api.toml loads")))
}

/// Whether `output_shapes` parses the output at `path` (Rust, Python, a Dockerfile region)
/// rather than keeping its lines as they are.
fn is_parsed(path: &str) -> bool {
    path.ends_with(".rs") || is_python(path) || !path.starts_with("generated/")
}

/// Python source: the shim, and the stubs (`.pyi`).
fn is_python(path: &str) -> bool {
    path.ends_with(".py") || path.ends_with(".pyi")
}

/// The hostile alphabet of the injection property; [`twin`] spells each of these `x`.
pub const HOSTILE: &[char] = &[
    '"', '\'', '$', '`', '\\', '\n', '\r', ' ', '\t', '#', '(', ')', ';', '|', '&', '{', '}', '<',
    '>', '*', '\u{2028}', '\0',
];

/// The same text with every hostile character spelt `x`.
pub fn twin(s: &str) -> String {
    s.chars()
        .map(|c| if HOSTILE.contains(&c) { 'x' } else { c })
        .collect()
}

/// The `pick`-th basic string value of the real api.toml (`key = "..."`, also inside inline
/// tables) replaced by `value`, escaped as TOML wants it.
pub fn with_string_value(pick: usize, value: &str) -> Option<String> {
    let spans: Vec<(usize, usize)> = API_TOML
        .match_indices("= \"")
        .filter_map(|(at, _)| {
            let start = at + 3;
            let len = API_TOML[start..].find('"')?;
            Some((start, start + len))
        })
        .collect();
    let &(start, end) = spans.get(pick % spans.len().max(1))?;
    let mut escaped = String::new();
    for c in value.chars() {
        match c {
            '"' => escaped.push_str("\\\""),
            '\\' => escaped.push_str("\\\\"),
            c if c.is_control() => escaped.push_str(&format!("\\u{:04X}", u32::from(c))),
            c => escaped.push(c),
        }
    }
    Some(format!(
        "{}{escaped}{}",
        &API_TOML[..start],
        &API_TOML[end..]
    ))
}

/// The fuzz input as one manifest value (the `pick`-th), beside its safe twin.
pub fn check_value_bytes(pick: usize, data: &[u8]) {
    let value = String::from_utf8_lossy(data);
    if let (Some(hostile), Some(safe)) = (
        with_string_value(pick, &value),
        with_string_value(pick, &twin(&value)),
    ) {
        check_value_structure(&hostile, &safe);
    }
}
