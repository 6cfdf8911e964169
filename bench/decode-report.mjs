// The decoding part of npm run bench: runs bench/decode.mjs once on 1 thread and once on 2 (each
// its own process) and turns its JSON into table rows, interop checks and issue #24's targets.
import { execFileSync } from 'node:child_process';
import { ATTENTION23, GQA, KV_FLOAT16, KV_FLOAT32, WHOLE } from './ops/decode.mjs';

const script = new URL('./decode.mjs', import.meta.url).pathname;
const run = (threads, smoke) => JSON.parse(execFileSync(process.execPath,
  [script, '--threads', String(threads), ...(smoke ? ['--smoke'] : [])], { encoding: 'utf8', maxBuffer: 1 << 24 }));
const gbs = (bytes, ms) => (bytes / (ms * 1e6)).toFixed(2);

export function decodeReport({ smoke }) {
  const runs = { 1: run(1, smoke), 2: run(2, smoke) };
  const rows = [], checks = [], targets = [];
  for (const [threads, r] of Object.entries(runs)) {
    const suffix = threads > 1 ? `, ${threads} threads` : '';
    for (const { title, bytes, timings } of r.rows) {
      for (const [name, ms] of Object.entries(timings)) {
        const vsGqa = timings[GQA] / ms;
        rows.push({ title: `${title}${suffix}`, name, ms, vsOrt: timings[ATTENTION23] / ms, vsPlain: null,
          throughput: `K/V read at ${gbs(bytes, ms)} GB/s; ${vsGqa.toFixed(2)}× GroupQueryAttention` });
      }
    }
    checks.push(...r.checks);
  }
  const one = runs[1];
  if (one.limits) {
    const { bytes, readMs, memcpyMs } = one.limits;
    const title = `decode: the K/V bytes of the longest cache (${(bytes / 2 ** 20).toFixed(0)} MiB)`;
    rows.push({ title, name: 'limit: one SIMD128 read pass (loads summed, nothing stored)', ms: readMs, vsOrt: null, vsPlain: null,
      throughput: `${gbs(bytes, readMs)} GB/s read` });
    rows.push({ title, name: 'limit: WASM memcpy', ms: memcpyMs, vsOrt: null, vsPlain: null, throughput: `${gbs(2 * bytes, memcpyMs)} GB/s moved` });
  }
  const [small, large] = Object.keys(one.appends).map(Number);
  for (const held of [small, large]) {
    rows.push({ title: `append one token to a kvCache (${one.shape.Hk} kv heads, head_dim ${one.shape.D}, RoPE)`, name: `posenc, ${held} tokens held`,
      ms: one.appends[held], vsOrt: null, vsPlain: null, throughput: '' });
  }
  if (smoke) return { rows, checks, targets };

  const find = (r, L, n) => r.rows.find((x) => x.L === L && x.n === n).timings;
  for (const [threads, r] of Object.entries(runs)) {
    for (const { L, n } of r.rows) {
      const t = find(r, L, n);
      for (const kv of [KV_FLOAT32, KV_FLOAT16]) {
        const a = t[ATTENTION23] / t[kv], g = t[GQA] / t[kv];
        targets.push([`decode ${n} quer${n > 1 ? 'ies' : 'y'}, ${L} tokens, ${threads} thread${threads > 1 ? 's' : ''}: ${kv} ≥ 3× onnxruntime-web ` +
          `(Attention-23 ${a.toFixed(2)}×, GroupQueryAttention ${g.toFixed(2)}×; the lesser)`, Math.min(a, g), 3]);
      }
      if (n === 1) targets.push([`(context) decode 1 query, ${L} tokens, ${threads} thread${threads > 1 ? 's' : ''}: kvCache float32 vs pe.attention given the whole cache`, t[WHOLE] / t[KV_FLOAT32], null]);
    }
  }
  const L = Math.max(...one.rows.map((x) => x.L));
  const t1 = find(one, L, 1), t2 = find(runs[2], L, 1);
  targets.push([`decode 1 query, ${L} tokens: float16 cache ≥ 1.6× float32 cache (1 thread)`, t1[KV_FLOAT32] / t1[KV_FLOAT16], 1.6]);
  targets.push([`decode 1 query, ${L} tokens: float16 cache ≥ 1.6× float32 cache (2 threads)`, t2[KV_FLOAT32] / t2[KV_FLOAT16], 1.6]);
  targets.push([`decode 1 query, ${L} tokens, float32: 2 threads ≥ 1.6× 1 thread`, t1[KV_FLOAT32] / t2[KV_FLOAT32], 1.6]);
  targets.push([`decode 1 query, ${L} tokens, float16: 2 threads ≥ 1.6× 1 thread`, t1[KV_FLOAT16] / t2[KV_FLOAT16], 1.6]);
  const bytes = one.rows.find((x) => x.L === L).bytes;
  const rate = bytes / t1[KV_FLOAT32], memcpyRate = (2 * one.limits.bytes) / one.limits.memcpyMs;
  targets.push([`decode 1 query, ${L} tokens, 1 thread: K/V bytes read per second ≥ 60 % of WASM memcpy's bytes moved per second ` +
    `(${gbs(bytes, t1[KV_FLOAT32])} of ${gbs(2 * one.limits.bytes, one.limits.memcpyMs)} GB/s)`, rate / memcpyRate, 0.6]);
  targets.push([`(context) the same against one SIMD128 read pass over the bytes (${gbs(one.limits.bytes, one.limits.readMs)} GB/s)`,
    rate / (one.limits.bytes / one.limits.readMs), null]);
  targets.push([`append one token: flat from ${small} to ${large} tokens held (time at ${small} / time at ${large} ≥ 0.8)`,
    one.appends[small] / one.appends[large], 0.8]);
  return { rows, checks, targets };
}
