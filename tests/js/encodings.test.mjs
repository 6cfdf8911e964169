// Sinusoidal layouts and shifts, learned tables, embedding, ALiBi and T5 through the package,
// each against a float64 twin or published values written here.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { error, maxAbsDiff, pe, randomFloats } from './helpers.mjs';

test('sinusoidal concat: tensor2tensor [sin | cos] with ln(base)/(d/2 - 1) steps, zero-padded odd dModel', () => {
  for (const dModel of [1, 2, 3, 8, 9, 31, 64]) {
    const seqLen = 20, half = Math.floor(dModel / 2);
    const want = new Float64Array(seqLen * dModel);
    const step = Math.log(10000) / Math.max(half - 1, 1);
    for (let p = 0; p < seqLen; p++) {
      for (let i = 0; i < half; i++) {
        want[p * dModel + i] = Math.sin(p * Math.exp(-i * step));
        want[p * dModel + half + i] = Math.cos(p * Math.exp(-i * step));
      }
    }
    assert.ok(maxAbsDiff(pe.sinusoidal(seqLen, dModel, { layout: 'concat' }), want) <= 4e-7, `dModel ${dModel}`);
  }
});

test('sinusoidal positions: rows for arbitrary positions equal the table rows', () => {
  const table = pe.sinusoidal(300, 12);
  const rows = pe.sinusoidal(3, 12, { positions: [5, 299, 0] });
  assert.deepEqual(rows.subarray(0, 12), table.subarray(60, 72));
  assert.deepEqual(rows.subarray(12, 24), table.subarray(299 * 12, 300 * 12));
  assert.deepEqual(rows.subarray(24), table.subarray(0, 12));
  assert.throws(() => pe.sinusoidal(2, 12, { positions: [1] }), error(RangeError, /positions\.length must equal seqLen = 2/));
  assert.throws(() => pe.sinusoidal(1, 12, { positions: [NaN] }), error(RangeError, /positions\[0\] must be finite/));
});

test('sinusoidalShift: PE(p + k) = M_k · PE(p) for many p and k (the relative property)', () => {
  const dModel = 16;
  for (const layout of ['interleaved', 'concat']) {
    const table = pe.sinusoidal(200, dModel, { layout });
    for (const k of [1, 5, 42, -7]) {
      const m = pe.sinusoidalShift(k, dModel, { layout });
      for (const p of [10, 57, 150]) {
        const got = new Float64Array(dModel);
        for (let r = 0; r < dModel; r++) for (let c = 0; c < dModel; c++) got[r] += m[r * dModel + c] * table[p * dModel + c];
        assert.ok(maxAbsDiff(got, table.subarray((p + k) * dModel, (p + k + 1) * dModel)) < 2e-6, `${layout} k=${k} p=${p}`);
      }
    }
  }
  assert.throws(() => pe.sinusoidalShift(1, 7), error(RangeError, /dModel must be even \(got 7\)/));
});

test('learnedTable: seeded N(0, 0.02²), or your weights; lookup refuses position 513 of a 512 table', () => {
  const a = pe.learnedTable(512, 64, { seed: 7 }), b = pe.learnedTable(512, 64, { seed: 7 });
  assert.deepEqual(a.weights, b.weights);
  let sq = 0;
  for (const v of a.weights) sq += v * v;
  assert.ok(Math.abs(Math.sqrt(sq / a.weights.length) - 0.02) < 0.001);
  assert.deepEqual(a.lookup([3]), a.weights.slice(3 * 64, 4 * 64));
  assert.throws(() => a.lookup([0, 512]), error(RangeError, /positions\[1\] = 512 .* maxLen = 512: a model trained on 512 positions has no embedding/));
  const weights = Float32Array.from({ length: 6 * 2 }, (_, i) => i);
  const roberta = pe.learnedTable(6, 2, { weights, offset: 2 });
  assert.deepEqual(roberta.lookup([0, 3]), Float32Array.from([4, 5, 10, 11]));
  assert.throws(() => roberta.lookup([4]), error(RangeError, /row 6 with offset 2/));
  assert.throws(() => pe.learnedTable(6, 2, { weights: new Float32Array(11) }), error(RangeError, /weights\.length must equal maxLen \* dModel = 12 \(got 11\)/));
});

test('embed: E[token] · sqrt(dModel) + PE[position] by default, any scale and position source', () => {
  const dModel = 4;
  const E = randomFloats(10 * dModel, 3);
  const P = pe.sinusoidal(16, dModel);
  const tokens = [7, 0, 7];
  const got = pe.embed(tokens, { tokenEmbeddings: E, dModel, positionTable: P });
  for (let t = 0; t < 3; t++) {
    for (let d = 0; d < dModel; d++) {
      assert.ok(Math.abs(got[t * dModel + d] - (E[tokens[t] * dModel + d] * 2 + P[t * dModel + d])) < 1e-6);
    }
  }
  const bert = pe.embed(tokens, { tokenEmbeddings: E, dModel, positionTable: P, scale: 1, positions: [5, 5, 5] });
  assert.ok(Math.abs(bert[0] - (E[28] + P[20])) < 1e-6);
  // The same token at two positions gets two vectors: position is what tells them apart.
  assert.notDeepEqual(got.subarray(0, 4), got.subarray(8, 12));
  assert.throws(() => pe.embed([10], { tokenEmbeddings: E, dModel, positionTable: P }), error(RangeError, /tokenIds\[0\] = 10 is outside the vocabulary \[0, 10\)/));
  assert.throws(() => pe.embed([1], { tokenEmbeddings: E, dModel, positionTable: P, positions: [16] }), error(RangeError, /position 16 .* 16 rows/));
});

test('alibiSlopes: BLOOM / MPT / ggml values for 12 heads and power-of-two head counts', () => {
  const s = pe.alibiSlopes(12);
  const exps = [1, 2, 3, 4, 5, 6, 7, 8, 0.5, 1.5, 2.5, 3.5];
  assert.deepEqual(Array.from(s), exps.map((e) => Math.fround(2 ** -e)));
  assert.deepEqual(Array.from(pe.alibiSlopes(8)), [1, 2, 3, 4, 5, 6, 7, 8].map((e) => 2 ** -e));
  assert.deepEqual(Array.from(pe.alibiSlopes(4, { maxBias: 16 })), [4, 8, 12, 16].map((e) => 2 ** -e));
  assert.throws(() => pe.alibiSlopes(0), error(RangeError, /nHeads must be in \[1, /));
});

test('alibiBias: linear in distance, causal -inf ahead, queries at the end', () => {
  const b = pe.alibiBias(2, 2, 4, { causal: true });
  const slopes = pe.alibiSlopes(2);
  // Query 1 of 2 sits at position 3 of 4; query 0 at position 2.
  assert.deepEqual(Array.from(b.subarray(0, 4)), [-2 * slopes[0], -slopes[0], -0, -Infinity]);
  assert.deepEqual(Array.from(b.subarray(4, 8)), [-3 * slopes[0], -2 * slopes[0], -slopes[0], -0]);
  const sym = pe.alibiBias(1, 3, 3, { causal: false });
  assert.equal(sym[2], sym[6]);
});

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
