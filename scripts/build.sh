#!/usr/bin/env bash
# Configures and builds gpuclean into build/ (the binary is build/gpuclean).
#
#   scripts/build.sh [--target NAME ...] [CONFIGURE-ARGUMENT ...]
#
# Without --target it builds everything (the command, the Python package, the tests); with it,
# only the targets named (scripts/demo.sh: --target gpuclean). The first configure requires
# casacore (-DGPUCLEAN_ENABLE_MS=ON), so that `gpuclean image`, and the .deb made from build/,
# cannot be left out silently; the other arguments go to that configure after it
# (-DGPUCLEAN_ENABLE_MS=AUTO or OFF overrides it) and are ignored once build/ is configured.
# GPUCLEAN_BUILD_LOCK names a lock file held while building (a build/ shared by several people:
# /tmp/gpuclean-build.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
targets=()
configure=()
while [ $# -gt 0 ]; do
  case $1 in
    --target)
      [ $# -ge 2 ] || { echo "build.sh: --target needs a target name" >&2; exit 2; }
      targets+=(--target "$2"); shift 2 ;;
    --target=*) targets+=(--target "${1#--target=}"); shift ;;
    *) configure+=("$1"); shift ;;
  esac
done
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
lock=()
[ -n "${GPUCLEAN_BUILD_LOCK:-}" ] && lock=(flock "$GPUCLEAN_BUILD_LOCK")
if [ ! -f build/CMakeCache.txt ]; then
  "${lock[@]}" cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUCLEAN_ENABLE_MS=ON "${configure[@]}"
elif [ ${#configure[@]} -gt 0 ]; then
  echo "build.sh: build/ is already configured; ignoring ${configure[*]} (cmake -S . -B build ${configure[*]} changes it)" >&2
fi
"${lock[@]}" cmake --build build --parallel "$(nproc)" "${targets[@]}"
