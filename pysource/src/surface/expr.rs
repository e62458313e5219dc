//! Expressions: what each may hold, and the uses it makes on the way (attribute reads, calls
//! with their shapes, getattr / hasattr / setattr, constructions, dynamic imports).

use super::index::ClassId;
use super::index::FuncKind;
use super::value::{ApiVal, Member, Remote, Val, Vals};
use super::walk::Analyzer;
use super::{Access, Guard, On, Target};
use mooncake_sos_manifest::model::values::is_dotted_name;
use ruff_python_ast::visitor;
use ruff_python_ast::{self as ast, BoolOp, Expr};
use ruff_text_size::{Ranged, TextSize};
use std::borrow::Cow;

/// A call's evaluated arguments: positional ones (value, starred, expression), keywords.
pub(super) struct Args<'a> {
    pub positional: Vec<(Vals<'a>, bool, &'a Expr)>,
    pub keywords: Vec<Keyword<'a>>,
}

/// A keyword argument: its name (`None`: a `**mapping` of keys not known), what it may
/// hold, and where its name (or the `**`) is.
pub(super) struct Keyword<'a> {
    pub name: Option<&'a str>,
    pub vals: Vals<'a>,
    pub at: TextSize,
    /// Where its value is.
    pub value_at: TextSize,
}

impl<'a> Args<'a> {
    /// What each parameter of a function receives: positional arguments from parameter
    /// `skip` on (of `positional` positional parameters), keywords by `index_of` their name;
    /// and how many positional arguments are left over (`None`: a `*args` of unknown length).
    pub fn bind(
        &self,
        skip: usize,
        positional: usize,
        index_of: impl Fn(&str) -> Option<usize>,
    ) -> (Vec<(usize, &Vals<'a>)>, Option<usize>) {
        let mut bound = Vec::new();
        let mut extra = Some(0);
        for (i, (vals, starred, _)) in self.positional.iter().enumerate() {
            if *starred {
                extra = None;
                break;
            }
            if skip + i < positional {
                bound.push((skip + i, vals));
            } else if let Some(n) = extra.as_mut() {
                *n += 1;
            }
        }
        for k in &self.keywords {
            if let Some(at) = k.name.and_then(&index_of) {
                bound.push((at, &k.vals));
            }
        }
        (bound, extra)
    }
}

impl<'a> Analyzer<'a> {
    pub fn eval(&mut self, e: &'a Expr) -> Vals<'a> {
        match e {
            Expr::Name(n) => self.lookup(&n.id),
            Expr::Attribute(a) => {
                let base = self.eval(&a.value);
                let line = self.line(e);
                self.attribute(&base, &a.attr, line, a.attr.start(), false)
            }
            Expr::Call(c) => self.call(c),
            Expr::StringLiteral(s) => {
                let text = s.value.to_str();
                let mut out: Vals<'a> = [Val::Lit(Cow::Borrowed(self.source(e)))].into();
                // As a name, only text that can name an attribute or a module matters.
                if is_dotted_name(text) {
                    out.insert(Val::Str(text));
                }
                out
            }
            Expr::NumberLiteral(_) | Expr::BooleanLiteral(_) | Expr::NoneLiteral(_) => {
                [Val::Lit(Cow::Borrowed(self.source(e)))].into()
            }
            Expr::Tuple(_) | Expr::List(_) | Expr::Set(_) | Expr::Dict(_) => {
                self.literal_container(e)
            }
            Expr::Subscript(x) => {
                let base = self.eval(&x.value);
                self.subscript(&base, &x.slice)
            }
            Expr::If(i) => {
                self.eval(&i.test);
                let (positive, negative) = self.guard_paths(&i.test);
                let line = self.line(&*i.test);
                let mut out = self.eval_guarded(positive, line, &i.body);
                out.extend(self.eval_guarded(negative, line, &i.orelse));
                out
            }
            Expr::BoolOp(b) => {
                // `hasattr(x, n) and x.n()`: each operand is guarded by the ones before it.
                let mark = self.guards.len();
                let mut out = Vals::new();
                for value in &b.values {
                    out.extend(self.eval(value));
                    if b.op == BoolOp::And {
                        let (positive, _) = self.guard_paths(value);
                        let line = self.line(value);
                        self.guards.extend(positive.into_iter().map(|p| (p, line)));
                    }
                }
                self.guards.truncate(mark);
                out
            }
            Expr::Named(n) => {
                let vals = self.eval(&n.value);
                self.assign(&n.target, vals.clone());
                vals
            }
            Expr::Await(a) => self.eval(&a.value),
            Expr::ListComp(ast::ExprListComp {
                elt, generators, ..
            })
            | Expr::SetComp(ast::ExprSetComp {
                elt, generators, ..
            })
            | Expr::Generator(ast::ExprGenerator {
                elt, generators, ..
            }) => {
                self.generators(generators);
                self.eval(elt);
                Vals::new()
            }
            Expr::DictComp(d) => {
                self.generators(&d.generators);
                if let Some(k) = &d.key {
                    self.eval(k);
                }
                self.eval(&d.value);
                Vals::new()
            }
            _ => {
                visitor::walk_expr(self, e);
                Vals::new()
            }
        }
    }

    fn eval_guarded(&mut self, paths: Vec<String>, line: usize, e: &'a Expr) -> Vals<'a> {
        let mark = self.guards.len();
        self.guards.extend(paths.into_iter().map(|p| (p, line)));
        let out = self.eval(e);
        self.guards.truncate(mark);
        out
    }

    /// Comprehension targets are bound in the enclosing scope (close enough for typing).
    fn generators(&mut self, generators: &'a [ast::Comprehension]) {
        for g in generators {
            let vals = self.eval(&g.iter);
            let items = self.elements(&vals);
            self.assign(&g.target, items);
            for cond in &g.ifs {
                self.eval(cond);
            }
        }
    }

    /// The native member `name` of `v`, with where it is looked up, if `v` is native.
    pub fn member_of(&self, v: &Val, name: &str) -> Option<(String, On)> {
        match v {
            Val::NativeModule(m) => Some((self.config.member_path(*m, name), On::Module)),
            Val::Member(m) if m.on == On::Module => Some((format!("{}.{name}", m.path), On::Class)),
            Val::ClassOf(c) => Some((format!("{c}.{name}"), On::Class)),
            Val::Instance(c) => Some((format!("{c}.{name}"), On::Instance)),
            _ => None,
        }
    }

    /// The owner a dynamic use names (`""`: the native module), if `v` is native.
    pub fn native_owner(&self, v: &Val) -> Option<(String, On)> {
        match v {
            Val::NativeModule(m) => Some((self.config.member_path(*m, ""), On::Module)),
            Val::Member(m) if m.on == On::Module => Some((m.path.clone(), On::Class)),
            Val::ClassOf(c) => Some((c.clone(), On::Class)),
            Val::Instance(c) => Some((c.clone(), On::Instance)),
            _ => None,
        }
    }

    /// `base.name`. A native member is recorded as a read unless it is being called (the call
    /// records it) or `probe` says it came from getattr.
    /// `base.name`: `line` is where a native use is recorded (the expression's start), `at`
    /// the name's own place (where an API use is).
    pub fn attribute(
        &mut self,
        base: &Vals<'a>,
        name: &'a str,
        line: usize,
        at: TextSize,
        for_call: bool,
    ) -> Vals<'a> {
        self.lookup_attr(base, name, line, at, for_call, None)
    }

    pub fn lookup_attr(
        &mut self,
        base: &Vals<'a>,
        name: &'a str,
        line: usize,
        at: TextSize,
        for_call: bool,
        probe: Option<(usize, String)>,
    ) -> Vals<'a> {
        let mut out = Vals::new();
        for v in base {
            if let Some((path, on)) = self.member_of(v, name) {
                if !for_call {
                    let guard = match &probe {
                        Some((l, fallback)) => Some(Guard::Getattr {
                            line: *l,
                            fallback: fallback.clone(),
                        }),
                        None => self.guard_for(&path),
                    };
                    let target = Target::Native {
                        path: path.clone(),
                        on,
                    };
                    self.record_at(line, at, target, Access::Read, guard);
                }
                out.insert(Val::Member(Member {
                    path,
                    on,
                    probe: probe.clone(),
                }));
                continue;
            }
            match v {
                Val::Package(p) => {
                    let full = format!("{p}.{name}");
                    out.extend(self.config.module_value(&full));
                }
                Val::Object(cid) => {
                    out.extend(self.object_attr(*cid, name));
                    if let Some(api) = self.inherited_api(*cid, name, false) {
                        out.extend(self.api_attribute_of(&api, at, for_call));
                    }
                }
                Val::Class(cid) => {
                    if let Some(fid) = self.index.method(*cid, name) {
                        out.insert(Val::Function(fid));
                    } else if let Some(api) = self.inherited_api(*cid, name, true) {
                        out.extend(self.api_attribute_of(&api, at, for_call));
                    }
                }
                Val::Super(cid) => out.extend(self.super_attr(*cid, name, at, for_call)),
                Val::Remote(r) => out.extend(self.remote_attr(r, name)),
                Val::Api(api) => out.extend(self.api_attribute(api, name, at, for_call)),
                _ => {}
            }
        }
        out
    }

    /// An attribute of an instance of a module class: what `self.<name>` was given, a class
    /// attribute, or a method (bound; a property's result).
    fn object_attr(&mut self, cid: usize, name: &'a str) -> Vals<'a> {
        let mut out = Vals::new();
        if let Some(fid) = self.index.method(cid, name) {
            let f = &self.index.funcs[fid];
            match f.kind {
                FuncKind::Property => out.extend(self.returns[fid].read(self.func).iter().cloned()),
                FuncKind::Static => {
                    out.insert(Val::Function(fid));
                }
                _ => {
                    out.insert(Val::Bound(fid));
                }
            }
            return out;
        }
        let reader = self.func;
        for c in self.index.lineage(cid) {
            let scope = self.index.classes[c].scope;
            for slots in [&mut self.attrs[c], &mut self.env[scope]] {
                // A body reads the name even before it has a value: it must see it arrive.
                let slot = match slots.get_mut(name) {
                    Some(slot) => slot,
                    None if reader.is_none() => continue,
                    None => slots.entry(name).or_default(),
                };
                out.extend(slot.read(reader).iter().cloned());
            }
        }
        out.extend(self.inherited(cid, name));
        out
    }

    /// `super().name` in a method of class `cid`: the member its bases give, on the instance
    /// (a base here, a base in another file, else the API class it derives from).
    fn super_attr(
        &mut self,
        cid: ClassId,
        name: &'a str,
        at: TextSize,
        for_call: bool,
    ) -> Vals<'a> {
        let mut out = Vals::new();
        let lineage = self.index.lineage(cid);
        for &c in &lineage[1..] {
            if let Some(&fid) = self.index.classes[c].methods.get(name) {
                match self.index.funcs[fid].kind {
                    FuncKind::Property => {
                        out.extend(self.returns[fid].read(self.func).iter().cloned())
                    }
                    FuncKind::Static => {
                        out.insert(Val::Function(fid));
                    }
                    _ => {
                        out.insert(Val::Bound(fid));
                    }
                }
                return out;
            }
        }
        for &c in &lineage {
            for b in self.remote_bases[c].clone() {
                let Remote::Def {
                    module,
                    name: class,
                } = &b
                else {
                    continue;
                };
                match self.exports_of(module).is_some() {
                    true => out.extend(self.remote_object_attr(module, class, name)),
                    // Not read yet: a call of it draws the file into the program.
                    false => {
                        out.insert(Val::Remote(Remote::Def {
                            module: module.clone(),
                            name: format!("{class}.{name}"),
                        }));
                    }
                }
            }
        }
        if out.is_empty()
            && let Some(class) = self.api_base(cid)
        {
            let member = ApiVal::Member {
                class,
                name: name.to_owned(),
                on_class: false,
            };
            out.extend(self.api_attribute_of(&member, at, for_call));
        }
        out
    }

    pub fn args(&mut self, arguments: &'a ast::Arguments) -> Args<'a> {
        let positional = arguments
            .args
            .iter()
            .map(|a| match a {
                Expr::Starred(s) => (self.eval(&s.value), true, &*s.value),
                other => (self.eval(other), false, other),
            })
            .collect();
        let mut keywords = Vec::new();
        for (name, value, at) in keyword_args(&arguments.keywords) {
            let vals = self.eval(value);
            match name {
                Some(_) => keywords.push(Keyword {
                    name,
                    vals,
                    at,
                    value_at: value.start(),
                }),
                // `**d` of a dict whose keys are all known passes those keys.
                None => keywords.extend(self.spread(vals, at)),
            }
        }
        Args {
            positional,
            keywords,
        }
    }
}

/// A call's keyword arguments, each with where its name is: `**{"k": v}` with literal string
/// keys spelt out as `k=v` (it passes exactly those); any other `**mapping` stays `None`
/// (keys unknown).
pub(crate) fn keyword_args(keywords: &[ast::Keyword]) -> Vec<(Option<&str>, &Expr, TextSize)> {
    let mut out = Vec::new();
    for k in keywords {
        if let (None, Expr::Dict(d)) = (&k.arg, &k.value) {
            let literal: Option<Vec<(&str, &Expr, TextSize)>> = d
                .items
                .iter()
                .map(|item| match &item.key {
                    Some(key @ Expr::StringLiteral(s)) => {
                        Some((s.value.to_str(), &item.value, key.start()))
                    }
                    _ => None,
                })
                .collect();
            if let Some(items) = literal {
                out.extend(
                    items
                        .into_iter()
                        .map(|(name, value, at)| (Some(name), value, at)),
                );
                continue;
            }
        }
        let at = k.arg.as_ref().map_or(k.start(), |a| a.start());
        out.push((k.arg.as_ref().map(|a| a.as_str()), &k.value, at));
    }
    out
}
