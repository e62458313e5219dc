"""Prints the surface of a native module (a pybind11 core such as mooncake.store) as JSON,
after a first line holding the proof the caller wrote on stdin.

Usage: python3 -I introspect.py MODULE [MODULES_FILE]

MODULES_FILE holds two lines, EXTENSIONS and PYTHON_MODULES, each the comma-separated dotted
names of the wheel's other modules (a file: thousands of names overflow an argument):
each extension is read like MODULE in a forked child (one that does not import, such as a
torch-specific build without torch, is recorded with its error); each pure-Python module's
public names are read from its source with `ast`, never imported.

Run by `mooncake_sos_native` in a throwaway venv; standard library only. Every class
(its methods with their pybind11 docstring overloads, properties and values), every function
and every other value of the module. A class is also made with no arguments, in a forked
child so a constructor that crashes or hangs costs only that class's instance facts: which
members an instance can read and write, and whether it takes new attributes.
The module is imported and read in a forked child; this process only relays the child's
result (see main). Exit 3 when the module cannot be imported (the reason on stderr), 1 when
the reading gave no result, 0 otherwise.
"""

import importlib
import json
import os
import re
import select
import signal
import sys
import time

# Seconds one class's constructor and probes may take in the child.
CHILD_SECONDS = 10
# Seconds the whole reading may take (the caller's deadline is the one that counts).
READ_SECONDS = 3600
# Most a child's result may hold; a real core's surface is under 100 KB.
MAX_RESULT = 8 << 20
# The caller's per-run proof, read from stdin once the reading child is gone.
PROOF_BYTES = 256
PR_SET_DUMPABLE = 4
# Class attributes that say nothing about the core: Python's own bookkeeping.
SKIP = {"__doc__", "__module__", "__dict__", "__weakref__", "__annotations__", "__qualname__"}
PROBE_NAME = "_mooncake_sos_probe"


# @overloads: the shared reading of pybind11 docstrings (_ADDRESS, _overloads) goes here.


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
        return {"kind": kind, "overloads": _overloads(raw.__func__, name)}
    if isinstance(raw, type):
        return {"kind": "class"}
    if callable(raw):
        return {"kind": "method", "overloads": _overloads(raw, name)}
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
        return {"error": _ADDRESS.sub(r"<\1>", f"{type(exc).__name__}: {exc}")}
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
    """`probe` in a forked child; a crash or hang is reported, not shared."""
    outcome = in_child(lambda: probe(cls, members), CHILD_SECONDS)
    if "raised" in outcome:
        return {"error": f"probe failed: {outcome['raised']}"}
    why = why_no_result(outcome, "making an instance", CHILD_SECONDS)
    return outcome["ok"] if why is None else {"error": why}


def describe_class(cls):
    members = class_members(cls)
    return {
        "bases": [b.__name__ for b in cls.__bases__ if not is_plumbing(b)],
        "members": members,
        "instance": probe_in_child(cls, members),
    }


def read_module(module):
    surface = {"classes": {}, "functions": {}, "values": {}}
    for attr in sorted(dir(module)):
        if attr.startswith("__"):
            continue
        obj = getattr(module, attr)
        if isinstance(obj, type) and getattr(obj, "__name__", None) == attr:
            surface["classes"][attr] = describe_class(obj)
        elif isinstance(obj, type):  # an alias of a class defined elsewhere
            surface["values"][attr] = {"type": "class", "of": obj.__qualname__}
        elif callable(obj):
            surface["functions"][attr] = {"overloads": _overloads(obj, attr)}
        else:
            surface["values"][attr] = {"type": type(obj).__name__}
    return surface


def in_child(work, seconds, close=()):
    """`work()` in a forked child under a deadline, as one of {"ok": its JSON value},
    {"raised": text}, {"killed": signal}, {"late": None}, {"large": None} (over MAX_RESULT)
    or {"silent": None} (no result: nothing, or not what the child writes; the work's code
    may write to the pipe too). The child closes the descriptors `close` before the work."""
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read_end)
        for fd in close:
            os.close(fd)
        signal.alarm(seconds)
        try:
            data = json.dumps({"ok": work()}).encode()
        except BaseException as exc:
            data = json.dumps({"raised": f"{type(exc).__name__}: {exc}"}).encode()
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view):]
        os._exit(0)  # no exit handlers, no destructors of what the parent made
    os.close(write_end)
    chunks, size, deadline, late = [], 0, time.monotonic() + seconds + 5, True
    while time.monotonic() < deadline and size <= MAX_RESULT:
        ready, _, _ = select.select([read_end], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(read_end, 1 << 16)
        if not chunk:
            late = False
            break
        chunks.append(chunk)
        size += len(chunk)
    large = size > MAX_RESULT
    late = late and not large
    os.close(read_end)
    # At end of output the child is exiting (or carries on with the pipe closed, until the
    # deadline): only a child still running at the deadline is stopped, and counted late.
    done, status = 0, 0
    while not late and not large and not done:
        done, status = os.waitpid(pid, os.WNOHANG)
        late = not done and time.monotonic() >= deadline
        if not done and not late:
            time.sleep(0.01)
    if not done:
        try:
            os.kill(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        _, status = os.waitpid(pid, 0)
    if large:
        return {"large": None}
    try:
        outcome = json.loads(b"".join(chunks))
    except ValueError:
        outcome = None
    if isinstance(outcome, dict) and (
        list(outcome) == ["ok"] or (list(outcome) == ["raised"] and isinstance(outcome["raised"], str))
    ):
        return outcome
    if late or (os.WIFSIGNALED(status) and os.WTERMSIG(status) == signal.SIGALRM):
        return {"late": None}
    if os.WIFSIGNALED(status):
        return {"killed": os.WTERMSIG(status)}
    return {"silent": None}


def why_no_result(outcome, doing, seconds):
    """Why `in_child`'s work, `doing` (e.g. "reading it"), gave no result; None if it did.
    An exception is the caller's to word."""
    if "ok" in outcome:
        return None
    if "killed" in outcome:
        return f"{doing} killed the process with signal {outcome['killed']}"
    if "late" in outcome:
        return f"{doing} took over {seconds} s"
    if "large" in outcome:
        return f"{doing} gave a result over {MAX_RESULT >> 20} MiB"
    return f"{doing} gave no result"


def read_in_child(name, seconds):
    """The surface of extension module `name`, read in a forked child."""
    outcome = in_child(lambda: read_module(importlib.import_module(name)), seconds)
    if "raised" in outcome:
        return {"unread": clean(outcome["raised"])}
    why = why_no_result(outcome, "reading it", seconds)
    return outcome["ok"] if why is None else {"unread": why}


def clean(text):
    """An error without the throwaway venv's path, so records do not change between runs."""
    return _ADDRESS.sub(r"<\1>", text.replace(sys.prefix, "<venv>"))


def public_names(path):
    """The names a module binds at top level (also under `if` / `try`) that `from m import X`
    can take: `__all__` when it is a literal list, else every name not starting with `_`."""
    import ast

    with open(path, "rb") as f:
        tree = ast.parse(f.read(), path)
    names = set()

    def bind(target):
        for node in ast.walk(target):
            if isinstance(node, ast.Name):
                names.add(node.id)

    def scan(body):
        for node in body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                names.add(node.name)
            elif isinstance(node, ast.Assign):
                for t in node.targets:
                    bind(t)
            elif isinstance(node, (ast.AnnAssign, ast.AugAssign)):
                bind(node.target)
            elif isinstance(node, (ast.Import, ast.ImportFrom)):
                for a in node.names:
                    names.add((a.asname or a.name).split(".")[0])
            elif isinstance(node, ast.If):
                scan(node.body)
                scan(node.orelse)
            elif isinstance(node, ast.Try):
                scan(node.body)
                scan(node.orelse)
                scan(node.finalbody)
                for h in node.handlers:
                    scan(h.body)
            elif isinstance(node, ast.With):
                scan(node.body)
    scan(tree.body)
    for node in tree.body:
        if isinstance(node, ast.Assign) and any(
            isinstance(t, ast.Name) and t.id == "__all__" for t in node.targets
        ):
            try:
                listed = ast.literal_eval(node.value)
            except ValueError:
                break
            return sorted(set(listed))
    return sorted(n for n in names if not n.startswith("_"))


def python_module(package_dir, top, name):
    rel = name.split(".")[1:] if name != top else []
    base = os.path.join(package_dir, *rel)
    for path in (base + ".py", os.path.join(base, "__init__.py")):
        if os.path.isfile(path):
            try:
                return public_names(path)
            except (SyntaxError, ValueError, OSError) as exc:
                return {"unread": clean(f"{type(exc).__name__}: {exc}")}
    return {"unread": "no source file"}


def read_package(name, extensions, python):
    """In the reading child: the module's surface, its package's other extensions (each in a
    child of its own) and pure-Python modules; or why the module does not import."""
    try:
        module = importlib.import_module(name)
    except BaseException as exc:  # a missing system library raises ImportError from dlopen
        return {"import_error": f"{type(exc).__name__}: {exc}"}
    surface = {"module": name, **read_module(module)}
    surface["file"] = getattr(module, "__file__", None)
    surface["extensions"] = {e: read_in_child(e, CHILD_SECONDS * 6) for e in extensions}
    top = name.split(".")[0]
    package_dir = os.path.dirname(importlib.import_module(top).__file__)
    surface["python"] = {p: python_module(package_dir, top, p) for p in python}
    return surface


def undumpable():
    """This process's /proc/PID/fd and memory closed to its children (same user, no
    capabilities in the sandbox), so the wheel's code cannot reach the output or the proof."""
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_DUMPABLE, 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_DUMPABLE, 0)")


def main():
    name = sys.argv[1]
    lines = ["", ""]
    if len(sys.argv) > 2:
        with open(sys.argv[2], encoding="utf-8") as f:
            lines = (f.read().split("\n") + lines)[:2]
    extensions = [e for e in lines[0].split(",") if e]
    python = [p for p in lines[1].split(",") if p]
    # This process never runs the wheel's code: a forked child imports and reads it, and its
    # one way back is its pipe. The output (a duplicate of stdout; fd 1 becomes stderr for
    # whatever the core prints) and stdin, where the proof arrives once the child is gone,
    # are closed in the child first thing.
    undumpable()
    out = os.dup(1)
    os.dup2(2, 1)
    outcome = in_child(lambda: read_package(name, extensions, python), READ_SECONDS, close=(0, out))
    if "raised" in outcome:
        print(f"reading the module failed: {clean(outcome['raised'])}", file=sys.stderr)
        sys.exit(1)
    why = why_no_result(outcome, "reading the module", READ_SECONDS)
    if why is not None:
        print(why, file=sys.stderr)
        sys.exit(1)
    surface = outcome["ok"]
    if isinstance(surface, dict) and isinstance(surface.get("import_error"), str):
        print(surface["import_error"], file=sys.stderr)
        sys.exit(3)
    # The caller checks the first line, then the surface's shape and size.
    proof = sys.stdin.buffer.read(PROOF_BYTES).strip()
    data = proof + b"\n" + json.dumps(surface, indent=1, sort_keys=True).encode() + b"\n"
    view = memoryview(data)
    while view:
        view = view[os.write(out, view):]
    # The surface is out; nothing of the core runs here, but no exit handlers either.
    os._exit(0)


if __name__ == "__main__":
    main()
