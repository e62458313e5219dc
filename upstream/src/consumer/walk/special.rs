//! Calls that bind or call an API name in another way: `importlib.import_module("module")`
//! and `functools.partial(f, ...)`.

use super::{Origin, Val, Walk, dotted};
use crate::consumer::UseKind;
use ruff_python_ast::{self as ast, Expr};

impl<'a> Walk<'a, '_> {
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
            if let UseKind::Call { shape, .. } = &mut kind {
                shape.positional = shape.positional.saturating_sub(1);
                shape.starred = true;
                shape.double_starred = true;
            }
            self.push(line, subject, kind);
            return Some(None);
        }
        None
    }
}
