//! The analysis state: abstract values per name, per `self` attribute and per function
//! result. It walks the module until nothing learns a new value (a fixpoint: value sets only
//! grow and are drawn from the module's own text); each walk of a body records its uses anew,
//! so at the fixpoint every body's last walk saw the final values.
//! Statements are in `stmt.rs`, expressions in `expr.rs`, calls in `call.rs`, guards in
//! `guard.rs`, imports in `imports.rs`.

use super::api_use::{ConsumerUse, Forward};
use super::deps::{Deps, Slot};
use super::index::{ClassId, FuncId, FuncKind, Index, MODULE_SCOPE, ScopeId};
use super::value::{Remote, Shared, Val, Vals, without_literals};
use super::world::{Round, World};
use super::{Access, Guard, SurfaceConfig, Target, Use};
use crate::semantic::File;
use crate::source::Lines;
use ruff_python_ast::visitor::Visitor;
use ruff_python_ast::{Expr, Stmt};
use ruff_text_size::{Ranged, TextSize};
use std::collections::{BTreeMap, BTreeSet, HashMap};

/// A call of a module function: what each parameter received, for calls that forward
/// `*args` to a native member.
#[derive(PartialEq)]
pub(super) struct CallSite<'a> {
    pub line: usize,
    pub args: Vec<(usize, Vals<'a>)>,
    /// Positional arguments beyond the named parameters (`None`: the call has `*x`).
    pub extra: Option<usize>,
}

/// An enclosing `try` whose handlers swallow attribute or import failures.
#[derive(Clone, Copy)]
pub(super) struct TryGuard {
    pub line: usize,
    pub attribute: bool,
    pub import: bool,
}

pub(super) struct Analyzer<'a> {
    pub config: &'a SurfaceConfig,
    pub text: &'a str,
    pub lines: &'a Lines,
    pub index: &'a Index<'a>,
    pub env: Vec<HashMap<&'a str, Slot<'a>>>,
    /// `self.<name>` per class.
    pub attrs: Vec<HashMap<&'a str, Slot<'a>>>,
    pub returns: Vec<Slot<'a>>,
    /// Per function, its calls in the module by where they start (a walk replaces its own).
    pub sites: Vec<BTreeMap<TextSize, CallSite<'a>>>,
    pub deps: Deps,
    pub changed: bool,
    /// Above 0 while a test is re-read for its guards: nothing is recorded twice.
    pub silent: usize,
    /// Per body, the uses its last walk recorded: `[0]` the module level, `[f + 1]` function f.
    pub uses: Vec<BTreeSet<Use>>,
    /// Per body, likewise, the uses of the API module (the consumer scan's).
    pub api_uses: Vec<BTreeSet<ConsumerUse>>,
    /// Per class, the API class a base names (`class My(MooncakeBundleTransfer)`).
    pub api_bases: Vec<Option<String>>,
    /// The module's body.
    pub body: &'a [Stmt],
    /// The keys of dicts passed to dict-taking native callables, each name worked out once.
    pub keys: super::keys::Search,
    /// The dicts, lists, tuples and sets of the file, by the place that makes each.
    pub containers: Vec<super::held::Container<'a>>,
    /// Containers not (yet) live that a call kept out of a parameter, with the function the
    /// call is in (`None`: the module body, walked every pass).
    pub held_back: BTreeSet<(usize, Option<FuncId>)>,
    /// What the analysis read of the other files.
    pub reads: std::cell::RefCell<BTreeSet<super::world::Read>>,
    /// Per function, the API calls it passes its `**kwargs` to.
    pub forwards: Vec<BTreeSet<Forward>>,
    pub container_at: HashMap<TextSize, usize>,
    pub scope: ScopeId,
    pub func: Option<FuncId>,
    /// Members guarded by an enclosing `hasattr` (path, line of the test).
    pub guards: Vec<(String, usize)>,
    pub tries: Vec<TryGuard>,
    /// The other files of the program, as the last round left them.
    pub world: &'a World,
    /// What this file passes to the other files' functions.
    pub outbound: BTreeMap<(String, String), BTreeMap<usize, Shared>>,
    /// Per class, its bases defined in other files.
    pub remote_bases: Vec<BTreeSet<Remote>>,
    /// Per class, the `self.<name>` it assigns.
    pub assigned: Vec<BTreeSet<&'a str>>,
}

/// A ceiling on the fixpoint passes; real modules settle in a handful.
const MAX_PASSES: usize = 50;

pub(super) fn analyze(file: &File<'_>, config: &SurfaceConfig) -> Vec<Use> {
    analyze_in(file, config, &World::default()).uses
}

/// [`analyze`] as one file of a program: what the other files export is `world`'s.
pub(super) fn analyze_in<'a>(
    file: &File<'a>,
    config: &'a SurfaceConfig,
    world: &'a World,
) -> Round {
    let (index, body) = (file.index, file.tree.body());
    let mut a = Analyzer {
        config,
        text: &file.source.text,
        lines: &file.tree.lines,
        env: index.scopes.iter().map(|_| HashMap::new()).collect(),
        attrs: index.classes.iter().map(|_| HashMap::new()).collect(),
        returns: index.funcs.iter().map(|_| Slot::default()).collect(),
        sites: index.funcs.iter().map(|_| BTreeMap::new()).collect(),
        deps: Deps::new(index),
        uses: (0..=index.funcs.len()).map(|_| BTreeSet::new()).collect(),
        api_uses: (0..=index.funcs.len()).map(|_| BTreeSet::new()).collect(),
        api_bases: vec![None; index.classes.len()],
        body,
        keys: super::keys::Search::default(),
        containers: Vec::new(),
        held_back: BTreeSet::new(),
        forwards: vec![BTreeSet::new(); index.funcs.len()],
        reads: Default::default(),
        container_at: HashMap::new(),
        remote_bases: index.classes.iter().map(|_| BTreeSet::new()).collect(),
        assigned: index.classes.iter().map(|_| BTreeSet::new()).collect(),
        index,
        changed: false,
        silent: 0,
        scope: MODULE_SCOPE,
        func: None,
        guards: Vec::new(),
        tries: Vec::new(),
        world,
        outbound: BTreeMap::new(),
    };
    a.seed();
    for _ in 0..MAX_PASSES {
        a.changed = false;
        a.uses[0].clear();
        a.api_uses[0].clear();
        a.body(body);
        if !a.changed {
            break;
        }
    }
    let exports = a.exports();
    let all: BTreeSet<Use> = std::mem::take(&mut a.uses).into_iter().flatten().collect();
    let api: BTreeSet<ConsumerUse> = std::mem::take(&mut a.api_uses)
        .into_iter()
        .flatten()
        .collect();
    Round {
        uses: all.into_iter().collect(),
        api_uses: api.into_iter().collect(),
        exports: std::sync::Arc::new(exports),
        outbound: a.outbound,
        reads: a.reads.into_inner(),
    }
}

impl<'a> Analyzer<'a> {
    /// Definitions, `self` / `cls`, and the parameters the manifest gives a role.
    fn seed(&mut self) {
        for fid in 0..self.index.funcs.len() {
            let f = &self.index.funcs[fid];
            let parent = self.index.scopes[f.scope].parent.unwrap_or(MODULE_SCOPE);
            let mut binds = vec![(parent, f.def.name.as_str(), Val::Function(fid))];
            for (i, (param, _)) in f.params.iter().enumerate() {
                let val = match (i, f.kind, f.class) {
                    (0, FuncKind::Method | FuncKind::Property, Some(c)) => Some(Val::Object(c)),
                    (0, FuncKind::ClassMethod, Some(c)) => Some(Val::Class(c)),
                    _ => self
                        .config
                        .roles
                        .get(*param)
                        .map(|class| Val::Instance(class.clone())),
                };
                if let Some(v) = val {
                    binds.push((f.scope, *param, v));
                }
            }
            // What callers in other files pass.
            if let Some(q) = self.func_name(fid)
                && let Some(inbound) = self.world.inbound.get(&(self.config.module.clone(), q))
            {
                for (i, vals) in inbound {
                    if let Some((param, _)) = f.params.get(*i) {
                        binds.extend(vals.iter().map(|v| (f.scope, *param, v.clone())));
                    }
                }
            }
            for (scope, name, val) in binds {
                self.env[scope].entry(name).or_default().vals.insert(val);
            }
        }
        for cid in 0..self.index.classes.len() {
            let class = &self.index.classes[cid];
            let parent = self.index.scopes[class.scope]
                .parent
                .unwrap_or(MODULE_SCOPE);
            let name = class.name;
            self.env[parent]
                .entry(name)
                .or_default()
                .vals
                .insert(Val::Class(cid));
            // A dataclass built in another file: its fields take what the call passes.
            if let (Some(q), Some(fields), None) = (
                self.class_name(cid),
                self.fields(cid),
                self.index.method(cid, "__init__"),
            ) && let Some(inbound) = self
                .world
                .inbound
                .get(&(self.config.module.clone(), format!("{q}.__init__")))
            {
                for (i, vals) in inbound {
                    if let Some(field) = i.checked_sub(1).and_then(|i| fields.get(i)) {
                        let slot = self.attrs[cid].entry(field).or_default();
                        slot.vals.extend(vals.iter().cloned());
                    }
                }
            }
        }
    }

    pub fn line(&self, node: &impl Ranged) -> usize {
        self.lines.line(node.start())
    }

    /// The 1-based line and column (in characters) of `at`.
    pub fn line_col(&self, at: TextSize) -> (usize, usize) {
        let line = self.lines.line(at);
        let start = self.lines.start(line);
        let col = self.text[start..at.to_usize()].chars().count() + 1;
        (line, col)
    }

    pub fn source(&self, node: &impl Ranged) -> &'a str {
        &self.text[node.range()]
    }

    pub fn record(&mut self, line: usize, target: Target, access: Access, optional: Option<Guard>) {
        self.record_via(line, None, target, access, optional, None);
    }

    /// [`record`](Self::record) of a use whose name starts at `at`.
    pub fn record_at(
        &mut self,
        line: usize,
        at: TextSize,
        target: Target,
        access: Access,
        optional: Option<Guard>,
    ) {
        self.record_via(line, Some(at), target, access, optional, None);
    }

    pub fn record_via(
        &mut self,
        line: usize,
        at: Option<TextSize>,
        target: Target,
        access: Access,
        optional: Option<Guard>,
        via: Option<usize>,
    ) {
        if self.silent == 0 {
            let pos = at.map_or((line, 0), |at| self.line_col(at));
            let body = self.func.map_or(0, |f| f + 1);
            self.uses[body].insert(Use {
                line,
                target,
                access,
                optional,
                via,
                pos,
            });
        }
    }

    pub fn lookup(&mut self, name: &'a str) -> Vals<'a> {
        // A name no scope binds in the text: a builtin, or one a `*` import bound.
        let scope = self.index.resolve(self.scope, name).unwrap_or(MODULE_SCOPE);
        let (env, reader) = (&mut self.env[scope], self.func);
        let slot = match env.get_mut(name) {
            Some(slot) => slot,
            None if reader.is_none() => return Vals::new(),
            None => env.entry(name).or_default(),
        };
        slot.read(reader).clone()
    }

    /// Adds `vals` to what `name` may hold in the scope that binds it.
    pub fn bind(&mut self, name: &'a str, vals: Vals<'a>) {
        if vals.is_empty() {
            return;
        }
        let scope = self.index.resolve(self.scope, name).unwrap_or(self.scope);
        let vals = match self.index.scopes[scope].rebound.contains(name) {
            true => without_literals(vals),
            false => vals,
        };
        let slot = self.env[scope].entry(name).or_default();
        self.changed |= slot.extend(vals, &mut self.deps);
    }

    pub fn bind_attr(&mut self, cid: ClassId, name: &'a str, vals: Vals<'a>) {
        // Assigned here, whatever the value: it shadows what a base in another file assigns.
        self.assigned[cid].insert(name);
        if vals.is_empty() {
            return;
        }
        let vals = match self.index.classes[cid].rebound_attrs.contains(name) {
            true => without_literals(vals),
            false => vals,
        };
        let slot = self.attrs[cid].entry(name).or_default();
        self.changed |= slot.extend(vals, &mut self.deps);
    }
}

impl<'a> Visitor<'a> for Analyzer<'a> {
    fn visit_stmt(&mut self, stmt: &'a Stmt) {
        self.stmt(stmt);
    }

    fn visit_expr(&mut self, expr: &'a Expr) {
        self.eval(expr);
    }

    fn visit_annotation(&mut self, _expr: &'a Expr) {}
}

/// The string constants among `vals`.
pub(super) fn strings<'a>(vals: &Vals<'a>) -> Vec<&'a str> {
    vals.iter()
        .filter_map(|v| match v {
            Val::Str(s) => Some(*s),
            _ => None,
        })
        .collect()
}

/// The builtins the analysis reads, called by their plain name (not shadowed by the module).
pub(super) fn builtin_name<'e>(a: &Analyzer<'_>, func: &'e Expr) -> Option<&'e str> {
    const READ: [&str; 8] = [
        "getattr",
        "hasattr",
        "setattr",
        "type",
        "callable",
        "__import__",
        "super",
        "dict",
    ];
    match func {
        Expr::Name(n)
            if READ.contains(&n.id.as_str()) && a.index.resolve(a.scope, &n.id).is_none() =>
        {
            Some(n.id.as_str())
        }
        _ => None,
    }
}
