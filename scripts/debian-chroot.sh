#!/usr/bin/env bash
# Makes and enters Debian chroots, so gpuclean can be built and tested against another Debian
# release (e.g. trixie's WSClean) or installed on a clean system, without touching the host.
#
#   debian-chroot.sh create SUITE DIR [PACKAGE ...]
#       debootstrap --variant=minbase SUITE into DIR (once; a stamp file marks a finished one),
#       then apt-get install the PACKAGEs that are not installed yet.
#   debian-chroot.sh run DIR [--bind HOSTDIR:CHROOTDIR[:ro] ...] -- COMMAND ...
#       mounts /proc, /dev, /dev/pts, /dev/shm, /sys (read-only) and the binds (read-only with :ro)
#       into DIR, runs COMMAND there in a clean environment, always unmounts, and exits with
#       COMMAND's status.
set -euo pipefail

mirror=${DEBIAN_CHROOT_MIRROR:-http://deb.debian.org/debian}
stamp_name=.debian-chroot-suite   # written last by create: its presence means debootstrap finished

usage() {
  echo "usage: $0 create SUITE DIR [PACKAGE ...] | $0 run DIR [--bind HOSTDIR:CHROOTDIR[:ro] ...] -- COMMAND ..." >&2
  exit 2
}

require_root() {
  if [ "$(id -u)" -ne 0 ]; then
    echo "$0: must run as root (debootstrap, mount and chroot need it); try: sudo $0 $*" >&2
    exit 1
  fi
}

# Runs apt-get inside the chroot without prompts; /proc and /dev are not needed for package installs.
chroot_apt() {
  local dir=$1; shift
  DEBIAN_FRONTEND=noninteractive LC_ALL=C chroot "$dir" apt-get -q -y \
    -o Dpkg::Use-Pty=0 "$@"
}

create() {
  [ $# -ge 2 ] || usage
  local suite=$1 dir=$2; shift 2
  case $suite in ''|*/*|-*) echo "$0: '$suite' is not a Debian suite name (e.g. bookworm, trixie)" >&2; exit 2 ;; esac
  require_root create "$suite" "$dir" "$@"
  local stamp="$dir/$stamp_name"
  if [ -f "$stamp" ]; then
    local have; have=$(cat "$stamp")
    if [ "$have" != "$suite" ]; then
      echo "$0: $dir already holds a '$have' chroot, not '$suite'; choose another DIR or remove it" >&2
      exit 1
    fi
  else
    if [ -e "$dir" ] && [ -n "$(ls -A "$dir" 2>/dev/null)" ] && [ ! -d "$dir/debootstrap" ]; then
      echo "$0: $dir exists, is not empty and is no unfinished chroot; choose an empty or new DIR" >&2
      exit 1
    fi
    if ! command -v debootstrap >/dev/null 2>&1; then
      echo "$0: installing debootstrap on the host" >&2
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap >&2
    fi
    # An interrupted debootstrap leaves DIR/debootstrap behind; starting over is the safe fix.
    if [ -d "$dir/debootstrap" ]; then
      echo "$0: $dir holds an unfinished debootstrap; starting it again" >&2
      find "$dir" -mindepth 1 -maxdepth 1 -exec rm -rf {} +
    fi
    mkdir -p "$dir"
    debootstrap --variant=minbase "$suite" "$dir" "$mirror"
    # Never start daemons from package scripts inside the chroot.
    printf '#!/bin/sh\nexit 101\n' > "$dir/usr/sbin/policy-rc.d"
    chmod 755 "$dir/usr/sbin/policy-rc.d"
    echo "$suite" > "$stamp"
  fi
  [ $# -gt 0 ] || return 0
  local missing=() p
  for p in "$@"; do
    chroot "$dir" dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then
    echo "$0: $dir ($suite) has all ${#@} packages" >&2
    return 0
  fi
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true
  chroot_apt "$dir" update
  chroot_apt "$dir" install --no-install-recommends "${missing[@]}"
  chroot_apt "$dir" clean
}

run() {
  [ $# -ge 1 ] || usage
  local args=("$@")
  local dir=$1; shift
  local binds=()
  while [ $# -gt 0 ] && [ "$1" != "--" ]; do
    case $1 in
      --bind)
        [ $# -ge 2 ] || usage
        case $2 in
          /*:/*:ro|/*:/*:rw|/*:/*) binds+=("$2") ;;
          *) echo "$0: --bind takes HOSTDIR:CHROOTDIR[:ro], both absolute paths (got '$2')" >&2; exit 2 ;;
        esac
        shift 2 ;;
      *) usage ;;
    esac
  done
  [ "${1:-}" = "--" ] || usage
  shift
  [ $# -ge 1 ] || usage
  require_root run "$dir"
  if [ ! -f "$dir/$stamp_name" ]; then
    echo "$0: $dir is no finished chroot; make it first with: $0 create SUITE $dir" >&2
    exit 1
  fi
  local b
  for b in "${binds[@]}"; do
    if [ ! -d "${b%%:*}" ]; then
      echo "$0: bind source ${b%%:*} is not a directory" >&2
      exit 2
    fi
  done

  # In a private mount namespace the mounts are invisible to the host and to concurrent runs on the
  # same DIR, and vanish with the process even if it is killed; the trap below unmounts them anyway.
  if [ -z "${DEBIAN_CHROOT_PRIVATE_NS:-}" ] && command -v unshare >/dev/null 2>&1; then
    exec unshare --mount --propagation private env DEBIAN_CHROOT_PRIVATE_NS=1 bash "$0" run "${args[@]}"
  fi

  # Mount points, in mount order; unmount walks them backwards. Recorded as they succeed, so a
  # failure half-way still unmounts exactly what was mounted.
  mounted=()
  unmount_all() {
    local i
    for ((i = ${#mounted[@]} - 1; i >= 0; i--)); do
      umount "${mounted[i]}" 2>/dev/null || umount -l "${mounted[i]}" ||
        echo "$0: could not unmount ${mounted[i]}" >&2
    done
    mounted=()
  }
  trap unmount_all EXIT
  trap 'exit 130' INT
  trap 'exit 143' TERM

  mount_into() {  # mount_into TARGET mount-args...
    local target=$1; shift
    mkdir -p "$target"
    # Outside a private namespace, mounting over a concurrent run's mounts would hide them.
    if [ -z "${DEBIAN_CHROOT_PRIVATE_NS:-}" ] && mountpoint -q "$target"; then
      echo "$0: $target is already mounted (a run without a private mount namespace in progress?); refusing to mount over it" >&2
      exit 1
    fi
    mount "$@" "$target"
    mounted+=("$target")
  }
  mount_into "$dir/proc" -t proc proc
  mount_into "$dir/dev" --bind /dev
  mount_into "$dir/dev/pts" --bind /dev/pts
  # /dev/shm (POSIX shared memory: Open MPI, Python's multiprocessing) is its own tmpfs, not in the
  # /dev bind; /sys read-only for hwloc (mpirun) and CPU counts.
  if mountpoint -q /dev/shm; then mount_into "$dir/dev/shm" -t tmpfs shm; fi
  mount_into "$dir/sys" --bind /sys
  mount -o remount,bind,ro "$dir/sys"
  local host target mode
  for b in "${binds[@]}"; do
    IFS=: read -r host target mode <<< "$b"
    mount_into "$dir$target" --bind "$host"
    # A bind mount only becomes read-only through a remount.
    [ "${mode:-rw}" != ro ] || mount -o remount,bind,ro "$dir$target"
  done
  cp /etc/resolv.conf "$dir/etc/resolv.conf" 2>/dev/null || true

  # A clean environment: the host's PATH, PYTHONPATH or LD_LIBRARY_PATH mean nothing in there.
  # Pass variables with: -- env NAME=VALUE COMMAND ...
  local rc=0
  env -i HOME=/root TERM="${TERM:-dumb}" LANG=C.UTF-8 LC_ALL=C.UTF-8 \
    PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin chroot "$dir" "$@" || rc=$?
  unmount_all
  return "$rc"
}

[ $# -ge 1 ] || usage
cmd=$1; shift
case $cmd in
  create) create "$@" ;;
  run) run "$@" ;;
  *) usage ;;
esac
