#!/usr/bin/env bash
# The README's test command: installs what the tests need on a fresh machine (Debian
# libraries, the Python venv with the real PyPI wheels, hadolint), then runs every test.
# The tests start their own mooncake_master processes on free loopback ports. Then the real
# image builds on the Docker engine (scripts/docker-e2e.sh), whose result counts too.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p xtask`) and skip docker-e2e.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"
# Loopback only: the transfer engine must not advertise the machine's external address.
export MC_TCP_BIND_ADDRESS=127.0.0.1
docker_e2e=no
if [[ $# -eq 0 ]]; then
    set -- --workspace --no-fail-fast
    docker_e2e=yes
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test "$@" 2>&1 | tee "$log" || status=$?
# cargo's last line is often a crate's empty doc-test run: close with the totals instead,
# counting test binaries that died (a signal, an abort) apart from failed tests.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     /^error: test failed/ { b++ }
     /process didn.t exit successfully/ { sub(/^ */, ""); dead = dead "\n  " $0 }
     END { printf "tests: %d passed, %d failed; %d test binaries failed%s\n", p, f, b, dead }' "$log"
if [[ $docker_e2e == yes ]]; then
    scripts/docker-e2e.sh || status=1
else
    echo "docker-e2e: not run (arguments given; scripts/docker-e2e.sh runs it)"
fi
exit "$status"
