# {{ header }}
"""Verified entry point to `{{ module }}`, as pinned in api.toml.

`import {{ shim }}` checks the installed module and its native core against the contract in
api.toml (every symbol; each parameter's kind, order and default; every native requirement)
and raises one ImportError listing every miss, with the pin, the installed wheel and the fix.
`python3 -m {{ shim }}` prints the same report and exits 1 on a miss (`--json`: as JSON);
`python3 -m {{ shim }} --smoke` runs the consumer's own calls (api.toml's scenarios) against the
installed module and core and a master it starts (below, after main).

This file is the one implementation of that check. `check()` and `report()` only report (no
raise, no output), so other programs run this same file under another module name and call
them: the Rust bindings' runtime does, at load time. Standard library only; Python >= 3.9.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib
import importlib.util
import inspect
import json
import re
import sys
from typing import Any

SHIM = {{ shim_lit }}
MODULE = {{ module_lit }}
NATIVE_MODULE = {{ native_module_lit }}
UPSTREAM_REPO = {{ repo_lit }}
UPSTREAM_PATH = {{ path_lit }}
UPSTREAM_COMMIT = {{ commit_lit }}
UPSTREAM_SHA256 = {{ sha256_lit }}
API_FINGERPRINT = {{ fingerprint_lit }}
FIX = {{ fix_lit }}
PINNED = f"{UPSTREAM_REPO}@{UPSTREAM_COMMIT} {UPSTREAM_PATH} (sha256 {UPSTREAM_SHA256})"

# The contract, as api.toml declares it.
SYMBOLS: list[dict[str, Any]] = {{ symbols_lit }}
NATIVE: list[dict[str, Any]] = {{ native_lit }}

__all__ = [{% for s in symbol_lits %}{{ s }}, {% endfor %}"API_FINGERPRINT", "check"]

_KINDS = {
    "positional": inspect.Parameter.POSITIONAL_OR_KEYWORD,
    "keyword": inspect.Parameter.KEYWORD_ONLY,
}
_KIND_NAMES = {
    inspect.Parameter.POSITIONAL_ONLY: "positional-only",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.VAR_POSITIONAL: "*args",
    inspect.Parameter.KEYWORD_ONLY: "keyword-only",
    inspect.Parameter.VAR_KEYWORD: "**kwargs",
}
_MISSING = object()


def _literal(expr: str) -> Any:
    """The value of a literal default expression, or _MISSING for names like CONSTANT."""
    try:
        return ast.literal_eval(expr)
    except (ValueError, SyntaxError):
        return _MISSING


def _default_problem(declared: str | None, found: Any) -> str | None:
    """Literal defaults compare by type and value, names (CONSTANT) by presence."""
    empty = found is inspect.Parameter.empty or found is dataclasses.MISSING
    if declared is None:
        return None if empty else f"has default {found!r}, expected none"
    if empty:
        return f"has no default, expected {declared}"
    value = _literal(declared)
    if value is not _MISSING and (type(value) is not type(found) or value != found):
        return f"default is {found!r}, expected {declared}"
    return None


def _order_problem(declared: list[str], found: list[str]) -> str | None:
    """Declared names keep their declared order; undeclared optional ones may sit between."""
    present = [name for name in found if name in declared]
    wanted = [name for name in declared if name in present]
    for got, want in zip(present, wanted):
        if got != want:
            return f"{got!r} comes before {want!r}"
    return None


def _expected_signature(declared: list[dict[str, Any]], with_self: bool) -> str:
    parts = ["self"] if with_self else []
    for i, p in enumerate(declared):
        if p["kind"] == "keyword" and (i == 0 or declared[i - 1]["kind"] != "keyword"):
            parts.append("*")
        parts.append(p["name"] if p["default"] is None else f"{p['name']}={p['default']}")
    return f"({', '.join(parts)})"


def _check_params(label: str, fn: Any, declared: list[dict[str, Any]], has_self: bool, misses: list[str]) -> None:
    """One miss per callable, listing each problem, then the expected and found signatures."""
    try:
        signature = inspect.signature(fn)
    except (TypeError, ValueError) as exc:
        misses.append(f"{label}: signature not readable ({exc})")
        return
    params = list(signature.parameters.values())
    if has_self and params and params[0].kind in (params[0].POSITIONAL_ONLY, params[0].POSITIONAL_OR_KEYWORD):
        params = params[1:]
    found = {p.name: p for p in params}
    problems = []
    for want in declared:
        where = f"parameter {want['name']!r}"
        p = found.get(want["name"])
        if p is None:
            problems.append(f"{where} missing")
            continue
        if p.kind != _KINDS[want["kind"]]:
            problems.append(f"{where} is {_KIND_NAMES[p.kind]}, expected {_KIND_NAMES[_KINDS[want['kind']]]}")
        default = _default_problem(want["default"], p.default)
        if default:
            problems.append(f"{where}: {default}")
    names = [want["name"] for want in declared]
    for p in params:
        if p.name not in names and p.default is p.empty and p.kind not in (p.VAR_POSITIONAL, p.VAR_KEYWORD):
            problems.append(f"undeclared required parameter {p.name!r}")
    order = _order_problem(names, [p.name for p in params])
    if order:
        problems.append(f"parameter {order}")
    if problems:
        expected = _expected_signature(declared, has_self)
        misses.append(f"{label}: {'; '.join(problems)}; expected {expected}, found {signature}")


def _check_dataclass(name: str, obj: Any, spec: dict[str, Any], misses: list[str]) -> None:
    if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
        misses.append(f"{name}: is not a dataclass")
        return
    if obj.__dataclass_params__.frozen != spec["frozen"]:
        misses.append(f"{name}: is not frozen" if spec["frozen"] else f"{name}: is frozen, expected not frozen")
    fields = {f.name: f for f in dataclasses.fields(obj) if f.init}
    for want in spec["fields"]:
        where = f"{name}.{want['name']}"
        found = fields.get(want["name"])
        if found is None:
            misses.append(f"{where}: field missing")
            continue
        keyword = getattr(found, "kw_only", False) is True  # Field.kw_only: Python >= 3.10
        if keyword != (want["kind"] == "keyword"):
            misses.append(f"{where}: is {'keyword-only' if keyword else 'positional'}, expected {want['kind']}")
        if want["factory"] is not None:
            factory = getattr(found.default_factory, "__qualname__", None)
            if factory != want["factory"]:
                misses.append(f"{where}: default_factory is {factory}, expected {want['factory']}")
        else:
            default = _default_problem(want["default"], found.default)
            if default:
                misses.append(f"{where}: {default}")
    order = _order_problem([w["name"] for w in spec["fields"]], list(fields))
    if order:
        misses.append(f"{name}: field {order}")


def _check_class(name: str, obj: Any, spec: dict[str, Any], misses: list[str]) -> None:
    if not isinstance(obj, type):
        misses.append(f"{name}: is not a class")
        return
    _check_params(f"{name}.__init__", obj.__init__, spec["init"], True, misses)
    for method in spec["methods"]:
        label = f"{name}.{method['name']}"
        try:
            raw = inspect.getattr_static(obj, method["name"])
        except AttributeError:
            misses.append(f"{label}: missing")
            continue
        if isinstance(raw, staticmethod) != method["static"]:
            misses.append(f"{label}: is not {'a staticmethod' if method['static'] else 'an instance method'}")
            continue
        _check_params(label, getattr(obj, method["name"]), method["params"], not method["static"], misses)


def _check_symbol(module: Any, spec: dict[str, Any], misses: list[str]) -> None:
    name, kind = spec["name"], spec["kind"]
    obj = getattr(module, name, _MISSING)
    if obj is _MISSING:
        misses.append(f"{name}: missing")
    elif kind == "dataclass":
        _check_dataclass(name, obj, spec, misses)
    elif kind == "class":
        _check_class(name, obj, spec, misses)
    elif kind == "alias" and obj is not getattr(module, spec["target"], _MISSING):
        misses.append(f"{name}: is not an alias of {spec['target']}")
    elif not callable(obj):
        misses.append(f"{name}: is not callable")
    else:
        _check_params(name, obj, spec["params"], False, misses)


{{ overloads_py }}


def _check_native(native_module: str, misses: list[str]) -> None:
    # Each entry is in the native core, or in the other extension module it names
    # (`mooncake.engine`); each module is imported once, and one that fails is one miss.
    modules: dict[str, Any] = {}
    for name in [native_module] + [spec["module"] for spec in NATIVE if "module" in spec]:
        if name not in modules:
            try:
                modules[name] = importlib.import_module(name)
            except Exception as exc:  # a missing system library raises OSError inside ImportError
                what = "the native core" if name == native_module else "an extension module the contract uses"
                misses.append(f"{name}: cannot import {what} ({exc})")
                modules[name] = None
    for spec in NATIVE:
        name = spec.get("module", native_module)
        native = modules[name]
        if native is None:
            continue
        label = f"{name}.{spec['object']}"
        need = f"(needed because {spec['reason']})"
        obj: Any = native
        for part in spec["object"].split("."):
            obj = getattr(obj, part, _MISSING)
            if obj is _MISSING:
                break
        if obj is _MISSING:
            misses.append(f"{label}: missing {need}")
        elif "overload" in spec:
            # A class's overloads are its constructor's.
            is_class = isinstance(obj, type)
            found = _overloads(obj.__init__ if is_class else obj, "__init__" if is_class else spec["object"].rsplit(".", 1)[-1])
            if spec["overload"] not in found:
                seen = " | ".join(f"({f})" for f in found) or "no signature in __doc__"
                misses.append(f"{label}: expected overload (self, {spec['overload']}), found {seen} {need}")
        else:
            holder = obj
            if spec["instance"]:
                try:
                    holder = obj()
                except Exception as exc:
                    misses.append(f"{label}: cannot be made with no arguments ({exc}) {need}")
                    continue
            if not hasattr(holder, spec["attribute"]):
                misses.append(f"{label}.{spec['attribute']}: missing {need}")


def check(module: str = MODULE, native_module: str = NATIVE_MODULE) -> list[str]:
    """Every way the installed module and native core differ from api.toml; [] if none.

    `module` / `native_module` name other copies to check (tests check doctored ones).
    """
    misses: list[str] = []
    try:
        imported = importlib.import_module(module)
    except Exception as exc:
        misses.append(f"{module}: cannot import ({exc!r})")
    else:
        for spec in SYMBOLS:
            _check_symbol(imported, spec, misses)
    _check_native(native_module, misses)
    return misses


def installed(module: str = MODULE) -> dict[str, Any]:
    """What is installed: the package's distributions, the module file and its sha256."""
    import hashlib  # here and argparse in main(): the check alone needs neither (~7 ms each)
    from importlib import metadata

    # The distributions api.toml names, and any other that installs the native core's package.
    # packages_distributions is Python >= 3.10; on 3.9 the names api.toml gives are all there is.
    by_package = getattr(metadata, "packages_distributions", dict)()
    providers = set(by_package.get(NATIVE_MODULE.split(".")[0], []))
    dists = sorted(
        f"{d.metadata['Name']} {d.version}"
        for d in metadata.distributions()
        if d.metadata["Name"] in providers
        or (d.metadata["Name"] or "").lower().replace("_", "-").replace(".", "-") in {{ distributions_lit }}
    )
    info: dict[str, Any] = {"distributions": dists, "module_file": None, "module_sha256": None}
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):
        spec = None
    if spec is not None and spec.origin:
        info["module_file"] = spec.origin
        try:
            with open(spec.origin, "rb") as f:
                info["module_sha256"] = hashlib.sha256(f.read()).hexdigest()
        except OSError:
            pass
    return info


def installed_text(info: dict[str, Any]) -> str:
    dists = ", ".join(info["distributions"]) or "no mooncake distribution"
    return f"{dists}; module {info['module_file']} (sha256 {info['module_sha256']})"


def report(module: str = MODULE, native_module: str = NATIVE_MODULE, misses: list[str] | None = None) -> dict[str, Any]:
    """The check's verdict with everything needed to act on it (what `--json` prints)."""
    misses = check(module, native_module) if misses is None else misses
    return {"ok": not misses, "module": module, "misses": misses, "fingerprint": API_FINGERPRINT,
            "commit": UPSTREAM_COMMIT, "pinned": PINNED, "installed": installed(module), "fix": FIX}


def describe(r: dict[str, Any]) -> str:
    lines = [f"{SHIM}: {r['module']} does not provide the API api.toml declares ({len(r['misses'])} problem(s)):"]
    lines += [f"  - {m}" for m in r["misses"]]
    lines.append(f"pinned:    {r['pinned']}")
    lines.append(f"installed: {installed_text(r['installed'])}")
    lines.append(f"fix:       {r['fix']}")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    import argparse

    parser = argparse.ArgumentParser(
        prog=f"python3 -m {SHIM}",
        description=f"Check the installed {MODULE} and its native core against api.toml; exit 1 on a miss. "
        "--smoke runs the consumer's calls (api.toml's scenarios) against them and a master it starts.",
    )
    parser.add_argument("--json", action="store_true", help="print the report as JSON")
    parser.add_argument("--smoke", action="store_true", help="run every scenario instead; one line each")
    parser.add_argument("--timeout", type=float, metavar="SECONDS",
                        help=f"with --smoke: each scenario's bound (default {SMOKE_TIMEOUT:g})")
    parser.add_argument("--smoke-worker", nargs=3, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.smoke_worker:
        # The smoke's own child: alone, a scenario's name and two ports, else a usage error
        # (it was a traceback, exit 1).
        name, rpc, metrics = args.smoke_worker
        if (args.smoke or args.json or args.timeout is not None or name not in {s["name"] for s in SCENARIOS}
                or not all(p.isdigit() and 0 < int(p) < 65536 for p in (rpc, metrics))):
            parser.error("--smoke-worker is the smoke's own: alone, with a scenario's name and two ports")
        _smoke_worker(name, int(rpc), int(metrics))
    if args.smoke and args.json:
        parser.error("--json and --smoke do not go together")
    if args.timeout is not None and (not args.smoke or not 0 < args.timeout <= 3600):
        parser.error("--timeout takes seconds in (0, 3600] and goes with --smoke")
    if args.smoke:
        return smoke(SMOKE_TIMEOUT if args.timeout is None else args.timeout)
    r = report()
    if args.json:
        print(json.dumps(r, indent=2, sort_keys=True))
    elif r["misses"]:
        print(describe(r), file=sys.stderr)
    else:
        print(f"ok: {MODULE} provides {', '.join(s['name'] for s in SYMBOLS)} and "
              f"{len(NATIVE)} native requirement(s) (api {API_FINGERPRINT[:12]}, pin {UPSTREAM_COMMIT[:8]})")
    return 1 if r["misses"] else 0
{% include "smoke.py" %}

if __name__ == "__main__":
    sys.exit(main())
elif __name__ == SHIM:
    # Imported under its own name: the import-time check, then the checked names.
    _MISSES = check()
    if _MISSES:
        raise ImportError(describe(report(misses=_MISSES)))
    _module = importlib.import_module(MODULE)
{% for s in symbols %}    {{ s }} = _module.{{ s }}
{% endfor -%}
