// Errors as a caller meets them: the exported classes and isPosencError; file-system failures
// wrapped with err.code 'kUnavailable' (the system's error as err.cause); an unknown option key
// named before any other check; bigints where positions are taken; a cut file called truncated,
// with its byte counts; each rule stated once, by the core, whose message the JS error carries.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PosencRangeError, PosencTypeError, isPosencError } from 'posenc';
import { gguf, safetensors } from './model_writer.mjs';
import { error, pe, randomFloats } from './helpers.mjs';
import createPosencModule from '../../dist/posenc.mjs';
import { wrap } from '../../dist/api.js';

test('the error classes are exported: instanceof and isPosencError tell posenc errors from others', () => {
  const caught = (call) => { try { call(); } catch (e) { return e; } assert.fail('no error'); };
  const range = caught(() => pe.sinusoidal(0, 8)), type = caught(() => pe.sinusoidal('8', 8));
  assert.ok(range instanceof PosencRangeError && range instanceof RangeError && range.code === 'kBadArgument');
  assert.ok(type instanceof PosencTypeError && type instanceof TypeError);
  assert.ok(isPosencError(range) && isPosencError(type));
  assert.ok(!isPosencError(new RangeError('x')) && !isPosencError(undefined) && !isPosencError({ code: 'kBadArgument' }));
  assert.equal(new PosencRangeError('m', 'kTooLarge').code, 'kTooLarge');
});

test("readModel: a missing file or a folder is a PosencRangeError 'kUnavailable' naming the path, the system's error as cause", async () => {
  const dir = await mkdtemp(join(tmpdir(), 'posenc-errors-'));
  try {
    for (const [path, sys] of [[join(dir, 'missing.gguf'), 'ENOENT'], [dir, 'EISDIR']]) {
      await assert.rejects(pe.readModel(path), (e) => {
        assert.ok(e instanceof PosencRangeError, `${sys}: ${e?.constructor?.name}: ${e?.message}`);
        assert.equal(e.code, 'kUnavailable');
        assert.equal(e.cause?.code, sys);
        assert.ok(e.message.startsWith('readModel: ') && e.message.includes(path), e.message);
        return true;
      });
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('an unknown option key is named before anything else is checked, nested keys included', async () => {
  const bad = new Float32Array(3);  // wrong length or shape for every call below
  const params = { headDim: 8 };
  const unknown = (key) => new RegExp(`unknown (option|attribute|key in [\\w.]+) "${key}"`);
  const calls = [
    [() => pe.sinusoidal(0, 8, { bogus: 1 }), 'bogus'],
    [() => pe.sinusoidalShift(NaN, 8, { bogus: 1 }), 'bogus'],
    [() => pe.learnedTable(0, 8, { bogus: 1 }), 'bogus'],
    [() => pe.embed([], { bogus: 1 }), 'bogus'],
    [() => pe.alibiSlopes(0, { bogus: 1 }), 'bogus'],
    [() => pe.alibiBias(0, 1, 1, { bogus: 1 }), 'bogus'],
    [() => pe.t5Bucket(0.5, { bogus: 1 }), 'bogus'],
    [() => pe.t5Bias(bad, 0, 1, 1, { bogus: 1 }), 'bogus'],
    [() => pe.ropeFrequencies({ head_dim: 8 }, { seqLen: -1 }), 'head_dim'],
    [() => pe.ropeFrequencies(params, { bogus: 1 }), 'bogus'],
    [() => pe.ggmlRopeParams({ headDim: 8, scaling: { kind: 'yarn' } }), 'kind'],
    [() => pe.applyRope(bad, { seqLen: 1, nHeads: 1, params: { head_dim: 8 } }), 'head_dim'],
    [() => pe.applyRope(bad, { seqLen: 1, nHeads: 1, params, xpos: { scale: 1 } }), 'scale'],
    [() => pe.applyRope(bad, { seqLen: 1, nHeads: 1, params: { headDim: 8, mrope: { sections: [] } } }), 'sections'],
    [() => pe.applyRope2d(bad, { bogus: 1 }), 'bogus'],
    [() => pe.shiftKeys(bad, { seqLen: 1, nHeads: 1, delta: 1, params: { head_dim: 8 } }), 'head_dim'],
    [() => pe.ropeCache({ seqLen: 0, params: { head_dim: 8 } }), 'head_dim'],
    [() => pe.ropeParamsFromConfig(5, { bogus: 1 }), 'bogus'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, bogus: 1 }), 'bogus'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, rope: { params: { head_dim: 8 } } }), 'head_dim'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, rope: { theta: 1, head_dim: 8, headDim: 8 } }), 'head_dim'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, alibi: { max_bias: 8 } }), 'max_bias'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, t5: { tabel: bad } }), 'tabel'],
    [() => pe.attention(bad, bad, bad, { nHeads: 2, headDim: 8, temperature: { floor: 1 } }), 'floor'],
    [() => pe.iropeScale('x', { bogus: 1 }), 'bogus'],
    [() => pe.kvCache({ nKvHeads: 0, headDim: 8, capacity: 4, bogus: 1 }), 'bogus'],
    [() => pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 0, rope: { params: { head_dim: 8 } } }), 'head_dim'],
    [() => pe.onnx.attention({ Q: bad }, { is_causal: 1, causal: 1 }), 'causal'],
    [() => pe.onnx.attention({ Q: bad, K: bad, V: bad }, {}, { bogus: 1 }), 'bogus'],
    [() => pe.onnx.rotaryEmbedding({ X: bad, cos_cache: bad, sin_cache: bad }, { heads: 1 }), 'heads'],
  ];
  for (const [call, key] of calls) {
    assert.throws(call, (e) => {
      assert.ok(e instanceof PosencTypeError, `${call}: ${e?.message}`);
      assert.match(e.message, unknown(key), `${call}`);
      return true;
    });
  }
  const cache = pe.kvCache({ nKvHeads: 1, headDim: 8, capacity: 4 });
  try {
    for (const [call, key] of [[() => cache.append(bad, bad, { position: [0] }), 'position'], [() => cache.attend(bad, { nHeads: 3, bogus: 1 }), 'bogus'],
      [() => cache.attend(bad, { nHeads: 1, alibi: { max_bias: 8 } }), 'max_bias'], [() => cache.shift(0.5, { kept: 1 }), 'kept']]) {
      assert.throws(call, (e) => e instanceof PosencTypeError && unknown(key).test(e.message), `${call}`);
    }
  } finally {
    cache.delete();
  }
  await assert.rejects(pe.readModel(5, { table: 'x' }), (e) => e instanceof PosencTypeError && unknown('table').test(e.message));
  const { init } = await import('posenc');
  await assert.rejects(init({ thread: 2 }), (e) => e instanceof PosencTypeError && unknown('thread').test(e.message));
});

test('a bigint is taken wherever a position or an offset is (as BigInt64Array positions are), within ±(2^53 − 1)', () => {
  const x = randomFloats(3 * 2 * 8, 5);
  const o = { seqLen: 3, nHeads: 2, params: { headDim: 8 } };
  assert.deepEqual(pe.applyRope(x, { ...o, offset: 100n }), pe.applyRope(x, { ...o, offset: 100 }));
  assert.deepEqual(pe.ropeCache({ params: o.params, seqLen: 2, offset: 7n }), pe.ropeCache({ params: o.params, seqLen: 2, offset: 7 }));
  const [a, b] = [x.slice(), x.slice()];
  pe.shiftKeys(a, { ...o, delta: -3n });
  pe.shiftKeys(b, { ...o, delta: -3 });
  assert.deepEqual(a, b);
  assert.deepEqual(pe.alibiBias(2, 2, 4, { queryOffset: 1n }), pe.alibiBias(2, 2, 4, { queryOffset: 1 }));
  assert.deepEqual(pe.t5Bias(new Float32Array(64), 2, 2, 4, { queryOffset: 1n }), pe.t5Bias(new Float32Array(64), 2, 2, 4, { queryOffset: 1 }));
  assert.equal(pe.t5Bucket(-5n), pe.t5Bucket(-5));
  assert.equal(pe.iropeScale(8191n), pe.iropeScale(8191));
  assert.deepEqual(pe.sinusoidalShift(3n, 8), pe.sinusoidalShift(3, 8));
  assert.equal(pe.learnedTable(4, 2, { offset: 2n }).offset, 2);
  const cache = pe.kvCache({ nKvHeads: 2, headDim: 8, capacity: 4 });
  try {
    cache.append(x, x, { positions: BigInt64Array.of(0n, 1n, 2n) });
    cache.shift(-1n, { keep: 1n });
    assert.deepEqual([...cache.read().positions], [0, 1]);
  } finally {
    cache.delete();
  }
  assert.throws(() => pe.applyRope(x, { ...o, offset: 2n ** 60n }), (e) => e instanceof PosencRangeError && /offset must be within ±\(2\^53 - 1\) \(got 1152921504606846976n\)/.test(e.message));
});

test('a cut file is called truncated, with the byte counts: safetensors in its header and in its data, GGUF', async () => {
  const st = safetensors({ 'wpe.weight': { shape: [4, 2], data: randomFloats(8, 3) } });
  const headerLength = Number(new DataView(st.buffer).getBigUint64(0, true));
  const cases = [
    [st.slice(0, 20), new RegExp(`safetensors: the file is truncated: its header length \\(byte 0\\) says ${headerLength} bytes of JSON from byte 8, but the file ends 12 bytes later, at byte 20`)],
    [st.slice(0, st.length - 4), new RegExp(`safetensors: the file is truncated: tensor wpe.weight's data_offsets \\[0, 32\\] need ${st.length} bytes, the file has ${st.length - 4}`)],
  ];
  const g = gguf([['general.architecture', 'llama'], ['llama.context_length', { u32: 4096 }]]).bytes;
  // Cut inside the second key's length (the first key, general.architecture, ends at byte 56).
  cases.push([g.slice(0, 60), /gguf: at byte 56: the file is truncated: expected a string length \(8 bytes\), but it ends 4 bytes later, at byte 60/]);
  for (const [bytes, pattern] of cases) {
    await assert.rejects(pe.readModel(bytes), (e) => {
      assert.ok(e instanceof PosencRangeError, e?.message);
      assert.match(e.message, pattern);
      return true;
    });
  }
  // A file on disk shorter than its header says reads the same way (positional reads, the size at open).
  const dir = await mkdtemp(join(tmpdir(), 'posenc-errors-'));
  try {
    await writeFile(join(dir, 'cut.safetensors'), st.slice(0, 20));
    await assert.rejects(pe.readModel(join(dir, 'cut.safetensors')), /the file is truncated/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

// A rule the core states is not restated in JS: the JS layer asks the core's check before it
// allocates, and its error is that check's message in the JS names, plus what the call gave. So
// a core whose rules differ (here the real module with some checks made stricter, as an edit of
// the C++ limit would) changes the JS errors with no JS edit — and a JS copy of a rule would show
// here as a call the stricter core refuses but the package lets through.
test('each rule is stated once, by the core: a stricter C++ check changes the JS error with no JS edit', async () => {
  const core = await createPosencModule({ wasmBinary: await readFile(new URL('../../dist/posenc.wasm', import.meta.url)) });
  assert.equal(core.alibiCheck(0), 'max_bias must be finite and > 0');  // the core's own words
  const stricter = {
    alibiCheck: (maxBias) => (maxBias > 4 ? 'max_bias must be <= 4' : core.alibiCheck(maxBias)),
    t5Check: (bidirectional, numBuckets, maxDistance) => (numBuckets > 16 ? 'num_buckets must be <= 16'
      : core.t5Check(bidirectional, numBuckets, maxDistance)),
    shiftKeysCheck: (delta, precision) => (Math.abs(delta) > 100 ? 'delta must be within ±100' : core.shiftKeysCheck(delta, precision)),
    rope2dCheck: (headDim, theta) => (theta > 1e5 ? 'theta must be <= 1e5' : core.rope2dCheck(headDim, theta)),
    kvCacheCreateCheck: (o) => (o.capacity > 64 ? 'capacity must be <= 64' : core.kvCacheCreateCheck(o)),
    applyRopeCheck: (...a) => (a[4] > 4 ? 'rot_dim must be <= 4' : core.applyRopeCheck(...a)),
    labDatasetCheck: (task, vocabSize, ...rest) => (vocabSize > 16 ? 'vocab_size must be <= 16' : core.labDatasetCheck(task, vocabSize, ...rest)),
    sinusoidalCheck: (base, layout) => (base > 1e5 ? 'base must be <= 1e5' : core.sinusoidalCheck(base, layout)),
    sinusoidalShiftCheck: (k, dModel, base, layout) => (Math.abs(k) > 100 ? 'k must be within ±100'
      : dModel > 8 ? 'd_model must be <= 8' : core.sinusoidalShiftCheck(k, dModel, base, layout)),
    learnedInitCheck: (std) => (std > 0.1 ? 'std must be <= 0.1' : core.learnedInitCheck(std)),
    learnedLookupCheck: (pos, offset, maxLen) => (pos > 2 ? 'pos must be <= 2' : core.learnedLookupCheck(pos, offset, maxLen)),
    embedCheck: (scale) => (scale > 4 ? 'scale must be <= 4' : core.embedCheck(scale)),
    embedTokenCheck: (token, ...rest) => (token > 2 ? 'tokens must be <= 2' : core.embedTokenCheck(token, ...rest)),
    iropeCheck: (floorScale, attnScale) => (floorScale > 4096 ? 'floor_scale must be <= 4096' : core.iropeCheck(floorScale, attnScale)),
    onnxAttentionAttrsCheck: (a) => (a.scale !== null && a.scale > 1 ? 'scale must be <= 1'
      : a.softcap > 30 ? 'softcap must be <= 30' : a.is_causal === 1 ? 'is_causal must be 0'
        : a.qk_matmul_output_mode === 3 ? 'qk_matmul_output_mode must be 0, 1 or 2' : core.onnxAttentionAttrsCheck(a)),
    labLrCheck: (lr) => (lr > 0.1 ? 'lr must be <= 0.1' : core.labLrCheck(lr)),
    labRunCheck: (task, c) => (c.trainLength > 16 ? 'train_len must be <= 16' : core.labRunCheck(task, c)),
    labExtendCheck: (task, c) => (c.factor > 2 ? 'factor must be <= 2' : core.labExtendCheck(task, c)),
    labRandomPositionsCheck: (batch, len, max) => (max > 100 ? 'max_position must be <= 100'
      : batch * len > 64 ? 'batch * seq_len must be <= 64' : core.labRandomPositionsCheck(batch, len, max)),
    labShapeCheck: (batch, len) => (len > 32 ? 'seq_len must be <= 32' : batch * len > 64 ? 'batch * seq_len must be <= 64'
      : core.labShapeCheck(batch, len)),
    // The tokens' and positions' rules are the calls' own statuses: a stricter call.
    labTrainStep: (m, tok, batch, len, lr, pos) => (core.HEAP32.subarray(tok >> 2, (tok >> 2) + batch * len).some((t) => t > 4)
      ? ['tokens must be <= 4', 0] : core.labTrainStep(m, tok, batch, len, lr, pos)),
    labLossAndGradients: (m, tok, batch, len, pos) => (pos && core.HEAP32.subarray(pos >> 2, (pos >> 2) + batch * len).some((q) => q > 50)
      ? ['positions must be <= 50', 0] : core.labLossAndGradients(m, tok, batch, len, pos)),
  };
  const changed = wrap(new Proxy(core, { get: (m, key) => stricter[key] ?? m[key] }));
  const x = randomFloats(2 * 1 * 8, 4), table = new Float32Array(32 * 2);
  const rope = { seqLen: 2, nHeads: 1, headDim: 8, invFreq: [1, 0.1, 0.01, 0.001] };
  const tokens = Int32Array.of(0, 1, 2, 3, 4, 5, 6, 7);
  const tinyRun = { schemes: ['alibi'], steps: 1, size: 'tiny', trainLength: 8, vocabSize: 8, batch: 1, evalBatch: 1 };
  const withModel = (p, body) => {
    const m = p.lab.createModel({ vocabSize: 8, dModel: 16, nLayers: 1, nHeads: 2, trainLength: 8, maxPositions: 64 });
    try {
      body(m);
    } finally {
      m.delete();
    }
  };
  const withData = (p, body) => {
    const d = p.lab.dataset({ vocabSize: 8 });
    try {
      return body(d);
    } finally {
      d.delete();
    }
  };
  const qkv = Object.fromEntries(['Q', 'K', 'V'].map((slot) => [slot, { data: x, dims: [1, 1, 2, 8] }]));
  const cases = [
    [(p) => p.alibiSlopes(2, { maxBias: 8 }), /^alibiSlopes: maxBias must be <= 4 \(got 8\)$/],
    [(p) => p.alibiBias(2, 2, 2), /^alibiBias: maxBias must be <= 4 \(got 8\)$/],
    [(p) => p.attention(x, x, x, { nHeads: 1, headDim: 8, alibi: true }), /^attention: alibi\.maxBias must be <= 4 \(got 8\)$/],
    [(p) => p.t5Bucket(3), /^t5Bucket: numBuckets must be <= 16 \(got 32\)$/],
    [(p) => p.t5Bias(table, 2, 2, 2), /^t5Bias: numBuckets must be <= 16 \(got 32\)$/],
    [(p) => p.attention(x, x, x, { nHeads: 1, headDim: 8, t5: { table: table.subarray(0, 32) } }), /^attention: t5\.numBuckets must be <= 16 \(got 32\)$/],
    [(p) => p.shiftKeys(x.slice(), { ...rope, delta: 1000 }), /^shiftKeys: delta must be within ±100 \(got 1000\)$/],
    [(p) => p.applyRope2d(x, { nHeads: 1, headDim: 8, grid: [1, 2], theta: 1e6 }), /^applyRope2d: theta must be <= 1e5 \(got 1000000\)$/],
    [(p) => p.kvCache({ nKvHeads: 1, headDim: 8, capacity: 128 }), /^kvCache: capacity must be <= 64 \(got 128\)$/],
    [(p) => p.applyRope(x, rope), /^applyRope: rotaryDim must be <= 4 \(got 8\); rotaryDim from 2 \* invFreq\.length = 2 \* 4$/],
    [(p) => p.lab.dataset({ vocabSize: 32 }), /^dataset: vocabSize must be <= 16 \(got 32\)$/],
    [(p) => p.sinusoidal(2, 4, { base: 1e6 }), /^sinusoidal: base must be <= 1e5 \(got 1000000\)$/],
    [(p) => p.sinusoidalShift(1000, 4, { base: 1e6 }), /^sinusoidalShift: k must be within ±100 \(got 1000\)$/],
    [(p) => p.sinusoidalShift(1, 16), /^sinusoidalShift: dModel must be <= 8 \(got 16\)$/],
    [(p) => p.learnedTable(4, 2, { std: 0.5 }), /^learnedTable: std must be <= 0\.1 \(got 0\.5\)$/],
    [(p) => p.learnedTable(4, 2).lookup([0, 3]), /^learnedTable\.lookup: positions\[1\] must be <= 2 \(got 3\)/],
    [(p) => p.embed([0, 3], { tokenEmbeddings: x, dModel: 4, positionTable: x }), /^embed: tokenIds\[1\] must be <= 2 \(got 3\)$/],
    [(p) => p.embed([0], { tokenEmbeddings: x, dModel: 4, positionTable: x, scale: 8 }), /^embed: scale must be <= 4 \(got 8\)$/],
    [(p) => p.iropeScale([0, 1]), /^iropeScale: floorScale must be <= 4096 \(got 8192\)$/],
    [(p) => p.onnx.attention(qkv, { scale: 2 }), /^onnx\.attention: attrs\.scale must be <= 1 \(got 2\)$/],
    [(p) => p.onnx.attention(qkv, { softcap: 50 }), /^onnx\.attention: attrs\.softcap must be <= 30 \(got 50\)$/],
    [(p) => p.onnx.attention(qkv, { is_causal: 1 }), /^onnx\.attention: attrs\.is_causal must be 0 \(got 1\)$/],
    [(p) => p.onnx.attention(qkv, { qk_matmul_output_mode: 3 }), /^onnx\.attention: attrs\.qk_matmul_output_mode must be 0, 1 or 2 \(got 3\)$/],
    [(p) => withModel(p, (m) => m.trainStep(tokens, { lr: 0.5 })), /^trainStep: lr must be <= 0\.1 \(got 0\.5\)$/],
    [(p) => withModel(p, (m) => m.trainStep(tokens)), /^trainStep: tokens must be <= 4$/],
    [(p) => withModel(p, (m) => m.lossAndGradients(tokens.map(() => 0), { positions: [0, 10, 20, 30, 40, 50, 60, 63] })),
      /^lossAndGradients: positions must be <= 50$/],
    [(p) => p.lab.run({ ...tinyRun, trainLength: 32 }), /^run: trainLength must be <= 16 \(got 32\)$/],
    [(p) => p.lab.extend({ ...tinyRun, schemes: ['rope'], factor: 3, checkpoints: [0] }), /^extend: factor must be <= 2 \(got 3\)$/],
    [(p) => p.lab.randomPositions(1, 4, 200, 0), /^randomPositions: maxPosition must be <= 100 \(got 200\)$/],
    [(p) => p.lab.randomPositions(16, 8, 64, 0), /^randomPositions: batch \* length must be <= 64 \(got batch = 16, length = 8\)$/],
    [(p) => withData(p, (d) => d.floor(64)), /^floor: length must be <= 32 \(got 64\)$/],
    [(p) => withData(p, (d) => d.sample(4, 32)), /^sample: batch \* length must be <= 64 \(got batch = 4, length = 32\)$/],
    [(p) => withModel(p, (m) => m.evaluate(new Int32Array(64), { length: 64 })), /^evaluate: length must be <= 32 \(got 64\)$/],
    [(p) => withModel(p, (m) => m.evaluate(new Int32Array(128))), /^evaluate: batch \* length must be <= 64 \(got batch = 16, length = 8\)$/],
    [(p) => withModel(p, (m) => m.lossAndGradients(new Int32Array(128))),
      /^lossAndGradients: batch \* length must be <= 64 \(got batch = 16, length = 8\)$/],
  ];
  for (const [call, pattern] of cases) {
    const made = call(pe);  // the real core takes it
    made?.delete?.();
    assert.throws(() => call(changed), error(RangeError, pattern));
  }
});

// The lab's rule of a call's rows is C++'s (lab::shape_check): each JS error at its limits is that
// check's message in the JS names (seq_len is a row's length), and the call's name before it.
test("the lab's rows: the JS errors carry shape_check's message, at the length and token limits", async () => {
  const core = await createPosencModule({ wasmBinary: await readFile(new URL('../../dist/posenc.wasm', import.meta.url)) });
  const d = pe.lab.dataset({ vocabSize: 8 });
  const m = pe.lab.createModel({ vocabSize: 8, dModel: 16, nLayers: 1, nHeads: 2, trainLength: 8 });
  try {
    const cases = [
      ['floor', () => d.floor(65537), 1, 65537],
      ['sample', () => d.sample(1, 65537), 1, 65537],
      ['sample', () => d.sample(2 ** 23 + 1, 2), 2 ** 23 + 1, 2],
      ['sample', () => d.sample(257, 65536), 257, 65536],
      ['sample', () => d.sample(0, 8), 0, 8],
      ['evaluate', () => m.evaluate(new Int32Array(8), { length: 65537 }), 1, 65537],
      ['trainStep', () => m.trainStep(new Int32Array(8), { length: 65537 }), 1, 65537],
      ['lossAndGradients', () => m.lossAndGradients(new Int32Array(8), { length: 1 }), 1, 1],
    ];
    // randomPositions' rows (the positions of a call's tokens) are counted by the same rule, in its words.
    assert.equal(core.labRandomPositionsCheck(2 ** 23 + 1, 2, 8), core.labShapeCheck(2 ** 23 + 1, 2));
    assert.equal(core.labRandomPositionsCheck(0, 2, 8), core.labShapeCheck(0, 2));
    cases.push(['randomPositions', () => pe.lab.randomPositions(2 ** 23 + 1, 2, 8, 0), 2 ** 23 + 1, 2],
      ['randomPositions', () => pe.lab.randomPositions(0, 2, 8, 0), 0, 2]);
    for (const [fn, call, batch, length] of cases) {
      const said = core.labShapeCheck(batch, length);
      assert.notEqual(said, '', `the core refuses batch ${batch} × length ${length}`);
      assert.throws(call, (e) => {
        assert.ok(e instanceof RangeError, e?.message);
        assert.ok(e.message.startsWith(`${fn}: ${said.replaceAll('seq_len', 'length')} (got `), `${e.message} vs ${said}`);
        return true;
      });
    }
  } finally {
    d.delete();
    m.delete();
  }
});
