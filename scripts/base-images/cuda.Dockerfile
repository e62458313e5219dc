# Stand-in for the CUDA base image (lmsysorg/sglang, api.toml [image.cuda]) on a GPU-less
# builder, made by scripts/make-base-images.sh: Debian bookworm's python3.11 with the real
# mooncake-transfer-engine-cuda13 wheel of the base version, the CUDA 13 runtime from PyPI on
# the loader path (as a CUDA image has /usr/local/cuda/lib64 there), numpy and msgpack, torch
# (what sglang runs on, with its own CUDA libraries), and no GPU driver: its store.so needs
# libcuda.so.1, which is not here.
ARG DEBIAN_IMAGE
FROM ${DEBIAN_IMAGE}
ARG PIP_INDEX_URL
ARG PACKAGES
ARG TORCH
RUN python3 -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --index-url "$PIP_INDEX_URL" "$TORCH" && python3 -c 'import torch'
RUN set -eu; \
    python3 -m pip install --no-cache-dir --disable-pip-version-check --root-user-action=ignore \
        --no-deps --index-url "$PIP_INDEX_URL" $PACKAGES; \
    site="$(python3 -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')"; \
    test -e "$site/nvidia/cu13/lib/libcudart.so.13"; \
    echo "$site/nvidia/cu13/lib" > /etc/ld.so.conf.d/cuda-13-runtime.conf; \
    ldconfig
# Where the NVIDIA container runtime mounts the driver at run time (as the sglang image sets it).
ENV LD_LIBRARY_PATH=/usr/local/nvidia/lib:/usr/local/nvidia/lib64
