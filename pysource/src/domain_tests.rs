use super::{difference, one_of, repr};
use crate::extract::{BindingKind, FoundDomain, ModuleFacts, extract};
use crate::source::ModuleSource;

fn facts(text: &str) -> ModuleFacts {
    let source = ModuleSource::from_bytes("m.py", text.as_bytes().to_vec()).unwrap();
    extract(&source).unwrap()
}

/// The domain of `param` of function `f`, with its line.
fn param_domain(text: &str, f: &str, param: &str) -> Option<(Vec<String>, usize)> {
    let facts = facts(text);
    let BindingKind::Function(func) = &facts.bindings[f].kind else {
        panic!("{f} is no function")
    };
    let p = func.params.iter().find(|p| p.name == param).unwrap();
    p.domain.clone().map(|d| (d.values, d.line))
}

/// The domain of field `codec` of the dataclass `S`, with its line.
fn codec_domain(text: &str) -> Option<(Vec<String>, usize)> {
    let facts = facts(&format!(
        "from dataclasses import dataclass\n\n@dataclass\nclass S:\n    codec: str\n\n{text}"
    ));
    let BindingKind::Class(class) = &facts.bindings["S"].kind else {
        panic!("S is no class")
    };
    let f = class.fields.iter().find(|f| f.name == "codec").unwrap();
    f.domain.clone().map(|d| (d.values, d.line))
}

fn strings(values: &[&str]) -> Vec<String> {
    values.iter().map(|v| v.to_string()).collect()
}

#[test]
fn a_literal_annotation_is_a_domain() {
    let text = "import typing\nfrom typing import Literal\n\
                def f(a: Literal['x', \"y\"] = 'x', *, b: typing.Literal['only'], c: str = 'x'):\n    pass\n";
    assert_eq!(
        param_domain(text, "f", "a"),
        Some((strings(&["x", "y"]), 3))
    );
    assert_eq!(param_domain(text, "f", "b"), Some((strings(&["only"]), 3)));
    assert_eq!(param_domain(text, "f", "c"), None);
}

#[test]
fn a_literal_with_other_members_or_inside_another_type_is_none() {
    for annotation in [
        "Literal['x', 1]",
        "Literal[None]",
        "Optional[Literal['x']]",
        "Literal['x'] | None",
        "Final['x']",
        "other.Literal['x']",
    ] {
        let text = format!("def f(a: {annotation} = 'x'):\n    pass\n");
        assert_eq!(param_domain(&text, "f", "a"), None, "{annotation}");
    }
}

const DISPATCH: &str = "\
def encode(values, schema: S):
    codec = schema.codec
    if codec == \"auto\":
        return values
    if codec in (\"a\", \"b\"):
        x = 1
    elif \"c\" == codec or codec == \"d\":
        x = 2
    elif codec in {\"e\"}:
        x = 3
    else:
        raise ValueError(codec)
    return x
";

#[test]
fn a_dispatch_closed_by_raise_is_the_fields_domain() {
    assert_eq!(
        codec_domain(DISPATCH),
        Some((strings(&["auto", "a", "b", "c", "d", "e"]), 9))
    );
    // On the attribute itself, and as a guard.
    let direct = "def check(schema: \"S\"):\n    if schema.codec not in [\"p\", \"q\"]:\n        raise ValueError()\n";
    assert_eq!(codec_domain(direct), Some((strings(&["p", "q"]), 8)));
    // Two dispatches: their union, from the first one's line.
    let both = format!("{DISPATCH}\n{direct}");
    assert_eq!(
        codec_domain(&both),
        Some((strings(&["auto", "a", "b", "c", "d", "e", "p", "q"]), 9))
    );
}

/// Each value's span is its first string literal (a report locates a value by it).
#[test]
fn each_value_is_located_at_its_first_literal() {
    let written = |text: &str, domain: FoundDomain| -> Vec<String> {
        domain
            .spans
            .iter()
            .map(|s| text[s.clone()].to_owned())
            .collect()
    };
    let text = "from typing import Literal\ndef f(a: Literal['x', \"y\", 'x']):\n    pass\n";
    let found = facts(text);
    let BindingKind::Function(func) = &found.bindings["f"].kind else {
        panic!("f is no function")
    };
    let domain = func.params[0].domain.clone().unwrap();
    assert_eq!(domain.values, strings(&["x", "y"]));
    assert_eq!(written(text, domain), ["'x'", "\"y\""]);
    let text = format!(
        "from dataclasses import dataclass\n\n@dataclass\nclass S:\n    codec: str\n\n{DISPATCH}"
    );
    let found = facts(&text);
    let BindingKind::Class(class) = &found.bindings["S"].kind else {
        panic!("S is no class")
    };
    let domain = class.fields[0].domain.clone().unwrap();
    let quoted: Vec<String> = domain.values.iter().map(|v| format!("\"{v}\"")).collect();
    assert_eq!(written(&text, domain), quoted);
}

#[test]
fn an_open_dispatch_is_no_domain() {
    for (what, edit) in [
        ("falls back", ("raise ValueError(codec)", "x = 4")),
        (
            "no else",
            ("    else:\n        raise ValueError(codec)\n", ""),
        ),
        (
            "tests another value",
            ("elif codec in {\"e\"}", "elif values in {\"e\"}"),
        ),
        (
            "compares a non-string",
            ("codec in {\"e\"}", "codec in {1}"),
        ),
        ("not the dataclass", ("schema: S", "schema: T")),
        (
            "another field",
            ("codec = schema.codec", "codec = schema.name"),
        ),
    ] {
        assert!(DISPATCH.contains(edit.0), "{what}");
        let text = DISPATCH.replacen(edit.0, edit.1, 1);
        assert_eq!(codec_domain(&text), None, "{what}:\n{text}");
    }
}

#[test]
fn a_literal_field_keeps_its_literal() {
    let text = "from dataclasses import dataclass\nfrom typing import Literal\n\n@dataclass\nclass S:\n    codec: Literal['z']\n\n";
    let facts = facts(&format!("{text}{DISPATCH}"));
    let BindingKind::Class(class) = &facts.bindings["S"].kind else {
        panic!()
    };
    let domain = class.fields[0].domain.clone().unwrap();
    assert_eq!((domain.values, domain.line), (strings(&["z"]), 6));
}

#[test]
fn values_print_as_python_reprs_and_differences_are_named() {
    assert_eq!(repr("dict"), "'dict'");
    assert_eq!(repr("it's"), "\"it's\"");
    assert_eq!(repr("a'\"\\\n\u{1}\u{2028}"), "'a\\'\"\\\\\\n\\x01\\u2028'");
    let ab = strings(&["a", "b"]);
    let bc = strings(&["b", "c"]);
    assert_eq!(one_of(Some(&ab)), "one of 'a', 'b'");
    assert_eq!(difference(Some(&ab), Some(&strings(&["b", "a"]))), None);
    assert_eq!(difference(None, None), None);
    assert_eq!(
        difference(Some(&ab), Some(&bc)),
        Some((
            "one of 'a', 'b'".into(),
            "one of 'b', 'c' (also 'c'; not 'a')".into()
        ))
    );
    assert_eq!(
        difference(None, Some(&ab)),
        Some(("no domain".into(), "one of 'a', 'b'".into()))
    );
    assert_eq!(
        difference(Some(&ab), None),
        Some(("one of 'a', 'b'".into(), "no domain".into()))
    );
}
