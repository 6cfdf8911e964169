#!/usr/bin/env bash
# npm run fuzz [-- SECONDS]: builds the libFuzzer targets (clang, ASan + UBSan) and runs each for
# SECONDS (default 60). A crash leaves its input in build/fuzz/artifacts/ and fails the run.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds="${1:-60}"
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
mkdir -p build/fuzz/artifacts build/fuzz/corpus-config build/fuzz/corpus-onnx build/fuzz/corpus-kernels \
  build/fuzz/corpus-gguf build/fuzz/corpus-safetensors build/fuzz/corpus-npy
# Seed the config fuzzer with the real presets' configs.
node -e "const p=require('./data/presets.json');p.presets.forEach((x,i)=>require('fs').writeFileSync('build/fuzz/corpus-config/preset'+i+'.json',JSON.stringify(x.config)))"
# Seed the model-file fuzzers with small real-shaped files (tests/js/model_writer.mjs), minus the
# prefix each target adds back (GGUF magic + version, .npy magic + version).
node --input-type=module -e "
import { writeFileSync } from 'node:fs';
import { gguf, safetensors, npy } from './tests/js/model_writer.mjs';
const g = gguf([['general.architecture', 'llama'], ['llama.embedding_length', { u32: 64 }], ['llama.attention.head_count', { u32: 2 }],
  ['llama.rope.scaling.type', 'yarn'], ['llama.rope.scaling.factor', { f32: 4 }]],
  [{ name: 'rope_freqs.weight', ne: [16], data: new Float32Array(16).fill(1) }, { name: 'position_embd.weight', ne: [4, 2], data: new Float32Array(8) }]);
writeFileSync('build/fuzz/corpus-gguf/seed', g.bytes.subarray(8));
writeFileSync('build/fuzz/corpus-safetensors/seed', safetensors({ 'wpe.weight': { shape: [2, 2], data: new Float32Array(4) } }));
writeFileSync('build/fuzz/corpus-npy/seed', npy(new Float32Array(6), 3, 2).subarray(8));
"
total_runs=0
for name in config onnx kernels gguf safetensors npy; do
  log="build/fuzz/fuzz_${name}.log"
  if ! build/fuzz/fuzz_${name} "build/fuzz/corpus-${name}" -max_total_time="$seconds" -print_final_stats=1 \
       -artifact_prefix=build/fuzz/artifacts/ >"$log" 2>&1; then
    tail -40 "$log"
    echo "fuzz_${name}: FAILED (input saved in build/fuzz/artifacts/)"
    exit 1
  fi
  runs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
  echo "fuzz_${name}: ${runs} executions in ${seconds} s, no findings"
  total_runs=$((total_runs + runs))
done
echo "fuzz: ${total_runs} executions, 0 findings"
