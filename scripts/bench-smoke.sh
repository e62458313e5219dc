#!/usr/bin/env bash
# Benchmark: what `python3 -m mooncake_sos --smoke` adds to an image's check step. One run,
# side by side and interleaved: the check step without the smoke (the import check line the
# Dockerfiles run, then the shim's full check, `python3 -m mooncake_sos`) and the same step
# with the smoke after it; one warm-up round, then the median of N rounds (default 11).
# Runs in the test venv (the 0.3.12.post1 wheel, its own mooncake_master).
# Usage: scripts/bench-smoke.sh [ROUNDS]
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh 2>/dev/null)"
"$MC_TEST_PYTHON" - "${1:-11}" "$PWD/generated/python" <<'PY'
import os, statistics, subprocess, sys, time
rounds, shim_dir = int(sys.argv[1]), sys.argv[2]
env = dict(os.environ, PYTHONPATH=shim_dir)
py = sys.executable
import_check = [py, "-c", "import mooncake.store; from mooncake.structured_object_store import "
                "FieldSchema, MooncakeBundleTransfer, export_ref, import_ref; "
                "MooncakeBundleTransfer.put, MooncakeBundleTransfer.get, "
                "MooncakeBundleTransfer.release_result, MooncakeBundleTransfer.cleanup_dataproto"]
full_check = [py, "-m", "mooncake_sos"]
smoke = [py, "-m", "mooncake_sos", "--smoke"]

def timed(cmd):
    t = time.perf_counter()
    subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - t

without, with_smoke, smoke_alone = [], [], []
for i in range(rounds + 1):
    a = timed(import_check) + timed(full_check)
    b_check = timed(import_check) + timed(full_check)
    s = timed(smoke)
    if i:  # round 0 warms the file cache
        without.append(a)
        with_smoke.append(b_check + s)
        smoke_alone.append(s)
med = statistics.median
print(f"rounds: {rounds}; python {sys.version.split()[0]}; {os.cpu_count()} cpus; load {os.getloadavg()[0]:.2f}")
for name, xs in [("check step (import check + full check)", without),
                 ("check step + --smoke", with_smoke), ("--smoke alone", smoke_alone)]:
    print(f"{name:40} median {med(xs):6.3f} s  (min {min(xs):.3f}, max {max(xs):.3f})")
print(f"the smoke adds {med(with_smoke) - med(without):.3f} s; its share of the step with it: "
      f"{med(smoke_alone) / med(with_smoke):.0%}")
PY
