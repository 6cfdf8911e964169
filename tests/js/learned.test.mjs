// Learned absolute positions through the package (docs/schemes/learned.md): the seeded table,
// lookup and its limit, embed, and bad input. readModel's position tables are in
// model_file.test.mjs, with the formats that hold them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badInputTest } from './bad_input.mjs';
import { error, pe, randomFloats } from './helpers.mjs';

test('learnedTable: seeded N(0, 0.02²), or your weights; lookup refuses position 513 of a 512 table', () => {
  const a = pe.learnedTable(512, 64, { seed: 7 }), b = pe.learnedTable(512, 64, { seed: 7 });
  assert.deepEqual(a.weights, b.weights);
  let sq = 0;
  for (const v of a.weights) sq += v * v;
  assert.ok(Math.abs(Math.sqrt(sq / a.weights.length) - 0.02) < 0.001);
  assert.deepEqual(a.lookup([3]), a.weights.slice(3 * 64, 4 * 64));
  // The rule is C++'s (learned_lookup_check), asked per position before the table is copied.
  assert.throws(() => a.lookup([0, 512]), error(RangeError,
    /^learnedTable\.lookup: positions\[1\] \+ offset must be in \[0, maxLen\) \(got positions\[1\] = 512, offset = 0, maxLen = 512\): a model trained on 512 positions has no embedding for it$/));
  const weights = Float32Array.from({ length: 6 * 2 }, (_, i) => i);
  const roberta = pe.learnedTable(6, 2, { weights, offset: 2 });
  assert.deepEqual(roberta.lookup([0, 3]), Float32Array.from([4, 5, 10, 11]));
  assert.throws(() => roberta.lookup([4]), error(RangeError, /positions\[0\] \+ offset must be in \[0, maxLen\) \(got positions\[0\] = 4, offset = 2, maxLen = 6\)/));
  // Row pos + offset is what must exist: RoBERTa's row 1 (its padding row) is position -1.
  assert.deepEqual(roberta.lookup([-1]), Float32Array.from([2, 3]));
  assert.throws(() => roberta.lookup([-3]), error(RangeError, /positions\[0\] \+ offset must be in \[0, maxLen\)/));
  // std's rule is C++'s (learned_init_check): finite and >= 0.
  assert.throws(() => pe.learnedTable(4, 2, { std: -0.02 }), error(RangeError, /^learnedTable: std must be finite and >= 0 \(got -0\.02\)$/));
  assert.ok(pe.learnedTable(2, 2, { std: 0 }).weights.every((v) => v === 0));
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
  // The rows' rules are C++'s (embed_token_check), asked per token before any row is gathered.
  assert.throws(() => pe.embed([10], { tokenEmbeddings: E, dModel, positionTable: P }), error(RangeError,
    /^embed: tokenIds\[0\] must be in \[0, tokenEmbeddings rows\) \(got tokenIds\[0\] = 10, tokenEmbeddings rows = 10\)$/));
  assert.throws(() => pe.embed([1], { tokenEmbeddings: E, dModel, positionTable: P, positions: [16] }), error(RangeError,
    /^embed: positions\[0\] must be in \[0, positionTable rows\) \(got positions\[0\] = 16, positionTable rows = 16\)$/));
  assert.throws(() => pe.embed(new Array(17).fill(1), { tokenEmbeddings: E, dModel, positionTable: P }), error(RangeError,
    /^embed: the position of tokenIds\[16\] must be in \[0, positionTable rows\) \(got the position of tokenIds\[16\] = 16, positionTable rows = 16\)$/));
  assert.throws(() => pe.embed([1], { tokenEmbeddings: E, dModel, positionTable: P, scale: NaN }), error(RangeError, /^embed: scale must be finite \(got NaN\)$/));
});

const table = pe.learnedTable(8, 4, { seed: 1 });
badInputTest('learnedTable', () => pe.learnedTable(4, 2, { seed: 3 }).weights, [
  [() => pe.learnedTable(0, 2), RangeError, 'maxLen'], [() => pe.learnedTable(4, -2), RangeError, 'dModel'],
  [() => pe.learnedTable(4, 2, { seed: -1 }), RangeError, 'seed'], [() => pe.learnedTable(4, 2, { std: NaN }), RangeError, 'std'],
  [() => pe.learnedTable(4, 2, { weights: [1, 2] }), TypeError, 'weights'], [() => pe.learnedTable(4, 2, { weights: new Float32Array(7) }), RangeError, 'weights.length'],
]);

badInputTest('learnedTable.lookup', () => table.lookup([0, 7]), [
  [() => table.lookup([8]), RangeError, 'positions[0]'], [() => table.lookup([-1]), RangeError, 'positions[0]'],
  [() => table.lookup([0.5]), RangeError, 'positions[0]'], [() => table.lookup('0'), TypeError, 'positions'],
  [() => table.lookup([]), RangeError, 'positions'],
]);

badInputTest('embed', () => pe.embed([1, 0], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights }), [
  [() => pe.embed([8], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights }), RangeError, 'tokenIds[0]'],
  [() => pe.embed([1], { tokenEmbeddings: table.weights, dModel: 3, positionTable: table.weights }), RangeError, 'tokenEmbeddings.length'],
  [() => pe.embed([1], { tokenEmbeddings: [1], dModel: 4, positionTable: table.weights }), TypeError, 'tokenEmbeddings'],
  [() => pe.embed([1], { tokenEmbeddings: table.weights, dModel: 4, positionTable: table.weights, scale: Infinity }), RangeError, 'scale'],
  [() => pe.embed([1]), TypeError, 'options'],
]);
