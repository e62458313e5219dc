# The shim's directory in the image, and what the check does without a GPU driver (below).
ARG {{ c.arg_prefix }}_SHIM_DIR=/opt/{{ c.name }} \
    {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=0 \
    {{ c.arg_prefix }}_DRIVER_STUB=/usr/local/cuda/lib64/stubs/libcuda.so
COPY {{ c.shim_copy_from }} {{ c.var("SHIM_DIR") }}/{{ c.shim_file }}
# Build-time check: load the native core ({{ c.native_module }}), import every symbol api.toml lists
# and each class's methods, install the shim and run its full check (parameters, defaults,
# native requirements). A miss fails the build and names what is missing.
# A CUDA core needs the GPU driver's libcuda.so.1, which a GPU-less builder does not have, so
# ldd first tells three cases apart: every library of the core resolves: load it; only
# libcuda.so.1 is missing (no driver on this builder): load the core against the driver stub a
# CUDA devel base image ships ({{ c.var("DRIVER_STUB") }}, linked as libcuda.so.1 on
# LD_LIBRARY_PATH for this step only), or, with no stub, check what needs no core, and pass only
# if the build arg {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1 says this builder cannot load it;
# anything else missing: the core is broken. The log says which case ran and what it did not
# prove. Whatever else needs the loaded core (the shim's full check) runs where `$load` is yes.
RUN set -eu; \
    say() { echo "{{ c.name }} check: $*"; }; \
    fail() { echo "{{ c.name }} check: error: $*" >&2; exit 1; }; \
    tmp="$(mktemp -d)"; \
    trap 'rm -rf "$tmp"' EXIT; \
    core="$(python3 -c '{{ c.locate_core }}')"; \
    [ -n "$core" ] || fail "no native library {{ c.native_module }} is installed: the native core is missing"; \
    ldd "$core" > "$tmp/ldd"; \
    missing="$(awk '/=> not found/ && !seen[$1]++ { printf "%s%s", sep, $1; sep = ", " }' "$tmp/ldd")"; \
    load=yes; \
    case "$missing" in \
    "") \
        say "every library of $core resolves: loading the native core"; \
        proved="the native core loaded";; \
    libcuda.so.1) \
        if [ -e "{{ c.var("DRIVER_STUB") }}" ]; then \
            ln -s "{{ c.var("DRIVER_STUB") }}" "$tmp/libcuda.so.1"; \
            export LD_LIBRARY_PATH="$tmp${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"; \
            say "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves): loading the native core against the driver stub {{ c.var("DRIVER_STUB") }} for this check only"; \
            proved="the native core loaded against the driver stub; not proved: that it works with a real driver and GPU"; \
        elif [ "{{ c.var("BUILDER_HAS_NO_DRIVER") }}" = 1 ]; then \
            load=no; \
            say "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves) and there is no driver stub at {{ c.var("DRIVER_STUB") }}; {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1: NOT loading the native core"; \
            proved="WITHOUT loading the native core; not proved: that it loads, nor the {{ c.native_count }} native requirement(s) api.toml lists (run python3 -m {{ c.shim_module }} in the image on a machine with the driver)"; \
        else \
            fail "this builder has no GPU driver (libcuda.so.1 not found; every other library of $core resolves) and there is no driver stub at {{ c.var("DRIVER_STUB") }}, so the native core cannot be loaded. Build where the driver or its stub is present, or pass --build-arg {{ c.arg_prefix }}_BUILDER_HAS_NO_DRIVER=1 to build with a check that does not load the core"; \
        fi;; \
    *) \
        fail "the native core $core is broken: $missing not found (ldd)";; \
    esac; \
    if [ "$load" = yes ]; then python3 -c "import {{ c.native_module }}"; fi; \
    python3 -c "{{ c.import_check }}"; \
    site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
    install -m 0644 "{{ c.var("SHIM_DIR") }}/{{ c.shim_file }}" "$site/{{ c.shim_file }}"; \
    if [ "$load" = yes ]; then \
        python3 -m {{ c.shim_module }}; \
    else \
        python3 -m {{ c.shim_module }} --json > "$tmp/shim.json" || true; \
        python3 -c "{{ c.shim_without_core }}" "$tmp/shim.json"; \
    fi; \
    say "passed, $proved"
