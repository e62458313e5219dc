"""Prints the surface of a native module (a pybind11 core such as mooncake.store) as JSON.

Usage: python3 -I introspect.py MODULE

Run by `mooncake_sos_upstream::core` in a throwaway venv; standard library only. Every class
(its methods with their pybind11 docstring overloads, properties and values), every function
and every other value of the module. A class is also made with no arguments, in a forked
child so a constructor that crashes or hangs costs only that class's instance facts: which
members an instance can read and write, and whether it takes new attributes.
Exit 3 when the module cannot be imported (the reason on stderr), 0 otherwise.
"""

import importlib
import json
import os
import re
import select
import signal
import sys
import time

# An object default prints with its address (`<mooncake.store.ReplicateConfig object at
# 0x7f...>`), different on every run: `<X at 0x...>` becomes `<X>`, as the shim's checker reads it.
ADDRESS = re.compile(r"<([^<>]*?) at 0x[0-9a-fA-F]+>")
# Seconds one class's constructor and probes may take in the child.
CHILD_SECONDS = 10
# Class attributes that say nothing about the core: Python's own bookkeeping.
SKIP = {"__doc__", "__module__", "__dict__", "__weakref__", "__annotations__", "__qualname__"}
PROBE_NAME = "_mooncake_sos_probe"


def split_params(text):
    """A parameter list split at top-level commas."""
    parts, depth, start = [], 0, 0
    for i, ch in enumerate(text):
        depth += ch in "([{"
        depth -= ch in ")]}"
        if ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def overloads(obj, name):
    """The parameter list after `self` of each `name(...) -> ...` line of the docstring."""
    found = []
    doc = getattr(obj, "__doc__", None)
    for line in (doc if isinstance(doc, str) else "").splitlines():
        line = ADDRESS.sub(r"<\1>", line)
        m = re.match(r"\s*(?:\d+\.\s*)?" + re.escape(name) + r"\((.*)\)\s*->", line)
        if m:
            params = split_params(m.group(1))
            if params and params[0].split(":")[0].strip() == "self":
                params = params[1:]
            found.append(", ".join(params))
    return found


def owner(cls, name):
    """The class in the MRO that defines `name`, and the raw attribute."""
    for base in cls.__mro__:
        if name in base.__dict__:
            return base, base.__dict__[name]
    return None, None


def is_plumbing(base):
    """`object` and pybind11's common base: members every class has."""
    return base is None or base is object or base.__name__ == "pybind11_object"


def member(name, raw):
    if isinstance(raw, property):
        return {"kind": "property", "readonly": raw.fset is None}
    if isinstance(raw, (staticmethod, classmethod)):
        kind = "staticmethod" if isinstance(raw, staticmethod) else "classmethod"
        return {"kind": kind, "overloads": overloads(raw.__func__, name)}
    if isinstance(raw, type):
        return {"kind": "class"}
    if callable(raw):
        return {"kind": "method", "overloads": overloads(raw, name)}
    return {"kind": "value", "type": type(raw).__name__}


def class_members(cls):
    members = {}
    for name in sorted(dir(cls)):
        base, raw = owner(cls, name)
        # pybind11's own per-class hooks (`_pybind11_conduit_v1_`) vary with its version.
        if name in SKIP or is_plumbing(base) or name.startswith("_pybind11_"):
            continue
        members[name] = member(name, raw)
    return members


def probe(cls, members):
    """In the child: make an instance, then what it reads, writes and takes."""
    try:
        obj = cls()
    except BaseException as exc:  # any failure is a fact about the class
        return {"error": ADDRESS.sub(r"<\1>", f"{type(exc).__name__}: {exc}")}
    found = {}
    # The class's data members, and what only the instance has (set by its constructor).
    data = {n for n, m in members.items() if m["kind"] in ("property", "value")}
    names = data | (set(dir(obj)) - set(dir(cls)) - SKIP)
    for name in sorted(names):
        try:
            value = getattr(obj, name)
        except BaseException:
            found[name] = {"read": False, "write": False}
            continue
        try:
            setattr(obj, name, value)
            writes = True
        except BaseException:
            writes = False
        found[name] = {"read": True, "write": writes}
    try:
        setattr(obj, PROBE_NAME, 1)
        takes_new = True
    except BaseException:
        takes_new = False
    return {"members": found, "new_attributes": takes_new}


def probe_in_child(cls, members):
    """`probe` in a forked child with a deadline; a crash or hang is reported, not shared."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        signal.alarm(CHILD_SECONDS)
        try:
            data = json.dumps(probe(cls, members)).encode()
        except BaseException as exc:
            data = json.dumps({"error": f"probe failed: {type(exc).__name__}: {exc}"}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view):]
        os._exit(0)  # no exit handlers, no destructors of what the parent made
    os.close(write_end)
    chunks, deadline = [], time.monotonic() + CHILD_SECONDS + 5
    while time.monotonic() < deadline:
        ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            break
        chunks.append(chunk)
    os.close(read_end)
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    _, status = os.waitpid(pid, 0)
    if os.WIFSIGNALED(status) and os.WTERMSIG(status) not in (signal.SIGKILL, signal.SIGALRM):
        return {"error": f"making an instance killed the process with signal {os.WTERMSIG(status)}"}
    try:
        return json.loads(b"".join(chunks))
    except ValueError:
        return {"error": f"making an instance took over {CHILD_SECONDS} s"}


def describe_class(cls):
    members = class_members(cls)
    return {
        "bases": [b.__name__ for b in cls.__bases__ if not is_plumbing(b)],
        "members": members,
        "instance": probe_in_child(cls, members),
    }


def main():
    name = sys.argv[1]
    # Only the surface goes to stdout: whatever the core itself prints (at import, in a
    # constructor, in a forked child) is sent to stderr instead.
    out = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # a missing system library raises ImportError from dlopen
        print(f"{type(exc).__name__}: {exc}", file=sys.stderr)
        sys.exit(3)
    surface = {"module": name, "classes": {}, "functions": {}, "values": {}}
    for attr in sorted(dir(module)):
        if attr.startswith("__"):
            continue
        obj = getattr(module, attr)
        if isinstance(obj, type) and getattr(obj, "__name__", None) == attr:
            surface["classes"][attr] = describe_class(obj)
        elif isinstance(obj, type):  # an alias of a class defined elsewhere
            surface["values"][attr] = {"type": "class", "of": obj.__qualname__}
        elif callable(obj):
            surface["functions"][attr] = {"overloads": overloads(obj, attr)}
        else:
            surface["values"][attr] = {"type": type(obj).__name__}
    surface["file"] = getattr(module, "__file__", None)
    json.dump(surface, out, indent=1, sort_keys=True)
    out.write("\n")
    out.flush()
    # The surface is out; the core's exit handlers (a crash at exit) cannot change it.
    os._exit(0)


if __name__ == "__main__":
    main()
