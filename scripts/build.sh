#!/usr/bin/env bash
# Configures and builds gpuclean into build/ (the binary is build/gpuclean). The first configure
# requires casacore (-DGPUCLEAN_ENABLE_MS=ON), so that `gpuclean image`, and the .deb made from
# build/, cannot be left out silently; the script's arguments go to that configure after it
# (-DGPUCLEAN_ENABLE_MS=AUTO or OFF overrides it).
set -euo pipefail
cd "$(dirname "$0")/.."
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DGPUCLEAN_ENABLE_MS=ON "$@"
fi
cmake --build build --parallel "$(nproc)"
