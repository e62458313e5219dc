#!/usr/bin/env bash
# Benchmark: `cargo xtask watch` against the real package index (PyPI, through pip) over every
# release of both packages from the oldest api.toml names, cold (an empty wheel cache and an
# empty cores cache: every wheel downloaded, every core read in a throwaway venv) and warm
# (both caches full: no download, no venv), round by round so both see the same machine load.
# The run's own --timings split each run into listing, download and checks; the share that is
# not download is (total - download) / total.
# Usage: scripts/bench-watch.sh [ROUNDS]   (the `cargo xtask` build: dev profile)
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"
cargo build -q -p xtask
# A copy: a rebuild while the benchmark runs does not change what it measures.
bin="$(mktemp -d)/xtask"
cp target/debug/xtask "$bin"
trap 'rm -rf "$(dirname "$bin")"' EXIT
python3 - "$bin" "${1:-3}" <<'PY'
import os, re, shutil, statistics, subprocess, sys, tempfile, time
xtask, rounds = sys.argv[1], int(sys.argv[2])
libs = os.environ["MC_TEST_CUDA13_LIBS"]
pattern = re.compile(r"total ([\d.]+) s, listing ([\d.]+) s, download ([\d.]+) s \((\d+) wheels, (\d+) bytes\), checks ([\d.]+) s")

def run(tmp):
    env = dict(os.environ, CARGO_TARGET_DIR=os.path.join(tmp, "target"))
    cmd = [xtask, "watch", "--manifest", os.path.abspath("api.toml"), "--json", "--timings", "--lib-dir", libs, "--watch-cache", os.path.join(tmp, "watch")]
    t = time.perf_counter()
    p = subprocess.run(cmd, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - t
    if p.returncode not in (0, 1):
        sys.exit(f"watch failed ({p.returncode}): {p.stderr}")
    m = pattern.search(p.stderr)
    total, listing, download, wheels, size, checks = (float(x) for x in m.groups())
    return dict(wall=wall, total=total, listing=listing, download=download, wheels=int(wheels), size=size, checks=checks, out=p.stdout)

print(f"load average before: {os.getloadavg()[0]:.2f}")
cold, warm = [], []
for _ in range(rounds):
    tmp = tempfile.mkdtemp(prefix="bench-watch-")
    try:
        cold.append(run(tmp))
        warm.append(run(tmp))
        assert warm[-1]["out"] == cold[-1]["out"], "warm and cold reports differ"
    finally:
        shutil.rmtree(tmp)
med = lambda runs, k: statistics.median(r[k] for r in runs)
print(f"rounds: {rounds}; wheels downloaded per cold run: {cold[0]['wheels']} ({cold[0]['size'] / 1e6:.0f} MB)")
print("| run | wall (median) | listing | download | checks | not download |")
print("|---|---|---|---|---|---|")
for name, runs in (("cold", cold), ("warm", warm)):
    w, l, d, c = med(runs, "wall"), med(runs, "listing"), med(runs, "download"), med(runs, "checks")
    share = statistics.median((r["total"] - r["download"]) / r["total"] for r in runs)
    print(f"| {name} | {w:.1f} s | {l:.1f} s | {d:.1f} s | {c:.1f} s | {share * 100:.0f}% |")
print(f"cold / warm: {med(cold, 'wall') / med(warm, 'wall'):.1f}x")
PY
