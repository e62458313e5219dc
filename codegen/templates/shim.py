# {{ header }}
"""Verified entry point to `{{ module }}`, as pinned in api.toml.

Importing this module checks the installed module and its native core against the
contract in api.toml (every symbol, parameter and native requirement) and raises one
ImportError listing every miss. `python3 -m {{ shim }}` prints the same report and
exits 1 on a miss; `--json` prints it as JSON. Standard library only; Python >= 3.9.
"""

from __future__ import annotations

import dataclasses
import hashlib
import importlib
import importlib.util
import inspect
import json
import re
import sys
from typing import Any

MODULE = {{ module_lit }}
NATIVE_MODULE = {{ native_module_lit }}
UPSTREAM_REPO = {{ repo_lit }}
UPSTREAM_PATH = {{ path_lit }}
UPSTREAM_COMMIT = {{ commit_lit }}
UPSTREAM_SHA256 = {{ sha256_lit }}
API_FINGERPRINT = {{ fingerprint_lit }}
FIX = {{ fix_lit }}

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
    import ast

    try:
        return ast.literal_eval(expr)
    except (ValueError, SyntaxError):
        return _MISSING


def _check_default(label: str, declared: Any, found: Any, misses: list[str]) -> None:
    empty = found is inspect.Parameter.empty or found is dataclasses.MISSING
    if declared is None:
        if not empty:
            misses.append(f"{label}: has default {found!r}, expected none")
        return
    if empty:
        misses.append(f"{label}: has no default, expected {declared}")
        return
    value = _literal(declared)
    if value is not _MISSING and (type(value) is not type(found) or value != found):
        misses.append(f"{label}: default is {found!r}, expected {declared}")


def _check_params(label: str, fn: Any, declared: list[dict[str, Any]], skip_self: bool, misses: list[str]) -> None:
    try:
        params = dict(inspect.signature(fn).parameters)
    except (TypeError, ValueError) as exc:
        misses.append(f"{label}: signature not readable ({exc})")
        return
    if skip_self and params:
        params.pop(next(iter(params)))
    names = set()
    for want in declared:
        name = want["name"]
        names.add(name)
        found = params.get(name)
        where = f"{label}: parameter {name!r}"
        if found is None:
            misses.append(f"{where} missing (signature is {inspect.signature(fn)})")
            continue
        if found.kind != _KINDS[want["kind"]]:
            misses.append(f"{where} is {_KIND_NAMES[found.kind]}, expected {_KIND_NAMES[_KINDS[want['kind']]]}")
        _check_default(where, want["default"], found.default, misses)
    for name, found in params.items():
        required = found.default is inspect.Parameter.empty
        if name not in names and required and found.kind not in (found.VAR_POSITIONAL, found.VAR_KEYWORD):
            misses.append(f"{label}: undeclared required parameter {name!r}")


def _check_symbol(module: Any, spec: dict[str, Any], misses: list[str]) -> None:
    name, kind = spec["name"], spec["kind"]
    obj = getattr(module, name, _MISSING)
    if obj is _MISSING:
        misses.append(f"{name}: missing")
        return
    if kind == "dataclass":
        if not (isinstance(obj, type) and dataclasses.is_dataclass(obj)):
            misses.append(f"{name}: is not a dataclass")
            return
        if spec["frozen"] and not obj.__dataclass_params__.frozen:
            misses.append(f"{name}: is not frozen")
        fields = {f.name: f for f in dataclasses.fields(obj)}
        for want in spec["fields"]:
            found = fields.get(want["name"])
            where = f"{name}.{want['name']}"
            if found is None:
                misses.append(f"{where}: field missing")
            elif want["factory"] is not None:
                factory = getattr(found.default_factory, "__qualname__", None)
                if factory != want["factory"]:
                    misses.append(f"{where}: default_factory is {factory}, expected {want['factory']}")
            else:
                _check_default(where, want["default"], found.default, misses)
    elif kind == "class":
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
                want = "a staticmethod" if method["static"] else "an instance method"
                misses.append(f"{label}: is not {want}")
                continue
            _check_params(label, getattr(obj, method["name"]), method["params"], not method["static"], misses)
    else:
        if kind == "alias":
            target = getattr(module, spec["target"], _MISSING)
            if obj is not target:
                misses.append(f"{name}: is not an alias of {spec['target']}")
                return
        if not callable(obj):
            misses.append(f"{name}: is not callable")
            return
        _check_params(name, obj, spec["params"], False, misses)


def _split_params(text: str) -> list[str]:
    """Splits a pybind11 parameter list at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _overloads(obj: Any, name: str) -> list[str]:
    """The parameter lists after `self` of each signature line in a pybind11 docstring.

    An object default prints with its address (`<mooncake.store.ReplicateConfig object at
    0x7f...>`), which differs on every run: `<... at 0x...>` becomes `<...>`.
    """
    found = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        line = re.sub(r"<([^<>]*?) at 0x[0-9a-fA-F]+>", r"<\1>", line)
        m = re.match(r"\s*(?:\d+\.\s*)?" + re.escape(name) + r"\((.*)\)\s*->", line)
        if m:
            params = _split_params(m.group(1))
            if params and params[0].split(":")[0].strip() == "self":
                params = params[1:]
            found.append(", ".join(params))
    return found


def _check_native(misses: list[str]) -> None:
    try:
        native = importlib.import_module(NATIVE_MODULE)
    except Exception as exc:  # a missing system library raises OSError inside ImportError
        misses.append(f"{NATIVE_MODULE}: cannot import the native core ({exc})")
        return
    for spec in NATIVE:
        label = f"{NATIVE_MODULE}.{spec['object']}"
        obj: Any = native
        for part in spec["object"].split("."):
            obj = getattr(obj, part, _MISSING)
            if obj is _MISSING:
                break
        if obj is _MISSING:
            misses.append(f"{label}: missing (needed because {spec['reason']})")
        elif "overload" in spec:
            found = _overloads(obj, spec["object"].rsplit(".", 1)[-1])
            if " ".join(spec["overload"].split()) not in [" ".join(f.split()) for f in found]:
                misses.append(f"{label}: no overload ({spec['overload']}); found {found} (needed because {spec['reason']})")
        else:
            holder = obj
            if spec["instance"]:
                try:
                    holder = obj()
                except Exception as exc:
                    misses.append(f"{label}: cannot be made with no arguments ({exc})")
                    continue
            if not hasattr(holder, spec["attribute"]):
                misses.append(f"{label}.{spec['attribute']}: missing (needed because {spec['reason']})")


def installed() -> dict[str, Any]:
    """What is installed: mooncake distributions, the module file and its sha256."""
    from importlib import metadata

    dists = sorted(
        f"{d.metadata['Name']} {d.version}"
        for d in metadata.distributions()
        if (d.metadata["Name"] or "").lower().replace("_", "-").startswith({{ package_prefix_lit }})
    )
    info: dict[str, Any] = {"distributions": dists, "module_file": None, "module_sha256": None}
    try:
        spec = importlib.util.find_spec(MODULE)
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


def check() -> list[str]:
    """Every way the installed module and native core differ from api.toml; [] if none."""
    misses: list[str] = []
    try:
        module = importlib.import_module(MODULE)
    except Exception as exc:
        misses.append(f"{MODULE}: cannot import ({exc!r})")
    else:
        for spec in SYMBOLS:
            _check_symbol(module, spec, misses)
    _check_native(misses)
    return misses


def describe(misses: list[str]) -> str:
    info = installed()
    lines = [f"{{ shim }}: {MODULE} does not provide the API api.toml declares ({len(misses)} problem(s)):"]
    lines += [f"  - {m}" for m in misses]
    lines.append(f"pinned:    {UPSTREAM_REPO}@{UPSTREAM_COMMIT} {UPSTREAM_PATH} (sha256 {UPSTREAM_SHA256})")
    dists = ", ".join(info["distributions"]) or "no mooncake distribution"
    lines.append(f"installed: {dists}; module {info['module_file']} (sha256 {info['module_sha256']})")
    lines.append(f"fix:       {FIX}")
    return "\n".join(lines)


def _main(argv: list[str], misses: list[str]) -> int:
    if "--json" in argv:
        report = {"ok": not misses, "misses": misses, "fingerprint": API_FINGERPRINT,
                  "commit": UPSTREAM_COMMIT, "installed": installed()}
        print(json.dumps(report, indent=2, sort_keys=True))
    elif misses:
        print(describe(misses), file=sys.stderr)
    else:
        print(f"ok: {MODULE} provides {', '.join(s['name'] for s in SYMBOLS)} and "
              f"{len(NATIVE)} native requirement(s) (api {API_FINGERPRINT[:12]}, pin {UPSTREAM_COMMIT[:8]})")
    return 1 if misses else 0


_MISSES = check()
if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:], _MISSES))
if _MISSES:
    raise ImportError(describe(_MISSES))

_module = importlib.import_module(MODULE)
{% for s in symbols -%}
{{ s }} = _module.{{ s }}
{% endfor -%}
