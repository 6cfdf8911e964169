// The threaded build through init({ threads }): the same results as the single-threaded build, bit
// for bit (each output row is computed by one task, in the same order), on inputs large enough to
// be split (several query blocks per head, RoPE over many rows) and to grow the shared heap; clear
// errors; no leaks. The float64 twins and the conformance vectors run threaded too (test.sh). The
// lab's training (every scheme, randomized positions, evaluation at 2 T) is bitwise too.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { init } from 'posenc';
import { error, pe, randomFloats } from './helpers.mjs';

const one = pe.threads === 1 ? pe : await init();
const two = await init({ threads: 2 });
const three = await init({ threads: 3 });

const same = (a, b, what) => assert.ok(a.length === b.length && a.every((x, i) => Object.is(x, b[i])), `${what}: differs`);

test('threads: init({ threads }) loads the pthreads build; pe.threads reports the count', () => {
  assert.equal(one.threads, 1);
  assert.equal(two.threads, 2);
  assert.equal(three.threads, 3);
  assert.equal(two.simdArch, 'wasm');
});

test('threads: bad thread counts and mixed options are refused with the rule', async () => {
  await assert.rejects(init({ threads: 0 }), error(RangeError, /init: threads must be in \[1, 64\] \(got 0\)/));
  await assert.rejects(init({ threads: 65 }), error(RangeError, /threads must be in \[1, 64\]/));
  await assert.rejects(init({ threads: 1.5 }), error(RangeError, /threads must be an integer/));
  await assert.rejects(init({ threads: '2' }), error(TypeError, /threads must be a number/));
  await assert.rejects(init({ threads: 2, wasmBinary: new Uint8Array(8) }), error(RangeError, /wasmBinary is the single-threaded posenc.wasm/));
});

test('threads: kvCache.attend (float32 and float16, 1 and 16 queries, a window) equals 1 thread bit for bit', () => {
  const T = 3000, H = 8, Hkv = 2, D = 64;
  const k = randomFloats(T * Hkv * D, 11), v = randomFloats(T * Hkv * D, 12);
  for (const options of [{}, { dtype: 'float16' }, { window: 1000, sinkTokens: 4, capacity: 1019 }]) {
    for (const n of [1, 16]) {
      const q = randomFloats(n * H * D, 13 + n);
      const outs = [one, two, three].map((p) => {
        const cache = p.kvCache({ nKvHeads: Hkv, headDim: D, capacity: T, rope: { headDim: D }, ...options });
        cache.append(k, v);
        const y = cache.attend(q, { nHeads: H, alibi: true });
        cache.delete();
        return y;
      });
      same(outs[1], outs[0], `2 threads, ${JSON.stringify(options)}, ${n} queries`);
      same(outs[2], outs[0], `3 threads, ${JSON.stringify(options)}, ${n} queries`);
    }
  }
});

test('threads: attention (causal, GQA, ALiBi, window, bhsd, float16 K/V, weights) equals 1 thread bit for bit', () => {
  const S = 300, H = 8, Hkv = 2, D = 64;
  const q = randomFloats(S * H * D, 1), k = randomFloats(S * Hkv * D, 2), v = randomFloats(S * Hkv * D, 3);
  const cases = [
    { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true },
    { nHeads: H, nKvHeads: Hkv, headDim: D, causal: false, alibi: true },
    { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, window: 70, sinkTokens: 4 },
    { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, rope: { params: { headDim: D } } },
    { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, layout: 'bhsd', alibi: true },
  ];
  for (const o of cases) {
    for (const pe2 of [two, three]) same(pe2.attention(q, k, v, o), one.attention(q, k, v, o), JSON.stringify(o));
  }
  const k16 = Uint16Array.from(k, (_, i) => 0x3c00 ^ (i & 0x3ff)), v16 = Uint16Array.from(v, (_, i) => 0x3800 ^ (i & 0x1ff));
  const o16 = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, kvDtype: 'float16' };
  same(two.attention(q, k16, v16, o16), one.attention(q, k16, v16, o16), 'float16 K/V');
  const ow = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, returnWeights: true };
  const a = two.attention(q, k, v, ow), b = one.attention(q, k, v, ow);
  same(a.output, b.output, 'output with weights');
  same(a.weights, b.weights, 'weights');
});

test('threads: onnx.attention with past K/V and onnx.rotaryEmbedding (streamed, into out) equal 1 thread', () => {
  const B = 2, H = 4, S = 150, P = 40, D = 32;
  const t = (dims, seed) => ({ data: randomFloats(dims.reduce((x, y) => x * y), seed), dims });
  const inputs = { Q: t([B, H, S, D], 4), K: t([B, H, S, D], 5), V: t([B, H, S, D], 6),
    past_key: t([B, H, P, D], 7), past_value: t([B, H, P, D], 8) };
  const outputs = ['Y', 'present_key', 'present_value'];
  const a = two.onnx.attention(inputs, { is_causal: 1 }, { outputs }), b = one.onnx.attention(inputs, { is_causal: 1 }, { outputs });
  for (const slot of outputs) same(a[slot].data, b[slot].data, slot);

  const Sx = 2048, Hx = 4, Dx = 64, half = Dx / 2;
  const x = t([1, Hx, Sx, Dx], 9);
  const cos = t([Sx, half], 10), sin = t([Sx, half], 11);
  const ids = { data: BigInt64Array.from({ length: Sx }, (_, i) => BigInt(i)), dims: [1, Sx] };
  const rin = { X: x, cos_cache: cos, sin_cache: sin, position_ids: ids };
  const fresh = two.onnx.rotaryEmbedding(rin).Y.data;
  same(fresh, one.onnx.rotaryEmbedding(rin).Y.data, 'rotaryEmbedding');
  const out = new Float32Array(x.data.length);
  assert.equal(two.onnx.rotaryEmbedding(rin, {}, { out }).Y.data, out);
  same(out, fresh, 'rotaryEmbedding into out');
  const opts = { seqLen: 512, nHeads: 8, headDim: 128, params: { headDim: 128, theta: 5e5 } };
  const xr = randomFloats(512 * 8 * 128, 12);
  same(two.applyRope(xr, opts), one.applyRope(xr, opts), 'applyRope');
});

test('threads: the shared heap grows (S = 4096, 8 heads) and results still agree; no leaks', () => {
  const S = 4096, H = 8, D = 64;
  const before = two.heapStats();
  const q = randomFloats(S * H * D, 13), k = randomFloats(S * H * D, 14), v = randomFloats(S * H * D, 15);
  const o = { nHeads: H, headDim: D, causal: true };
  const a = two.attention(q, k, v, o);
  const after = two.heapStats();
  assert.ok(after.heapBytes > before.heapBytes || before.heapBytes > 3 * q.byteLength, 'the heap had to grow');
  same(a, one.attention(q, k, v, o), 'S = 4096');
  assert.equal(after.inUseBytes, before.inUseBytes, 'every scratch buffer freed');
});

test('threads: pe.lab training (randomized positions too) and evaluation equal 1 thread bit for bit, every scheme', () => {
  const T = 24, B = 4, L = 2 * T;
  const bits = (a, b, what) => assert.ok(a.length === b.length && a.every((x, i) => Object.is(x, b[i])), `${what}: differs`);
  for (const scheme of one.lab.schemes) {
    const [ref, ...others] = [one, two, three].map((p) => {
      const data = p.lab.dataset({ task: 'markov', vocabSize: 8, seed: 5 });
      const model = p.lab.createModel({ vocabSize: 8, dModel: 32, nLayers: 2, nHeads: 4, trainLength: T, maxPositions: 3 * T, scheme, seed: 11 });
      const losses = [];
      for (let s = 0; s < 4; s++) {
        const tokens = data.sample(B, T, s);
        const options = s % 2 === 1 ? { lr: 1e-2, positions: p.lab.randomPositions(B, T, 3 * T, 100 + s) } : { lr: 1e-2 };
        losses.push(model.trainStep(tokens, options));
      }
      const { gradients } = model.lossAndGradients(data.sample(B, T, 9));
      const ev = model.evaluate(data.sample(3, L, 10), { length: L });
      const trace = { losses, weights: model.exportWeights(), gradients: Object.values(gradients), eval: [ev.loss, ...ev.positionLoss] };
      model.delete();
      data.delete();
      return trace;
    });
    others.forEach((t, i) => {
      const what = `${scheme}, ${i + 2} threads`;
      bits(t.losses, ref.losses, `${what}: losses`);
      bits(t.weights, ref.weights, `${what}: weights (safetensors bytes)`);
      t.gradients.forEach((g, k) => bits(g, ref.gradients[k], `${what}: gradient ${k}`));
      bits(t.eval, ref.eval, `${what}: evaluation`);
    });
  }
});
