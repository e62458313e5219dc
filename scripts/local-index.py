#!/usr/bin/env python3
"""Serve local wheels as a PEP 503 simple index on loopback, for image builds without PyPI.

usage: scripts/local-index.py [--port PORT] WHEEL_OR_DIR...

Lays out <tmp>/simple/<project>/index.html (one link per wheel, with its sha256) over
<tmp>/files/ (links to the given wheels), serves the tree on 127.0.0.1 with http.server,
prints `local-index: http://127.0.0.1:PORT/simple/` on stdout once it listens, logs every
request on stderr, and serves until it is terminated or its parent process ends (then it
removes its tree too). A build reaches it with
`docker build --network host --build-arg MOONCAKE_SOS_PIP_INDEX_URL=<that URL>` (pip
treats loopback as a secure origin, so no --trusted-host is needed).
"""

from __future__ import annotations

import argparse
import functools
import hashlib
import html
import http.server
import re
import os
import signal
import sys
import tempfile
import threading
import time
from pathlib import Path


def project_of(wheel: Path) -> str:
    """The PEP 503 normalized project name of a wheel file."""
    return re.sub(r"[-_.]+", "-", wheel.name.split("-", 1)[0]).lower()


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def wheels_of(args: list[str]) -> list[Path]:
    wheels: list[Path] = []
    for arg in args:
        path = Path(arg).resolve()
        if path.is_dir():
            wheels.extend(sorted(path.glob("*.whl")))
        elif path.suffix == ".whl" and path.is_file():
            wheels.append(path)
        else:
            sys.exit(f"local-index: not a wheel or a directory: {arg}")
    if not wheels:
        sys.exit(f"local-index: no wheel in {' '.join(args)}")
    return wheels


def lay_out(root: Path, wheels: list[Path]) -> None:
    files = root / "files"
    files.mkdir()
    projects: dict[str, list[Path]] = {}
    for wheel in wheels:
        link = files / wheel.name
        if not link.exists():
            link.symlink_to(wheel)
            projects.setdefault(project_of(wheel), []).append(wheel)
    simple = root / "simple"
    simple.mkdir()
    names = sorted(projects)
    page = "".join(f'<a href="{n}/">{n}</a>\n' for n in names)
    (simple / "index.html").write_text(f"<!DOCTYPE html>\n<html><body>\n{page}</body></html>\n")
    for name in names:
        links = "".join(
            f'<a href="../../files/{html.escape(w.name)}#sha256={sha256_of(w)}">'
            f"{html.escape(w.name)}</a>\n"
            for w in sorted(projects[name])
        )
        (simple / name).mkdir()
        (simple / name / "index.html").write_text(
            f"<!DOCTYPE html>\n<html><body>\n{links}</body></html>\n"
        )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=0, help="0: any free port")
    parser.add_argument("wheels", nargs="+", metavar="WHEEL_OR_DIR")
    args = parser.parse_args()
    wheels = wheels_of(args.wheels)
    with tempfile.TemporaryDirectory(prefix="local-index-") as tmp:
        root = Path(tmp)
        lay_out(root, wheels)
        handler = functools.partial(http.server.SimpleHTTPRequestHandler, directory=str(root))
        server = http.server.ThreadingHTTPServer(("127.0.0.1", args.port), handler)
        # SIGTERM ends the serve loop like Ctrl-C, so the temp tree is removed.
        signal.signal(signal.SIGTERM, signal.default_int_handler)
        parent = os.getppid()

        def watch_parent() -> None:
            while os.getppid() == parent:
                time.sleep(0.5)
            server.shutdown()

        threading.Thread(target=watch_parent, daemon=True).start()
        port = server.server_address[1]
        print(f"local-index: http://127.0.0.1:{port}/simple/", flush=True)
        try:
            server.serve_forever()
        except KeyboardInterrupt:
            pass
        finally:
            server.server_close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
