//! The API module's values in the flow (the consumer scan): its imports, its symbols and
//! their instances, members reached on them, classes deriving from an API class, and every
//! use made through them, with the call's shape and its literal arguments.

use super::api_use::{ApiNames, Arg, COMPUTED, ConsumerUse, Forward, UseKind};
use super::expr::Args;
use super::index::ClassId;
use super::value::{ApiVal, Val, Vals};
use super::walk::Analyzer;
use mooncake_sos_manifest::signature::CallShape;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};

impl<'a> Analyzer<'a> {
    fn api(&self) -> Option<&'a ApiNames> {
        self.config.api.as_ref()
    }

    /// Records a use of the API at `at` (the start of the name used).
    pub(super) fn record_api(&mut self, at: TextSize, subject: String, kind: UseKind) {
        if self.silent == 0 {
            let (line, col) = self.line_col(at);
            let body = self.func.map_or(0, |f| f + 1);
            self.api_uses[body].insert(ConsumerUse {
                line,
                col,
                subject,
                kind,
            });
        }
    }

    /// `from <api module> import name` (or `*`): the names bound, each use recorded.
    pub(super) fn import_api(&mut self, alias: &'a ast::Alias) {
        let Some(api) = self.api() else {
            return;
        };
        let name = alias.name.as_str();
        self.record_api(alias.start(), name.to_owned(), UseKind::Import);
        if name == "*" {
            for n in &api.symbols {
                let v = Val::Api(ApiVal::Name(n.clone()));
                self.bind(n, [v].into());
            }
            return;
        }
        let bound = alias.asname.as_ref().unwrap_or(&alias.name);
        self.bind(bound, [Val::Api(ApiVal::Name(name.to_owned()))].into());
    }

    /// An API member reached otherwise (inherited, through `super()`): a reference recorded
    /// unless it is being called.
    pub(super) fn api_attribute_of(
        &mut self,
        member: &ApiVal,
        at: TextSize,
        for_call: bool,
    ) -> Vals<'a> {
        if let (ApiVal::Member { class, name, .. }, false) = (member, for_call) {
            self.record_api(at, format!("{class}.{name}"), UseKind::Reference);
        }
        [Val::Api(member.clone())].into()
    }

    /// The keys of the dict a call of the native dict-taking callable `path` passes (first,
    /// or by its parameter's name), recorded as a use.
    pub(super) fn dict_keys(&mut self, path: &str, c: &'a ast::ExprCall) {
        let Some(param) = self.api().and_then(|a| a.dict_members.get(path)) else {
            return;
        };
        // The dict overload takes the dict alone: a call with more positional arguments is
        // another overload's (`setup(hostname, metadata_server, ...)`).
        let dict = match &c.arguments.args[..] {
            [only] if !only.is_starred_expr() => Some(only),
            [] => param.as_deref().and_then(|param| {
                c.arguments
                    .keywords
                    .iter()
                    .find(|k| k.arg.as_ref().is_some_and(|a| a.as_str() == param))
                    .map(|k| &k.value)
            }),
            _ => None,
        };
        let Some(dict) = dict else {
            return;
        };
        let scopes = self.enclosing_bodies();
        let keys = self.keys.of(dict, &scopes);
        let kind = UseKind::DictKeys {
            keys: keys.known.into_iter().collect(),
            unknown: keys.unknown,
        };
        self.record_api(callee_start(&c.func), path.to_owned(), kind);
    }

    /// The module's body, then each enclosing function's, the innermost last.
    fn enclosing_bodies(&self) -> Vec<&'a [ast::Stmt]> {
        let mut bodies = Vec::new();
        let mut func = self.func;
        while let Some(fid) = func {
            let f = &self.index.funcs[fid];
            bodies.push(&f.def.body[..]);
            let mut scope = self.index.scopes[f.scope].parent;
            func = None;
            while let Some(s) = scope {
                if let Some(outer) = self.index.funcs.iter().position(|g| g.scope == s) {
                    func = Some(outer);
                    break;
                }
                scope = self.index.scopes[s].parent;
            }
        }
        bodies.push(self.body);
        bodies.reverse();
        bodies
    }

    /// `v.name` for an API value (`None`: `v` is not one); a reference is recorded unless
    /// the member is being called (the call records it).
    pub(super) fn api_attribute(
        &mut self,
        v: &ApiVal,
        name: &'a str,
        at: TextSize,
        for_call: bool,
    ) -> Vals<'a> {
        let (subject, out) = match v {
            ApiVal::Module => (name.to_owned(), ApiVal::Name(name.to_owned())),
            ApiVal::Name(class) | ApiVal::Instance(class) => (
                format!("{class}.{name}"),
                ApiVal::Member {
                    class: class.clone(),
                    name: name.to_owned(),
                    on_class: matches!(v, ApiVal::Name(_)),
                },
            ),
            ApiVal::Member { .. } => return Vals::new(),
        };
        if !for_call {
            self.record_api(at, subject, UseKind::Reference);
        }
        [Val::Api(out)].into()
    }

    /// A member of a module class that derives from an API class and does not define the
    /// member itself: the API class's (`None`: not such a member).
    pub(super) fn inherited_api(&self, cid: ClassId, name: &str, on_class: bool) -> Option<ApiVal> {
        let class = self.api_base(cid)?;
        let own = self.index.lineage(cid).into_iter().any(|c| {
            let k = &self.index.classes[c];
            k.methods.contains_key(name)
                || k.own_attrs.contains(name)
                || self.index.scopes[k.scope].locals.contains(name)
        });
        (!own).then(|| ApiVal::Member {
            class,
            name: name.to_owned(),
            on_class,
        })
    }

    /// The API class `cid` derives from, along its bases here and in other files.
    pub(super) fn api_base(&self, cid: ClassId) -> Option<String> {
        self.index.lineage(cid).into_iter().find_map(|c| {
            self.api_bases[c]
                .clone()
                .or_else(|| self.remote_api_base(c))
        })
    }

    /// Calling an API value: its use recorded; what the call makes.
    pub(super) fn call_api(
        &mut self,
        v: &ApiVal,
        c: &'a ast::ExprCall,
        args: &Args<'a>,
        shape: &CallShape,
    ) -> Vals<'a> {
        let at = callee_start(&c.func);
        match v {
            ApiVal::Name(name) => {
                let made = self.api().is_some_and(|a| a.classes.contains(name));
                let kind = self.call_use(c, args, shape, false);
                self.note_forward(c, name, &kind);
                self.record_api(at, name.clone(), kind);
                match made {
                    true => [Val::Api(ApiVal::Instance(name.clone()))].into(),
                    false => Vals::new(),
                }
            }
            // `super().__init__(...)`, `Class.__init__(self, ...)`: the constructor.
            ApiVal::Member {
                class,
                name,
                on_class,
            } if name == "__init__" => {
                let mut kind = self.call_use(c, args, shape, false);
                if *on_class {
                    kind.drop_first_positional();
                }
                self.note_forward(c, class, &kind);
                self.record_api(at, class.clone(), kind);
                Vals::new()
            }
            ApiVal::Member {
                class,
                name,
                on_class,
            } => {
                let kind = self.call_use(c, args, shape, *on_class);
                let subject = format!("{class}.{name}");
                self.note_forward(c, &subject, &kind);
                self.record_api(at, subject, kind);
                Vals::new()
            }
            ApiVal::Module | ApiVal::Instance(_) => Vals::new(),
        }
    }

    /// When the call passes the enclosing function's own `**kwargs` on, the function
    /// forwards its callers' extra keywords to it.
    fn note_forward(&mut self, c: &'a ast::ExprCall, subject: &str, kind: &UseKind) {
        let Some(fid) = self.func else {
            return;
        };
        let Some(kwarg) = self.index.funcs[fid].kwarg else {
            return;
        };
        let passes = c.arguments.keywords.iter().any(|k| {
            k.arg.is_none() && matches!(&k.value, Expr::Name(n) if n.id.as_str() == kwarg)
        });
        let UseKind::Call {
            shape,
            on_class,
            args,
        } = kind
        else {
            return;
        };
        if !passes {
            return;
        }
        let forward = Forward {
            subject: subject.to_owned(),
            on_class: *on_class,
            shape: CallShape {
                double_starred: c
                    .arguments
                    .keywords
                    .iter()
                    .filter(|k| k.arg.is_none())
                    .count()
                    > 1,
                ..shape.clone()
            },
            args: args
                .iter()
                .filter(|a| a.keyword.is_some() || a.position.is_some())
                .cloned()
                .collect(),
        };
        if self.forwards[fid].insert(forward) {
            // Its callers, wherever they are, must be walked again to see it.
            self.deps.mark_all();
            self.changed = true;
        }
    }

    /// A call of a function that forwards its `**kwargs` to API calls (`forwards`): each such
    /// call again, at this call, with the keywords the function does not name (`named`) and
    /// whatever `**` this call passes. `at` is where this call's callee is.
    pub(super) fn forwarded_uses(
        &mut self,
        forwards: &[Forward],
        args: &Args<'a>,
        named: &[&str],
        at: TextSize,
    ) {
        for f in forwards {
            let mut shape = f.shape.clone();
            let mut all = f.args.clone();
            for k in &args.keywords {
                match k.name {
                    Some(name) if named.contains(&name) => {}
                    Some(name) => {
                        shape.keywords.push(name.to_owned());
                        let (line, col) = self.line_col(k.at);
                        all.push(Arg {
                            keyword: Some(name.to_owned()),
                            position: None,
                            line,
                            col,
                            value: self.line_col(k.value_at),
                            literals: literals(&k.vals),
                        });
                    }
                    None => shape.double_starred = true,
                }
            }
            shape.keywords.sort();
            let kind = UseKind::Call {
                shape,
                on_class: f.on_class,
                args: all,
            };
            self.record_api(at, f.subject.clone(), kind);
        }
    }

    /// [`forwarded_uses`](Self::forwarded_uses) for a call of function `fid` of this file.
    pub(super) fn forward_api(
        &mut self,
        fid: super::index::FuncId,
        args: &Args<'a>,
        c: &'a ast::ExprCall,
        named: &[&str],
    ) {
        if self.forwards[fid].is_empty() {
            return;
        }
        let forwards: Vec<Forward> = self.forwards[fid].iter().cloned().collect();
        self.forwarded_uses(&forwards, args, named, callee_start(&c.func));
    }

    /// A call of a class deriving from an API class that has no `__init__` of its own (nor
    /// one a decorator may write): the API class's constructor.
    pub(super) fn construct_api_subclass(
        &mut self,
        cid: ClassId,
        c: &'a ast::ExprCall,
        args: &Args<'a>,
        shape: &CallShape,
    ) {
        let Some(base) = self.api_base(cid) else {
            return;
        };
        let own_init = self.index.lineage(cid).into_iter().any(|k| {
            let class = &self.index.classes[k];
            class.methods.contains_key("__init__") || class.decorated
        });
        if !own_init {
            let kind = self.call_use(c, args, shape, false);
            self.record_api(callee_start(&c.func), base, kind);
        }
    }

    /// `functools.partial(f, ...)` of an API callable: a call of it with those arguments and
    /// more to come.
    pub(super) fn partial_api(&mut self, c: &'a ast::ExprCall, target: &Vals<'a>, args: &Args<'a>) {
        for v in target {
            let (subject, on_class) = match v {
                Val::Api(ApiVal::Name(name)) => (name.clone(), false),
                Val::Api(ApiVal::Member {
                    class,
                    name,
                    on_class,
                }) => (format!("{class}.{name}"), *on_class),
                _ => continue,
            };
            let shape = shape_of(args);
            let mut kind = self.call_use(c, args, &shape, on_class);
            kind.drop_first_positional();
            if let UseKind::Call { shape, .. } = &mut kind {
                shape.starred = true;
                shape.double_starred = true;
            }
            let at = c.arguments.args.first().map_or(c.start(), callee_start);
            self.record_api(at, subject, kind);
        }
    }

    /// A name of the API computed at run time (`getattr(t, "p" + "ut")`): a use no one can
    /// check.
    pub(super) fn computed_api(&mut self, owners: &Vals<'a>, at: TextSize) {
        for v in owners {
            let owner = match v {
                Val::Api(ApiVal::Module) => String::new(),
                Val::Api(ApiVal::Name(class) | ApiVal::Instance(class)) => format!("{class}."),
                _ => continue,
            };
            self.record_api(at, format!("{owner}{COMPUTED}"), UseKind::Reference);
        }
    }

    /// The use a call of an API callable makes: its shape and its arguments, with the
    /// literals each may hold.
    pub(super) fn call_use(
        &self,
        c: &'a ast::ExprCall,
        args: &Args<'a>,
        shape: &CallShape,
        on_class: bool,
    ) -> UseKind {
        let _ = c;
        let mut out = Vec::new();
        for (i, (vals, starred, e)) in args.positional.iter().enumerate() {
            if *starred {
                break;
            }
            let (line, col) = self.line_col(e.start());
            out.push(Arg {
                keyword: None,
                position: Some(i),
                line,
                col,
                value: (line, col),
                literals: literals(vals),
            });
        }
        for k in &args.keywords {
            let (line, col) = self.line_col(k.at);
            out.push(Arg {
                keyword: k.name.map(str::to_owned),
                position: None,
                line,
                col,
                value: self.line_col(k.value_at),
                literals: literals(&k.vals),
            });
        }
        UseKind::Call {
            shape: shape.clone(),
            on_class,
            args: out,
        }
    }
}

/// The literals among `vals`, as written, each once.
fn literals(vals: &Vals<'_>) -> Vec<String> {
    vals.iter()
        .filter_map(|v| match v {
            Val::Lit(text) => Some(text.to_string()),
            _ => None,
        })
        .collect()
}

/// Where the name a call calls starts: the member of `a.b(...)`, the name of `f(...)`.
pub(super) fn callee_start(func: &Expr) -> TextSize {
    match func {
        Expr::Attribute(a) => a.attr.start(),
        other => other.start(),
    }
}

/// The shape of a call with `args`.
pub(super) fn shape_of(args: &Args<'_>) -> CallShape {
    let mut keywords: Vec<String> = args
        .keywords
        .iter()
        .filter_map(|k| k.name.map(str::to_owned))
        .collect();
    keywords.sort();
    CallShape {
        positional: args.positional.iter().filter(|a| !a.1).count(),
        starred: args.positional.iter().any(|a| a.1),
        keywords,
        double_starred: args.keywords.iter().any(|k| k.name.is_none()),
    }
}
