"""The baseline for `cargo xtask bench-verify`: the static check `verify --module` does, in
Python with `ast`. Reads the declared symbols (the api.toml model as JSON), parses the module
and extracts the same facts (module-level bindings incl. if/try arms, dataclass fields and
defaults, methods, parameters with kinds and defaults normalised by ast.unparse), compares.

usage: python3 verify_ast.py SYMBOLS.json MODULE.py RUNS
prints {"seconds": [per-run wall time], "mismatches": N}
"""

import ast
import json
import sys
import time


def dotted(node):
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        inner = dotted(node.value)
        return inner and f"{inner}.{node.attr}"
    return None


def dataclass_frozen(dec):
    func, kws = (dec.func, dec.keywords) if isinstance(dec, ast.Call) else (dec, [])
    if dotted(func) not in ("dataclass", "dataclasses.dataclass"):
        return None
    return any(k.arg == "frozen" and isinstance(k.value, ast.Constant) and k.value.value is True for k in kws)


def default(node):
    return None if node is None else {"canon": ast.unparse(node), "factory": None}


def function(f):
    names = {dotted(d) for d in f.decorator_list}
    a = f.args
    params = []
    pos_defaults = [None] * (len(a.posonlyargs) + len(a.args) - len(a.defaults)) + list(a.defaults)
    for i, p in enumerate(a.posonlyargs + a.args):
        kind = "positional-only" if i < len(a.posonlyargs) else "positional"
        params.append((p.arg, p.lineno, kind, default(pos_defaults[i])))
    for p, d in zip(a.kwonlyargs, a.kw_defaults):
        params.append((p.arg, p.lineno, "keyword-only", default(d)))
    for p, kind in ((a.vararg, "*args"), (a.kwarg, "**kwargs")):
        if p is not None:
            params.append((p.arg, p.lineno, kind, None))
    return {"kind": "function", "line": f.lineno, "static": "staticmethod" in names, "params": params}


def field(stmt):
    if not isinstance(stmt.target, ast.Name) or "ClassVar" in (dotted(stmt.annotation) or ""):
        return None
    d = default(stmt.value)
    v = stmt.value
    if isinstance(v, ast.Call) and dotted(v.func) in ("field", "dataclasses.field"):
        d = None
        for k in v.keywords:
            if k.arg == "init" and isinstance(k.value, ast.Constant) and k.value.value is False:
                return None
            if k.arg == "default":
                d = default(k.value)
            if k.arg == "default_factory":
                d = {"canon": ast.unparse(v), "factory": ast.unparse(k.value)}
    return (stmt.target.id, stmt.target.lineno, "positional", d)


def klass(c):
    frozen = next((f for f in map(dataclass_frozen, c.decorator_list) if f is not None), None)
    fields, methods = [], {}
    for s in c.body:
        if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            methods[s.name] = function(s)
        elif isinstance(s, ast.AnnAssign) and frozen is not None:
            f = field(s)
            if f:
                fields.append(f)
    return {"kind": "class", "line": c.lineno, "dataclass": frozen, "fields": fields, "methods": methods}


def suite(body, out):
    for s in body:
        if isinstance(s, ast.ClassDef):
            out[s.name] = klass(s)
        elif isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef)):
            out[s.name] = function(s)
        elif isinstance(s, ast.Assign):
            for t in s.targets:
                if isinstance(t, ast.Name):
                    alias = isinstance(s.value, ast.Name)
                    out[t.id] = {"kind": "alias" if alias else "value", "line": t.lineno,
                                 "target": s.value.id if alias else None}
        elif isinstance(s, (ast.Import, ast.ImportFrom)):
            for n in s.names:
                out[(n.asname or n.name).split(".")[0]] = {"kind": "import", "line": s.lineno}
        elif isinstance(s, ast.If):
            suite(s.body, out)
            suite(s.orelse, out)
        elif isinstance(s, ast.Try):
            for part in (s.body, *[h.body for h in s.handlers], s.orelse, s.finalbody):
                suite(part, out)


def want_default(d):
    if d is None:
        return None
    if "Expr" in d:
        return ("expr", ast.unparse(ast.parse(d["Expr"]["text"], mode="eval").body))
    return ("factory", ast.unparse(ast.parse(d["Factory"], mode="eval").body))


def same_default(want, found):
    w = want_default(want)
    if w is None or found is None:
        return w is None and found is None
    return found["canon"] == w[1] if w[0] == "expr" else found["factory"] == w[1]


def params(label, f, declared, skip_first, miss):
    found = f["params"][1:] if skip_first and f["params"] else f["params"]
    positional = [p[0] for p in found if p[2] in ("positional", "positional-only")]
    position = 0
    for want in declared:
        p = next((p for p in found if p[0] == want["name"] and not p[2].startswith("*")), None)
        if p is None:
            miss.append((f["line"], label, want["name"], "missing"))
            continue
        kind = "positional" if want["kind"] == "Positional" else "keyword-only"
        if p[2] != kind:
            miss.append((p[1], label, want["name"], "kind"))
        elif kind == "positional" and positional.index(p[0]) != position:
            miss.append((p[1], label, want["name"], "position"))
        position += kind == "positional"
        if not same_default(want["default"], p[3]):
            miss.append((p[1], label, want["name"], "default"))
    names = {d["name"] for d in declared}
    for p in found:
        if not p[2].startswith("*") and p[3] is None and p[0] not in names:
            miss.append((p[1], label, p[0], "undeclared required"))


def check(symbols, facts):
    miss = []
    for sym in symbols:
        name, ((kind, spec),) = sym["name"], sym["kind"].items()
        b = facts.get(name)
        if b is None:
            miss.append((1, name, "", "missing"))
        elif kind == "Dataclass" and b["kind"] == "class" and b["dataclass"] is not None:
            if spec["frozen"] != b["dataclass"]:
                miss.append((b["line"], name, "", "frozen"))
            fields = {f[0]: f for f in b["fields"]}
            for want in spec["fields"]:
                f = fields.get(want["name"])
                if f is None or not same_default(want["default"], f[3]):
                    miss.append((b["line"], name, want["name"], "field"))
        elif kind == "Class" and b["kind"] == "class":
            init = b["methods"].get("__init__")
            if init is not None:
                params(f"{name}.__init__", init, spec["init"], True, miss)
            for m in spec["methods"]:
                f = b["methods"].get(m["name"])
                if f is None or f["static"] != m["staticmethod"]:
                    miss.append((b["line"], name, m["name"], "method"))
                else:
                    params(f"{name}.{m['name']}", f, m["params"], not f["static"], miss)
        elif kind == "Alias" and b["kind"] == "alias":
            if b["target"] != spec["target"]:
                miss.append((b["line"], name, "", "alias target"))
            t = facts.get(b["target"])
            if t is None or t["kind"] != "function":
                miss.append((b["line"], name, "", "alias target kind"))
            else:
                params(name, t, spec["params"], False, miss)
        elif kind == "Function" and b["kind"] == "function":
            params(name, b, spec["params"], False, miss)
        else:
            miss.append((b["line"], name, "", "kind"))
    return miss


def main():
    symbols = json.load(open(sys.argv[1]))
    path, runs = sys.argv[2], int(sys.argv[3])
    seconds, misses = [], []
    for _ in range(runs):
        start = time.perf_counter()
        with open(path, "rb") as f:
            tree = ast.parse(f.read(), path)
        facts = {}
        suite(tree.body, facts)
        misses = check(symbols, facts)
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"seconds": seconds, "mismatches": len(misses)}))


if __name__ == "__main__":
    main()
