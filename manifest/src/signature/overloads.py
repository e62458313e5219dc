# The one reading of pybind11 docstring overloads (mooncake_sos_manifest::signature), rendered
# into the shim and inserted into the core reader: the parameter list after `self` of each
# `name(...) -> ...` line, split at top-level commas the way the Rust kernel splits it
# (brackets, `<...>` and quotes nest), and an object default's address dropped
# (`<X object at 0x7f...>` becomes `<X object>`, new on every run otherwise).
_ADDRESS = re.compile(r"<([^<>]*?) at 0x[0-9a-fA-F]+>")


def _split_params(text):
    """A parameter list split at the commas outside brackets, `<...>` and quotes."""
    parts, depth, quote, start = [], 0, None, 0
    for i, ch in enumerate(text):
        if quote:
            quote = None if ch == quote else quote
        elif ch in "'\"":
            quote = ch
        elif ch in "([{<":
            depth += 1
        elif ch in ")]}>":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(text[start:i].strip())
            start = i + 1
    parts.append(text[start:].strip())
    return [p for p in parts if p]


def _overloads(obj, name):
    """The parameter lists after `self` of each signature line in a pybind11 docstring."""
    found = []
    doc = getattr(obj, "__doc__", None)
    for line in (doc if isinstance(doc, str) else "").splitlines():
        m = re.match(r"\s*(?:\d+\.\s*)?" + re.escape(name) + r"\((.*)\)\s*->", _ADDRESS.sub(r"<\1>", line))
        if m:
            params = _split_params(m.group(1))
            if params and params[0].split(":")[0].strip() == "self":
                params = params[1:]
            found.append(", ".join(params))
    return found
