// The package API in Node: `import { init } from 'posenc'`, results against an independent float64
// twin written here in JS, and bad input turned into TypeError/RangeError naming the argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_ELEMENTS } from 'posenc';
import { badInputTest } from './bad_input.mjs';
import { error, maxAbsDiff, pe } from './helpers.mjs';

function twin(seqLen, dModel, base = 10000) {
  const out = new Float64Array(seqLen * dModel);
  for (let p = 0; p < seqLen; p++) {
    for (let j = 0; j < dModel; j++) {
      const angle = p / base ** ((2 * Math.floor(j / 2)) / dModel);
      out[p * dModel + j] = j % 2 === 0 ? Math.sin(angle) : Math.cos(angle);
    }
  }
  return out;
}

test('init() loads the SIMD128 build', () => {
  assert.equal(pe.simdArch, 'wasm');
  assert.equal(pe.MAX_ELEMENTS, MAX_ELEMENTS);
});

test('sinusoidal: Float32Array [seqLen][dModel] equal to the float64 formula', () => {
  for (const base of [10000, 500000]) {
    for (let dModel = 1; dModel <= 20; dModel++) {
      const got = pe.sinusoidal(33, dModel, { base });
      assert.ok(got instanceof Float32Array);
      assert.equal(got.length, 33 * dModel);
      assert.ok(maxAbsDiff(got, twin(33, dModel, base)) <= 4e-7, `dModel=${dModel} base=${base}`);
    }
  }
  // The lesson's default view: seq_len 100, d_model 128.
  assert.ok(maxAbsDiff(pe.sinusoidal(100, 128), twin(100, 128)) <= 4e-7);
});

test('sinusoidal: the d_model = 8 rows printed in the lesson', () => {
  const t = pe.sinusoidal(6, 8);
  const row = (p) => Array.from(t.subarray(p * 8, p * 8 + 8), (v) => Math.round(v * 1000) / 1000 + 0);
  assert.deepEqual(row(1), [0.841, 0.54, 0.1, 0.995, 0.01, 1, 0.001, 1]);
  assert.deepEqual(row(5), [-0.959, 0.284, 0.479, 0.878, 0.05, 0.999, 0.005, 1]);
});

test('sinusoidal: each call returns a fresh array that JS owns', () => {
  const a = pe.sinusoidal(4, 4);
  const b = pe.sinusoidal(4, 4);
  assert.notEqual(a.buffer, b.buffer);
  a.fill(0);
  assert.equal(b[1], 1);
});

test('sinusoidal: bad input is a TypeError or RangeError naming the argument', () => {
  const cases = [
    [() => pe.sinusoidal('4', 8), TypeError, /seqLen must be a number \(got "4"\)/],
    [() => pe.sinusoidal(4), TypeError, /dModel must be a number \(got undefined\)/],
    [() => pe.sinusoidal(0, 8), RangeError, /seqLen must be >= 1 \(got 0\)/],
    [() => pe.sinusoidal(4.5, 8), RangeError, /seqLen must be an integer \(got 4.5\)/],
    [() => pe.sinusoidal(4, -2), RangeError, /dModel must be >= 1 \(got -2\)/],
    [() => pe.sinusoidal(4, NaN), RangeError, /dModel must be an integer \(got NaN\)/],
    [() => pe.sinusoidal(4, 8, { base: 0 }), RangeError, /base must be finite and > 0 \(got 0\)/],
    [() => pe.sinusoidal(4, 8, { base: Infinity }), RangeError, /base must be finite and > 0/],
    [() => pe.sinusoidal(4, 8, { base: '1e4' }), TypeError, /base must be a number/],
    [() => pe.sinusoidal(4, 8, { bsae: 10 }), TypeError, /unknown option "bsae"/],
    [() => pe.sinusoidal(4, 8, 10000), TypeError, /options must be an object/],
    [() => pe.sinusoidal(2 ** 20, 2 ** 10), RangeError, /seqLen \* dModel = 1073741824 elements exceeds the limit/],
  ];
  for (const [call, type, message] of cases) {
    assert.throws(call, (e) => e instanceof type && message.test(e.message) && e.message.startsWith('sinusoidal: '));
  }
  // A good call still gives the right answer afterwards.
  assert.ok(maxAbsDiff(pe.sinusoidal(10, 6), twin(10, 6)) <= 4e-7);
});

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
  // The rules are C++'s (sinusoidal_shift_check): its message, with what the call gave.
  assert.throws(() => pe.sinusoidalShift(1, 7), error(RangeError, /^sinusoidalShift: dModel must be even and > 0 \(got 7\)$/));
  assert.throws(() => pe.sinusoidalShift(1, 0), error(RangeError, /^sinusoidalShift: dModel must be even and > 0 \(got 0\)$/));
  assert.throws(() => pe.sinusoidalShift(Infinity, 4), error(RangeError, /^sinusoidalShift: k must be finite \(got Infinity\)$/));
  assert.throws(() => pe.sinusoidalShift(1, 4, { base: 0 }), error(RangeError, /^sinusoidalShift: base must be finite and > 0 \(got 0\)$/));
  assert.throws(() => pe.sinusoidalShift('1', 4), error(TypeError, /k must be a number/));
});

badInputTest('sinusoidal', () => pe.sinusoidal(3, 4), [
  [() => pe.sinusoidal(), TypeError, 'seqLen'], [() => pe.sinusoidal('3', 4), TypeError, 'seqLen'],
  [() => pe.sinusoidal(NaN, 4), RangeError, 'seqLen'], [() => pe.sinusoidal(Infinity, 4), RangeError, 'seqLen'],
  [() => pe.sinusoidal(-1, 4), RangeError, 'seqLen'], [() => pe.sinusoidal(0, 4), RangeError, 'seqLen'],
  [() => pe.sinusoidal(3, 0), RangeError, 'dModel'], [() => pe.sinusoidal(3, 2.5), RangeError, 'dModel'],
  [() => pe.sinusoidal(3, 4, { base: -1 }), RangeError, 'base'], [() => pe.sinusoidal(3, 4, { layout: 'x' }), RangeError, 'layout'],
  [() => pe.sinusoidal(2 ** 16, 2 ** 13), RangeError, 'seqLen * dModel'], [() => pe.sinusoidal(3, 4, { positions: [1] }), RangeError, 'positions'],
]);

badInputTest('sinusoidalShift', () => pe.sinusoidalShift(1, 4), [
  [() => pe.sinusoidalShift(NaN, 4), RangeError, 'k'], [() => pe.sinusoidalShift(1, 3), RangeError, 'dModel'],
  [() => pe.sinusoidalShift(1, '4'), TypeError, 'dModel'], [() => pe.sinusoidalShift(1, 2 ** 15), RangeError, 'dModel * dModel'],
]);
