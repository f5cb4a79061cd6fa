#!/usr/bin/env bash
# Configures and builds gpuclean into build/ (the binary is build/gpuclean).
set -euo pipefail
cd "$(dirname "$0")/.."
gen=()
command -v ninja >/dev/null 2>&1 && gen=(-G Ninja)
if [ ! -f build/CMakeCache.txt ]; then
  cmake -S . -B build "${gen[@]}" -DCMAKE_BUILD_TYPE=Release "$@"
fi
cmake --build build --parallel "$(nproc)"
