//! The analysis's side of [`super::program`]: names imported from other files of the
//! program, calls of their functions and classes, attributes of their instances, and what
//! this file exports for the next round.

use super::expr::Args;
use super::index::{ClassId, FuncId, FuncKind, MODULE_SCOPE};
use super::value::{ApiVal, Val, Vals};
use super::value::{Remote, Shared, is_native, share, without_literals};
use super::walk::Analyzer;
use super::world::{ClassExport, Exports, FuncExport, Read};
use ruff_python_ast as ast;
use std::collections::BTreeMap;

/// Base classes are followed across files this deep (a cycle stops there too).
const MAX_BASES: usize = 16;

impl<'a> Analyzer<'a> {
    /// `f` or `C.m` for a top-level function or a method of a top-level class; `None` for
    /// one nested in a function, which no other file can reach.
    pub fn func_name(&self, fid: FuncId) -> Option<String> {
        let f = &self.index.funcs[fid];
        let parent = self.index.scopes[f.scope].parent?;
        match f.class {
            Some(c) => Some(format!("{}.{}", self.class_name(c)?, f.def.name)),
            None if parent == MODULE_SCOPE => Some(f.def.name.to_string()),
            None => None,
        }
    }

    pub fn class_name(&self, cid: ClassId) -> Option<String> {
        let class = &self.index.classes[cid];
        (self.index.scopes[class.scope].parent == Some(MODULE_SCOPE)).then(|| class.name.to_owned())
    }

    /// A module of the program (another file given, or this one), read or not yet.
    pub fn in_program(&self, module: &str) -> bool {
        self.world.known.contains(module)
    }

    /// What file `module` exports, once it is read (the read recorded: it joining changes
    /// what this file finds).
    pub fn exports_of(&self, module: &str) -> Option<&'a Exports> {
        self.reads
            .borrow_mut()
            .insert(Read::Module(module.to_owned()));
        self.world.modules.get(module).map(|e| &**e)
    }

    fn world_name(&self, module: &str, name: &str) -> Option<&'a Shared> {
        let e = self.exports_of(module)?;
        self.reads
            .borrow_mut()
            .insert(Read::Name(module.to_owned(), name.to_owned()));
        e.names.get(name)
    }

    pub fn world_func(&self, module: &str, name: &str) -> Option<&'a FuncExport> {
        let e = self.exports_of(module)?;
        self.reads
            .borrow_mut()
            .insert(Read::Func(module.to_owned(), name.to_owned()));
        e.funcs.get(name)
    }

    /// What `from <module> import <name>` binds, when `module` is in the program: the name's
    /// values there, or the module `<module>.<name>`.
    pub fn imported(&self, module: &str, name: &str) -> Vals<'a> {
        let mut out = Vals::new();
        match self.exports_of(module) {
            Some(_) => out.extend(self.world_name(module, name).into_iter().flatten().cloned()),
            // Not read yet: a definition there, known once a call passes it a native value.
            None if self.in_program(module) => {
                out.insert(Val::Remote(Remote::Def {
                    module: module.to_owned(),
                    name: name.to_owned(),
                }));
            }
            None => {}
        }
        let full = format!("{module}.{name}");
        if self.in_program(&full) {
            out.insert(Val::Remote(Remote::Module(full)));
        }
        out
    }

    /// `v.name` for a value of another file.
    pub fn remote_attr(&mut self, r: &Remote, name: &str) -> Vals<'a> {
        match r {
            Remote::Module(m) => self.imported(m, name),
            Remote::Def {
                module,
                name: class,
            } => {
                let mut out = Vals::new();
                if let Some(c) = self.remote_class(module, class)
                    && c.methods.contains(name)
                {
                    let name = format!("{class}.{name}");
                    out.insert(Val::Remote(Remote::Def {
                        module: module.clone(),
                        name,
                    }));
                }
                out
            }
            Remote::Object { module, class } => self.remote_object_attr(module, class, name),
            Remote::Bound { .. } => Vals::new(),
        }
    }

    /// An attribute of an instance of `class` (of `module`): a method (bound; a property's
    /// result), else what `self.<name>` holds there, along its bases.
    pub fn remote_object_attr(&self, module: &str, class: &str, name: &str) -> Vals<'a> {
        let mut out = Vals::new();
        let mut todo = vec![(module.to_owned(), class.to_owned())];
        let mut seen = Vec::new();
        while let Some((m, c)) = todo.pop() {
            if seen.len() == MAX_BASES || seen.contains(&(m.clone(), c.clone())) {
                continue;
            }
            seen.push((m.clone(), c.clone()));
            let Some(export) = self.remote_class(&m, &c) else {
                continue;
            };
            if export.methods.contains(name) {
                let q = format!("{c}.{name}");
                match self.world_func(&m, &q) {
                    Some(f) if f.property => out.extend(f.returns.iter().cloned()),
                    _ => {
                        out.insert(Val::Remote(Remote::Bound { module: m, name: q }));
                    }
                }
                return out;
            }
            if let Some(vals) = export.attrs.get(name) {
                out.extend(vals.iter().cloned());
            }
            for b in &export.bases {
                if let Remote::Def { module, name } = b {
                    todo.push((module.clone(), name.clone()));
                }
            }
        }
        out
    }

    fn remote_class(&self, module: &str, class: &str) -> Option<&'a ClassExport> {
        let e = self.exports_of(module)?;
        self.reads
            .borrow_mut()
            .insert(Read::Class(module.to_owned(), class.to_owned()));
        e.classes.get(class)
    }

    /// Calling a value of another file: its function's result, or an instance of its class;
    /// the arguments reach the callee's parameters in the next round.
    pub fn remote_call(&mut self, r: &Remote, args: &Args<'a>, c: &'a ast::ExprCall) -> Vals<'a> {
        let mut out = Vals::new();
        self.remote_forwards(r, args, c);
        match r {
            Remote::Def { module, name } if self.exports_of(module).is_none() => {
                self.pass(module, name, 0, args);
            }
            Remote::Def { module, name } => {
                if let Some(f) = self.world_func(module, name) {
                    self.pass(module, name, 0, args);
                    out.extend(f.returns.iter().cloned());
                } else if self.remote_class(module, name).is_some() {
                    let init = format!("{name}.__init__");
                    self.pass(module, &init, 1, args);
                    out.insert(Val::Remote(Remote::Object {
                        module: module.clone(),
                        class: name.clone(),
                    }));
                }
            }
            Remote::Bound { module, name } => {
                if let Some(f) = self.world_func(module, name) {
                    self.pass(module, name, f.bound, args);
                    out.extend(f.returns.iter().cloned());
                }
            }
            Remote::Module(_) | Remote::Object { .. } => {}
        }
        out
    }

    /// A function of another file that forwards its `**kwargs` to API calls: those calls
    /// again, at this call, with this call's keywords the function does not name.
    fn remote_forwards(&mut self, r: &Remote, args: &Args<'a>, c: &'a ast::ExprCall) {
        let (Remote::Def { module, name } | Remote::Bound { module, name }) = r else {
            return;
        };
        let Some(f) = self.world_func(module, name) else {
            return;
        };
        if f.forwards.is_empty() {
            return;
        }
        let named: Vec<&str> = f.params.iter().map(|(p, _)| p.as_str()).collect();
        let forwards = f.forwards.clone();
        self.forwarded_uses(&forwards, args, &named, super::api::callee_start(&c.func));
    }

    /// Records what a call passes to `name` of `module` (its first `skip` parameters bound).
    fn pass(&mut self, module: &str, name: &str, skip: usize, args: &Args<'a>) {
        if self.exports_of(module).is_none() {
            // A file not read yet: it joins the program when it is passed a native value.
            let passes = args
                .positional
                .iter()
                .map(|a| &a.0)
                .chain(args.keywords.iter().map(|k| &k.vals));
            if passes.flat_map(|v| v.iter()).any(is_native) {
                self.outbound
                    .entry((module.to_owned(), name.to_owned()))
                    .or_default();
            }
            return;
        }
        let Some(f) = self.world_func(module, name) else {
            return;
        };
        let positional = f.params.iter().filter(|(_, kw)| !kw).count();
        let (bound, _) = args.bind(skip, positional, |n| {
            f.params.iter().position(|(p, _)| p == n)
        });
        for (at, vals) in bound {
            let shared = self.shared(&without_literals(vals.clone()));
            if shared.is_empty() {
                continue;
            }
            let key = (module.to_owned(), name.to_owned());
            let entry = self.outbound.entry(key).or_default().entry(at).or_default();
            entry.extend(shared);
        }
    }

    /// A definition of this file as other files name it.
    pub fn local_ref(&self, v: &Val<'_>) -> Option<Remote> {
        let module = self.config.module.clone();
        Some(match v {
            Val::Object(cid) => Remote::Object {
                module,
                class: self.class_name(*cid)?,
            },
            Val::Class(cid) => Remote::Def {
                module,
                name: self.class_name(*cid)?,
            },
            Val::Function(fid) => Remote::Def {
                module,
                name: self.func_name(*fid)?,
            },
            Val::Bound(fid) => Remote::Bound {
                module,
                name: self.func_name(*fid)?,
            },
            _ => return None,
        })
    }

    /// `vals` as other files see them: a container as the sequence of what it holds.
    fn shared(&self, vals: &Vals<'_>) -> Shared {
        let mut out = Shared::new();
        for v in vals {
            match v {
                Val::Container(id) => {
                    let c = &self.containers[*id];
                    let held: Vec<Val<'static>> = c
                        .items
                        .values()
                        .chain([&c.any])
                        .flat_map(|slot| slot.vals.iter())
                        .filter(|v| !matches!(v, Val::Container(_)))
                        .filter_map(|v| share(v, &|v| self.local_ref(v)))
                        .collect();
                    if !held.is_empty() {
                        out.insert(Val::Seq(held));
                    }
                }
                _ => out.extend(share(v, &|v| self.local_ref(v))),
            }
        }
        out
    }

    /// What this file gives the others, from the values the analysis settled on.
    pub fn exports(&self) -> Exports {
        let mut e = Exports::default();
        for (name, slot) in &self.env[MODULE_SCOPE] {
            let vals = self.shared(&slot.vals);
            if !vals.is_empty() {
                e.names.insert((*name).to_owned(), vals);
            }
        }
        for fid in 0..self.index.funcs.len() {
            let Some(q) = self.func_name(fid) else {
                continue;
            };
            let f = &self.index.funcs[fid];
            e.funcs.insert(
                q,
                FuncExport {
                    params: f
                        .params
                        .iter()
                        .map(|(p, kw)| ((*p).to_owned(), *kw))
                        .collect(),
                    bound: f.implicit(true),
                    property: f.kind == FuncKind::Property,
                    returns: self.shared(&self.returns[fid].vals),
                    forwards: self.forwards[fid].iter().cloned().collect(),
                },
            );
        }
        // A dataclass's constructor, as its fields make it.
        for cid in 0..self.index.classes.len() {
            let (Some(name), Some(fields)) = (self.class_name(cid), self.fields(cid)) else {
                continue;
            };
            if self.index.method(cid, "__init__").is_some() {
                continue;
            }
            let mut params = vec![("self".to_owned(), false)];
            params.extend(fields.iter().map(|f| ((*f).to_owned(), false)));
            e.funcs.insert(
                format!("{name}.__init__"),
                FuncExport {
                    params,
                    bound: 1,
                    ..FuncExport::default()
                },
            );
        }
        for cid in 0..self.index.classes.len() {
            let Some(name) = self.class_name(cid) else {
                continue;
            };
            let class = &self.index.classes[cid];
            let mut attrs: BTreeMap<String, Shared> = BTreeMap::new();
            for slots in [&self.attrs[cid], &self.env[class.scope]] {
                for (n, slot) in slots {
                    let vals = self.shared(&slot.vals);
                    if !vals.is_empty() {
                        attrs.entry((*n).to_owned()).or_default().extend(vals);
                    }
                }
            }
            let mut bases = self.remote_bases[cid].clone();
            bases.extend(
                class
                    .bases
                    .iter()
                    .filter_map(|b| self.local_ref(&Val::Class(*b))),
            );
            e.classes.insert(
                name,
                ClassExport {
                    attrs,
                    methods: class.methods.keys().cloned().collect(),
                    bases,
                    api_base: self.api_base(cid),
                },
            );
        }
        e
    }

    /// A class's bases that the flow says are other files' classes, or an API class.
    pub fn note_bases(&mut self, cid: ClassId, bases: &Vals<'a>) {
        for b in bases {
            match b {
                Val::Remote(r @ Remote::Def { .. }) if self.remote_bases[cid].insert(r.clone()) => {
                    self.changed = true;
                }
                Val::Api(ApiVal::Name(class)) if self.api_bases[cid].is_none() => {
                    let known = self
                        .config
                        .api
                        .as_ref()
                        .is_some_and(|a| a.classes.contains(class));
                    if known {
                        self.api_bases[cid] = Some(class.clone());
                        self.changed = true;
                    }
                }
                _ => {}
            }
        }
    }

    /// The API class a base of `cid` in another file derives from.
    pub fn remote_api_base(&self, cid: ClassId) -> Option<String> {
        let mut todo: Vec<(String, String)> = self.remote_bases[cid]
            .iter()
            .filter_map(|b| match b {
                Remote::Def { module, name } => Some((module.clone(), name.clone())),
                _ => None,
            })
            .collect();
        let mut seen = 0;
        while let Some((m, c)) = todo.pop() {
            seen += 1;
            if seen > MAX_BASES {
                break;
            }
            let Some(export) = self.remote_class(&m, &c) else {
                continue;
            };
            if export.api_base.is_some() {
                return export.api_base.clone();
            }
        }
        None
    }

    /// What an instance of a module class inherits from bases in other files: nothing for a
    /// `self.<name>` the class (or a base in this file) assigns itself, which shadows theirs.
    pub fn inherited(&self, cid: ClassId, name: &str) -> Vals<'a> {
        let mut out = Vals::new();
        let lineage = self.index.lineage(cid);
        if lineage.iter().any(|c| self.assigned[*c].contains(name)) {
            return out;
        }
        for c in lineage {
            for b in &self.remote_bases[c] {
                if let Remote::Def {
                    module,
                    name: class,
                } = b
                {
                    out.extend(self.remote_object_attr(module, class, name));
                }
            }
        }
        out
    }
}
