#!/usr/bin/env bash
# Where a cube's GPU CLEAN setup goes on a multi-GPU host (issue 37): a 64-channel 2048^2 WSClean
# set on /dev/shm cleaned plane by plane on 1 GPU (twice) and on all (the automatic workers, the
# old 16 a GPU, 8 a GPU, and without the workers prepared during the read), then scripts/setup_parts.py
# over their JSON summaries (clean seconds, summed setup, each part's mean in a worker's first and
# later runs, and whether every run's planes equal the 1-GPU run's).
#   scripts/cube_setup_diag.sh [BUILD_DIR] [OUT_DIR]   (CUBE_SIZE, CUBE_CHANNELS, CUBE_DIR)
set -u
cd "$(dirname "$0")/.."
bin=${1:-build}
out=${2:-${OUT:-/tmp}/cube-setup}
# gpu-check.sh multi-gpu's set when it is there (the same simulation), else a new one.
dir=${CUBE_DIR:-/dev/shm/gpuclean-multi/cube}
[ -e "$dir/obs-0000-dirty.fits" ] || dir=${CUBE_DIR:-/dev/shm/gpuclean-setup}
size=${CUBE_SIZE:-2048}
channels=${CUBE_CHANNELS:-64}
py=${SYSPY:-python3}
mkdir -p "$out" "$dir"
gpus=$(nvidia-smi -L 2>/dev/null | wc -l)
[ "$gpus" -ge 1 ] || gpus=1
if [ ! -e "$dir/obs-0000-dirty.fits" ]; then
  "$bin/gpuclean" simulate --size "$size" --channels "$channels" --bandwidth 4e8 --name obs --out "$dir" \
    >"$out/simulate.log" 2>&1 || { echo "simulate failed: $(tail -1 "$out/simulate.log")"; exit 1; }
fi
run() {  # name, options...
  local name=$1; shift
  "$bin/gpuclean" "$dir/obs" --wsclean-channels -o "$dir/out-$name" --overwrite --json "$out/$name.json" -v "$@" \
    >"$out/$name.log" 2>&1
  echo "== $name (exit $?): $(grep -h 'at once' "$out/$name.log" | sed 's/.*; //')"
  grep -h 'prepared\|released\|^done' "$out/$name.log" | sed 's/^/   /'
}
run g1 --max-gpus 1
run g1-again --max-gpus 1
run all --max-gpus "$gpus"
run all-p16 --max-gpus "$gpus" --parallel-planes 16
run all-p8 --max-gpus "$gpus" --parallel-planes 8
GPUCLEAN_CUBE_PREPARE=0 run all-unprepared --max-gpus "$gpus"
"$py" scripts/setup_parts.py "$out"/{g1,g1-again,all,all-p16,all-p8,all-unprepared}.json
# A few planes' -v setup lines from the all-GPU run (the JSON has every run's).
grep -h 'setup [0-9]' "$out/all.log" | head -3
