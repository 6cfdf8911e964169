#!/usr/bin/env bash
# Installs what posenc needs on Debian 12, and only what is missing; then `npm ci`.
# Idempotent: a quick no-op when everything is there. See ../shared/TOOLCHAIN.md for why each piece.
set -euo pipefail
cd "$(dirname "$0")/.."

missing_apt=()      # Debian 12 packages
need_xsimd=0        # libxsimd-dev >= 13 from Debian 13 (trixie), low-priority pin

have_cmd() { command -v "$1" >/dev/null 2>&1; }
have_cmd cmake || missing_apt+=(cmake)
have_cmd g++ || missing_apt+=(g++)
have_cmd clang++ || missing_apt+=(clang)                                  # fuzz targets (libFuzzer)
have_cmd clang-format-14 || missing_apt+=(clang-format-14)                # scripts/format.sh
ls /usr/lib/llvm-14/lib/clang/*/lib/linux/libclang_rt.fuzzer-x86_64.a >/dev/null 2>&1 || missing_apt+=(libclang-rt-14-dev) # libFuzzer and TSan runtimes
have_cmd emcc || missing_apt+=(emscripten)
[ -f /usr/include/doctest/doctest.h ] || missing_apt+=(doctest-dev)
[ -f /usr/include/nlohmann/json.hpp ] || missing_apt+=(nlohmann-json3-dev)
[ -f /usr/include/benchmark/benchmark.h ] || missing_apt+=(libbenchmark-dev)      # native benchmarks
[ -x /usr/bin/chromium ] || missing_apt+=(chromium)
[ -f /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf ] || missing_apt+=(fonts-dejavu-core)
# test:slurm's one-node cluster (scripts/slurm-cluster.sh). It runs only as root, so without root
# their absence is not an error: the layer says SKIPPED.
if [ "$(id -u)" -eq 0 ]; then
  for p in munge slurmctld slurmd slurm-client; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing_apt+=("$p")
  done
fi

xsimd_major() {
  local f=/usr/include/xsimd/config/xsimd_config.hpp
  [ -f "$f" ] && sed -n 's/^#define XSIMD_VERSION_MAJOR \([0-9]*\).*/\1/p' "$f" || echo 0
}
[ "$(xsimd_major)" -ge 13 ] || need_xsimd=1

if [ ${#missing_apt[@]} -gt 0 ] || [ $need_xsimd -eq 1 ]; then
  if [ "$(id -u)" -ne 0 ]; then
    echo "bootstrap: missing: ${missing_apt[*]} $([ $need_xsimd -eq 1 ] && echo 'libxsimd-dev>=13')" >&2
    echo "bootstrap: run as root (or install them): sudo scripts/bootstrap.sh" >&2
    exit 1
  fi
  export DEBIAN_FRONTEND=noninteractive
  if [ $need_xsimd -eq 1 ] && [ ! -f /etc/apt/sources.list.d/debian-trixie.sources ]; then
    echo "bootstrap: adding Debian 13 (trixie) at pin priority 100, for libxsimd-dev only"
    cat > /etc/apt/sources.list.d/debian-trixie.sources <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: trixie
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
    cat > /etc/apt/preferences.d/trixie-low <<'PIN'
Package: *
Pin: release n=trixie
Pin-Priority: 100
PIN
  fi
  apt-get update -q
  if [ ${#missing_apt[@]} -gt 0 ]; then
    echo "bootstrap: apt-get install ${missing_apt[*]}"
    apt-get install -y -q --no-install-recommends "${missing_apt[@]}"
  fi
  if [ $need_xsimd -eq 1 ]; then
    echo "bootstrap: apt-get install -t trixie libxsimd-dev"
    apt-get install -y -q --no-install-recommends -t trixie libxsimd-dev
  fi
fi

# npm dependencies: `npm ci` when node_modules is missing or older than the lock file.
if [ ! -f node_modules/.package-lock.json ] || [ package-lock.json -nt node_modules/.package-lock.json ]; then
  echo "bootstrap: npm ci"
  npm ci --no-audit --no-fund --ignore-scripts
fi
