//! What the check keeps of a module ([`crate::extract`] reads it): its module-level bindings,
//! their methods, parameters, dataclass fields, defaults and value domains, each with its line.

use std::collections::HashMap;

/// Module-level names, the last binding of each (as Python leaves them after import).
#[derive(Debug, Default)]
pub struct ModuleFacts {
    pub bindings: HashMap<String, Binding>,
}

#[derive(Debug)]
pub struct Binding {
    pub line: usize,
    pub kind: BindingKind,
}

#[derive(Debug)]
pub enum BindingKind {
    Class(ClassFacts),
    Function(FunctionFacts),
    /// `name = other`: an alias of another module-level name.
    Alias(String),
    /// Any other assignment; the text is what is assigned.
    Value(String),
    Import,
}

impl BindingKind {
    /// How a report names what it found.
    pub fn describe(&self) -> String {
        match self {
            Self::Class(c) if c.dataclass.is_some() => "dataclass".into(),
            Self::Class(_) => "class".into(),
            Self::Function(_) => "function".into(),
            Self::Alias(target) => format!("alias of {target}"),
            Self::Value(text) => format!("assignment = {text}"),
            Self::Import => "imported name".into(),
        }
    }
}

#[derive(Debug)]
pub struct ClassFacts {
    /// `Some(frozen)` when decorated with `@dataclass` / `@dataclasses.dataclass(...)`.
    pub dataclass: Option<bool>,
    pub fields: Vec<ParamFacts>,
    pub methods: HashMap<String, FunctionFacts>,
}

#[derive(Debug)]
pub struct FunctionFacts {
    pub line: usize,
    pub staticmethod: bool,
    pub classmethod: bool,
    pub params: Vec<ParamFacts>,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FoundKind {
    PositionalOnly,
    Positional,
    VarPositional,
    KeywordOnly,
    VarKeyword,
}

impl FoundKind {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::PositionalOnly => "positional-only",
            Self::Positional => "positional",
            Self::VarPositional => "*args",
            Self::KeywordOnly => "keyword-only",
            Self::VarKeyword => "**kwargs",
        }
    }
}

/// A parameter, or a dataclass field (kind positional).
#[derive(Clone, Debug)]
pub struct ParamFacts {
    pub name: String,
    pub line: usize,
    pub kind: FoundKind,
    pub default: Option<FoundDefault>,
    /// The values it takes, when the module says ([`crate::domain`]).
    pub domain: Option<FoundDomain>,
}

#[derive(Debug, Clone)]
pub struct FoundDefault {
    /// As written in the source, for reports.
    pub text: String,
    /// Normalised (quote style, spacing), for comparison.
    pub canonical: String,
    /// `field(default_factory=X)`: the factory's canonical form.
    pub factory: Option<String>,
}

/// A domain found in the module, and the line it comes from (the parameter, or the dispatch).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FoundDomain {
    pub values: Vec<String>,
    /// Where each of `values` is first written: its string literal's byte range in the
    /// module's text.
    pub spans: Vec<std::ops::Range<usize>>,
    pub line: usize,
}

impl FoundDomain {
    pub(crate) fn at(line: usize) -> FoundDomain {
        FoundDomain {
            values: Vec::new(),
            spans: Vec::new(),
            line,
        }
    }

    /// Adds `value`, written at `span`, unless it is there already.
    pub(crate) fn add(&mut self, value: &str, span: std::ops::Range<usize>) {
        if !self.values.iter().any(|v| v == value) {
            self.values.push(value.to_owned());
            self.spans.push(span);
        }
    }
}
