//! Python literals for templates: the generated Python is plain data, readable in review.

/// A Python value, built by renderers and printed as source.
#[derive(Clone, Debug)]
pub enum Py {
    None,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    List(Vec<Py>),
    /// A list on one line (data rows).
    Row(Vec<Py>),
    /// Keys keep their order: the output follows the manifest.
    Dict(Vec<(&'static str, Py)>),
    /// A dict with keys from the manifest (scenario data).
    Map(Vec<(String, Py)>),
}

impl Py {
    pub fn str(s: impl Into<String>) -> Py {
        Py::Str(s.into())
    }

    pub fn opt_str(s: Option<impl Into<String>>) -> Py {
        s.map_or(Py::None, Py::str)
    }

    /// Source text; lists and dicts break one item per line at `indent` spaces.
    pub fn to_source(&self, indent: usize) -> String {
        let pad = " ".repeat(indent + 4);
        let close = " ".repeat(indent);
        match self {
            Py::None => "None".into(),
            Py::Bool(b) => if *b { "True" } else { "False" }.into(),
            Py::Int(i) => i.to_string(),
            // Debug prints the shortest text that reads back as the same f64, with a `.` or
            // an exponent, so Python reads a float.
            Py::Float(f) => format!("{f:?}"),
            Py::Str(s) => str_literal(s),
            Py::List(items) if items.is_empty() => "[]".into(),
            Py::Row(items) => {
                let body: Vec<String> = items.iter().map(|i| i.to_source(indent)).collect();
                format!("[{}]", body.join(", "))
            }
            Py::List(items) => {
                let body: String = items
                    .iter()
                    .map(|i| format!("{pad}{},\n", i.to_source(indent + 4)))
                    .collect();
                format!("[\n{body}{close}]")
            }
            Py::Dict(items) => dict_source(items, indent),
            Py::Map(items) => dict_source(items, indent),
        }
    }
}

/// `{"k": v, ...}` on one line, keys in the order given.
fn dict_source<K: AsRef<str>>(items: &[(K, Py)], indent: usize) -> String {
    let body: Vec<String> = items
        .iter()
        .map(|(k, v)| format!("{}: {}", str_literal(k.as_ref()), v.to_source(indent)))
        .collect();
    format!("{{{}}}", body.join(", "))
}

/// A double-quoted Python string literal, on one line of plain text: JSON's escapes (all
/// valid Python escapes), and `\uXXXX` for what JSON leaves raw but tools read as a line
/// break or a control (DEL, C1, U+2028, U+2029). One rule with the manifest's own text: such
/// a character is never written raw.
pub fn str_literal(s: &str) -> String {
    let json = serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into());
    json.chars()
        .map(|c| {
            if c.is_control() || matches!(c, '\u{2028}' | '\u{2029}') {
                format!("\\u{:04x}", u32::from(c))
            } else {
                c.to_string()
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(str_literal("it's \"x\"\n"), r#""it's \"x\"\n""#);
        assert_eq!(
            str_literal("a\u{2028}b\u{2029}c\u{85}\u{7f}"),
            r#""a\u2028b\u2029c\u0085\u007f""#
        );
        let v = Py::List(vec![Py::Dict(vec![("a", Py::Bool(true)), ("b", Py::None)])]);
        assert_eq!(v.to_source(0), "[\n    {\"a\": True, \"b\": None},\n]");
        let m = Py::Map(vec![
            ("k'".into(), Py::Float(1e-7)),
            ("n".into(), Py::Int(-3)),
        ]);
        assert_eq!(m.to_source(0), r#"{"k'": 1e-7, "n": -3}"#);
        assert_eq!(Py::Float(3.0).to_source(0), "3.0");
        let row = Py::Row(vec![Py::Int(1), Py::Row(vec![]), Py::None]);
        assert_eq!(row.to_source(4), "[1, [], None]");
    }
}
