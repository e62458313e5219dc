//! Property tests of the manifest parser (`load_str`) and the region parser (`region::find`):
//! arbitrary text and mutated copies of the repository's real files never panic, never hang
//! and either parse or return a located error. The long run is the cargo-fuzz target
//! (scripts/fuzz.sh), which shares these checks. `PROPTEST_CASES=N` scales every property.

mod fuzz_checks;

use fuzz_checks::{
    API_TOML, BUILD_PY, DOCKERFILE, DOCKERFILE_ROCM, MANIFEST_SNIPPETS, Outcome, REGION_IDS,
    REGION_SNIPPETS, check_manifest, check_region, mutate,
};
use proptest::prelude::*;
use std::sync::mpsc;
use std::time::Duration;

/// Generous for a debug build on a loaded machine; a hang or a blow-up is far beyond it.
const PER_INPUT: Duration = Duration::from_secs(10);

/// Runs `f(input)` on a thread and fails if it does not finish within [`PER_INPUT`].
fn within<T: Send + 'static>(input: String, f: fn(&str) -> T) -> T {
    let (tx, rx) = mpsc::channel();
    let shown: String = input.chars().take(300).collect();
    std::thread::spawn(move || {
        let _ = tx.send(f(&input));
    });
    match rx.recv_timeout(PER_INPUT) {
        Ok(v) => v,
        Err(mpsc::RecvTimeoutError::Timeout) => {
            panic!("no answer after {PER_INPUT:?} on {shown:?}")
        }
        // The thread panicked: its message is already printed; fail with the input.
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("panicked on {shown:?}"),
    }
}

fn cases(default: u32) -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default);
    ProptestConfig {
        cases,
        // Shrinking re-runs inputs; keep a failure's report quick.
        max_shrink_iters: 2000,
        ..ProptestConfig::default()
    }
}

/// TOML-looking noise: keys, tables, strings, arrays in random order.
fn toml_like() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("[[symbol]]\n".to_owned()),
        Just("[upstream]\n".to_owned()),
        Just("[image.x]\n".to_owned()),
        Just("name = ".to_owned()),
        Just("kind = ".to_owned()),
        Just(" = ".to_owned()),
        Just("\"".to_owned()),
        Just("'''".to_owned()),
        Just("[".to_owned()),
        Just("]".to_owned()),
        Just("{".to_owned()),
        Just("}".to_owned()),
        Just(",".to_owned()),
        Just("\n".to_owned()),
        "[a-z_.]{1,12}",
        "\"[^\"\\\\]{0,12}\"",
        "-?[0-9]{1,25}",
    ];
    prop::collection::vec(token, 0..80).prop_map(|t| t.concat())
}

fn script() -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(any::<u8>(), 0..60)
}

proptest! {
    #![proptest_config(cases(1500))]

    #[test]
    fn manifest_parser_on_arbitrary_text(text in any::<String>()) {
        within(text, check_manifest);
    }

    #[test]
    fn manifest_parser_on_toml_like_text(text in toml_like()) {
        within(text, check_manifest);
    }

    #[test]
    fn manifest_parser_on_mutated_api_toml(ops in script()) {
        within(mutate(API_TOML, &ops, MANIFEST_SNIPPETS), check_manifest);
    }

    #[test]
    fn region_parser_on_arbitrary_text(text in any::<String>()) {
        within(text, |t| REGION_IDS.iter().map(|id| check_region(t, id)).collect::<Vec<_>>());
    }

    #[test]
    fn region_parser_on_mutated_docker_files(which in 0usize..3, ops in script()) {
        let base = [DOCKERFILE, DOCKERFILE_ROCM, BUILD_PY][which];
        within(
            mutate(base, &ops, REGION_SNIPPETS),
            |t| REGION_IDS.iter().map(|id| check_region(t, id)).collect::<Vec<_>>(),
        );
    }
}

/// The properties above can fail: the real inputs parse, and the mutator breaks them often.
#[test]
fn the_checks_see_both_outcomes() {
    assert_eq!(check_manifest(API_TOML), Outcome::Parsed);
    assert_eq!(check_region(DOCKERFILE, "overlay"), Outcome::Parsed);
    assert_eq!(check_region(DOCKERFILE_ROCM, "fill"), Outcome::Parsed);
    assert_eq!(check_region(BUILD_PY, "pins"), Outcome::Parsed);
    let mut rejected = 0;
    let mut parsed = 0;
    for seed in 0u8..200 {
        let ops = [
            seed % 9,
            seed,
            seed.wrapping_mul(7),
            seed.wrapping_mul(13),
            seed,
        ];
        match check_manifest(&mutate(API_TOML, &ops, MANIFEST_SNIPPETS)) {
            Outcome::Parsed => parsed += 1,
            Outcome::Rejected => rejected += 1,
        }
    }
    assert!(
        rejected > 20 && parsed > 20,
        "parsed {parsed}, rejected {rejected}"
    );
}

/// Bytes that are not UTF-8 reach the parser through `load`: a located error, not a panic.
#[test]
fn non_utf8_manifest_file_is_a_located_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("api.toml");
    let mut bytes = API_TOML.as_bytes().to_vec();
    bytes.splice(40..40, [0xff, 0xfe, 0xc3]);
    std::fs::write(&path, &bytes).unwrap();
    let err = mooncake_sos_codegen::load(&path, "api.toml").unwrap_err();
    assert_eq!(err.0.len(), 1);
    assert_eq!(err.0[0].location(), "api.toml:1:1");
    assert!(err.0[0].message.contains("UTF-8"), "{}", err.0[0].message);
}

/// Found by the properties above: a dataclass field whose type or default has no Rust form
/// validated, then failed in the bindings renderer with an unlocated "internal error".
#[test]
fn dataclass_fields_without_a_rust_form_are_located_errors() {
    let cases = [
        (
            "{ name = \"codec\", type = \"str\" }",
            "{ name = \"codec\", type = \"BundleStore\" }",
            "\"BundleStore\"",
            "has no Rust binding",
        ),
        (
            "type = \"bool\", default = \"True\"",
            "type = \"bool\", default = \"None\"",
            "\"None\"",
            "has no Rust value",
        ),
        // Sliced as a quoted string, this one split the 'é' in the renderer.
        (
            "type = \"bool\", default = \"True\"",
            "type = \"bool\", default = \"'é\"",
            "\"'é\"",
            "not a Python expression",
        ),
        (
            "type = \"bool\", default = \"True\"",
            "type = \"bool\", default = \"x + 1\"",
            "\"x + 1\"",
            "has no Rust value",
        ),
        (
            "default_factory = \"dict\"",
            "default_factory = \"list\"",
            "\"list\"",
            "expected \"dict\"",
        ),
    ];
    for (from, to, at, message) in cases {
        assert!(API_TOML.contains(from), "api.toml lacks {from}");
        let text = API_TOML.replacen(from, to, 1);
        assert_eq!(check_manifest(&text), Outcome::Rejected, "{to}");
        let err = mooncake_sos_codegen::load_str("api.toml", &text).unwrap_err();
        let offset = text.find(to).unwrap() + to.find(at).unwrap();
        let line = text[..offset].matches('\n').count() + 1;
        let col = offset - text[..offset].rfind('\n').map_or(0, |i| i + 1) + 1;
        let d = &err.0[0];
        assert_eq!(
            d.location(),
            format!("api.toml:{line}:{col}"),
            "{to}: {}",
            d.message
        );
        assert!(d.message.contains(message), "{to}: {}", d.message);
    }
}
