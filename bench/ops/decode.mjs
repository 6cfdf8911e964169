// One decoding step against a cache of L tokens (n new queries, GQA), the way each contender keeps
// its cache: posenc's pe.kvCache in the heap (append the n new keys and values, attend, drop them
// again so the next round starts from the same L - n); onnxruntime-web's Attention-23 with
// past_key/past_value (it returns present_*, a copy of the whole cache); its com.microsoft
// GroupQueryAttention with a past buffer of L tokens, the form its decoders use (seqlens_k says
// how many are filled); and pe.attention given the whole cache on every call (the way before the
// cache). Shared by the interop test (tests/js/interop.test.mjs) and npm run bench
// (bench/decode.mjs). The data are float16 values, so a float16 cache holds exactly what the
// float32 contenders get and every output can be compared.
import { data, halfValue, maxAbsDiff, toHalfBits, toHeadMajor, toTokenMajor } from './cases.mjs';
import { oneNodeModel } from './onnx-model.mjs';

const halfValues = (n, seed) => Float32Array.from(data(n, seed), (x) => halfValue(toHalfBits(x)));

export const KV_FLOAT32 = 'posenc kvCache float32';
export const KV_FLOAT16 = 'posenc kvCache float16';
export const ATTENTION23 = 'onnxruntime-web Attention-23, past_key/past_value';
export const GQA = 'onnxruntime-web GroupQueryAttention, past buffer';
export const WHOLE = 'posenc attention, whole cache per call';

/**
 * L tokens in all after the step, n of them new; Hq query heads over Hk kv heads of D dims.
 * ort: onnxruntime-web (or null for posenc alone); whole: include pe.attention's contender.
 */
export async function decodeCase({ pe, ort, L, n = 1, Hq = 32, Hk = 8, D = 128, whole = true }) {
  const past = L - n;
  const kPast = halfValues(past * Hk * D, 11), vPast = halfValues(past * Hk * D, 12);  // [past][Hk][D]
  const k = halfValues(n * Hk * D, 13), v = halfValues(n * Hk * D, 14), q = halfValues(n * Hq * D, 15);
  const caches = {};
  for (const dtype of ['float32', 'float16']) {
    const c = pe.kvCache({ nKvHeads: Hk, headDim: D, capacity: L, dtype });
    const piece = 1024 * Hk * D;
    for (let i = 0; i < kPast.length; i += piece) c.append(kPast.subarray(i, i + piece), vPast.subarray(i, i + piece));
    caches[dtype] = c;
  }
  const out = { float32: new Float32Array(q.length), float16: new Float32Array(q.length) };
  const step = (dtype) => {
    const c = caches[dtype];
    c.append(k, v);
    c.attend(q, { nHeads: Hq, out: out[dtype] });
    c.shift(-n, { keep: past });  // drops the n tokens again (llama.cpp's seq_rm of a draft)
    return out[dtype];
  };
  const contenders = { [KV_FLOAT32]: () => step('float32'), [KV_FLOAT16]: () => step('float16') };

  // The whole sequence, tokens major, for pe.attention.
  const kAll = new Float32Array(L * Hk * D), vAll = new Float32Array(L * Hk * D);
  kAll.set(kPast);
  kAll.set(k, past * Hk * D);
  vAll.set(vPast);
  vAll.set(v, past * Hk * D);
  const opts = { nHeads: Hq, nKvHeads: Hk, headDim: D, causal: true };
  if (whole) contenders[WHOLE] = () => pe.attention(q, kAll, vAll, opts);

  const sessions = {};
  if (ort) {
    // Heads major as onnxruntime takes them: [1, H, S, D].
    const kPastH = toHeadMajor(kPast, past, Hk, D), vPastH = toHeadMajor(vPast, past, Hk, D);
    const qH = toHeadMajor(q, n, Hq, D), kH = toHeadMajor(k, n, Hk, D), vH = toHeadMajor(v, n, Hk, D);
    // Attention-23's is_causal aligns to the top left; with a past, a bottom-right mask instead.
    const mask = new Float32Array(n * L);
    for (let i = 0; i < n; i++) for (let j = past + i + 1; j < L; j++) mask[i * L + j] = -Infinity;
    const a23 = oneNodeModel({ opType: 'Attention', opset: 23,
      inputs: [{ name: 'Q', type: 'float32', dims: [1, Hq, n, D] }, { name: 'K', type: 'float32', dims: [1, Hk, n, D] },
        { name: 'V', type: 'float32', dims: [1, Hk, n, D] }, { name: 'attn_mask', type: 'float32', dims: [n, L] },
        { name: 'past_key', type: 'float32', dims: [1, Hk, past, D] }, { name: 'past_value', type: 'float32', dims: [1, Hk, past, D] }],
      outputs: [{ name: 'Y', type: 'float32', dims: [1, Hq, n, D] }, { name: 'present_key', type: 'float32', dims: [1, Hk, L, D] },
        { name: 'present_value', type: 'float32', dims: [1, Hk, L, D] }] });
    const s23 = await ort.InferenceSession.create(a23, { executionProviders: ['wasm'] });
    const f23 = { Q: new ort.Tensor('float32', qH, [1, Hq, n, D]), K: new ort.Tensor('float32', kH, [1, Hk, n, D]),
      V: new ort.Tensor('float32', vH, [1, Hk, n, D]), attn_mask: new ort.Tensor('float32', mask, [n, L]),
      past_key: new ort.Tensor('float32', kPastH, [1, Hk, past, D]), past_value: new ort.Tensor('float32', vPastH, [1, Hk, past, D]) };
    sessions[ATTENTION23] = { s: s23, feeds: f23, y: (r) => toTokenMajor(r.Y.data, n, Hq, D) };

    // GroupQueryAttention: tokens-major q/k/v [1, n, H·D]; a past buffer [1, Hk, L, D] holding the
    // first `past` tokens (the new ones are written after them: seqlens_k = L - 1).
    const buffer = (x) => {
      const b = new Float32Array(Hk * L * D);
      for (let h = 0; h < Hk; h++) b.set(x.subarray(h * past * D, (h + 1) * past * D), h * L * D);
      return b;
    };
    const gqa = oneNodeModel({ opType: 'GroupQueryAttention', opset: 23, domain: 'com.microsoft', attrs: { num_heads: Hq, kv_num_heads: Hk },
      inputs: [{ name: 'query', type: 'float32', dims: [1, n, Hq * D] }, { name: 'key', type: 'float32', dims: [1, n, Hk * D] },
        { name: 'value', type: 'float32', dims: [1, n, Hk * D] }, { name: 'past_key', type: 'float32', dims: [1, Hk, L, D] },
        { name: 'past_value', type: 'float32', dims: [1, Hk, L, D] }, { name: 'seqlens_k', type: 'int32', dims: [1] },
        { name: 'total_sequence_length', type: 'int32', dims: [] }],
      outputs: [{ name: 'output', type: 'float32', dims: [1, n, Hq * D] }, { name: 'present_key', type: 'float32', dims: [1, Hk, L, D] },
        { name: 'present_value', type: 'float32', dims: [1, Hk, L, D] }] });
    const sg = await ort.InferenceSession.create(gqa, { executionProviders: ['wasm'] });
    const fg = { query: new ort.Tensor('float32', q, [1, n, Hq * D]), key: new ort.Tensor('float32', k, [1, n, Hk * D]),
      value: new ort.Tensor('float32', v, [1, n, Hk * D]), past_key: new ort.Tensor('float32', buffer(kPastH), [1, Hk, L, D]),
      past_value: new ort.Tensor('float32', buffer(vPastH), [1, Hk, L, D]), seqlens_k: new ort.Tensor('int32', Int32Array.of(L - 1), [1]),
      total_sequence_length: new ort.Tensor('int32', Int32Array.of(L), []) };
    sessions[GQA] = { s: sg, feeds: fg, y: (r) => r.output.data };
    for (const [name, { s, feeds }] of Object.entries(sessions)) contenders[name] = () => s.run(feeds);
  }

  return {
    /** The K/V bytes one step reads from a float32 cache of L tokens. */
    bytes: 2 * L * Hk * D * 4,
    contenders,
    async check() {
      const want = pe.attention(q, kAll, vAll, opts);
      const diffs = { [`${KV_FLOAT32} vs pe.attention`]: maxAbsDiff(step('float32'), want),
        [`${KV_FLOAT16} vs ${KV_FLOAT32} (the same values)`]: maxAbsDiff(step('float16'), step('float32')) };
      for (const [name, { s, feeds, y }] of Object.entries(sessions)) diffs[`${name} vs posenc`] = maxAbsDiff(y(await s.run(feeds)), want);
      return diffs;
    },
    dispose() {
      for (const c of Object.values(caches)) c.delete();
      for (const { s } of Object.values(sessions)) s.release();
    },
  };
}
