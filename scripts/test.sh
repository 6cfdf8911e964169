#!/usr/bin/env bash
# npm test: bootstrap, build native (ASan + UBSan) and WASM, then every suite. Each runner's own
# summary stays in the output; the last line adds them up.
#
# One layer alone (npm run test:LAYER, after its build; each builds what it needs, a no-op when up
# to date):
#   native     the C++ format check (scripts/format.sh), then the doctest suite, natively (ASan +
#              UBSan): every case on the best SIMD target, then the kernels subset on each lesser
#              target and on two threads (docs/contributing.md)
#   tsan       the kernels subset on two threads under ThreadSanitizer (any report fails it)
#   wasm       the doctest suite as WASM SIMD128 in Node: every case, then the kernels subset in the
#              pthreads build
#   js         the package API (node:test), then again through the threaded build
#   page       the explorer in headless Chromium (with the audit, but in the whole run)
#   audit      the page's audit alone (tests/browser/audit.test.mjs: Lighthouse, axe, long tasks)
#   consumers  npm pack, Vite, webpack, a plain page, tsc, a CMake consumer
#   llamacpp   the real llama.cpp in a Debian sid chroot (root; SKIPPED otherwise)
#   slurm      the lab's sweep in shards, merged, against one process: as plain processes, then as a
#              job array on a one-node Slurm cluster (root; SKIPPED otherwise)
#   bench      the benchmark harness at tiny sizes (no timing judged)
#   fuzz       each libFuzzer target for 5 s
#
# The whole run (no layer named) keeps both cores busy with three streams side by side; each
# stream's output is shown whole, one after the other:
#   1. the package's WASM builds (dist/ and the benchmark's limits module), then the page layer (the
#      browser keeps about one core busy), then tsan, at normal priority;
#   2. niced, from the start: slurm (after the native build it needs: it mostly waits on its
#      scheduler, so it goes early, while the other streams keep the cores busy), then native;
#   3. niced, once the package is built: js, then wasm (which builds the doctest suite as WASM),
#      consumers, llamacpp, bench and fuzz.
# Then, with nothing else running, the page's audit: its Lighthouse Performance and long tasks are
# benchmarks of an idle machine (issue 36's targets), which the streams beside it would measure instead.
#
# Nothing may hang the run past CI's 90 minutes. A node test file still running after
# POSENC_TEST_TIMEOUT s (900; the longest takes about 2 minutes) is stopped and fails under its own
# name ("test timed out"), and the layer goes on with the next; any command of a layer still running
# after POSENC_TEST_CAP s (1800; the longest, the page layer's, takes 6 to 10 minutes) is stopped and
# said to be ("TIMED OUT"), the lines above it showing where it stood.
set -uo pipefail
cd "$(dirname "$0")/.."
LAYERS=(native tsan wasm js page audit consumers llamacpp slurm bench fuzz)
layers=("$@")
whole=0
[ ${#layers[@]} -gt 0 ] || { layers=("${LAYERS[@]}"); whole=1; }
for l in "${layers[@]}"; do
  [[ " ${LAYERS[*]} " == *" $l "* ]] || { echo "usage: scripts/test.sh [${LAYERS[*]}]..." >&2; exit 2; }
done

bash scripts/bootstrap.sh || exit 1
log=$(mktemp)
trap 'rm -f "$log"' EXIT
status=0
CAP=${POSENC_TEST_CAP:-1800}
cap=()  # a layer's own commands run under the cap (set below); the whole run's streams, made of them, do not
run() {
  echo "==> $*"
  "${cap[@]}" "$@" 2>&1 | tee -a "$log"
  local rc=${PIPESTATUS[0]}
  [[ ${#cap[@]} -eq 0 || ( "$rc" -ne 124 && "$rc" -ne 137 ) ]] || echo "==> TIMED OUT after $CAP s: $*" | tee -a "$log"
  [ "$rc" -eq 0 ] || { echo "==> FAILED ($rc): $*"; status=1; }
  return "$rc"
}
# node --test: a file (and each test in it) that hangs fails after POSENC_TEST_TIMEOUT s, and a file
# whose tests have ended exits even if something (a browser that would not close) still holds it open.
NODE_TEST=(node --test --test-force-exit --test-timeout="$(( ${POSENC_TEST_TIMEOUT:-900} * 1000 ))")
# Two runs side by side (each keeps one of the two cores busy): `beside cmd...` starts one in the
# background with its output held apart; `joined` waits for them and shows each output in turn.
besides=()
beside() {
  local out
  out=$(mktemp)
  (log=$out.log; run "$@") >"$out" 2>&1 &
  besides+=("$!:$out")
}
joined() {
  local b
  for b in "${besides[@]}"; do
    wait "${b%%:*}" || status=1
    cat "${b#*:}"
    cat "${b#*:}.log" >>"$log" 2>/dev/null
    rm -f "${b#*:}" "${b#*:}.log"
  done
  besides=()
}
built=" ${POSENC_TEST_BUILT:-} "  # the whole run's streams: what the run built before them
need() {  # builds once per run: native | tsan | wasm (the package) | wasm-tests | page (the explorer's production build)
  [[ "$built" == *" $1 "* ]] && return 0
  bash scripts/build.sh "$1" || exit 1
  built+="$1 "
}

if [ $whole -eq 1 ]; then
  layers=()
  beside nice -n 10 bash scripts/test.sh slurm native
  if run bash scripts/build.sh wasm; then
    beside env POSENC_TEST_BUILT=wasm nice -n 10 bash scripts/test.sh js wasm consumers llamacpp bench fuzz
    run env POSENC_TEST_BUILT=wasm POSENC_AUDIT_APART=1 bash scripts/test.sh page
  fi
  run bash scripts/test.sh tsan  # the page leaves room: without this, tsan alone ended the run
  joined
  run env POSENC_TEST_BUILT="wasm page" bash scripts/test.sh audit  # alone, last: see the header
  echo "==> the whole run: $SECONDS s"
fi

cap=(timeout --kill-after=30 "$CAP")
for l in "${layers[@]}"; do
  start=$SECONDS
  case "$l" in
    native) need native
      run bash scripts/format.sh                         # the C++ tree as .clang-format says
      # The runs side by side: each doctest run but one is single-threaded.
      run ctest --preset native-debug --verbose -j "$(nproc 2>/dev/null || echo 2)" ;;
    tsan) need tsan
      # halt_on_error: the first report ends the run with TSan's exit code (66). The subset of the
      # cases that run kernels or the pool: the others run on one thread, with nothing to race.
      run env TSAN_OPTIONS=halt_on_error=1 ./build/native-tsan/posenc_tests --no-colors=true --posenc-threads=2 \
        --posenc-subset=kernels ;;
    wasm) need wasm-tests
      beside ctest --preset wasm-release --verbose       # the same doctest suite as WASM SIMD128, in Node
      beside ctest --preset wasm-threads --verbose       # and again in the pthreads build, on two threads
      joined ;;
    js) need wasm
      run "${NODE_TEST[@]}" --test-concurrency=2 tests/js/    # two files at a time: most use one core
      # The threaded build against the float64 twins and the conformance vectors (2 threads); the
      # bias terms' attention checks are in their schemes' suites (bias_terms.mjs).
      run env POSENC_TEST_THREADS=2 "${NODE_TEST[@]}" tests/js/attention.test.mjs tests/js/conformance.test.mjs \
        tests/js/kv_cache.test.mjs tests/js/rope.test.mjs tests/js/alibi.test.mjs tests/js/t5.test.mjs ;;
    page) need wasm
      need page                                          # the browser files drive the page as npm start serves it
      # One file at a time: the browser keeps about one core busy by itself, so two at once would only
      # take CPU from the other streams (docs/contributing.md). What the files print (the lab's times,
      # long tasks, Lighthouse's Performance) depends on what else runs; none is judged. The whole run
      # leaves the audit out here (POSENC_AUDIT_APART) and runs it last, alone.
      files=()
      for f in tests/browser/*.test.mjs; do
        [[ -n "${POSENC_AUDIT_APART:-}" && "$f" == */audit.test.mjs ]] || files+=("$f")
      done
      run "${NODE_TEST[@]}" --test-concurrency=1 "${files[@]}" ;;
    audit) need wasm
      need page
      run "${NODE_TEST[@]}" tests/browser/audit.test.mjs ;;
    consumers) need wasm
      run "${NODE_TEST[@]}" tests/consumers/ ;;
    llamacpp) need wasm
      run "${NODE_TEST[@]}" tests/llamacpp/ ;;
    slurm) need native
      run "${NODE_TEST[@]}" tests/slurm/ ;;
    bench) need wasm
      run node bench/run.mjs --smoke ;;
    fuzz)
      run bash scripts/fuzz.sh 5 ;;
  esac
  echo "==> layer $l: $((SECONDS - start)) s (its builds included)"
done

# doctest: "[doctest] test cases: 5 | 5 passed | 0 failed | 0 skipped" (and "posenc probe: FAILED: …",
# a case outside the kernels subset that ran kernels); node: "# pass N" / "# fail N";
# bench smoke: "bench: N passed, N failed" (its interop checks); a file or command stopped for taking
# too long counts as one failure ("# cancelled N", "==> TIMED OUT").
read -r passed failed < <(awk '
  /test cases:/ { for (i = 1; i <= NF; i++) { if ($(i+1) == "passed") p += $i; if ($(i+1) == "failed") f += $i } }
  /^posenc probe: FAILED/ { f += 1 }
  /^format: FAILED/ { f += 1 }
  /^# pass [0-9]+$/ { p += $3 }
  /^# fail [0-9]+$/ { f += $3 }
  /^# cancelled [0-9]+$/ { f += $3 }
  /^==> TIMED OUT/ { f += 1 }
  /^bench: [0-9]+ passed, [0-9]+ failed$/ { p += $2; f += $4 }
  END { print p + 0, f + 0 }' "$log")
[ "${failed:-0}" -eq 0 ] || status=1
echo "summary: ${passed:-0} passed, ${failed:-0} failed"
exit $status
