#!/usr/bin/env bash
# npm test: bootstrap, build native (ASan + UBSan) and WASM, then every suite. Each runner's own
# summary stays in the output; the last line adds them up.
set -uo pipefail
cd "$(dirname "$0")/.."
bash scripts/bootstrap.sh || exit 1
bash scripts/build.sh all || exit 1

log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
run() {
  echo "==> $*"
  "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [ "$rc" -eq 0 ] || { echo "==> FAILED ($rc): $*"; status=1; }
}

run ctest --preset native-debug --verbose        # doctest, native
run ctest --preset wasm-release --verbose        # the same doctest suite as WASM SIMD128, in Node
run ctest --preset wasm-threads --verbose        # and again in the pthreads build, on two threads
run node --test tests/js/ tests/browser/ tests/consumers/  # package API; the explorer in Chromium; npm pack, Vite, webpack, tsc
# The real llama.cpp (Debian sid's libllama0 in a chroot outside the repo, made on first use as
# root; "llamacpp interop: SKIPPED ..." when it cannot be): every rope node of 20 GGUF models.
run node --test tests/llamacpp/
# The threaded build against the float64 twins and the conformance vectors (2 threads).
run env POSENC_TEST_THREADS=2 node --test tests/js/attention.test.mjs tests/js/conformance.test.mjs tests/js/rope.test.mjs
run node bench/run.mjs --smoke                   # the benchmark harness runs (tiny sizes, no timing judged)
run bash scripts/fuzz.sh 5                       # libFuzzer smoke: each target for 5 s (npm run fuzz: longer)

# doctest: "[doctest] test cases: 5 | 5 passed | 0 failed | 0 skipped"; node: "# pass N" / "# fail N";
# bench smoke: "bench: N passed, N failed" (its interop checks).
read -r passed failed < <(awk '
  /test cases:/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "passed") p += $i; if ($(i+1) == "failed") f += $i } }
  /^# pass [0-9]+$/ { p += $3 }
  /^# fail [0-9]+$/ { f += $3 }
  /^bench: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
  END { print p + 0, f + 0 }' "$log")
[ "${failed:-0}" -eq 0 ] || status=1
echo "summary: ${passed:-0} passed, ${failed:-0} failed"
exit $status
