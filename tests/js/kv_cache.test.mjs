// pe.kvCache against the float64 attention twin (twins.mjs) and against pe.attention over the same
// keys and values: decoding token by token (bias_terms.mjs), GQA, RoPE in each precision, float16
// storage, the window's ring with sink tokens, llama.cpp's context shift (against shiftKeys), bad
// input and the heap.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { error, maxAbsDiff, pe, randomFloats, rows } from './helpers.mjs';
import { checkDecoding } from './bias_terms.mjs';
import { halfValue, toHalfBits } from '../../bench/ops/cases.mjs';

test('kvCache: token-by-token decoding equals pe.attention and the float64 twin (GQA, softcap, scale, sinks)', () => {
  // Each positional bias term is decoded so by its scheme's suite (bias_terms.mjs).
  for (const options of [{}, { softcap: 1.5, scale: 0.3 }, { sinks: randomFloats(8, 4) }]) checkDecoding({ options });
});

test('kvCache: a few queries at once (speculative decoding), with their positions, and dropping the drafts again', () => {
  const H = 4, Hk = 4, D = 16, T = 40, n = 5;
  const k = randomFloats(T * Hk * D, 5), v = randomFloats(T * Hk * D, 6), q = randomFloats(n * H * D, 7);
  const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: T });
  cache.append(rows(k, Hk * D, 0, T - n), rows(v, Hk * D, 0, T - n));
  cache.append(rows(k, Hk * D, T - n, T), rows(v, Hk * D, T - n, T));  // the n drafts
  const want = pe.attention(q, k, v, { nHeads: H, headDim: D, causal: true });
  assert.ok(maxAbsDiff(cache.attend(q, { nHeads: H }), want) <= 2e-6);
  // The same queries placed explicitly; then at positions that see everything (not causal either).
  const positions = Array.from({ length: n }, (_, i) => T - n + i);
  assert.ok(maxAbsDiff(cache.attend(q, { nHeads: H, positions }), want) <= 2e-6);
  assert.ok(maxAbsDiff(cache.attend(q, { nHeads: H, causal: false }), pe.attention(q, k, v, { nHeads: H, headDim: D })) <= 2e-6);
  // Rejecting the drafts: shift(-n, { keep: length - n }) drops them; the next token goes at T - n.
  cache.shift(-n, { keep: T - n });
  assert.equal(cache.length, T - n);
  cache.append(rows(k, Hk * D, 0, 1), rows(v, Hk * D, 0, 1));
  assert.equal(cache.read().positions.at(-1), T - n);
  cache.delete();
});

test('kvCache: keys are stored as applyRope turns them, in every precision, and attend equals pe.attention with that rope', () => {
  const H = 4, Hk = 2, D = 32, T = 50;
  const k = randomFloats(T * Hk * D, 8), v = randomFloats(T * Hk * D, 9), q = randomFloats(H * D, 10);
  const params = { headDim: D, theta: 500000, scaling: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 16 } };
  for (const precision of pe.names.precisions) {
    for (const layout of pe.names.ropeLayouts) {
      const rope = { params, precision, layout };
      const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: 64, rope });
      for (let t = 0; t < T; t += 7) cache.append(rows(k, Hk * D, t, Math.min(T, t + 7)), rows(v, Hk * D, t, Math.min(T, t + 7)));
      const stored = cache.read();
      const want = pe.applyRope(k, { seqLen: T, nHeads: Hk, params: { ...params, layout }, precision });
      assert.ok(maxAbsDiff(stored.k, want) <= 1e-6, `${precision} ${layout}: stored keys`);
      assert.deepEqual(Array.from(stored.positions), Array.from({ length: T }, (_, i) => i));
      assert.deepEqual(stored.v, v);
      if (precision !== 'ggml') {  // pe.attention's fused rope has fast and accurate
        const got = cache.attend(q, { nHeads: H });
        const ref = pe.attention(q, k, v, { nHeads: H, nKvHeads: Hk, headDim: D, causal: true, rope: { params, precision, layout } });
        assert.ok(maxAbsDiff(got, ref) <= 2e-6, `${precision} ${layout}: attend`);
      }
      cache.delete();
    }
  }
});

test('kvCache: a float16 cache attends as float32 over the same (rounded) values', () => {
  const H = 8, Hk = 4, D = 20, T = 600;
  const k = randomFloats(T * Hk * D, 11).map((x) => 3 * x), v = randomFloats(T * Hk * D, 12), q = randomFloats(2 * H * D, 13);
  const half = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: T, dtype: 'float16' });
  half.append(k, v);
  assert.equal(half.dtype, 'float16');
  assert.equal(half.bytes, 2 * T * Hk * D * 2 + T * 8);
  const { k: k16, v: v16 } = half.read();
  for (let i = 0; i < k.length; i++) assert.equal(k16[i], halfValue(toHalfBits(k[i])));
  const got = half.attend(q, { nHeads: H });
  assert.ok(maxAbsDiff(got, pe.attention(q, k16, v16, { nHeads: H, nKvHeads: Hk, headDim: D, causal: true })) <= 2e-6);
  half.delete();
});

test("kvCache: a window's ring with sink tokens decodes as pe.attention with window and sinkTokens over the whole sequence", () => {
  const H = 4, Hk = 2, D = 8, T = 200;
  const k = randomFloats(T * Hk * D, 14), v = randomFloats(T * Hk * D, 15), q = randomFloats(T * H * D, 16);
  for (const [window, sinkTokens] of [[16, 0], [16, 4], [1, 2]]) {
    const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: window + sinkTokens, window, sinkTokens });
    for (let t = 0; t < T; t++) {
      cache.append(rows(k, Hk * D, t, t + 1), rows(v, Hk * D, t, t + 1));
      if (t % 13 !== 0) continue;
      const qt = rows(q, H * D, t, t + 1);
      const want = pe.attention(qt, rows(k, Hk * D, 0, t + 1), rows(v, Hk * D, 0, t + 1),
        { nHeads: H, nKvHeads: Hk, headDim: D, causal: true, window, sinkTokens });
      assert.ok(maxAbsDiff(cache.attend(qt, { nHeads: H }), want) <= 2e-6, `window ${window} sinks ${sinkTokens} t ${t}`);
    }
    assert.equal(cache.length, Math.min(T, window + sinkTokens));
    // The ring keeps the sinks, then the newest tokens, oldest first.
    const kept = cache.read().positions;
    assert.deepEqual(Array.from(kept.subarray(0, sinkTokens)), Array.from({ length: sinkTokens }, (_, i) => i));
    assert.equal(kept.at(-1), T - 1);
    assert.throws(() => cache.shift(-1), error(RangeError, /kvCache.shift: .*window/));
    cache.delete();
  }
});

test("kvCache: shift is llama.cpp's context shift — the same keys as shiftKeys, positions moved, decoding goes on", () => {
  const Hk = 2, D = 16, T = 64, keep = 4, drop = 20;
  const params = { headDim: D, theta: 10000, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 16 } };
  const k = randomFloats(T * Hk * D, 17), v = randomFloats(T * Hk * D, 18);
  for (const precision of pe.names.precisions) {
    const cache = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: T, rope: { params, precision } });
    cache.append(k, v);
    const before = cache.read();
    cache.shift(-drop, { keep });
    const after = cache.read();
    assert.equal(cache.length, T - drop);
    assert.deepEqual(Array.from(after.positions), Array.from({ length: T - drop }, (_, i) => i));
    // The kept head is untouched; the rest is the old tail moved by -drop with shiftKeys.
    assert.deepEqual(after.k.subarray(0, keep * Hk * D), before.k.subarray(0, keep * Hk * D));
    const tail = before.k.slice((keep + drop) * Hk * D);
    pe.shiftKeys(tail, { seqLen: T - keep - drop, nHeads: Hk, params, delta: -drop, precision: precision === 'ggml' ? 'accurate' : precision });
    assert.ok(maxAbsDiff(after.k.subarray(keep * Hk * D), tail) <= (precision === 'ggml' ? 1e-5 : 1e-6), precision);
    assert.deepEqual(after.v.subarray(keep * Hk * D), before.v.subarray((keep + drop) * Hk * D));
    cache.append(rows(k, Hk * D, 0, 1), rows(v, Hk * D, 0, 1));
    assert.equal(cache.read().positions.at(-1), T - drop);
    cache.delete();
  }
});

test('kvCache: bad input is a TypeError/RangeError naming the rule, with err.code; the cache is left as it was', () => {
  assert.throws(() => pe.kvCache(), error(TypeError, /kvCache: options \{ nKvHeads, headDim, capacity \} are required/));
  // The sizes' rules are C++'s (KvCache::create_check), asked before anything is allocated.
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 0 }), error(RangeError, /^kvCache: capacity must be > 0 \(got 0\)$/));
  assert.throws(() => pe.kvCache({ nKvHeads: 0, headDim: 8, capacity: 4 }), error(RangeError, /^kvCache: nKvHeads must be > 0 \(got 0\)$/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 0, capacity: 4, rope: { headDim: 8 } }), error(RangeError, /^kvCache: headDim must be > 0 \(got 0\)$/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 2 ** 31 }), error(RangeError, /capacity must be in \[0, 2147483647\]/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, window: 0 }), error(RangeError, /window must be in \[1, /));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, dtype: 'bfloat16' }), error(RangeError, /dtype must be one of 'float32', 'float16'/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, sinkTokens: 1 }), error(RangeError, /sinkTokens needs a window/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, window: 4, sinkTokens: 1 }), error(RangeError, /capacity must be >= sinkTokens \+ window/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, rope: { headDim: 16 } }), error(RangeError, /kvCache \(rope\): rotaryDim must be <= headDim \(got rotaryDim = 16, headDim = 8\); rotaryDim from params/));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, bogus: 1 }), error(TypeError, /unknown option "bogus"/));
  const cache = pe.kvCache({ nKvHeads: 2, headDim: 4, capacity: 3 });
  const x = randomFloats(8, 1);
  assert.throws(() => cache.attend(x, { nHeads: 2 }), error(RangeError, /the cache is empty/));
  const x2 = randomFloats(16, 3);
  assert.throws(() => cache.append(x2, x2, { positions: [5, 5] }), error(RangeError, /positions must rise/));
  assert.throws(() => cache.append(x.subarray(0, 7), x.subarray(0, 7)), error(RangeError, /k.length must be a non-zero multiple of nKvHeads \* headDim = 8/));
  assert.throws(() => cache.append(x, new Float64Array(8)), error(TypeError, /v must be a Float32Array/));
  assert.equal(cache.length, 0);
  cache.append(x, x);
  cache.append(x, x);
  assert.throws(() => cache.append(x, x, { positions: [1.5] }), error(RangeError, /positions\[0\] must be an integer/));
  assert.throws(() => cache.append(Float32Array.of(...x, ...x), Float32Array.of(...x, ...x)), (e) => e instanceof RangeError && e.code === 'kBadArgument' && /the cache is full/.test(e.message));
  assert.equal(cache.length, 2);
  assert.throws(() => cache.attend(x, { nHeads: 3 }), error(RangeError, /kvCache.attend: nHeads must be a multiple of nKvHeads \(got nHeads = 3, nKvHeads = 2\)/));
  assert.throws(() => cache.attend(randomFloats(3 * 8, 2), { nHeads: 2 }), error(RangeError, /qLen > length needs the queries' positions/));
  assert.throws(() => cache.attend(x, { nHeads: 2, sinks: Float32Array.of(1, NaN) }), error(RangeError, /sinks must be finite/));
  assert.throws(() => cache.shift(-1, { keep: -1 }), error(RangeError, /keep must be >= 0/));
  assert.throws(() => cache.shift(0.5), error(RangeError, /delta must be an integer/));
  assert.throws(() => cache.shift(2 ** 53 - 1), error(RangeError, /delta moves positions past 2\^53/));
  assert.equal(cache.length, 2);
  // Too large for the heap: refused with kTooLarge before anything is allocated.
  const inUse = pe.heapStats().inUseBytes;
  assert.throws(() => pe.kvCache({ nKvHeads: 8, headDim: 128, capacity: 2 ** 20 }), (e) => e instanceof RangeError && e.code === 'kTooLarge' &&
    /^kvCache: the cache \(2 \* capacity \* nKvHeads \* headDim values\) does not fit in memory \(got capacity = 1048576, nKvHeads = 8, headDim = 128\)$/.test(e.message));
  assert.throws(() => pe.kvCache({ nKvHeads: 8, headDim: 128, capacity: 2 ** 20, rope: { headDim: 128 } }), (e) => e.code === 'kTooLarge');
  assert.equal(pe.heapStats().inUseBytes, inUse);
  cache.delete();
  cache.delete();  // a second delete does nothing
  assert.equal(cache.length, 0);
  assert.throws(() => cache.attend(x, { nHeads: 2 }), error(TypeError, /kvCache.attend: the cache was deleted/));
});

test('kvCache: frees its heap memory on delete and Symbol.dispose (`using`); 1,000 decode steps leave the heap flat', () => {
  const before = pe.heapStats().inUseBytes;
  const cache = pe.kvCache({ nKvHeads: 2, headDim: 64, capacity: 256, dtype: 'float16' });
  assert.ok(pe.heapStats().inUseBytes - before >= cache.bytes);
  const k = randomFloats(2 * 64, 1), q = randomFloats(8 * 64, 2), out = new Float32Array(q.length);
  for (let i = 0; i < 100; i++) cache.append(k, k);
  const step = () => {
    cache.append(k, k);
    cache.attend(q, { nHeads: 8, out });
    cache.shift(-1, { keep: 100 });
  };
  step();  // the first attend sizes the cache's scratch, which it keeps
  const steady = pe.heapStats().inUseBytes;
  for (let i = 0; i < 1000; i++) step();
  assert.equal(pe.heapStats().inUseBytes, steady);
  cache.delete();
  assert.equal(pe.heapStats().inUseBytes, before);
  const scoped = pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 8 });  // what `using` calls at the end of a block
  scoped.append(randomFloats(8, 3), randomFloats(8, 4));
  scoped[Symbol.dispose ?? Symbol.for('Symbol.dispose')]();
  assert.equal(pe.heapStats().inUseBytes, before);
});
