#!/usr/bin/env bash
# Sets up, builds and runs the whole test suite: ctest (GPU tests skip without a GPU), then, as
# root, the Debian package on a clean bookworm chroot (scripts/test-package.sh) and the CPU build
# with gcc 14 and the WSClean hook against WSClean 3.6 in a trixie chroot
# (scripts/test-wsclean-trixie.sh). Ends with ctest's counts, skipped tests counted apart, and a
# table of the stages: seconds and result. A failing test stage does not stop the later ones; the
# exit status is 0 only when every stage run passed.
#
#   GPUCLEAN_TEST_CHROOTS=0   leaves the two chroot stages out (then root is not needed).
#   GPUCLEAN_KEEP_CHROOTS=1   keeps the chroots this run makes (about 3 GB: GPUCLEAN_BOOKWORM_DIR,
#                             default /var/tmp/gpuclean-bookworm, with its .test and .apt, and
#                             GPUCLEAN_TRIXIE_DIR, default /var/tmp/gpuclean-trixie), so that later
#                             runs reuse them. Without it they are removed at the end. Chroots that
#                             were there before the run are reused and always kept.
set -euo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

names=() seconds=() results=()
failed_stages=0
# stage NAME COMMAND...: runs COMMAND, records its time and result; returns its status.
current="" current_start=0   # the stage in progress, for the table when the run is interrupted
stage() {
  local name=$1 t=$SECONDS rc=0
  shift
  echo "== test: $name"
  current=$name current_start=$t
  "$@" || rc=$?
  current=""
  names+=("$name")
  seconds+=($((SECONDS - t)))
  if [ "$rc" -eq 0 ]; then results+=(passed); else results+=("FAILED (exit $rc)"); failed_stages=$((failed_stages + 1)); fi
  return "$rc"
}
not_run() {  # not_run NAME WHY
  names+=("$1") seconds+=(-) results+=("$2")
}

ctest_counts=""
summary() {
  [ ${#names[@]} -gt 0 ] || return 0
  echo
  [ -z "$ctest_counts" ] || echo "test: ctest: $ctest_counts"
  printf 'test: %-30s %8s  %s\n' stage seconds result
  local i
  for i in "${!names[@]}"; do
    printf 'test: %-30s %8s  %s\n' "${names[i]}" "${seconds[i]}" "${results[i]}"
  done
}

# ctest's own last line counts skipped tests as passed ("100% tests passed"); scripts/ctest_summary.py
# counts them apart, with their reasons, from ctest's JUnit file.
run_ctest() {
  local junit=$repo/build/Testing/test-sh.junit.xml rc=0 py=/usr/bin/python3
  [ -x "$py" ] || py=python3
  mkdir -p build/Testing
  rm -f "$junit"
  # A passed test's output is cut at 1 kB by default; pytest's counts end python_tests' output.
  (cd build && ctest --output-on-failure --output-junit "$junit" --test-output-size-passed 262144 -j "$(nproc)") || rc=$?
  if [ -f "$junit" ]; then
    ctest_counts=$("$py" scripts/ctest_summary.py "$junit") || ctest_counts="(scripts/ctest_summary.py failed on $junit)"
    echo
    echo "test: ctest: $ctest_counts"
  fi
  return "$rc"
}

# The chroots: made once by scripts/debian-chroot.sh (a stamp file marks a finished one).
bookworm=$(realpath -m "${GPUCLEAN_BOOKWORM_DIR:-/var/tmp/gpuclean-bookworm}")
trixie=$(realpath -m "${GPUCLEAN_TRIXIE_DIR:-/var/tmp/gpuclean-trixie}")
made=()          # what this run makes, to be removed at the end unless GPUCLEAN_KEEP_CHROOTS=1
cleaned=0
remove_tree() {  # refuses while anything is mounted under it: rm would follow a bind mount into the host
  local d=$1
  [ -e "$d" ] || return 0
  case $d in /|/tmp|/var|/var/tmp|"$repo"|"$repo"/*) echo "test: not removing $d" >&2; return 1 ;; esac
  if awk -v d="$d/" 'index($2 "/", d) == 1 { found = 1 } END { exit !found }' /proc/self/mounts; then
    echo "test: something is still mounted under $d; left in place (see /proc/self/mounts)" >&2
    return 1
  fi
  rm -rf --one-file-system -- "$d"
}
remove_chroots() {
  cleaned=1
  local d rc=0
  for d in "${made[@]}"; do
    if [ -e "$d" ]; then
      echo "test: removing $d (GPUCLEAN_KEEP_CHROOTS=1 keeps it)"
      remove_tree "$d" || rc=1
    fi
  done
  return "$rc"
}

on_exit() {
  local rc=$?
  if [ -n "$current" ]; then
    names+=("$current") seconds+=($((SECONDS - current_start))) results+=("INTERRUPTED (exit $rc)")
  fi
  # Interrupted or failed before the end: the chroots this run made go all the same.
  if [ "$cleaned" = 0 ] && [ ${#made[@]} -gt 0 ] && [ "${GPUCLEAN_KEEP_CHROOTS:-0}" != 1 ]; then
    remove_chroots || true
  fi
  summary
  exit "$rc"
}
trap on_exit EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

stage setup bash scripts/setup.sh
stage build bash scripts/build.sh
stage ctest run_ctest || true

if [ "${GPUCLEAN_TEST_CHROOTS:-1}" = 0 ]; then
  not_run "package (bookworm chroot)" "left out (GPUCLEAN_TEST_CHROOTS=0)"
  not_run "WSClean 3.6 (trixie chroot)" "left out (GPUCLEAN_TEST_CHROOTS=0)"
elif [ "$(id -u)" -ne 0 ]; then
  echo "test: the chroot stages (package, WSClean 3.6) need root; run as root to include them" \
       "(GPUCLEAN_TEST_CHROOTS=0 leaves them out)" >&2
  not_run "package (bookworm chroot)" "NOT RUN: needs root"
  not_run "WSClean 3.6 (trixie chroot)" "NOT RUN: needs root"
  exit 1
else
  [ -f "$bookworm/.debian-chroot-suite" ] || made+=("$bookworm" "$bookworm.test" "$bookworm.apt")
  [ -f "$trixie/.debian-chroot-suite" ] || made+=("$trixie")
  export GPUCLEAN_BOOKWORM_DIR=$bookworm GPUCLEAN_TRIXIE_DIR=$trixie
  stage "package (bookworm chroot)" bash scripts/test-package.sh || true
  stage "WSClean 3.6 (trixie chroot)" bash scripts/test-wsclean-trixie.sh || true
  if [ ${#made[@]} -eq 0 ]; then
    echo "test: reused the chroots $bookworm and $trixie, made before this run; they are kept"
  elif [ "${GPUCLEAN_KEEP_CHROOTS:-0}" = 1 ]; then
    cleaned=1
    echo "test: kept the chroots this run made (GPUCLEAN_KEEP_CHROOTS=1), reused by later runs: ${made[*]}"
  else
    stage "remove the chroots" remove_chroots || true
  fi
fi
[ "$failed_stages" -eq 0 ]
