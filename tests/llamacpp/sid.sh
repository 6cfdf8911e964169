#!/usr/bin/env bash
# Creates (or reuses) a Debian sid chroot with the real llama.cpp (libllama0, libggml0) and gguf-py,
# OUTSIDE the repository, at ${POSENC_SID_ROOT:-/var/tmp/posenc-sid}. The interop suite
# (llamacpp.test.mjs) runs its capture program and model writer inside it.
#
# Quick when the chroot is ready: a stamp file (ROOT/work/.posenc-sid-stamp) records the installed
# versions of libllama0, libggml0 and python3-gguf; when it exists and still holds and /proc is
# mounted, nothing else happens. Progress goes to stdout, its LAST line is ROOT.
# Exit 3 with ONE line on stderr (and nothing else there) when the chroot cannot be made (not
# root, no mirror, debootstrap or apt-get failed): the suite reports
# "llamacpp interop: SKIPPED <that line>". The logs of debootstrap / apt-get are kept in
# ROOT.log (next to ROOT) when they fail.
set -uo pipefail

ROOT=${POSENC_SID_ROOT:-/var/tmp/posenc-sid}
MIRROR=${POSENC_SID_MIRROR:-http://deb.debian.org/debian}
PACKAGES=(libllama0 libggml0 libllama-dev python3-gguf python3-numpy)
STAMP="$ROOT/work/.posenc-sid-stamp"
APT=(-o Acquire::Check-Valid-Until=false -o Acquire::Retries=3)

skip() { echo "$*" >&2; exit 3; }
log() { echo "sid.sh: $*"; }

[ "$(id -u)" -eq 0 ] || skip "not root (a Debian sid chroot needs root: debootstrap, chroot, mount)"
[ "$(uname -m)" = x86_64 ] || skip "host is $(uname -m), the chroot and the CPU variants are x86_64"
mkdir -p "$(dirname "$ROOT")" 2>/dev/null || skip "cannot create $(dirname "$ROOT")"

mount_proc() {
  mkdir -p "$ROOT/proc"
  if ! mountpoint -q "$ROOT/proc"; then
    mount -t proc proc "$ROOT/proc" || skip "cannot mount /proc in $ROOT (ggml reads /proc/cpuinfo)"
  fi
}

versions() {  # "libllama0=V libggml0=V python3-gguf=V" as dpkg inside the chroot knows them
  local out="" p v
  for p in libllama0 libggml0 python3-gguf; do
    v=$(chroot "$ROOT" dpkg-query -W -f='${Version}' "$p" 2>/dev/null) || return 1
    [ -n "$v" ] || return 1
    out+="$p=$v "
  done
  echo "${out% }"
}

# Fast path: stamp present and still true.
if [ -f "$STAMP" ] && [ -x "$ROOT/usr/bin/python3" ]; then
  mount_proc
  if [ "$(versions)" = "$(cat "$STAMP")" ]; then
    echo "$ROOT"
    exit 0
  fi
  log "stamp out of date, reinstalling"
fi

start=$(date +%s)
if [ ! -x "$ROOT/usr/bin/apt-get" ]; then
  if ! command -v debootstrap >/dev/null; then
    log "installing debootstrap on the host"
    { apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap; } >"$ROOT.log" 2>&1 \
      || skip "debootstrap is missing and apt-get could not install it (see $ROOT.log)"
  fi
  # A debootstrap that stopped half-way leaves ROOT unusable: start it again from nothing.
  if [ -d "$ROOT" ] && [ -n "$(ls -A "$ROOT" 2>/dev/null)" ]; then
    log "removing the incomplete chroot at $ROOT"
    umount "$ROOT/proc" 2>/dev/null
    mountpoint -q "$ROOT/proc" && skip "$ROOT/proc is still mounted, cannot remove the incomplete chroot"
    rm -rf --one-file-system "$ROOT"
  fi
  mkdir -p "$ROOT"
  log "debootstrap --variant=minbase sid $ROOT $MIRROR (a minute or two)"
  if ! debootstrap --variant=minbase sid "$ROOT" "$MIRROR" >"$ROOT.log" 2>&1; then
    reason=$(grep -E '^(E|W): ' "$ROOT.log" | tail -n1)
    skip "debootstrap sid from $MIRROR failed${reason:+: $reason} (see $ROOT.log)"
  fi
fi

cp -L /etc/resolv.conf "$ROOT/etc/resolv.conf" 2>/dev/null
mount_proc
mkdir -p "$ROOT/work"

log "apt-get install ${PACKAGES[*]}"
if ! { chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get "${APT[@]}" update \
       && chroot "$ROOT" env DEBIAN_FRONTEND=noninteractive apt-get "${APT[@]}" install -y --no-install-recommends "${PACKAGES[@]}"; } >"$ROOT.log" 2>&1; then
  reason=$(grep -E '^(E|W): ' "$ROOT.log" | tail -n1)
  skip "apt-get in the sid chroot failed${reason:+: $reason} (see $ROOT.log)"
fi
rm -f "$ROOT.log"
chroot "$ROOT" apt-get clean >/dev/null 2>&1

v=$(versions) || skip "the sid chroot has no libllama0/libggml0/python3-gguf after apt-get"
echo "$v" > "$STAMP"
log "ready in $(( $(date +%s) - start )) s: $v"
echo "$ROOT"
