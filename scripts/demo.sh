#!/usr/bin/env bash
# Sets up, builds the gpuclean command (only it: scripts/test.sh builds the tests), and
# deconvolves the bundled sample into out/sample/, then prints a summary.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup.sh
bash scripts/build.sh --target gpuclean
mkdir -p out/sample
build/gpuclean data/sample/dirty.fits data/sample/psf.fits -o out/sample/restored.fits \
  --model out/sample/model.fits --residual out/sample/residual.fits \
  --components out/sample/components.csv --json out/sample/summary.json --overwrite
echo
echo "Outputs in out/sample/: restored.fits model.fits residual.fits components.csv summary.json"
