# Helper the Rust runtime loads to read signatures; returns plain data only.
import importlib
import importlib.metadata
import inspect
import re

_KINDS = {
    inspect.Parameter.POSITIONAL_ONLY: "positional",
    inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional",
    inspect.Parameter.VAR_POSITIONAL: "var_positional",
    inspect.Parameter.KEYWORD_ONLY: "keyword_only",
    inspect.Parameter.VAR_KEYWORD: "var_keyword",
}


def signature(obj, drop_self):
    """(text, [(name, kind, has_default)]) or (None, error text)."""
    try:
        sig = inspect.signature(obj)
    except (TypeError, ValueError) as error:
        return None, f"no readable signature ({error})"
    params = [
        (p.name, _KINDS[p.kind], p.default is not inspect.Parameter.empty)
        for p in sig.parameters.values()
    ]
    if drop_self and params and params[0][0] == "self":
        params = params[1:]
    return str(sig), params


def member(cls, name):
    """(found, is_staticmethod, object)."""
    try:
        raw = inspect.getattr_static(cls, name)
    except AttributeError:
        return False, False, None
    return True, isinstance(raw, staticmethod), getattr(cls, name)


def resolve(module_name, dotted):
    """Import module_name and walk dotted; (object, None) or (None, error text)."""
    try:
        obj = importlib.import_module(module_name)
    except Exception as error:  # an honest check reports why the import failed
        return None, f"import {module_name} failed: {type(error).__name__}: {error}"
    for part in [p for p in dotted.split(".") if p]:
        if not hasattr(obj, part):
            return None, f"{module_name}.{dotted} is missing ({part!r} not found)"
        obj = getattr(obj, part)
    return obj, None


def installed_wheels():
    found = []
    for dist in importlib.metadata.distributions():
        name = (dist.metadata["Name"] or "").lower().replace("_", "-")
        if name.startswith("mooncake-transfer-engine"):
            found.append(f"{name}=={dist.version}")
    return ", ".join(sorted(set(found))) or "no mooncake-transfer-engine* distribution found"


def dataclass_frozen(cls):
    """True/False for a dataclass, None for anything else."""
    params = getattr(cls, "__dataclass_params__", None)
    return None if params is None else bool(params.frozen)


def overloads(obj):
    """Parameter texts after `self` of every signature line pybind11 wrote into __doc__."""
    name = getattr(obj, "__name__", "")
    found = []
    for line in (getattr(obj, "__doc__", None) or "").splitlines():
        # An object default prints with its address, different on every run: drop it.
        text = re.sub(r"<([^<>]*?) at 0x[0-9a-fA-F]+>", r"<\1>", line.strip())
        head, _, rest = text.partition(". ")
        if head.isdigit():
            text = rest
        if not text.startswith(name + "("):
            continue
        depth, end = 0, None
        for i, ch in enumerate(text[len(name):], start=len(name)):
            depth += ch in "([{<"
            depth -= ch in ")]}>"
            if depth == 0:
                end = i
                break
        if end is None:
            continue
        params = _split_top(text[len(name) + 1:end])
        if params and params[0].startswith("self"):
            params = params[1:]
        found.append(", ".join(params))
    return found


def _split_top(text):
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{<"
        depth -= ch in ")]}>"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    if text[start:].strip():
        parts.append(text[start:].strip())
    return parts


def has_attribute(obj, name, instance):
    """(True, None) or (False, why)."""
    target = obj
    if instance:
        try:
            target = obj()
        except Exception as error:
            return False, f"{obj!r}() failed: {type(error).__name__}: {error}"
    return (True, None) if hasattr(target, name) else (False, "attribute missing")
