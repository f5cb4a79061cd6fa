# gpuclean with WSClean on Debian bookworm, CUDA build (docs/install.md: building, GPU flags).
#
#   docker build -t gpuclean:0.1.0 .
#   docker run --rm --gpus all -v "$PWD:/data" -w /data gpuclean:0.1.0 gpuclean dirty.fits psf.fits -o restored.fits
#   apptainer build gpuclean.sif docker-daemon://gpuclean:0.1.0
#   apptainer exec --nv gpuclean.sif gpuclean --version
#
# Both stages are Debian bookworm: the package's Depends are computed (dpkg-shlibdeps) in the
# first and resolved by apt in the second, so they must be the same release. NVIDIA publishes no
# Debian nvidia/cuda images; the toolkit comes from NVIDIA's Debian 12 repository instead.

FROM debian:bookworm AS build
ARG CUDA_VERSION=13-0
# CUDA architectures to compile for (90: H100/H200; e.g. "80;90" for A100 too).
ARG CUDA_ARCHITECTURES=90
ENV DEBIAN_FRONTEND=noninteractive
RUN apt-get update \
 && apt-get install -y --no-install-recommends ca-certificates wget \
 && wget -q https://developer.download.nvidia.com/compute/cuda/repos/debian12/x86_64/cuda-keyring_1.1-1_all.deb \
 && dpkg -i cuda-keyring_1.1-1_all.deb && rm cuda-keyring_1.1-1_all.deb \
 && apt-get update \
 && apt-get install -y --no-install-recommends \
      build-essential cmake ninja-build pkg-config file \
      libcfitsio-dev libcli11-dev libfftw3-dev nlohmann-json3-dev libpng-dev libgd-dev \
      pybind11-dev python3-dev python3-numpy casacore-dev \
      cuda-minimal-build-${CUDA_VERSION} libcufft-dev-${CUDA_VERSION} \
 && rm -rf /var/lib/apt/lists/*
COPY . /src
# No tests in the image: the GoogleTest suite runs from a source build (scripts/test.sh).
# GPUCLEAN_ENABLE_MS=ON: `gpuclean image` (casacore) is in the package, or the build fails.
RUN cmake -S /src -B /build -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCLEAN_BUILD_TESTS=OFF -DGPUCLEAN_ENABLE_MS=ON \
      -DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCHITECTURES}" \
 && cmake --build /build --parallel \
 && cd /build && cpack -G DEB

FROM debian:bookworm
ENV DEBIAN_FRONTEND=noninteractive
COPY --from=build /build/gpuclean_*.deb /tmp/
# The package brings libcudart and libcufft (/usr/lib/gpuclean), and its Depends casacore's
# libraries (libcasa-ms7, ...); the driver library (libcuda.so.1) comes from the host at run time:
# docker run --gpus all, apptainer exec --nv. casacore-data (J2000 conversion of MSs in another
# frame) is a Recommends of libcasa-measures7 and is named, as --no-install-recommends leaves it out.
RUN apt-get update \
 && apt-get install -y --no-install-recommends /tmp/gpuclean_*.deb wsclean python3-casacore casacore-data \
 && rm -rf /var/lib/apt/lists/* /tmp/gpuclean_*.deb
# What the NVIDIA container toolkit reads to mount the driver's compute libraries (the nvidia/cuda
# images set the same).
ENV NVIDIA_VISIBLE_DEVICES=all NVIDIA_DRIVER_CAPABILITIES=compute,utility
CMD ["gpuclean", "--help"]
