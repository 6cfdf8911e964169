// Shaped tensors in and out (js/tensor.js): batched data is never read as more tokens — flat arrays
// take `batch`, tensors give it in their dims — and a result is of its input's kind. References:
// the real onnxruntime-web (Attention-23, RotaryEmbedding-23 on the same tensors, and its sessions
// taking posenc's results as inputs), TensorFlow.js ops, and a class shaped as transformers.js's Tensor.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import * as ort from 'onnxruntime-web';
import { oneNodeModel } from '../../bench/ops/onnx-model.mjs';
import { badInputTest } from './bad_input.mjs';
import { error, maxAbsDiff, pe, randomFloats } from './helpers.mjs';

ort.env.wasm.numThreads = 1;
ort.env.logLevel = 'error';
const tf = createRequire(import.meta.url)('@tensorflow/tfjs');
await tf.setBackend('cpu');

/**
 * The shape of transformers.js's Tensor (v3, src/utils/tensor.js): new Tensor(type, data, dims),
 * with type, data and dims read through getters (it wraps an onnxruntime Tensor), no own fields.
 */
class TransformersTensor {
  #t;
  constructor(type, data, dims) { this.#t = { type, data, dims }; }
  get type() { return this.#t.type; }
  get data() { return this.#t.data; }
  get dims() { return this.#t.dims; }
  get size() { return this.#t.data.length; }
}

const session = (model) => ort.InferenceSession.create(model, { executionProviders: ['wasm'], intraOpNumThreads: 1 });
const f32 = (dims) => ({ type: 'float32', dims });

// onnxruntime-web's Attention-23 over [B, H, S, D] tensors (GQA from K's heads), causal, with an
// optional float mask of maskDims.
async function ortAttention({ B, H, Hkv, S, D, maskDims }) {
  const inputs = [{ name: 'Q', ...f32([B, H, S, D]) }, { name: 'K', ...f32([B, Hkv, S, D]) }, { name: 'V', ...f32([B, Hkv, S, D]) }];
  if (maskDims) inputs.push({ name: 'attn_mask', ...f32(maskDims) });
  return session(oneNodeModel({ opType: 'Attention', opset: 23, inputs, outputs: [{ name: 'Y', ...f32([B, H, S, D]) }], attrs: { is_causal: 1 } }));
}

test("attention: batch-2 'bhsd' data is right as ort.Tensors and as flat arrays with batch — onnxruntime-web's Attention-23 on the same tensors", async () => {
  const B = 2, H = 4, Hkv = 2, S = 9, D = 16;
  const q = randomFloats(B * H * S * D, 11), k = randomFloats(B * Hkv * S * D, 12), v = randomFloats(B * Hkv * S * D, 13);
  // A padding mask per batch row [B, 1, S, S]: row 1 cannot see its first two keys.
  const mask = new Float32Array(B * S * S);
  for (let i = 0; i < S; i++) for (let j = 0; j < 2; j++) mask[(S + i) * S + j] = -1e9;
  for (const maskDims of [null, [B, 1, S, S]]) {
    const s = await ortAttention({ B, H, Hkv, S, D, maskDims });
    const feeds = { Q: new ort.Tensor('float32', q, [B, H, S, D]), K: new ort.Tensor('float32', k, [B, Hkv, S, D]),
      V: new ort.Tensor('float32', v, [B, Hkv, S, D]) };
    if (maskDims) feeds.attn_mask = new ort.Tensor('float32', mask, maskDims);
    const want = (await s.run(feeds)).Y;
    const opts = { causal: true, layout: 'bhsd', ...(maskDims ? { mask: feeds.attn_mask } : {}) };
    const got = pe.attention(feeds.Q, feeds.K, feeds.V, opts);
    assert.ok(got instanceof ort.Tensor, 'an ort.Tensor in, an ort.Tensor out');
    assert.deepEqual([got.type, got.dims], ['float32', [B, H, S, D]]);
    assert.ok(maxAbsDiff(got.data, want.data) < 1e-5, `mask ${maskDims}: ${maxAbsDiff(got.data, want.data)}`);
    // The flat form with batch: 2 is the same call, bit for bit.
    const flat = pe.attention(q, k, v, { nHeads: H, nKvHeads: Hkv, headDim: D, batch: B, ...opts, ...(maskDims ? { mask: feeds.attn_mask } : {}) });
    assert.deepEqual(flat, got.data);
    // The result goes straight back into onnxruntime-web: as Q of the next run.
    const again = (await s.run({ ...feeds, Q: got })).Y;
    assert.ok(maxAbsDiff(again.data, pe.attention(got, feeds.K, feeds.V, opts).data) < 1e-5);
  }
  // The batch-1 default reads batch-2 data as one sequence of 2·S tokens: another result, as documented.
  const one = pe.attention(q, k, v, { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, layout: 'bhsd' });
  assert.notDeepEqual(one, pe.attention(q, k, v, { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, layout: 'bhsd', batch: 2 }));
});

test('attention: a shape that does not fit is refused, naming what disagrees', () => {
  const t = (dims) => new ort.Tensor('float32', new Float32Array(dims.reduce((a, b) => a * b)), dims);
  const q = t([2, 4, 3, 8]), kv = t([2, 4, 3, 8]);
  const cases = [
    [() => pe.attention(q, t([1, 4, 3, 8]), kv, { layout: 'bhsd' }), RangeError, /batch = 2 differs from k.dims, which give 1/],
    [() => pe.attention(q, kv, kv, { layout: 'bhsd', nHeads: 2 }), RangeError, /nHeads = 2 differs from q.dims, which give 4/],
    [() => pe.attention(q, kv, kv, { layout: 'bhsd', batch: 1 }), RangeError, /batch = 1 differs from q.dims, which give 2/],
    [() => pe.attention(q, kv, t([2, 4, 3, 4]), { layout: 'bhsd' }), RangeError, /headDim = 8 differs from v.dims, which give 4/],
    [() => pe.attention({ data: new Float32Array(10), dims: [2, 4, 3, 8] }, kv, kv, {}), RangeError, /q.data has 10 elements but dims \[2,4,3,8\] need 192/],
    [() => pe.attention(t([2, 3, 32]), kv, kv, {}), RangeError, /q.dims must be 4-D \[batch, qLen, nHeads, headDim\] or 3-D \[batch, qLen, nHeads \* headDim\] with options.nHeads/],
    [() => pe.attention(t([2, 3, 32]), kv, kv, { layout: 'bhsd', nHeads: 4 }), RangeError, /q.dims must be 4-D \[batch, nHeads, qLen, headDim\] \(got/],
    [() => pe.attention(new Float32Array(2 * 4 * 8 + 8), new Float32Array(64), new Float32Array(64), { nHeads: 4, headDim: 8, batch: 2 }), RangeError,
      /q.length must be a non-zero multiple of batch \* nHeads \* headDim = 64 \(got 72\)/],
    [() => pe.attention(q, kv, kv, { layout: 'bhsd', mask: t([3, 1, 3, 3]) }), RangeError, /mask.dims must broadcast to \[batch, nHeads, qLen, kvLen\] = \[2,4,3,3\]/],
    [() => pe.attention(tf.tensor([1, 2], [1, 1, 1, 2], 'int32'), kv, kv, {}), TypeError, /q must be a float32 or float16 tensor \(got type "int32"\)/],
  ];
  for (const [call, type, pattern] of cases) assert.throws(call, error(type, pattern));
});

test('attention: 3-D [batch, seqLen, nHeads · headDim] (ONNX 3-D) equals the 4-D call; a mask [batch, 1, q, kv] applies per row', () => {
  const B = 2, S = 5, H = 2, D = 8;
  const q = randomFloats(B * S * H * D, 21), k = randomFloats(B * S * H * D, 22), v = randomFloats(B * S * H * D, 23);
  const mask = randomFloats(B * S * S, 24);
  const four = pe.attention({ data: q, dims: [B, S, H, D] }, { data: k, dims: [B, S, H, D] }, { data: v, dims: [B, S, H, D] },
    { causal: true, mask: { data: mask, dims: [B, 1, S, S] } });
  const three = pe.attention({ data: q, dims: [B, S, H * D] }, { data: k, dims: [B, S, H * D] }, { data: v, dims: [B, S, H * D] },
    { nHeads: H, causal: true, mask: { data: mask, dims: [B, 1, S, S] } });
  assert.deepEqual(three.dims, [B, S, H * D]);
  assert.deepEqual(three.data, four.data);
  for (let b = 0; b < B; b++) {
    const row = (x, n) => x.subarray(b * n, (b + 1) * n);
    const one = pe.attention(row(q, S * H * D), row(k, S * H * D), row(v, S * H * D),
      { nHeads: H, headDim: D, causal: true, mask: row(mask, S * S) });
    assert.deepEqual(row(four.data, S * H * D), one, `batch row ${b}`);
  }
});

// TF.js's own ops as the reference: softmax(q·kᵀ/√D + causal mask)·v over [B, H, S, D].
function tfAttention(q, k, v, S, D) {
  return tf.tidy(() => {
    const scores = tf.matMul(q, k, false, true).mul(1 / Math.sqrt(D));
    const allowed = tf.linalg.bandPart(tf.ones([S, S]), -1, 0);
    return tf.matMul(tf.softmax(scores.add(tf.ones([S, S]).sub(allowed).mul(-1e9))), v);
  });
}

test('TF.js tensors in: { data, dims } out, which tf.tensor(y.data, y.dims) takes back; equal to the same attention in TF.js ops', () => {
  const B = 2, H = 3, S = 7, D = 8;
  const [q, k, v] = [31, 32, 33].map((seed) => tf.tensor(randomFloats(B * H * S * D, seed), [B, H, S, D]));
  const y = pe.attention(q, k, v, { causal: true, layout: 'bhsd' });
  assert.ok(!(y instanceof tf.Tensor));
  assert.deepEqual(y.dims, [B, H, S, D]);
  const back = tf.tensor(y.data, y.dims);
  const want = tfAttention(q, k, v, S, D);
  assert.ok(maxAbsDiff(back.dataSync(), want.dataSync()) < 1e-5, `${maxAbsDiff(back.dataSync(), want.dataSync())}`);
  const rope = pe.applyRope(q, { params: { headDim: D }, tensorLayout: 'bhsd' });
  assert.deepEqual(rope.dims, [B, H, S, D]);
  assert.deepEqual(rope.data, pe.applyRope(q.dataSync(), { seqLen: S, nHeads: H, headDim: D, batch: B, params: { headDim: D }, tensorLayout: 'bhsd' }));
  const onnxY = pe.onnx.attention({ Q: q, K: k, V: v }, { is_causal: 1 }).Y;
  assert.deepEqual([Object.getPrototypeOf(onnxY), onnxY.dims], [Object.prototype, [B, H, S, D]]);
  assert.ok(maxAbsDiff(onnxY.data, y.data) < 1e-6);
  tf.dispose([q, k, v, back, want]);
});

test("applyRope: batch rows with their own positions ([batch][seqLen], HF's position_ids) = onnxruntime-web's RotaryEmbedding-23", async () => {
  const B = 2, H = 3, S = 6, D = 16;
  const params = { headDim: D, theta: 10000 };
  const positions = [0, 1, 2, 3, 4, 5, 7, 8, 9, 10, 11, 12];
  const { cos, sin } = pe.ropeCache({ params, seqLen: 13 });
  const x = randomFloats(B * H * S * D, 41);
  const model = oneNodeModel({ opType: 'RotaryEmbedding', opset: 23, outputs: [{ name: 'Y', ...f32([B, H, S, D]) }],
    inputs: [{ name: 'X', ...f32([B, H, S, D]) }, { name: 'cos_cache', ...f32([13, D / 2]) }, { name: 'sin_cache', ...f32([13, D / 2]) },
      { name: 'position_ids', type: 'int64', dims: [B, S] }] });
  const X = new ort.Tensor('float32', x, [B, H, S, D]);
  const want = (await (await session(model)).run({ X, cos_cache: new ort.Tensor('float32', cos, [13, D / 2]),
    sin_cache: new ort.Tensor('float32', sin, [13, D / 2]), position_ids: new ort.Tensor('int64', BigInt64Array.from(positions, BigInt), [B, S]) })).Y;
  const got = pe.applyRope(X, { params, positions, tensorLayout: 'bhsd' });
  assert.ok(got instanceof ort.Tensor);
  assert.ok(maxAbsDiff(got.data, want.data) < 1e-6, `${maxAbsDiff(got.data, want.data)}`);
  // Flat with batch: the same bits; one row at a time: the same bits.
  assert.deepEqual(pe.applyRope(x, { seqLen: S, nHeads: H, batch: B, params, positions, tensorLayout: 'bhsd' }), got.data);
  const row = S * H * D;
  const second = pe.applyRope(x.subarray(row), { seqLen: S, nHeads: H, params, positions: positions.slice(S), tensorLayout: 'bhsd' });
  assert.deepEqual(got.data.subarray(row), second);
  // One row of positions serves every batch row; a batch-2 x without batch is refused (its length says so).
  const shared = pe.applyRope(x, { seqLen: S, nHeads: H, batch: B, params });
  assert.deepEqual(shared.subarray(row), pe.applyRope(x.subarray(row), { seqLen: S, nHeads: H, params }));
  assert.throws(() => pe.applyRope(x, { seqLen: S, nHeads: H, params }), error(RangeError, /x.length must equal seqLen \* nHeads \* headDim = 288 \(got 576\)/));
});

test('a transformers.js-shaped Tensor in, the same class out, for every op taking tensors', () => {
  const S = 4, H = 2, D = 8;
  const x = randomFloats(S * H * D, 51);
  const T = (data, dims = [1, S, H, D]) => new TransformersTensor('float32', data, dims);
  const rope = pe.applyRope(T(x), { params: { headDim: D } });
  assert.ok(rope instanceof TransformersTensor);
  assert.deepEqual([rope.type, rope.dims, rope.data], ['float32', [1, S, H, D], pe.applyRope(x, { seqLen: S, nHeads: H, params: { headDim: D } })]);
  const y = pe.attention(T(x), T(x), T(x), { causal: true });
  assert.ok(y instanceof TransformersTensor);
  assert.deepEqual(y.data, pe.attention(x, x, x, { nHeads: H, headDim: D, causal: true }));
  const onnx = pe.onnx.rotaryEmbedding({ X: T(x, [1, S, H * D]), cos_cache: T(new Float32Array(S * D / 2).fill(1), [S, D / 2]),
    sin_cache: T(new Float32Array(S * D / 2), [S, D / 2]), position_ids: { data: [0, 1, 2, 3], dims: [1, S] } }, { num_heads: H });
  assert.ok(onnx.Y instanceof TransformersTensor);
  assert.deepEqual(onnx.Y.data, x);  // cos 1, sin 0: the identity
  const r2 = pe.applyRope2d(T(x, [1, S, H, D]), { grid: [2, 2] });
  assert.ok(r2 instanceof TransformersTensor);
  assert.deepEqual(r2.data, pe.applyRope2d(x, { nHeads: H, headDim: D, grid: [2, 2] }));
});

test('kvCache and shiftKeys take tensors of one sequence; a batch of 2 is refused, a TF.js tensor to shift in place too', () => {
  const S = 5, Hkv = 2, H = 4, D = 8;
  const k = randomFloats(S * Hkv * D, 61), v = randomFloats(S * Hkv * D, 62), q = randomFloats(H * D, 63);
  const rope = { params: { headDim: D } };
  const flat = pe.kvCache({ nKvHeads: Hkv, headDim: D, capacity: 8, rope });
  const shaped = pe.kvCache({ nKvHeads: Hkv, headDim: D, capacity: 8, rope });
  try {
    flat.append(k, v);
    shaped.append(new ort.Tensor('float32', k, [1, S, Hkv, D]), new ort.Tensor('float32', v, [1, S, Hkv, D]));
    const y = shaped.attend(new ort.Tensor('float32', q, [1, 1, H, D]));
    assert.ok(y instanceof ort.Tensor);
    assert.deepEqual(y.data, flat.attend(q, { nHeads: H }));
    const two = new ort.Tensor('float32', new Float32Array(2 * S * Hkv * D), [2, S, Hkv, D]);
    assert.throws(() => shaped.append(two, two), error(RangeError, /k.dims\[0\] = 2: a cache holds one sequence \(batch 1\)/));
  } finally {
    flat.delete();
    shaped.delete();
  }
  const kt = new ort.Tensor('float32', k.slice(), [1, S, Hkv, D]), kf = k.slice();
  pe.shiftKeys(kt, { delta: -2, params: { headDim: D } });
  pe.shiftKeys(kf, { seqLen: S, nHeads: Hkv, delta: -2, params: { headDim: D } });
  assert.deepEqual(kt.data, kf);
  assert.throws(() => pe.shiftKeys(tf.tensor(k, [1, S, Hkv, D]), { delta: 1, params: { headDim: D } }), error(TypeError, /TensorFlow.js tensor is immutable/));
});

// The bad-input rule (and 10,000 good calls leaving the heap flat) for the tensor and batch forms.
{
  const t = (dims, seed = 1) => new ort.Tensor('float32', randomFloats(dims.reduce((a, b) => a * b), seed), dims);
  const q = t([2, 2, 5, 8], 1), kv = t([2, 1, 5, 8], 2), mask = t([2, 1, 5, 5], 3);
  badInputTest('attention', () => Array.from(pe.attention(q, kv, kv, { causal: true, layout: 'bhsd', mask }).data), [
    [() => pe.attention(q, t([1, 1, 5, 8]), kv, { layout: 'bhsd' }), RangeError, 'batch'],
    [() => pe.attention(q, kv, kv, { layout: 'bhsd', mask: t([3, 1, 5, 5]) }), RangeError, 'mask.dims'],
    [() => pe.attention(q.data, kv.data, kv.data, { nHeads: 2, nKvHeads: 1, headDim: 8, batch: 3 }), RangeError, 'q.length'],
  ]);
  const x = t([2, 5, 2, 8], 4);
  badInputTest('applyRope', () => Array.from(pe.applyRope(x, { params: { headDim: 8 }, positions: [0, 1, 2, 3, 4, 5, 6, 7, 8, 9] }).data), [
    [() => pe.applyRope(x, { params: { headDim: 8 }, positions: [0, 1, 2] }), RangeError, 'positions.length'],
    [() => pe.applyRope(x, { params: { headDim: 8 }, seqLen: 4 }), RangeError, 'seqLen'],
  ]);
}
