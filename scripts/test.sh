#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: ctest (GPU tests skip without a GPU), then, as
# root, the Debian package on a clean bookworm chroot (scripts/test-package.sh) and the CPU build
# with gcc 14 and the WSClean hook against WSClean 3.6 in a trixie chroot
# (scripts/test-wsclean-trixie.sh). GPUCLEAN_TEST_CHROOTS=0 leaves the two chroot stages out.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh
(cd build && ctest --output-on-failure -j "$(nproc)")
if [ "${GPUCLEAN_TEST_CHROOTS:-1}" = 0 ]; then
  echo "test: the chroot stages (package, WSClean 3.6) left out (GPUCLEAN_TEST_CHROOTS=0)"
elif [ "$(id -u)" -ne 0 ]; then
  echo "test: the chroot stages (package, WSClean 3.6) need root; run as root to include them" >&2
  exit 1
else
  bash scripts/test-package.sh
  bash scripts/test-wsclean-trixie.sh
fi
