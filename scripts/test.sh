#!/usr/bin/env bash
# The README's test command: installs what the tests need on a fresh machine (Debian
# libraries, the Python venv with the real PyPI wheels, hadolint), then runs every test.
# The tests start their own mooncake_master processes on free loopback ports.
# Extra arguments go to `cargo test` (e.g. `scripts/test.sh -p xtask`).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
eval "$(bash scripts/setup-test-env.sh)"
# Loopback only: the transfer engine must not advertise the machine's external address.
export MC_TCP_BIND_ADDRESS=127.0.0.1
if [[ $# -eq 0 ]]; then
    set -- --workspace --no-fail-fast
fi
log="$(mktemp)"
trap 'rm -f "$log"' EXIT
status=0
cargo test "$@" 2>&1 | tee "$log" || status=$?
# cargo's last line is often a crate's empty doc-test run: close with the totals instead.
awk '/^test result:/ { for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
     END { printf "tests: %d passed, %d failed\n", p, f }' "$log"
exit "$status"
