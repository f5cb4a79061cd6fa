#!/usr/bin/env bash
# Builds gpuclean's Debian package from build/ (cpack) and installs it on a clean Debian bookworm,
# a chroot made by scripts/debian-chroot.sh, with apt-get, so Debian's mirror resolves its Depends.
# Then checks there, with no PYTHONPATH, the command, `gpuclean image` on a simulated
# MeasurementSet, the Python package and WSClean's hook, on the CPU (a chroot has no GPU driver).
# The package must have MeasurementSet support (casacore in its Depends): build/ configured with
# -DGPUCLEAN_ENABLE_MS=ON (scripts/build.sh does). Run as root; ends with the line
# "package: N passed, M failed".
#
#   GPUCLEAN_BOOKWORM_DIR  the minbase chroot, made once and reused (/var/tmp/gpuclean-bookworm).
#                          Each run installs into a fresh copy of it, DIR.test, so that only the
#                          package's Depends bring its libraries; downloads are kept in DIR.apt.
#   GPUCLEAN_BUILD_LOCK    a lock file held while cpack reads build/ (a build tree shared by
#                          several people: /tmp/gpuclean-build.lock).
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
base=${GPUCLEAN_BOOKWORM_DIR:-/var/tmp/gpuclean-bookworm}
work=$base.test
cache=$base.apt
start=$SECONDS

if [ "$(id -u)" -ne 0 ]; then
  echo "$0: must run as root (debootstrap and chroot need it); try: sudo $0" >&2
  exit 2
fi
if [ ! -f build/CPackConfig.cmake ] || [ ! -x build/gpuclean ]; then
  echo "$0: no built build/ (build/gpuclean, build/CPackConfig.cmake); run scripts/build.sh first" >&2
  exit 2
fi

stage=$(mktemp -d /tmp/gpuclean-package.XXXXXX)
trap 'rm -rf "$stage"' EXIT

echo "== cpack -G DEB (build/)"
lock=()
[ -n "${GPUCLEAN_BUILD_LOCK:-}" ] && lock=(flock "$GPUCLEAN_BUILD_LOCK")
(cd build && "${lock[@]}" cpack -G DEB -B "$stage/cpack" >"$stage/cpack.log" 2>&1) ||
  { cat "$stage/cpack.log" >&2; echo "$0: cpack failed" >&2; exit 1; }
debs=("$stage"/cpack/gpuclean_*.deb)
[ -f "${debs[0]}" ] || { echo "$0: cpack made no gpuclean_*.deb in $stage/cpack" >&2; exit 1; }
deb=$(basename "${debs[0]}")
depends=$(dpkg-deb -f "${debs[0]}" Depends)
echo "$deb: $(du -m "${debs[0]}" | cut -f1) MiB; $depends"
# dpkg-shlibdeps names casacore's packages only when the binary links it: without them the build
# left io/ms out (GPUCLEAN_ENABLE_MS=AUTO without casacore-dev) and `gpuclean image` only refuses.
if ! grep -q 'libcasa-ms' <<< "$depends"; then
  echo "$0: $deb does not depend on casacore (libcasa-ms*): build/ has no MeasurementSet support;" \
       "install casacore-dev and configure with -DGPUCLEAN_ENABLE_MS=ON" >&2
  exit 1
fi

echo "== clean bookworm chroot"
bash scripts/debian-chroot.sh create bookworm "$base"
# A copy with anything still mounted inside (a run killed hard) must not be deleted: rm would
# follow the bind mounts into the host.
if awk -v d="$work/" 'index($2, d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
  echo "$0: something is still mounted under $work; unmount it (see /proc/self/mounts) and run again" >&2
  exit 1
fi
rm -rf "$work"
cp -a "$base" "$work"
mkdir -p "$cache" "$work/opt/test"
cp "${debs[0]}" "$work/opt/test/"
cp -r data/sample data/simulate_ms.py data/msim "$work/opt/test/"

passed=0
failed=0
# check NAME SHELL-COMMAND: runs it in the chroot with a bare environment (no PYTHONPATH, no
# LD_LIBRARY_PATH: only what the package installs is found).
check() {
  local name=$1 cmd=$2
  echo "== $name"
  if bash scripts/debian-chroot.sh run "$work" --bind "$cache:/var/cache/apt/archives" -- \
       env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LC_ALL=C.UTF-8 DEBIAN_FRONTEND=noninteractive \
       sh -ec "cd /opt/test; $cmd"; then
    echo "PASS $name"
    passed=$((passed + 1))
  else
    echo "FAIL $name"
    failed=$((failed + 1))
  fi
}
apt_install='apt-get -q -y -o Dpkg::Use-Pty=0 install --no-install-recommends'

# Before WSClean and casacore come in, so their libraries cannot stand in for a missing Depends.
check "apt-get install ./$deb" "apt-get -q update >/dev/null; $apt_install ./$deb"
check "gpuclean --version" 'gpuclean --version | grep -x "gpuclean [0-9.]*"'
check "gpuclean on data/sample (CPU)" '
  mkdir -p out
  gpuclean sample/dirty.fits sample/psf.fits -o out/restored.fits --model out/model.fits \
    --json out/summary.json --device auto --overwrite
  test -s out/restored.fits && test -s out/model.fits
  python3 -c "import json, sys; s = json.load(open(\"out/summary.json\")); r = s[\"runs\"][0]; print(s[\"device\"], r[\"iterations\"], r[\"stop_reason\"]); sys.exit(not (s[\"device\"] == \"cpu\" and r[\"iterations\"] > 0))"'
check "gpuclean image -help" 'gpuclean image -help | grep "^usage: gpuclean image"'
check 'python3 -c "import gpuclean"' '
  python3 -c "import gpuclean; print(gpuclean.__file__)" | grep "^/usr/lib/python3/dist-packages/gpuclean/"'
check "python3 -m gpuclean.wsclean" 'hook=$(python3 -m gpuclean.wsclean); echo "$hook"; test -f "$hook"'
# The README's recipe runs no Python: a python3 first on PATH that cannot import NumPy changes nothing.
check "gpuclean-wsclean-hook (a python3 without NumPy first on PATH)" '
  mkdir -p /tmp/no-numpy
  printf "#!/bin/sh\necho \"ModuleNotFoundError: No module named numpy\" >&2\nexit 1\n" > /tmp/no-numpy/python3
  chmod +x /tmp/no-numpy/python3
  hook=$(PATH=/tmp/no-numpy:$PATH gpuclean-wsclean-hook); echo "$hook"
  test "$hook" = /usr/lib/python3/dist-packages/gpuclean/wsclean_hook.py'
# simulate_ms.py needs python3-casacore (NumPy comes with the package): installed only now. The
# dirty image and PSF are then cleaned by gpuclean itself, which checks they are images it can use.
check "gpuclean image (simulated MS, 128^2, -make-psf), then gpuclean on its dirty image and PSF" "
  $apt_install python3-casacore >/dev/null
  python3 simulate_ms.py --out img.ms --antennas 16 --hours 0.5 --channels 2 --overwrite >/dev/null
  gpuclean image -name img -size 128 128 -scale 4asec -make-psf -j 2 img.ms
  test -s img-dirty.fits && test -s img-psf.fits
  mkdir -p out
  gpuclean img-dirty.fits img-psf.fits -o out/img-restored.fits --niter 100 --json out/img.json --overwrite -q
  python3 -c \"import json, sys; r = json.load(open('out/img.json'))['runs'][0]; print(r['iterations'], r['stop_reason']); sys.exit(not r['iterations'] > 0)\""
check "wsclean -python-deconvolution (256^2, -niter 200)" "
  $apt_install wsclean python3-casacore >/dev/null
  python3 simulate_ms.py --out sim.ms --antennas 16 --hours 0.5 --channels 2 --overwrite >/dev/null
  hook=\$(gpuclean-wsclean-hook)
  wsclean -name sim -size 256 256 -scale 4asec -niter 200 -mgain 0.8 \
    -python-deconvolution \"\$hook\" sim.ms > wsclean.log 2>&1 || { tail -20 wsclean.log; exit 1; }
  grep 'gpuclean: major cycle' wsclean.log
  test -s sim-image.fits"

echo "$((SECONDS - start)) s"
echo "package: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
