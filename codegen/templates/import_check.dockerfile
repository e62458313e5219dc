# The shim's directory in the image, whether the check runs the consumer's scenarios (1) and
# what it does without a GPU driver (below).
ARG {{ c.arg_prefix }}_SHIM_DIR=/opt/{{ c.name }} \
    {{ c.arg_prefix }}_SMOKE=1 \
    {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=0 \
    {{ c.arg_prefix }}_DRIVER_STUB=/usr/local/cuda/lib64/stubs/libcuda.so
COPY {{ c.shim_copy_from }} {{ c.var("SHIM_DIR") }}/{{ c.shim_file }}
# Build-time check: load the native core ({{ c.native_module }}){% if c.native_modules.len() > 1 %} and the other extension
# modules api.toml or the image's other users need ({{ c.native_modules[1..].join(", ") }}){% endif %},
# import every symbol api.toml lists and each class's methods, install the shim (proving by
# its path that `python3 -m` runs it) and run its full check (parameters, defaults, native
# requirements), then its smoke: the consumer's scenarios (api.toml [[scenario]]) against
# the loaded core and a master of the installed wheel on loopback, so a core that cannot serve
# the consumer fails the build with the scenario, the call and the status. A miss fails the
# build and names what is missing. {{ c.arg_prefix }}_SMOKE=0 skips the smoke (the log says so).
# A CUDA core needs the GPU driver's libcuda.so.1, which a GPU-less builder does not have, so
# ldd first tells three cases apart: every library of the core resolves: load it; only
# libcuda.so.1 is missing (no driver on this builder): load the core against the driver stub a
# CUDA devel base image ships ({{ c.var("DRIVER_STUB") }}, linked as libcuda.so.1 on
# LD_LIBRARY_PATH for this step only), or, with no stub, check what needs no core, and pass only
# if the build arg {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1 says this builder cannot load it;
# anything else missing: the core is broken. The log says which case ran and what it did not
# prove. Whatever needs the loaded core (the shim's full check, the smoke, whose master needs
# the same libraries) runs where `$load` is yes, the driver stub on the path when it is used.
# The last line counts the scenarios that passed and those not run, with why (e.g. needs torch).
RUN set -eu; \
    say() { echo "{{ c.name }} check: $*"; }; \
    fail() { echo "{{ c.name }} check: error: $*" >&2; exit 1; }; \
    tmp="$(mktemp -d)"; \
    trap 'rm -rf "$tmp"' EXIT; \
    python3 -c '{{ c.locate_core }}' {{ c.native_modules.join(" ") }} > "$tmp/cores" \
        || fail "a native module the image needs ({{ c.native_modules.join(", ") }}) is not installed (named above)"; \
    while IFS= read -r so; do ldd "$so" || fail "$so is not a shared library ldd can read: the native module is broken"; done < "$tmp/cores" > "$tmp/ldd"; \
    core="$(awk '{ printf "%s%s", sep, $0; sep = ", " }' "$tmp/cores")"; \
    missing="$(awk '/=> not found/ && !seen[$1]++ { printf "%s%s", sep, $1; sep = ", " }' "$tmp/ldd")"; \
    load=yes; \
    unproved="that it works with a GPU"; \
    case "$missing" in \
    "") \
        say "every library of $core resolves: loading the native core"; \
        did="the native core loaded";; \
    libcuda.so.1) \
        if [ -e "{{ c.var("DRIVER_STUB") }}" ]; then \
            ln -s "{{ c.var("DRIVER_STUB") }}" "$tmp/libcuda.so.1"; \
            export LD_LIBRARY_PATH="$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; \
            say "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves): loading the native core against the driver stub {{ c.var("DRIVER_STUB") }} for this check only"; \
            did="the native core loaded against the driver stub"; \
            unproved="that it works with a real driver and GPU"; \
        elif [ "{{ c.var("BUILDER_HAS_NO_DRIVER") }}" = 1 ]; then \
            load=no; \
            say "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves) and there is no driver stub at {{ c.var("DRIVER_STUB") }}; {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1: NOT loading the native core"; \
            did="WITHOUT loading the native core"; \
            unproved="that it loads, nor the {{ c.native_count }} native requirement(s) api.toml lists, nor the consumer's scenarios (run python3 -m {{ c.shim_module }} and python3 -m {{ c.shim_module }} --smoke in the image on a machine with the driver)"; \
        else \
            fail "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves) and there is no driver stub at {{ c.var("DRIVER_STUB") }}, so the native core cannot be loaded. Build where the driver or its stub is present, or pass --build-arg {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1 to build with a check that does not load the core"; \
        fi;; \
    *) \
        fail "the native core $core is broken: $missing not found (ldd)";; \
    esac; \
    if [ "$load" = yes ]; then \
        python3 -c "import {{ c.native_modules.join(", ") }}" \
            || fail "the native modules the image needs ({{ c.native_modules.join(", ") }}) do not all import (the error above): a pin or fill whose modules cannot load would fail every user of the package at run time"; \
    fi; \
    python3 -c "{{ c.import_check }}"; \
    site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
    install -m 0644 "{{ c.var("SHIM_DIR") }}/{{ c.shim_file }}" "$site/{{ c.shim_file }}"; \
    found="$(python3 -c 'import importlib.util as u, os, sys; s = u.find_spec(sys.argv[1]); o = s.origin if s else ""; print(o); sys.exit(0 if os.path.isfile(o) and os.path.samefile(o, sys.argv[2]) else 1)' {{ c.shim_module }} "$site/{{ c.shim_file }}")" \
        || fail "python3 -m {{ c.shim_module }} would run ${found:-nothing}, not the shim installed at $site/{{ c.shim_file }}: another module has its name ([shim] module in api.toml)"; \
    if [ "$load" = yes ]; then \
        python3 -m {{ c.shim_module }}; \
        if [ "{{ c.var("SMOKE") }}" = 1 ]; then \
            say "smoke: the consumer's scenarios against the native core and a master of its own on loopback (python3 -m {{ c.shim_module }} --smoke)"; \
            rc=0; \
            MC_TCP_BIND_ADDRESS="${MC_TCP_BIND_ADDRESS:-127.0.0.1}" python3 -m {{ c.shim_module }} --smoke > "$tmp/smoke" || rc=$?; \
            cat "$tmp/smoke"; \
            [ "$rc" = 0 ] || fail "the smoke failed: the native core of this image cannot serve the consumer (the scenario, the call and the status are above)"; \
            ran="$(awk '/^smoke [^:]*: ok [(]/ { ok++ } /^smoke [^:]*: not run [(]/ { r = $0; sub(/^smoke [^:]*: not run [(]/, "", r); sub(/[)]$/, "", r); if (!(r in n)) order[++k] = r; n[r]++ } END { printf "%d passed", ok; for (i = 1; i <= k; i++) printf ", %d not run (%s)", n[order[i]], order[i] }' "$tmp/smoke")"; \
            did="$did, the consumer's scenarios (--smoke): $ran"; \
        else \
            unproved="$unproved, nor the consumer's scenarios ({{ c.arg_prefix }}_SMOKE={{ c.var("SMOKE") }}: the smoke did not run)"; \
        fi; \
    else \
        python3 -m {{ c.shim_module }} --json > "$tmp/shim.json" || true; \
        python3 -c "{{ c.shim_without_core }}" "$tmp/shim.json"; \
    fi; \
    say "passed, $did; not proved: $unproved"
