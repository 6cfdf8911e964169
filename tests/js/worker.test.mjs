// The worker form in Node (initWorker: a worker thread): the same functions, asynchronous, results
// bit for bit those of the direct calls, errors of the same classes and codes, results transferred
// and inputs too when asked; and how long the main thread is blocked by a large attention call
// with and without it (printed). The Chromium side is tests/consumers/browser.test.mjs.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import * as ort from 'onnxruntime-web';
import { PosencRangeError, PosencTypeError, initWorker } from 'posenc';
import { pe, randomFloats } from './helpers.mjs';
import { gguf } from './model_writer.mjs';

const pw = await initWorker({ threads: Number(process.env.POSENC_TEST_THREADS ?? 1) });
const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));

test("initWorker: every result is the direct call's, bit for bit, of the same kind", async () => {
  assert.equal(pw.simdArch, pe.simdArch);
  assert.deepEqual(pw.names, pe.names);
  const S = 70, H = 4, Hkv = 2, D = 16;
  const q = randomFloats(2 * S * H * D, 1), k = randomFloats(2 * S * Hkv * D, 2), v = randomFloats(2 * S * Hkv * D, 3);
  const o = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, batch: 2, alibi: true };
  const params = { headDim: D, theta: 500000, scaling: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 64 } };
  const calls = [
    ['attention', q, k, v, o],
    ['attention', q, k, v, { ...o, rope: params, layout: 'bhsd', returnWeights: true }],
    ['applyRope', q, { seqLen: S, nHeads: H, batch: 2, params, offset: 5 }],
    ['applyRope2d', q.subarray(0, 4 * H * D), { nHeads: H, headDim: D, grid: [2, 2] }],
    ['sinusoidal', 64, 32, { layout: 'concat' }],
    ['ropeCache', { params, seqLen: 9 }],
    ['alibiBias', 4, 3, 5, {}],
    ['t5Bucket', [-3, 0, 40]],
    ['iropeScale', [0, 8191]],
    ['ropeFrequencies', params, { dtype: 'float64' }],
  ];
  for (const [fn, ...args] of calls) {
    const direct = pe[fn](...args), viaWorker = await pw[fn](...args);
    if (ArrayBuffer.isView(direct)) assert.ok(same(direct, viaWorker), fn);
    else assert.deepEqual(viaWorker, direct, fn);
  }
  // An ort.Tensor in, an ort.Tensor out, as the direct call.
  const Q = new ort.Tensor('float32', q, [2, S, H, D]), K = new ort.Tensor('float32', k, [2, S, Hkv, D]), V = new ort.Tensor('float32', v, [2, S, Hkv, D]);
  const y = await pw.attention(Q, K, V, { causal: true });
  assert.ok(y instanceof ort.Tensor);
  assert.ok(same(y.data, pe.attention(Q, K, V, { causal: true }).data));
  const { Y } = await pw.onnx.attention({ Q: new ort.Tensor('float32', q, [2, H, S, D]), K: new ort.Tensor('float32', k, [2, Hkv, S, D]),
    V: new ort.Tensor('float32', v, [2, Hkv, S, D]) }, { is_causal: 1 });
  assert.ok(Y instanceof ort.Tensor && same(Y.data, pe.attention(q, k, v, { ...o, alibi: undefined, layout: 'bhsd' })));
  // readModel from bytes: the same info, rope.params alias included.
  const file = gguf([['general.architecture', 'llama'], ['llama.context_length', { u32: 4096 }], ['llama.embedding_length', { u32: 256 }],
    ['llama.attention.head_count', { u32: 4 }], ['llama.rope.freq_base', { f32: 500000 }]]).bytes;
  const m = await pw.readModel(file);
  assert.deepEqual(m, await pe.readModel(file));
  assert.equal(m.rope.params, m.rope);
  // shiftKeys turns k in place, as the direct call does.
  const [a, b] = [k.slice(0, S * Hkv * D), k.slice(0, S * Hkv * D)];
  await pw.shiftKeys(a, { seqLen: S, nHeads: Hkv, params, delta: -7 });
  pe.shiftKeys(b, { seqLen: S, nHeads: Hkv, params, delta: -7 });
  assert.ok(same(a, b));
});

test('initWorker: errors keep their class, code and message; options.out is refused', async () => {
  for (const [fn, ...args] of [['sinusoidal', 0, 8], ['attention', new Float32Array(3), new Float32Array(3), new Float32Array(3), { nHeads: 2, headDim: 8 }],
    ['applyRope', 'x', { seqLen: 1 }]]) {
    let direct;
    try { pe[fn](...args); } catch (e) { direct = e; }
    await assert.rejects(pw[fn](...args), (e) => {
      assert.equal(e.constructor, direct.constructor);
      assert.deepEqual([e.message, e.code], [direct.message, direct.code]);
      return true;
    });
  }
  await assert.rejects(pw.readModel('/nonexistent/model.gguf'), (e) => e instanceof PosencRangeError && e.code === 'kUnavailable' && e.cause?.code === 'ENOENT');
  await assert.rejects(pw.applyRope(new Float32Array(8), { seqLen: 1, nHeads: 1, headDim: 8, params: { headDim: 8 }, out: new Float32Array(8) }),
    (e) => e instanceof PosencTypeError && /options.out is not taken by the worker form/.test(e.message));
});

test('initWorker({ transfer: true }) hands the inputs over (detached here) and returns the same bits', async () => {
  const moved = await initWorker({ transfer: true });
  try {
    const x = randomFloats(16 * 2 * 8, 9), want = pe.applyRope(x, { seqLen: 16, nHeads: 2, params: { headDim: 8 } });
    const y = await moved.applyRope(x, { seqLen: 16, nHeads: 2, params: { headDim: 8 } });
    assert.equal(x.byteLength, 0, 'the input was transferred');
    assert.ok(same(y, want));
  } finally {
    moved.terminate();
  }
});

test('main thread blocked by causal attention [2048, 8, 64]: the direct call against the worker form (printed)', async () => {
  const S = 2048, H = 8, D = 64, o = { nHeads: H, headDim: D, causal: true };
  const inputs = () => [1, 2, 3].map((seed) => randomFloats(S * H * D, seed));
  let t = performance.now();
  const want = pe.attention(...inputs(), o);
  const direct = performance.now() - t;
  // The longest gap between 1 ms timer ticks while the worker computes: what the main thread could
  // not do in that time (copying or transferring the inputs happens on it).
  async function stall(w) {
    const args = inputs();
    let worst = 0, last = performance.now(), on = true;
    const tick = () => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; if (on) setTimeout(tick, 1); };
    tick();
    t = performance.now();
    const y = await w.attention(...args, o);
    const total = performance.now() - t;
    on = false;
    assert.ok(same(y, want), 'the worker result is the direct one, bit for bit');
    return { worst, total };
  }
  const copied = await stall(pw);
  const moved = await initWorker({ transfer: true });
  const transferred = await stall(moved);
  moved.terminate();
  console.log(`worker: causal attention [${S}, ${H}, ${D}] blocks the main thread ${direct.toFixed(0)} ms called directly; ` +
    `through initWorker its longest stall is ${copied.worst.toFixed(1)} ms with the inputs copied, ${transferred.worst.toFixed(1)} ms transferred ` +
    `(the calls took ${copied.total.toFixed(0)} and ${transferred.total.toFixed(0)} ms)`);
  assert.ok(copied.worst < direct && transferred.worst < direct, 'the worker form blocks the main thread less than the call itself');
});

test('a Node process with an idle posenc worker exits by itself', async () => {
  const script = "import { initWorker } from 'posenc'; const w = await initWorker(); console.log((await w.sinusoidal(2, 2))[2]);";
  const { stdout } = await promisify(execFile)(process.execPath, ['--input-type=module', '-e', script], { timeout: 60000, cwd: new URL('.', import.meta.url) });
  assert.equal(stdout.trim(), String(Math.fround(Math.sin(1))));
});
