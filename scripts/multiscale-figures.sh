#!/usr/bin/env bash
# The multiscale figures (issue 11): a simulated Gaussian-rich field cleaned by Clark and by
# multiscale with the stopping settings of tests/clean/test_multiscale_field.cpp (unmasked to
# 4 sigma, then to 1 sigma inside the auto-mask), the two restored images side by side in one PNG
# under one stretch (and the two residuals likewise), and a per-Gaussian table of the flux each
# put into its model, measured as that test measures it (scripts/gaussian_recovery.py).
#
#   scripts/multiscale-figures.sh              # 2048^2 on the GPU when nvidia-smi sees one, else the CPU
#   SIZE=512 DEVICE=cpu scripts/multiscale-figures.sh
#
# Environment (defaults in brackets):
#   SIZE [2048]  SEED [11]  GAUSSIANS [40 per 2048^2, at least 8]  SOURCES [64 per 2048^2, at least 6]
#   GAUSSIAN_SIZE ["3 12", beams, the test's range]  GAUSSIAN_FLUX ["0.05 0.15", Jy, integrated]
#   NOISE [1e-4 Jy/beam, simulate's default]
#   DEVICE [gpu if nvidia-smi lists one, else cpu]  GPUCLEAN_BUILD [build]: the folder with gpuclean
#   FIG_DIR [out/multiscale-figures]: everything goes there (sim/, the FITS images, JSON summaries,
#   panels.png, residuals.png, recovery.txt)  PYTHON [/usr/bin/python3, else python3; numpy needed]
#   PYTHON_LD_LIBRARY_PATH [empty]: Python's LD_LIBRARY_PATH. Python runs without the one gpuclean
#   may need: on a GPU machine .devlib's libraries would shadow the system's under Python's modules.
set -euo pipefail
cd "$(dirname "$0")/.."

size=${SIZE:-2048}
seed=${SEED:-11}
area=$(( size * size ))
gaussians=${GAUSSIANS:-$(( 40 * area / (2048 * 2048) ))}
sources=${SOURCES:-$(( 64 * area / (2048 * 2048) ))}
[ -n "${GAUSSIANS:-}" ] || [ "$gaussians" -ge 8 ] || gaussians=8
[ -n "${SOURCES:-}" ] || [ "$sources" -ge 6 ] || sources=6
read -r gmin gmax <<<"${GAUSSIAN_SIZE:-3 12}"
read -r fmin fmax <<<"${GAUSSIAN_FLUX:-0.05 0.15}"
noise=${NOISE:-1e-4}
if [ -z "${DEVICE:-}" ]; then
  if nvidia-smi -L >/dev/null 2>&1; then DEVICE=gpu; else DEVICE=cpu; fi
fi
bin=${GPUCLEAN_BUILD:-build}/gpuclean
[ -x "$bin" ] || { echo "multiscale-figures: no gpuclean at $bin; build it or set GPUCLEAN_BUILD" >&2; exit 2; }
if [ -z "${PYTHON:-}" ]; then
  if [ -x /usr/bin/python3 ]; then PYTHON=/usr/bin/python3; else PYTHON=python3; fi
fi
py() { LD_LIBRARY_PATH=${PYTHON_LD_LIBRARY_PATH:-} "$PYTHON" "$@"; }
dir=${FIG_DIR:-out/multiscale-figures}
mkdir -p "$dir"

echo "== simulate ${size}^2: $gaussians Gaussians of $gmin to $gmax beams and $fmin to $fmax Jy, $sources point sources, seed $seed"
"$bin" simulate --size "$size" --gaussians "$gaussians" --gaussian-size "$gmin" "$gmax" \
  --gaussian-flux "$fmin" "$fmax" --sources "$sources" \
  --seed "$seed" --noise "$noise" --out "$dir/sim" --overwrite

# The test's settings: CleanSettings' defaults, auto-mask 4 sigma, auto-threshold 1 sigma.
stopping=(--auto-mask 4 --auto-threshold 1)
for algo in clark multiscale; do
  extra=()
  [ "$algo" = multiscale ] && extra=(--multiscale)
  echo "== $algo ($DEVICE): ${stopping[*]} ${extra[*]}"
  start=$(date +%s.%N)
  "$bin" "$dir/sim/dirty.fits" "$dir/sim/psf.fits" -o "$dir/$algo.fits" --model "$dir/$algo-model.fits" \
    --residual "$dir/$algo-residual.fits" --json "$dir/$algo.json" --device "$DEVICE" "${stopping[@]}" \
    "${extra[@]}" --overwrite -q
  py - "$dir/$algo.json" "$start" <<'EOF'
import json, sys, time
j = json.load(open(sys.argv[1]))
r, p = j['runs'][0], j['planes'][0]
print(f"   {r['iterations']} components in {r['major_cycles']} major cycles, stop: {r['stop_reason']}, "
      f"model flux {p['model_flux']:.4f} Jy, residual rms {p['rms_residual']:.3g}, noise sigma {r['noise_sigma']:.3g}, "
      f"device {j['device']}, {time.time() - float(sys.argv[2]):.1f} s wall")
EOF
done

echo "== side by side: restored (panels.png) and residuals (residuals.png), one stretch each"
"$bin" quicklook "$dir/clark.fits" "$dir/multiscale.fits" -o "$dir/panels.png" --titles "Clark,Multiscale" --overwrite
"$bin" quicklook "$dir/clark-residual.fits" "$dir/multiscale-residual.fits" -o "$dir/residuals.png" \
  --titles "Clark residual,Multiscale residual" --overwrite

echo "== per-Gaussian recovery"
py scripts/gaussian_recovery.py "$dir/sim" --model "Clark=$dir/clark-model.fits" \
  --model "Multiscale=$dir/multiscale-model.fits" --restored "$dir/clark.fits" --noise "$noise" | tee "$dir/recovery.txt"
