// RoPE through the package: frequencies with HF's golden values, the rotation against a float64
// twin written here, properties, the in-heap variant, caches, configs and presets, bad input.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { badInputTest } from './bad_input.mjs';
import { error, maxAbsDiff, pe, randomFloats } from './helpers.mjs';

// Float64 twin: rotate x [seqLen][nHeads][headDim] by angle(t, k).
function ropeTwin(x, { seqLen, nHeads, headDim, rotaryDim, layout, angle, scale = 1 }) {
  const y = Float64Array.from(x);
  const half = rotaryDim / 2;
  for (let t = 0; t < seqLen; t++) {
    for (let h = 0; h < nHeads; h++) {
      const base = (t * nHeads + h) * headDim;
      for (let k = 0; k < half; k++) {
        const i1 = base + (layout === 'interleaved' ? 2 * k : k);
        const i2 = base + (layout === 'interleaved' ? 2 * k + 1 : k + half);
        const c = Math.cos(angle(t, k)) * scale, s = Math.sin(angle(t, k)) * scale;
        const a = x[i1], b = x[i2];
        y[i1] = a * c - b * s;
        y[i2] = b * c + a * s;
      }
    }
  }
  return y;
}

test('ropeFrequencies: default and the published scaling values', () => {
  const plain = pe.ropeFrequencies({ headDim: 128, theta: 500000 });
  assert.equal(plain.rotaryDim, 128);
  assert.equal(plain.attentionFactor, 1);
  for (let i = 0; i < 64; i++) assert.ok(Math.abs(plain.invFreq[i] / 500000 ** (-2 * i / 128) - 1) < 1e-7);

  const ntk = pe.ropeFrequencies({ headDim: 128, scaling: { type: 'ntk', factor: 4 } });
  assert.ok(Math.abs(ntk.invFreq[1] ** -64 - 40889.942) < 0.05);  // float32 invFreq: ~1e-6 relative
  const dyn = pe.ropeFrequencies({ headDim: 128, scaling: { type: 'dynamic', factor: 2, maxPositionEmbeddings: 4096 } }, { seqLen: 8192 });
  assert.ok(Math.abs(dyn.invFreq[1] ** -64 - 30527.737) < 0.05);
  const yarn = pe.ropeFrequencies({ headDim: 128, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 4096 } });
  assert.ok(Math.abs(yarn.attentionFactor - 1.1386294) < 1e-7);
  const yarn40 = pe.ropeFrequencies({ headDim: 128, scaling: { type: 'yarn', factor: 40, originalMaxPositionEmbeddings: 4096 } });
  assert.ok(Math.abs(yarn40.attentionFactor - 1.3688879) < 1e-7);
  const longrope = pe.ropeFrequencies({ headDim: 4, scaling: { type: 'longrope', factor: 32, originalMaxPositionEmbeddings: 4096, shortFactor: [1, 1], longFactor: [2, 2] } });
  assert.ok(Math.abs(longrope.attentionFactor - 1.1902381) < 1e-7);
  // Llama 3.1: pairs < 29 unchanged, >= 35 divided by 8.
  const l3 = pe.ropeFrequencies({ headDim: 128, theta: 500000, scaling: { type: 'llama3', factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 8192 } });
  const changed = [...l3.invFreq].findIndex((v, i) => Math.abs(v / plain.invFreq[i] - 1) > 1e-6);
  const divided = [...l3.invFreq].findIndex((v, i) => Math.abs(v * 8 / plain.invFreq[i] - 1) < 1e-6);
  assert.equal(changed, 29);
  assert.equal(divided, 35);
});

test('applyRope: equals the float64 rotation for both layouts, partial rotary, every tail length', () => {
  for (const layout of ['halfSplit', 'interleaved']) {
    for (let headDim = 2; headDim <= 34; headDim += 2) {
      for (const rotaryDim of [headDim, Math.max(2, headDim - 2)]) {
        const seqLen = 3, nHeads = 2;
        const { invFreq } = pe.ropeFrequencies({ headDim, rotaryDim });
        const x = randomFloats(seqLen * nHeads * headDim, headDim);
        const positions = [0, 5, 4097];
        const got = pe.applyRope(x, { seqLen, nHeads, headDim, layout, positions, invFreq, precision: 'accurate', attentionFactor: 1.25 });
        const want = ropeTwin(x, { seqLen, nHeads, headDim, rotaryDim, layout, scale: 1.25, angle: (t, k) => positions[t] * invFreq[k] });
        assert.ok(maxAbsDiff(got, want) < 2e-6, `${layout} headDim=${headDim} rotaryDim=${rotaryDim}`);
        // The input is untouched; dims past rotaryDim pass through.
        assert.ok(maxAbsDiff(x, randomFloats(x.length, headDim)) === 0);
      }
    }
  }
});

test('applyRope: -p undoes +p; q·k depends only on i - j; params carry the attention factor', () => {
  const headDim = 64;
  const params = { headDim, theta: 10000 };
  const x = randomFloats(4 * headDim, 3);
  const positions = [1, 100, 5000, 70000];
  const there = pe.applyRope(x, { seqLen: 4, nHeads: 1, params, positions, precision: 'accurate' });
  const back = pe.applyRope(there, { seqLen: 4, nHeads: 1, params, positions: positions.map((p) => -p), precision: 'accurate' });
  assert.ok(maxAbsDiff(back, x) < 2e-6);

  const q = randomFloats(headDim, 11), k = randomFloats(headDim, 12);
  const score = (i, j) => {
    const qi = pe.applyRope(q, { seqLen: 1, nHeads: 1, params, positions: [i], precision: 'accurate' });
    const kj = pe.applyRope(k, { seqLen: 1, nHeads: 1, params, positions: [j], precision: 'accurate' });
    return qi.reduce((s, v, d) => s + v * kj[d], 0);
  };
  for (const delta of [0, 3, 40]) {
    const ref = score(delta, 0);
    for (const j of [7, 1000, 123456]) assert.ok(Math.abs(score(j + delta, j) - ref) < 2e-5, `delta ${delta} j ${j}`);
  }

  const yarn = { headDim: 8, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 64 } };
  const ones = new Float32Array(8).fill(1);
  const y = pe.applyRope(ones, { seqLen: 1, nHeads: 1, params: yarn, positions: [0] });
  for (const v of y) assert.ok(Math.abs(v - 1.1386294) < 1e-6);  // angle 0: cos = 1 times the factor
});

test('params rotate to the same bits as the float64 table and gain ropeFrequencies gives at maxPosition + 1', () => {
  // The binding computes params' frequencies itself (no table through JS): every call that takes
  // params must give what the table form gives, seqLen-dependent scalings and gains included.
  const same = (a, b, what) => assert.ok(Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength)), what);
  const seqLen = 7, nHeads = 2, headDim = 16;
  const cases = [
    { headDim, theta: 500 },
    { headDim, scaling: { type: 'dynamic', factor: 2, maxPositionEmbeddings: 8 } },
    { headDim, scaling: { type: 'yarn', factor: 4, originalMaxPositionEmbeddings: 8 } },
    { headDim, rotaryDim: 8, layout: 'interleaved' },
  ];
  const x = randomFloats(seqLen * nHeads * headDim, 31);
  for (const params of cases) {
    const what = JSON.stringify(params);
    for (const offset of [0, 20]) {
      const table = pe.ropeFrequencies(params, { seqLen: offset + seqLen, dtype: 'float64' });
      const t = { invFreq: table.invFreq, attentionFactor: table.attentionFactor, layout: params.layout };
      for (const precision of ['fast', 'accurate']) {
        same(pe.applyRope(x, { seqLen, nHeads, headDim, params, offset, precision }),
          pe.applyRope(x, { seqLen, nHeads, headDim, ...t, offset, precision }), `applyRope ${what} ${offset} ${precision}`);
      }
      const c1 = pe.ropeCache({ params, seqLen, offset }), c2 = pe.ropeCache({ invFreq: t.invFreq, attentionFactor: t.attentionFactor, seqLen, offset });
      same(c1.cos, c2.cos, `ropeCache ${what}`);
      same(c1.sin, c2.sin, `ropeCache ${what}`);
    }
    const k1 = Float32Array.from(x), k2 = Float32Array.from(x);
    const shiftTable = pe.ropeFrequencies(params, { seqLen, dtype: 'float64' }).invFreq;
    pe.shiftKeys(k1, { seqLen, nHeads, headDim, params, delta: 5 });
    pe.shiftKeys(k2, { seqLen, nHeads, headDim, invFreq: shiftTable, layout: params.layout, delta: 5 });
    same(k1, k2, `shiftKeys ${what}`);
    const a = (rope) => pe.attention(x, x, x, { nHeads, headDim, causal: true, rope });
    const attTable = pe.ropeFrequencies(params, { seqLen, dtype: 'float64' });
    same(a({ params }), a({ invFreq: attTable.invFreq, attentionFactor: attTable.attentionFactor, layout: params.layout }), `attention ${what}`);
    const cached = (rope) => {
      const cache = pe.kvCache({ nKvHeads: nHeads, headDim, capacity: 32, rope });
      try {
        cache.append(x, x);
        return cache.attend(x.subarray(0, nHeads * headDim), { nHeads });
      } finally {
        cache.delete();
      }
    };
    const kvTable = pe.ropeFrequencies(params, { seqLen: 32, dtype: 'float64' });
    same(cached({ params }), cached({ invFreq: kvTable.invFreq, attentionFactor: kvTable.attentionFactor, layout: params.layout }), `kvCache ${what}`);
  }
});

test('applyRopeInPlace: rotates a heap buffer like applyRope; delete() frees it once', () => {
  const seqLen = 5, nHeads = 3, headDim = 16;
  const x = randomFloats(seqLen * nHeads * headDim, 21);
  const options = { seqLen, nHeads, headDim, params: { headDim }, offset: 10 };
  const buffer = pe.allocFloat32(x.length);
  buffer.array.set(x);
  pe.applyRopeInPlace(buffer, options);
  assert.deepEqual(buffer.array.slice(), pe.applyRope(x, options));
  buffer.delete();
  buffer.delete();  // a no-op
  assert.equal(buffer.ptr, 0);
  assert.throws(() => buffer.array, error(TypeError, /HeapFloat32.array: the buffer was deleted/));
  assert.throws(() => pe.applyRopeInPlace(buffer, options), error(TypeError, /deleted/));
  assert.throws(() => pe.applyRopeInPlace(x, options), error(TypeError, /allocFloat32/));
});

test('ropeCache: ONNX-layout cos/sin, with positions or an offset', () => {
  const { cos, sin, rotaryDim } = pe.ropeCache({ params: { headDim: 8 }, seqLen: 3, offset: 2 });
  assert.equal(rotaryDim, 8);
  assert.equal(cos.length, 12);
  const { invFreq } = pe.ropeFrequencies({ headDim: 8 });
  for (let t = 0; t < 3; t++) {
    for (let k = 0; k < 4; k++) {
      assert.ok(Math.abs(cos[t * 4 + k] - Math.cos((t + 2) * invFreq[k])) < 1e-6);
      assert.ok(Math.abs(sin[t * 4 + k] - Math.sin((t + 2) * invFreq[k])) < 1e-6);
    }
  }
  const byPositions = pe.ropeCache({ params: { headDim: 8 }, positions: [2, 3, 4] });
  assert.deepEqual(byPositions.cos, cos);
});

test('accurate precision: angle error at pos 2^20 stays under 1e-6 rad; fast drifts to ~6e-2', () => {
  const params = { headDim: 128 };
  const positions = Array.from({ length: 64 }, (_, i) => 2 ** 20 - i);
  const { invFreq } = pe.ropeFrequencies(params);
  const inv64 = Array.from({ length: 64 }, (_, k) => 1 / 10000 ** (2 * k / 128));
  const worst = {};
  for (const precision of ['fast', 'accurate']) {
    const { cos, sin } = pe.ropeCache({ params, positions, precision });
    let w = 0;
    for (let t = 0; t < positions.length; t++) {
      for (let k = 0; k < 64; k++) {
        const exact = positions[t] * inv64[k];
        const got = Math.atan2(sin[t * 64 + k], cos[t * 64 + k]);
        let d = (got - exact) % (2 * Math.PI);
        if (d > Math.PI) d -= 2 * Math.PI;
        if (d < -Math.PI) d += 2 * Math.PI;
        w = Math.max(w, Math.abs(d));
      }
    }
    worst[precision] = w;
  }
  assert.ok(worst.accurate <= 1e-6, `accurate ${worst.accurate}`);
  assert.ok(worst.fast > 1e-2, `fast ${worst.fast}`);
  assert.ok(invFreq instanceof Float32Array);
  const f64 = pe.ropeFrequencies(params, { dtype: 'float64' }).invFreq;
  assert.ok(f64 instanceof Float64Array);
  for (let k = 0; k < 64; k++) assert.ok(Math.abs(f64[k] / inv64[k] - 1) < 1e-14);
});

test('ropeParamsFromConfig: presets, three dialects of one model, errors that name the value', () => {
  const preset = (id) => pe.presets.presets.find((p) => p.id === id);
  assert.ok(pe.presets.presets.length >= 13);
  for (const p of pe.presets.presets) assert.ok(p.source.length > 10, p.id);
  // Each RoPE preset's pair layout comes from its config (HF's modeling code): DeepSeek-V3 (MLA,
  // rope_interleave) and Llama 4 (complex pairs) interleaved, the others rotate_half.
  for (const p of pe.presets.presets.filter((q) => q.scheme === 'rope')) {
    const layerType = p.layerTypes?.[0];
    const want = ['deepseek-v3', 'llama-4-scout'].includes(p.id) ? 'interleaved' : 'halfSplit';
    assert.equal(pe.ropeParamsFromConfig(p.config, layerType ? { layerType } : undefined).layout, want, p.id);
  }
  const llama = pe.ropeParamsFromConfig(preset('llama-3.1-8b').config);
  assert.deepEqual(llama, { headDim: 128, theta: 500000, layout: 'halfSplit', scaling: { type: 'llama3', factor: 8, originalMaxPositionEmbeddings: 8192, maxPositionEmbeddings: 131072, lowFreqFactor: 1, highFreqFactor: 4 } });
  const phi = pe.ropeParamsFromConfig(preset('phi-3.5-mini').config);
  assert.ok(Math.abs(pe.ropeFrequencies(phi).attentionFactor - 1.1902381) < 1e-7);
  // Long factors iff seqLen > original max (4096).
  const short = pe.ropeFrequencies(phi, { seqLen: 4096 }).invFreq, long = pe.ropeFrequencies(phi, { seqLen: 4097 }).invFreq;
  assert.ok(Math.abs(short[47] / long[47] - 64.83999633789062 / 2.8399994373321533) < 1e-5);

  const hf = preset('qwen2.5-7b-yarn').config;
  const gguf = {
    'general.architecture': 'qwen2', 'qwen2.embedding_length': 3584, 'qwen2.attention.head_count': 28,
    'qwen2.context_length': 32768, 'qwen2.rope.freq_base': 1000000, 'qwen2.rope.scaling.type': 'yarn',
    'qwen2.rope.scaling.factor': 4, 'qwen2.rope.scaling.original_context_length': 32768,
  };
  const hfNew = { hidden_size: 3584, num_attention_heads: 28, max_position_embeddings: 32768, rope_parameters: { rope_type: 'yarn', rope_theta: 1e6, factor: 4, original_max_position_embeddings: 32768 } };
  const a = pe.ropeFrequencies(pe.ropeParamsFromConfig(hf));
  const b = pe.ropeFrequencies(pe.ropeParamsFromConfig(JSON.stringify(gguf), { dialect: 'gguf' }));
  const c = pe.ropeFrequencies(pe.ropeParamsFromConfig(hfNew));
  assert.deepEqual(a, b);
  assert.deepEqual(a, c);

  const gemma = preset('gemma-3-4b');
  assert.equal(pe.ropeParamsFromConfig(gemma.config, { layerType: 'sliding_attention' }).theta, 10000);
  assert.equal(pe.ropeParamsFromConfig(gemma.config, { layerType: 'full_attention' }).scaling.type, 'linear');

  assert.throws(() => pe.ropeParamsFromConfig({ head_dim: 64, rope_scaling: { rope_type: 'wobbly' } }), error(RangeError, /"wobbly" is not one of/));
  assert.throws(() => pe.ropeParamsFromConfig('{oops'), error(RangeError, /not valid JSON/));
  assert.throws(() => pe.ropeParamsFromConfig(42), error(TypeError, /config must be/));
  assert.throws(() => pe.ropeParamsFromConfig({}, { dialect: 'onnx' }), error(RangeError, /dialect must be one of 'hf', 'gguf'/));
});

test('RoPE bad input: TypeError or RangeError naming the argument and the rule', () => {
  const x = new Float32Array(16);
  const ok = { seqLen: 2, nHeads: 1, headDim: 8, params: { headDim: 8 } };
  const cases = [
    [() => pe.ropeFrequencies({ headDim: 8, rotaryDim: 7 }), RangeError, /params\.rotaryDim must be even \(got 7\)/],
    [() => pe.ropeFrequencies({ headDim: 8, rotaryDim: -2 }), RangeError, /params\.rotaryDim must be in \[0, /],
    [() => pe.ropeFrequencies({ headDim: 8, rotaryDim: 10 }), RangeError, /params\.rotaryDim must be <= params\.headDim \(got params\.rotaryDim = 10, params\.headDim = 8\)/],
    [() => pe.ropeFrequencies({ headDim: 8, theta: Infinity }), RangeError, /params\.theta must be finite and > 0/],
    [() => pe.ropeFrequencies({ headDim: 8, theta: '1e4' }), TypeError, /params\.theta must be a number/],
    [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'linear', factor: NaN } }), RangeError, /params\.scaling\.factor must be finite and >= 1 \(got NaN\)/],
    [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'linear', factor: 0.5 } }), RangeError, /params\.scaling\.factor must be finite and >= 1/],
    [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'yarn', factor: 4 } }), RangeError, /originalMaxPositionEmbeddings is required for yarn/],
    [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'xpos' } }), RangeError, /params\.scaling\.type must be one of 'none', .* \(got "xpos"\)/],
    [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'longrope', originalMaxPositionEmbeddings: 64, shortFactor: [1], longFactor: [1] } }), RangeError, /shortFactor and params\.scaling\.longFactor must have params\.rotaryDim \/ 2 entries/],
    [() => pe.ropeFrequencies({ headDim: 8, partialRotaryFactor: 0 }), RangeError, /partialRotaryFactor must be in \(0, 1\]/],
    [() => pe.ropeFrequencies({ headDim: 8, rotary: 4 }), TypeError, /unknown key in params "rotary"/],
    [() => pe.ropeFrequencies(null), TypeError, /params must be an object/],
    [() => pe.applyRope([1, 2], ok), TypeError, /x must be a Float32Array/],
    [() => pe.applyRope(new Float32Array(15), ok), RangeError, /x\.length must equal seqLen \* nHeads \* headDim = 16 \(got 15\)/],
    [() => pe.applyRope(x, { ...ok, positions: [0] }), RangeError, /positions\.length must equal seqLen = 2 \(got 1\)/],
    [() => pe.applyRope(x, { ...ok, positions: [0, NaN] }), RangeError, /positions\[1\] must be finite/],
    [() => pe.applyRope(x, { ...ok, layout: 'neox' }), RangeError, /layout must be one of 'halfSplit', 'interleaved'/],
    [() => pe.applyRope(x, { ...ok, precision: 'exact' }), RangeError, /precision must be one of 'fast', 'accurate'/],
    [() => pe.applyRope(x, { ...ok, invFreq: [1, 0.1, 0.01, 0.001] }), TypeError, /exactly one of options\.invFreq and options\.params/],
    [() => pe.applyRope(x, { seqLen: 2, nHeads: 1, headDim: 8, invFreq: [1, NaN, 0.1, 0.1] }), RangeError, /invFreq\[1\] must be finite/],
    [() => pe.applyRope(x, { seqLen: 2, nHeads: 1, headDim: 4, invFreq: [1, 0.1, 0.01, 0.001], rotaryDim: 8 }), RangeError, /x\.length must equal/],
    [() => pe.applyRope(new Float32Array(8), { seqLen: 2, nHeads: 1, headDim: 4, invFreq: [1, 0.1, 0.01] }), RangeError, /rotaryDim must be <= headDim \(got rotaryDim = 6, headDim = 4\); rotaryDim from 2 \* invFreq.length = 2 \* 3/],
    [() => pe.applyRope(x, { ...ok, offset: Infinity }), RangeError, /offset must be finite/],
    [() => pe.applyRope(x), TypeError, /options .* are required/],
    [() => pe.allocFloat32(0), RangeError, /length must be >= 1/],
    [() => pe.allocFloat32(2 ** 29), RangeError, /exceeds the limit/],
  ];
  for (const [call, type, pattern] of cases) assert.throws(call, error(type, pattern));
  // After every bad call a good call still returns the right answer.
  const good = pe.applyRope(randomFloats(16, 5), ok);
  const again = pe.applyRope(randomFloats(16, 5), ok);
  assert.deepEqual(good, again);
});

test('shiftKeys: keys rotated at p and shifted by Δ equal keys rotated at p + Δ, the attention factor kept once', () => {
  const qwen = pe.ropeParamsFromConfig(pe.presets.presets.find((p) => p.id === 'qwen2.5-7b-yarn').config);
  const llama = pe.ropeParamsFromConfig(pe.presets.presets.find((p) => p.id === 'llama-3.1-8b').config);
  for (const params of [qwen, llama]) {
    const seqLen = 6, nHeads = 2, headDim = 128;
    const x = randomFloats(seqLen * nHeads * headDim, 9);
    const at = (offset) => pe.applyRope(x, { seqLen, nHeads, params, offset, precision: 'accurate' });
    const k = at(100);
    pe.shiftKeys(k, { seqLen, nHeads, params, delta: -37, precision: 'accurate' });
    assert.ok(maxAbsDiff(k, at(63)) < 2e-6);  // YaRN's factor (1.1386 for Qwen) applied once, not twice
    const buf = pe.allocFloat32(k.length);
    buf.array.set(k);
    pe.shiftKeys(buf, { seqLen, nHeads, params, delta: Array.from({ length: seqLen }, (_, t) => t), precision: 'accurate' });
    const perToken = Float32Array.from(buf.array);
    buf.delete();
    const want = pe.applyRope(x, { seqLen, nHeads, params, positions: Array.from({ length: seqLen }, (_, t) => 63 + 2 * t), precision: 'accurate' });
    assert.ok(maxAbsDiff(perToken, want) < 2e-6);
  }
  const k = new Float32Array(8);
  assert.throws(() => pe.shiftKeys(k, { seqLen: 1, nHeads: 1, headDim: 8, invFreq: [1, 0.1, 0.01, 0.001] }), error(TypeError, /options.delta/));
  assert.throws(() => pe.shiftKeys(k, { seqLen: 2, nHeads: 1, headDim: 4, delta: [1], invFreq: [1, 0.1] }), error(RangeError, /delta.length must equal seqLen = 2/));
  assert.throws(() => pe.shiftKeys(k, { seqLen: 1, nHeads: 1, headDim: 8, delta: 1, params: { headDim: 8 }, precision: 'ggml' }),
    error(RangeError, /^shiftKeys: shiftKeys takes precision fast or accurate$/));
});

test('M-RoPE: Qwen2-VL position ids for text + image, sections against a float64 twin, interleaved (Qwen3-VL)', () => {
  // HF Qwen2-VL get_rope_index, by hand: 2 text tokens, a 1×2×3 image grid starting at id 2, then
  // text continuing at 2 + max(1, 2, 3) = 5.
  const pos = pe.mropePositions([{ text: 2 }, { image: [1, 2, 3] }, { text: 1 }]);
  assert.deepEqual(Array.from(pos), [0, 1, 2, 2, 2, 2, 2, 2, 5, 0, 1, 2, 2, 2, 3, 3, 3, 5, 0, 1, 2, 3, 4, 2, 3, 4, 5]);
  const params = pe.ropeParamsFromConfig({ hidden_size: 3584, num_attention_heads: 28, rope_theta: 1000000,
    rope_scaling: { type: 'mrope', mrope_section: [16, 24, 24] } });
  assert.deepEqual(params.mrope, { section: [16, 24, 24], interleaved: false });
  const seqLen = 9, nHeads = 2, headDim = 128;
  const x = randomFloats(seqLen * nHeads * headDim, 21);
  const inv = pe.ropeFrequencies(params, { dtype: 'float64' }).invFreq;
  for (const interleaved of [false, true]) {
    const p = { ...params, mrope: { section: interleaved ? [24, 20, 20] : [16, 24, 24], interleaved } };
    const row = (k) => {
      const [s0, s1, s2] = p.mrope.section;
      if (interleaved) return k % 3 === 1 && k < 3 * s1 ? 1 : k % 3 === 2 && k < 3 * s2 ? 2 : 0;
      return k < s0 ? 0 : k < s0 + s1 ? 1 : 2;
    };
    const got = pe.applyRope(x, { seqLen, nHeads, params: p, positions: pos, precision: 'accurate' });
    const want = ropeTwin(x, { seqLen, nHeads, headDim, rotaryDim: headDim, layout: 'halfSplit',
      angle: (t, k) => pos[row(k) * seqLen + t] * inv[k] });
    assert.ok(maxAbsDiff(got, want) < 2e-6, `interleaved ${interleaved}`);
  }
  // Equal rows (text only) are plain RoPE.
  const textPos = Float64Array.from({ length: 3 * seqLen }, (_, i) => i % seqLen);
  assert.ok(maxAbsDiff(pe.applyRope(x, { seqLen, nHeads, params, positions: textPos }), pe.applyRope(x, { seqLen, nHeads, params })) < 1e-6);
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, params: { ...params, mrope: { section: [16, 24, 23] } }, positions: pos }),
    error(RangeError, /params\.mrope\.section must have 3 entries summing to params\.rotaryDim \/ 2/));
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, params, positions: pos.subarray(0, 2 * seqLen) }),
    error(RangeError, /positions must hold 3 \* seqLen = 27 ids .* \(got 18\)/));
  assert.throws(() => pe.mropePositions([{ image: [1, 0, 2] }]), error(RangeError, /image\[1\] must be >= 1/));
  assert.throws(() => pe.mropePositions([{ text: 2, image: [1, 1, 1] }]), error(TypeError, /must be \{ text: n \} or \{ image/));
});

test('applyRope2d: Pixtral axial RoPE — half the pairs by patch row (even freqs), half by column (odd freqs)', () => {
  const nHeads = 2, headDim = 16, rows = 3, cols = 4, n = rows * cols;
  const x = randomFloats(n * nHeads * headDim, 22);
  const got = pe.applyRope2d(x, { nHeads, headDim, grid: [rows, cols], theta: 10000, precision: 'accurate' });
  const freqs = Array.from({ length: headDim / 2 }, (_, i) => 1 / 10000 ** ((2 * i) / headDim));
  const want = ropeTwin(x, { seqLen: n, nHeads, headDim, rotaryDim: headDim, layout: 'halfSplit',
    angle: (t, k) => (k < headDim / 4 ? Math.floor(t / cols) * freqs[2 * k] : (t % cols) * freqs[2 * (k - headDim / 4) + 1]) });
  assert.ok(maxAbsDiff(got, want) < 2e-6);
  const byPositions = pe.applyRope2d(x, { nHeads, headDim, precision: 'accurate',
    positions: [...Array.from({ length: n }, (_, t) => Math.floor(t / cols)), ...Array.from({ length: n }, (_, t) => t % cols)] });
  assert.deepEqual(byPositions, got);
  assert.throws(() => pe.applyRope2d(x, { nHeads, headDim: 6, grid: [1, 1] }), error(RangeError, /multiple of 4/));
  assert.throws(() => pe.applyRope2d(x, { nHeads, headDim, grid: [3, 4], positions: [0, 0] }), error(TypeError, /exactly one of options.grid/));
});

test('presets: Qwen2.5-VL reads its M-RoPE sections; Qwen3.5-style top-level mrope keys too', () => {
  const vl = pe.ropeParamsFromConfig(pe.presets.presets.find((p) => p.id === 'qwen2.5-vl-7b').config);
  assert.deepEqual(vl.mrope, { section: [16, 24, 24], interleaved: false });
  assert.equal(vl.headDim, 128);
  const top = pe.ropeParamsFromConfig({ head_dim: 256, rope_theta: 1e7, partial_rotary_factor: 0.25, mrope_interleaved: true, mrope_section: [11, 11, 10] });
  assert.deepEqual(top.mrope, { section: [11, 11, 10], interleaved: true });
  assert.equal(pe.ropeFrequencies(top).rotaryDim, 64);
});

test("applyRope tensorLayout 'bhsd' rotates heads-major x as the transposed 'bshd' call does", () => {
  const seqLen = 700, nHeads = 3, headDim = 32;
  const x = randomFloats(seqLen * nHeads * headDim, 81);
  const heads = new Float32Array(x.length);  // [S][H][D] → [H][S][D]
  for (let s = 0; s < seqLen; s++) for (let h = 0; h < nHeads; h++) {
    heads.set(x.subarray((s * nHeads + h) * headDim, (s * nHeads + h + 1) * headDim), (h * seqLen + s) * headDim);
  }
  const params = { headDim, theta: 10000 };
  const tokens = pe.applyRope(x, { seqLen, nHeads, params, offset: 5 });
  const rotated = pe.applyRope(heads, { seqLen, nHeads, params, offset: 5, tensorLayout: 'bhsd' });
  for (let s = 0; s < seqLen; s += 97) for (let h = 0; h < nHeads; h++) {
    assert.deepEqual(rotated.subarray((h * seqLen + s) * headDim, (h * seqLen + s + 1) * headDim),
      tokens.subarray((s * nHeads + h) * headDim, (s * nHeads + h + 1) * headDim));
  }
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, params, tensorLayout: 'hsd' }), error(RangeError, /tensorLayout must be one of 'bshd', 'bhsd'/));
});

test('applyRope xpos: queries ×ζ_k^((p − c)/γ), keys ×ζ_k^(−(p − c)/γ) on every pair, against float64', () => {
  // Sun et al. 2022 (torchscale XPOS): ζ_k = (2k/d + 0.4)/1.4, γ = scaleBase (512).
  const seqLen = 4, nHeads = 2, headDim = 8, half = 4;
  const x = Float32Array.from({ length: seqLen * nHeads * headDim }, (_, i) => Math.sin(i * 0.7) + 0.1);
  const positions = [0, 5, 300, 1500];
  const inv = Array.from({ length: half }, (_, k) => 10000 ** (-2 * k / headDim));
  for (const layout of ['halfSplit', 'interleaved']) {
    for (const role of ['query', 'key']) {
      for (const center of [0, 700]) {
        const y = pe.applyRope(x, { seqLen, nHeads, headDim, params: { headDim }, positions, layout, precision: 'accurate',
          xpos: { role, center } });
        let worst = 0;
        for (let t = 0; t < seqLen; t++) {
          for (let h = 0; h < nHeads; h++) {
            for (let k = 0; k < half; k++) {
              const base = (t * nHeads + h) * headDim;
              const [i1, i2] = layout === 'interleaved' ? [base + 2 * k, base + 2 * k + 1] : [base + k, base + k + half];
              const a = positions[t] * inv[k];
              const z = ((2 * k) / headDim + 0.4) / 1.4;
              const f = z ** ((role === 'key' ? -1 : 1) * (positions[t] - center) / 512);
              const want1 = (x[i1] * Math.cos(a) - x[i2] * Math.sin(a)) * f;
              const want2 = (x[i2] * Math.cos(a) + x[i1] * Math.sin(a)) * f;
              worst = Math.max(worst, Math.abs(y[i1] - want1) / Math.max(1, Math.abs(want1)), Math.abs(y[i2] - want2) / Math.max(1, Math.abs(want2)));
            }
          }
        }
        assert.ok(worst < 2e-6, `${layout} ${role} ${center}: ${worst}`);
      }
    }
  }
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, headDim, params: { headDim }, xpos: {} }), error(TypeError, /xpos.role is required/));
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, headDim, params: { headDim }, xpos: { role: 'value' } }),
    error(RangeError, /xpos.role must be one of 'query', 'key'/));
  assert.throws(() => pe.applyRope(x, { seqLen, nHeads, headDim, params: { headDim }, xpos: { role: 'key', scaleBase: 0 } }),
    error(RangeError, /xpos.scaleBase must be finite and > 0/));
});

const x16 = randomFloats(2 * 1 * 8, 1);
const rope = { seqLen: 2, nHeads: 1, headDim: 8, params: { headDim: 8 } };
badInputTest('ropeFrequencies', () => pe.ropeFrequencies({ headDim: 8 }), [
  [() => pe.ropeFrequencies({ headDim: 0 }), RangeError, 'params.headDim'], [() => pe.ropeFrequencies({ headDim: 8, rotaryDim: 3 }), RangeError, 'params.rotaryDim'],
  [() => pe.ropeFrequencies({ headDim: 8, theta: NaN }), RangeError, 'params.theta'], [() => pe.ropeFrequencies({ headDim: 8, scaling: { type: 'yarn' } }), RangeError, 'originalMaxPositionEmbeddings'],
  [() => pe.ropeFrequencies({ headDim: 8 }, { seqLen: -1 }), RangeError, 'seqLen'],
]);

badInputTest('ropeParamsFromConfig', () => pe.ropeParamsFromConfig({ head_dim: 8 }), [
  [() => pe.ropeParamsFromConfig('{'), RangeError, 'JSON'], [() => pe.ropeParamsFromConfig(null), TypeError, 'config'],
  [() => pe.ropeParamsFromConfig({ head_dim: 8 }, { layerType: 3 }), TypeError, 'layerType'],
]);

badInputTest('applyRope', () => pe.applyRope(x16, rope), [
  [() => pe.applyRope(x16), TypeError, 'options'], [() => pe.applyRope(x16, { ...rope, seqLen: 3 }), RangeError, 'x.length'],
  [() => pe.applyRope(x16, { ...rope, nHeads: 0 }), RangeError, 'nHeads'], [() => pe.applyRope(x16, { ...rope, offset: NaN }), RangeError, 'offset'],
  [() => pe.applyRope(Array.from(x16), rope), TypeError, 'x'],
]);

badInputTest('applyRopeInPlace', () => { const b = pe.allocFloat32(16); b.array.set(x16); pe.applyRopeInPlace(b, rope); const r = b.array.slice(); b.delete(); return r; }, [
  [() => pe.applyRopeInPlace(x16, rope), TypeError, 'buffer'],
]);

badInputTest('ropeCache', () => pe.ropeCache({ params: { headDim: 8 }, seqLen: 3 }).cos, [
  [() => pe.ropeCache(), TypeError, 'options'], [() => pe.ropeCache({ params: { headDim: 8 }, seqLen: 0 }), RangeError, 'seqLen'],
  [() => pe.ropeCache({ params: { headDim: 8 }, seqLen: 3, precision: 'exact' }), RangeError, 'precision'],
]);

// The rules below are C++'s alone (shift_keys_check, rope_2d_check, apply_rope_check): the JS layer
// checks types and shapes, asks the core before it allocates, and adds "(got …)".
test('RoPE rules the core states: shiftKeys delta, applyRope2d headDim and theta, an empty invFreq, M-RoPE with xpos', () => {
  const k = new Float32Array(2 * 1 * 8), inv = [1, 0.1, 0.01, 0.001];
  const shift = { seqLen: 2, nHeads: 1, headDim: 8, invFreq: inv };
  for (const delta of [NaN, Infinity, -Infinity]) {
    assert.throws(() => pe.shiftKeys(k, { ...shift, delta }), error(RangeError, new RegExp(`^shiftKeys: delta must be finite \\(got ${delta}\\)$`)));
  }
  assert.throws(() => pe.shiftKeys(k, { ...shift, delta: 10n ** 20n }), error(RangeError, /shiftKeys: delta must be within/));
  assert.throws(() => pe.shiftKeys(k, { ...shift, delta: [0, NaN] }), error(RangeError, /delta\[1\] must be finite/));
  assert.deepEqual(k, new Float32Array(16));  // nothing moved by a refused call

  const x = randomFloats(4 * 2 * 12, 3);
  assert.throws(() => pe.applyRope2d(x, { nHeads: 2, headDim: 12, grid: [2, 2], theta: 0 }),
    error(RangeError, /^applyRope2d: theta must be finite and > 0 \(got 0\)$/));
  assert.throws(() => pe.applyRope2d(x, { nHeads: 2, headDim: 12, grid: [2, 2], theta: NaN }), error(RangeError, /theta must be finite and > 0 \(got NaN\)/));
  assert.throws(() => pe.applyRope2d(x, { nHeads: 2, headDim: 12, grid: [2, 2], theta: '1e4' }), error(TypeError, /theta must be a number/));
  // headDim given (before x's extents) and headDim from x's dims.
  assert.throws(() => pe.applyRope2d(new Float32Array(4 * 2 * 6), { nHeads: 2, headDim: 6, grid: [2, 2] }),
    error(RangeError, /^applyRope2d: headDim must be a multiple of 4 for 2-D RoPE \(got 6\)$/));
  assert.throws(() => pe.applyRope2d({ data: new Float32Array(4 * 2 * 6), dims: [1, 4, 2, 6] }, { grid: [2, 2] }),
    error(RangeError, /^applyRope2d: headDim must be a multiple of 4 for 2-D RoPE \(got 6\)$/));

  const empty = /rotaryDim must be > 0 \(got 0\); rotaryDim from 2 \* invFreq\.length = 2 \* 0/;
  const q = new Float32Array(16);
  assert.throws(() => pe.applyRope(q, { seqLen: 2, nHeads: 1, headDim: 8, invFreq: [] }), error(RangeError, new RegExp(`^applyRope: ${empty.source}`)));
  assert.throws(() => pe.ropeCache({ seqLen: 2, invFreq: new Float64Array(0) }), error(RangeError, new RegExp(`^ropeCache: ${empty.source}`)));
  assert.throws(() => pe.shiftKeys(q, { ...shift, invFreq: [], delta: 1 }), error(RangeError, empty));
  assert.throws(() => pe.attention(q, q, q, { nHeads: 1, headDim: 8, rope: { invFreq: [] } }), error(RangeError, empty));
  assert.throws(() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4, rope: { invFreq: [] } }), error(RangeError, empty));

  const params = { headDim: 8, mrope: { section: [2, 1, 1] } };
  const positions = new Float64Array(3 * 2);
  assert.throws(() => pe.applyRope(q, { seqLen: 2, nHeads: 1, params, positions, xpos: { role: 'key' } }),
    error(RangeError, /^applyRope: xpos takes one position row, not M-RoPE's/));
  assert.equal(pe.applyRope(q, { seqLen: 2, nHeads: 1, params, positions }).length, 16);  // without xpos it rotates
});
