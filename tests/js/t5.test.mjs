// T5's relative buckets through the package (docs/schemes/t5.md): buckets against HF's
// T5Attention._relative_position_bucket, the bias table lookup, where the queries sit, readModel's
// detection in config.json, and bad input. Its term in attention is checked with the other bias
// terms (twins.mjs positionBiasCases) by the attention and KV cache suites.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badInputTest } from './bad_input.mjs';
import { error, pe } from './helpers.mjs';

test('t5Bucket / t5Bias: HF buckets and per-head biases', () => {
  assert.deepEqual(Array.from(pe.t5Bucket([0, 1, -1, 7, 16, 1000, -1000])), [0, 17, 1, 23, 26, 31, 15]);
  assert.equal(pe.t5Bucket(-5, { bidirectional: false }), 5);
  assert.equal(pe.t5Bucket(5, { bidirectional: false }), 0);
  const table = Float32Array.from({ length: 32 * 2 }, (_, i) => i);
  const bias = pe.t5Bias(table, 2, 1, 3);
  // Query at position 2: keys 0, 1, 2 are at -2, -1, 0 → buckets 2, 1, 0.
  assert.deepEqual(Array.from(bias), [4, 2, 0, 5, 3, 1]);
  assert.throws(() => pe.t5Bias(table, 3, 1, 3), error(RangeError, /table\.length must equal numBuckets \* nHeads = 96 \(got 64\)/));
  assert.throws(() => pe.t5Bucket(1, { numBuckets: 2 }), error(RangeError, /numBuckets must be >= 4 when bidirectional/));
  assert.throws(() => pe.t5Bucket(0.5), error(RangeError, /relativePosition\[0\] must be an integer/));
});

test('t5Bias: queryOffset 0 (HF compute_bias without a cache, onnxruntime) and the default', () => {
  const table = Float32Array.from({ length: 32 }, (_, i) => i);
  const t = pe.t5Bias(table, 1, 2, 5, { queryOffset: 0 });
  for (let i = 0; i < 2; i++) for (let j = 0; j < 5; j++) assert.equal(t[i * 5 + j], pe.t5Bucket(j - i));
});

test('readModel: T5 from a config.json', async () => {
  const t5 = await pe.readModel(JSON.stringify(pe.presets.presets.find((p) => p.id === 't5-base').config));
  assert.deepEqual(t5.t5, { nHeads: 12, numBuckets: 32, maxDistance: 128, bidirectional: true });
});

badInputTest('t5Bucket', () => pe.t5Bucket([-3, 0, 3]), [
  [() => pe.t5Bucket(0.5), RangeError, 'relativePosition[0]'], [() => pe.t5Bucket(1, { numBuckets: 3 }), RangeError, 'numBuckets'],
  [() => pe.t5Bucket(1, { maxDistance: 2 }), RangeError, 'maxDistance'],
]);

badInputTest('t5Bias', () => pe.t5Bias(new Float32Array(64), 2, 2, 3), [
  [() => pe.t5Bias(new Float32Array(63), 2, 2, 3), RangeError, 'table.length'], [() => pe.t5Bias([0], 2, 2, 3), TypeError, 'table'],
]);
