// readModel over GGUF, safetensors, .npy and config.json from bytes, Blobs and paths (written
// here from the format specs); llama.cpp's GGUF semantics against the HF route of the same model;
// precision 'ggml' against a float32 twin of ggml's RoPE; clear errors; no leaks. What names a scheme
// in a file is tested in the scheme's suite (alibi.test.mjs, t5.test.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { openAsBlob } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { error, pe } from './helpers.mjs';
import { gguf, npy, safetensors } from './model_writer.mjs';

const preset = (id) => pe.presets.presets.find((p) => p.id === id).config;
const maxRel = (a, b) => a.reduce((w, x, i) => Math.max(w, Math.abs(x - b[i]) / Math.abs(b[i])), 0);

// llama.cpp's converter (LlamaModel, rope_type llama3): rope_freqs.weight.
function llama3RopeFreqs(theta, dim, factor, low, high, oldLen) {
  const out = [];
  for (let i = 0; i < dim; i += 2) {
    const freq = Math.fround(1 / theta ** (i / dim));
    const wavelen = (2 * Math.PI) / freq;
    if (wavelen < oldLen / high) out.push(1);
    else if (wavelen > oldLen / low) out.push(factor);
    else {
      const smooth = (oldLen / wavelen - low) / (high - low);
      out.push(1 / ((1 - smooth) / factor + smooth));
    }
  }
  return Float32Array.from(out);
}

const llama31 = (extra = [], options = {}) => gguf([
  ['general.architecture', 'llama'], ['llama.context_length', { u32: 131072 }], ['llama.embedding_length', { u32: 4096 }],
  ['llama.attention.head_count', { u32: 32 }], ['llama.attention.head_count_kv', { u32: 8 }],
  ['llama.rope.dimension_count', { u32: 128 }], ['llama.rope.freq_base', { f32: 500000 }],
], [{ name: 'rope_freqs.weight', ne: [64], data: llama3RopeFreqs(500000, 128, 8, 1, 4, 8192) }, ...extra], options);

test('readModel: a Llama-3.1 GGUF (bytes) gives the HF llama3 frequencies through rope_freqs', async () => {
  const m = await pe.readModel(llama31().bytes);
  assert.equal(m.format, 'gguf');
  assert.equal(m.architecture, 'llama');
  assert.equal(m.nHeads, 32);
  assert.equal(m.contextLength, 131072);
  assert.equal(m.dModel, 4096);  // llama.embedding_length
  assert.equal(m.rope.params.scaling.type, 'none');
  assert.equal(m.rope.params.freqFactors.length, 64);
  const got = pe.ropeFrequencies(m.rope.params, { dtype: 'float64' });
  const want = pe.ropeFrequencies(pe.ropeParamsFromConfig(preset('llama-3.1-8b')), { dtype: 'float64' });
  assert.ok(maxRel(got.invFreq, want.invFreq) < 2e-7);
  assert.deepEqual(m.warnings, []);
});

test('readModel: a multi-GB GGUF is read from a path and a Blob by its header and small tensors only', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'posenc-'));
  try {
    // token_embd.weight: 128256 × 4096 F16 = 1 GiB of zeros the reader must not touch (sparse file).
    const big = { name: 'token_embd.weight', ne: [4096, 128256], type: 1, bytes: 4096 * 128256 * 2 };
    const { bytes, fullSize } = llama31([big], { headerOnly: true });
    const path = join(dir, 'llama.gguf');
    await writeFile(path, bytes);
    const h = await open(path, 'r+');
    await h.truncate(fullSize);
    await h.close();
    for (const source of [path, await openAsBlob(path)]) {
      const m = await pe.readModel(source);
      assert.equal(m.rope.params.freqFactors.length, 64);
      assert.equal(m.tensors.length, 2);
      assert.deepEqual(m.tensors[1], { name: 'token_embd.weight', dtype: 'F16', shape: [128256, 4096] });
      assert.ok(m.bytesRead <= 1 << 20, `read ${m.bytesRead} of ${fullSize} bytes`);
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('readModel: GGUF metadata of DeepSeek-V3, Phi-3.5, gpt-oss and GPT-2', async () => {
  const ds = await pe.readModel(gguf([
    ['general.architecture', 'deepseek2'], ['deepseek2.context_length', { u32: 163840 }],
    ['deepseek2.attention.head_count', { u32: 128 }], ['deepseek2.attention.key_length', { u32: 192 }],
    ['deepseek2.rope.dimension_count', { u32: 64 }], ['deepseek2.rope.freq_base', { f32: 10000 }],
    ['deepseek2.rope.scaling.type', 'yarn'], ['deepseek2.rope.scaling.factor', { f32: 40 }],
    ['deepseek2.rope.scaling.original_context_length', { u32: 4096 }], ['deepseek2.rope.scaling.yarn_log_multiplier', { f32: 0.1 }],
  ]).bytes);
  const dsF = pe.ropeFrequencies(ds.rope.params);
  assert.ok(Math.abs(dsF.attentionFactor - 1) < 1e-7, `gain ${dsF.attentionFactor}`);  // llama.cpp and HF: 1

  const phi = preset('phi-3.5-mini').rope_scaling;
  const p3 = await pe.readModel(gguf([
    ['general.architecture', 'phi3'], ['phi3.context_length', { u32: 131072 }], ['phi3.embedding_length', { u32: 3072 }],
    ['phi3.attention.head_count', { u32: 32 }], ['phi3.rope.dimension_count', { u32: 96 }],
    ['phi3.rope.scaling.original_context_length', { u32: 4096 }], ['phi3.rope.scaling.attn_factor', { f32: 1.1902381 }],
  ], [{ name: 'rope_factors_long.weight', ne: [48], data: Float32Array.from(phi.long_factor) },
    { name: 'rope_factors_short.weight', ne: [48], data: Float32Array.from(phi.short_factor) }]).bytes);
  assert.equal(p3.rope.params.scaling.type, 'longrope');
  assert.equal(p3.rope.params.scaling.contextLength, 131072);
  const f3 = pe.ropeFrequencies(p3.rope.params, { seqLen: 10, dtype: 'float64' });  // long: llama.cpp's context rule
  const hf3 = pe.ropeFrequencies(pe.ropeParamsFromConfig(preset('phi-3.5-mini')), { seqLen: 8192, dtype: 'float64' });
  assert.ok(maxRel(f3.invFreq, hf3.invFreq) < 2e-7);
  assert.ok(Math.abs(f3.attentionFactor - 1.1902381) < 1e-7);

  const oss = await pe.readModel(gguf([
    ['general.architecture', 'gpt-oss'], ['gpt-oss.context_length', { u32: 4096 }], ['gpt-oss.attention.key_length', { u32: 64 }],
    ['gpt-oss.attention.head_count', { u32: 64 }], ['gpt-oss.rope.freq_base', { f32: 150000 }],
    ['gpt-oss.rope.scaling.type', 'yarn'], ['gpt-oss.rope.scaling.factor', { f32: 32 }], ['gpt-oss.attention.sliding_window', { u32: 128 }],
  ]).bytes);
  assert.equal(oss.rope.params.scaling.originalMaxPositionEmbeddings, 4096);  // context_length fallback
  assert.equal(oss.rope.params.scaling.truncate, true);
  assert.equal(oss.sliding.window, 128);

  const table = Float32Array.from({ length: 16 * 8 }, (_, i) => i / 100 - 0.5);
  const g2 = await pe.readModel(gguf([['general.architecture', 'gpt2'], ['gpt2.attention.head_count', { u32: 2 }]],
    [{ name: 'position_embd.weight', ne: [8, 16], data: table }]).bytes);
  assert.equal(g2.positionTable.maxLen, 16);
  assert.equal(g2.positionTable.dModel, 8);
  assert.deepEqual(g2.positionTable.weights, table);
  assert.equal(g2.rope, undefined);

});

test("readModel's rope is RoPE params as is: layout, DeepSeek's rope slice and M-RoPE sections reach applyRope and attention", async () => {
  const meta = (arch, extra = []) => [['general.architecture', arch], [`${arch}.context_length`, { u32: 4096 }],
    [`${arch}.embedding_length`, { u32: 256 }], [`${arch}.attention.head_count`, { u32: 4 }], ...extra];
  const ds = await pe.readModel(gguf(meta('deepseek2', [['deepseek2.attention.key_length', { u32: 192 }],
    ['deepseek2.rope.dimension_count', { u32: 64 }], ['deepseek2.attention.kv_lora_rank', { u32: 512 }]])).bytes);
  // The params object itself (ropeFrequencies and friends refused { params } before), .params an alias.
  assert.equal(ds.rope.params, ds.rope);
  assert.ok(!Object.keys(ds.rope).includes('params'));
  assert.equal(pe.ropeFrequencies(ds.rope).rotaryDim, 64);
  assert.equal(pe.ggmlRopeParams(ds.rope).nDims, 64);
  assert.deepEqual([ds.rope.headDim, ds.rope.rotaryDim, ds.rope.rotaryOffset, ds.rope.layout], [192, 64, 128, 'interleaved']);
  // The HF route of the same model says the same.
  const hf = pe.ropeParamsFromConfig(preset('deepseek-v3'));
  assert.deepEqual([hf.headDim, hf.rotaryDim, hf.rotaryOffset, hf.layout], [192, 64, 128, 'interleaved']);
  // applyRope on whole [nope 128 | rope 64] heads rotates the last 64 dims, interleaved, and passes the rest.
  const S = 5, H = 3;
  const x = Float32Array.from({ length: S * H * 192 }, (_, i) => Math.sin(i * 0.37));
  const positions = [0, 1, 17, 900, 4093];
  const y = pe.applyRope(x, { seqLen: S, nHeads: H, params: ds.rope, positions });
  const slice = Float32Array.from({ length: S * H * 64 }, (_, i) => x[Math.floor(i / 64) * 192 + 128 + (i % 64)]);
  const want = pe.applyRope(slice, { seqLen: S, nHeads: H, headDim: 64, params: { headDim: 64 }, positions, layout: 'interleaved' });
  for (let v = 0; v < S * H; v++) {
    for (let d = 0; d < 192; d++) {
      const got = y[v * 192 + d];
      if (d < 128) assert.equal(got, x[v * 192 + d]);
      else assert.equal(got, want[v * 64 + d - 128]);
    }
  }
  assert.deepEqual(pe.applyRope(x, { seqLen: S, nHeads: H, params: { ...hf, scaling: { type: 'none' } }, positions }), y);
  // The call's own layout / rotaryOffset win over the model's.
  const asHalf = pe.applyRope(x, { seqLen: S, nHeads: H, params: ds.rope, positions, layout: 'halfSplit', rotaryOffset: 0 });
  assert.deepEqual(asHalf, pe.applyRope(x, { seqLen: S, nHeads: H, params: { headDim: 192, rotaryDim: 64 }, positions }));
  assert.throws(() => pe.applyRope(x, { seqLen: S, nHeads: H, params: ds.rope, rotaryOffset: 130 }),
    error(RangeError, /rotaryOffset \+ rotaryDim must be <= headDim/));
  assert.throws(() => pe.ropeFrequencies({ headDim: 192, rotaryDim: 64, rotaryOffset: 129 }),
    error(RangeError, /params\.rotaryOffset \+ params\.rotaryDim must be <= params\.headDim/));
  // precision 'ggml' on the slice, attention with the model's RoPE = attention on pre-rotated q and k,
  // and the K-shift of the slice.
  const g = pe.applyRope(x, { seqLen: S, nHeads: H, params: ds.rope, positions, precision: 'ggml' });
  for (let v = 0; v < S * H; v++) for (let d = 0; d < 128; d++) assert.equal(g[v * 192 + d], x[v * 192 + d]);
  assert.ok(Math.max(...g.map((a, i) => Math.abs(a - y[i]))) < 2e-3);  // ggml's float32 angle: ~5e-4 rad off at 4093
  const k = Float32Array.from({ length: S * H * 192 }, (_, i) => Math.cos(i * 0.11));
  const v = Float32Array.from({ length: S * H * 192 }, (_, i) => Math.sin(i * 0.05));
  const fused = pe.attention(x, k, v, { nHeads: H, headDim: 192, causal: true, rope: ds.rope });
  const rq = pe.applyRope(x, { seqLen: S, nHeads: H, params: ds.rope, offset: 0 });
  const rk = pe.applyRope(k, { seqLen: S, nHeads: H, params: ds.rope, offset: 0 });
  const unfused = pe.attention(rq, rk, v, { nHeads: H, headDim: 192, causal: true });
  assert.ok(Math.max(...fused.map((a, i) => Math.abs(a - unfused[i]))) < 1e-6);
  const shifted = rk.slice();
  pe.shiftKeys(shifted, { seqLen: S, nHeads: H, params: ds.rope, delta: 7 });
  const at7 = pe.applyRope(k, { seqLen: S, nHeads: H, params: ds.rope, offset: 7 });
  assert.ok(Math.max(...shifted.map((a, i) => Math.abs(a - at7[i]))) < 1e-5);


  // The rope slice alone, q_pe / k_pe [S][H][64], as HF (apply_rotary_pos_emb_interleave on q_pe) and
  // llama.cpp (ggml_rope_ext on the q_pe / k_pe views) rope it: the model's own params take it, and
  // it turns as the whole head's last 64 dims do, bit for bit, and as a float64 twin does.
  const pe64 = y.filter((_, i) => i % 192 >= 128);
  assert.deepEqual(pe.applyRope(slice, { seqLen: S, nHeads: H, params: ds.rope, positions }), pe64);
  assert.deepEqual(pe.applyRope(slice, { seqLen: S, nHeads: H, headDim: 64, params: ds.rope, positions }), pe64);
  const accurate = pe.applyRope(slice, { seqLen: S, nHeads: H, params: ds.rope, positions, precision: 'accurate' });
  const inv = pe.ropeFrequencies(ds.rope, { dtype: 'float64' }).invFreq;
  for (let t = 0; t < S; t++) {
    for (let i = 0; i < S * H * 64 / S; i += 2) {  // interleaved pairs (2k, 2k + 1) of each head
      const at = t * H * 64 + i, a = positions[t] * inv[(i % 64) / 2];
      const [x0, x1] = [slice[at], slice[at + 1]];
      assert.ok(Math.abs(accurate[at] - (x0 * Math.cos(a) - x1 * Math.sin(a))) < 1e-6);
      assert.ok(Math.abs(accurate[at + 1] - (x1 * Math.cos(a) + x0 * Math.sin(a))) < 1e-6);
    }
  }
  const k64 = rk.filter((_, i) => i % 192 >= 128);
  const kSlice = k.filter((_, i) => i % 192 >= 128);
  assert.deepEqual(pe.applyRope(kSlice, { seqLen: S, nHeads: H, params: ds.rope, offset: 0 }), k64);
  const shifted64 = k64.slice();
  pe.shiftKeys(shifted64, { seqLen: S, nHeads: H, params: ds.rope, delta: 7 });
  assert.deepEqual(shifted64, shifted.filter((_, i) => i % 192 >= 128));
  const fused64 = pe.attention(slice, kSlice, kSlice, { nHeads: H, headDim: 64, causal: true, rope: ds.rope });
  assert.deepEqual(fused64, pe.attention(pe.applyRope(slice, { seqLen: S, nHeads: H, params: ds.rope }), k64, kSlice, { nHeads: H, headDim: 64, causal: true }));
  const cache = pe.kvCache({ nKvHeads: H, headDim: 64, capacity: S, rope: ds.rope });
  cache.append(kSlice, kSlice);
  assert.deepEqual(cache.read().k, k64);
  cache.delete();
  // A width that is neither, or the slice with the offset asked for explicitly, says how.
  assert.throws(() => pe.applyRope(new Float32Array(S * H * 100), { seqLen: S, nHeads: H, params: ds.rope }),
    error(RangeError, /x.length must equal seqLen \* nHeads \* headDim = 2880, or 960 for the rotated slice alone \(rotaryDim = 64 wide\) \(got 1500\)/));
  assert.throws(() => pe.applyRope(slice, { seqLen: S, nHeads: H, params: ds.rope, rotaryOffset: 128 }),
    error(RangeError, /rotaryOffset \+ rotaryDim must be <= headDim \(got rotaryOffset = 128, rotaryDim = 64, headDim = 64\); rotaryDim from params$/));
  assert.throws(() => pe.kvCache({ nKvHeads: H, headDim: 96, capacity: S, rope: ds.rope }),
    error(RangeError, /kvCache \(rope\): rotaryOffset \+ rotaryDim must be <= headDim \(got rotaryOffset = 128, rotaryDim = 64, headDim = 96\); rotaryDim from params; pass whole heads of 192 dims, or the rotated slice alone, 64 wide/));

  // llama.cpp's pair layout per architecture (llama_model_rope_type): NORM → interleaved, NEOX → halfSplit.
  assert.equal((await pe.readModel(gguf(meta('llama')).bytes)).rope.layout, 'interleaved');
  assert.equal((await pe.readModel(gguf(meta('qwen2')).bytes)).rope.layout, 'halfSplit');
  // M-RoPE sections (pairs [t, h, w, e]); qwen3vl interleaves them.
  for (const arch of ['qwen2vl', 'qwen3vl']) {
    const m = await pe.readModel(gguf(meta(arch, [[`${arch}.rope.dimension_count`, { u32: 64 }],
      [`${arch}.rope.dimension_sections`, { i32s: [8, 12, 12, 0] }]])).bytes);
    assert.deepEqual(m.rope.mrope, { section: [8, 12, 12], interleaved: arch === 'qwen3vl', rest: 'unrotated' });
    const ids = pe.mropePositions([{ text: 2 }, { image: [1, 2, 2] }]);
    const ones = new Float32Array(6 * 64).fill(1);
    // The pairs llama.cpp leaves to its 4th id (0): IMROPE's pattern claims t only at k % 3 == 0, k < 24.
    const rest = arch === 'qwen3vl' ? [24, 27, 30] : [];
    for (const precision of ['fast', 'ggml']) {
      assert.equal(pe.applyRope(ones, { seqLen: 6, nHeads: 1, params: m.rope, positions: ids, precision }).length, 6 * 64);
      // Text only (three equal rows) is plain RoPE but for those pairs, with ggml's angle too.
      const text = Float64Array.from({ length: 18 }, (_, i) => 3 * (i % 6) + 1);
      const { mrope, ...plain } = m.rope;
      const got = pe.applyRope(ones, { seqLen: 6, nHeads: 1, params: m.rope, positions: text, precision });
      const want = pe.applyRope(ones, { seqLen: 6, nHeads: 1, params: plain, positions: text.subarray(0, 6), precision });
      for (let t = 0; t < 6; t++) for (const k of rest) want[t * 64 + k] = want[t * 64 + k + 32] = 1;  // half-split pair k: k, k + 32
      assert.deepEqual(got, want, `${arch} ${precision} ${mrope.section}`);
    }
    // The HF rule (rest 'temporal') turns those pairs by the temporal id.
    const hfRule = { ...m.rope, mrope: { ...m.rope.mrope, rest: 'temporal' } };
    assert.equal(pe.applyRope(ones, { seqLen: 6, nHeads: 1, params: hfRule, positions: ids }).length, 6 * 64);
  }
  // YaRN β: qwen2 runs with 32 / 1 whatever the file says (warned, as llama.cpp ignores them).
  const q = await pe.readModel(gguf(meta('qwen2', [['qwen2.rope.scaling.type', 'yarn'], ['qwen2.rope.scaling.factor', { f32: 4 }],
    ['qwen2.rope.scaling.yarn_beta_fast', { f32: 16 }], ['qwen2.rope.scaling.yarn_beta_slow', { f32: 2 }]])).bytes);
  assert.deepEqual([q.rope.scaling.betaFast, q.rope.scaling.betaSlow], [32, 1]);
  assert.equal(q.warnings.filter((w) => /yarn_beta_(fast|slow) = \d+ is ignored/.test(w)).length, 2);
});

test('readModel refuses GGUF tensor offsets that llama.cpp refuses, naming the offset', async () => {
  const kv = [['general.architecture', 'llama'], ['llama.embedding_length', { u32: 64 }], ['llama.attention.head_count', { u32: 2 }]];
  const tensors = [{ name: 'token_embd.weight', ne: [64, 10], data: new Float32Array(640) },
    { name: 'rope_freqs.weight', ne: [16], data: new Float32Array(16).fill(2) }];
  const good = gguf(kv, tensors).bytes;
  assert.deepEqual((await pe.readModel(good)).rope.freqFactors, new Array(16).fill(2));
  // One table entry's data offset rewritten in place.
  const patched = (tensorIndex, offset) => {
    const b = good.slice();
    const view = new DataView(b.buffer);
    // Walk the header to the offset field, the last u64 of each tensor entry (name, n_dims, ne, type, offset).
    let p = 24;
    for (const [k, v] of kv) { p += 8 + new TextEncoder().encode(k).length + 4; p += typeof v === 'string' ? 8 + v.length : 4; }
    for (let t = 0; t < tensors.length; t++) {
      p += 8 + tensors[t].name.length + 4 + 8 * tensors[t].ne.length + 4;
      if (t === tensorIndex) view.setBigUint64(p, BigInt(offset), true);
      p += 8;
    }
    return b;
  };
  await assert.rejects(pe.readModel(patched(1, 0)), error(RangeError, /tensor rope_freqs.weight has data offset 0, expected 2560/));
  await assert.rejects(pe.readModel(patched(0, 7)), error(RangeError, /tensor token_embd.weight has data offset 7, expected 0/));
});

test('readModel: safetensors wpe.weight, .npy tables and config.json text or objects', async () => {
  const table = Float32Array.from({ length: 12 }, (_, i) => i - 6);
  const st = safetensors({ 'h.0.mlp.c_fc.weight': { shape: [2, 3], data: new Float32Array(6) },
    'transformer.wpe.weight': { shape: [4, 3], data: table } });
  const m = await pe.readModel(new Blob([st]));
  assert.equal(m.format, 'safetensors');
  assert.deepEqual(m.positionTable, { name: 'transformer.wpe.weight', maxLen: 4, dModel: 3, weights: table });
  const named = await pe.readModel(st.buffer, { tableName: 'h.0.mlp.c_fc.weight' });
  assert.equal(named.positionTable.maxLen, 2);
  await assert.rejects(pe.readModel(st, { tableName: 'nope' }), error(RangeError, /no tensor named nope/));

  const n = await pe.readModel(npy(table, 4, 3));
  assert.equal(n.format, 'npy');
  assert.deepEqual(n.positionTable.weights, table);

  const gpt2 = await pe.readModel(preset('gpt2'));
  assert.deepEqual(gpt2.positionTable, { name: '', maxLen: 1024, dModel: 768, weights: null });
  assert.equal(gpt2.dModel, 768);  // n_embd
  const gemma = await pe.readModel(preset('gemma-3-4b'));
  assert.equal(gemma.rope.params.theta, 1000000);
  assert.equal(gemma.sliding.params.theta, 10000);
  await assert.rejects(pe.readModel('{"hidden_size": 64}'), error(RangeError, /found none of: model_type, rope_theta/));
});

test('readModel: malformed files and bad arguments give clear errors; the heap stays flat', async () => {
  const { bytes } = llama31();
  const before = pe.heapStats().inUseBytes;
  for (const n of [3, 10, 30, 100, bytes.length - 1]) {
    await assert.rejects(pe.readModel(bytes.subarray(0, n)), error(RangeError, /readModel: .*(at byte|GGUF|ends)/), `${n} bytes`);
  }
  const badVersion = bytes.slice();
  badVersion[4] = 7;
  await assert.rejects(pe.readModel(badVersion), error(RangeError, /at byte 4: expected version 2 or 3, got 7/));
  await assert.rejects(pe.readModel(new Uint8Array(0)), error(RangeError, /empty/));
  await assert.rejects(pe.readModel(42), error(TypeError, /source must be a File\/Blob/));
  await assert.rejects(pe.readModel(bytes, { tablename: 'x' }), error(TypeError, /unknown option "tablename"/));
  for (let i = 0; i < 50; i++) await pe.readModel(bytes);
  assert.equal(pe.heapStats().inUseBytes, before);
});

// ggml's RoPE cache in float32 (Math.fround after every operation), from ggml-cpu's rope_yarn.
function ggmlTwin(g, pos) {
  const f = Math.fround;
  const thetaScale = f(f(g.freqBase) ** f(-2 / g.nDims));
  let theta = f(pos);
  const c = [], s = [];
  for (let k = 0; k < g.nDims / 2; k++) {
    const extrap = g.freqFactors ? f(theta / g.freqFactors[k]) : theta;
    const interp = f(g.freqScale * extrap);
    let a = interp, gain = g.attnFactor;
    if (g.extFactor !== 0) {
      const y = f(f(k - g.corrDims[0]) / Math.max(0.001, f(g.corrDims[1] - g.corrDims[0])));
      const mix = f(f(1 - Math.min(1, Math.max(0, y))) * g.extFactor);
      a = f(f(interp * f(1 - mix)) + f(extrap * mix));
      gain = f(gain * f(1 + f(0.1 * f(Math.log(f(1 / g.freqScale))))));
    }
    c.push(f(f(Math.cos(a)) * gain));
    s.push(f(f(Math.sin(a)) * gain));
    theta = f(theta * thetaScale);
  }
  return { c, s };
}

test("precision 'ggml': llama.cpp's parameters and angle, for YaRN, llama3 and LongRoPE", () => {
  for (const id of ['qwen2.5-7b-yarn', 'llama-3.1-8b', 'phi-3.5-mini', 'deepseek-v3']) {
    const params = pe.ropeParamsFromConfig(preset(id));
    const g = pe.ggmlRopeParams(params, { seqLen: 8192 });
    const positions = [0, 3, 4095, 131071];
    const cache = pe.ropeCache({ positions, params, precision: 'ggml' });
    const half = g.nDims / 2;
    let worst = 0;
    positions.forEach((p, t) => {
      const want = ggmlTwin(g, p);
      for (let k = 0; k < half; k++) {
        worst = Math.max(worst, Math.abs(cache.cos[t * half + k] - want.c[k]), Math.abs(cache.sin[t * half + k] - want.s[k]));
      }
    });
    assert.ok(worst < 5e-7, `${id}: ${worst}`);
  }
  const yarn = pe.ggmlRopeParams(pe.ropeParamsFromConfig(preset('qwen2.5-7b-yarn')));
  assert.deepEqual({ ...yarn, corrDims: undefined }, { nDims: 128, freqBase: 1000000, freqScale: 0.25, extFactor: 1, attnFactor: 1,
    corrDims: undefined, freqFactors: null });
  const x = new Float32Array(2 * 4 * 128).fill(0.5);
  const y = pe.applyRope(x, { seqLen: 2, nHeads: 4, headDim: 128, params: pe.ropeParamsFromConfig(preset('llama-3.1-8b')),
    precision: 'ggml', offset: 1000 });
  assert.equal(y.length, x.length);
  assert.throws(() => pe.applyRope(x, { seqLen: 2, nHeads: 4, headDim: 128, invFreq: new Float32Array(64), precision: 'ggml' }),
    error(TypeError, /precision 'ggml' needs options.params/));
  assert.throws(() => pe.ggmlRopeParams({ headDim: 64, scaling: { type: 'proportional' } }),
    error(RangeError, /precision ggml has no form of proportional/));
});

