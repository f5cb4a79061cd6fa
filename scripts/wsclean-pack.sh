#!/usr/bin/env bash
# Packs Debian's WSClean, the Python 3.11 it embeds (standard library, NumPy, python-casacore) and
# gpuclean's Python package into .devwsc/wsclean.tar.xz, for the hook's benchmark on a GPU machine
# that has none of them (scripts/wsclean_bench.py). Usage: scripts/wsclean-pack.sh [BUILD_DIR] (default build).
# WSC_PACK_BINARIES="gpuclean tests/test_x ..." (paths under BUILD_DIR) adds those binaries too, with their
# libraries, for the imaging runs against WSClean (they land in $WSC_ROOT and $WSC_ROOT/tests, the layout
# scripts/gpu-check.sh imaging reads with GPUCLEAN_BUILD=.devwsc/root).
# There: tar -xJf .devwsc/wsclean.tar.xz && source .devwsc/env.sh
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
dist=/usr/lib/python3/dist-packages
[ -x /usr/bin/wsclean ] || { echo "wsclean-pack: install Debian's wsclean first (scripts/setup.sh)" >&2; exit 1; }
ls "$build"/python/gpuclean/_gpuclean.cpython-311-*.so >/dev/null \
  || { echo "wsclean-pack: build gpuclean's Python package in $build first (scripts/build.sh)" >&2; exit 1; }
root=.devwsc/root
rm -rf .devwsc && mkdir -p "$root/bin" "$root/py/lib/python3/dist-packages" "$root/share"
cp /usr/bin/wsclean /usr/bin/python3.11 "$root/bin/"
# The standard library, without what a run cannot use (tests, GUI, installers, byte-code caches).
tar -C /usr/lib -cf - --exclude=__pycache__ --exclude='python3.11/test' --exclude='python3.11/idlelib' \
  --exclude='python3.11/tkinter' --exclude='python3.11/ensurepip' --exclude='python3.11/lib2to3' \
  --exclude='python3.11/config-3.11-*' python3.11 | tar -C "$root/py/lib" -xf -
for pkg in numpy casacore six.py; do
  tar -C "$dist" -cf - --exclude=__pycache__ --exclude=tests "$pkg" | tar -C "$root/py/lib/python3/dist-packages" -xf -
done
cp -r "$build/python/gpuclean" "$root/py/lib/python3/dist-packages/"
find "$root/py" -name __pycache__ -prune -exec rm -rf {} +
cp -r /usr/share/casacore "$root/share/" 2>/dev/null || true
mapfile -t modules < <(find "$root/py" -name '*.so')
extra=()
for b in ${WSC_PACK_BINARIES:-}; do
  case $b in tests/*) mkdir -p "$root/tests"; cp "$build/$b" "$root/tests/" ;; *) cp "$build/$b" "$root/" ;; esac
  extra+=("$build/$b")
done
../shared/tools/bundle-libs "$root/lib" /usr/bin/wsclean /usr/bin/python3.11 "${modules[@]}" "${extra[@]}"
cat > .devwsc/env.sh <<'EOF'
# Sourced from the repository root on the GPU machine after unpacking .devwsc/wsclean.tar.xz.
export WSC_ROOT=$PWD/.devwsc/root
export PATH=$WSC_ROOT/bin:$PATH
export LD_LIBRARY_PATH=$WSC_ROOT/lib:/usr/local/cuda/lib64${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
export PYTHONHOME=$WSC_ROOT/py PYTHONPATH=$WSC_ROOT/py/lib/python3/dist-packages PYTHONNOUSERSITE=1
# Debian's Python 3.11 runs the scripts too (the machine's own python3 is another version).
export WSC_PYTHON=$WSC_ROOT/bin/python3.11
EOF
XZ_OPT=${XZ_OPT:--9 -T2} tar -cJf .devwsc/wsclean.tar.xz .devwsc/root .devwsc/env.sh
rm -rf "$root"  # only the archive travels (carry .devwsc)
du -sh .devwsc/wsclean.tar.xz
