//! Property tests of the manifest parser (`load_str`) and the region parser (`region::find`):
//! arbitrary text and mutated copies of the repository's real files never panic, never hang
//! and either parse or return a located error. The long run is the cargo-fuzz target
//! (scripts/fuzz.sh), which shares these checks. `PROPTEST_CASES=N` scales every property.

mod fuzz_checks;

use fuzz_checks::{
    API_TOML, BUILD_PY, DOCKERFILE, DOCKERFILE_ROCM, MANIFEST_SNIPPETS, Outcome, REGION_IDS,
    REGION_SNIPPETS, check_manifest, check_plan, check_region, crlf, mutate, real_targets,
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

/// Sequences that are not UTF-8.
const BAD_UTF8: &[&[u8]] = &[
    b"\xff",
    b"\xc3",
    b"\x80",
    b"\xc0\x80",
    b"\xed\xa0\x80",
    b"\xf4\x90\x80\x80",
];

/// A value no message should quote whole.
fn huge_value() -> impl Strategy<Value = String> {
    (1usize..4, 10_000usize..200_000).prop_map(|(kind, n)| match kind {
        1 => "A".repeat(n),
        2 => "é日".repeat(n / 3),
        _ => "x ".repeat(n / 2),
    })
}

proptest! {
    #![proptest_config(cases(300))]

    /// Render + plan (in memory) of an edited manifest against the real targets, in LF and
    /// in CRLF: located errors, or a plan that is a fixed point.
    #[test]
    fn plan_of_mutated_manifest(ops in script(), in_crlf in any::<bool>()) {
        let manifest = mutate(API_TOML, &ops, MANIFEST_SNIPPETS);
        within(format!("{}{manifest}", u8::from(in_crlf)), |t| {
            let (flag, manifest) = t.split_at(1);
            check_plan(manifest, &real_targets(flag == "1"))
        });
    }

    /// The real manifest against an edited target, LF or CRLF.
    #[test]
    fn plan_against_mutated_targets(which in 0usize..3, ops in script(), in_crlf in any::<bool>()) {
        let mut files = real_targets(in_crlf);
        let path = ["docker/Dockerfile", "docker/Dockerfile.rocm", "docker/build.py"][which];
        let text = mutate(&files[path], &ops, REGION_SNIPPETS);
        files.insert(path.to_owned(), text);
        prop_assert!(check_plan(API_TOML, &files).is_some());
    }

    /// A bad byte anywhere in the manifest file: one error, at that byte's line and column.
    #[test]
    fn non_utf8_anywhere_in_the_manifest_is_located(at in any::<prop::sample::Index>(), bad in prop::sample::select(BAD_UTF8.to_vec()), in_crlf in any::<bool>()) {
        let text = if in_crlf { crlf(API_TOML) } else { API_TOML.to_owned() };
        let mut at = at.index(text.len() + 1);
        while !text.is_char_boundary(at) {
            at -= 1;
        }
        let mut bytes = text.as_bytes().to_vec();
        bytes.splice(at..at, bad.iter().copied());
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("api.toml");
        std::fs::write(&path, &bytes).unwrap();
        let err = mooncake_sos_manifest::load(&path, "api.toml").unwrap_err();
        prop_assert_eq!(err.0.len(), 1);
        let line = text[..at].matches('\n').count() + 1;
        let col = text[..at].rsplit('\n').next().unwrap().chars().count() + 1;
        prop_assert_eq!(err.0[0].location(), format!("api.toml:{line}:{col}"));
        let want = format!("api.toml:{line}:{col}: error: the manifest is not UTF-8");
        prop_assert!(err.0[0].to_string().starts_with(&want), "{}", err.0[0]);
    }

    /// A huge value put where a value goes: every error stays a few short lines.
    #[test]
    fn errors_quoting_huge_values_stay_short(ops in script(), value in huge_value(), line in any::<prop::sample::Index>()) {
        let mut lines: Vec<String> = mutate(API_TOML, &ops, MANIFEST_SNIPPETS)
            .split_inclusive('\n')
            .map(str::to_owned)
            .collect();
        let at = line.index(lines.len().max(1)).min(lines.len().saturating_sub(1));
        if let Some(l) = lines.get_mut(at)
            && let Some((key, _)) = l.split_once(" = ")
        {
            *l = format!("{key} = \"{value}\"\n");
        }
        let text = lines.concat();
        if let Err(diags) = mooncake_sos_manifest::load_str("api.toml", &text) {
            for d in &diags.0 {
                let shown = d.to_string();
                prop_assert!(shown.len() < 4000, "{} bytes: {}", shown.len(), &shown[..300]);
                prop_assert!(shown.lines().all(|l| l.chars().count() <= 300), "{}", shown);
            }
        }
    }
}

/// The properties above can fail: the real inputs parse, and the mutator breaks them often.
#[test]
fn the_checks_see_both_outcomes() {
    assert_eq!(check_manifest(API_TOML), Outcome::Parsed);
    assert_eq!(check_region(DOCKERFILE, "pin"), Outcome::Parsed);
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
    // Planning: the real tree plans, in LF and CRLF; a broken target is rejected.
    for in_crlf in [false, true] {
        assert_eq!(
            check_plan(API_TOML, &real_targets(in_crlf)),
            Some(Outcome::Parsed)
        );
        let mut files = real_targets(in_crlf);
        files.insert(
            "docker/build.py".into(),
            "# >>> api.toml: mooncake-sos pins (x)\n".into(),
        );
        assert_eq!(check_plan(API_TOML, &files), Some(Outcome::Rejected));
    }
}

/// Found by the properties above: a dataclass field whose type or default has no Rust form
/// validated, then failed in the bindings renderer with an unlocated "internal error".
#[test]
fn dataclass_fields_without_a_rust_form_are_located_errors() {
    let cases = [
        (
            "{ name = \"codec\", type = \"str\",",
            "{ name = \"codec\", type = \"BundleStore\",",
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
        let err = mooncake_sos_manifest::load_str("api.toml", &text).unwrap_err();
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
