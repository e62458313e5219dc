//! Calls: of native members (uses with their shapes, forwarded through `fn(*args)` helpers),
//! of the module's own functions and classes (their parameters and results), and the
//! builtins that reach attributes by name (getattr, hasattr, setattr, type).

use super::api::shape_of;
use super::expr::Args;
use super::index::{ClassId, FuncId};
use super::value::{Member, Val, Vals, without_literals};
use super::walk::{Analyzer, CallSite, builtin_name, strings};
use super::{Access, Guard, On, Target};
use mooncake_sos_manifest::signature::CallShape;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::Ranged;

impl<'a> Analyzer<'a> {
    pub fn call(&mut self, c: &'a ast::ExprCall) -> Vals<'a> {
        if let Some(name) = builtin_name(self, &c.func)
            && let Some(out) = self.builtin(name, c, self.line(c))
        {
            return out;
        }
        let func = match &*c.func {
            Expr::Attribute(a) => {
                let base = self.eval(&a.value);
                if let Some(out) = self.container_method(c, a, &base) {
                    return out;
                }
                self.attribute(&base, &a.attr, self.line(&*c.func), a.attr.start(), true)
            }
            other => self.eval(other),
        };
        let special = special(&c.func);
        if func.is_empty() && special.is_none() {
            // Nothing to follow into: only the uses inside the arguments count.
            for a in &c.arguments.args {
                self.eval(a);
            }
            for k in &c.arguments.keywords {
                self.eval(&k.value);
            }
            return Vals::new();
        }
        let line = self.line(c);
        let args = self.args(&c.arguments);
        match special {
            Some(Special::Copy) => {
                return args
                    .positional
                    .first()
                    .map(|a| a.0.clone())
                    .unwrap_or_default();
            }
            Some(Special::ImportModule) => return self.dynamic_import(&args, line),
            Some(Special::Partial) => {
                if let Some((target, _, _)) = args.positional.first() {
                    self.partial_api(c, target, &args);
                }
                return Vals::new();
            }
            None => {}
        }
        let shape = shape_of(&args);
        let mut out = Vals::new();
        for v in func {
            match v {
                Val::Api(api) => out.extend(self.call_api(&api, c, &args, &shape)),
                Val::Member(m) => {
                    self.dict_keys(&m.path, c);
                    self.record_call(&m, &shape, c, &args, line);
                    if m.on == On::Module && is_class_name(&m.path) {
                        out.insert(Val::Instance(m.path.clone()));
                    }
                }
                Val::ClassOf(class) => {
                    let guard = self.guard_for(&class);
                    let target = Target::Native {
                        path: class.clone(),
                        on: On::Class,
                    };
                    self.record_at(
                        line,
                        super::api::callee_start(&c.func),
                        target,
                        Access::Call(shape.clone()),
                        guard,
                    );
                    out.insert(Val::Instance(class));
                }
                Val::Function(fid) => {
                    self.bind_call(fid, 0, &args, c);
                    out.extend(self.returns[fid].read(self.func).iter().cloned());
                }
                Val::Bound(fid) => {
                    let skip = self.index.funcs[fid].implicit(true);
                    self.bind_call(fid, skip, &args, c);
                    out.extend(self.returns[fid].read(self.func).iter().cloned());
                }
                Val::Class(cid) => {
                    if let Some(init) = self.index.method(cid, "__init__") {
                        self.bind_call(init, 1, &args, c);
                    } else {
                        self.bind_fields(cid, &args);
                    }
                    self.construct_api_subclass(cid, c, &args, &shape);
                    out.insert(Val::Object(cid));
                }
                Val::Remote(r) => out.extend(self.remote_call(&r, &args, c)),
                _ => {}
            }
        }
        out
    }

    /// A call of a native member. `fn(*args)` inside a helper that received the member and
    /// its arguments (`_call_with_config(store.put, key, value)`) gets the shape of each call
    /// of the helper that passed the member.
    fn record_call(
        &mut self,
        m: &Member,
        shape: &CallShape,
        c: &'a ast::ExprCall,
        args: &Args<'a>,
        line: usize,
    ) {
        let guard = match &m.probe {
            Some((l, fallback)) => Some(Guard::Getattr {
                line: *l,
                fallback: fallback.clone(),
            }),
            None => self.guard_for(&m.path),
        };
        let target = Target::Native {
            path: m.path.clone(),
            on: m.on,
        };
        let mut forwarded = Vec::new();
        if let (Some(fid), Expr::Name(callee)) = (self.func, &*c.func) {
            let f = &self.index.funcs[fid];
            let param = f.params.iter().position(|(p, _)| *p == callee.id.as_str());
            let star = args.positional.iter().filter(|a| a.1).collect::<Vec<_>>();
            let forwards_varargs = matches!(
                (&star[..], &f.vararg),
                ([(_, _, Expr::Name(n))], Some(v)) if n.id.as_str() == *v
            );
            if let (Some(param), true) = (param, forwards_varargs) {
                let wanted = Val::Member(m.clone());
                for site in self.sites[fid].values() {
                    let passes = site
                        .args
                        .iter()
                        .any(|(i, vals)| *i == param && vals.contains(&wanted));
                    if passes {
                        let mut s = shape.clone();
                        if let Some(extra) = site.extra {
                            s.positional += extra;
                            s.starred = false;
                        }
                        forwarded.push((s, site.line));
                    }
                }
            }
        }
        let at = Some(super::api::callee_start(&c.func));
        if forwarded.is_empty() {
            let call = Access::Call(shape.clone());
            self.record_via(line, at, target.clone(), call, guard.clone(), None);
        }
        for (s, via) in forwarded {
            let call = Access::Call(s);
            self.record_via(line, at, target.clone(), call, guard.clone(), Some(via));
        }
    }

    /// Gives a module function's parameters what the call passes (skipping the `skip`
    /// implicit ones), and remembers the call for forwarded shapes.
    fn bind_call(&mut self, fid: FuncId, skip: usize, args: &Args<'a>, c: &'a ast::ExprCall) {
        let line = self.line(c);
        let f = &self.index.funcs[fid];
        let (scope, positional) = (f.scope, f.positional());
        let params: Vec<(&'a str, bool)> = f.params.clone();
        let (bound, extra) = args.bind(skip, positional, |n| {
            params.iter().position(|(p, _)| *p == n)
        });
        let bound: Vec<(usize, Vals<'a>)> =
            bound.into_iter().map(|(at, v)| (at, v.clone())).collect();
        let named: Vec<&str> = params.iter().map(|(p, _)| *p).collect();
        self.forward_api(fid, args, c, &named);
        let (saved, caller) = (self.scope, self.func);
        self.scope = scope;
        // A parameter takes what every caller passes: no literal is certain there, and a
        // container of only strings and literals has nothing to follow.
        for (at, vals) in &bound {
            let mut vals = without_literals(vals.clone());
            vals.retain(|v| match v {
                Val::Container(id) if !self.containers[*id].live => {
                    self.held_back.insert((*id, caller));
                    false
                }
                _ => true,
            });
            self.bind(params[*at].0, vals);
        }
        self.scope = saved;
        if self.silent == 0 {
            let site = CallSite {
                line,
                args: bound,
                extra,
            };
            // A new or different call changes the shapes the function's forwarded calls get.
            if self.sites[fid].get(&c.start()) != Some(&site) {
                self.sites[fid].insert(c.start(), site);
                self.deps.mark(fid);
                self.changed = true;
            }
        }
    }

    /// A call of a dataclass or NamedTuple `cid` (without an `__init__` of its own): its
    /// fields take the arguments, by place and by name.
    fn bind_fields(&mut self, cid: ClassId, args: &Args<'a>) {
        let Some(fields) = self.fields(cid) else {
            return;
        };
        let (bound, _) = args.bind(0, fields.len(), |n| fields.iter().position(|f| *f == n));
        let bound: Vec<(usize, Vals<'a>)> =
            bound.into_iter().map(|(i, v)| (i, v.clone())).collect();
        for (i, vals) in bound {
            self.bind_attr(cid, fields[i], without_literals(vals));
        }
    }

    /// The fields of dataclass (or NamedTuple) `cid`, its bases' first.
    pub(super) fn fields(&self, cid: ClassId) -> Option<Vec<&'a str>> {
        let lineage = self.index.lineage(cid);
        let mut out = Vec::new();
        let mut any = false;
        for c in lineage.into_iter().rev() {
            if let Some(f) = &self.index.classes[c].fields {
                any = true;
                out.extend(
                    f.iter()
                        .copied()
                        .filter(|n| !out.contains(n))
                        .collect::<Vec<_>>(),
                );
            }
        }
        any.then_some(out)
    }

    /// getattr, hasattr, setattr, type, `__import__`; `None` for any other name.
    fn builtin(&mut self, name: &str, c: &'a ast::ExprCall, line: usize) -> Option<Vals<'a>> {
        let argv = &c.arguments.args;
        let out = match (name, &argv[..]) {
            ("getattr", [obj, attr, rest @ ..]) if rest.len() <= 1 => {
                let (objs, names) = (self.eval(obj), self.eval(attr));
                let probe = rest.first().map(|d| (line, self.source(d).to_owned()));
                let mut out = rest.first().map(|d| self.eval(d)).unwrap_or_default();
                let names = strings(&names);
                for v in &objs {
                    if names.is_empty() {
                        self.dynamic(v, Access::Read, line, probe.is_some());
                    }
                }
                if names.is_empty() {
                    self.computed_api(&objs, c.start());
                }
                for n in &names {
                    out.extend(self.lookup_attr(
                        &objs,
                        n,
                        line,
                        attr.start(),
                        false,
                        probe.clone(),
                    ));
                }
                out
            }
            ("hasattr", [obj, attr]) => {
                let (objs, names) = (self.eval(obj), self.eval(attr));
                for v in &objs {
                    for n in strings(&names) {
                        if let Some((path, on)) = self.member_of(v, n) {
                            let guard = Some(Guard::Guarded { line });
                            self.record_at(
                                line,
                                c.start(),
                                Target::Native { path, on },
                                Access::Probe,
                                guard,
                            );
                        }
                    }
                }
                Vals::new()
            }
            ("setattr", [obj, attr, value]) => {
                let (objs, names, vals) = (self.eval(obj), self.eval(attr), self.eval(value));
                let names = strings(&names);
                for v in &objs {
                    if names.is_empty() {
                        self.dynamic(v, Access::Write, line, false);
                    }
                    for n in &names {
                        if let Val::Object(cid) = v {
                            self.bind_attr(*cid, n, vals.clone());
                        } else if let Some((path, on)) = self.member_of(v, n) {
                            let guard = self.guard_for(&path);
                            self.record_at(
                                line,
                                c.start(),
                                Target::Native { path, on },
                                Access::Write,
                                guard,
                            );
                        }
                    }
                }
                Vals::new()
            }
            ("type", [obj]) => self
                .eval(obj)
                .into_iter()
                .filter_map(|v| match v {
                    Val::Instance(c) => Some(Val::ClassOf(c)),
                    Val::Object(cid) => Some(Val::Class(cid)),
                    _ => None,
                })
                .collect(),
            ("__import__", _) => {
                let args = self.args(&c.arguments);
                self.dynamic_import(&args, line)
            }
            ("dict", _) => return Some(self.dict_call(c)),
            // `super()` in a method, `super(Class, self)`: the bases' members.
            ("super", []) => self
                .func
                .and_then(|f| self.index.funcs[f].class)
                .map(Val::Super)
                .into_iter()
                .collect(),
            ("super", [class, _]) => self
                .eval(class)
                .into_iter()
                .filter_map(|v| match v {
                    Val::Class(cid) => Some(Val::Super(cid)),
                    _ => None,
                })
                .collect(),
            _ => return None,
        };
        if name != "__import__" {
            for k in &c.arguments.keywords {
                self.eval(&k.value);
            }
        }
        Some(out)
    }

    /// A use whose member name is computed at run time on a native object.
    fn dynamic(&mut self, v: &Val, access: Access, line: usize, probed: bool) {
        if let Some((owner, on)) = self.native_owner(v) {
            let guard = if probed {
                Some(Guard::Getattr {
                    line,
                    fallback: String::new(),
                })
            } else {
                self.guard_for(&owner)
            };
            self.record(line, Target::Dynamic { owner, on }, access, guard);
        }
    }
}

/// Whether calling this native module member constructs an instance of it: pybind11 classes
/// are named in CapWords (`ReplicateConfig`), functions in snake_case (`_serialize_tensor`),
/// whose results are not native objects to follow.
fn is_class_name(path: &str) -> bool {
    path.rsplit('.')
        .next()
        .and_then(|n| n.chars().next())
        .is_some_and(|c| c.is_ascii_uppercase())
}

/// Library calls whose result the analysis follows.
enum Special {
    /// `copy.copy(x)` / `copy.deepcopy(x)`: what `x` holds.
    Copy,
    /// `importlib.import_module("pkg.mod")`.
    ImportModule,
    /// `functools.partial(f, ...)`: a call of `f` with those arguments and more to come.
    Partial,
}

fn special(func: &Expr) -> Option<Special> {
    match func {
        Expr::Name(n) if n.id.as_str() == "partial" => return Some(Special::Partial),
        Expr::Name(n) if n.id.as_str() == "import_module" => return Some(Special::ImportModule),
        _ => {}
    }
    let Expr::Attribute(a) = func else {
        return None;
    };
    let Expr::Name(base) = &*a.value else {
        return None;
    };
    match (base.id.as_str(), a.attr.as_str()) {
        ("copy", "copy" | "deepcopy") => Some(Special::Copy),
        ("importlib", "import_module") => Some(Special::ImportModule),
        ("functools", "partial") => Some(Special::Partial),
        _ => None,
    }
}
