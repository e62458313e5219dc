//! Python text the manifest carries (default expressions, annotations), parsed once here with
//! ruff's parser into typed values, so no renderer parses a string again: a validated model
//! always renders.

use mooncake_sos_support::nesting::{self, Limits};
use ruff_python_ast::{Expr, Number};
use ruff_text_size::Ranged;
use serde::Serialize;

/// A default expression as written upstream, and its value when it is a literal.
#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub struct PyExpr {
    /// The expression's text, trimmed (what the shim compares and docs show).
    pub text: String,
    /// `Some` for `None`, `True`/`False`, an integer that fits i64, or a plain string.
    pub literal: Option<PyLiteral>,
}

#[derive(Clone, Debug, PartialEq, Eq, Serialize)]
pub enum PyLiteral {
    None,
    Bool(bool),
    Int(i64),
    Str(String),
}

impl std::fmt::Display for PyExpr {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.text)
    }
}

/// Parses one Python expression; an error names what is wrong with it.
pub fn parse_expr(text: &str) -> Result<PyExpr, String> {
    let text = text.trim();
    let parsed = whole_expression(text, "expression")?;
    let literal = match parsed.expr() {
        Expr::NoneLiteral(_) => Some(PyLiteral::None),
        Expr::BooleanLiteral(b) => Some(PyLiteral::Bool(b.value)),
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_i64().map(PyLiteral::Int),
            _ => None,
        },
        Expr::StringLiteral(s) => Some(PyLiteral::Str(s.value.to_str().to_owned())),
        _ => None,
    };
    Ok(PyExpr {
        text: text.to_owned(),
        literal,
    })
}

/// A data literal of a scenario: what a Python literal may hold, and nothing that runs.
/// Serialized as the plain JSON value it is (`None` as `null`, a dict's keys in order).
#[derive(Clone, Debug, PartialEq)]
pub enum PyData {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<PyData>),
    /// String keys, in the order written.
    Dict(Vec<(String, PyData)>),
}

impl Serialize for PyData {
    fn serialize<S: serde::Serializer>(&self, out: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeMap;
        match self {
            PyData::None => out.serialize_none(),
            PyData::Bool(b) => out.serialize_bool(*b),
            PyData::Int(i) => out.serialize_i64(*i),
            PyData::Float(f) => out.serialize_f64(*f),
            PyData::Str(s) => out.serialize_str(s),
            PyData::List(items) => out.collect_seq(items),
            PyData::Dict(items) => {
                let mut map = out.serialize_map(Some(items.len()))?;
                for (k, v) in items {
                    map.serialize_entry(k, v)?;
                }
                map.end()
            }
        }
    }
}

/// Parses a data literal: None, True/False, integers that fit i64, finite floats (either
/// with a leading `-`), strings, lists and dicts with string keys. Anything else (names,
/// calls, operators, tuples, sets, bytes, f-strings) is an error.
pub fn parse_data(text: &str) -> Result<PyData, String> {
    let parsed = whole_expression(text.trim(), "literal")?;
    let value = data(parsed.expr(), 0)?;
    // The parser turns a lone surrogate (`'\ud800'`) into U+FFFD: the value would change
    // silently. A U+FFFD the text spells itself is kept.
    let spelt = text.contains('\u{FFFD}')
        || text.to_ascii_lowercase().contains("fffd")
        || text.contains("\\N{");
    if !spelt && value.has_replacement_char() {
        return Err("a lone surrogate (\\ud800-\\udfff) is not text a run can pass".into());
    }
    Ok(value)
}

impl PyData {
    fn has_replacement_char(&self) -> bool {
        match self {
            PyData::Str(s) => s.contains('\u{FFFD}'),
            PyData::List(items) => items.iter().any(PyData::has_replacement_char),
            PyData::Dict(items) => items
                .iter()
                .any(|(k, v)| k.contains('\u{FFFD}') || v.has_replacement_char()),
            _ => false,
        }
    }
}

/// Nesting deeper than this is an error, not a stack overflow.
const MAX_DATA_DEPTH: usize = 16;

fn data(e: &Expr, depth: usize) -> Result<PyData, String> {
    if depth > MAX_DATA_DEPTH {
        return Err(format!("nested deeper than {MAX_DATA_DEPTH} levels"));
    }
    Ok(match e {
        Expr::NoneLiteral(_) => PyData::None,
        Expr::BooleanLiteral(b) => PyData::Bool(b.value),
        Expr::NumberLiteral(_) => number(e, false)?,
        Expr::UnaryOp(u) if u.op == ruff_python_ast::UnaryOp::USub => number(&u.operand, true)?,
        Expr::StringLiteral(s) => PyData::Str(s.value.to_str().to_owned()),
        Expr::List(l) => PyData::List(
            l.elts
                .iter()
                .map(|x| data(x, depth + 1))
                .collect::<Result<_, _>>()?,
        ),
        Expr::Dict(d) => {
            let mut items: Vec<(String, PyData)> = Vec::new();
            for item in &d.items {
                let Some(Expr::StringLiteral(k)) = &item.key else {
                    return Err("a dict key that is not a string".into());
                };
                let key = k.value.to_str().to_owned();
                if items.iter().any(|(seen, _)| *seen == key) {
                    return Err(format!("duplicate dict key {key:?}"));
                }
                items.push((key, data(&item.value, depth + 1)?));
            }
            PyData::Dict(items)
        }
        _ => {
            return Err(
                "not a data literal (None, a bool, a number, a string, a list, \
                        or a dict with string keys)"
                    .into(),
            );
        }
    })
}

fn number(e: &Expr, negative: bool) -> Result<PyData, String> {
    let Expr::NumberLiteral(n) = e else {
        return Err("`-` before something that is not a number".into());
    };
    match &n.value {
        // Negated as an i128: -9223372036854775808 is i64::MIN, whose magnitude is no i64.
        Number::Int(i) => i
            .as_u64()
            .map(|v| {
                if negative {
                    -i128::from(v)
                } else {
                    i128::from(v)
                }
            })
            .and_then(|v| i64::try_from(v).ok())
            .map(PyData::Int)
            .ok_or_else(|| "an integer outside the 64-bit range".into()),
        Number::Float(f) if f.is_finite() => Ok(PyData::Float(if negative { -f } else { *f })),
        _ => Err("a number that is not an integer or a finite float".into()),
    }
}

/// How deeply a manifest expression may nest before it is parsed: far more than any default,
/// annotation or data literal needs, far less than what overflows the stack (a million
/// nested `-` or brackets did, aborting the generator).
const EXPRESSION_LIMITS: Limits = Limits {
    depth: 200,
    brackets: 100,
    indent: 100,
};

/// `text` parsed as one expression that is all of it: a trailing comment (`None  # x`)
/// would make the text say more than the value.
fn whole_expression(
    text: &str,
    what: &str,
) -> Result<ruff_python_parser::Parsed<ruff_python_ast::ModExpression>, String> {
    if nesting::violation(text, &EXPRESSION_LIMITS).is_some() {
        return Err(format!(
            "not a Python {what} this tool reads: it nests more deeply than {} brackets or {} \
             operators",
            EXPRESSION_LIMITS.brackets, EXPRESSION_LIMITS.depth
        ));
    }
    let parsed = ruff_python_parser::parse_expression(text)
        .map_err(|e| format!("not a Python {what}: {}", e.error))?;
    if parsed.expr().range().end().to_usize() != text.len() {
        return Err(format!("not only a Python {what}: text follows it"));
    }
    Ok(parsed)
}

/// What an annotation tells the bindings about a value.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
pub enum ValueType {
    Str,
    Bool,
    Int,
    Float,
    /// `dict[str, ...]`: a JSON object.
    StrDict,
    /// `None`, as a return annotation.
    Nothing,
    /// `BundleStore`: the store object the transfer writes through.
    Store,
    /// `MooncakeDataProtoRef`: a ref the module returns and takes back.
    DataProtoRef,
    /// `Any`, no annotation, or any other type: a Python object.
    Object,
}

/// The type an annotation names; an error when it is not a Python expression.
pub fn value_type(annotation: Option<&str>) -> Result<ValueType, String> {
    let Some(text) = annotation else {
        return Ok(ValueType::Object);
    };
    let parsed = whole_expression(text.trim(), "annotation")?;
    let name = |e: &Expr| match e {
        Expr::Name(n) => Some(n.id.to_string()),
        _ => None,
    };
    Ok(match parsed.expr() {
        Expr::NoneLiteral(_) => ValueType::Nothing,
        Expr::Subscript(s) if name(&s.value).as_deref() == Some("dict") => {
            let key = match &*s.slice {
                Expr::Tuple(t) => t.elts.first().and_then(name),
                other => name(other),
            };
            if key.as_deref() == Some("str") {
                ValueType::StrDict
            } else {
                ValueType::Object
            }
        }
        e => match name(e).as_deref() {
            Some("str") => ValueType::Str,
            Some("bool") => ValueType::Bool,
            Some("int") => ValueType::Int,
            Some("float") => ValueType::Float,
            Some("BundleStore") => ValueType::Store,
            Some("MooncakeDataProtoRef") => ValueType::DataProtoRef,
            _ => ValueType::Object,
        },
    })
}

/// A type annotation (`text`: api.toml's `type`, or a pybind11 docstring's) as a stub writes
/// it: every name (`int`, `mooncake.store.ReplicateConfig`) as `name` spells it there, told
/// whether the name is subscripted (`list[int]`) or bare (`list`); a name it does not know
/// (`None`) is `Any`, and so is a subscript of it. `None` when the text is no type expression
/// a stub can write: not Python (a C++ type, `mooncake::X`), a call, an operator other than
/// `|`, a string that is not plain text.
pub fn stub_type(text: &str, name: &dyn Fn(&str, bool) -> Option<String>) -> Option<String> {
    let parsed = whole_expression(text.trim(), "annotation").ok()?;
    written_type(parsed.expr(), name, false)
}

fn written_type(
    e: &Expr,
    name: &dyn Fn(&str, bool) -> Option<String>,
    applied: bool,
) -> Option<String> {
    let each = |elts: &[Expr]| -> Option<Vec<String>> {
        elts.iter().map(|x| written_type(x, name, false)).collect()
    };
    Some(match e {
        Expr::Name(_) | Expr::Attribute(_) => {
            name(&dotted(e)?, applied).unwrap_or_else(|| "Any".into())
        }
        Expr::Subscript(s) => {
            let args = match &*s.slice {
                Expr::Tuple(t) if !t.parenthesized => each(&t.elts)?.join(", "),
                slice => written_type(slice, name, false)?,
            };
            match name(&dotted(&s.value)?, true) {
                Some(generic) => format!("{generic}[{args}]"),
                None => "Any".into(),
            }
        }
        Expr::List(l) => format!("[{}]", each(&l.elts)?.join(", ")),
        Expr::BinOp(b) if b.op == ruff_python_ast::Operator::BitOr => format!(
            "{} | {}",
            written_type(&b.left, name, false)?,
            written_type(&b.right, name, false)?
        ),
        Expr::NoneLiteral(_) => "None".into(),
        Expr::EllipsisLiteral(_) => "...".into(),
        Expr::BooleanLiteral(b) => if b.value { "True" } else { "False" }.into(),
        Expr::NumberLiteral(n) => match &n.value {
            Number::Int(i) => i.as_i64()?.to_string(),
            _ => return None,
        },
        Expr::StringLiteral(s) => {
            let value = s.value.to_str();
            let plain = |c: char| c.is_ascii_graphic() && !matches!(c, '"' | '\\') || c == ' ';
            if !value.chars().all(plain) {
                return None;
            }
            format!("\"{value}\"")
        }
        _ => return None,
    })
}

/// `a.b.c` of a name or an attribute chain of names.
fn dotted(e: &Expr) -> Option<String> {
    match e {
        Expr::Name(n) => Some(n.id.to_string()),
        Expr::Attribute(a) => Some(format!("{}.{}", dotted(&a.value)?, a.attr.id)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals_are_values_not_text() {
        let lit = |t: &str| parse_expr(t).unwrap().literal;
        assert_eq!(lit("'bundle'"), Some(PyLiteral::Str("bundle".into())));
        assert_eq!(lit(r#"'it\'s'"#), Some(PyLiteral::Str("it's".into())));
        assert_eq!(lit("True"), Some(PyLiteral::Bool(true)));
        assert_eq!(lit(" 42 "), Some(PyLiteral::Int(42)));
        assert_eq!(lit("None"), Some(PyLiteral::None));
        assert_eq!(lit("DEFAULT_BUNDLE_CHUNK_BYTES"), None);
        assert_eq!(lit("64 * 1024**2"), None);
        for bad in ["'a", "a b", "", "x = 1", "'''a", "None  # x", "(1) #"] {
            assert!(parse_expr(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn annotations_name_types() {
        assert_eq!(value_type(Some("dict[str, Any]")), Ok(ValueType::StrDict));
        assert_eq!(value_type(Some("dict[int, str]")), Ok(ValueType::Object));
        assert_eq!(value_type(Some("None")), Ok(ValueType::Nothing));
        assert_eq!(value_type(Some("str")), Ok(ValueType::Str));
        assert_eq!(value_type(Some("Mapping[str, Any]")), Ok(ValueType::Object));
        assert_eq!(value_type(None), Ok(ValueType::Object));
        assert!(value_type(Some("dict[str")).is_err());
    }

    #[test]
    fn stub_types_spell_each_name_as_the_stub_does() {
        let name = |n: &str, applied: bool| match (n, applied) {
            ("list", false) => Some("list[Any]".to_owned()),
            ("mooncake.store.ReplicateConfig", _) => Some("ReplicateConfig".to_owned()),
            ("int" | "str" | "list" | "dict" | "Literal" | "Callable", _) => Some(n.to_owned()),
            _ => None,
        };
        let stub = |t: &str| stub_type(t, &name);
        assert_eq!(stub("list[list[int]]").as_deref(), Some("list[list[int]]"));
        assert_eq!(stub("list").as_deref(), Some("list[Any]"));
        assert_eq!(stub("dict[str, Foo]").as_deref(), Some("dict[str, Any]"));
        assert_eq!(stub("Foo[int] | str").as_deref(), Some("Any | str"));
        assert_eq!(
            stub("mooncake.store.ReplicateConfig | None").as_deref(),
            Some("ReplicateConfig | None")
        );
        assert_eq!(
            stub("Callable[[int, str], None]").as_deref(),
            Some("Callable[[int, str], None]")
        );
        assert_eq!(
            stub("Literal['a', 1, True]").as_deref(),
            Some("Literal[\"a\", 1, True]")
        );
        for not_written in [
            "mooncake::MooncakeStorePyWrapper",
            "f(x)",
            "a + b",
            "Literal['a\\nb']",
            "Literal['\"']",
            "list[int",
            "",
        ] {
            assert_eq!(stub(not_written), None, "{not_written}");
        }
    }

    #[test]
    fn data_is_written_as_the_plain_json_it_is() {
        let data = parse_data("{'b': [1, -2.5, None, True], 'a': 'x\"'}").unwrap();
        let json = serde_json::to_string(&data).unwrap();
        assert_eq!(json, r#"{"b":[1,-2.5,null,true],"a":"x\""}"#);
    }

    #[test]
    fn data_literals_are_data_only() {
        assert_eq!(
            parse_data(r#"[[1, -2], None, {'a': 1.5, "b": [True]}, 'x']"#),
            Ok(PyData::List(vec![
                PyData::List(vec![PyData::Int(1), PyData::Int(-2)]),
                PyData::None,
                PyData::Dict(vec![
                    ("a".into(), PyData::Float(1.5)),
                    ("b".into(), PyData::List(vec![PyData::Bool(true)])),
                ]),
                PyData::Str("x".into()),
            ]))
        );
        for bad in [
            "x",
            "f()",
            "[1, x]",
            "(1, 2)",
            "{1, 2}",
            "{1: 2}",
            "b'x'",
            "f'{x}'",
            "1 + 2",
            "-'a'",
            "1e999",
            "1j",
            "[1] # c",
            "{'a': 1, 'a': 2}",
            "99999999999999999999",
            "__import__('os')",
            "[[[[[[[[[[[[[[[[[[1]]]]]]]]]]]]]]]]]]",
        ] {
            assert!(parse_data(bad).is_err(), "{bad}");
        }
    }
}
