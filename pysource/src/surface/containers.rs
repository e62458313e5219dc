//! Containers: what a dict, list, tuple or set literal (or `dict(...)`) holds, item by item,
//! so an object kept in one is followed out of it (`h = {"k": client}` then
//! `h["k"].method(...)`, `clients[0].method(...)`, `for c in clients`), and the keys of a dict
//! that reaches a call as `**name` are its keywords. One container per place in the text
//! (the flow does not tell two evaluations apart): what is written into it (`x[k] = v`,
//! `.append`, `.update`, `.setdefault`) is added to what it holds.

use super::expr::Keyword;
pub(super) use super::held::{Container, Key};
use super::value::{Val, Vals};
use super::walk::Analyzer;
use ruff_python_ast::{self as ast, Expr};
use ruff_text_size::{Ranged, TextSize};
use std::collections::BTreeMap;

impl<'a> Analyzer<'a> {
    /// The container made at `at`, created on first use.
    fn container(&mut self, at: TextSize, dict: bool) -> usize {
        let next = self.containers.len();
        let id = *self.container_at.entry(at).or_insert(next);
        if id == next {
            self.containers.push(Container {
                dict,
                ..Container::default()
            });
        }
        id
    }

    /// Adds `vals` under `key` (`None`: a key not known statically).
    fn put(&mut self, id: usize, key: Option<Key<'a>>, vals: Vals<'a>) {
        if key.is_none() {
            self.containers[id].open = true;
        }
        let followed = vals.iter().any(|v| match v {
            Val::Str(_) | Val::Lit(_) => false,
            Val::Container(held) => self.containers[*held].live,
            _ => true,
        });
        let slot = match key {
            Some(k) => self.containers[id].items.entry(k).or_default(),
            None => &mut self.containers[id].any,
        };
        self.changed |= slot.extend(vals, &mut self.deps);
        if followed && !self.containers[id].live {
            self.containers[id].live = true;
            self.spread_liveness();
        }
    }

    /// Marks live every container holding a live one, until none changes; the calls that kept
    /// one of them out of a parameter are walked again.
    fn spread_liveness(&mut self) {
        loop {
            let live: Vec<bool> = self.containers.iter().map(|c| c.live).collect();
            let mut grew = false;
            for c in self.containers.iter_mut().filter(|c| !c.live) {
                let holds_live = c.items.values().chain([&c.any]).any(|slot| {
                    slot.vals
                        .iter()
                        .any(|v| matches!(v, Val::Container(held) if live[*held]))
                });
                if holds_live {
                    c.live = true;
                    grew = true;
                }
            }
            if !grew {
                break;
            }
        }
        let containers = &self.containers;
        let (now_live, waiting) = std::mem::take(&mut self.held_back)
            .into_iter()
            .partition(|(id, _)| containers[*id].live);
        self.held_back = waiting;
        for (_, caller) in now_live {
            if let Some(f) = caller {
                self.deps.mark(f);
            }
            self.changed = true;
        }
    }

    /// A dict, list, tuple or set literal.
    pub(super) fn literal_container(&mut self, e: &'a Expr) -> Vals<'a> {
        match e {
            Expr::Dict(d) => {
                let id = self.container(e.start(), true);
                for item in &d.items {
                    let vals = self.eval(&item.value);
                    match &item.key {
                        Some(Expr::StringLiteral(s)) => {
                            self.put(id, Some(Key::Str(s.value.to_str())), vals)
                        }
                        Some(k) => {
                            self.eval(k);
                            self.put(id, None, vals);
                        }
                        // `**other`: what it holds, under its keys.
                        None => self.merge(id, &vals),
                    }
                }
                [Val::Container(id)].into()
            }
            Expr::List(ast::ExprList { elts, .. }) | Expr::Tuple(ast::ExprTuple { elts, .. }) => {
                let id = self.container(e.start(), false);
                let mut known = true;
                for (i, x) in elts.iter().enumerate() {
                    match x {
                        Expr::Starred(s) => {
                            let vals = self.eval(&s.value);
                            let items = self.elements(&vals);
                            self.put(id, None, items);
                            known = false;
                        }
                        _ => {
                            let vals = self.eval(x);
                            let key = known.then_some(Key::Index(i));
                            self.put(id, key, vals);
                        }
                    }
                }
                [Val::Container(id)].into()
            }
            Expr::Set(ast::ExprSet { elts, .. }) => {
                let id = self.container(e.start(), false);
                for x in elts {
                    let vals = self.eval(x);
                    self.put(id, None, vals);
                }
                [Val::Container(id)].into()
            }
            _ => Vals::new(),
        }
    }

    /// `dict(other, k=v, ...)`: a dict of those keys.
    pub(super) fn dict_call(&mut self, c: &'a ast::ExprCall) -> Vals<'a> {
        let id = self.container(c.start(), true);
        for a in &c.arguments.args {
            let vals = self.eval(a);
            self.merge(id, &vals);
        }
        for k in &c.arguments.keywords {
            let vals = self.eval(&k.value);
            match &k.arg {
                Some(name) => self.put(id, Some(Key::Str(name.as_str())), vals),
                None => self.merge(id, &vals),
            }
        }
        [Val::Container(id)].into()
    }

    /// What `vals` hold, under their keys, added to container `id`; anything else it may be
    /// makes `id`'s keys not known.
    fn merge(&mut self, id: usize, vals: &Vals<'a>) {
        let mut open = vals.is_empty();
        for v in vals {
            match v {
                Val::Container(other) if *other != id => {
                    let items: Vec<(Key<'a>, Vals<'a>)> = self.containers[*other]
                        .items
                        .iter()
                        .map(|(k, s)| (k.clone(), s.vals.clone()))
                        .collect();
                    open |= self.containers[*other].open;
                    for (k, vals) in items {
                        self.put(id, Some(k), vals);
                    }
                    let any = self.containers[*other].any.vals.clone();
                    if !any.is_empty() {
                        self.put(id, None, any);
                    }
                }
                Val::Container(_) => {}
                _ => open = true,
            }
        }
        if open {
            self.containers[id].open = true;
        }
    }

    /// `x[key]`: what the containers `x` may be hold under it.
    pub(super) fn subscript(&mut self, base: &Vals<'a>, slice: &'a Expr) -> Vals<'a> {
        let key = self.key_of(slice);
        let reader = self.func;
        let mut out = Vals::new();
        for v in base {
            match v {
                Val::Container(id) => {
                    let c = &mut self.containers[*id];
                    match &key {
                        Some(k) => {
                            let slot = c.items.entry(k.clone()).or_default();
                            out.extend(slot.read(reader).iter().cloned());
                        }
                        None => {
                            for slot in c.items.values_mut() {
                                out.extend(slot.read(reader).iter().cloned());
                            }
                        }
                    }
                    out.extend(c.any.read(reader).iter().cloned());
                }
                Val::Seq(items) => out.extend(items.iter().cloned()),
                _ => {}
            }
        }
        out
    }

    /// `x[key] = vals`.
    pub(super) fn store_subscript(&mut self, base: &Vals<'a>, slice: &'a Expr, vals: Vals<'a>) {
        let key = self.key_of(slice);
        for v in base {
            if let Val::Container(id) = v {
                self.put(*id, key.clone(), vals.clone());
            }
        }
    }

    /// A key written in the text: a string, or a non-negative index.
    fn key_of(&mut self, slice: &'a Expr) -> Option<Key<'a>> {
        match slice {
            Expr::StringLiteral(s) => Some(Key::Str(s.value.to_str())),
            Expr::NumberLiteral(n) => n.value.as_int().and_then(|i| i.as_usize()).map(Key::Index),
            other => {
                self.eval(other);
                None
            }
        }
    }

    /// A call of a container's method (`x.append(v)`, `d.update(...)`, `d.get("k")`) on
    /// `base`, the receiver's values: what it adds, and what it gives (`None`: `base` holds no
    /// container).
    pub(super) fn container_method(
        &mut self,
        c: &'a ast::ExprCall,
        a: &'a ast::ExprAttribute,
        base: &Vals<'a>,
    ) -> Option<Vals<'a>> {
        let ids: Vec<usize> = base
            .iter()
            .filter_map(|v| match v {
                Val::Container(id) => Some(*id),
                _ => None,
            })
            .collect();
        if ids.is_empty() {
            return None;
        }
        let args = &c.arguments.args;
        let mut out = Vals::new();
        match a.attr.as_str() {
            "append" | "add" | "insert" | "appendleft" => {
                if let Some(v) = args.last() {
                    let vals = self.eval(v);
                    ids.iter().for_each(|id| self.put(*id, None, vals.clone()));
                }
            }
            "extend" | "update" => {
                for arg in args {
                    let vals = self.eval(arg);
                    for id in &ids {
                        match self.containers[*id].dict {
                            true => self.merge(*id, &vals),
                            false => {
                                let items = self.elements(&vals);
                                self.put(*id, None, items);
                            }
                        }
                    }
                }
                for k in &c.arguments.keywords {
                    let vals = self.eval(&k.value);
                    for id in &ids {
                        match &k.arg {
                            Some(name) => {
                                self.put(*id, Some(Key::Str(name.as_str())), vals.clone())
                            }
                            None => self.merge(*id, &vals),
                        }
                    }
                }
            }
            "setdefault" => {
                if let [key, rest @ ..] = &args[..] {
                    let key = self.key_of(key);
                    let vals = rest.first().map(|v| self.eval(v)).unwrap_or_default();
                    for id in &ids {
                        self.put(*id, key.clone(), vals.clone());
                    }
                    out.extend(self.subscript(base, &args[0]));
                }
            }
            "get" | "pop" => {
                if let Some(key) = args.first() {
                    out.extend(self.subscript(base, key));
                }
                for v in args.iter().skip(1) {
                    out.extend(self.eval(v));
                }
            }
            "values" => out.extend(self.held(&ids)),
            "items" => {
                let id = self.container(c.start(), false);
                let mut pairs = self.held(&ids);
                pairs.extend(self.keys(&ids));
                self.put(id, None, pairs);
                out.insert(Val::Container(id));
            }
            "keys" | "copy" => out.extend(base.iter().cloned()),
            _ => {
                for arg in args {
                    self.eval(arg);
                }
            }
        }
        Some(out)
    }

    /// What containers `ids` hold, every key's.
    fn held(&mut self, ids: &[usize]) -> Vals<'a> {
        let reader = self.func;
        let mut out = Vals::new();
        for id in ids {
            let c = &mut self.containers[*id];
            for slot in c.items.values_mut() {
                out.extend(slot.read(reader).iter().cloned());
            }
            out.extend(c.any.read(reader).iter().cloned());
        }
        out
    }

    /// The string keys of dicts `ids`, as the literals they are.
    fn keys(&self, ids: &[usize]) -> Vals<'a> {
        let mut out = Vals::new();
        for id in ids {
            for k in self.containers[*id].items.keys() {
                if let Key::Str(s) = k {
                    out.insert(Val::Str(s));
                }
            }
        }
        out
    }

    /// What iterating `vals` yields: a list's or tuple's items, a dict's keys.
    pub(super) fn elements(&mut self, vals: &Vals<'a>) -> Vals<'a> {
        let mut out = Vals::new();
        for v in vals {
            match v {
                Val::Seq(items) => out.extend(items.iter().cloned()),
                Val::Container(id) if self.containers[*id].dict => out.extend(self.keys(&[*id])),
                Val::Container(id) => out.extend(self.held(&[*id])),
                _ => {}
            }
        }
        out
    }

    /// `a, b = x`: each target's values, when every value of `x` is a list or tuple whose
    /// items are known by place; `None` otherwise.
    pub(super) fn unpacked(&mut self, vals: &Vals<'a>, targets: usize) -> Option<Vec<Vals<'a>>> {
        let reader = self.func;
        let mut out = vec![Vals::new(); targets];
        for v in vals {
            let Val::Container(id) = v else {
                return None;
            };
            let c = &mut self.containers[*id];
            if c.dict || c.open || c.items.len() != targets {
                return None;
            }
            for (i, slot) in out.iter_mut().enumerate() {
                let item = c.items.get_mut(&Key::Index(i))?;
                slot.extend(item.read(reader).iter().cloned());
            }
        }
        Some(out)
    }

    /// The keywords a `**value` passes: each key of the dicts it may be, with what it holds,
    /// when every value is a dict whose keys are all known; else one keyword of keys not
    /// known.
    pub(super) fn spread(&mut self, vals: Vals<'a>, at: TextSize) -> Vec<Keyword<'a>> {
        let ids: Option<Vec<usize>> = vals
            .iter()
            .map(|v| match v {
                Val::Container(id) if self.containers[*id].dict && !self.containers[*id].open => {
                    Some(*id)
                }
                _ => None,
            })
            .collect();
        let (Some(ids), false) = (ids, vals.is_empty()) else {
            return vec![Keyword {
                name: None,
                vals,
                at,
                value_at: at,
            }];
        };
        let reader = self.func;
        let mut by_key: BTreeMap<&'a str, Vals<'a>> = BTreeMap::new();
        for id in ids {
            for (k, slot) in self.containers[id].items.iter_mut() {
                if let Key::Str(s) = k {
                    by_key
                        .entry(*s)
                        .or_default()
                        .extend(slot.read(reader).iter().cloned());
                }
            }
        }
        by_key
            .into_iter()
            .map(|(name, vals)| Keyword {
                name: Some(name),
                vals,
                at,
                value_at: at,
            })
            .collect()
    }
}
