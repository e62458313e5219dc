//! Python literals for templates: the generated Python is plain data, readable in review.

/// A Python value, built by renderers and printed as source.
#[derive(Clone, Debug)]
pub enum Py {
    None,
    Bool(bool),
    Str(String),
    List(Vec<Py>),
    /// Keys keep their order: the output follows the manifest.
    Dict(Vec<(&'static str, Py)>),
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
            Py::Str(s) => str_literal(s),
            Py::List(items) if items.is_empty() => "[]".into(),
            Py::List(items) => {
                let body: String = items
                    .iter()
                    .map(|i| format!("{pad}{},\n", i.to_source(indent + 4)))
                    .collect();
                format!("[\n{body}{close}]")
            }
            Py::Dict(items) => {
                let body: Vec<String> = items
                    .iter()
                    .map(|(k, v)| format!("{}: {}", str_literal(k), v.to_source(indent)))
                    .collect();
                format!("{{{}}}", body.join(", "))
            }
        }
    }
}

/// A double-quoted Python string literal. JSON's escapes are all valid Python escapes.
pub fn str_literal(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn literals() {
        assert_eq!(str_literal("it's \"x\"\n"), r#""it's \"x\"\n""#);
        let v = Py::List(vec![Py::Dict(vec![("a", Py::Bool(true)), ("b", Py::None)])]);
        assert_eq!(v.to_source(0), "[\n    {\"a\": True, \"b\": None},\n]");
    }
}
