//! The one signature kernel: a parameter list (from api.toml or from a pybind11 docstring),
//! the shape of a call, whether the call fits, and how a call is described in a message.
//! verify, the consumer scan, the core fit, `verify --fix` and the core diff all judge
//! calls here.

use crate::model::{Param, ParamKind};
use serde::Serialize;
use std::collections::BTreeSet;
use std::fmt;

/// The same reading of a pybind11 docstring in Python, for the shim (rendered into it) and
/// the core reader (inserted into it); it needs `re` imported.
pub const OVERLOADS_PY: &str = include_str!("signature/overloads.py");

/// The arguments a call passes.
#[derive(Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
pub struct CallShape {
    /// Positional arguments, `*args` not counted.
    pub positional: usize,
    /// A `*args` whose length is unknown.
    pub starred: bool,
    /// Keyword names, sorted.
    pub keywords: Vec<String>,
    /// A `**kwargs`.
    pub double_starred: bool,
}

/// `call(2 args, *args, config=, **kwargs)`: how every report and misfit names a call.
impl fmt::Display for CallShape {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts = Vec::new();
        match self.positional {
            0 => {}
            1 => parts.push("1 arg".to_owned()),
            n => parts.push(format!("{n} args")),
        }
        if self.starred {
            parts.push("*args".into());
        }
        parts.extend(self.keywords.iter().map(|k| format!("{k}=")));
        if self.double_starred {
            parts.push("**kwargs".into());
        }
        write!(f, "call({})", parts.join(", "))
    }
}

/// The one way a misfit reads: expected `a call that fits (SIGNATURE)`, found
/// `call(2 args, config=): why`.
pub fn misfit(signature: &str, shape: &CallShape, why: &Misfit) -> (String, String) {
    (
        format!("a call that fits ({signature})"),
        format!("{shape}: {why}"),
    )
}

/// How a parameter of an overload can be passed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OverloadParamKind {
    PositionalOnly,
    Positional,
    KeywordOnly,
    VarPositional,
    VarKeyword,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct OverloadParam {
    pub name: String,
    pub kind: OverloadParamKind,
    pub has_default: bool,
}

/// The parameters of a pybind11 docstring signature (the text after `self, `), e.g.
/// `key: str, force: bool = False`. `Err` says what is wrong with the text.
pub fn overload_params(text: &str) -> Result<Vec<OverloadParam>, String> {
    Ok(written_params(text)?.into_iter().map(|w| w.param).collect())
}

/// A parameter of a docstring signature with its annotation and default as written
/// (`config: mooncake.store.ReplicateConfig = <mooncake.store.ReplicateConfig object>`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WrittenParam<'a> {
    pub param: OverloadParam,
    pub annotation: Option<&'a str>,
    pub default: Option<&'a str>,
}

/// [`overload_params`], each parameter with its annotation and default text.
pub fn written_params(text: &str) -> Result<Vec<WrittenParam<'_>>, String> {
    if text.contains(" at 0x") {
        return Err(
            "an object default keeps its address: write `<... object>` without ` at 0x...`".into(),
        );
    }
    let mut params = Vec::new();
    let mut keyword_only = false;
    for piece in split_top_level(text)? {
        let piece = piece.trim();
        if piece.is_empty() {
            if text.trim().is_empty() {
                break;
            }
            return Err("an empty parameter (two commas, or a comma at an end)".into());
        }
        if piece == "/" {
            for p in &mut params {
                let p: &mut WrittenParam = p;
                p.param.kind = OverloadParamKind::PositionalOnly;
            }
            continue;
        }
        if piece == "*" {
            keyword_only = true;
            continue;
        }
        let (head, default) = match find_top_level(piece, '=') {
            Some(i) => (&piece[..i], Some(piece[i + 1..].trim())),
            None => (piece, None),
        };
        if default.is_some_and(str::is_empty) {
            return Err(format!("parameter `{}` has an empty default", head.trim()));
        }
        let (name, annotation) = match head.split_once(':') {
            Some((name, annotation)) => (name.trim(), Some(annotation.trim())),
            None => (head.trim(), None),
        };
        let (name, kind) = if let Some(n) = name.strip_prefix("**") {
            (n, OverloadParamKind::VarKeyword)
        } else if let Some(n) = name.strip_prefix('*') {
            keyword_only = true;
            (n, OverloadParamKind::VarPositional)
        } else if keyword_only {
            (name, OverloadParamKind::KeywordOnly)
        } else {
            (name, OverloadParamKind::Positional)
        };
        if !crate::model::values::is_python_identifier(name) {
            return Err(format!("`{piece}` does not start with a parameter name"));
        }
        // pybind11 names a parameter declared without `py::arg` `argN`: no caller can pass
        // it by keyword.
        let unnamed = name
            .strip_prefix("arg")
            .is_some_and(|n| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
        let kind = match kind {
            OverloadParamKind::Positional if unnamed => OverloadParamKind::PositionalOnly,
            kind => kind,
        };
        params.push(WrittenParam {
            param: OverloadParam {
                name: name.to_owned(),
                kind,
                has_default: default.is_some(),
            },
            annotation,
            default,
        });
    }
    Ok(params)
}

/// api.toml's parameters as a signature the kernel judges.
pub fn declared_params(params: &[Param]) -> Vec<OverloadParam> {
    params
        .iter()
        .map(|p| OverloadParam {
            name: p.name.clone(),
            kind: match p.kind {
                ParamKind::Positional => OverloadParamKind::Positional,
                ParamKind::KeywordOnly => OverloadParamKind::KeywordOnly,
            },
            has_default: p.default.is_some(),
        })
        .collect()
}

/// Whether a call with `shape` binds the parameters of a signature (`Err`: why not): every
/// required one bound, none twice, none unknown.
pub fn fits(params: &[OverloadParam], shape: &CallShape) -> Result<(), Misfit> {
    use OverloadParamKind::*;
    let slots: Vec<_> = params
        .iter()
        .filter(|p| matches!(p.kind, PositionalOnly | Positional))
        .collect();
    let varargs = params.iter().any(|p| p.kind == VarPositional);
    let varkw = params.iter().any(|p| p.kind == VarKeyword);
    if shape.positional > slots.len() && !varargs {
        return Err(Misfit::TooManyPositional {
            given: shape.positional,
            takes: slots.len(),
        });
    }
    let mut bound: BTreeSet<&str> = slots
        .iter()
        .take(shape.positional)
        .map(|p| p.name.as_str())
        .collect();
    for k in &shape.keywords {
        let param = params
            .iter()
            .find(|p| &p.name == k && matches!(p.kind, Positional | KeywordOnly));
        match param {
            Some(p) if !bound.insert(p.name.as_str()) => return Err(Misfit::Twice(k.clone())),
            Some(_) => {}
            None if varkw => {}
            None => return Err(Misfit::NoParameter(k.clone())),
        }
    }
    if !shape.starred && !shape.double_starred {
        let missing: Vec<String> = params
            .iter()
            .filter(|p| matches!(p.kind, PositionalOnly | Positional | KeywordOnly))
            .filter(|p| !p.has_default && !bound.contains(p.name.as_str()))
            .map(|p| p.name.clone())
            .collect();
        if !missing.is_empty() {
            return Err(Misfit::Missing(missing));
        }
    }
    Ok(())
}

/// Why a call does not fit a parameter list.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Misfit {
    TooManyPositional {
        given: usize,
        takes: usize,
    },
    /// A keyword that names a parameter the positional arguments already gave.
    Twice(String),
    /// A keyword no parameter takes.
    NoParameter(String),
    /// Required parameters nothing gives.
    Missing(Vec<String>),
}

impl Misfit {
    /// The keyword argument at fault, if one is.
    pub fn keyword(&self) -> Option<&str> {
        match self {
            Misfit::Twice(k) | Misfit::NoParameter(k) => Some(k),
            _ => None,
        }
    }
}

impl fmt::Display for Misfit {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Misfit::TooManyPositional { given, takes } => write!(
                f,
                "{given} positional argument(s) where it takes at most {takes}"
            ),
            Misfit::Twice(k) => write!(f, "`{k}` is given by position and by keyword"),
            Misfit::NoParameter(k) => write!(f, "no parameter `{k}`"),
            Misfit::Missing(names) => write!(f, "misses required `{}`", names.join("`, `")),
        }
    }
}

/// Splits at commas outside brackets and quotes.
fn split_top_level(text: &str) -> Result<Vec<&str>, String> {
    let mut pieces = Vec::new();
    let mut start = 0;
    scan(text, |i, c| {
        if c == ',' {
            pieces.push(&text[start..i]);
            start = i + 1;
        }
        false
    })?;
    pieces.push(&text[start..]);
    Ok(pieces)
}

fn find_top_level(text: &str, want: char) -> Option<usize> {
    let mut found = None;
    let _ = scan(text, |i, c| {
        let hit = c == want;
        if hit {
            found = Some(i);
        }
        hit
    });
    found
}

/// Calls `at(offset, char)` for each char outside brackets and quotes until it returns true;
/// `Err` on unbalanced brackets or an unterminated quote.
fn scan(text: &str, mut at: impl FnMut(usize, char) -> bool) -> Result<(), String> {
    let mut closers = Vec::new();
    let mut quote = None;
    for (i, c) in text.char_indices() {
        if let Some(q) = quote {
            if c == q {
                quote = None;
            }
            continue;
        }
        match c {
            '\'' | '"' => quote = Some(c),
            '[' => closers.push(']'),
            '(' => closers.push(')'),
            '{' => closers.push('}'),
            '<' => closers.push('>'),
            ']' | ')' | '}' | '>' => {
                let opened = closers.pop();
                if opened != Some(c) {
                    return Err(format!("unbalanced `{c}`"));
                }
            }
            _ if closers.is_empty() && at(i, c) => return Ok(()),
            _ => {}
        }
    }
    match (closers.last(), quote) {
        (Some(c), _) => Err(format!("unclosed bracket (missing `{c}`)")),
        (_, Some(q)) => Err(format!("unterminated quote {q}")),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::OverloadParamKind::*;
    use super::*;

    fn kinds(text: &str) -> Vec<(String, OverloadParamKind, bool)> {
        overload_params(text)
            .unwrap()
            .into_iter()
            .map(|p| (p.name, p.kind, p.has_default))
            .collect()
    }

    #[test]
    fn real_docstrings_parse() {
        let put = "key: str, value: Buffer, config: mooncake.store.ReplicateConfig = <mooncake.store.ReplicateConfig object>";
        assert_eq!(
            kinds(put),
            [
                ("key".into(), Positional, false),
                ("value".into(), Positional, false),
                ("config".into(), Positional, true)
            ]
        );
        let ranges = "buffer_ptrs: list[int], all_keys: list[list[str]], all_sizes: dict[str, tuple[int, int]]";
        assert_eq!(overload_params(ranges).unwrap().len(), 3);
        assert_eq!(
            kinds("a: str = 'x, y', *, b: int = 1, **kw"),
            [
                ("a".into(), Positional, true),
                ("b".into(), KeywordOnly, true),
                ("kw".into(), VarKeyword, false)
            ]
        );
        assert_eq!(
            kinds("a, /, b"),
            [
                ("a".into(), PositionalOnly, false),
                ("b".into(), Positional, false)
            ]
        );
        assert!(overload_params("").unwrap().is_empty());
    }

    #[test]
    fn annotations_and_defaults_are_kept_as_written() {
        let written =
            written_params("arg0: str, config: a.B = <a.B object>, *args, k: dict[str, int] = {}")
                .unwrap();
        let texts: Vec<(&str, Option<&str>, Option<&str>)> = written
            .iter()
            .map(|w| (w.param.name.as_str(), w.annotation, w.default))
            .collect();
        assert_eq!(
            texts,
            [
                ("arg0", Some("str"), None),
                ("config", Some("a.B"), Some("<a.B object>")),
                ("args", None, None),
                ("k", Some("dict[str, int]"), Some("{}")),
            ]
        );
        assert_eq!(written[0].param.kind, PositionalOnly);
    }

    #[test]
    fn bad_text_says_why() {
        for (text, want) in [
            ("config: X = <X object at 0x7f00>", "address"),
            ("a: list[int", "unclosed"),
            ("a: int]", "unbalanced"),
            ("a, , b", "empty parameter"),
            ("a = ", "empty default"),
            ("9a: int", "parameter name"),
            ("a: str = 'x", "unterminated"),
        ] {
            let err = overload_params(text).unwrap_err();
            assert!(err.contains(want), "{text:?}: {err}");
        }
    }

    /// The Python reading the shim and the core reader run splits a parameter list where
    /// this kernel does: one rule in two languages, held together by this test.
    #[test]
    fn the_python_reading_splits_like_the_kernel() {
        let texts = [
            "key: str, value: bytes, config: ReplicateConfig = <mooncake.store.ReplicateConfig object>",
            "buffer_ptrs: list[int], all_sizes: dict[str, tuple[int, int]]",
            "a: str = 'x, y', *, b: int = 1, **kw",
            "a: Callable[[int, str], None], b: tuple[int, ...] = (1, 2)",
            "",
        ];
        // python3 with the shared reading defined; `body` runs after it with `arg` as argv[1].
        let python = |body: &str, arg: &str| {
            let program = format!("import json, re, sys\n{OVERLOADS_PY}\n{body}");
            let out = std::process::Command::new("python3")
                .args(["-I", "-c", &program, arg])
                .output()
                .unwrap();
            let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
            assert!(out.status.success(), "{stderr}");
            String::from_utf8(out.stdout).unwrap()
        };
        let split = "print(json.dumps([_split_params(t) for t in json.loads(sys.argv[1])]))";
        let out = python(split, &serde_json::to_string(&texts).unwrap());
        let python_split: Vec<Vec<String>> = serde_json::from_str(&out).unwrap();
        for (text, split) in texts.iter().zip(python_split) {
            let rust: Vec<String> = split_top_level(text)
                .unwrap()
                .into_iter()
                .map(|p| p.trim().to_owned())
                .filter(|p| !p.is_empty())
                .collect();
            assert_eq!(split, rust, "{text:?}");
        }
        // A docstring line: `self` dropped, the address gone.
        let doc = "put(self: X, key: str, config: C = <C object at 0x7f3a>) -> int";
        let read = "class F: pass\nf = F(); f.__doc__ = sys.argv[1]\nprint(_overloads(f, 'put'))";
        let out = python(read, doc);
        assert_eq!(out.trim(), "['key: str, config: C = <C object>']");
    }
}
