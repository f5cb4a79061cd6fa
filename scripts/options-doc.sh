#!/usr/bin/env bash
# Writes docs/options.md from the option table (app/options/option_rows.cpp). The test
# OptionsDoc.TheCommittedDocIsTheTablesRendering fails until the regenerated file is committed.
#   scripts/options-doc.sh [BUILD_DIR]   (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target gpuclean-options-doc >/dev/null
"$build/app/gpuclean-options-doc" > docs/options.md
echo "wrote docs/options.md"
