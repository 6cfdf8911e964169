// ALiBi through the package (docs/schemes/alibi.md): the slopes against BLOOM's / MPT's / ggml's
// published values, the bias against its definition, where the queries sit, readModel's detection
// in GGUF and config.json, its term in pe.attention and kvCache.attend against the float64 twin
// (bias_terms.mjs), and bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badInputTest } from './bad_input.mjs';
import { positionBiasTests } from './bias_terms.mjs';
import { error, pe } from './helpers.mjs';
import { gguf } from './model_writer.mjs';

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

test('alibiBias: queryOffset 0 (queries at the first positions) and the default (the last qLen)', () => {
  const a = pe.alibiBias(1, 2, 5, { causal: false, queryOffset: 0 });
  for (let i = 0; i < 2; i++) for (let j = 0; j < 5; j++) assert.equal(a[i * 5 + j], -(2 ** -8) * Math.abs(i - j));
  assert.deepEqual(pe.alibiBias(1, 2, 5, { causal: false, queryOffset: 3 }), pe.alibiBias(1, 2, 5, { causal: false }));
  assert.throws(() => pe.alibiBias(1, 6, 5), error(RangeError, /qLen = 6 must be <= kLen = 5 .*pass queryOffset/));
  assert.throws(() => pe.alibiBias(1, 2, 5, { queryOffset: -1 }), error(RangeError, /queryOffset/));
});

test('readModel: ALiBi from a BLOOM GGUF and an MPT config.json', async () => {
  const bloom = await pe.readModel(gguf([['general.architecture', 'bloom'], ['bloom.attention.head_count', { u32: 16 }]]).bytes);
  assert.deepEqual(bloom.alibi, { nHeads: 16, maxBias: 8 });
  const mpt = await pe.readModel(pe.presets.presets.find((p) => p.id === 'mpt-7b').config);
  assert.deepEqual(mpt.alibi, { nHeads: 32, maxBias: 8 });
});

badInputTest('alibiSlopes', () => pe.alibiSlopes(6), [
  [() => pe.alibiSlopes(0), RangeError, 'nHeads'], [() => pe.alibiSlopes(4, { maxBias: 0 }), RangeError, 'maxBias'],
  [() => pe.alibiSlopes(4, { maxBias: -Infinity }), RangeError, 'maxBias must be finite and > 0 (got -Infinity)'],
]);

badInputTest('alibiBias', () => pe.alibiBias(2, 2, 3), [
  [() => pe.alibiBias(2, 0, 3), RangeError, 'qLen'], [() => pe.alibiBias(2, 2, 3, { causal: 'yes' }), TypeError, 'causal'],
  [() => pe.alibiBias(2 ** 10, 2 ** 10, 2 ** 10), RangeError, 'nHeads * qLen * kLen'],
  [() => pe.alibiBias(2, 2, 3, { maxBias: Infinity }), RangeError, 'maxBias must be finite and > 0 (got Infinity)'],
]);

// ALiBi's term of the float64 attention twin: −m_h·|query position − key position|.
const alibiTerm = (slopes) => (h, qpos, kpos) => -slopes[h] * Math.abs(qpos - kpos);

positionBiasTests((H) => {
  const nan = Float32Array.from({ length: H }, (_, h) => (h === H - 1 ? NaN : 0.5));
  return [
    { name: 'alibi', options: { alibi: true }, twin: { terms: [alibiTerm(pe.alibiSlopes(H))] }, refused: [
      [{ alibi: new Float32Array(H + 1) }, RangeError, new RegExp(`alibi slopes must have nHeads = ${H} entries`)],
      [{ alibi: nan }, RangeError, /alibi slopes must be finite/],
      [{ alibi: { maxBias: 0 } }, RangeError, /alibi\.maxBias must be finite and > 0 \(got 0\)/],
      [{ alibi: { maxBias: NaN } }, RangeError, /^(attention|kvCache\.attend): alibi\.maxBias must be finite and > 0 \(got NaN\)$/],
      [{ alibi: { maxBias: '8' } }, TypeError, /alibi\.maxBias must be a number/],
      [{ alibi: 'yes' }, TypeError, /alibi must be an object \(got "yes"\)/]] },
    { name: 'alibi maxBias 4', options: { alibi: { maxBias: 4 } }, twin: { terms: [alibiTerm(pe.alibiSlopes(H, { maxBias: 4 }))] } },
  ];
});
