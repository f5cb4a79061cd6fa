#!/usr/bin/env bash
# Builds gpuclean CPU-only with Debian trixie's gcc 14 in a chroot and runs its CPU tests and the
# Python tests there, whose hook tests drive trixie's WSClean 3.6 (the host has bookworm's 3.1).
# With trixie's casacore 3.7 (casacore-dev, python3-casacore) the MeasurementSet reader and
# `gpuclean image` are built and their tests compare against WSClean 3.6.
# Root required. The chroot is made once and reused; its build directory is kept between runs.
#
#   scripts/test-wsclean-trixie.sh          (GPUCLEAN_TRIXIE_DIR: the chroot, default /var/tmp/gpuclean-trixie)
#
# Exit status: 0 only when the build, ctest -L cpu and the Python tests all pass.
set -euo pipefail

# Everything gpuclean needs to build and test (scripts/setup.sh's list) plus gcc 14 and ninja.
packages=(build-essential cmake ninja-build pkg-config libcfitsio-dev libcli11-dev libgtest-dev libfftw3-dev libgsl-dev
          nlohmann-json3-dev libpng-dev libgd-dev openmpi-bin pybind11-dev python3-dev python3-numpy
          python3-pytest wsclean python3-casacore casacore-dev)
build=/root/gpuclean-build   # inside the chroot, so the repository's build/ is left alone

inside() {
  # Runs in the chroot, with the snapshot of the repository read-only at /src.
  local rc=0 t
  echo "== $(wsclean --version 2>&1 | grep -m1 -i 'version')"
  echo "== $(g++ --version | head -n1)"
  t=$SECONDS
  echo "== casacore $(dpkg-query -W -f='${Version}' casacore-dev)"
  # GPUCLEAN_ENABLE_MS=ON: a casacore the build cannot use fails here instead of leaving io/ms out.
  cmake -S /src -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=Release -DGPUCLEAN_ENABLE_CUDA=OFF \
    -DGPUCLEAN_ENABLE_MS=ON >/dev/null
  cmake --build "$build" --parallel "$(nproc)"
  echo "== build: $((SECONDS - t)) s"
  t=$SECONDS
  # python_tests (label cpu too) is the whole pytest run; it runs below, verbosely, instead.
  (cd "$build" && ctest -L cpu -E '^python_tests$' --output-on-failure -j "$(nproc)") || rc=1
  echo "== ctest -L cpu: $((SECONDS - t)) s"
  t=$SECONDS
  PYTHONPATH=$build/python GPUCLEAN_BINARY=$build/gpuclean GPUCLEAN_SOURCE_DIR=/src PYTHONDONTWRITEBYTECODE=1 \
    python3 -m pytest -v -rfEs -p no:cacheprovider /src/python/tests || rc=1
  echo "== pytest python/tests: $((SECONDS - t)) s"
  return "$rc"
}

if [ "${1:-}" = "--inside" ]; then
  inside
  exit
fi
if [ $# -gt 0 ]; then
  echo "usage: $0 (no arguments; set GPUCLEAN_TRIXIE_DIR to choose the chroot's directory)" >&2
  exit 2
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "$0: must run as root (it makes and enters a chroot); try: sudo $0" >&2
  exit 1
fi

repo=$(cd "$(dirname "$0")/.." && pwd)
dir=$(realpath -m "${GPUCLEAN_TRIXIE_DIR:-/var/tmp/gpuclean-trixie}")
case $dir in
  "$repo"|"$repo"/*) echo "$0: GPUCLEAN_TRIXIE_DIR=$dir is inside the repository; choose a path outside it" >&2; exit 2 ;;
esac

start=$SECONDS
bash "$repo/scripts/debian-chroot.sh" create trixie "$dir" "${packages[@]}"
echo "== chroot ready in $dir: $((SECONDS - start)) s"

# The build reads a snapshot of the working tree (tracked and untracked, not ignored files), not
# the live tree: files edited during a 10-minute build would mix old and new headers into one
# binary. tar keeps the files' times, so the kept build directory rebuilds only what changed.
snapshot=$dir/var/lib/gpuclean-src
rm -rf "$snapshot"
mkdir -p "$snapshot"
(cd "$repo" && git ls-files -z --cached --others --exclude-standard |
   while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done |
   tar --null -T - -cf -) | tar -C "$snapshot" -xf -
echo "== snapshot of $repo at $(git -C "$repo" rev-parse --short HEAD)$(git -C "$repo" diff --quiet HEAD 2>/dev/null || echo ' plus uncommitted changes')"
bash "$repo/scripts/debian-chroot.sh" run "$dir" --bind "$snapshot:/src:ro" -- \
  bash /src/scripts/test-wsclean-trixie.sh --inside
