"""The baseline for `cargo xtask bench-verify --surface`: the native-surface derivation and
check `verify --module FILE --surface` does, in Python with `ast`, the same rules step for step
(pysource/src/surface): scopes and locals, a fixpoint over abstract values (the native module,
its members, native instances, string constants and tuples of them, the module's own objects,
functions and results; roles for parameters), guards (getattr/hasattr probes, tests of probed
values, early exits, swallowing try blocks, lazy imports), call shapes forwarded through
`fn(*args)` helpers, sibling imports; then the comparison with the manifest's declarations and
one text line per use and per finding.

usage: python3 surface_ast.py SURFACE.json MODULE.py RUNS
SURFACE.json: {"module", "native_module", "package", "surface": api.surface as serialized}
prints {"seconds": [per-run wall time], "uses": N, "failures": M, "warnings": W}
"""

import ast
import json
import os
import re
import sys
import time

from verify_ast import dotted  # the same rule, beside this file

# The one pybind11 docstring splitter, the file the shim and the core reader carry.
_OVERLOADS = {"re": re}
with open(os.path.join(os.path.dirname(__file__), "../../contract/src/signature/overloads.py")) as _f:
    exec(_f.read(), _OVERLOADS)
split_params = _OVERLOADS["_split_params"]

IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*$")
KEYWORDS = {"False", "None", "True", "and", "as", "assert", "async", "await", "break", "class",
            "continue", "def", "del", "elif", "else", "except", "finally", "for", "from", "global",
            "if", "import", "in", "is", "lambda", "nonlocal", "not", "or", "pass", "raise",
            "return", "try", "while", "with", "yield"}


def dotted_name(s):
    return bool(IDENT.match(s)) and not any(p in KEYWORDS for p in s.split("."))


# ---------------------------------------------------------------------------- index

class Index:
    def __init__(self, tree):
        self.scopes = [{"parent": None, "cls": False, "locals": set(), "nl": set()}]
        self.funcs, self.classes, self.func_at, self.class_at = [], [], {}, {}
        self.scope, self.cls = 0, None
        base_names = []
        self.base_names = base_names
        self.body(tree.body)
        by_name = {}
        for cid, (name, _) in enumerate(base_names):
            by_name.setdefault(name, cid)
        for cid, (_, bases) in enumerate(base_names):
            self.classes[cid]["bases"] = [by_name[b] for b in bases if b in by_name and by_name[b] != cid]

    def local(self, name):
        s = self.scopes[self.scope]
        if name not in s["nl"]:
            s["locals"].add(name)

    def new_scope(self, cls):
        self.scopes.append({"parent": self.scope, "cls": cls, "locals": set(), "nl": set()})
        return len(self.scopes) - 1

    def body(self, stmts):
        for s in stmts:
            self.stmt(s)

    def expr(self, e):
        if e is None:
            return
        for node in ast.walk(e):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                self.local(node.id)

    def stmt(self, s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            self.local(s.name)
            for d in s.decorator_list:
                self.expr(d)
            for d in s.args.defaults + [d for d in s.args.kw_defaults if d is not None]:
                self.expr(d)
            names = {dotted(d.func if isinstance(d, ast.Call) else d) for d in s.decorator_list}
            names = {n.rsplit(".", 1)[-1] for n in names if n}
            if self.cls is None:
                kind = "plain"
            elif "staticmethod" in names:
                kind = "static"
            elif "classmethod" in names:
                kind = "classmethod"
            elif "property" in names:
                kind = "property"
            else:
                kind = "method"
            outer = (self.scope, self.cls)
            scope = self.new_scope(False)
            a = s.args
            params = [(p.arg, False) for p in a.posonlyargs + a.args] + [(p.arg, True) for p in a.kwonlyargs]
            vararg = a.vararg.arg if a.vararg else None
            fid = len(self.funcs)
            self.funcs.append({"node": s, "scope": scope, "cls": self.cls, "kind": kind,
                               "params": params, "vararg": vararg})
            self.func_at[id(s)] = fid
            if self.cls is not None:
                self.classes[self.cls]["methods"][s.name] = fid
            self.scope, self.cls = scope, None
            for name, _ in params:
                self.local(name)
            for extra in (vararg, a.kwarg.arg if a.kwarg else None):
                if extra:
                    self.local(extra)
            self.body(s.body)
            self.scope, self.cls = outer
        elif isinstance(s, ast.ClassDef):
            self.local(s.name)
            for d in s.decorator_list + s.bases + [k.value for k in s.keywords]:
                self.expr(d)
            bases = [b.id for b in s.bases if isinstance(b, ast.Name)]
            outer = (self.scope, self.cls)
            scope = self.new_scope(True)
            cid = len(self.classes)
            self.classes.append({"name": s.name, "scope": scope, "methods": {}, "bases": []})
            self.base_names.append((s.name, bases))
            self.class_at[id(s)] = cid
            self.scope, self.cls = scope, cid
            self.body(s.body)
            self.scope, self.cls = outer
        elif isinstance(s, ast.Import):
            for a in s.names:
                self.local((a.asname or a.name).split(".")[0])
        elif isinstance(s, ast.ImportFrom):
            for a in s.names:
                self.local(a.asname or a.name)
        elif isinstance(s, (ast.Global, ast.Nonlocal)):
            sc = self.scopes[self.scope]
            for n in s.names:
                sc["locals"].discard(n)
                sc["nl"].add(n)
        else:
            if isinstance(s, ast.Try):
                for h in s.handlers:
                    if h.name:
                        self.local(h.name)
            self.children(s, skip="annotation")

    def sub(self, node):
        if isinstance(node, ast.expr):
            self.expr(node)
        elif isinstance(node, ast.excepthandler):
            self.body(node.body)
        else:
            self.children(node)

    def children(self, node, skip=None):
        for field, value in ast.iter_fields(node):
            if field == skip:
                continue
            for v in value if isinstance(value, list) else [value]:
                if isinstance(v, ast.stmt):
                    self.stmt(v)
                elif isinstance(v, ast.AST):
                    self.sub(v)

    def resolve(self, scope, name):
        start = scope
        while scope is not None:
            s = self.scopes[scope]
            if (not s["cls"] or scope == start) and name in s["locals"]:
                return scope
            scope = s["parent"]
        return None

    def lineage(self, cid):
        out, i = [cid], 0
        while i < len(out):
            for b in self.classes[out[i]]["bases"]:
                if b not in out:
                    out.append(b)
            i += 1
        return out

    def method(self, cid, name):
        for c in self.lineage(cid):
            if name in self.classes[c]["methods"]:
                return self.classes[c]["methods"][name]
        return None


# ---------------------------------------------------------------------------- analysis

class Analyzer:
    def __init__(self, tree, text, cfg):
        self.cfg, self.text = cfg, text
        # ast.get_source_segment splits the whole text on every call: index the lines once.
        self.data = text.encode("utf-8")
        self.starts = [0] + [m.end() for m in re.finditer(b"\n", self.data)]
        self.ix = Index(tree)
        self.env = [dict() for _ in self.ix.scopes]
        self.attrs = [dict() for _ in self.ix.classes]
        self.returns = [set() for _ in self.ix.funcs]
        # Per function, its call sites by position (a walk replaces its own).
        self.sites = [dict() for _ in self.ix.funcs]
        # Which bodies read which scope / class attributes / result: re-walk only changed ones.
        ns, nc, nf = len(self.ix.scopes), len(self.ix.classes), len(self.ix.funcs)
        self.key_base = (0, ns, ns + nc)
        self.readers = [[] for _ in range(ns + nc + nf)]
        self.last_reader = [None] * (ns + nc + nf)
        self.dirty = [True] * nf
        owner = [None] * ns
        for fid, f in enumerate(self.ix.funcs):
            owner[f["scope"]] = fid
        self.children = [[] for _ in range(nf)]
        for fid, f in enumerate(self.ix.funcs):
            sc = self.ix.scopes[f["scope"]]["parent"]
            while sc is not None:
                if owner[sc] is not None:
                    self.children[owner[sc]].append(fid)
                    break
                sc = self.ix.scopes[sc]["parent"]
        self.changed = False
        self.silent = 0
        # Per body (0: module level, f + 1: function f), the uses its last walk recorded.
        self.uses = [set() for _ in range(len(self.ix.funcs) + 1)]
        self.scope, self.func, self.guards, self.tries = 0, None, [], []
        self.seed()

    def seed(self):
        roles = self.cfg["roles"]
        for fid, f in enumerate(self.ix.funcs):
            parent = self.ix.scopes[f["scope"]]["parent"] or 0
            self.env[parent].setdefault(f["node"].name, set()).add(("func", fid))
            for i, (p, _) in enumerate(f["params"]):
                v = None
                if i == 0 and f["kind"] in ("method", "property") and f["cls"] is not None:
                    v = ("obj", f["cls"])
                elif i == 0 and f["kind"] == "classmethod" and f["cls"] is not None:
                    v = ("class", f["cls"])
                elif p in roles:
                    v = ("inst", roles[p])
                if v:
                    self.env[f["scope"]].setdefault(p, set()).add(v)
        for cid, c in enumerate(self.ix.classes):
            parent = self.ix.scopes[c["scope"]]["parent"] or 0
            self.env[parent].setdefault(c["name"], set()).add(("class", cid))

    def read(self, kind, i):
        if self.func is None:
            return
        k = self.key_base[kind] + i
        if self.last_reader[k] != self.func:
            self.last_reader[k] = self.func
            self.readers[k].append(self.func)

    def touched(self, kind, i):
        self.changed = True
        for r in self.readers[self.key_base[kind] + i]:
            self.dirty[r] = True

    def needs_walk(self, fid):
        return self.dirty[fid] or any(self.needs_walk(c) for c in self.children[fid])

    def run(self, body):
        for _ in range(50):
            self.changed = False
            self.uses[0].clear()
            self.body(body)
            if not self.changed:
                break
        return sorted(set().union(*self.uses), key=use_key)

    def segment(self, node):
        start = self.starts[node.lineno - 1] + node.col_offset
        end = self.starts[node.end_lineno - 1] + node.end_col_offset
        return self.data[start:end].decode("utf-8")

    def record(self, line, target, access, optional, via=None):
        if not self.silent:
            self.uses[0 if self.func is None else self.func + 1].add((line, target, access, optional, via))

    def guard_for(self, path):
        for p, line in reversed(self.guards):
            if p == path:
                return ("guarded", line)
        for t in reversed(self.tries):
            if t[1]:
                return ("try", t[0])
        return None

    def import_guard(self, lazy):
        for t in reversed(self.tries):
            if t[2]:
                return ("try", t[0])
        if self.func is not None and lazy:
            return ("lazy", self.ix.funcs[self.func]["node"].lineno)
        return None

    def lookup(self, name):
        s = self.ix.resolve(self.scope, name)
        if s is None:
            return set()
        self.read(0, s)
        return set(self.env[s].get(name, ()))

    def bind(self, name, vals):
        if not vals:
            return
        s = self.ix.resolve(self.scope, name)
        s = self.scope if s is None else s
        slot = self.env[s].setdefault(name, set())
        n = len(slot)
        slot |= vals
        if len(slot) != n:
            self.touched(0, s)

    def bind_attr(self, cid, name, vals):
        if not vals:
            return
        slot = self.attrs[cid].setdefault(name, set())
        n = len(slot)
        slot |= vals
        if len(slot) != n:
            self.touched(1, cid)

    # -- statements

    def body(self, stmts):
        mark = len(self.guards)
        for s in stmts:
            self.stmt(s)
            if isinstance(s, ast.If) and not s.orelse and exits(s.body):
                _, neg = self.guard_paths(s.test)
                self.guards.extend((p, s.test.lineno) for p in neg)
        del self.guards[mark:]

    def guarded(self, paths, line, stmts):
        mark = len(self.guards)
        self.guards.extend((p, line) for p in paths)
        self.body(stmts)
        del self.guards[mark:]

    def stmt(self, s):
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            for d in s.decorator_list:
                self.eval(d)
            for d in s.args.defaults + [d for d in s.args.kw_defaults if d is not None]:
                self.eval(d)
            fid = self.ix.func_at[id(s)]
            if not self.needs_walk(fid):
                return
            self.dirty[fid] = False
            self.uses[fid + 1].clear()
            saved = (self.scope, self.func, self.guards, self.tries)
            self.scope, self.func, self.guards, self.tries = self.ix.funcs[fid]["scope"], fid, [], []
            self.body(s.body)
            self.scope, self.func, self.guards, self.tries = saved
        elif isinstance(s, ast.ClassDef):
            for d in s.decorator_list + s.bases + [k.value for k in s.keywords]:
                self.eval(d)
            saved = self.scope
            self.scope = self.ix.classes[self.ix.class_at[id(s)]]["scope"]
            self.body(s.body)
            self.scope = saved
        elif isinstance(s, ast.Assign):
            t = s.targets
            if len(t) == 1 and isinstance(t[0], ast.Tuple) and isinstance(s.value, ast.Tuple) \
                    and len(t[0].elts) == len(s.value.elts) \
                    and not any(isinstance(v, ast.Starred) for v in s.value.elts):
                for target, value in zip(t[0].elts, s.value.elts):
                    self.assign(target, self.eval(value))
            else:
                vals = self.eval(s.value)
                for target in t:
                    self.assign(target, set(vals))
        elif isinstance(s, ast.AnnAssign):
            if s.value is not None:
                self.assign(s.target, self.eval(s.value))
        elif isinstance(s, ast.AugAssign):
            self.eval(s.value)
            self.eval(s.target)
            self.assign(s.target, set())
        elif isinstance(s, (ast.For, ast.AsyncFor)):
            self.assign(s.target, elements(self.eval(s.iter)))
            self.body(s.body)
            self.body(s.orelse)
        elif isinstance(s, ast.While):
            self.eval(s.test)
            pos, _ = self.guard_paths(s.test)
            self.guarded(pos, s.test.lineno, s.body)
            self.body(s.orelse)
        elif isinstance(s, ast.If):
            self.eval(s.test)
            pos, neg = self.guard_paths(s.test)
            if not is_type_checking(s.test):
                self.guarded(pos, s.test.lineno, s.body)
            # An elif is an If nested in orelse: it and the else see the negated tests above.
            self.guarded(neg, s.test.lineno, s.orelse)
        elif isinstance(s, (ast.Try, getattr(ast, "TryStar", ast.Try))):
            self.tries.append(try_guard(s))
            self.body(s.body)
            self.tries.pop()
            for h in s.handlers:
                self.body(h.body)
            self.body(s.orelse)
            self.body(s.finalbody)
        elif isinstance(s, (ast.With, ast.AsyncWith)):
            for item in s.items:
                vals = self.eval(item.context_expr)
                if item.optional_vars is not None:
                    self.assign(item.optional_vars, vals)
            self.body(s.body)
        elif isinstance(s, ast.Return):
            if s.value is not None:
                vals = self.eval(s.value)
                if self.func is not None and vals:
                    slot = self.returns[self.func]
                    n = len(slot)
                    slot |= vals
                    if len(slot) != n:
                        self.touched(2, self.func)
        elif isinstance(s, ast.Import):
            self.do_import(s)
        elif isinstance(s, ast.ImportFrom):
            self.do_import_from(s)
        elif isinstance(s, ast.Expr):
            self.eval(s.value)
        else:
            for field, value in ast.iter_fields(s):
                for v in value if isinstance(value, list) else [value]:
                    if isinstance(v, ast.stmt):
                        self.stmt(v)
                    elif isinstance(v, ast.expr):
                        self.eval(v)
                    elif isinstance(v, ast.match_case):
                        self.body(v.body)

    def assign(self, target, vals):
        if isinstance(target, ast.Name):
            self.bind(target.id, vals)
        elif isinstance(target, ast.Attribute):
            base = self.eval(target.value)
            for v in base:
                if v[0] == "obj":
                    self.bind_attr(v[1], target.attr, set(vals))
                else:
                    m = self.member_of(v, target.attr)
                    if m:
                        self.record(target.lineno, ("native", m[0], m[1]), ("write",), self.guard_for(m[0]))
        elif isinstance(target, (ast.Tuple, ast.List)):
            for e in target.elts:
                self.assign(e, set())
        elif isinstance(target, ast.Starred):
            self.assign(target.value, set())
        else:
            self.eval(target)

    # -- guards

    def guard_paths(self, test):
        self.silent += 1
        try:
            return self.test_paths(test)
        finally:
            self.silent -= 1

    def test_paths(self, t):
        if isinstance(t, ast.BoolOp):
            parts = [self.test_paths(v) for v in t.values]
            if isinstance(t.op, ast.And):
                return [p for pos, _ in parts for p in pos], []
            return [], [p for _, neg in parts for p in neg]
        if isinstance(t, ast.UnaryOp) and isinstance(t.op, ast.Not):
            pos, neg = self.test_paths(t.operand)
            return neg, pos
        if isinstance(t, ast.Call):
            name = self.builtin(t.func)
            if name == "hasattr" and len(t.args) == 2:
                objs, names = self.eval(t.args[0]), strings(self.eval(t.args[1]))
                return [m[0] for v in objs for n in names for m in [self.member_of(v, n)] if m], []
            if name == "callable" and len(t.args) == 1:
                return self.probed(t.args[0]), []
            return self.probed(t), []
        if isinstance(t, ast.Compare) and len(t.comparators) == 1 \
                and isinstance(t.comparators[0], ast.Constant) and t.comparators[0].value is None:
            probed = self.probed(t.left)
            op = t.ops[0]
            if isinstance(op, (ast.IsNot, ast.NotEq)):
                return probed, []
            if isinstance(op, (ast.Is, ast.Eq)):
                return [], probed
            return [], []
        if isinstance(t, (ast.Name, ast.Attribute)):
            return self.probed(t), []
        return [], []

    def probed(self, e):
        return [v[1] for v in self.eval(e) if v[0] == "member" and v[3] is not None]

    # -- imports

    def is_sibling(self, m):
        c = self.cfg
        return m.startswith(c["package"] + ".") and m != c["module"] and m != c["native_module"] \
            and not c["native_module"].startswith(m + ".")

    def do_import(self, s):
        native = self.cfg["native_module"]
        for a in s.names:
            full = a.name
            if self.is_sibling(full):
                self.record(a.lineno, ("sibling", full), ("import",), self.import_guard(True))
            if a.asname:
                if full == native:
                    self.bind(a.asname, {("native",)})
            else:
                first = full.split(".")[0]
                if native == first:
                    self.bind(first, {("native",)})
                elif native.startswith(first + "."):
                    self.bind(first, {("pkg", first)})

    def do_import_from(self, s):
        if s.level == 0:
            base = s.module or ""
        else:
            parts = self.cfg["module"].split(".")
            base = ".".join(parts[:len(parts) - s.level])
            if s.module:
                base = f"{base}.{s.module}" if base else s.module
        native = self.cfg["native_module"]
        for a in s.names:
            bound, full = a.asname or a.name, f"{base}.{a.name}"
            if base == native:
                guard = self.import_guard(False)
                if a.name == "*":
                    self.record(a.lineno, ("dynamic", "", "module"), ("read",), guard)
                    continue
                self.record(a.lineno, ("native", a.name, "module"), ("read",), guard)
                self.bind(bound, {("member", a.name, "module", None)})
            elif full == native:
                self.bind(bound, {("native",)})
            else:
                module = full if base == self.cfg["package"] else base
                if self.is_sibling(module):
                    self.record(s.lineno, ("sibling", module), ("import",), self.import_guard(True))

    def dynamic_import(self, args, line):
        out = set()
        if not args[0]:
            return out
        for m in strings(args[0][0][0]):
            if m == self.cfg["native_module"]:
                out.add(("native",))
            elif self.is_sibling(m):
                self.record(line, ("sibling", m), ("import",), self.import_guard(True))
        return out

    # -- expressions

    def builtin(self, func):
        if isinstance(func, ast.Name) and self.ix.resolve(self.scope, func.id) is None:
            return func.id
        return None

    def eval(self, e):
        if isinstance(e, ast.Name):
            return self.lookup(e.id)
        if isinstance(e, ast.Attribute):
            return self.attribute(self.eval(e.value), e.attr, e.lineno, False)
        if isinstance(e, ast.Call):
            return self.call(e)
        if isinstance(e, ast.Constant):
            if isinstance(e.value, str) and dotted_name(e.value):
                return {("str", e.value)}
            return set()
        if isinstance(e, (ast.Tuple, ast.List, ast.Set)):
            items = frozenset(v for x in e.elts for v in self.eval(x) if v[0] != "seq")
            return {("seq", items)} if items else set()
        if isinstance(e, ast.IfExp):
            self.eval(e.test)
            pos, neg = self.guard_paths(e.test)
            return self.eval_guarded(pos, e.test.lineno, e.body) | self.eval_guarded(neg, e.test.lineno, e.orelse)
        if isinstance(e, ast.BoolOp):
            mark, out = len(self.guards), set()
            for v in e.values:
                out |= self.eval(v)
                if isinstance(e.op, ast.And):
                    pos, _ = self.guard_paths(v)
                    self.guards.extend((p, v.lineno) for p in pos)
            del self.guards[mark:]
            return out
        if isinstance(e, ast.NamedExpr):
            vals = self.eval(e.value)
            self.assign(e.target, set(vals))
            return vals
        if isinstance(e, ast.Await):
            return self.eval(e.value)
        if isinstance(e, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            for g in e.generators:
                self.assign(g.target, elements(self.eval(g.iter)))
                for c in g.ifs:
                    self.eval(c)
            if isinstance(e, ast.DictComp):
                self.eval(e.key)
                self.eval(e.value)
            else:
                self.eval(e.elt)
            return set()
        for child in ast.iter_child_nodes(e):
            if isinstance(child, ast.expr):
                self.eval(child)
            elif isinstance(child, ast.arguments):  # a lambda's defaults
                for d in child.defaults + [d for d in child.kw_defaults if d is not None]:
                    self.eval(d)
        return set()

    def eval_guarded(self, paths, line, e):
        mark = len(self.guards)
        self.guards.extend((p, line) for p in paths)
        out = self.eval(e)
        del self.guards[mark:]
        return out

    def member_of(self, v, name):
        k = v[0]
        if k == "native":
            return name, "module"
        if k == "member" and v[2] == "module":
            return f"{v[1]}.{name}", "class"
        if k == "classof":
            return f"{v[1]}.{name}", "class"
        if k == "inst":
            return f"{v[1]}.{name}", "instance"
        return None

    def native_owner(self, v):
        k = v[0]
        if k == "native":
            return "", "module"
        if k == "member" and v[2] == "module":
            return v[1], "class"
        if k == "classof":
            return v[1], "class"
        if k == "inst":
            return v[1], "instance"
        return None

    def attribute(self, base, name, line, for_call, probe=None):
        out = set()
        for v in base:
            m = self.member_of(v, name)
            if m:
                if not for_call:
                    guard = ("getattr", probe[0], probe[1]) if probe else self.guard_for(m[0])
                    self.record(line, ("native", m[0], m[1]), ("read",), guard)
                out.add(("member", m[0], m[1], probe))
                continue
            k = v[0]
            if k == "pkg":
                full, native = f"{v[1]}.{name}", self.cfg["native_module"]
                if full == native:
                    out.add(("native",))
                elif native.startswith(full + "."):
                    out.add(("pkg", full))
            elif k == "obj":
                out |= self.object_attr(v[1], name)
            elif k == "class":
                fid = self.ix.method(v[1], name)
                if fid is not None:
                    out.add(("func", fid))
        return out

    def object_attr(self, cid, name):
        fid = self.ix.method(cid, name)
        if fid is not None:
            kind = self.ix.funcs[fid]["kind"]
            if kind == "property":
                self.read(2, fid)
                return set(self.returns[fid])
            return {("func", fid)} if kind == "static" else {("bound", fid)}
        out = set()
        for c in self.ix.lineage(cid):
            self.read(1, c)
            self.read(0, self.ix.classes[c]["scope"])
            out |= self.attrs[c].get(name, set())
            out |= self.env[self.ix.classes[c]["scope"]].get(name, set())
        return out

    def args(self, call):
        pos = []
        for a in call.args:
            if isinstance(a, ast.Starred):
                pos.append((self.eval(a.value), True, a.value))
            else:
                pos.append((self.eval(a), False, a))
        kws = [(k.arg, self.eval(k.value)) for k in call.keywords]
        return pos, kws

    def call(self, c):
        line = c.lineno
        name = self.builtin(c.func)
        if name is not None:
            out = self.builtin_call(name, c, line)
            if out is not None:
                return out
        if isinstance(c.func, ast.Attribute):
            func = self.attribute(self.eval(c.func.value), c.func.attr, c.func.lineno, True)
        else:
            func = self.eval(c.func)
        d = dotted(c.func)
        args = self.args(c)
        if d in ("copy.copy", "copy.deepcopy"):
            return set(args[0][0][0]) if args[0] else set()
        if d == "importlib.import_module":
            return self.dynamic_import(args, line)
        pos, kws = args
        shape = (sum(1 for a in pos if not a[1]), any(a[1] for a in pos),
                 tuple(sorted(k for k, _ in kws if k is not None)), any(k is None for k, _ in kws))
        out = set()
        for v in func:
            k = v[0]
            if k == "member":
                self.record_call(v, shape, c, args, line)
                if v[2] == "module" and v[1].rsplit(".", 1)[-1][:1].isupper():
                    out.add(("inst", v[1]))
            elif k == "classof":
                self.record(line, ("native", v[1], "class"), ("call", shape), self.guard_for(v[1]))
                out.add(("inst", v[1]))
            elif k == "func":
                self.bind_call(v[1], 0, args, c)
                self.read(2, v[1])
                out |= self.returns[v[1]]
            elif k == "bound":
                f = self.ix.funcs[v[1]]
                self.bind_call(v[1], 1 if f["kind"] in ("method", "property", "classmethod") else 0, args, c)
                self.read(2, v[1])
                out |= self.returns[v[1]]
            elif k == "class":
                init = self.ix.method(v[1], "__init__")
                if init is not None:
                    self.bind_call(init, 1, args, c)
                out.add(("obj", v[1]))
        return out

    def record_call(self, m, shape, c, args, line):
        guard = ("getattr", m[3][0], m[3][1]) if m[3] else self.guard_for(m[1])
        target = ("native", m[1], m[2])
        forwarded = []
        if self.func is not None and isinstance(c.func, ast.Name):
            f = self.ix.funcs[self.func]
            names = [p for p, _ in f["params"]]
            param = names.index(c.func.id) if c.func.id in names else None
            star = [a for a in args[0] if a[1]]
            fwd = len(star) == 1 and isinstance(star[0][2], ast.Name) and star[0][2].id == f["vararg"]
            if param is not None and fwd:
                for _, (site_line, bound, extra) in sorted(self.sites[self.func].items()):
                    if any(i == param and m in vals for i, vals in bound):
                        s = shape
                        if extra is not None:
                            s = (shape[0] + extra, False, shape[2], shape[3])
                        forwarded.append((s, site_line))
        if not forwarded:
            self.record(line, target, ("call", shape), guard)
        for s, via in forwarded:
            self.record(line, target, ("call", s), guard, via)

    def bind_call(self, fid, skip, args, c):
        line = c.lineno
        f = self.ix.funcs[fid]
        params = f["params"]
        npos = sum(1 for _, kw in params if not kw)
        bound, extra = [], 0
        for i, (vals, starred, _) in enumerate(args[0]):
            if starred:
                extra = None
                break
            at = skip + i
            if at < npos:
                bound.append((at, set(vals)))
            else:
                extra += 1
        names = [p for p, _ in params]
        for k, vals in args[1]:
            if k is not None and k in names:
                bound.append((names.index(k), set(vals)))
        saved = self.scope
        self.scope = f["scope"]
        for at, vals in bound:
            self.bind(params[at][0], set(vals))
        self.scope = saved
        if not self.silent:
            key, site = (c.lineno, c.col_offset), (line, bound, extra)
            if self.sites[fid].get(key) != site:
                self.sites[fid][key] = site
                self.dirty[fid] = True
                self.changed = True

    def builtin_call(self, name, c, line):
        a = c.args
        if name == "getattr" and len(a) in (2, 3):
            objs, names = self.eval(a[0]), strings(self.eval(a[1]))
            probe = (line, self.segment(a[2])) if len(a) == 3 else None
            out = self.eval(a[2]) if len(a) == 3 else set()
            for v in objs:
                if not names:
                    self.dynamic(v, ("read",), line, probe is not None)
            for n in names:
                out |= self.attribute(objs, n, line, False, probe)
        elif name == "hasattr" and len(a) == 2:
            objs, names = self.eval(a[0]), strings(self.eval(a[1]))
            for v in objs:
                for n in names:
                    m = self.member_of(v, n)
                    if m:
                        self.record(line, ("native", m[0], m[1]), ("probe",), ("guarded", line))
            out = set()
        elif name == "setattr" and len(a) == 3:
            objs, names, vals = self.eval(a[0]), strings(self.eval(a[1])), self.eval(a[2])
            for v in objs:
                if not names:
                    self.dynamic(v, ("write",), line, False)
                for n in names:
                    if v[0] == "obj":
                        self.bind_attr(v[1], n, set(vals))
                    else:
                        m = self.member_of(v, n)
                        if m:
                            self.record(line, ("native", m[0], m[1]), ("write",), self.guard_for(m[0]))
            out = set()
        elif name == "type" and len(a) == 1:
            out = set()
            for v in self.eval(a[0]):
                if v[0] == "inst":
                    out.add(("classof", v[1]))
                elif v[0] == "obj":
                    out.add(("class", v[1]))
        elif name == "__import__":
            return self.dynamic_import(self.args(c), line)
        else:
            return None
        for k in c.keywords:
            self.eval(k.value)
        return out

    def dynamic(self, v, access, line, probed):
        o = self.native_owner(v)
        if o:
            guard = ("getattr", line, "") if probed else self.guard_for(o[0])
            self.record(line, ("dynamic", o[0], o[1]), access, guard)


def strings(vals):
    return [v[1] for v in vals if v[0] == "str"]


def elements(vals):
    return {x for v in vals if v[0] == "seq" for x in v[1]}


def exits(body):
    return bool(body) and isinstance(body[-1], (ast.Continue, ast.Break, ast.Return))


def raises(body):
    for s in body:
        if isinstance(s, ast.Raise):
            return True
        for field in ("body", "orelse", "finalbody"):
            if raises(getattr(s, field, []) if not isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) else []):
                return True
        for h in getattr(s, "handlers", []):
            if raises(h.body):
                return True
    return False


def is_type_checking(t):
    return (isinstance(t, ast.Name) and t.id == "TYPE_CHECKING") or \
        (isinstance(t, ast.Attribute) and t.attr == "TYPE_CHECKING")


def try_guard(t):
    line, attr, imp = t.lineno, False, False
    for h in t.handlers:
        if raises(h.body):
            continue
        if h.type is None:
            names = ["BaseException"]
        elif isinstance(h.type, ast.Tuple):
            names = [n for n in (last_name(e) for e in h.type.elts) if n]
        else:
            names = [n for n in [last_name(h.type)] if n]
        before = (attr, imp)
        attr |= any(n in ("AttributeError", "Exception", "BaseException") for n in names)
        imp |= any(n in ("ImportError", "ModuleNotFoundError", "Exception", "BaseException") for n in names)
        if (attr, imp) != before:
            line = h.lineno
    return (line, attr, imp)


def last_name(e):
    if isinstance(e, ast.Name):
        return e.id
    if isinstance(e, ast.Attribute):
        return e.attr
    return None


def use_key(u):
    return (u[0], repr(u[1]), repr(u[2]), repr(u[3]), repr(u[4]))


# ---------------------------------------------------------------------------- report

def shape_text(s):
    parts = [] if s[0] == 0 else ["1 arg" if s[0] == 1 else f"{s[0]} args"]
    if s[1]:
        parts.append("*args")
    parts += [f"{k}=" for k in s[2]]
    if s[3]:
        parts.append("**kwargs")
    return f"call({', '.join(parts)})"


def access_text(a):
    return {"read": "read", "write": "write", "probe": "probe (hasattr)", "import": "import"}.get(a[0]) \
        or shape_text(a[1])


ON = {"module": "", "class": " on the class", "instance": " on an instance"}


def describe(u, native_module):
    line, target, access, optional, via = u
    if target[0] == "sibling":
        kind, subject = "sibling", target[1]
        what = "import at module level" if optional is None else "import"
    else:
        kind = "native"
        subject = target[1] if target[0] == "native" else f"{target[1] or native_module}.<computed>"
        what = access_text(access) + ON[target[2]]
    if optional is None:
        usage = "required"
    elif optional[0] == "getattr":
        usage = f"optional, probed by getattr at line {optional[1]}" + (f" (fallback {optional[2]})" if optional[2] else "")
    elif optional[0] == "guarded":
        usage = f"optional, probed by hasattr at line {optional[1]}" if access[0] == "probe" \
            else f"optional, only where the test at line {optional[1]} finds it"
    elif optional[0] == "try":
        usage = f"optional, a failure is caught at line {optional[1]}"
    else:
        usage = f"optional, lazy, in the function at line {optional[1]}"
    tail = f" (arguments from the call at line {via})" if via else ""
    return f"{kind} {subject}: {what}: {usage}{tail}"


def overload_params(text):
    out, kwonly = [], False
    for p in split_params(text):
        if p == "/":
            out = [(n, "posonly", d) for n, _, d in out]
            continue
        if p == "*":
            kwonly = True
            continue
        head, has_default = p, False
        depth = 0
        for i, ch in enumerate(p):
            if ch in "[({<":
                depth += 1
            elif ch in "])}>":
                depth -= 1
            elif ch == "=" and depth == 0:
                head, has_default = p[:i], True
                break
        name = head.split(":")[0].strip()
        if name.startswith("**"):
            out.append((name[2:], "varkw", False))
        elif name.startswith("*"):
            kwonly = True
            out.append((name[1:], "varargs", False))
        else:
            out.append((name, "kwonly" if kwonly else "pos", has_default))
    return out


def fits(params, s):
    slots = [p for p in params if p[1] in ("posonly", "pos")]
    varargs = any(p[1] == "varargs" for p in params)
    varkw = any(p[1] == "varkw" for p in params)
    if s[0] > len(slots) and not varargs:
        return f"{s[0]} positional argument(s) where it takes at most {len(slots)}"
    bound = {p[0] for p in slots[:s[0]]}
    for k in s[2]:
        match = [p for p in params if p[0] == k and p[1] in ("pos", "kwonly")]
        if match and k in bound:
            return f"`{k}` is given by position and by keyword"
        if match:
            bound.add(k)
        elif not varkw:
            return f"no parameter `{k}`"
    if not s[1] and not s[3]:
        missing = [p[0] for p in params if p[1] in ("posonly", "pos", "kwonly") and not p[2] and p[0] not in bound]
        if missing:
            return "misses required `" + "`, `".join(missing) + "`"
    return None


def compare(declared, uses, native_module):
    failures, warnings = [], []
    native, siblings = {}, {}
    for u in uses:
        t = u[1]
        if t[0] == "native":
            native.setdefault(t[1], []).append(u)
        elif t[0] == "sibling":
            siblings.setdefault(t[1], []).append(u)
        else:
            owner = t[1] or native_module
            failures.append((u[0], f"native {owner}.<computed>", "computed member name",
                             "a member name api.toml can declare", f"{access_text(u[2])} of a name known only at run time"))
    members = {}
    for m in declared["members"]:
        kind = m["kind"]
        path = m["object"] + (f".{kind['Attribute']['name']}" if "Attribute" in kind else "")
        members[path] = m
    for path in sorted(native):
        us, subject = native[path], f"native {path}"
        m = members.get(path)
        if m is None:
            failures.append(undeclared(subject, "[[native]]", us))
            continue
        if m["usage"] == "optional":
            req = next((u for u in us if u[3] is None), None)
            if req:
                failures.append((req[0], subject, "use", "optional (as declared)",
                                 f"required {use_access(req)} (unguarded)"))
        kind = m["kind"]
        if "Attribute" in kind:
            acc = kind["Attribute"]["access"]
            w = next((u for u in us if u[2] == ("write",)), None)
            if w and acc == "read":
                failures.append((w[0], subject, "access", f"{acc} (as declared)", "a write"))
            r = next((u for u in us if u[2][0] in ("read", "call")), None)
            if r and acc == "write":
                failures.append((r[0], subject, "access", f"{acc} (as declared)", "a read"))
        else:
            w = next((u for u in us if u[2] == ("write",)), None)
            if w:
                failures.append((w[0], subject, "kind", "a method or function (declared without `attribute`)",
                                 "a write: declare it with `attribute` and `access`"))
            text = kind["Callable"]["overload"]
            if text is not None:
                params, seen = overload_params(text), set()
                for u in us:
                    if u[2][0] == "call" and u[2][1] not in seen:
                        seen.add(u[2][1])
                        why = fits(params, u[2][1])
                        if why:
                            failures.append((u[0], subject, "call", f"a call that fits ({text})",
                                             f"{shape_text(u[2][1])}: {why}"))
    for path, m in members.items():
        if m["by"] == "module" and path not in native:
            warnings.append((None, f"native {path}", "unused", "a use in the module (or `by = \"consumer\"`)", "none"))
    by_module = {s["module"]: s for s in declared["siblings"]}
    for module in sorted(siblings):
        us, subject = siblings[module], f"sibling {module}"
        s = by_module.get(module)
        if s is None:
            failures.append(undeclared(subject, "[[sibling]]", us))
        elif s["usage"] == "optional":
            req = next((u for u in us if u[3] is None), None)
            if req:
                failures.append((req[0], subject, "use", "optional (as declared)",
                                 "an import at module level, unguarded (required)"))
    for module in by_module:
        if module not in siblings:
            warnings.append((None, f"sibling {module}", "unused", "an import in the module", "none"))
    return sorted(failures, key=finding_key), sorted(warnings, key=finding_key)


def finding_key(f):
    return (f[0] is not None, f[0] or 0) + f[1:]


def use_access(u):
    if u[1][0] == "sibling":
        return "import at module level" if u[3] is None else "import"
    return access_text(u[2]) + ON[u[1][2]]


def undeclared(subject, table, us):
    first = next((u for u in us if u[3] is None), us[0])
    usage = "required" if first[3] is None else "optional"
    others = sorted({u[0] for u in us if u[0] != first[0]})
    also = f"; also used at line(s) {', '.join(map(str, others))}" if others else ""
    return (first[0], subject, "undeclared", f"a {table} entry", f"{usage} {use_access(first)}{also}")


def finding_line(path, f, level=""):
    at = f"{path}:{f[0]}" if f[0] is not None else path
    return f"{at}: {level}{f[1]}: {f[2]}: expected {f[3]}, found {f[4]}"


def main():
    spec = json.load(open(sys.argv[1]))
    path, runs = sys.argv[2], int(sys.argv[3])
    surface = spec["surface"]
    cfg = {"module": spec["module"], "native_module": spec["native_module"], "package": spec["package"],
           "roles": {r["param"]: r["class"] for r in surface["roles"]}}
    seconds, uses, failures, warnings = [], [], [], []
    for _ in range(runs):
        start = time.perf_counter()
        with open(path, "rb") as f:
            text = f.read().decode("utf-8")
        tree = ast.parse(text, path)
        uses = Analyzer(tree, text, cfg).run(tree.body)
        failures, warnings = compare(surface, uses, cfg["native_module"])
        lines = [f"{path}:{u[0]}: {describe(u, cfg['native_module'])}" for u in uses]
        lines += [finding_line(path, f) for f in failures]
        lines += [finding_line(path, f, "warning: ") for f in warnings]
        seconds.append(time.perf_counter() - start)
    if len(sys.argv) > 4 and sys.argv[4] == "--print":
        print("\n".join(lines))
        return
    print(json.dumps({"seconds": seconds, "uses": len(uses), "failures": len(failures),
                      "warnings": len(warnings)}))


main()
