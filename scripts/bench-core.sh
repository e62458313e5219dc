#!/usr/bin/env bash
# Benchmark: reading a wheel's native core with `xtask core`, cold (throwaway venv, offline
# install, import + introspection; --no-cache) and cached (the wheel's sha256 hashed, the
# surface read from target/mooncake-sos/cores), interleaved round by round so both see the
# same machine load. Then, for one wheel, the cold read's phases timed one by one, beside a
# venv made with pip (what `python3 -m venv` does by default) for comparison.
# Usage: scripts/bench-core.sh [ROUNDS]   (the `cargo xtask` build: dev profile)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"
cargo build -q -p xtask
python3 - "$PWD/target/debug/xtask" "${1:-5}" "$PWD/native/src/introspect.py" "$PWD/manifest/src/signature/overloads.py" <<'PY'
import glob, os, shutil, statistics, subprocess, sys, tempfile, time
xtask, rounds, script = sys.argv[1], int(sys.argv[2]), sys.argv[3]
# The reader as the crate runs it: the shared overload reading inserted at its marker.
with open(script) as f, open(sys.argv[4]) as o:
    text = f.read()
    mark = next(l for l in text.splitlines(True) if l.startswith("# @overloads:"))
    text = text.replace(mark, o.read(), 1)
script = os.path.join(tempfile.mkdtemp(), "introspect.py")
with open(script, "w") as f:
    f.write(text)
libs = os.environ["MC_TEST_CUDA13_LIBS"]
wheels = sorted(glob.glob(os.environ["MC_TEST_WHEELS"] + "/mooncake_*.whl"))
wheels += sorted(glob.glob(os.environ["MC_TEST_CORE_WHEELS"] + "/mooncake_*0.3.11.post1*.whl"))

def timed(cmd, **kw):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL, **kw)
    return time.perf_counter() - t

print(f"load average before: {os.getloadavg()[0]:.2f}")
print("| wheel | MB | cold (median) | cached (median) | ratio |")
print("|---|---|---|---|---|")
for whl in wheels:
    cmd = [xtask, "core", "--lib-dir", libs, whl]
    timed(cmd)  # fills the cache
    cold, warm = [], []
    for _ in range(rounds):
        cold.append(timed(cmd + ["--no-cache"]))
        warm.append(timed(cmd))
    c, w = statistics.median(cold), statistics.median(warm)
    name = os.path.basename(whl).split("-cp3")[0]
    mb = os.path.getsize(whl) / 1e6
    print(f"| {name} | {mb:.1f} | {c:.2f} s | {w * 1000:.0f} ms | {c / w:.0f}x |")

whl = wheels[0]
phases = {"venv --without-pip": [], "venv with pip": [], "pip install --no-deps": [], "import + introspect": []}
for _ in range(rounds):
    with tempfile.TemporaryDirectory() as tmp:
        v, vp = tmp + "/v", tmp + "/vp"
        phases["venv --without-pip"].append(timed([sys.executable, "-m", "venv", "--without-pip", v]))
        phases["venv with pip"].append(timed([sys.executable, "-m", "venv", vp]))
        phases["pip install --no-deps"].append(timed([sys.executable, "-m", "pip", "--isolated", "--python",
            v + "/bin/python", "install", "-q", "--no-deps", "--no-index", "--no-compile", whl]))
        phases["import + introspect"].append(timed([v + "/bin/python", "-I", script, "mooncake.store"], cwd=tmp))
print(f"\nphases of a cold read of {os.path.basename(whl)} (median of {rounds}):")
for k, v in phases.items():
    print(f"  {k:24} {statistics.median(v):.2f} s")
print(f"load average after: {os.getloadavg()[0]:.2f}")
PY
