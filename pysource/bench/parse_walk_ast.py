"""The baseline for `cargo xtask bench-verify --surface`: what the least analysis of a module
costs in Python, parsing it with `ast` and visiting every node once, no rule applied. (The
analysis itself is the Rust one's; a second implementation kept in step by hand is not.)

usage: python3 parse_walk_ast.py SURFACE.json MODULE.py RUNS
prints {"seconds": [per-run wall time], "failures": 0, "nodes": N}
"""

import ast
import json
import sys
import time


def main():
    _, _declared, module, runs = sys.argv
    seconds, nodes = [], 0
    for _ in range(int(runs)):
        start = time.perf_counter()
        with open(module, "rb") as f:
            tree = ast.parse(f.read(), module)
        nodes = sum(1 for _ in ast.walk(tree))
        seconds.append(time.perf_counter() - start)
    print(json.dumps({"seconds": seconds, "failures": 0, "nodes": nodes}))


if __name__ == "__main__":
    main()
