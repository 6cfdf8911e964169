// Hardening through the package: a bad-input matrix over every exported function (TypeError or
// RangeError naming the argument, raised before anything stays allocated, and a good call right
// after still gives the right answer), and a leak test (10,000 calls each leave the heap flat).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ELEMENTS } from 'posenc';
import { pe, randomFloats } from './helpers.mjs';

const x16 = randomFloats(2 * 1 * 8, 1);
const rope = { seqLen: 2, nHeads: 1, headDim: 8, params: { headDim: 8 } };
const table = pe.learnedTable(8, 4, { seed: 1 });
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

// Every exported function: a good call, and bad calls with the error each must raise.
// `name` is the message prefix (the function), `arg` what the message must name.
const MATRIX = [
  ['sinusoidal', () => pe.sinusoidal(3, 4), [
    [() => pe.sinusoidal(), TypeError, 'seqLen'], [() => pe.sinusoidal('3', 4), TypeError, 'seqLen'],
    [() => pe.sinusoidal(NaN, 4), RangeError, 'seqLen'], [() => pe.sinusoidal(Infinity, 4), RangeError, 'seqLen'],
    [() => pe.sinusoidal(-1, 4), RangeError, 'seqLen'], [() => pe.sinusoidal(0, 4), RangeError, 'seqLen'],
    [() => pe.sinusoidal(3, 0), RangeError, 'dModel'], [() => pe.sinusoidal(3, 2.5), RangeError, 'dModel'],
    [() => pe.sinusoidal(3, 4, { base: -1 }), RangeError, 'base'], [() => pe.sinusoidal(3, 4, { layout: 'x' }), RangeError, 'layout'],
    [() => pe.sinusoidal(2 ** 16, 2 ** 13), RangeError, 'seqLen * dModel'], [() => pe.sinusoidal(3, 4, { positions: [1] }), RangeError, 'positions'],
  ]],
  ['sinusoidalShift', () => pe.sinusoidalShift(1, 4), [
    [() => pe.sinusoidalShift(NaN, 4), RangeError, 'k'], [() => pe.sinusoidalShift(1, 3), RangeError, 'dModel'],
    [() => pe.sinusoidalShift(1, '4'), TypeError, 'dModel'], [() => pe.sinusoidalShift(1, 2 ** 15), RangeError, 'dModel * dModel'],
  ]],
  ['learnedTable', () => pe.learnedTable(4, 2, { seed: 3 }).weights, [
    [() => pe.learnedTable(0, 2), RangeError, 'maxLen'], [() => pe.learnedTable(4, -2), RangeError, 'dModel'],
    [() => pe.learnedTable(4, 2, { seed: -1 }), RangeError, 'seed'], [() => pe.learnedTable(4, 2, { std: NaN }), RangeError, 'std'],
    [() => pe.learnedTable(4, 2, { weights: [1, 2] }), TypeError, 'weights'], [() => pe.learnedTable(4, 2, { weights: new Float32Array(7) }), RangeError, 'weights.length'],
  ]],
  ['learnedTable.lookup', () => table.lookup([0, 7]), [
    [() => table.lookup([8]), RangeError, 'positions[0]'], [() => table.lookup([-1]), RangeError, 'positions[0]'],
    [() => table.lookup([0.5]), RangeError, 'positions[0]'], [() => table.lookup('0'), TypeError, 'positions'],
    [() => table.lookup([]), RangeError, 'positions'],
  ]],
  ['embed', () => pe.embed([1, 0], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights }), [
    [() => pe.embed([8], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights }), RangeError, 'tokenIds[0]'],
    [() => pe.embed([1], { tokenEmbeddings: table.weights, dModel: 3, positionTable: table.weights }), RangeError, 'tokenEmbeddings.length'],
    [() => pe.embed([1], { tokenEmbeddings: [1], dModel: 4, positionTable: table.weights }), TypeError, 'tokenEmbeddings'],
    [() => pe.embed([1], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights, scale: Infinity }), RangeError, 'scale'],
    [() => pe.embed([1]), TypeError, 'options'],
  ]],
  ['ropeFrequencies', () => pe.ropeFrequencies({ headDim: 8 }), [
    [() => pe.ropeFrequencies({ headDim: 0 }), RangeError, 'params.headDim'], [() => pe.ropeFrequencies({ headDim: 8, rotaryDim: 3 }), RangeError, 'params.rotaryDim'],
    [() => pe.ropeFrequencies({ headDim: 8, theta: NaN }), RangeError, 'params.theta'], [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'yarn' } }), RangeError, 'originalMaxPositionEmbeddings'],
    [() => pe.ropeFrequencies({ headDim: 8 }, { seqLen: -1 }), RangeError, 'seqLen'],
  ]],
  ['ropeParamsFromConfig', () => pe.ropeParamsFromConfig({ head_dim: 8 }), [
    [() => pe.ropeParamsFromConfig('{'), RangeError, 'JSON'], [() => pe.ropeParamsFromConfig(null), TypeError, 'config'],
    [() => pe.ropeParamsFromConfig({ head_dim: 8 }, { layerType: 3 }), TypeError, 'layerType'],
  ]],
  ['applyRope', () => pe.applyRope(x16, rope), [
    [() => pe.applyRope(x16), TypeError, 'options'], [() => pe.applyRope(x16, { ...rope, seqLen: 3 }), RangeError, 'x.length'],
    [() => pe.applyRope(x16, { ...rope, nHeads: 0 }), RangeError, 'nHeads'], [() => pe.applyRope(x16, { ...rope, offset: NaN }), RangeError, 'offset'],
    [() => pe.applyRope(Array.from(x16), rope), TypeError, 'x'],
  ]],
  ['applyRopeInPlace', () => { const b = pe.allocFloat32(16); b.array.set(x16); pe.applyRopeInPlace(b, rope); const r = b.array.slice(); b.delete(); return r; }, [
    [() => pe.applyRopeInPlace(x16, rope), TypeError, 'buffer'],
  ]],
  ['allocFloat32', () => { const b = pe.allocFloat32(4); b.delete(); return 4; }, [
    [() => pe.allocFloat32(0), RangeError, 'length'], [() => pe.allocFloat32(MAX_ELEMENTS + 1), RangeError, 'length'], [() => pe.allocFloat32('4'), TypeError, 'length'],
  ]],
  ['ropeCache', () => pe.ropeCache({ params: { headDim: 8 }, seqLen: 3 }).cos, [
    [() => pe.ropeCache(), TypeError, 'options'], [() => pe.ropeCache({ params: { headDim: 8 }, seqLen: 0 }), RangeError, 'seqLen'],
    [() => pe.ropeCache({ params: { headDim: 8 }, seqLen: 3, precision: 'exact' }), RangeError, 'precision'],
  ]],
  ['alibiSlopes', () => pe.alibiSlopes(6), [
    [() => pe.alibiSlopes(0), RangeError, 'nHeads'], [() => pe.alibiSlopes(4, { maxBias: 0 }), RangeError, 'maxBias'],
  ]],
  ['alibiBias', () => pe.alibiBias(2, 2, 3), [
    [() => pe.alibiBias(2, 0, 3), RangeError, 'qLen'], [() => pe.alibiBias(2, 2, 3, { causal: 'yes' }), TypeError, 'causal'],
    [() => pe.alibiBias(2 ** 10, 2 ** 10, 2 ** 10), RangeError, 'nHeads * qLen * kLen'],
  ]],
  ['t5Bucket', () => pe.t5Bucket([-3, 0, 3]), [
    [() => pe.t5Bucket(0.5), RangeError, 'relativePosition[0]'], [() => pe.t5Bucket(1, { numBuckets: 3 }), RangeError, 'numBuckets'],
    [() => pe.t5Bucket(1, { maxDistance: 2 }), RangeError, 'maxDistance'],
  ]],
  ['t5Bias', () => pe.t5Bias(new Float32Array(64), 2, 2, 3), [
    [() => pe.t5Bias(new Float32Array(63), 2, 2, 3), RangeError, 'table.length'], [() => pe.t5Bias([0], 2, 2, 3), TypeError, 'table'],
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

test('bad input matrix: every function throws TypeError/RangeError naming the argument, leaks nothing, and a good call still works', () => {
  for (const [name, good, bads] of MATRIX) {
    const expected = good();
    const before = pe.heapStats().inUseBytes;
    for (const [i, [call, type, arg]] of bads.entries()) {
      assert.throws(call, (e) => {
        assert.ok(e instanceof type, `${name}: expected ${type.name}, got ${e?.constructor?.name}: ${e?.message}`);
        assert.ok(e.message.startsWith(`${name.split('.')[0]}`), `${name}: message ${JSON.stringify(e.message)} does not start with the function`);
        assert.ok(e.message.includes(arg), `${name}: message ${JSON.stringify(e.message)} does not name ${arg}`);
        assert.ok(['kBadArgument', 'kBadShape', 'kTooLarge'].includes(e.code), `${name}: err.code ${e.code} (${e.message})`);
        return true;
      }, `${name}: bad call ${i} (${arg}) did not throw`);
      assert.deepEqual(good(), expected, `${name}: a good call after a bad one`);
    }
    assert.equal(pe.heapStats().inUseBytes, before, `${name}: heap bytes in use changed across bad calls`);
  }
});

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

test('leak test: 10,000 calls of each function leave the heap in use flat', () => {
  const heapBefore = pe.heapStats().heapBytes;
  for (const [name, good] of MATRIX) {
    good();  // warm: first calls may allocate lasting state
    const before = pe.heapStats().inUseBytes;
    for (let i = 0; i < 10000; i++) good();
    assert.equal(pe.heapStats().inUseBytes, before, `${name}: heap bytes in use grew over 10,000 calls`);
  }
  assert.ok(pe.heapStats().heapBytes <= Math.max(heapBefore, 16 * 2 ** 20), 'the heap grew during the leak test');
});

test('memory limit: a result over MAX_ELEMENTS is a RangeError, not an abort, and the module keeps working', () => {
  assert.throws(() => pe.sinusoidal(MAX_ELEMENTS, 2), RangeError);
  // Past what the heap can ever hold (2 GiB): a RangeError from the allocation, not a crash.
  const big = [];
  assert.throws(() => { for (let i = 0; i < 8; i++) big.push(pe.allocFloat32(MAX_ELEMENTS)); }, (e) => e instanceof RangeError && /do not fit in WASM memory/.test(e.message));
  for (const b of big) b.delete();
  assert.equal(pe.sinusoidal(2, 2)[2], Math.fround(Math.sin(1)));
});
