#!/usr/bin/env bash
# Benchmark: `regen --check` on this repository, as a built (release) process, warm file
# cache: one warm-up run, then the median of 10. Also runs plain `true` the same way, so the
# process-start floor of this machine is visible beside it.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
cargo build --release -q -p xtask
# The binary is wherever cargo puts it (CARGO_TARGET_DIR may point elsewhere); it is told which
# manifest to check rather than finding one.
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json, sys; print(json.load(sys.stdin)["target_directory"])')"
python3 - "$target/release/xtask" "$PWD/api.toml" <<'PY'
import statistics, subprocess, sys, time
xtask, manifest = sys.argv[1], sys.argv[2]
def median_ms(cmd, n=10):
    subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)  # warm-up
    times = []
    for _ in range(n):
        t = time.perf_counter()
        subprocess.run(cmd, check=True, stdout=subprocess.DEVNULL)
        times.append((time.perf_counter() - t) * 1000)
    return statistics.median(times), min(times), max(times)
for name, cmd in [("regen --check", [xtask, "regen", "--check", "--manifest", manifest]), ("true (process floor)", ["true"])]:
    med, lo, hi = median_ms(cmd)
    print(f"{name:22} median {med:6.2f} ms  (min {lo:.2f}, max {hi:.2f}, n=10)")
PY
