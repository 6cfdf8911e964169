// npm run bench: posenc (WASM SIMD) against plain JS and onnxruntime (web: WASM, 1 thread; node:
// native, 1 thread; then all of them with 2 threads, bench/threads.mjs; decoding against a KV cache
// on 1 and 2 threads, bench/decode.mjs), interleaved in one Node process after warm-up, with the machine's measured
// limits (a WASM memcpy of the same bytes, a register-only SIMD multiply-add loop) beside them.
// Reports medians, ratios and throughput, then checks that the outputs agree.
//   node bench/run.mjs            the full table (a few minutes)
//   node bench/run.mjs --smoke    tiny sizes, one round: proves it runs (npm test); no timings judged
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import os from 'node:os';
import { init } from 'posenc';
import * as ortWeb from 'onnxruntime-web';
import { decodeReport } from './decode-report.mjs';
import { labBench } from './lab.mjs';
import { measure, median } from './measure.mjs';
import { pageBench } from './page.mjs';
import { FLOAT_KV, HALF_KV, attentionCase, attentionHalfCase, ropeCase, sinusoidalCase } from './ops/cases.mjs';

const smoke = process.argv.includes('--smoke');
const pe = await init();
ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = 'error';
const runtimes = { 'onnxruntime-web': { ort: ortWeb, ep: 'wasm' } };
let ortNode = null;
try {
  ortNode = await import('onnxruntime-node');
  runtimes['onnxruntime-node'] = { ort: ortNode, ep: 'cpu' };
} catch (e) {
  console.log(`(onnxruntime-node not available: ${e.message.split('\n')[0]})`);
}
const webOnly = { 'onnxruntime-web': runtimes['onnxruntime-web'] };
const limits = await createRequire(import.meta.url)('../build/wasm-release/posenc_bench_limits.cjs')();

function memcpyContender(bytes) {
  const src = limits.allocBytes(bytes), dst = limits.allocBytes(bytes);
  limits.simdPass(src, dst, bytes);  // write src's pages: never written, they read as the shared zero page
  return {
    run: () => limits.copyBytes(dst, src, bytes),
    pass: () => limits.simdPass(dst, src, bytes),
    free: () => { limits.freeBytes(src); limits.freeBytes(dst); },
  };
}

// GFLOP/s of the register-only loop: 8 f32x4 operations = 32 flops per iteration.
function maddPeak() {
  const iterations = smoke ? 1e5 : 2e7;
  limits.maddLoop(1e5);
  const times = [];
  for (let r = 0; r < (smoke ? 1 : 5); r++) {
    const t0 = performance.now();
    limits.maddLoop(iterations);
    times.push(performance.now() - t0);
  }
  return (iterations * 32) / (median(times) * 1e6);
}

const rows = [];
const checks = [];
const fmt = (ms) => (ms >= 100 ? ms.toFixed(0) : ms >= 10 ? ms.toFixed(1) : ms.toFixed(2));

async function runCase(title, c, { warmup, rounds }) {
  const timings = await measure(c.contenders, { warmup, rounds });
  const ortMs = timings['onnxruntime-web'], plainMs = timings['plain JS'];
  for (const [name, ms] of Object.entries(timings)) {
    const throughput = c.bytes ? `${((c.bytes * 2) / (ms * 1e6)).toFixed(2)} GB/s moved` : c.flops ? `${(c.flops / (ms * 1e6)).toFixed(2)} GFLOP/s` : '';
    rows.push({ title, name, ms, vsOrt: ortMs ? ortMs / ms : null, vsPlain: plainMs ? plainMs / ms : null, throughput });
  }
  const diffs = await c.check();
  for (const [what, diff] of Object.entries(diffs)) checks.push({ title, what, diff });
  c.dispose();
  return timings;
}

const peak = maddPeak();
const sizes = smoke
  ? { rope: [16], attention: [16], attentionHalf: [16], sinusoidal: [16] }
  : { rope: [128, 512, 2048], attention: [128, 512, 1024], attentionHalf: [4096], sinusoidal: [2048] };
const plan = smoke ? { warmup: 1, rounds: 1 } : { warmup: 3, rounds: 9 };
const slow = smoke ? plan : { warmup: 1, rounds: 3 };
const results = {};

const MEMCPY = 'limit: WASM memcpy of the same bytes';
const PASS = 'limit: one SIMD128 load-add-store pass over the bytes';
const FRESH = 'limit: a new Float32Array of the result, filled from another (JS)';
async function memcpyRow(title, bytes, into) {
  const m = memcpyContender(bytes);
  const source = new Float32Array(bytes / 4);
  const t = await measure({ [MEMCPY]: m.run, [PASS]: m.pass, [FRESH]: () => new Float32Array(source.length).set(source) }, plan);
  m.free();
  for (const [name, ms] of Object.entries(t)) {
    into[name] = ms;
    rows.push({ title, name, ms, vsOrt: null, vsPlain: null, throughput: `${((bytes * 2) / (ms * 1e6)).toFixed(2)} GB/s moved` });
  }
}

for (const S of sizes.rope) {
  const title = `RoPE [1, 32, ${S}, 128] half-split`;
  const c = await ropeCase({ pe, runtimes: webOnly, S });
  results[`rope ${S}`] = await runCase(title, c, plan);
  await memcpyRow(title, c.bytes, results[`rope ${S}`]);
}
for (const alibi of [false, true]) {
  for (const S of sizes.attention) {
    const c = await attentionCase({ pe, runtimes: alibi ? webOnly : runtimes, S, alibi, plain: !alibi || smoke });
    const timings = await runCase(`causal attention${alibi ? ' + ALiBi' : ''} [1, 8, ${S}, 64]`, c, alibi || S !== 1024 ? plan : slow);
    const limitMs = c.flops / (peak * 1e6);
    rows.push({ title: `causal attention${alibi ? ' + ALiBi' : ''} [1, 8, ${S}, 64]`, name: 'limit: the same FLOPs at the register multiply-add peak', ms: limitMs, vsOrt: timings['onnxruntime-web'] / limitMs, vsPlain: null, throughput: `${peak.toFixed(2)} GFLOP/s` });
    results[`attention${alibi ? '+alibi' : ''} ${S}`] = timings;
  }
}
// float16 K/V (kvDtype 'float16') against float32 K/V holding the same values, the same call
// otherwise: posenc only, long enough (S = 4096) that the K/V packing is a small part.
for (const S of sizes.attentionHalf) {
  results[`attention f16 ${S}`] = await runCase(`causal attention float16 K/V, [1, 8, ${S}, 64]`, await attentionHalfCase({ pe, S }), plan);
}

// Native posenc (Google Benchmark binary, build/native-release), once per SIMD target, next to
// onnxruntime-node measured above in this session.
const nativeBench = new URL('../build/native-release/posenc_bench', import.meta.url).pathname;
const native = {};
if (!smoke && existsSync(nativeBench)) {
  const S = 1024;
  for (const simd of ['sse2', 'sse4.2', 'fma3+avx2', 'avx512f']) {
    const out = JSON.parse(execFileSync(nativeBench, [`--benchmark_filter=CausalAttention/${S}/0$`, '--benchmark_format=json',
      '--benchmark_repetitions=5', '--benchmark_report_aggregates_only=true'], { env: { ...process.env, POSENC_SIMD: simd } }));
    if (out.context.posenc_simd !== simd) continue;  // this CPU does not run it
    const ms = out.benchmarks.find((b) => b.aggregate_name === 'median').real_time;
    native[simd] = ms;
    const key = `attention ${S}`;
    rows.push({ title: `causal attention [1, 8, ${S}, 64]`, name: `posenc native C++ (${simd}, runtime dispatch)`, ms, vsOrt: results[key]['onnxruntime-web'] / ms, vsPlain: results[key]['plain JS'] / ms,
      throughput: `${((2 * 2 * 8 * 64 * (S * (S + 1)) / 2) / (ms * 1e6)).toFixed(2)} GFLOP/s; ${(results[key]['onnxruntime-node'] / ms).toFixed(2)}× onnxruntime-node` });
  }
} else if (!smoke) {
  console.log('(no native benchmark: build/native-release/posenc_bench is missing; scripts/build.sh release builds it)');
}

// Native float16 K/V against float32 K/V (CausalAttentionHalf/4096/{1,0}), the best SIMD target,
// the two interleaved at random; CPU time (one thread: on this shared machine the wall time of a
// native run also counts the neighbours).
const nativeHalf = {};
if (!smoke && existsSync(nativeBench)) {
  const out = JSON.parse(execFileSync(nativeBench, ['--benchmark_filter=CausalAttentionHalf/4096/', '--benchmark_format=json',
    '--benchmark_repetitions=5', '--benchmark_enable_random_interleaving=true', '--benchmark_report_aggregates_only=true']));
  for (const b of out.benchmarks.filter((x) => x.aggregate_name === 'median')) {
    const half = b.run_name.endsWith('/1');
    nativeHalf[half ? 'half' : 'float'] = b.cpu_time;
    rows.push({ title: 'causal attention float16 K/V, [1, 8, 4096, 64]', name: `posenc native C++ (${out.context.posenc_simd}), ${half ? 'float16' : 'float32'} K/V, CPU time`,
      ms: b.cpu_time, vsOrt: null, vsPlain: null, throughput: `${((2 * 2 * 8 * 64 * (4096 * 4097) / 2) / (b.cpu_time * 1e6)).toFixed(2)} GFLOP/s` });
  }
}

// Two threads (bench/threads.mjs, its own process: onnxruntime-web's thread count is fixed per
// process), and native posenc with two threads against onnxruntime-node with two.
const threaded = JSON.parse(execFileSync(process.execPath, [new URL('./threads.mjs', import.meta.url).pathname, ...(smoke ? ['--smoke'] : [])],
  { encoding: 'utf8', maxBuffer: 1 << 24 }));
for (const { title, timings } of threaded.rows) {
  const ortMs = timings['onnxruntime-web, 2 threads'];
  for (const [name, ms] of Object.entries(timings)) rows.push({ title: `${title}, 2 threads`, name, ms, vsOrt: ortMs ? ortMs / ms : null, vsPlain: null, throughput: '' });
  results[`${title}, 2 threads`] = timings;
}
for (const c of threaded.checks) checks.push(c);
// Decoding against a KV cache (bench/decode.mjs, once per thread count, each its own process).
const decode = decodeReport({ smoke });
rows.push(...decode.rows);
checks.push(...decode.checks);
const nativeThreads = {}, nativeLabThreads = {};
if (!smoke && existsSync(nativeBench)) {
  // The lab's training step on 1 and 2 threads (wall time: the threads' work together).
  const lab = JSON.parse(execFileSync(nativeBench, ['--benchmark_filter=LabTrainStepThreads/[12]/', '--benchmark_format=json',
    '--benchmark_repetitions=5', '--benchmark_enable_random_interleaving=true', '--benchmark_report_aggregates_only=true']));
  for (const b of lab.benchmarks.filter((x) => x.aggregate_name === 'median')) {
    const n = Number(b.run_name.split('/')[1]);
    nativeLabThreads[n] = b.real_time;
    rows.push({ title: 'lab training step (rope, default model), 2 threads', name: `posenc native C++ (${lab.context.posenc_simd}), ${n} thread${n > 1 ? 's' : ''}`,
      ms: b.real_time, vsOrt: null, vsPlain: null, throughput: `${(1000 / b.real_time).toFixed(1)} steps/s` });
  }
  const out = JSON.parse(execFileSync(nativeBench, ['--benchmark_filter=CausalAttentionThreads/1024/[12]/', '--benchmark_format=json',
    '--benchmark_repetitions=5', '--benchmark_report_aggregates_only=true']));
  for (const b of out.benchmarks.filter((x) => x.aggregate_name === 'median')) {
    const n = Number(b.run_name.split('/')[2]);
    nativeThreads[n] = b.real_time;
    const ortNodeMs = results['causal attention [1, 8, 1024, 64], 2 threads']['onnxruntime-node, 2 threads'];
    rows.push({ title: 'causal attention [1, 8, 1024, 64], 2 threads', name: `posenc native C++ (${out.context.posenc_simd}), ${n} thread${n > 1 ? 's' : ''}`,
      ms: b.real_time, vsOrt: results['causal attention [1, 8, 1024, 64], 2 threads']['onnxruntime-web, 2 threads'] / b.real_time, vsPlain: null,
      throughput: ortNodeMs ? `${(ortNodeMs / b.real_time).toFixed(2)}× onnxruntime-node, 2 threads` : '' });
  }
}

for (const S of sizes.sinusoidal) {
  const title = `sinusoidal table [${S}, 128]`;
  const c = await sinusoidalCase({ pe, S });
  results[`sinusoidal ${S}`] = await runCase(title, c, plan);
  await memcpyRow(title, c.bytes, results[`sinusoidal ${S}`]);
}

// The lab's training step (bench/lab.mjs): posenc against the same model in TensorFlow.js, from
// the same weights on the same batch; natively from the Google Benchmark binary, per SIMD target.
const nativeLab = {};
if (!smoke && existsSync(nativeBench)) {
  for (const simd of ['sse2', 'sse4.2', 'fma3+avx2', 'avx512f']) {
    const out = JSON.parse(execFileSync(nativeBench, ['--benchmark_filter=LabTrainStep$', '--benchmark_format=json',
      '--benchmark_repetitions=5', '--benchmark_report_aggregates_only=true'], { env: { ...process.env, POSENC_SIMD: simd } }));
    if (out.context.posenc_simd !== simd) continue;
    // CPU time (one thread): on this shared machine the wall time of a run that is not interleaved
    // with the others also counts the neighbours; on an idle machine the two are equal.
    nativeLab[simd] = out.benchmarks.find((b) => b.aggregate_name === 'median').cpu_time;
  }
}
const lab = await labBench({ pe, smoke, peak, native: nativeLab });
const L = lab.config;
for (const c of lab.checks) checks.push({ title: `lab training step (${lab.scheme})`, ...c });
const redraw = await pageBench({ smoke });
checks.push({ title: 'explorer drag (headless Chromium)', what: `console errors, failed requests (${redraw.problems.join('; ') || 'none'})`, diff: redraw.problems.length, tol: 0 });

// ---- report ---------------------------------------------------------------------------------------
const cpu = os.cpus()[0]?.model ?? 'unknown CPU';
console.log(`\nposenc benchmark${smoke ? ' (smoke: tiny sizes, one round; timings mean nothing)' : ''} — ${new Date().toISOString().slice(0, 10)}, ` +
  `Node ${process.version}, ${cpu}, ${os.cpus().length} cores; one thread unless a row says 2; medians.`);
console.log(`register-only SIMD128 multiply-add peak: ${peak.toFixed(2)} GFLOP/s\n`);
console.log('| op | contender | median ms | × vs onnxruntime-web | × vs plain JS | throughput |');
console.log('|---|---|---:|---:|---:|---|');
for (const r of rows) {
  console.log(`| ${r.title} | ${r.name} | ${fmt(r.ms)} | ${r.vsOrt ? r.vsOrt.toFixed(2) : ''} | ${r.vsPlain ? r.vsPlain.toFixed(2) : ''} | ${r.throughput} |`);
}

const labRow = (prefix) => lab.rows.find((r) => r.name.startsWith(prefix));
const labWasm = labRow('tfjs-backend-wasm (setThreadsCount(1))'), labWasmT = labRow('tfjs-backend-wasm, gradients'), labCpu = labRow('tfjs cpu');
const posencLab = labRow('posenc WASM');
console.log(`\nLab training step (forward, backward, clip, AdamW): scheme ${lab.scheme}, vocab ${L.vocabSize}, d_model ${L.dModel}, ` +
  `n_layers ${L.nLayers}, n_heads ${L.nHeads}, batch [${L.batch}][${L.trainLength}]; ${(lab.flops / 1e9).toFixed(3)} GFLOP per step (matrix products).\n`);
console.log('| contender | ms / step | steps/s | × vs tfjs wasm | × vs tfjs wasm, explicit transposes | × vs tfjs cpu | GFLOP/s | of the WASM register peak |');
console.log('|---|---:|---:|---:|---:|---:|---:|---:|');
for (const r of lab.rows) {
  console.log(`| ${r.name} | ${fmt(r.ms)} | ${r.stepsPerSecond.toFixed(1)} | ${(labWasm.ms / r.ms).toFixed(2)} | ${(labWasmT.ms / r.ms).toFixed(2)} | ${(labCpu.ms / r.ms).toFixed(2)} | ` +
    `${r.gflops.toFixed(2)} | ${r.name.includes('native') ? '' : `${((100 * r.gflops) / peak).toFixed(0)} %`} |`);
}

console.log(`\nExplorer: a drag of the base slider, sinusoidal heatmap at head_dim 128, seq_len 2048 (headless Chromium), ${redraw.frames} redraws:`);
console.log(`  the page's redraw: median ${fmt(redraw.page.median)} ms, p95 ${fmt(redraw.page.p95)} ms; plain JS (Math.sin table, LUT, putImageData): median ${fmt(redraw.plain.median)} ms, p95 ${fmt(redraw.plain.p95)} ms`);

console.log('\nInterop: largest |difference| between outputs (must be <= 1e-5; lab lines: relative, at most the tolerance shown)');
let bad = 0;
for (const c of checks) {
  const tol = c.tol ?? 1e-5;
  const ok = c.diff <= tol;
  bad += ok ? 0 : 1;
  console.log(`  ${ok ? 'ok ' : 'BAD'} ${c.title}: ${c.what}: ${c.diff.toExponential(2)}${c.tol ? ` (tolerance ${c.tol.toExponential(0)})` : ''}`);
}

if (!smoke) {
  const r = (key, a, b) => results[key][b] / results[key][a];
  const targets = [
    ['RoPE S=2048, copying API ≥ 3× onnxruntime-web', r('rope 2048', 'posenc applyRope (copies in and out)', 'onnxruntime-web'), 3],
    ['RoPE S=2048, copying API ≥ 1.2× plain JS', r('rope 2048', 'posenc applyRope (copies in and out)', 'plain JS'), 1.2],
    ['RoPE S=2048, in-heap ≥ 3× plain JS', r('rope 2048', 'posenc applyRopeInPlace (data in the heap)', 'plain JS'), 3],
    ['RoPE S=2048, in-heap within 1.5× of memcpy (ratio memcpy/in-heap ≥ 0.67)', r('rope 2048', 'posenc applyRopeInPlace (data in the heap)', MEMCPY), 1 / 1.5],
    ['(context) RoPE S=2048, in-heap vs one SIMD load-add-store pass', r('rope 2048', 'posenc applyRopeInPlace (data in the heap)', PASS), null],
    ['(context) RoPE S=2048, copying API vs just allocating and filling its result array', r('rope 2048', 'posenc applyRope (copies in and out)', FRESH), null],
    // onnxruntime gets heads-major [1, H, S, D]; posenc with the same inputs is the bhsd call.
    ['causal attention S=1024, the same heads-major inputs (layout bhsd) ≥ 2× onnxruntime-web', r('attention 1024', 'posenc attention (bhsd)', 'onnxruntime-web'), 2],
    ['(context) causal attention S=1024, token-major q/k/v (posenc\'s default layout)', r('attention 1024', 'posenc attention', 'onnxruntime-web'), null],
    ['causal attention + ALiBi S=1024, heads-major (layout bhsd) ≥ 2.5× onnxruntime-web', r('attention+alibi 1024', 'posenc attention (bhsd)', 'onnxruntime-web'), 2.5],
    ['(context) causal attention + ALiBi S=1024, token-major q/k/v', r('attention+alibi 1024', 'posenc attention', 'onnxruntime-web'), null],
    ['sinusoidal [2048, 128] ≥ 4× plain JS', r('sinusoidal 2048', 'posenc sinusoidal', 'plain JS'), 4],
  ];
  const bestNative = Object.entries(native).pop();
  if (bestNative && results['attention 1024']['onnxruntime-node']) {
    targets.push([`native attention S=1024 (${bestNative[0]}) ≥ 1.5× onnxruntime-node`, results['attention 1024']['onnxruntime-node'] / bestNative[1], 1.5]);
  }
  if (results['attention 1024']['onnxruntime-node']) {
    targets.push(['(native reference) posenc WASM vs onnxruntime-node, causal S=1024', r('attention 1024', 'posenc attention', 'onnxruntime-node'), null]);
  }
  targets.push(['causal attention float16 K/V S=4096 no slower than float32 K/V (issue #15: ratio ≥ 1)', r('attention f16 4096', HALF_KV, FLOAT_KV), 1]);
  if (nativeHalf.half && nativeHalf.float) {
    targets.push(['(context) native causal attention S=4096, float16 K/V vs float32 K/V', nativeHalf.float / nativeHalf.half, null]);
  }
  const t2 = results['causal attention [1, 8, 1024, 64], 2 threads'];
  targets.push(['causal attention S=1024, 2 threads, the same heads-major inputs (bhsd) ≥ 2× onnxruntime-web with 2 threads', t2['onnxruntime-web, 2 threads'] / t2['posenc attention (bhsd), 2 threads'], 2]);
  targets.push(['(context) causal attention S=1024, 2 threads, token-major q/k/v', t2['onnxruntime-web, 2 threads'] / t2['posenc attention, 2 threads'], null]);
  targets.push(['causal attention S=1024, posenc 2 threads ≥ 1.7× posenc 1 thread', t2['posenc attention, 1 thread'] / t2['posenc attention, 2 threads'], 1.7]);
  targets.push(['(context) onnxruntime-web 2 threads vs its 1 thread (the 1-thread run above)', results['attention 1024']['onnxruntime-web'] / t2['onnxruntime-web, 2 threads'], null]);
  if (nativeThreads[2] && t2['onnxruntime-node, 2 threads']) {
    targets.push(['native attention S=1024, 2 threads ≥ 1.5× onnxruntime-node with 2 threads', t2['onnxruntime-node, 2 threads'] / nativeThreads[2], 1.5]);
    targets.push(['(context) native attention, 2 threads vs 1 thread', nativeThreads[1] / nativeThreads[2], null]);
  }
  const labT = Object.entries(results).find(([title]) => title.startsWith('lab training step ('))?.[1];
  if (labT) targets.push(['lab training step, posenc WASM 2 threads ≥ 1.6× 1 thread (issue #22)', labT['posenc lab, 1 thread'] / labT['posenc lab, 2 threads'], 1.6]);
  if (nativeLabThreads[1] && nativeLabThreads[2]) {
    targets.push(['lab training step, native 2 threads ≥ 1.6× 1 thread (issue #22)', nativeLabThreads[1] / nativeLabThreads[2], 1.6]);
  }
  const rope2 = results['RoPE [1, 32, 2048, 128] half-split, 2 threads'];
  targets.push(['(context) RoPE S=2048 onnx.rotaryEmbedding into out, 2 threads vs 1 thread',
    results['rope 2048']['posenc onnx.rotaryEmbedding (cache given, into out)'] / rope2['posenc onnx.rotaryEmbedding (cache given, into out), 2 threads'], null]);
  targets.push([`lab training step (${lab.scheme}, default model) ≥ 2× tfjs-backend-wasm (1 thread)`, labWasm.ms / posencLab.ms, 2]);
  targets.push([`lab training step ≥ 2× tfjs-backend-wasm with gradients through explicit transposes (its fastest form here)`, labWasmT.ms / posencLab.ms, 2]);
  targets.push(['(context) lab training step, posenc WASM GFLOP/s / the WASM register multiply-add peak', posencLab.gflops / peak, null]);
  targets.push(['(context) lab training step vs tfjs cpu backend', labCpu.ms / posencLab.ms, null]);
  targets.push(['explorer redraw during a drag, p95 within a 60 Hz frame (16 ms / p95 ≥ 1)', 16 / redraw.page.p95, 1]);
  targets.push(['(context) explorer redraw vs the plain-JS heatmap, medians', redraw.plain.median / redraw.page.median, null]);
  const bestLab = Object.entries(nativeLab).pop();
  if (bestLab) targets.push([`(context) lab training step, native (${bestLab[0]}) vs posenc WASM`, posencLab.ms / bestLab[1], null]);
  targets.push(...decode.targets);
  console.log('\nTargets (ratios measured in this run):');
  for (const [what, ratio, goal] of targets) {
    console.log(`  ${goal === null ? '   ' : ratio >= goal ? 'met' : 'NOT'} ${what}: ${ratio.toFixed(2)}×`);
  }
}
console.log(`\nbench: ${checks.length - bad} passed, ${bad} failed`);
process.exitCode = bad ? 1 : 0;
