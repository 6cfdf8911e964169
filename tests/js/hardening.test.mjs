// Hardening through the package: the bad-input rule (bad_input.mjs: TypeError or RangeError naming
// the argument, raised before anything stays allocated, a good call right after still right, 10,000
// calls leave the heap flat) for the functions of no positional scheme — each scheme's suite holds
// its own functions' rows —, errors' kinds, and the memory limit.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ELEMENTS } from 'posenc';
import { badInputTest } from './bad_input.mjs';
import { pe, randomFloats } from './helpers.mjs';

const x16 = randomFloats(2 * 1 * 8, 1);
const T = (dims, data) => ({ data: data ?? new Float32Array(dims.reduce((a, b) => a * b, 1)).fill(0.25), dims });
const attnInputs = { Q: T([1, 2, 3, 4]), K: T([1, 2, 3, 4]), V: T([1, 2, 3, 4]) };
const rotInputs = { X: T([1, 1, 2, 8]), cos_cache: T([4, 4]), sin_cache: T([4, 4]), position_ids: { data: [0, 1], dims: [1, 2] } };

// A fresh KV cache holding one token for a call, freed after it whatever happens.
const withCache = (f) => () => {
  const c = pe.kvCache({ nKvHeads: 1, headDim: 4, capacity: 4 });
  try {
    c.append(Float32Array.of(1, 0, 0, 0), Float32Array.of(0.5, 0.25, 0, 1));
    return f(c);
  } finally {
    c.delete();
  }
};

// Each function of no scheme: a good call, and bad calls with the error each must raise.
// `name` is the message prefix (the function), `arg` what the message must name.
const MATRIX = [
  ['allocFloat32', () => { const b = pe.allocFloat32(4); b.delete(); return 4; }, [
    [() => pe.allocFloat32(0), RangeError, 'length'], [() => pe.allocFloat32(MAX_ELEMENTS + 1), RangeError, 'length'], [() => pe.allocFloat32('4'), TypeError, 'length'],
  ]],
  ['attention', () => pe.attention(x16, x16, x16, { nHeads: 1, headDim: 8, causal: true }), [
    [() => pe.attention(x16, x16, x16, { nHeads: 3, headDim: 8 }), RangeError, 'q.length'],
    [() => pe.attention(x16, x16, x16, { nHeads: 1, headDim: 8, scale: NaN }), RangeError, 'scale'],
    [() => pe.attention(x16, x16, x16), TypeError, 'options'],
  ]],
  ['onnx.attention', () => pe.onnx.attention(attnInputs, {}).Y.data, [
    [() => pe.onnx.attention({ ...attnInputs, K: T([1, 3, 3, 4]), V: T([1, 3, 3, 4]) }), RangeError, 'multiple of kv_num_heads'],
    [() => pe.onnx.attention({ ...attnInputs, attn_mask: T([3, 3, 3]) }), RangeError, 'attn_mask'],
    [() => pe.onnx.attention({ ...attnInputs, Q: { data: new Float32Array(3), dims: [1, 2, 3, 4] } }), RangeError, 'inputs.Q.data'],
    [() => pe.onnx.attention({ ...attnInputs, Q: { data: new Float32Array(24), dims: [1, 2, -3, 4] } }), RangeError, 'inputs.Q.dims[2]'],
    [() => pe.onnx.attention(attnInputs, { scale: Infinity }), RangeError, 'attrs.scale'],
  ]],
  ['onnx.rotaryEmbedding', () => pe.onnx.rotaryEmbedding(rotInputs, {}).Y.data, [
    [() => pe.onnx.rotaryEmbedding({ ...rotInputs, position_ids: { data: [0, 7], dims: [1, 2] } }), RangeError, 'position_ids'],
    [() => pe.onnx.rotaryEmbedding(rotInputs, { interleaved: 2 }), RangeError, 'attrs.interleaved'],
    [() => pe.onnx.rotaryEmbedding(rotInputs, { rotary_embedding_dim: 6 }), RangeError, 'cos_cache'],
  ]],
  ['kvCache', withCache((c) => c.attend(Float32Array.of(1, 2, 3, 4, 4, 3, 2, 1), { nHeads: 2 })), [
    [() => pe.kvCache({ nKvHeads: 0, headDim: 4, capacity: 4 }), RangeError, 'nKvHeads'],
    [() => pe.kvCache({ nKvHeads: 1, headDim: '4', capacity: 4 }), TypeError, 'headDim'],
    [() => pe.kvCache({ nKvHeads: 1, headDim: 4, capacity: 2 ** 40 }), RangeError, 'capacity'],
    [() => pe.kvCache({ nKvHeads: 1, headDim: 4, capacity: 4, window: 8 }), RangeError, 'capacity'],
    [() => pe.kvCache({ nKvHeads: 8, headDim: 128, capacity: 2 ** 20 }), RangeError, 'capacity'],
    [withCache((c) => c.append(new Float32Array(3), new Float32Array(3))), RangeError, 'k.length'],
    [withCache((c) => c.append(new Float32Array(4), new Float32Array(4), { positions: [0] })), RangeError, 'positions'],
    [withCache((c) => c.attend(new Float32Array(4), { nHeads: 1, out: new Float32Array(3) })), RangeError, 'out'],
    [withCache((c) => c.attend(new Float32Array(4), { nHeads: 1, scale: NaN })), RangeError, 'scale'],
    [withCache((c) => c.shift(1.5)), RangeError, 'delta'],
  ]],
];

for (const [name, good, bads] of MATRIX) badInputTest(name, good, bads);

test("errors keep the C++ status's kind: err.code kBadShape, kTooLarge, kBadArgument", async () => {
  const code = (f) => {
    try {
      f();
    } catch (e) {
      return [e.constructor.name, e.code];
    }
    return null;
  };
  // From the core (the status crosses Embind with its code) ...
  assert.deepEqual(code(() => pe.onnx.attention({ Q: T([1, 2, 3, 8]), K: T([1, 2, 5, 4]), V: T([1, 2, 5, 8]) })),
    ['PosencRangeError', 'kBadShape']);
  assert.deepEqual(code(() => pe.ropeFrequencies({ headDim: 8, theta: -1 })), ['PosencRangeError', 'kBadArgument']);
  const { gguf } = await import('./model_writer.mjs');
  const file = gguf([['general.architecture', 'gpt2']], [{ name: 'position_embd.weight', ne: [8, 16], data: new Float32Array(128) }]).bytes;
  await assert.rejects(pe.readModel(file, { maxTableFloats: 64 }), (e) => e instanceof RangeError && e.code === 'kTooLarge');
  await assert.rejects(pe.readModel(file.subarray(0, 40)), (e) => e instanceof RangeError && e.code === 'kBadArgument');
  // ... and from the JS layer's own checks, made before anything reaches the heap.
  assert.deepEqual(code(() => pe.sinusoidal('3', 4)), ['PosencTypeError', 'kBadArgument']);
  assert.deepEqual(code(() => pe.sinusoidal(MAX_ELEMENTS, 2)), ['PosencRangeError', 'kTooLarge']);
  assert.ok(code(() => pe.sinusoidal(0, 4))[0] !== 'RangeError');  // subclasses: instanceof RangeError still holds
  try {
    pe.sinusoidal(0, 4);
  } catch (e) {
    assert.ok(e instanceof RangeError);
    assert.equal(e.name, 'RangeError');
  }
});

test('memory limit: a result over MAX_ELEMENTS is a RangeError, not an abort, and the module keeps working', () => {
  assert.throws(() => pe.sinusoidal(MAX_ELEMENTS, 2), RangeError);
  // Past what the heap can ever hold (2 GiB): a RangeError from the allocation, not a crash.
  const big = [];
  assert.throws(() => { for (let i = 0; i < 8; i++) big.push(pe.allocFloat32(MAX_ELEMENTS)); }, (e) => e instanceof RangeError && /do not fit in WASM memory/.test(e.message));
  for (const b of big) b.delete();
  assert.equal(pe.sinusoidal(2, 2)[2], Math.fround(Math.sin(1)));
});
