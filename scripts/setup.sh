#!/usr/bin/env bash
# Installs what gpuclean needs to build and test. As root it uses apt-get; otherwise it prints
# the exact command to run and stops. The CUDA toolkit (nvcc, cuFFT) is optional: without it
# gpuclean builds CPU-only.
set -euo pipefail

# The Python package builds with Debian's pybind11 for /usr/bin/python3, where python3-numpy and
# python3-pytest install. wsclean and python3-casacore: data/simulate_ms.py and the tests that
# image its MeasurementSets with WSClean. casacore-dev: io/ms, the MeasurementSet reader of
# gpuclean image (CMake leaves it out when casacore is absent; -DGPUCLEAN_ENABLE_MS=ON requires it).
packages=(build-essential cmake pkg-config libcfitsio-dev libcli11-dev libgtest-dev libfftw3-dev libgsl-dev
          nlohmann-json3-dev libpng-dev libgd-dev openmpi-bin pybind11-dev python3-dev python3-numpy python3-pytest
          wsclean python3-casacore casacore-dev)
missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -gt 0 ]; then
  cmd="apt-get update && apt-get install -y --no-install-recommends ${missing[*]}"
  if [ "$(id -u)" -eq 0 ]; then
    echo "setup: installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
  else
    echo "setup: missing packages. Run as root:" >&2
    echo "  sudo sh -c '$cmd'" >&2
    exit 1
  fi
fi

if [ -x /usr/local/cuda/bin/nvcc ] || command -v nvcc >/dev/null 2>&1; then
  echo "setup: CUDA toolkit found, the GPU code will be compiled"
else
  echo "setup: no CUDA toolkit (nvcc) found, gpuclean will build CPU-only"
fi
