#!/usr/bin/env bash
# The numbers of BENCHMARKS.md's docker section, in one run: making the stand-in base images
# cold (a fresh cache directory and none of the images: every download and build) and cached;
# each recipe's build by docker/build.py cold (--no-cache) and cached; the 64 MiB round trip
# between containers on the project's bridge network beside the same on the host's loopback.
# Removes the stand-in images first (they are rebuilt), so run it when no docker test runs.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"

now() { date +%s.%N; }
took() { python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.1f} s')" "$1" "$(now)"; }
row() { printf '| %s | %s |\n' "$1" "$2"; }

work="$(mktemp -d)"
pids=()
trap 'for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; rm -rf "$work"
      docker images --format "{{.Repository}}:{{.Tag}}" | grep -F mooncake-sos-bench | xargs -r docker rmi -f >/dev/null' EXIT

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg); $(nproc) cores"
echo "| what | time |"
echo "|---|---|"

read -r -a standins < <(python3 - <<'EOF'
import tomllib
images = tomllib.load(open("api.toml", "rb"))["image"]
cuda = f"{images['cuda']['base_image']}:{images['cuda']['base_tag']}"
rocm = f"{images['rocm']['base_image']}:{images['rocm']['base_tag']}"
print(cuda, cuda + "-nostub", rocm, "mooncake-sos/debian:bookworm")
EOF
)
docker rmi -f "${standins[@]}" >/dev/null 2>&1 || true
t="$(now)"
MC_TEST_ENV="$work/cold-env" bash scripts/make-base-images.sh 2>/dev/null
row "stand-in base images, cold (downloads, mmdebstrap, 4 images)" "$(took "$t")"
t="$(now)"
MC_TEST_ENV="$work/cold-env" bash scripts/make-base-images.sh 2>/dev/null
row "stand-in base images, cached (all current)" "$(took "$t")"

: > "$work/index"
python3 scripts/local-index.py "$MC_TEST_WHEELS" > "$work/index" 2>/dev/null &
pids+=($!)
until grep -q '^local-index: ' "$work/index"; do sleep 0.2; done
index="$(sed -n 's/^local-index: //p' "$work/index")"

build() { # VARIANT COLD|CACHED BUILD_ARGS...
    local variant="$1" mode="$2" t
    shift 2
    local extra=(--network host --force-rm)
    [[ $mode == cold ]] && extra+=(--no-cache)
    t="$(now)"
    python3 docker/build.py "$variant" --tag "mooncake-sos-bench/$variant:bench" -- \
        "${extra[@]}" "$@" >"$work/build.log" 2>&1 || { cat "$work/build.log"; exit 1; }
    row "docker/build.py $variant, $mode" "$(took "$t")"
}
# The CUDA recipe pins the cuda13 release: its wheel from a local index of the release wheels.
python3 scripts/local-index.py "$MC_TEST_CORE_WHEELS" > "$work/core-index" 2>/dev/null &
pids+=($!)
until grep -q '^local-index: ' "$work/core-index"; do sleep 0.2; done
cuda_args=(--build-arg "MOONCAKE_SOS_PIP_INDEX_URL=$(sed -n 's/^local-index: //p' "$work/core-index")")
build cu130 cold "${cuda_args[@]}"
build cu130 cached "${cuda_args[@]}"
build rocm720-mi35x cold --build-arg "MOONCAKE_SOS_PIP_INDEX_URL=$index"
build rocm720-mi35x cached --build-arg "MOONCAKE_SOS_PIP_INDEX_URL=$index"

echo
echo "64 MiB round trip (MooncakeBundleTransfer put / get, tcp, MC_STORE_MEMCPY=0; medians):"
cargo test -q -p mooncake-sos-tests --test docker_rocm -- --ignored --nocapture bench_ 2>/dev/null \
    | grep -E '^\||^bridge'
docker images --format '{{.Repository}}:{{.Tag}}' | grep -F mooncake-sos-test | xargs -r docker rmi -f >/dev/null
echo "load average at end: $(cut -d' ' -f1-3 /proc/loadavg)"
