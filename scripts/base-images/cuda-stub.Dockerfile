# The CUDA stand-in plus the link-time driver stub a CUDA devel image ships (the sglang images
# are built FROM nvidia/cuda:*-devel): /usr/local/cuda/lib64/stubs/libcuda.so, named without
# .1 and not on the loader path. Made by scripts/make-base-images.sh with
# scripts/cuda-driver-stub.sh from the store.so of the CUDA stand-in's wheel.
ARG CUDA_IMAGE
FROM ${CUDA_IMAGE}
COPY libcuda.so /usr/local/cuda/lib64/stubs/libcuda.so
