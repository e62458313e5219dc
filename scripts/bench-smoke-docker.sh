#!/usr/bin/env bash
# BENCHMARKS.md's "smoke in the check step": builds each shipped recipe cold (docker/build.py
# --no-cache) N times (default 3) and times, from docker's own output as it streams, the whole
# build, the check step (its `Step` line to the next one's) and the smoke inside it (from the
# check's `smoke:` line to the shim's `smoke: N ok, ...` summary); prints each run and the
# medians, with the smoke's share of the check step. Needs the stand-in base images
# (scripts/make-base-images.sh) and the test environment (scripts/setup-test-env.sh).
# Tags its images mooncake-sos-bench/...; removes them at the end.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"
runs="${1:-3}"
work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"
      docker images --format "{{.Repository}}:{{.Tag}}" | grep -F mooncake-sos-bench | xargs -r docker rmi -f >/dev/null' EXIT

# One index for both: the pin's cuda13 wheels and the fill's non-cuda ones.
python3 scripts/local-index.py "$MC_TEST_CORE_WHEELS" "$MC_TEST_WHEELS" > "$work/index" 2>/dev/null &
pids+=($!)
until grep -q '^local-index: ' "$work/index"; do sleep 0.2; done
index="$(sed -n 's/^local-index: //p' "$work/index")"

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores; $runs runs per recipe"
python3 - "$runs" "$index" <<'PY'
import statistics, subprocess, sys, time
runs, index = int(sys.argv[1]), sys.argv[2]
rows = {}
for variant in ["cu130", "rocm720-mi35x"]:
    for i in range(runs):
        cmd = ["python3", "docker/build.py", variant, "--tag", f"mooncake-sos-bench/{variant}:smoke", "--",
               "--network", "host", "--no-cache", "--force-rm",
               "--build-arg", f"MOONCAKE_SOS_PIP_INDEX_URL={index}"]
        start = time.monotonic()
        marks, step, lines = {}, None, []
        with subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True) as p:
            for line in p.stdout:
                now = time.monotonic()
                lines.append(line)
                if line.startswith("Step "):
                    if step == "check":
                        marks["check_end"] = now
                    step = "check" if "say() {" in line else None
                    if step:
                        marks["check_start"] = now
                elif "check: smoke: the consumer's scenarios" in line:
                    marks["smoke_start"] = now
                elif line.startswith("smoke: ") and " ok, " in line:
                    marks["smoke_end"] = now
        total = time.monotonic() - start
        if p.returncode != 0 or len(marks) != 4:
            sys.exit("".join(lines[-40:]) + f"\nbuild {variant} failed or lacked a mark: {sorted(marks)}")
        check = marks["check_end"] - marks["check_start"]
        smoke = marks["smoke_end"] - marks["smoke_start"]
        rows.setdefault(variant, []).append((total, check, smoke))
        print(f"{variant} run {i + 1}: build {total:.1f} s, check step {check:.1f} s, smoke {smoke:.1f} s", flush=True)
print()
print("| recipe | build, cold | check step | smoke | smoke / check step |")
print("|---|---|---|---|---|")
for variant, r in rows.items():
    total, check, smoke = (statistics.median(x[k] for x in r) for k in range(3))
    print(f"| {variant} | {total:.1f} s | {check:.1f} s | {smoke:.1f} s | {100 * smoke / check:.0f} % |")
PY
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
