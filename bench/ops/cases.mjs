// The benchmarked ops, each runnable by posenc, plain JS and onnxruntime (web, and node where
// it applies) on the same data, with a check that the outputs agree. Shared by the interop test
// (tests/js/interop.test.mjs) and the benchmark (bench/run.mjs, bench/threads.mjs).
import { data } from './data.mjs';
import { oneNodeModel } from './onnx-model.mjs';
import { attentionPlain, ropePlain, ropePlainCached, sinusoidalPlain } from './plain.mjs';

export { data };

/** [S][H][D] (tokens major, posenc's layout) ⇄ [H][S][D] (ONNX 4D with B = 1). */
export function toHeadMajor(x, S, H, D) {
  const y = new Float32Array(x.length);
  for (let s = 0; s < S; s++) for (let h = 0; h < H; h++) y.set(x.subarray((s * H + h) * D, (s * H + h + 1) * D), (h * S + s) * D);
  return y;
}
export function toTokenMajor(x, S, H, D) {
  const y = new Float32Array(x.length);
  for (let h = 0; h < H; h++) for (let s = 0; s < S; s++) y.set(x.subarray((h * S + s) * D, (h * S + s + 1) * D), (s * H + h) * D);
  return y;
}

export function maxAbsDiff(a, b) {
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

// runtimes: { name: { ort, ep, threads } } — onnxruntime-web with 'wasm' (its thread count is
// env.wasm.numThreads, fixed when its first session is made), onnxruntime-node with 'cpu'
// (intraOpNumThreads = threads, default 1).
async function session({ ort, ep, threads = 1 }, model) {
  return ort.InferenceSession.create(model, { executionProviders: [ep], intraOpNumThreads: threads, interOpNumThreads: 1 });
}

/** RoPE, half-split, [1, H, S, D]: posenc (copying and in-heap), plain JS, onnxruntime. */
export async function ropeCase({ pe, runtimes, S, H = 32, D = 128 }) {
  const x = data(S * H * D, 1);
  const params = { headDim: D, theta: 10000 };
  const opts = { seqLen: S, nHeads: H, headDim: D, params, layout: 'halfSplit' };
  const { cos, sin } = pe.ropeCache({ params, seqLen: S });
  const heap = pe.allocFloat32(x.length);
  const xh = toHeadMajor(x, S, H, D);
  const ids = BigInt64Array.from({ length: S }, (_, i) => BigInt(i));
  const given = { X: { data: xh, dims: [1, H, S, D] }, cos_cache: { data: cos, dims: [S, D / 2] },
    sin_cache: { data: sin, dims: [S, D / 2] }, position_ids: { data: ids, dims: [1, S] } };
  const mineOut = new Float32Array(x.length), plainOut = new Float32Array(x.length);
  const contenders = {
    'posenc applyRope (copies in and out)': () => pe.applyRope(x, opts),
    'posenc applyRopeInPlace (data in the heap)': () => pe.applyRopeInPlace(heap, opts),
    'plain JS': () => ropePlain(x, S, H, D),
    // The cache given, as onnxruntime users hold it: the ONNX op against the loop over that cache.
    'posenc onnx.rotaryEmbedding (cache given, fresh result)': () => pe.onnx.rotaryEmbedding(given, {}).Y.data,
    'plain JS (cache given, fresh result)': () => ropePlainCached(xh, cos, sin, ids, S, H, D),
    'posenc onnx.rotaryEmbedding (cache given, into out)': () => pe.onnx.rotaryEmbedding(given, {}, { out: mineOut }).Y.data,
    'plain JS (cache given, into its own array)': () => ropePlainCached(xh, cos, sin, ids, S, H, D, plainOut),
  };
  const sessions = {};
  for (const [name, runtime] of Object.entries(runtimes)) {
    const { ort } = runtime;
    const model = oneNodeModel({ opType: 'RotaryEmbedding', opset: 23,
      inputs: [{ name: 'X', type: 'float32', dims: [1, H, S, D] }, { name: 'cos_cache', type: 'float32', dims: [S, D / 2] },
        { name: 'sin_cache', type: 'float32', dims: [S, D / 2] }, { name: 'position_ids', type: 'int64', dims: [1, S] }],
      outputs: [{ name: 'Y', type: 'float32', dims: [1, H, S, D] }] });
    const s = await session(runtime, model);
    const feeds = {
      X: new ort.Tensor('float32', xh, [1, H, S, D]),
      cos_cache: new ort.Tensor('float32', cos, [S, D / 2]),
      sin_cache: new ort.Tensor('float32', sin, [S, D / 2]),
      position_ids: new ort.Tensor('int64', BigInt64Array.from({ length: S }, (_, i) => BigInt(i)), [1, S]),
    };
    sessions[name] = { s, feeds };
    contenders[name] = async () => (await s.run(feeds)).Y.data;
  }
  return {
    bytes: x.length * 4,
    contenders,
    // posenc's copying API, its ONNX op, and every runtime on the same input.
    async check() {
      const mine = pe.applyRope(x, opts);
      const op = pe.onnx.rotaryEmbedding({ X: { data: xh, dims: [1, H, S, D] }, cos_cache: { data: cos, dims: [S, D / 2] },
        sin_cache: { data: sin, dims: [S, D / 2] }, position_ids: { data: BigInt64Array.from({ length: S }, (_, i) => BigInt(i)), dims: [1, S] } }).Y.data;
      const diffs = { 'posenc onnx.rotaryEmbedding vs applyRope': maxAbsDiff(toTokenMajor(op, S, H, D), mine),
        'plain JS (cache given) vs posenc': maxAbsDiff(toTokenMajor(ropePlainCached(xh, cos, sin, ids, S, H, D), S, H, D), mine) };
      for (const [name, { s, feeds }] of Object.entries(sessions)) {
        diffs[`${name} vs posenc`] = maxAbsDiff(toTokenMajor((await s.run(feeds)).Y.data, S, H, D), mine);
      }
      return diffs;
    },
    dispose() { heap.delete(); },
  };
}

/** Causal attention [1, H, S, D] (optionally + ALiBi): posenc, plain JS, onnxruntime Attention-23. */
export async function attentionCase({ pe, runtimes, S, H = 8, D = 64, alibi = false, plain = true }) {
  const q = data(S * H * D, 2), k = data(S * H * D, 3), v = data(S * H * D, 4);
  const slopes = alibi ? pe.alibiSlopes(H) : null;
  const opts = { nHeads: H, headDim: D, causal: true, ...(alibi ? { alibi: true } : {}) };
  const contenders = { 'posenc attention': () => pe.attention(q, k, v, opts) };
  if (plain) contenders['plain JS'] = () => attentionPlain(q, k, v, S, H, D, slopes);
  const qh = toHeadMajor(q, S, H, D), kh = toHeadMajor(k, S, H, D), vh = toHeadMajor(v, S, H, D);
  // Heads-major data as onnxruntime users hold it, fused terms and all, no transposes.
  contenders['posenc attention (bhsd)'] = () => pe.attention(qh, kh, vh, { ...opts, layout: 'bhsd' });
  const mask = alibi ? pe.alibiBias(H, S, S, { causal: false }) : null;  // -slope·|i − j|; is_causal masks the rest
  const sessions = {};
  for (const [name, runtime] of Object.entries(runtimes)) {
    const { ort } = runtime;
    const inputs = [{ name: 'Q', type: 'float32', dims: [1, H, S, D] }, { name: 'K', type: 'float32', dims: [1, H, S, D] },
      { name: 'V', type: 'float32', dims: [1, H, S, D] }];
    if (alibi) inputs.push({ name: 'attn_mask', type: 'float32', dims: [1, H, S, S] });
    const model = oneNodeModel({ opType: 'Attention', opset: 23, inputs, outputs: [{ name: 'Y', type: 'float32', dims: [1, H, S, D] }], attrs: { is_causal: 1 } });
    const s = await session(runtime, model);
    const feeds = { Q: new ort.Tensor('float32', qh, [1, H, S, D]), K: new ort.Tensor('float32', kh, [1, H, S, D]), V: new ort.Tensor('float32', vh, [1, H, S, D]) };
    if (alibi) feeds.attn_mask = new ort.Tensor('float32', mask, [1, H, S, S]);
    sessions[name] = { s, feeds };
    contenders[name] = async () => (await s.run(feeds)).Y.data;
  }
  return {
    flops: 2 * 2 * H * D * ((S * (S + 1)) / 2),  // QKᵀ and PV over the causal half, multiply + add
    contenders,
    inputs: { q, k, v, opts },
    async check() {
      const mine = pe.attention(q, k, v, opts);
      const diffs = { 'posenc bhsd vs bshd': maxAbsDiff(toTokenMajor(pe.attention(qh, kh, vh, { ...opts, layout: 'bhsd' }), S, H, D), mine) };
      if (plain && S <= 256) diffs['plain JS vs posenc'] = maxAbsDiff(attentionPlain(q, k, v, S, H, D, slopes), mine);
      for (const [name, { s, feeds }] of Object.entries(sessions)) {
        diffs[`${name} vs posenc`] = maxAbsDiff(toTokenMajor((await s.run(feeds)).Y.data, S, H, D), mine);
      }
      return diffs;
    },
    dispose() {},
  };
}

// float32 → float16 bits, to nearest with ties to even (as cpp/src/half.hpp; Node 20 has no
// Float16Array), and the value of float16 bits.
const f32Word = new Float32Array(1), u32Word = new Uint32Array(f32Word.buffer);
export function toHalfBits(x) {
  f32Word[0] = x;
  const b = u32Word[0], sign = (b >>> 16) & 0x8000, abs = b & 0x7fffffff;
  if (abs >= 0x7f800000) return sign | 0x7c00 | (abs > 0x7f800000 ? 0x200 | ((abs >>> 13) & 0x3ff) : 0);  // inf, NaN
  if (abs >= 0x477ff000) return sign | 0x7c00;  // rounds past 65504
  if (abs < 0x38800000) {  // a subnormal half (or zero): round |x| · 2^24, exact in float64
    const m = Math.abs(f32Word[0]) * 2 ** 24, q = Math.floor(m), r = m - q;
    return sign | (q + (r > 0.5 || (r === 0.5 && (q & 1)) ? 1 : 0));
  }
  const rebased = abs - 0x38000000, q = rebased >>> 13, rem = rebased & 0x1fff;
  return sign | (q + (rem > 0x1000 || (rem === 0x1000 && (q & 1)) ? 1 : 0));
}
export function halfValue(b) {
  const e = (b >> 10) & 0x1f, m = b & 0x3ff, s = b & 0x8000 ? -1 : 1;
  if (e === 31) return m ? NaN : s * Infinity;
  return s * (e === 0 ? m * 2 ** -24 : (1024 + m) * 2 ** (e - 25));
}

/** Causal attention [1, H, S, D] with float16 K/V (kvDtype 'float16', Uint16Array bits) against
 *  the same call with float32 K/V holding the same values: posenc only (the issue #15 row). */
export const HALF_KV = 'posenc attention, float16 K/V';
export const FLOAT_KV = 'posenc attention, float32 K/V (the same values)';
export async function attentionHalfCase({ pe, S, H = 8, D = 64 }) {
  const q = data(S * H * D, 2);
  const k16 = Uint16Array.from(data(S * H * D, 3), toHalfBits), v16 = Uint16Array.from(data(S * H * D, 4), toHalfBits);
  const k = Float32Array.from(k16, halfValue), v = Float32Array.from(v16, halfValue);
  const opts = { nHeads: H, headDim: D, causal: true };
  const half = { ...opts, kvDtype: 'float16' };
  return {
    flops: 2 * 2 * H * D * ((S * (S + 1)) / 2),
    contenders: { [HALF_KV]: () => pe.attention(q, k16, v16, half), [FLOAT_KV]: () => pe.attention(q, k, v, opts) },
    async check() {
      const mine = pe.attention(q, k16, v16, half);
      // The widening is exact, so this is 0 (the float16 path differs only in how K/V are packed).
      const diffs = { 'posenc float16 K/V vs float32 K/V on the same values': maxAbsDiff(mine, pe.attention(q, k, v, opts)) };
      if (S <= 256) diffs['plain JS (float32 on the float16 values) vs posenc float16 K/V'] = maxAbsDiff(attentionPlain(q, k, v, S, H, D, null), mine);
      return diffs;
    },
    dispose() {},
  };
}

/** The sinusoidal table [S][D]: posenc and plain JS (no runtime has it as an op). */
export async function sinusoidalCase({ pe, S, D = 128 }) {
  return {
    bytes: S * D * 4,
    contenders: { 'posenc sinusoidal': () => pe.sinusoidal(S, D), 'plain JS': () => sinusoidalPlain(S, D) },
    async check() { return { 'plain JS vs posenc': maxAbsDiff(sinusoidalPlain(S, D), pe.sinusoidal(S, D)) }; },
    dispose() {},
  };
}
