#!/usr/bin/env bash
# The long fuzz run of the manifest parser, the region parser and render + sync planning:
# the cargo-fuzz target fuzz/fuzz_targets/parsers.rs (libFuzzer), seeded with the repository's own api.toml,
# Dockerfiles and build.py. CI runs the proptest suite (codegen/tests/fuzz_props.rs) instead.
# Usage: scripts/fuzz.sh [SECONDS] (default 600). A crash lands in fuzz/artifacts/parsers/;
# replay it with `cd fuzz && RUSTC_BOOTSTRAP=1 cargo fuzz run -O parsers <file>`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
secs="${1:-600}"
if ! command -v cargo-fuzz >/dev/null; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi
corpus=fuzz/corpus/parsers
mkdir -p "$corpus"
# fuzz_one reads a mode byte first (mode % 8): 0 manifest text, 1 edits of api.toml,
# 2 region text, 3 edits of a target, 4/5 render + plan of edited api.toml (LF/CRLF targets),
# 6/7 render + plan of api.toml against an edited target (LF/CRLF); mode / 8 picks the target.
seed() { { printf '%b' "$1"; cat "$2"; } >"$corpus/seed-$3"; }
seed '\x00' api.toml api.toml
seed '\x02' docker/Dockerfile Dockerfile
seed '\x02' docker/Dockerfile.rocm Dockerfile.rocm
seed '\x02' docker/build.py build.py
printf '\x01\x03\x00\x10\x01\x20\x04\x00\x2a\x00\x05' >"$corpus/seed-edits-manifest"
printf '\x03\x06\x00\x04\x00\x01\x00\x00\x07\x00\x03' >"$corpus/seed-edits-dockerfile"
printf '\x04\x04\x00\x10\x00\x01' >"$corpus/seed-plan-manifest"
printf '\x05' >"$corpus/seed-plan-manifest-crlf"
printf '\x0e\x03\x00\x05\x00\x07' >"$corpus/seed-plan-target"
printf '\x17' >"$corpus/seed-plan-target-crlf"
cd fuzz
# cargo-fuzz passes nightly-only flags (-Zsanitizer=address); RUSTC_BOOTSTRAP=1 lets the
# stable toolchain accept them. One job, niced: the machine's cores are shared.
# libFuzzer with -jobs writes its log to fuzz/fuzz-0.log; the final stats are at its end.
RUSTC_BOOTSTRAP=1 nice -n 10 cargo fuzz run -O parsers corpus/parsers -- \
    -jobs=1 -workers=1 -max_total_time="$secs" -timeout=10 -rss_limit_mb=2048 \
    -max_len=16384 -print_final_stats=1
tail -n 30 fuzz-0.log
