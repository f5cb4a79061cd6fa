#!/usr/bin/env bash
# Packs what a GPU-machine run needs into .devpack/pack.tar.xz (carried by the device tool):
# the binaries and static libraries of a build folder, the shared libraries the bare CUDA machine
# lacks (casacore's among them: libcasa_*, LAPACK, GSL, gfortran; no casacore data, which a J2000
# MeasurementSet does not need), and the WSClean pair from ../shared.
# Usage: scripts/device-pack.sh [BUILD_DIR] (default build-gpu).
# There: tar -xJf .devpack/pack.tar.xz && export LD_LIBRARY_PATH=$PWD/.devlib:/usr/local/cuda/lib64
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build-gpu}
rm -rf .devlib .devdata && mkdir -p .devpack .devdata/data
mapfile -t tests < <(find "$build/tests" -maxdepth 1 -type f -name 'test_*' -executable | sort)
# The static libraries, for gpu-check.sh python to link the extension against that machine's Python.
mapfile -t libs < <(find "$build" -mindepth 2 -maxdepth 2 -name 'libgpuclean_*.a' | sort)
python_config=()
[ -f "$build/python/prebuilt-config.cmake" ] && python_config=("$build/python/prebuilt-config.cmake")
../shared/tools/bundle-libs .devlib "$build/gpuclean" "${tests[@]}"
cp -r ../shared/data/wsclean-256 .devdata/data/
# xz -9's 64 MiB window spans several binaries, which share most of their bytes (the CUDA code):
# 39 MB (-T2) where the default -6 (8 MiB) made 62 MB, near the device tool's 64 MiB.
XZ_OPT=${XZ_OPT:--9 -T2} tar -cJf .devpack/pack.tar.xz "$build/gpuclean" "${tests[@]}" "${libs[@]}" "${python_config[@]}" .devlib .devdata
du -sh .devpack/pack.tar.xz
