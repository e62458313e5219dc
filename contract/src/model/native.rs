//! The native surface api.toml declares: what the upstream module (and the consumer) use of
//! the native core — members required or only probed, with their pybind11 overloads — and the
//! sibling modules of the package the module imports. `cargo xtask verify` derives the same
//! facts from the module's source and compares them with these.

use super::{NativeCheck, NativeRequirement};
use serde::Serialize;

/// `[upstream] native_roles`, `[[native]]` and `[[sibling]]`.
#[derive(Clone, Debug, Default, Serialize)]
pub struct NativeSurface {
    /// Parameter names whose value is an instance of a native class, sorted by name.
    pub roles: Vec<NativeRole>,
    pub members: Vec<NativeMember>,
    pub siblings: Vec<Sibling>,
}

/// A parameter named `param` (in any function of the module) carries an instance of `class`,
/// e.g. `store` -> `MooncakeDistributedStore`.
#[derive(Clone, Debug, Serialize)]
pub struct NativeRole {
    pub param: String,
    /// Dotted path in the native module.
    pub class: String,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Usage {
    /// Used unguarded: without it the module fails.
    Required,
    /// Probed (getattr with a default, hasattr) or guarded: the module falls back without it.
    Optional,
}

impl Usage {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Required => "required",
            Self::Optional => "optional",
        }
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum NeededBy {
    Module,
    /// Only the consumer uses it (e.g. `setup(config: dict)`); no module use is expected.
    Consumer,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    Read,
    Write,
    ReadWrite,
}

impl Access {
    pub const ALL: [(&'static str, Access); 3] = [
        ("read", Access::Read),
        ("write", Access::Write),
        ("read-write", Access::ReadWrite),
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Read => "read",
            Self::Write => "write",
            Self::ReadWrite => "read-write",
        }
    }

    pub fn reads(self) -> bool {
        self != Self::Write
    }

    pub fn writes(self) -> bool {
        self != Self::Read
    }
}

/// One `[[native]]`.
#[derive(Clone, Debug, Serialize)]
pub struct NativeMember {
    /// Another extension module of the package (`mooncake.engine`); `None`: the native core
    /// (`[upstream] native_module`).
    pub module: Option<String>,
    /// Dotted path in the native module: a class, a function, or `Class.method`.
    pub object: String,
    pub kind: MemberKind,
    pub usage: Usage,
    pub by: NeededBy,
    /// For a callable whose first argument is a dict (`setup({...})`): the keys callers may
    /// pass, sorted. `verify --consumer` fails on any other key a consumer passes.
    pub dict_keys: Vec<String>,
    pub reason: String,
}

#[derive(Clone, Debug, Serialize)]
pub enum MemberKind {
    /// `object` itself (a method, function or class). With an overload (a pybind11 docstring
    /// signature after `self`; a class's is its constructor's), every call must fit it.
    Callable { overload: Option<String> },
    /// An attribute of `object`, looked up on an instance made with no arguments when
    /// `instance`.
    Attribute {
        name: String,
        instance: bool,
        access: Access,
    },
}

impl NativeMember {
    /// The dotted path a use names: `object`, or `object.attribute`; in another extension
    /// module, qualified by it (`mooncake.engine.TransferEngine.initialize`).
    pub fn path(&self) -> String {
        let local = match &self.kind {
            MemberKind::Callable { .. } => self.object.clone(),
            MemberKind::Attribute { name, .. } => format!("{}.{name}", self.object),
        };
        qualified(self.module.as_deref(), &local)
    }

    /// What the run-time checkers (shim, Rust runtime) verify today: required members with a
    /// check they can express. A presence-only `A.b` is the attribute `b` of `A`; a
    /// presence-only top-level name has no such form and is left to `verify`.
    pub fn runtime_requirement(&self) -> Option<NativeRequirement> {
        if self.usage != Usage::Required {
            return None;
        }
        let (object, check) = match &self.kind {
            MemberKind::Callable {
                overload: Some(o), ..
            } => (self.object.clone(), NativeCheck::Overload(o.clone())),
            MemberKind::Callable { overload: None } => {
                let (owner, name) = self.object.rsplit_once('.')?;
                let check = NativeCheck::Attribute {
                    name: name.to_owned(),
                    instance: false,
                };
                (owner.to_owned(), check)
            }
            MemberKind::Attribute { name, instance, .. } => {
                let check = NativeCheck::Attribute {
                    name: name.clone(),
                    instance: *instance,
                };
                (self.object.clone(), check)
            }
        };
        Some(NativeRequirement {
            module: self.module.clone(),
            object,
            check,
            reason: self.reason.clone(),
        })
    }
}

/// A path in an extension module as uses and messages name it: bare in the native core,
/// prefixed by the module's name in any other.
pub fn qualified(module: Option<&str>, path: &str) -> String {
    match module {
        Some(m) => format!("{m}.{path}"),
        None => path.to_owned(),
    }
}

/// One `[[sibling]]`: a module of the same package (e.g. `mooncake.buffer_pool`).
#[derive(Clone, Debug, Serialize)]
pub struct Sibling {
    pub module: String,
    /// Required: imported at module level, unguarded. Optional: guarded by try or lazy.
    pub usage: Usage,
    pub reason: String,
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
                let p: &mut OverloadParam = p;
                p.kind = OverloadParamKind::PositionalOnly;
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
        let name = head.split(':').next().unwrap_or_default().trim();
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
        if !super::values::is_python_identifier(name) {
            return Err(format!("`{piece}` does not start with a parameter name"));
        }
        params.push(OverloadParam {
            name: name.to_owned(),
            kind,
            has_default: default.is_some(),
        });
    }
    Ok(params)
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
}
