// pe.attention (fused positions) against the float64 twin (twins.mjs); properties; the ONNX ops'
// input checking; streaming memory at long sequence lengths. Each positional bias term is checked
// by its scheme's suite (bias_terms.mjs: alibi.test.mjs, t5.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { error, maxAbsDiff, pe, randomFloats } from './helpers.mjs';
import { attentionTwin as twin } from './twins.mjs';

test('attention: equals the float64 twin with GQA, causal and an additive mask', () => {
  for (const [H, Hkv, D, qLen, kvLen] of [[4, 2, 8, 5, 70], [2, 1, 13, 1, 129], [3, 3, 64, 16, 16]]) {
    const q = randomFloats(qLen * H * D, 1), k = randomFloats(kvLen * Hkv * D, 2), v = randomFloats(kvLen * Hkv * D, 3);
    const mask = randomFloats(qLen * kvLen, 4);
    for (const causal of [false, true]) {
      const base = { nHeads: H, nKvHeads: Hkv, headDim: D, causal };
      assert.ok(maxAbsDiff(pe.attention(q, k, v, base), twin(q, k, v, base)) < 2e-6);
      assert.ok(maxAbsDiff(pe.attention(q, k, v, { ...base, mask }), twin(q, k, v, { ...base, mask })) < 2e-6);
    }
  }
});

test('attention: "dog bites man" and "man bites dog" are indistinguishable without positions', () => {
  const H = 2, D = 16;
  const dog = randomFloats(H * D, 10), bites = randomFloats(H * D, 11), man = randomFloats(H * D, 12);
  const sentence = (...words) => { const x = new Float32Array(words.length * H * D); words.forEach((w, i) => x.set(w, i * H * D)); return x; };
  const a = sentence(dog, bites, man), b = sentence(man, bites, dog);
  const opts = { nHeads: H, headDim: D };
  const ya = pe.attention(a, a, a, opts), yb = pe.attention(b, b, b, opts);
  // Each word's output is the same, just in the other order.
  assert.ok(maxAbsDiff(ya.subarray(0, H * D), yb.subarray(2 * H * D)) < 1e-6);
  assert.ok(maxAbsDiff(ya.subarray(H * D, 2 * H * D), yb.subarray(H * D, 2 * H * D)) < 1e-6);
  // With RoPE they differ.
  const rope = { headDim: D };
  const ra = pe.attention(a, a, a, { ...opts, rope }), rb = pe.attention(b, b, b, { ...opts, rope });
  assert.ok(maxAbsDiff(ra.subarray(0, H * D), rb.subarray(2 * H * D)) > 1e-3);
});

test('attention: weights are softmax rows; T5 and RoPE are fused; a fully masked row is zero', () => {
  const H = 2, D = 8, n = 6;
  const x = randomFloats(n * H * D, 5);
  const table = randomFloats(32 * H, 6);
  const { output, weights } = pe.attention(x, x, x, { nHeads: H, headDim: D, causal: true, t5: { table }, rope: { params: { headDim: D }, layout: 'interleaved' }, returnWeights: true });
  assert.equal(output.length, n * H * D);
  assert.equal(weights.length, H * n * n);
  for (let r = 0; r < H * n; r++) {
    const row = weights.subarray(r * n, (r + 1) * n);
    assert.ok(Math.abs(row.reduce((s, w) => s + w, 0) - 1) < 1e-5);
    const i = r % n;
    for (let j = i + 1; j < n; j++) assert.equal(row[j], 0);  // causal
  }
  const mask = new Float32Array(n * n);
  mask.fill(-Infinity, 0, n);
  const y = pe.attention(x, x, x, { nHeads: H, headDim: D, mask });
  assert.ok(y.subarray(0, D).every((e) => e === 0));
  assert.ok(y.subarray(H * D).every(Number.isFinite));
});

test('attention and ONNX ops: bad input names the argument, slot or attribute', () => {
  const x = new Float32Array(2 * 2 * 4);
  const T = (dims, data = new Float32Array(dims.reduce((a, b) => a * b, 1))) => ({ data, dims });
  const cases = [
    [() => pe.attention(x, x, x, { nHeads: 3, headDim: 4 }), RangeError, /q\.length must be a non-zero multiple of nHeads \* headDim = 12 \(got 16\)/],
    [() => pe.attention(x, x, x, { nHeads: 2, nKvHeads: 3, headDim: 4 }), RangeError, /attention: nHeads must be a multiple of nKvHeads \(got nHeads = 2, nKvHeads = 3\)/],
    [() => pe.attention(x, x, new Float32Array(8), { nHeads: 2, headDim: 4 }), RangeError, /v\.length must equal k\.length = 16 \(got 8\)/],
    [() => pe.attention(x, x, x, { nHeads: 2, headDim: 4, mask: new Float32Array(5) }), RangeError, /mask\.length must be qLen \* kvLen = 4/],
    [() => pe.attention(x, x, x, { nHeads: 2, headDim: 4, causal: 1 }), TypeError, /causal must be a boolean/],
    [() => pe.attention(x, x, x, { nHeads: 2, headDim: 4, heads: 2 }), TypeError, /unknown option "heads"/],
    [() => pe.onnx.attention({ Q: T([1, 2, 8]), K: T([1, 2, 8]), V: T([1, 2, 8]) }), RangeError, /q_num_heads and kv_num_heads are required for 3D/],
    [() => pe.onnx.attention({ Q: T([1, 2, 8]), K: T([1, 2, 8]), V: T([1, 2, 8]) }, { q_num_heads: 3, kv_num_heads: 1 }), RangeError, /multiple of q_num_heads/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]), attn_mask: T([3, 3, 3]) }), RangeError, /attn_mask does not broadcast/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]) }), TypeError, /inputs\.V is required/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: { data: new Float32Array(23), dims: [1, 2, 3, 4] } }), RangeError, /inputs\.V\.data has 23 elements but dims \[1,2,3,4\] need 24/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: { data: [1, 2], dims: [2] } }), TypeError, /inputs\.V\.data must be a Float32Array/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]), bias: T([1]) }), TypeError, /unknown input slot "bias"/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { causal: 1 }), TypeError, /unknown attribute "causal"/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { qk_matmul_output_mode: 7 }), RangeError, /^onnx\.attention: attrs\.qk_matmul_output_mode must be 0, 1, 2 or 3 \(got 7\)$/],
    // The attributes' rules are C++'s (onnx_attention_attrs_check), asked before the heap is used.
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { is_causal: 2 }), RangeError, /^onnx\.attention: attrs\.is_causal must be 0 or 1 \(got 2\)$/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { scale: NaN }), RangeError, /^onnx\.attention: attrs\.scale must be finite \(got NaN\)$/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { softcap: -Infinity }), RangeError, /^onnx\.attention: attrs\.softcap must be finite \(got -Infinity\)$/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { softmax_precision: 16 }), RangeError, /^onnx\.attention: attrs\.softmax_precision must be FLOAT \(1\)/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, { scale: '1' }), TypeError, /attrs\.scale must be a number/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]), nonpad_kv_seqlen: { data: [2], dims: [1] } }, {}, { opset: 23 }), RangeError, /nonpad_kv_seqlen needs opset 24/],
    [() => pe.onnx.attention({ Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) }, {}, { outputs: ['Y', 'attention_probs'] }), RangeError, /unknown output slot "attention_probs"/],
    [() => pe.onnx.rotaryEmbedding({ X: T([1, 2, 8]), cos_cache: T([4, 4]), sin_cache: T([4, 4]), position_ids: { data: [0, 1], dims: [1, 2] } }), RangeError, /num_heads is required for 3D X/],
    [() => pe.onnx.rotaryEmbedding({ X: T([1, 1, 2, 8]), cos_cache: T([4, 3]), sin_cache: T([4, 3]), position_ids: { data: [0, 1], dims: [1, 2] } }), RangeError, /cos_cache's last dimension must be rotary_embedding_dim \/ 2/],
    [() => pe.onnx.rotaryEmbedding({ X: T([1, 1, 2, 8]), cos_cache: T([4, 4]), sin_cache: T([4, 4]), position_ids: { data: [0, 9], dims: [1, 2] } }), RangeError, /position_ids must be in \[0, cos_cache rows\)/],
  ];
  for (const [call, type, pattern] of cases) assert.throws(call, error(type, pattern));
  // Good calls still work afterwards, and an onnxruntime-style bool/int64 input is accepted.
  const y = pe.onnx.attention({ Q: T([1, 1, 2, 4], randomFloats(8, 1)), K: T([1, 1, 2, 4], randomFloats(8, 2)), V: T([1, 1, 2, 4], randomFloats(8, 3)),
    attn_mask: { data: Uint8Array.from([1, 0, 1, 1]), dims: [2, 2], type: 'bool' } }, { is_causal: 0 });
  assert.deepEqual(y.Y.dims, [1, 1, 2, 4]);
  assert.ok(y.Y.data.every(Number.isFinite));
});

test('attention: sliding window, sink tokens and sink logits equal the twin; bad values are refused', () => {
  const H = 2, D = 8;
  const sinks = Float32Array.of(0.5, -1.25);
  for (const [qLen, kvLen] of [[1, 130], [130, 130], [7, 65]]) {
    const q = randomFloats(qLen * H * D, 5), k = randomFloats(kvLen * H * D, 6), v = randomFloats(kvLen * H * D, 7);
    for (const o of [{ window: 96, causal: true }, { window: 5, causal: true, sinkTokens: 4 }, { window: 3, causal: false },
      { window: 64, causal: true, sinks }, { sinks }]) {
      const opts = { nHeads: H, headDim: D, ...o };
      assert.ok(maxAbsDiff(pe.attention(q, k, v, opts), twin(q, k, v, opts)) < 2e-6, JSON.stringify({ qLen, kvLen, ...o }));
    }
  }
  const q = randomFloats(16, 8);
  assert.throws(() => pe.attention(q, q, q, { nHeads: 1, headDim: 4, window: 0 }), error(RangeError, /window must be > 0 \(it counts the query's own key\) \(got 0\)/));
  assert.throws(() => pe.attention(q, q, q, { nHeads: 1, headDim: 4, sinkTokens: 4 }), error(RangeError, /attention: sinkTokens needs a window \(got 4\)/));
  assert.throws(() => pe.attention(q, q, q, { nHeads: 2, headDim: 2, sinks: Float32Array.of(1) }), error(RangeError, /sinks must have nHeads = 2 entries/));
  assert.throws(() => pe.attention(q, q, q, { nHeads: 1, headDim: 4, sinks: Float32Array.of(NaN) }), error(RangeError, /sinks must be finite/));
});

test('attention: Llama 4 chunked attention and the NoPE temperature equal the twin; iropeScale and the Scout config', async () => {
  const H = 2, D = 8, T = 130;
  const q = randomFloats(T * H * D, 9), k = randomFloats(T * H * D, 10), v = randomFloats(T * H * D, 11);
  for (const chunkSize of [1, 16, 64, 100]) {
    const mask = new Float32Array(T * T);
    for (let i = 0; i < T; i++) for (let j = 0; j < T; j++) if (Math.floor(i / chunkSize) !== Math.floor(j / chunkSize) || j > i) mask[i * T + j] = -Infinity;
    const got = pe.attention(q, k, v, { nHeads: H, headDim: D, causal: true, chunkSize });
    assert.ok(maxAbsDiff(got, twin(q, k, v, { nHeads: H, headDim: D, causal: true, mask })) < 2e-6, `chunk ${chunkSize}`);
  }
  // HF Llama4TextAttention: q ·= log(floor((pos + 1) / floor_scale) + 1) · attn_scale + 1.
  assert.deepEqual(Array.from(pe.iropeScale([0, 8190, 8191, 16383])), [1, 1, 1 + 0.1 * Math.log(2), 1 + 0.1 * Math.log(3)]);
  const scales = pe.iropeScale(Array.from({ length: T }, (_, i) => i), { floorScale: 8, attnScale: 0.5 });
  // The temperature's rule is C++'s (irope_check), the one attention's temperature option meets.
  const rule = 'temperature floorScale must be finite and > 0, attnScale finite';
  assert.throws(() => pe.iropeScale(5, { floorScale: 0 }), error(RangeError, new RegExp(`^iropeScale: ${rule} \\(got floorScale = 0, attnScale = 0\\.1\\)$`)));
  assert.throws(() => pe.iropeScale(5, { attnScale: NaN }), error(RangeError, new RegExp(`^iropeScale: ${rule} \\(got floorScale = 8192, attnScale = NaN\\)$`)));
  assert.throws(() => pe.attention(q, k, v, { nHeads: H, headDim: D, temperature: { floorScale: -1 } }), error(RangeError, new RegExp(`^attention: ${rule}`)));
  assert.throws(() => pe.iropeScale(5, { floorScale: '8' }), error(TypeError, /floorScale must be a number/));
  const qs = Float32Array.from(q, (x, e) => x * scales[Math.floor(e / (H * D))]);
  const warm = pe.attention(q, k, v, { nHeads: H, headDim: D, causal: true, temperature: { floorScale: 8, attnScale: 0.5 } });
  assert.ok(maxAbsDiff(warm, twin(qs, k, v, { nHeads: H, headDim: D, causal: true })) < 2e-6);
  assert.throws(() => pe.attention(q, k, v, { nHeads: H, headDim: D, chunkSize: 0 }), error(RangeError, /chunkSize must be > 0 \(got 0\)/));
  assert.throws(() => pe.attention(q, k, v, { nHeads: H, headDim: D, chunkSize: 16, window: 8, sinkTokens: 2 }),
    error(RangeError, /sinkTokens works with a window, not with chunkSize/));

  const scout = pe.presets.presets.find((p) => p.id === 'llama-4-scout').config;
  const m = await pe.readModel(scout);
  assert.equal(m.irope.chunkSize, 8192);
  assert.equal(m.irope.ropeLayers.length, 48);
  assert.deepEqual(m.irope.ropeLayers.slice(0, 8), [true, true, true, false, true, true, true, false]);
  // llama3 with low = high = 1 (Scout): pairs with wavelength < 8192 keep θ_i, the others θ_i / 16.
  const f = pe.ropeFrequencies(m.rope.params, { dtype: 'float64' }).invFreq;
  const plain = pe.ropeFrequencies({ headDim: 128, theta: 500000 }, { dtype: 'float64' }).invFreq;
  assert.equal(f[34], plain[34]);
  assert.ok(Math.abs(f[35] - plain[35] / 16) < 1e-18);
});

// ONNX RotaryEmbedding-23 in float64 over the given caches (half-split pairs, or interleaved).
function rotaryTwin(x, dims, cos, sin, ids, half, interleaved, numHeads) {
  const four = dims.length === 4;
  const [B, H, S, D] = four ? dims : [dims[0], numHeads, dims[1], dims[2] / numHeads];
  const y = Float64Array.from(x);
  for (let b = 0; b < B; b++) for (let h = 0; h < H; h++) for (let s = 0; s < S; s++) {
    const row = ids ? Number(ids[b * S + s]) : b * S + s;
    const base = four ? ((b * H + h) * S + s) * D : ((b * S + s) * H + h) * D;
    for (let k = 0; k < half; k++) {
      const i1 = base + (interleaved ? 2 * k : k), i2 = base + (interleaved ? 2 * k + 1 : k + half);
      const c = cos[row * half + k], sn = sin[row * half + k];
      y[i1] = x[i1] * c - x[i2] * sn;
      y[i2] = x[i2] * c + x[i1] * sn;
    }
  }
  return y;
}

test('onnx.rotaryEmbedding streams large X through the heap (4D and 3D, with and without ids), out in place', () => {
  const half = 32, maxPos = 6000;
  const cos = randomFloats(maxPos * half, 40), sin = randomFloats(maxPos * half, 41);
  for (const [dims, numHeads] of [[[2, 3, 2500, 64], 0], [[2, 2500, 3 * 64], 3]]) {
    const n = dims.reduce((a, b) => a * b, 1);
    const S = dims.length === 4 ? dims[2] : dims[1];
    const x = randomFloats(n, 42);
    const ids = BigInt64Array.from({ length: 2 * S }, (_, i) => BigInt((i * 7919) % maxPos));
    for (const interleaved of [0, 1]) {
      const attrs = { interleaved, ...(numHeads ? { num_heads: numHeads } : {}) };
      const { Y } = pe.onnx.rotaryEmbedding({ X: { data: x, dims }, cos_cache: { data: cos, dims: [maxPos, half] },
        sin_cache: { data: sin, dims: [maxPos, half] }, position_ids: { data: ids, dims: [2, S] } }, attrs);
      assert.ok(maxAbsDiff(Y.data, rotaryTwin(x, dims, cos, sin, ids, half, interleaved, numHeads)) < 2e-6, `${dims} ${interleaved}`);
    }
    // No position_ids: caches [B, S, half], one row per token; out = X's own data (in place).
    const c3 = cos.subarray(0, 2 * S * half), s3 = sin.subarray(0, 2 * S * half);
    const xs = x.slice();
    const { Y } = pe.onnx.rotaryEmbedding({ X: { data: xs, dims }, cos_cache: { data: c3, dims: [2, S, half] },
      sin_cache: { data: s3, dims: [2, S, half] } }, numHeads ? { num_heads: numHeads } : {}, { out: xs });
    assert.equal(Y.data, xs);
    assert.ok(maxAbsDiff(xs, rotaryTwin(x, dims, c3, s3, null, half, 0, numHeads)) < 2e-6);
  }
  const x = new Float32Array(4 * 8);
  const small = { X: { data: x, dims: [1, 1, 4, 8] }, cos_cache: { data: new Float32Array(16), dims: [4, 4] }, sin_cache: { data: new Float32Array(16), dims: [4, 4] } };
  assert.throws(() => pe.onnx.rotaryEmbedding(small, {}, { out: new Float32Array(3) }), error(RangeError, /options.out.length must equal X's element count = 32 \(got 3\)/));
  assert.throws(() => pe.onnx.rotaryEmbedding({ ...small, position_ids: { data: [0, 1, 2, 9], dims: [1, 4] } }), error(RangeError, /position_ids must be in/));
  const into = new Float32Array(x.length);
  assert.equal(pe.applyRope(x, { seqLen: 4, nHeads: 1, headDim: 8, params: { headDim: 8 }, out: into }), into);
});

test("attention layout 'bhsd' reads heads-major q/k/v in place and equals the transposed 'bshd' call", () => {
  const H = 4, Hkv = 2, D = 16, qLen = 70, kvLen = 70;
  const q = randomFloats(qLen * H * D, 50), k = randomFloats(kvLen * Hkv * D, 51), v = randomFloats(kvLen * Hkv * D, 52);
  // [S][H][D] → [H][S][D]
  const toHeads = (x, S, heads) => {
    const y = new Float32Array(x.length);
    for (let s = 0; s < S; s++) for (let h = 0; h < heads; h++) y.set(x.subarray((s * heads + h) * D, (s * heads + h + 1) * D), (h * S + s) * D);
    return y;
  };
  const opts = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, alibi: true, window: 40, temperature: { floorScale: 16 },
    rope: { headDim: D, theta: 10000 } };
  const tokens = pe.attention(q, k, v, opts);
  const heads = pe.attention(toHeads(q, qLen, H), toHeads(k, kvLen, Hkv), toHeads(v, kvLen, Hkv), { ...opts, layout: 'bhsd' });
  assert.ok(maxAbsDiff(heads, toHeads(tokens, qLen, H)) < 1e-6);
  assert.throws(() => pe.attention(q, k, v, { ...opts, layout: 'hsd' }), error(RangeError, /layout must be one of 'bshd', 'bhsd'/));
});

test("attention kvDtype 'float16': Uint16Array K/V give exactly the float32 result on their values", () => {
  const H = 2, D = 16, T = 90;
  const half = (n, seed) => Uint16Array.from(randomFloats(n, seed), (x) => (x < 0 ? 0x8000 : 0) | (14 << 10) | Math.floor(Math.abs(x) * 1023));
  const value = (b) => (b & 0x8000 ? -1 : 1) * (1 + (b & 0x3ff) / 1024) * 2 ** (((b >> 10) & 0x1f) - 15);
  const k16 = half(T * H * D, 71), v16 = half(T * H * D, 72), q = randomFloats(T * H * D, 73);
  const opts = { nHeads: H, headDim: D, causal: true, rope: { headDim: D }, window: 40 };
  const want = pe.attention(q, Float32Array.from(k16, value), Float32Array.from(v16, value), opts);
  assert.deepEqual(pe.attention(q, k16, v16, { ...opts, kvDtype: 'float16' }), want);
  assert.throws(() => pe.attention(q, Float32Array.from(k16, value), v16, { ...opts, kvDtype: 'float16' }), error(TypeError, /k must be a Uint16Array of float16 bits/));
});

test('attention streams a long q through the heap in whole 64-row blocks: one onnx.attention call bit for bit; out, in place', () => {
  const H = 4, Hkv = 2, D = 16, S = 1100;  // a per-head mask of S keys: 192 rows a piece, 6 pieces
  const q = randomFloats(S * H * D, 80), k = randomFloats(S * Hkv * D, 81), v = randomFloats(S * Hkv * D, 82);
  const mask = randomFloats(H * S * S, 83);
  const before = pe.heapStats().inUseBytes;
  const opts = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, layout: 'bhsd', mask };
  const { output, weights } = pe.attention(q, k, v, { ...opts, returnWeights: true });
  const onnx = pe.onnx.attention({ Q: { data: q, dims: [1, H, S, D] }, K: { data: k, dims: [1, Hkv, S, D] },
    V: { data: v, dims: [1, Hkv, S, D] }, attn_mask: { data: mask, dims: [1, H, S, S] } },
  { is_causal: 1, qk_matmul_output_mode: 3 }, { outputs: ['Y', '', '', 'qk_matmul_output'] });
  assert.deepEqual(output, onnx.Y.data);
  assert.deepEqual(weights, onnx.qk_matmul_output.data);
  const tiled = pe.attention(q, k, v, opts);  // the tiled (no weights) path: 192-row pieces too
  assert.deepEqual(tiled, pe.onnx.attention({ Q: { data: q, dims: [1, H, S, D] }, K: { data: k, dims: [1, Hkv, S, D] },
    V: { data: v, dims: [1, Hkv, S, D] }, attn_mask: { data: mask, dims: [1, H, S, S] } }, { is_causal: 1 }).Y.data);
  // Token-major with one shared mask [S][S] (896-row pieces), against the float64 twin (each bias
  // term streams so with a shared mask in its scheme's suite, bias_terms.mjs).
  const shared = mask.subarray(0, S * S);
  const base = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true };
  const got = pe.attention(q, k, v, { ...base, mask: shared });
  assert.ok(maxAbsDiff(got, twin(q, k, v, { ...base, mask: shared })) < 2e-6);
  // out: written and returned, no other array; q itself (in place); no partial overlap.
  const out = new Float32Array(q.length);
  assert.equal(pe.attention(q, k, v, { ...opts, out }), out);
  assert.deepEqual(out, tiled);
  const inPlace = q.slice();
  assert.equal(pe.attention(inPlace, k, v, { ...opts, out: inPlace }), inPlace);
  assert.deepEqual(inPlace, tiled);
  const { output: o2 } = pe.attention(q, k, v, { ...opts, returnWeights: true, out });
  assert.equal(o2, out);
  assert.equal(pe.heapStats().inUseBytes, before);
  const shifted = new Float32Array(q.length + 16);
  shifted.set(q);
  assert.throws(() => pe.attention(shifted.subarray(0, q.length), k, v, { ...opts, out: shifted.subarray(16) }),
    error(RangeError, /options.out must be the input itself or not overlap it/));
  assert.throws(() => pe.attention(q, k, v, { ...opts, out: new Float32Array(3) }), error(RangeError, /options.out.length must equal q.length = 70400 \(got 3\)/));
  assert.throws(() => pe.attention(q, k, v, { ...opts, out: new Float64Array(q.length) }), error(TypeError, /options.out must be a Float32Array/));
});

test('onnx.attention streams Q in pieces: the rows of per-batch pe.attention calls bit for bit; past, qk_matmul_output, float16', () => {
  // Q [2, 8, 200, 512]: 8192 floats a row of every slab, so 128-row pieces (2); pe.attention on one
  // batch has 4096, one piece.
  const B = 2, H = 8, S = 200, D = 512, P = 30;
  const q = randomFloats(B * H * S * D, 90), k = randomFloats(B * H * S * D, 91), v = randomFloats(B * H * S * D, 92);
  const pk = randomFloats(B * H * P * D, 93), pv = randomFloats(B * H * P * D, 94);
  const batch = (x, b, len) => x.subarray(b * H * len * D, (b + 1) * H * len * D);
  const concat = (past, now, b) => {  // [H][P + S][D] of batch b
    const y = new Float32Array(H * (P + S) * D);
    for (let h = 0; h < H; h++) {
      y.set(past.subarray((b * H + h) * P * D, (b * H + h + 1) * P * D), h * (P + S) * D);
      y.set(now.subarray((b * H + h) * S * D, (b * H + h + 1) * S * D), (h * (P + S) + P) * D);
    }
    return y;
  };
  const tensor = (data, len) => ({ data, dims: [B, H, len, D] });
  const before = pe.heapStats().inUseBytes;
  const plain = pe.onnx.attention({ Q: tensor(q, S), K: tensor(k, S), V: tensor(v, S) }, { is_causal: 1 });
  const past = pe.onnx.attention({ Q: tensor(q, S), K: tensor(k, S), V: tensor(v, S), past_key: tensor(pk, P), past_value: tensor(pv, P) },
    { is_causal: 1, qk_matmul_output_mode: 3 }, { outputs: ['Y', 'present_key', 'present_value', 'qk_matmul_output'] });
  for (let b = 0; b < B; b++) {
    const opts = { nHeads: H, headDim: D, causal: true, layout: 'bhsd' };
    assert.deepEqual(batch(plain.Y.data, b, S), pe.attention(batch(q, b, S), batch(k, b, S), batch(v, b, S), opts));
    const kb = concat(pk, k, b), vb = concat(pv, v, b);
    const { output, weights } = pe.attention(batch(q, b, S), kb, vb, { ...opts, returnWeights: true });
    assert.deepEqual(batch(past.Y.data, b, S), output);
    assert.deepEqual(past.qk_matmul_output.data.subarray(b * H * S * (P + S), (b + 1) * H * S * (P + S)), weights);
    assert.deepEqual(batch(past.present_key.data, b, P + S), kb);
    assert.deepEqual(batch(past.present_value.data, b, P + S), vb);
  }
  assert.deepEqual(past.present_key.dims, [B, H, P + S, D]);
  // float16 Q, K, V stream the same way (2-byte pieces); within float16 rounding of the float32 call.
  const toHalf = (x) => Uint16Array.from(x, (f) => (f < 0 ? 0x8000 : 0) | (14 << 10) | Math.floor(Math.abs(f) * 1023));
  const fromHalf = (b) => (b & 0x8000 ? -1 : 1) * (1 + (b & 0x3ff) / 1024) * 2 ** (((b >> 10) & 0x1f) - 15);
  const [q16, k16, v16] = [q, k, v].map(toHalf);
  const y16 = pe.onnx.attention({ Q: { data: q16, dims: [B, H, S, D] }, K: { data: k16, dims: [B, H, S, D] },
    V: { data: v16, dims: [B, H, S, D] } }, { is_causal: 1 }).Y;
  const y32 = pe.onnx.attention({ Q: tensor(Float32Array.from(q16, fromHalf), S), K: tensor(Float32Array.from(k16, fromHalf), S),
    V: tensor(Float32Array.from(v16, fromHalf), S) }, { is_causal: 1 }).Y.data;
  assert.equal(y16.type, 'float16');
  let worst = 0;
  for (let i = 0; i < y32.length; i++) {
    const h = y16.data[i], e = (h >> 10) & 0x1f, m = h & 0x3ff;
    const value = (h & 0x8000 ? -1 : 1) * (e === 0 ? m * 2 ** -24 : (1 + m / 1024) * 2 ** (e - 15));
    worst = Math.max(worst, Math.abs(value - y32[i]) / Math.max(Math.abs(y32[i]), 2 ** -14));
  }
  assert.ok(worst <= 2 ** -11, `float16 Y within half an ulp (worst ${worst})`);
  // options.out takes Y (Q's own data in place: V's head size is Q's); wrong types and sizes are refused.
  const inPlace = q.slice();
  const y = pe.onnx.attention({ Q: tensor(inPlace, S), K: tensor(k, S), V: tensor(v, S) }, { is_causal: 1 }, { out: inPlace }).Y;
  assert.equal(y.data, inPlace);
  assert.deepEqual(inPlace, plain.Y.data);
  const small = { Q: { data: q.subarray(0, 64), dims: [1, 1, 4, 16] }, K: { data: k.subarray(0, 64), dims: [1, 1, 4, 16] },
    V: { data: v.subarray(0, 32), dims: [1, 1, 4, 8] } };
  assert.throws(() => pe.onnx.attention(small, {}, { out: small.Q.data }), error(RangeError, /options.out can be Q's data only when V's head size equals Q's/));
  assert.throws(() => pe.onnx.attention(small, {}, { out: new Float32Array(3) }), error(RangeError, /options.out.length must equal Y's element count = 32 \(got 3\)/));
  assert.throws(() => pe.onnx.attention({ Q: { data: q16.subarray(0, 64), dims: [1, 1, 4, 16] }, K: { data: k16.subarray(0, 64), dims: [1, 1, 4, 16] },
    V: { data: v16.subarray(0, 64), dims: [1, 1, 4, 16] } }, {}, { out: new Float32Array(64) }), error(TypeError, /options.out must be a Uint16Array/));
  assert.equal(pe.heapStats().inUseBytes, before);
});

test('the ONNX ops take every documented call form: (inputs), (inputs, attrs), (inputs, attrs, { outputs, opset, out })', () => {
  // One small case per op; every form must give the one-argument result (or the outputs it names).
  const T = (dims, seed) => ({ data: randomFloats(dims.reduce((a, b) => a * b, 1), seed), dims });
  const att = { Q: T([1, 2, 3, 8], 60), K: T([1, 2, 5, 8], 61), V: T([1, 2, 5, 8], 62) };
  const base = pe.onnx.attention(att).Y.data;
  const same = (r, what) => assert.equal(maxAbsDiff(r.Y.data, base), 0, what);
  same(pe.onnx.attention(att, {}), 'attrs {}');
  same(pe.onnx.attention(att, undefined, { outputs: ['Y'] }), '{ outputs: [Y] }');
  same(pe.onnx.attention(att, {}, { outputs: ['Y', '', ''] }), "{ outputs: [Y, '', ''] }");
  same(pe.onnx.attention(att, {}, { opset: 23 }), '{ opset: 23 }');
  const out = new Float32Array(base.length);
  assert.equal(pe.onnx.attention(att, {}, { outputs: ['Y'], out }).Y.data, out);
  same({ Y: { data: out } }, '{ outputs, out }');
  // qk_matmul_output takes the path that keeps the scores: Y to float32 rounding.
  const r = pe.onnx.attention(att, {}, { outputs: ['Y', '', '', 'qk_matmul_output'] });
  assert.ok(maxAbsDiff(r.Y.data, base) < 1e-6);
  assert.deepEqual(Object.keys(r), ['Y', 'qk_matmul_output']);
  assert.deepEqual(r.qk_matmul_output.dims, [1, 2, 3, 5]);
  const past = { ...att, past_key: T([1, 2, 2, 8], 63), past_value: T([1, 2, 2, 8], 64) };
  assert.deepEqual(Object.keys(pe.onnx.attention(past, { is_causal: 1 })), ['Y', 'present_key', 'present_value']);
  assert.deepEqual(Object.keys(pe.onnx.attention(past, { is_causal: 1 }, { outputs: ['Y'] })), ['Y']);
  assert.throws(() => pe.onnx.attention(att, {}, { outputs: ['present_key'] }), error(RangeError, /outputs must include Y/));
  assert.throws(() => pe.onnx.attention(att, {}, { outputs: 'Y' }), error(TypeError, /outputs must be an array/));

  const half = 4;
  const rot = { X: T([1, 2, 3, 8], 65), cos_cache: T([6, half], 66), sin_cache: T([6, half], 67),
    position_ids: { data: [0, 2, 5], dims: [1, 3] } };
  const y = pe.onnx.rotaryEmbedding(rot).Y.data;
  for (const [what, call] of [
    ['attrs {}', () => pe.onnx.rotaryEmbedding(rot, {})],
    ['{ outputs: [Y] }', () => pe.onnx.rotaryEmbedding(rot, {}, { outputs: ['Y'] })],
    ['attrs undefined, { outputs }', () => pe.onnx.rotaryEmbedding(rot, undefined, { outputs: ['Y'] })],
    ['{ out }', () => pe.onnx.rotaryEmbedding(rot, {}, { out: new Float32Array(y.length) })],
    ['{ outputs, out }', () => pe.onnx.rotaryEmbedding(rot, { interleaved: 0 }, { outputs: ['Y'], out: new Float32Array(y.length) })],
  ]) {
    const res = call();
    assert.deepEqual(Object.keys(res), ['Y'], what);
    assert.equal(maxAbsDiff(res.Y.data, y), 0, what);
  }
  assert.throws(() => pe.onnx.rotaryEmbedding(rot, {}, { outputs: ['Y', 'present_key'] }), error(RangeError, /unknown output slot "present_key" \(slots: Y\)/));
  assert.throws(() => pe.onnx.rotaryEmbedding(rot, {}, { outputs: [] }), error(RangeError, /outputs must include Y/));
  assert.throws(() => pe.onnx.rotaryEmbedding(rot, {}, { output: ['Y'] }), error(TypeError, /unknown option "output"/));
});
