#!/usr/bin/env bash
# Builds posenc. `scripts/build.sh` builds everything npm test needs; `wasm` only the npm package
# (dist/: the single-threaded and the pthreads builds) and the benchmark's limits module;
# `wasm-tests` the doctest suite as WASM (both builds); `page` the explorer's production build
# (build/page/, from web/ and dist/: scripts/build-page.mjs); `native` only the native debug build
# (ASan + UBSan); `release` the native release build; `tsan` the doctest suite with ThreadSanitizer.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc 2>/dev/null || echo 2)

build() {  # build PRESET [TARGET...]: the preset's own targets when none is named
  local preset=$1
  shift
  cmake --preset "$preset" >/dev/null
  cmake --build --preset "$preset" -j "$jobs" ${1:+--target "$@"}
}

# Two builds side by side, each output shown whole after both end: Emscripten's links and binaryen's
# passes are serial, so one build alone leaves a core idle for much of its time.
# beside "PRESET [TARGET...]" "PRESET [TARGET...]"
beside() {
  local a b pa rc=0
  a=$(mktemp) b=$(mktemp)
  build $1 >"$a" 2>&1 &
  pa=$!
  build $2 >"$b" 2>&1 || rc=1
  wait "$pa" || rc=1
  cat "$a" "$b"
  rm -f "$a" "$b"
  return $rc
}

case "${1:-all}" in
  wasm) beside "wasm-release posenc_wasm posenc_bench_limits" "wasm-threads posenc_wasm_threads posenc_wasm_threads_node" ;;
  wasm-tests) beside "wasm-release posenc_tests" "wasm-threads posenc_tests" ;;
  page) node scripts/build-page.mjs ;;
  native) build native-debug ;;
  release) build native-release ;;
  tsan) build native-tsan posenc_tests ;;  # the layer runs only the doctest suite
  all) build native-debug && beside wasm-release wasm-threads ;;
  *) echo "usage: scripts/build.sh [all|wasm|wasm-tests|page|native|release|tsan]" >&2; exit 2 ;;
esac
