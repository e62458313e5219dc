# Stand-in for the ROCm base image (rocm/sgl-dev, api.toml [image.rocm]), made by
# scripts/make-base-images.sh: mooncake as a source build leaves it. The native files of a
# release wheel (the non-cuda one stands in for the HIP build, with the CUDA 12 runtime its
# store.so links, on the loader path), but CMake's install rules list Python files by name:
# every *.py of the package is gone except two the build did install (marked), and there is
# no wheel metadata and no console script. numpy and msgpack as the real image has them.
ARG DEBIAN_IMAGE
FROM ${DEBIAN_IMAGE}
ARG PIP_INDEX_URL
ARG PACKAGES
ARG KEPT="__init__.py mooncake_config.py"
RUN set -eu; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --no-deps --index-url "$PIP_INDEX_URL" $PACKAGES; \
    site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
    for record in "$site"/mooncake_transfer_engine*.dist-info/RECORD; do \
        sed -n 's|^\.\./\.\./\.\./bin/\([^,]*\),.*|/usr/local/bin/\1|p' "$record" | xargs -r rm -f; \
        rm -rf "${record%/RECORD}"; \
    done; \
    for f in "$site"/mooncake/*.py; do \
        case " $KEPT " in \
        *" ${f##*/} "*) printf '\n# installed by the source build (stand-in)\n' >> "$f";; \
        *) rm "$f";; \
        esac; \
    done; \
    rm -rf "$site/mooncake/__pycache__"; \
    test -e "$site/nvidia/cuda_runtime/lib/libcudart.so.12"; \
    echo "$site/nvidia/cuda_runtime/lib" > /etc/ld.so.conf.d/cuda-12-runtime.conf; \
    ldconfig
