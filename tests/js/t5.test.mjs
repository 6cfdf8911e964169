// T5's relative buckets through the package (docs/schemes/t5.md): buckets against HF's
// T5Attention._relative_position_bucket, the bias table lookup, where the queries sit, readModel's
// detection in config.json, its term in pe.attention and kvCache.attend against the float64 twin
// (bias_terms.mjs), alone and beside ALiBi's, and bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badInputTest } from './bad_input.mjs';
import { positionBiasTests } from './bias_terms.mjs';
import { error, pe, randomFloats } from './helpers.mjs';

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

// T5's term of the float64 attention twin: the table's entry for the bucket of key − query
// position (16 buckets reach max distance 32 within the suites' 70 keys). Its buckets come from
// pe.t5Bucket, itself checked against HF's above, taken once for every distance the suites reach
// (the streamed check's 1100 keys). With ALiBi beside it: both terms add.
positionBiasTests((H) => {
  const table = randomFloats(16 * H, 11), R = 1200;
  const t5 = (bidirectional) => {
    const buckets = pe.t5Bucket(Array.from({ length: 2 * R + 1 }, (_, i) => i - R), { bidirectional, numBuckets: 16, maxDistance: 32 });
    return {
      options: { t5: { table, numBuckets: 16, maxDistance: 32, bidirectional } },
      term: (h, qpos, kpos) => table[buckets[kpos - qpos + R] * H + h],
    };
  };
  const slopes = pe.alibiSlopes(H);
  const alibiTerm = (h, qpos, kpos) => -slopes[h] * Math.abs(qpos - kpos);  // as alibi.test.mjs writes it
  return [
    { name: 't5 decoder', options: t5(false).options, twin: { terms: [t5(false).term] }, refused: [
      [{ t5: { table: new Float32Array(3) } }, RangeError, new RegExp(`t5\\.table\\.length must equal numBuckets \\* nHeads = ${32 * H}`)],
      [{ t5: { table: new Float32Array(2 * H), numBuckets: 2, bidirectional: true } }, RangeError, /numBuckets must be >= 4 when bidirectional/],
      // C++'s rules (t5_check), asked before the table's length is checked or anything allocated.
      [{ t5: { table: new Float32Array(3), numBuckets: 1 } }, RangeError, /^(attention|kvCache\.attend): t5\.numBuckets must be >= 4 when bidirectional, else >= 2 \(got 1\)$/],
      [{ t5: { table: new Float32Array(32 * H), maxDistance: 8 } }, RangeError,
        /t5\.maxDistance must be > the exact range \(t5\.numBuckets \/ 2, halved again when bidirectional\) \(got t5\.maxDistance = 8, t5\.numBuckets = 32\)/],
      [{ t5: { table: new Float32Array(32 * H), numBuckets: 2 ** 31 } }, RangeError, /t5\.numBuckets must be in \[-2147483648, 2147483647\]/],
      [{ t5: { table: new Float32Array(32 * H), bidirectional: 1 } }, TypeError, /t5\.bidirectional must be a boolean/],
      [{ t5: { table: [0] } }, TypeError, /t5\.table must be a Float32Array/]] },
    { name: 't5 encoder, with alibi', options: { ...t5(true).options, alibi: true }, twin: { terms: [t5(true).term, alibiTerm] } },
  ];
});
