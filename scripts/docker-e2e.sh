#!/usr/bin/env bash
# Real image builds and containers on the local Docker engine (docs/docker.md): makes the
# stand-in base images (scripts/make-base-images.sh, cached), then runs the docker test
# binaries (tests/docker_*.rs): both shipped recipes built by docker/build.py, their failures
# read from docker's own output, the built image's round trip across containers and a master
# stopped mid-run. Removes every container, network and image the run made, and ends with
# `docker-e2e: N passed, M failed`. Extra arguments go to the test binaries (a name filter):
# one that matches no test fails at once, before docker is asked or an image made, and a run
# in which no test ran fails. Fails with a message when no Docker daemon answers. Called by
# scripts/test.sh.
set -uo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

passed=0
failed=0
finish() {
    echo "docker-e2e: $passed passed, $failed failed"
    [[ $failed -eq 0 ]]
    exit
}

docker_tests=(-p mooncake-sos-tests --test docker_cuda --test docker_rocm --test docker_native
    --test docker_layers --test docker_pin)
if [[ $# -gt 0 ]]; then
    if ! listed="$(cargo test "${docker_tests[@]}" -- --list "$@" 2>/dev/null)"; then
        echo "docker-e2e: the docker test binaries did not build (cargo test ${docker_tests[*]} --no-run says why)" >&2
        failed=1
        finish
    fi
    if ! grep -q ': test$' <<<"$listed"; then
        echo "docker-e2e: the filter \`$*\` matches no test" >&2
        failed=1
        finish
    fi
fi

if ! info="$(docker info --format '{{.ServerVersion}}' 2>&1)"; then
    echo "docker-e2e: no Docker daemon answers (docker info: $(tail -n1 <<<"$info")); these tests build real images and need one" >&2
    failed=1
    finish
fi
echo "docker-e2e: Docker Engine $info"

# Dangling images that are not ours, so the clean-up leaves them alone.
dangling_before="$(docker images --filter dangling=true --quiet --no-trunc | sort)"
cleanup() {
    docker ps -a --filter name=mooncake-sos-test- --quiet | xargs -r docker rm -f >/dev/null
    docker network ls --filter name=mooncake-sos-test- --quiet | xargs -r docker network rm >/dev/null
    docker images --format '{{.Repository}}:{{.Tag}}' | grep -F 'mooncake-sos-test' \
        | xargs -r docker rmi -f >/dev/null
    # Failed builds leave their last good step as a dangling image.
    comm -13 <(printf '%s\n' "$dangling_before") \
        <(docker images --filter dangling=true --quiet --no-trunc | sort) \
        | xargs -r docker rmi -f >/dev/null 2>&1 || true
}
trap cleanup EXIT

test_env="$(bash scripts/setup-test-env.sh)" || { failed=1; finish; }
eval "$test_env"
start=$SECONDS
if ! bash scripts/make-base-images.sh; then
    echo "docker-e2e: the stand-in base images could not be made" >&2
    failed=1
    finish
fi
echo "docker-e2e: base images ready in $((SECONDS - start)) s"

log="$(mktemp)"
trap 'cleanup; rm -f "$log"' EXIT
# Two builds at a time: the engine does the work, one build per core.
# --no-fail-fast: a failing binary does not hide the results of the ones after it.
cargo test --no-fail-fast "${docker_tests[@]}" -- --test-threads 2 "$@" 2>&1 | tee "$log"
status=${PIPESTATUS[0]}
read -r passed failed < <(awk '/^test result:/ {
        for (i = 1; i <= NF; i++) { if ($(i+1) ~ /^passed/) p += $i; if ($(i+1) ~ /^failed/) f += $i } }
    END { print p + 0, f + 0 }' "$log")
if grep -q '^error: could not compile' "$log"; then
    echo "docker-e2e: the docker test binaries did not build (the compiler's errors are above)" >&2
    failed=$((failed + 1))
fi
# A test binary that died (a signal, an abort) counts as one failure more each.
failed=$((failed + $(grep -c "process didn't exit successfully.*(signal" "$log")))
if [[ $status -ne 0 && $failed -eq 0 ]]; then
    failed=1
fi
if [[ $passed -eq 0 && $failed -eq 0 ]]; then
    echo "docker-e2e: no test ran" >&2
    failed=1
fi
finish
