//! Calls that bind or call an API name in another way: `importlib.import_module("module")`,
//! `getattr(x, "name")` and `functools.partial(f, ...)`; and the ones whose name is computed
//! (`<computed>`, a finding).

use super::{Origin, Val, Walk, dotted};
use crate::consumer::UseKind;
use ruff_python_ast::{self as ast, Expr};

/// The subject of a use whose name is computed at run time (as the native surface says it).
pub(in crate::consumer) const COMPUTED: &str = "<computed>";

impl<'a> Walk<'a, '_> {
    /// A string built at run time whose literal start names a module of the package.
    fn starts_with_package(&self, e: &Expr) -> bool {
        let package = self.names.api_module.split('.').next().unwrap_or_default();
        let text = self.text[ruff_text_size::Ranged::range(e)].trim_start_matches(['f', 'F']);
        let text = text.trim_start_matches(['"', '\'']);
        text.starts_with(package) && text[package.len()..].starts_with(['.', '"', '\''])
    }

    /// `Some(what the call makes)` when `c` is one of these calls, its uses recorded.
    pub(super) fn special_call(
        &mut self,
        c: &'a ast::ExprCall,
        line: usize,
    ) -> Option<Option<Val>> {
        let called = dotted(&c.func).unwrap_or_default();
        let first = c.arguments.args.first();
        // `importlib.import_module("module")`: the module, as `import module` binds it.
        if matches!(called.as_str(), "importlib.import_module" | "import_module")
            && let Some(Expr::StringLiteral(m)) = first
            && let Some(origin) = self.origin_of(m.value.to_str())
        {
            return Some(Some(Val::Module(origin)));
        }
        // `getattr(x, "name")`: the member, as `x.name` reads it.
        if called == "getattr"
            && let [base, Expr::StringLiteral(name)] = &c.arguments.args[..]
            && c.arguments.keywords.is_empty()
        {
            let base = self.eval(base);
            return Some(self.member(base, name.value.to_str(), line, false));
        }
        // `getattr(x, "p" + "ut")` on the API: a member no one can check.
        if called == "getattr"
            && let [base, name, ..] = &c.arguments.args[..]
            && !matches!(name, Expr::StringLiteral(_))
        {
            let owner = match self.eval(base) {
                Some(Val::Module(Origin::Api)) => Some(String::new()),
                Some(Val::Name(Origin::Api, class) | Val::Instance(Origin::Api, class)) => {
                    Some(format!("{class}."))
                }
                _ => None,
            };
            self.eval(name);
            if let Some(owner) = owner {
                self.push(line, format!("{owner}{COMPUTED}"), UseKind::Reference);
            }
            return Some(None);
        }
        // `import_module("mooncake." + name)`, `__import__(f"mooncake.{x}")`: a module of the
        // package no one can name.
        if matches!(
            called.as_str(),
            "importlib.import_module" | "import_module" | "__import__"
        ) && let Some(arg) = first
            && !matches!(arg, Expr::StringLiteral(_))
            && self.starts_with_package(arg)
        {
            self.push(line, COMPUTED.into(), UseKind::Import);
            return Some(None);
        }
        // `functools.partial(f, ...)`: a call of `f` with those arguments and more to come.
        if matches!(called.as_str(), "functools.partial" | "partial")
            && let Some(f) = first
        {
            let target = self.callee(f, line);
            for a in c.arguments.args.iter().skip(1) {
                self.eval(a);
            }
            for k in &c.arguments.keywords {
                self.eval(&k.value);
            }
            let Some(target) = target else {
                return Some(None);
            };
            let (subject, on_class) = match target {
                Val::Name(Origin::Api, name) if !self.subclasses.contains_key(&name) => {
                    (name, false)
                }
                Val::Member {
                    origin: Origin::Api,
                    class,
                    name,
                    on_class,
                } => (format!("{class}.{name}"), on_class),
                _ => return Some(None),
            };
            let mut kind = self.call_use(c, on_class);
            kind.drop_first_positional();
            if let UseKind::Call { shape, .. } = &mut kind {
                shape.starred = true;
                shape.double_starred = true;
            }
            self.push(line, subject, kind);
            return Some(None);
        }
        None
    }
}
