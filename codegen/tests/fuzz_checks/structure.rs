//! The structure of generated text, with every name and literal value blanked out: what a
//! manifest value must never change. Rust and Python are tokenized by their own parsers
//! (syn, ruff); a Dockerfile is its instructions, each RUN line its shell token shape.

use proc_macro2::{Delimiter, TokenStream, TokenTree};
use ruff_python_ast::token::TokenKind;

/// The token shape of Rust source: keywords and punctuation kept, identifiers `I`, literals
/// `L`. An error when the text is not a Rust file.
pub fn rust_shape(src: &str) -> Result<Vec<String>, String> {
    syn::parse_file(src).map_err(|e| format!("not Rust: {e}"))?;
    let tokens: TokenStream = src.parse().map_err(|e| format!("not Rust tokens: {e}"))?;
    let mut out = Vec::new();
    rust_tokens(tokens, &mut out);
    // prettyplease adds a trailing comma where it breaks a list over lines, which a longer
    // literal can cause: layout, not structure.
    let mut shape: Vec<String> = Vec::with_capacity(out.len());
    for t in out {
        if matches!(t.as_str(), ")" | "]" | "}") && shape.last().is_some_and(|l| l == ",") {
            shape.pop();
        }
        shape.push(t);
    }
    Ok(shape)
}

fn rust_tokens(tokens: TokenStream, out: &mut Vec<String>) {
    for t in tokens {
        match t {
            TokenTree::Group(g) => {
                let (open, close) = match g.delimiter() {
                    Delimiter::Parenthesis => ("(", ")"),
                    Delimiter::Brace => ("{", "}"),
                    Delimiter::Bracket => ("[", "]"),
                    Delimiter::None => ("«", "»"),
                };
                out.push(open.into());
                rust_tokens(g.stream(), out);
                out.push(close.into());
            }
            TokenTree::Ident(i) => {
                let s = i.to_string();
                // A keyword is structure; a name (also a raw `r#type`) is content.
                let keyword = syn::parse_str::<syn::Ident>(&s).is_err() && !s.starts_with("r#");
                out.push(if keyword { s } else { "I".into() });
            }
            TokenTree::Punct(p) => out.push(p.as_char().to_string()),
            TokenTree::Literal(_) => out.push("L".into()),
        }
    }
}

/// The token shape of Python source: names `N`, strings `S`, numbers `0`, the rest by kind.
/// An error when the text does not parse as a module.
pub fn python_shape(src: &str) -> Result<Vec<String>, String> {
    let parsed = ruff_python_parser::parse_module(src).map_err(|e| format!("not Python: {e}"))?;
    Ok(parsed
        .tokens()
        .iter()
        .map(|t| match t.kind() {
            // Soft keywords are names wherever the generated code could put a manifest name.
            TokenKind::Name | TokenKind::Match | TokenKind::Case | TokenKind::Type => "N".into(),
            TokenKind::String => "S".into(),
            TokenKind::Int | TokenKind::Float | TokenKind::Complex => "0".into(),
            other => format!("{other:?}"),
        })
        .collect())
}

/// The token shape of a stub ([`python_shape`]) with each annotation one slot `T`: an
/// annotation is a type expression api.toml gives (`str | None`), whose own shape is its
/// value's; what a value must never change is everything around it.
pub fn stub_shape(src: &str) -> Result<Vec<String>, String> {
    use ruff_python_ast::{Expr, Stmt};
    use ruff_text_size::{Ranged, TextRange};
    fn annotations(body: &[Stmt], out: &mut Vec<TextRange>) {
        let range = |e: Option<&Expr>| e.map(Ranged::range);
        for stmt in body {
            match stmt {
                Stmt::FunctionDef(f) => {
                    out.extend(f.parameters.iter().filter_map(|p| range(p.annotation())));
                    out.extend(range(f.returns.as_deref()));
                }
                Stmt::AnnAssign(a) => out.push(a.annotation.range()),
                Stmt::ClassDef(c) => annotations(&c.body, out),
                _ => {}
            }
        }
    }
    let parsed = ruff_python_parser::parse_module(src).map_err(|e| format!("not Python: {e}"))?;
    let mut slots = Vec::new();
    annotations(parsed.suite(), &mut slots);
    let shape = python_shape(src)?;
    let mut out = Vec::new();
    let mut last_slot = None;
    for (token, kind) in parsed.tokens().iter().zip(shape) {
        match slots.iter().position(|s| s.contains_range(token.range())) {
            Some(slot) if last_slot == Some(slot) => {}
            Some(slot) => {
                out.push("T".into());
                last_slot = Some(slot);
            }
            None => {
                out.push(kind);
                last_slot = None;
            }
        }
    }
    Ok(out)
}

/// A Dockerfile's instructions: the keyword and the shell shape of the rest (RUN's command
/// line, the words of every other instruction). Comments and blank lines carry no structure.
pub fn dockerfile_shape(src: &str) -> Result<Vec<String>, String> {
    let mut out = Vec::new();
    let mut logical = String::new();
    for line in src.lines() {
        let trimmed = line.trim_start();
        if trimmed.starts_with('#') || (trimmed.is_empty() && logical.is_empty()) {
            continue;
        }
        match line.strip_suffix('\\') {
            Some(head) => {
                logical.push_str(head);
                logical.push(' ');
            }
            None => {
                logical.push_str(line);
                let text = std::mem::take(&mut logical);
                let text = text.trim();
                let (keyword, rest) = text.split_once([' ', '\t']).unwrap_or((text, ""));
                let shape = shell_shape(rest).map_err(|e| format!("{keyword}: {e}"))?;
                out.push(format!(
                    "{} {}",
                    keyword.to_ascii_uppercase(),
                    shape.join(" ")
                ));
            }
        }
    }
    if !logical.trim().is_empty() {
        return Err(format!("an unfinished instruction: {logical:?}"));
    }
    Ok(out)
}

/// The token shape of a POSIX shell command line: operators as written, each word `W` with
/// the shapes of the expansions inside it (`$(...)`, backquotes, `${...}`, `$name`).
/// An error on an unterminated quote or substitution.
pub fn shell_shape(src: &str) -> Result<Vec<String>, String> {
    let mut lexer = Shell {
        chars: src.chars().collect(),
        at: 0,
    };
    let tokens = lexer.tokens(false)?;
    if lexer.at < lexer.chars.len() {
        return Err(format!("an unmatched `)` at {}", lexer.at));
    }
    Ok(tokens)
}

struct Shell {
    chars: Vec<char>,
    at: usize,
}

impl Shell {
    fn peek(&self, ahead: usize) -> Option<char> {
        self.chars.get(self.at + ahead).copied()
    }

    /// Tokens up to the end, or (`nested`) up to the `)` closing a `$(`.
    fn tokens(&mut self, nested: bool) -> Result<Vec<String>, String> {
        let mut out = Vec::new();
        let mut word: Option<String> = None;
        let end_word = |word: &mut Option<String>, out: &mut Vec<String>| {
            if let Some(w) = word.take() {
                out.push(w);
            }
        };
        while let Some(c) = self.peek(0) {
            match c {
                ' ' | '\t' => {
                    end_word(&mut word, &mut out);
                    self.at += 1;
                }
                '\n' => {
                    end_word(&mut word, &mut out);
                    out.push(";".into());
                    self.at += 1;
                }
                '#' if word.is_none() => {
                    while self.peek(0).is_some_and(|c| c != '\n') {
                        self.at += 1;
                    }
                }
                ')' if nested => {
                    end_word(&mut word, &mut out);
                    return Ok(out);
                }
                ';' | '&' | '|' | '<' | '>' | '(' | ')' => {
                    end_word(&mut word, &mut out);
                    let mut op = c.to_string();
                    self.at += 1;
                    if matches!(c, '&' | '|' | '>' | ';') && self.peek(0) == Some(c) {
                        op.push(c);
                        self.at += 1;
                    }
                    out.push(op);
                }
                _ => {
                    let w = word.get_or_insert_with(|| "W".into());
                    let part = self.word_part()?;
                    w.push_str(&part);
                }
            }
        }
        if nested {
            return Err("an unterminated $(".into());
        }
        end_word(&mut word, &mut out);
        Ok(out)
    }

    /// One piece of a word: a plain or escaped char (no shape), a quoted string or an
    /// expansion (their shapes).
    fn word_part(&mut self) -> Result<String, String> {
        let c = self.chars[self.at];
        self.at += 1;
        match c {
            '\\' => {
                self.at += 1; // the escaped char, whatever it is
                Ok(String::new())
            }
            '\'' => {
                while self.peek(0).is_some_and(|c| c != '\'') {
                    self.at += 1;
                }
                if self.peek(0).is_none() {
                    return Err("an unterminated '".into());
                }
                self.at += 1;
                Ok(String::new())
            }
            '"' => {
                let mut shape = String::new();
                loop {
                    match self.peek(0) {
                        None => return Err("an unterminated \"".into()),
                        Some('"') => {
                            self.at += 1;
                            return Ok(shape);
                        }
                        Some('\\') => self.at += 2,
                        Some('$') | Some('`') => shape.push_str(&self.word_part()?),
                        Some(_) => self.at += 1,
                    }
                }
            }
            '`' => {
                let start = self.at;
                while self.peek(0).is_some_and(|c| c != '`') {
                    self.at += usize::from(self.peek(0) == Some('\\')) + 1;
                }
                if self.peek(0).is_none() {
                    return Err("an unterminated `".into());
                }
                let inner: String = self.chars[start..self.at].iter().collect();
                self.at += 1;
                Ok(format!("`{}`", shell_shape(&inner)?.join(" ")))
            }
            '$' => match self.peek(0) {
                Some('(') => {
                    self.at += 1;
                    let inner = self.tokens(true)?;
                    self.at += 1; // the closing )
                    Ok(format!("$({})", inner.join(" ")))
                }
                Some('{') => {
                    while self.peek(0).is_some_and(|c| c != '}') {
                        self.at += 1;
                    }
                    if self.peek(0).is_none() {
                        return Err("an unterminated ${".into());
                    }
                    self.at += 1;
                    Ok("${}".into())
                }
                Some(c) if c.is_ascii_alphanumeric() || c == '_' => {
                    while self
                        .peek(0)
                        .is_some_and(|c| c.is_ascii_alphanumeric() || c == '_')
                    {
                        self.at += 1;
                    }
                    Ok("$v".into())
                }
                _ => Ok(String::new()),
            },
            _ => Ok(String::new()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shell_shapes_see_what_a_value_could_add() {
        let base = r#"curl -o "$tmp" "${URL}/a/b.py"; install "$tmp" "$dest/x.py""#;
        let same = r#"curl -o "$tmp" "${URL}/a b ' ;/c.py"; install "$tmp" "$dest/y.py""#;
        assert_eq!(shell_shape(base), shell_shape(same));
        for injected in [
            r#"curl -o "$tmp" "${URL}/a"; touch pwned; echo ".py"; install "$tmp" "$dest/x.py""#,
            r#"curl -o "$tmp" "${URL}/$(id).py"; install "$tmp" "$dest/x.py""#,
            r#"curl -o "$tmp" "${URL}/`id`.py"; install "$tmp" "$dest/x.py""#,
            r#"curl -o "$tmp" "${URL}/a.py" x; install "$tmp" "$dest/x.py""#,
        ] {
            assert_ne!(shell_shape(base), shell_shape(injected), "{injected}");
        }
        assert!(shell_shape("echo \"x").is_err());
        assert!(shell_shape("echo $(x").is_err());
    }

    #[test]
    fn dockerfile_shapes_are_instructions() {
        let base = "ARG A=1\n# a comment\nRUN a \\\n    && b\n";
        assert_eq!(
            dockerfile_shape(base).unwrap(),
            ["ARG W", "RUN W && W"].map(String::from)
        );
        let injected = "ARG A=1\n# a\nRUN curl x | sh\nRUN a \\\n    && b\n";
        assert_ne!(dockerfile_shape(base), dockerfile_shape(injected));
    }

    #[test]
    fn code_shapes_blank_names_and_values() {
        assert_eq!(
            rust_shape("pub const A: &str = \"x\";"),
            rust_shape("pub const Bee: &str = \"y\\\"; z\";")
        );
        assert_ne!(
            rust_shape("/// a\nfn f() {}"),
            rust_shape("/// a\nfn g() {}\nfn h() {}")
        );
        assert_eq!(
            python_shape("X = \"a\"\n"),
            python_shape("Yy = 'b\"; import os'\n")
        );
        assert_ne!(python_shape("X = 1\n"), python_shape("X = 1; import os\n"));
        assert!(python_shape("X = '\n").is_err());
    }
}
