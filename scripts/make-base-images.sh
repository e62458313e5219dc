#!/usr/bin/env bash
# Makes the stand-in base images the shipped recipes build FROM, on a Docker engine with no
# registry, from Debian's packages and PyPI wheels only, tagged with the exact names the
# recipes use (api.toml [image.*] base_image:base_tag), so `python3 docker/build.py VARIANT`
# builds docker/Dockerfile* unmodified:
#
#   mooncake-sos/debian:bookworm     Debian bookworm rootfs (mmdebstrap, docker import):
#                                    python3.11, pip, curl, ca-certificates and the native
#                                    core's system libraries
#   <cuda base>:<tag>-nostub         + mooncake-transfer-engine-cuda13==<base_version>, the
#                                    CUDA 13 runtime, numpy, msgpack, and torch 2.11.0 (what
#                                    the real image's sglang runs on); no GPU driver
#   <cuda base>:<tag>                + the driver stub of CUDA devel images (the sglang images
#                                    are devel-based) at /usr/local/cuda/lib64/stubs/libcuda.so,
#                                    defining every driver function the base wheel's core and
#                                    the cores of the releases api.toml lists for its package
#                                    ([[release]], what a pin installs) need, as NVIDIA's stub
#                                    defines them all
#   <rocm base>:<tag>                a "source build": the non-cuda core's native files with
#                                    the CUDA 12 runtime, most *.py files missing
#
# Idempotent: every image carries the label io.mooncake-sos.inputs = sha256 of its inputs
# (this script, the stand-in Dockerfiles, the wheels, the parent image's inputs); an image
# whose label matches is kept. Downloads are cached in $MC_TEST_ENV/base-images (default
# .testenv). Prints one line per image on stderr; nothing on stdout.
# Needs: docker, python3 with pip, gcc, apt-get (installs mmdebstrap when missing).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENV_DIR="${MC_TEST_ENV:-$ROOT/.testenv}"
CACHE="$ENV_DIR/base-images"
WHEELS="$CACHE/wheels"
STANDINS="$ROOT/scripts/base-images"
MIRROR="${MC_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
LABEL=io.mooncake-sos.inputs

# Debian bookworm: its python3 is 3.11, the wheels' cp311.
SUITE=bookworm
DEBIAN_PACKAGES=python3,python3-pip,curl,ca-certificates,libibverbs1,ibverbs-providers,libnuma1,libcurl4
DEBIAN_IMAGE=mooncake-sos/debian:$SUITE
# Fixed, so the same packages give the same rootfs bytes.
export SOURCE_DATE_EPOCH=1700000000
# The non-cuda release whose native files stand in for the ROCm image's source build (the
# v0.5.16 ROCm image has setup(config) and remove(key, force), as 0.3.12 has; docs/upstream.md).
ROCM_CORE=mooncake-transfer-engine-non-cuda==0.3.12.post1
NUMPY=numpy==2.4.6
MSGPACK=msgpack==1.2.4
# torch with what it needs, from the test env's download (scripts/setup-test-env.sh keeps it
# there), else downloaded here: the CUDA image's consumer scenarios then all run.
TORCH=torch==2.11.0
TORCH_WHEELS="${MC_TEST_TORCH_WHEELS:-$ENV_DIR/torch-wheels}"

log() { printf '[base-images] %s\n' "$*" >&2; }
die() { printf '[base-images] error: %s\n' "$*" >&2; exit 1; }

docker info >/dev/null 2>&1 || die "no Docker daemon answers (docker info failed)"

# name:tag of an api.toml image, and the CUDA image's base package and version.
manifest() {
    python3 - "$ROOT/api.toml" "$1" <<'EOF'
import sys, tomllib
image = tomllib.load(open(sys.argv[1], "rb"))["image"][sys.argv[2]]
print(f"{image['base_image']}:{image['base_tag']}", image.get("base_package", ""), image.get("base_version", ""))
EOF
}
# The [[release]] versions of a package (what a pin image installs), one a line.
releases_of() {
    python3 - "$ROOT/api.toml" "$1" <<'EOF'
import sys, tomllib
for release in tomllib.load(open(sys.argv[1], "rb")).get("release", []):
    if release["package"] == sys.argv[2]:
        print(release["version"])
EOF
}
read -r ROCM_IMAGE _ _ < <(manifest rocm)
read -r CUDA_IMAGE CUDA_PACKAGE CUDA_VERSION < <(manifest cuda)
mapfile -t CUDA_RELEASES < <(releases_of "$CUDA_PACKAGE")
[[ -n "$ROCM_IMAGE" && -n "$CUDA_VERSION" ]] || die "api.toml lacks [image.rocm] or [image.cuda] base_version"
CUDA_NOSTUB_IMAGE="$CUDA_IMAGE-nostub"
CUDA_PACKAGES=("$CUDA_PACKAGE==$CUDA_VERSION" "nvidia-cuda-runtime==13.*" "$NUMPY" "$MSGPACK")
ROCM_PACKAGES=("$ROCM_CORE" "nvidia-cuda-runtime-cu12==12.*" "$NUMPY" "$MSGPACK")

sha() { sha256sum | cut -c1-64; }
inputs_of() { docker image inspect -f "{{ index .Config.Labels \"$LABEL\" }}" "$1" 2>/dev/null || true; }
current() { [[ "$(inputs_of "$1")" == "$2" ]]; }

# pip download of one requirement for the images' python (cp311, glibc 2.36), unless a wheel
# of it is cached. `name==1.2.*` matches any cached 1.2.x.
fetch_wheel() {
    local req="$1" name="${1%%==*}" version="${1##*==}"
    if compgen -G "$WHEELS/${name//-/_}-${version}-*.whl" >/dev/null; then
        return
    fi
    log "downloading $req"
    # pip does not widen --platform to older glibc versions: list every manylinux <= 2.36.
    local platforms=() minor
    for minor in $(seq 36 -1 17); do platforms+=(--platform "manylinux_2_${minor}_x86_64"); done
    python3 -m pip download -q --disable-pip-version-check --no-deps --only-binary=:all: \
        --implementation cp --python-version 3.11 --abi cp311 "${platforms[@]}" \
        -d "$WHEELS" "$req" >&2
}

# The cached wheel file of one requirement.
wheel_of() {
    local name="${1%%==*}" version="${1##*==}" found
    found="$(compgen -G "$WHEELS/${name//-/_}-${version}-*.whl" | LC_ALL=C sort | tail -n1)"
    [[ -n "$found" ]] || die "no wheel for $1 in $WHEELS"
    printf '%s\n' "$found"
}

wheels_digest() {
    local req
    for req in "$@"; do sha256sum "$(wheel_of "$req")"; done | sed 's|  .*/|  |' | sha
}

make_debian() {
    local inputs tar
    inputs="$(printf '%s\n' "$SUITE" "$DEBIAN_PACKAGES" "$(declare -f debian_rootfs)" | sha)"
    DEBIAN_INPUTS="$inputs"
    if current "$DEBIAN_IMAGE" "$inputs"; then
        log "$DEBIAN_IMAGE: current"
        return
    fi
    tar="$CACHE/debian-$SUITE-${inputs:0:16}.tar"
    if [[ ! -f "$tar" ]]; then
        rm -f "$CACHE"/debian-*.tar
        debian_rootfs "$tar"
    fi
    log "$DEBIAN_IMAGE: docker import $tar"
    docker import \
        --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
        --change 'CMD ["/bin/bash"]' \
        --change "LABEL $LABEL=$inputs" \
        "$tar" "$DEBIAN_IMAGE" >/dev/null
}

debian_rootfs() {
    local out="$1"
    if ! command -v mmdebstrap >/dev/null; then
        log "installing mmdebstrap"
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq >&2
        apt-get install -y -qq --no-install-recommends mmdebstrap >&2
    fi
    log "mmdebstrap $SUITE ($DEBIAN_PACKAGES) from $MIRROR"
    # The images' pip installs into the system python, as the real images do (no PEP 668 marker).
    mmdebstrap --quiet --variant=minbase --include="$DEBIAN_PACKAGES" \
        --customize-hook='rm -f "$1"/usr/lib/python3*/EXTERNALLY-MANAGED' \
        --format=tar "$SUITE" "$out.tmp" "$MIRROR" >&2
    mv "$out.tmp" "$out"
}

# docker build of a stand-in: build_standin IMAGE INPUTS DOCKERFILE CONTEXT [BUILD_ARG...]
build_standin() {
    local image="$1" inputs="$2" dockerfile="$3" context="$4"
    shift 4
    if current "$image" "$inputs"; then
        log "$image: current"
        return
    fi
    log "$image: building"
    local args=()
    for a in "$@"; do args+=(--build-arg "$a"); done
    docker build -q --network host --force-rm -f "$dockerfile" --label "$LABEL=$inputs" \
        -t "$image" "${args[@]}" "$context" >/dev/null
}

start_index() {
    python3 "$ROOT/scripts/local-index.py" "$WHEELS" > "$WORK/index.url" 2> "$WORK/index.log" &
    INDEX_PID=$!
    local i
    for i in $(seq 100); do
        if grep -q '^local-index: ' "$WORK/index.url"; then
            INDEX_URL="$(sed -n 's/^local-index: //p' "$WORK/index.url")"
            return
        fi
        kill -0 "$INDEX_PID" 2>/dev/null || die "the local index did not start: $(cat "$WORK/index.log")"
        sleep 0.1
    done
    die "the local index did not start in 10 s"
}

mkdir -p "$CACHE" "$WHEELS"
WORK="$(mktemp -d)"
INDEX_PID=""
trap '[[ -z "$INDEX_PID" ]] || kill "$INDEX_PID" 2>/dev/null; rm -rf "$WORK"' EXIT

# The cores whose driver functions the stub defines: the base wheel's and each release's.
STUB_CORES=("${CUDA_PACKAGES[0]}")
for version in "${CUDA_RELEASES[@]}"; do STUB_CORES+=("$CUDA_PACKAGE==$version"); done
for req in "${CUDA_PACKAGES[@]}" "${ROCM_PACKAGES[@]}" "${STUB_CORES[@]}"; do fetch_wheel "$req"; done
if ! compgen -G "$TORCH_WHEELS/torch-${TORCH##*==}-*.whl" >/dev/null; then
    log "downloading $TORCH and what it needs into $TORCH_WHEELS"
    platforms=()
    for minor in $(seq 36 -1 17); do platforms+=(--platform "manylinux_2_${minor}_x86_64"); done
    python3 -m pip download -q --disable-pip-version-check --only-binary=:all: \
        --implementation cp --python-version 3.11 --abi cp311 --abi none --abi abi3 \
        "${platforms[@]}" --platform any --dest "$TORCH_WHEELS" "$TORCH" >&2
fi
# Linked, not copied (2.6 GB): the local index serves them with the rest.
for whl in "$TORCH_WHEELS"/*.whl; do
    [[ -e "$WHEELS/${whl##*/}" ]] || ln "$whl" "$WHEELS/" 2>/dev/null || cp "$whl" "$WHEELS/"
done
make_debian

self="$(cat "$ROOT/scripts/make-base-images.sh" "$ROOT/scripts/cuda-driver-stub.sh" | sha)"
cuda_inputs="$(printf '%s\n' "$DEBIAN_INPUTS" "$self" "$(sha < "$STANDINS/cuda.Dockerfile")" \
    "$(wheels_digest "${CUDA_PACKAGES[@]}")" "$(cd "$TORCH_WHEELS" && ls -1 ./*.whl | sha)" | sha)"
stub_inputs="$(printf '%s\n' "$cuda_inputs" "$(sha < "$STANDINS/cuda-stub.Dockerfile")" \
    "$(wheels_digest "${STUB_CORES[@]}")" | sha)"
rocm_inputs="$(printf '%s\n' "$DEBIAN_INPUTS" "$self" "$(sha < "$STANDINS/rocm.Dockerfile")" \
    "$(wheels_digest "${ROCM_PACKAGES[@]}")" | sha)"

if ! current "$CUDA_NOSTUB_IMAGE" "$cuda_inputs" || ! current "$ROCM_IMAGE" "$rocm_inputs"; then
    start_index
fi
mkdir "$WORK/context"
build_standin "$CUDA_NOSTUB_IMAGE" "$cuda_inputs" "$STANDINS/cuda.Dockerfile" "$WORK/context" \
    "DEBIAN_IMAGE=$DEBIAN_IMAGE" "PIP_INDEX_URL=${INDEX_URL:-}" "PACKAGES=${CUDA_PACKAGES[*]}" \
    "TORCH=$TORCH"
build_standin "$ROCM_IMAGE" "$rocm_inputs" "$STANDINS/rocm.Dockerfile" "$WORK/context" \
    "DEBIAN_IMAGE=$DEBIAN_IMAGE" "PIP_INDEX_URL=${INDEX_URL:-}" "PACKAGES=${ROCM_PACKAGES[*]}"

if ! current "$CUDA_IMAGE" "$stub_inputs"; then
    # The stub defines what the cores' store.so need of the driver.
    mkdir "$WORK/stub"
    cores=()
    for req in "${STUB_CORES[@]}"; do
        dir="$WORK/wheel-${#cores[@]}"
        python3 -m zipfile -e "$(wheel_of "$req")" "$dir"
        cores+=("$dir/mooncake/store.so")
    done
    sh "$ROOT/scripts/cuda-driver-stub.sh" "$WORK/stub" "${cores[@]}"
fi
build_standin "$CUDA_IMAGE" "$stub_inputs" "$STANDINS/cuda-stub.Dockerfile" "$WORK/stub" \
    "CUDA_IMAGE=$CUDA_NOSTUB_IMAGE"
log "ready: $CUDA_IMAGE, $CUDA_NOSTUB_IMAGE, $ROCM_IMAGE"
