//! Upstream modules are untrusted: nested 100,000 and 1,000,000 deep in each of 20 ways
//! Python nests, indented past CPython's limit, random token soup (proptest), and the real
//! modules from the test set-up. Each parses within the bounds or is a located error within
//! seconds: never an abort or a stack overflow.

use mooncake_sos_pysource::bounded_parse;
use mooncake_sos_pysource::extract::extract;
use mooncake_sos_pysource::source::{self, LoadError, ModuleSource};
use proptest::prelude::*;
use std::path::Path;
use std::time::{Duration, Instant};

const MODULE: &str = "mooncake.structured_object_store";

/// `x = ` + `open` * n + `1` + `close` * n, for each way Python nests.
fn nested(kind: &str, n: usize) -> String {
    let wrap = |open: &str, close: &str| format!("x = {}1{}\n", open.repeat(n), close.repeat(n));
    match kind {
        "parentheses" => wrap("(", ")"),
        "lists" => wrap("[", "]"),
        "dicts" => wrap("{1: ", "}"),
        "calls" => wrap("f(", ")"),
        "f-strings" => wrap("f'{", "}'"),
        "walrus" => wrap("(a := ", ")"),
        "comprehensions" => wrap("[a for a in ", "]"),
        "minus" => wrap("-", ""),
        "tilde" => wrap("~", ""),
        "not" => wrap("not ", ""),
        "lambda" => wrap("lambda: ", ""),
        "lambda with parameters" => wrap("lambda a, b=1: ", ""),
        "await" => format!("async def g():\n    x = {}1\n", "await ".repeat(n)),
        "plus chain" => format!("x = 1{}\n", " + 1".repeat(n)),
        "power chain" => format!("x = 1{}\n", " ** 1".repeat(n)),
        "conditional chain" => format!("x = 1{}\n", " if 1 else 1".repeat(n)),
        "attribute chain" => format!("x = a{}\n", ".b".repeat(n)),
        "call chain" => format!("x = a{}\n", "()".repeat(n)),
        "subscript chain" => format!("x = a{}\n", "[0]".repeat(n)),
        "default of a parameter" => format!("def f(a={}1):\n    pass\n", "-".repeat(n)),
        other => panic!("{other}"),
    }
}

const KINDS: &[&str] = &[
    "parentheses",
    "lists",
    "dicts",
    "calls",
    "f-strings",
    "walrus",
    "comprehensions",
    "minus",
    "tilde",
    "not",
    "lambda",
    "lambda with parameters",
    "await",
    "plus chain",
    "power chain",
    "conditional chain",
    "attribute chain",
    "call chain",
    "subscript chain",
    "default of a parameter",
];

fn module(text: String) -> ModuleSource {
    ModuleSource::from_bytes("m.py", text.into_bytes()).unwrap()
}

/// Within the bounds, every kind parses (on the caller's 2 MiB test thread: the parse runs
/// on its own big stack); past them, a located error, fast, whatever the depth.
#[test]
fn deep_nesting_is_parsed_within_the_bounds_and_refused_past_them() {
    for kind in KINDS {
        let bracket = matches!(
            *kind,
            "parentheses" | "lists" | "dicts" | "calls" | "f-strings" | "walrus" | "comprehensions"
        );
        // An f-string opens two levels: the string and its `{`.
        let fits = match *kind {
            "f-strings" => 450,
            _ if bracket => 900,
            _ => 4000,
        };
        let started = Instant::now();
        match extract(&module(nested(kind, fits))) {
            Ok(_) => {}
            Err(e) => assert!(!e.message.contains("too deeply"), "{kind} x{fits}: {e}"),
        }
        eprintln!("{kind} x{fits}: parsed in {:?}", started.elapsed());
        for n in [100_000, 1_000_000] {
            let text = nested(kind, n);
            let started = Instant::now();
            let e = extract(&module(text.clone())).unwrap_err();
            let took = started.elapsed();
            assert!(e.message.contains("nests too deeply"), "{kind} x{n}: {e}");
            assert!(took < Duration::from_secs(10), "{kind} x{n}: {took:?}");
            // Located where the bound is passed: within the first bound's worth of the text.
            let (line, col) = location(&e);
            let first_line_len = text.lines().nth(line - 1).map_or(0, |l| l.chars().count());
            assert!(col <= first_line_len + 1, "{kind} x{n}: {e}");
            assert!(
                col < 200_000,
                "{kind} x{n}: located far past the bound: {e}"
            );
        }
    }
}

#[test]
fn indentation_is_bounded_like_cpython() {
    let block = |n: usize| {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(&" ".repeat(i));
            s.push_str("if x:\n");
        }
        s.push_str(&" ".repeat(n));
        s.push_str("pass\n");
        s
    };
    assert!(extract(&module(block(99))).is_ok());
    let e = extract(&module(block(2000))).unwrap_err();
    assert!(e.message.contains("indentation levels"), "{e}");
    // Line 102 is the first indented 101 levels deep.
    assert_eq!(location(&e), (102, 102), "{e}");
}

fn location(e: &LoadError) -> (usize, usize) {
    let mut parts = e.location.rsplitn(3, ':');
    let col = parts.next().unwrap().parse().unwrap();
    let line = parts.next().unwrap().parse().unwrap();
    (line, col)
}

/// Token soup that nests deeply in mixed ways.
fn soup() -> impl Strategy<Value = String> {
    let token = prop_oneof![
        Just("("),
        Just(")"),
        Just("["),
        Just("]"),
        Just("{"),
        Just("}"),
        Just("-"),
        Just(" not "),
        Just(" + "),
        Just(" ** "),
        Just("."),
        Just("a"),
        Just("1"),
        Just(", "),
        Just(" lambda a, b: "),
        Just(" if 1 else "),
        Just("f'{"),
        Just("}'"),
        Just(": "),
        Just("\n"),
        Just("\n    "),
        Just("'''"),
        Just("#"),
    ];
    (
        prop::collection::vec((token, 1usize..3000), 1..12),
        prop::collection::vec(any::<u8>(), 0..4),
    )
        .prop_map(|(runs, tail)| {
            let mut s = String::from("x = ");
            for (t, n) in runs {
                s.push_str(&t.repeat(n));
            }
            s.push_str(&String::from_utf8_lossy(&tail));
            s
        })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 300, max_shrink_iters: 200, ..ProptestConfig::default() })]

    /// Anything: a value or a located error (inside the text), fast; never an abort.
    #[test]
    fn nesting_soup_never_aborts(text in soup()) {
        let started = Instant::now();
        let lines = text.split('\n').count();
        match extract(&module(text)) {
            Ok(_) => {}
            Err(e) => {
                let (line, _) = location(&e);
                prop_assert!(line <= lines, "{e}");
            }
        }
        prop_assert!(started.elapsed() < Duration::from_secs(10));
    }
}

/// The nesting bound is far above real code: the real modules from the test set-up pass.
#[test]
fn real_modules_are_within_the_bounds() {
    let Some(dir) = std::env::var_os("MC_TEST_WHEELS") else {
        panic!("MC_TEST_WHEELS is not set: run scripts/test.sh (it sets up the wheels)");
    };
    let mut checked = 0;
    for wheel in source::wheels_in(Path::new(&dir), "mooncake").unwrap() {
        if let Some(m) = ModuleSource::read_wheel_if_present(&wheel, MODULE).unwrap() {
            bounded_parse::check(&m).unwrap();
            checked += 1;
        }
    }
    assert!(checked >= 3, "{checked} modules");
}
