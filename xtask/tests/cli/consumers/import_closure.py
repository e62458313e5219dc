"""The oracle for the sglang test, in Python's own `ast`: every .py under ROOT (hidden
directories and site-packages skipped) that imports mooncake, directly or through modules
under ROOT that do (with --direct: only those importing it themselves). Prints their paths,
one a line, sorted."""
import ast
import os
import sys

root = sys.argv[1]
files = {}
for d, dirs, names in os.walk(root):
    dirs[:] = [x for x in dirs if not x.startswith(".") and x != "site-packages"]
    for n in names:
        if n.endswith(".py"):
            files[os.path.join(d, n)] = None


def module_of(path):
    # ROOT is where Python would start: every directory below it is a package (sglang's
    # `srt` is a namespace package, without __init__.py).
    return os.path.splitext(os.path.relpath(path, root))[0].replace(os.sep, ".")


by_module = {}
imports = {}
for path in files:
    mod = module_of(path)
    by_module[mod[: -len(".__init__")] if mod.endswith(".__init__") else mod] = path
    out = set()
    for node in ast.walk(ast.parse(open(path, encoding="utf-8-sig").read())):
        if isinstance(node, ast.Import):
            out.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                pkg = mod.split(".")[: -node.level]
                base = ".".join(pkg + ([node.module] if node.module else []))
            out.add(base)
            out.update(f"{base}.{a.name}" for a in node.names)
    imports[path] = out

reach = {p for p, ms in imports.items() if any(m == "mooncake" or m.startswith("mooncake.") for m in ms)}
grew = "--direct" not in sys.argv
while grew:
    grew = False
    for p, ms in imports.items():
        if p not in reach and any(by_module.get(m) in reach for m in ms):
            reach.add(p)
            grew = True
print("\n".join(sorted(reach)))
