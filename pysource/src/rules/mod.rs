//! The checks, one small rule each: a rule reads a use the flow found (of the API module, of
//! a native module, of a sibling) with what api.toml declares, and makes findings. Every
//! finding names its rule; `docs/architecture.md` says how to add one.
//!
//! | rule | what it finds |
//! |---|---|
//! | `api-undeclared` | an API name or method api.toml does not declare |
//! | `api-call` | a call of the API that does not fit the declared signature |
//! | `api-value` | a literal argument outside its parameter's declared domain |
//! | `computed-name` | a name of the API computed at run time, a `*` import |
//! | `dict-key` | a key of the dict passed to a `dict_keys` callable that api.toml does not declare |
//! | `native-undeclared` | a member of a native module (or a sibling) api.toml does not declare |
//! | `native-use` | a use that does not fit its declaration: required but declared optional, access, kind, call shape |
//! | `native-unused` | a declaration no use needs (a warning) |
//! | `image-core` | a use an image's core cannot serve (made by the images' check, from their records) |

pub mod api_call;
pub mod api_undeclared;
pub mod api_value;
pub mod computed;
pub(crate) mod declared;
pub mod dict_key;
pub mod native;
mod suggest;

pub use suggest::nearest;

use serde::Serialize;

/// A rule, by the id every finding carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Rule {
    ApiUndeclared,
    ApiCall,
    ApiValue,
    ComputedName,
    DictKey,
    NativeUndeclared,
    NativeUse,
    NativeUnused,
    ImageCore,
}

impl Rule {
    pub const ALL: [Rule; 9] = [
        Rule::ApiUndeclared,
        Rule::ApiCall,
        Rule::ApiValue,
        Rule::ComputedName,
        Rule::DictKey,
        Rule::NativeUndeclared,
        Rule::NativeUse,
        Rule::NativeUnused,
        Rule::ImageCore,
    ];

    pub fn id(self) -> &'static str {
        match self {
            Rule::ApiUndeclared => "api-undeclared",
            Rule::ApiCall => "api-call",
            Rule::ApiValue => "api-value",
            Rule::ComputedName => "computed-name",
            Rule::DictKey => "dict-key",
            Rule::NativeUndeclared => "native-undeclared",
            Rule::NativeUse => "native-use",
            Rule::NativeUnused => "native-unused",
            Rule::ImageCore => "image-core",
        }
    }

    /// What it finds, in one line (SARIF's rule description, the docs' table).
    pub fn summary(self) -> &'static str {
        match self {
            Rule::ApiUndeclared => "an API name or method api.toml does not declare",
            Rule::ApiCall => "a call of the API that does not fit the declared signature",
            Rule::ApiValue => "a literal argument outside its parameter's declared domain",
            Rule::ComputedName => "a name of the API computed at run time, or a `*` import",
            Rule::DictKey => {
                "a key of the dict passed to a dict-taking native call that api.toml does not declare"
            }
            Rule::NativeUndeclared => {
                "a member of a native module, or a sibling module, api.toml does not declare"
            }
            Rule::NativeUse => {
                "a native use that does not fit its declaration (required, access, kind, call)"
            }
            Rule::NativeUnused => "a declaration no use needs",
            Rule::ImageCore => "a use an image's native core cannot serve",
        }
    }
}

/// One finding: where (`line`, 1-based; `None` for a declaration, located only in api.toml;
/// `pos`, the line and column of the token at fault), which rule, and what: `subject: what:
/// expected X, found Y`, with the nearest declared name when one is close.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
pub struct Finding {
    pub line: Option<usize>,
    /// `native Class.member`, `sibling pkg.mod`, `MooncakeBundleTransfer.put`.
    pub subject: String,
    pub what: String,
    pub expected: String,
    pub found: String,
    #[serde(skip)]
    pub pos: Option<(usize, usize)>,
    #[serde(skip)]
    pub rule: Option<Rule>,
    /// `did you mean `x`?`: the nearest declared name, when one is within a small edit.
    #[serde(skip)]
    pub suggestion: Option<String>,
}

impl Finding {
    pub fn new(rule: Rule, subject: impl Into<String>, what: impl Into<String>) -> Self {
        Finding {
            line: None,
            subject: subject.into(),
            what: what.into(),
            expected: String::new(),
            found: String::new(),
            pos: None,
            rule: Some(rule),
            suggestion: None,
        }
    }

    /// At the token at `line`, `col` (0: a column not known).
    pub fn at(mut self, line: usize, col: usize) -> Self {
        self.line = Some(line);
        self.pos = (col > 0).then_some((line, col));
        self
    }

    /// At native use `u`: reported at its line (the statement's), pointing at its token.
    pub fn at_use(mut self, u: &crate::surface::Use) -> Self {
        self.line = Some(u.line);
        self.pos = (u.pos.1 > 0).then_some(u.pos);
        self
    }

    pub fn expected(mut self, expected: impl Into<String>, found: impl Into<String>) -> Self {
        self.expected = expected.into();
        self.found = found.into();
        self
    }

    pub fn suggest(mut self, name: Option<String>) -> Self {
        self.suggestion = name;
        self
    }

    /// `subject: what: expected X, found Y[; did you mean `x`?]`.
    pub fn message(&self) -> String {
        let mut text = format!(
            "{}: {}: expected {}, found {}",
            self.subject, self.what, self.expected, self.found
        );
        if let Some(s) = &self.suggestion {
            text.push_str(&format!("; did you mean `{s}`?"));
        }
        text
    }
}
