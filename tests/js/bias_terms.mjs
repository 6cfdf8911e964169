// The checks every positional bias term (C++ PositionBias) gets, registered by the scheme's own
// suite for its terms (alibi.test.mjs, t5.test.mjs), as native suites add theirs with AddBiasTwin:
// pe.attention against the float64 attention twin (twins.mjs) causal or not, with GQA, weights, an
// additive mask, and a long q streamed through the heap in pieces; kvCache.attend token by token
// against pe.attention and the twin; and the options the term must refuse, refused by both.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { error, maxAbsDiff, pe, randomFloats, rows } from './helpers.mjs';
import { attentionTwin } from './twins.mjs';

/**
 * Appends T tokens to a fresh cache one at a time and checks attend (every 9th token and the last)
 * against pe.attention over the keys so far and the float64 twin. `options`: as attend takes them;
 * `twin`: what attentionTwin takes besides (a term's float64 `terms`).
 */
export function checkDecoding({ options: extra, twin = {} }, { H = 8, Hk = 2, D = 24, T = 70 } = {}) {
  const k = randomFloats(T * Hk * D, 1), v = randomFloats(T * Hk * D, 2), q = randomFloats(T * H * D, 3);
  const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: T });
  for (let t = 0; t < T; t++) {
    cache.append(rows(k, Hk * D, t, t + 1), rows(v, Hk * D, t, t + 1));
    if (t % 9 !== 0 && t !== T - 1) continue;
    const qt = rows(q, H * D, t, t + 1), kk = rows(k, Hk * D, 0, t + 1), vv = rows(v, Hk * D, 0, t + 1);
    const got = cache.attend(qt, { nHeads: H, ...extra });
    const opts = { nHeads: H, nKvHeads: Hk, headDim: D, causal: true, ...extra };
    assert.ok(maxAbsDiff(got, pe.attention(qt, kk, vv, opts)) <= 2e-6, `${JSON.stringify(Object.keys(extra))} t ${t}`);
    assert.ok(maxAbsDiff(got, attentionTwin(qt, kk, vv, { ...opts, ...twin })) <= 2e-6);
  }
  assert.equal(cache.length, T);
  cache.delete();
}

/**
 * makeCases(H) → [{ name, options: as pe.attention and kvCache.attend take them, twin: { terms:
 * [(h, qpos, kpos) → the float64 score the term adds] }, refused: [[options, error class, message
 * pattern]] }] for H heads.
 */
export function positionBiasTests(makeCases) {
  test(`attention: ${makeCases(2).map((c) => c.name).join(', ')} equal the float64 twin (causal or not, GQA, weights, a mask, streamed)`, () => {
    const [H, Hkv, D, qLen, kvLen] = [4, 2, 8, 9, 70];
    const q = randomFloats(qLen * H * D, 1), k = randomFloats(kvLen * Hkv * D, 2), v = randomFloats(kvLen * Hkv * D, 3);
    const mask = randomFloats(qLen * kvLen, 4);
    // A long q: 1100 rows stream through the heap in pieces (896 rows with a shared [S][S] mask).
    const S = 1100, Q = randomFloats(S * H * D, 80), K = randomFloats(S * Hkv * D, 81), V = randomFloats(S * Hkv * D, 82);
    const shared = randomFloats(S * S, 83);
    for (const { name, options, twin } of makeCases(H)) {
      for (const causal of [false, true]) {
        const base = { nHeads: H, nKvHeads: Hkv, headDim: D, causal };
        const want = attentionTwin(q, k, v, { ...base, ...twin });
        assert.ok(maxAbsDiff(pe.attention(q, k, v, { ...base, ...options }), want) < 2e-6, `${name} causal ${causal}`);
        assert.ok(maxAbsDiff(pe.attention(q, k, v, { ...base, ...options, returnWeights: true }).output, want) < 2e-6, name);
        assert.ok(maxAbsDiff(pe.attention(q, k, v, { ...base, ...options, mask }), attentionTwin(q, k, v, { ...base, ...twin, mask })) < 2e-6,
          `${name} with a mask, causal ${causal}`);
      }
      const base = { nHeads: H, nKvHeads: Hkv, headDim: D, causal: true, mask: shared };
      assert.ok(maxAbsDiff(pe.attention(Q, K, V, { ...base, ...options }), attentionTwin(Q, K, V, { ...base, ...twin })) < 2e-6, `${name} streamed`);
    }
  });

  test(`kvCache: ${makeCases(2).map((c) => c.name).join(', ')} decoded token by token equal pe.attention and the float64 twin`, () => {
    for (const c of makeCases(8)) checkDecoding(c, { H: 8 });
  });

  test(`attention and kvCache.attend refuse the bad options of ${makeCases(2).map((c) => c.name).join(', ')}`, () => {
    const H = 2, x = randomFloats(8, 1);
    const cache = pe.kvCache({ nKvHeads: 2, headDim: 4, capacity: 4 });
    cache.append(x, x);
    for (const { refused = [] } of makeCases(H)) {
      for (const [options, type, pattern] of refused) {
        assert.throws(() => pe.attention(x, x, x, { nHeads: H, headDim: 4, ...options }), error(type, pattern));
        assert.throws(() => cache.attend(x, { nHeads: H, ...options }), error(type, pattern));
      }
    }
    cache.delete();
  });
}
