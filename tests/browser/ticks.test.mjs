// The explorer's tick rules (web/plot/core.js holds no DOM code, so Node runs it directly):
// no two labels alike, no float noise like -3e-17, a useful number of ticks on any range.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { niceTicks, tickLabels } from '../../web/plot/core.js';

test('tick labels never repeat, even where exponent form rounds (seq_len 131072)', () => {
  for (const [lo, hi, count] of [[0, 131071, 12], [0, 131071, 6], [0, 4194303, 9], [100000, 130000, 8], [0, 1048575, 14]]) {
    const labels = tickLabels(niceTicks(lo, hi, count));
    assert.equal(new Set(labels).size, labels.length, `${lo}…${hi}: ${labels}`);
  }
});

test('no float noise: a tick at zero is 0, and a one-position axis has one tick', () => {
  assert.deepEqual(niceTicks(0, 0), [0]);
  for (const [lo, hi] of [[-0.3, 0.3], [-1.05, 1.05], [-0.7, 0.1], [-3e-17, 1]]) {
    const ticks = niceTicks(lo, hi, 6);
    assert.ok(ticks.every((t) => t === 0 || Math.abs(t) > 1e-12), `${ticks}`);
    assert.ok(!tickLabels(ticks).some((l) => /e-1\d/.test(l)), `${tickLabels(ticks)}`);
  }
});

test('a short range still gets at least two ticks', () => {
  for (const [lo, hi] of [[-0.0477, 0.0481], [1, 1.5], [0.2, 0.9], [99, 100]]) {
    assert.ok(niceTicks(lo, hi, 4).length >= 2, `${lo}…${hi}: ${niceTicks(lo, hi, 4)}`);
  }
});

test('a range within float rounding of its ends gets one tick, at once (it once looped until memory ran out)', () => {
  assert.deepEqual(niceTicks(1, 1 + 2 ** -52), [1]);
  assert.deepEqual(niceTicks(1e6, 1e6 * (1 + 1e-15)), [1e6]);
  assert.deepEqual(niceTicks(1, 1 + 1e-11), [1]);  // finer than the 12 digits ticks are printed to
  assert.ok(niceTicks(1, 1 + 1e-7).length >= 2);  // float32 rounding around 1 still has its ticks
});
