// npm run bench's decoding rows (issue #24), in a process of their own per thread count
// (onnxruntime-web fixes its thread count when its first session is made): one decoding step —
// 32 query heads over 8 kv heads, head_dim 128, a cache of 4096 and of 32768 tokens, 1 and 16
// new queries — by posenc's kvCache (float32 and float16), pe.attention given the whole cache,
// onnxruntime-web's Attention-23 with past_key/past_value and its GroupQueryAttention
// (bench/ops/decode.mjs), interleaved, medians; beside them, on one thread, the time to read the
// same K/V bytes (a SIMD128 read pass) and to copy them (WASM memcpy), and the time of one append
// at 1k and at 32k tokens held (it must not grow with the cache).
//   node bench/decode.mjs [--threads N] [--smoke]    prints one JSON object
import { createRequire } from 'node:module';
import { init } from 'posenc';
import * as ort from 'onnxruntime-web';
import { decodeCase } from './ops/decode.mjs';
import { data } from './ops/data.mjs';
import { measure, median } from './measure.mjs';

const smoke = process.argv.includes('--smoke');
const at = process.argv.indexOf('--threads');
const threads = at < 0 ? 1 : Number(process.argv[at + 1]);
const pe = await init({ threads });
ort.env.wasm.numThreads = threads;
ort.env.logLevel = 'error';

const shape = smoke ? { Hq: 4, Hk: 2, D: 16 } : { Hq: 32, Hk: 8, D: 128 };
const lengths = smoke ? [64] : [4096, 32768];
const queries = smoke ? [1, 4] : [1, 16];
const plan = smoke ? { warmup: 1, rounds: 1 } : { warmup: 2, rounds: 7 };
const rows = [], checks = [];

for (const L of lengths) {
  for (const n of queries) {
    const c = await decodeCase({ pe, ort, L, n, ...shape });
    const title = `decode ${n} quer${n > 1 ? 'ies' : 'y'}, cache of ${L} tokens (${shape.Hq} / ${shape.Hk} heads, head_dim ${shape.D})`;
    const timings = await measure(c.contenders, L * n > 100000 ? { ...plan, rounds: Math.min(plan.rounds, 5) } : plan);
    rows.push({ title, L, n, bytes: c.bytes, timings });
    for (const [what, diff] of Object.entries(await c.check())) checks.push({ title, what: `${what} (${threads} thread${threads > 1 ? 's' : ''})`, diff });
    c.dispose();
  }
}

// The floors for reading and for copying the K/V bytes of the longest cache (one thread).
let limits = null;
if (threads === 1) {
  const lib = await createRequire(import.meta.url)('../build/wasm-release/posenc_bench_limits.cjs')();
  const bytes = 2 * lengths.at(-1) * shape.Hk * shape.D * 4;
  const src = lib.allocBytes(bytes), dst = lib.allocBytes(bytes);
  // Write every page of both first: a page never written reads as the one shared zero page,
  // which stays in cache, and the read pass would time that instead of memory.
  lib.simdPass(src, dst, bytes);
  lib.copyBytes(dst, src, bytes);
  const t = await measure({ read: () => lib.simdRead(src, bytes), memcpy: () => lib.copyBytes(dst, src, bytes) }, plan);
  lib.freeBytes(src);
  lib.freeBytes(dst);
  limits = { bytes, readMs: t.read, memcpyMs: t.memcpy };
}

// One token appended at 1k and at 32k tokens held: 64 appends timed one by one, median.
const appends = {};
for (const held of smoke ? [16, 64] : [1024, 32768]) {
  const R = 64, row = shape.Hk * shape.D;
  const cache = pe.kvCache({ nKvHeads: shape.Hk, headDim: shape.D, capacity: held + R, rope: { headDim: shape.D } });
  const fill = data(1024 * row, 21);
  for (let t = 0; t < held; t += 1024) {
    const m = Math.min(1024, held - t) * row;
    cache.append(fill.subarray(0, m), fill.subarray(0, m));
  }
  const k = data(row, 22), v = data(row, 23), times = [];
  for (let r = 0; r < R; r++) {
    const t0 = performance.now();
    cache.append(k, v);
    times.push(performance.now() - t0);
  }
  cache.delete();
  appends[held] = median(times);
}

console.log(JSON.stringify({ threads: pe.threads, shape, rows, checks, limits, appends }));
