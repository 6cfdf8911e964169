// The extrapolation lab through the package (pe.lab): models, gradients, evaluation, safetensors,
// datasets, run(), bad input and memory. The numerics are checked in depth by the doctest suite
// (tests/native/test_lab.cpp, also run as WASM); these tests check the JS layer over them.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { error, pe } from './helpers.mjs';

const small = { vocabSize: 8, dModel: 16, nLayers: 2, nHeads: 2, trainLength: 8, seed: 3 };

function withModel(options, body) {
  const m = pe.lab.createModel({ ...small, ...options });
  try {
    return body(m);
  } finally {
    m.delete();
  }
}

function withData(options, body) {
  const d = pe.lab.dataset(options);
  try {
    return body(d);
  } finally {
    d.delete();
  }
}

test('lab: tensors carry the model card names and [in][out] shapes', () => {
  for (const scheme of pe.lab.schemes) {
    withModel({ scheme }, (m) => {
      const names = m.tensors.map((t) => t.name);
      const own = scheme === 'fire' ? ['fire.w1', 'fire.b1', 'fire.w2', 'fire.c', 'fire.L'] : scheme === 'cope' ? ['cope.e'] : [];
      const block = (l) => ['ln1.weight', 'ln1.bias', 'wq', 'wk', 'wv', 'wo', 'ln2.weight', 'ln2.bias', 'w1', 'w2', ...own]
        .map((n) => `blocks.${l}.${n}`);
      const extra = scheme === 'learned' ? ['pos_emb'] : scheme === 't5' ? ['t5_bias']
        : scheme.startsWith('kerple') ? ['kerple_r1', 'kerple_r2'] : [];
      assert.deepEqual(names, ['tok_emb', ...extra, ...block(0), ...block(1), 'ln_f.weight', 'ln_f.bias']);
      const shape = Object.fromEntries(m.tensors.map((t) => [t.name, t.shape]));
      assert.deepEqual(shape.tok_emb, [8, 16]);
      assert.deepEqual(shape['blocks.0.w1'], [16, 64]);
      assert.deepEqual(shape['blocks.1.w2'], [64, 16]);
      assert.deepEqual(shape['ln_f.bias'], [16]);
      if (scheme === 'learned') assert.deepEqual(shape.pos_emb, [8, 16]);
      if (scheme === 't5') assert.deepEqual(shape.t5_bias, [32, 2]);
      if (scheme.startsWith('kerple')) assert.deepEqual([shape.kerple_r1, shape.kerple_r2], [[2], [2]]);
      if (scheme === 'fire') {
        assert.deepEqual(['fire.w1', 'fire.b1', 'fire.w2', 'fire.c', 'fire.L'].map((n) => shape[`blocks.1.${n}`]),
          [[32], [32], [32, 2], [1], [1]]);
      }
      if (scheme === 'cope') assert.deepEqual(shape['blocks.1.cope.e'], [9, 16]);  // [trainLength + 1][dModel]
    });
  }
});

test('lab: training is deterministic, starts near ln(vocabSize) and lowers the loss', () => {
  withData({ vocabSize: 8, seed: 2 }, (d) => {
    const losses = [0, 1].map(() => withModel({ scheme: 'rope' }, (m) => {
      const out = [];
      for (let step = 0; step < 40; step++) out.push(m.trainStep(d.sample(8, 8, step), { lr: 1e-2 }));
      assert.equal(m.steps, 40);
      return out;
    }));
    assert.deepEqual(losses[0], losses[1]);
    // N(0, 0.02²) weights give near-uniform logits: the first loss is close to ln 8.
    assert.ok(Math.abs(losses[0][0] - Math.log(8)) < 0.05, `${losses[0][0]}`);
    assert.ok(losses[0][39] < losses[0][0] - 0.1, `${losses[0][39]} vs ${losses[0][0]}`);
  });
});

test('lab: a small step against lossAndGradients lowers the loss (every scheme)', () => {
  withData({ vocabSize: 8, seed: 4 }, (d) => {
    const tokens = d.sample(4, 8, 1);
    for (const scheme of pe.lab.schemes) {
      withModel({ scheme }, (m) => {
        const { loss, gradients } = m.lossAndGradients(tokens);
        for (const t of m.tensors) {
          assert.equal(gradients[t.name].length, t.shape.reduce((a, b) => a * b, 1), t.name);
          assert.ok(gradients[t.name].every(Number.isFinite), t.name);
        }
        // Move every weight by -eta * grad through the safetensors round trip.
        const bytes = m.exportWeights();
        const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
        const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
        let sq = 0;
        for (const g of Object.values(gradients)) for (const v of g) sq += v * v;
        const eta = 1e-3 / Math.sqrt(sq);
        for (const [name, g] of Object.entries(gradients)) {
          const [a] = header[name].data_offsets;
          const w = new Float32Array(bytes.buffer.slice(8 + n + a, 8 + n + a + g.length * 4));
          for (let i = 0; i < g.length; i++) w[i] -= eta * g[i];
          bytes.set(new Uint8Array(w.buffer), 8 + n + a);
        }
        m.loadWeights(bytes);
        const after = m.lossAndGradients(tokens).loss;
        assert.ok(after < loss, `${scheme}: ${after} >= ${loss}`);
      });
    }
  });
});

test('lab: evaluate gives per-position losses; learned has no embedding beyond trainLength', () => {
  withData({ vocabSize: 8 }, (d) => {
    const tokens = d.sample(3, 32, 7);
    withModel({ scheme: 'rope' }, (m) => {
      const r = m.evaluate(tokens, { length: 32 });
      assert.equal(r.positionLoss.length, 31);
      const mean = r.positionLoss.reduce((a, b) => a + b, 0) / 31;
      assert.ok(Math.abs(mean - r.loss) < 1e-12);
      for (const ropeScaling of pe.lab.ropeScalings) {
        const s = m.evaluate(tokens, { length: 32, ropeScaling });
        if (ropeScaling === 'none') assert.equal(s.loss, r.loss);
        else assert.notEqual(s.loss, r.loss, ropeScaling);
      }
    });
    withModel({ scheme: 'learned' }, (m) => {
      assert.deepEqual(m.evaluate(tokens, { length: 32 }), { loss: null, noEmbedding: true, positionLoss: null });
      assert.equal(typeof m.evaluate(d.sample(2, 8, 1)).loss, 'number');
      assert.throws(() => m.trainStep(tokens, { length: 32 }), error(RangeError, /trainStep: length must be <= maxPositions for the learned scheme/));
      assert.throws(() => m.evaluate(tokens, { length: 32, ropeScaling: 'yarn' }), error(RangeError, /ropeScaling needs the rope or xpos scheme/));
    });
  });
});

test('lab: exportWeights is safetensors that loadWeights reads back exactly, and checks', () => {
  withData({ vocabSize: 8 }, (d) => {
    const tokens = d.sample(2, 8, 3);
    withModel({ scheme: 't5', seed: 1 }, (a) => {
      a.trainStep(tokens, { lr: 1e-2 });
      const bytes = a.exportWeights();
      const n = Number(new DataView(bytes.buffer).getBigUint64(0, true));
      assert.equal((8 + n) % 8, 0);
      const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
      let offset = 0;
      for (const t of a.tensors) {
        assert.deepEqual(header[t.name], { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + t.shape.reduce((x, y) => x * y, 1) * 4] });
        offset = header[t.name].data_offsets[1];
      }
      assert.equal(bytes.length, 8 + n + offset);
      assert.deepEqual(JSON.parse(header.__metadata__.config), a.config);
      withModel({ scheme: 't5', seed: 2 }, (b) => {
        assert.notEqual(b.lossAndGradients(tokens).loss, a.lossAndGradients(tokens).loss);
        b.loadWeights(bytes);
        assert.equal(b.lossAndGradients(tokens).loss, a.lossAndGradients(tokens).loss);
      });
      withModel({ scheme: 'rope' }, (c) => {
        assert.throws(() => c.loadWeights(bytes), error(RangeError, /loadWeights: unexpected tensor "t5_bias"/));
      });
      withModel({ scheme: 't5', dModel: 8 }, (c) => {
        assert.throws(() => c.loadWeights(bytes), error(RangeError, /loadWeights: tok_emb must have shape \[8,8\]/));
      });
      withModel({ scheme: 't5' }, (c) => {
        assert.throws(() => c.loadWeights(bytes.subarray(0, 100)), error(RangeError, /loadWeights: bytes is not a safetensors file/));
        assert.throws(() => c.loadWeights([1, 2]), error(TypeError, /loadWeights: bytes must be a Uint8Array/));
      });
    });
  });
});

test('lab: datasets — markov entropy below ln V, copy repeats, flipflop, text vocabulary, same seed same rows', () => {
  withData({ task: 'markov', seed: 5 }, (d) => {
    assert.equal(d.vocabSize, 32);
    assert.ok(d.entropyRate > 0 && d.entropyRate < Math.log(32));
    assert.ok(d.floor(64) > d.entropyRate);  // the first target sees one token only
    assert.deepEqual(d.sample(2, 16, 9), d.sample(2, 16, 9));
    assert.notDeepEqual(d.sample(2, 16, 9), d.sample(2, 16, 10));
  });
  withData({ task: 'markov', peak: 0 }, (d) => assert.ok(Math.abs(d.entropyRate - Math.log(32)) < 1e-12));
  withData({ task: 'copy', vocabSize: 10 }, (d) => {
    const x = d.sample(1, 12, 1);
    assert.deepEqual(x.subarray(0, 6), x.subarray(6));
    assert.equal(d.entropyRate, null);
    assert.ok(Math.abs(d.floor(12) - (5 * Math.log(10)) / 11) < 1e-12);
  });
  withData({ task: 'flipflop' }, (d) => {
    assert.equal(d.vocabSize, 5);
    const x = d.sample(1, 16, 2);
    assert.equal(x[0], 2);  // the first instruction writes
    assert.ok(Math.abs(d.floor(4) - (Math.LN2 + 1.5 * Math.LN2 + 0.75 * Math.LN2) / 3) < 1e-12);  // H(¼, ½, ¼) = 1.5 ln 2
  });
  withData({ task: 'text', text: 'hello world' }, (d) => {
    assert.equal(d.vocabSize, 8);  // ' ' d e h l o r w
    assert.equal(d.floor(4), null);
    assert.throws(() => d.sample(1, 20), error(RangeError, /sample: length must be <= the text's length/));
  });
});

test('lab: run() is reproduced from the card through the API — streamSeed batches, the same init', () => {
  // Training step s samples streamSeed(seed, s): at lr 0 the model never moves, so each step's loss
  // is the loss of that batch on a fresh model of the same seed.
  const r = pe.lab.run({ schemes: ['rope'], steps: 3, lr: 1e-9, size: 'tiny', trainLength: 8, vocabSize: 8, evalBatch: 1, batch: 2, seed: 5 });
  withData({ task: 'markov', seed: 5, vocabSize: 8 }, (d) => {
    const m = pe.lab.createModel({ vocabSize: 8, dModel: 32, nLayers: 2, nHeads: 2, trainLength: 8, scheme: 'rope', seed: 5 });
    try {
      const s0 = pe.lab.streamSeed(5, 0);
      assert.equal(typeof s0, 'bigint');
      assert.ok(s0 > BigInt(Number.MAX_SAFE_INTEGER));  // 64-bit: why sample takes a bigint
      assert.equal(m.lossAndGradients(d.sample(2, 8, s0)).loss, r.results[0].trainLoss[0]);
      const l1 = m.trainStep(d.sample(2, 8, pe.lab.streamSeed(5, 1)), { lr: 0 });
      assert.ok(Math.abs(l1 - r.results[0].trainLoss[1]) < 1e-6);  // step 0 moved the run's model by lr 1e-9
    } finally { m.delete(); }
    assert.throws(() => d.sample(1, 4, 2n ** 64n), error(RangeError, /sample: seed must be in \[0, 2\^64\)/));
    assert.throws(() => d.sample(1, 4, -1n), error(RangeError, /sample: seed must be in/));
  });
  assert.throws(() => pe.lab.streamSeed(1, -1), error(RangeError, /streamSeed: index/));
});

test('lab: randomized positions — run() reproduced from randomPositions; learned has a number at 8 T', () => {
  const opts = { schemes: ['learned'], steps: 3, lr: 1e-9, size: 'tiny', trainLength: 8, vocabSize: 8, evalBatch: 1, batch: 2, seed: 5 };
  const r = pe.lab.run({ ...opts, randomPositions: 64 });
  assert.equal(r.config.randomPositions, 64);
  for (const row of r.results[0].eval) assert.equal(row.noEmbedding, false, `length ${row.length}`);
  assert.equal(r.results[0].eval.at(-1).length, 64);
  assert.deepEqual(r.results[0].position.pos_emb.shape, [64, 32]);
  withData({ task: 'markov', seed: 5, vocabSize: 8 }, (d) => {
    const m = pe.lab.createModel({ vocabSize: 8, dModel: 32, nLayers: 2, nHeads: 2, trainLength: 8, maxPositions: 64, scheme: 'learned', seed: 5 });
    try {
      assert.equal(m.config.maxPositions, 64);
      const positions = pe.lab.randomPositions(2, 8, 64, pe.lab.streamSeed(5 + 2 ** 32, 0));
      for (let b = 0; b < 2; b++) for (let t = 1; t < 8; t++) assert.ok(positions[b * 8 + t] > positions[b * 8 + t - 1]);
      const tokens = d.sample(2, 8, pe.lab.streamSeed(5, 0));
      assert.equal(m.lossAndGradients(tokens, { positions }).loss, r.results[0].trainLoss[0]);
      assert.notEqual(m.lossAndGradients(tokens).loss, r.results[0].trainLoss[0]);  // the positions mattered
      const bad = Int32Array.from(positions);
      bad[3] = bad[2];
      // The positions' rules are C++'s (the call's status); JS checks their type and int32 range.
      assert.throws(() => m.trainStep(tokens, { positions: bad }), error(RangeError, /^trainStep: positions must increase strictly along each row$/));
      bad[3] = positions[3];
      bad[7] = 64;
      assert.throws(() => m.lossAndGradients(tokens, { positions: bad }), error(RangeError, /^lossAndGradients: positions must be < maxPositions \(trainLength if 0\)$/));
      assert.throws(() => m.lossAndGradients(tokens, { positions: [-1, ...positions.subarray(1)] }), error(RangeError, /^lossAndGradients: positions must be >= 0$/));
      assert.throws(() => m.lossAndGradients(tokens, { positions: [2 ** 31, ...positions.subarray(1)] }), error(RangeError, /positions\[0\] must be in \[-2147483648, 2147483647\]/));
      assert.throws(() => m.trainStep(tokens, { positions: positions.subarray(1) }), error(RangeError, /one entry per token \(16, got 15\)/));
      assert.throws(() => m.trainStep(tokens, { positions: 'abc' }), error(TypeError, /trainStep: positions must be an Int32Array/));
    } finally { m.delete(); }
  });
  // The run's rules are C++'s (run_check), asked before the dataset is made.
  assert.throws(() => pe.lab.run({ ...opts, randomPositions: 7 }), error(RangeError,
    /^run: randomPositions must be 0 or in \[trainLength, 65536\] \(got randomPositions = 7, trainLength = 8\)$/));
  assert.throws(() => pe.lab.createModel({ ...small, maxPositions: 4 }), error(RangeError, /createModel: maxPositions/));
  assert.throws(() => pe.lab.randomPositions(1, 9, 8, 0), error(RangeError,
    /^randomPositions: length must be in \[1, maxPosition\] and maxPosition <= 2\^31 \(got length = 9, maxPosition = 8\)$/));
  // Its rows are counted as a call's (C++'s random_positions_check, in shape_check's words).
  assert.throws(() => pe.lab.randomPositions(0, 4, 8, 0), error(RangeError, /^randomPositions: batch must be > 0 \(got 0\)$/));
  assert.throws(() => pe.lab.randomPositions(2 ** 23 + 1, 2, 8, 0), (e) => e instanceof RangeError && e.code === 'kTooLarge' &&
    e.message === 'randomPositions: batch * length must be <= 2^24 (got batch = 8388609, length = 2)');
  assert.throws(() => pe.lab.randomPositions(2, 0.5, 8, 0), error(RangeError, /^randomPositions: length must be an integer/));
});

test('lab: extend — the run() model fine-tuned per scaling; checkpoint 0 is the scaled evaluation of run()', () => {
  const opts = { steps: 3, size: 'tiny', trainLength: 8, vocabSize: 8, evalBatch: 2, batch: 8, seed: 2 };
  let calls = 0;
  const e = pe.lab.extend({ ...opts, checkpoints: [0, 2] }, (p) => { calls += 1; assert.equal(p.totalSteps, 3 + 4 * 2); });
  assert.equal(calls, 2 * (3 + 4 * 2));
  assert.deepEqual(e.results.map((r) => r.scheme), ['rope', 'xpos']);
  assert.deepEqual(Object.keys(e.floor), ['32', '64']);
  const r = pe.lab.run({ ...opts, schemes: ['rope'] }).results[0];
  const rope = e.results[0];
  assert.deepEqual(Array.from(rope.trainLoss), Array.from(r.trainLoss));
  assert.deepEqual(Object.keys(rope.tuneLoss), ['none', 'linear', 'ntk', 'yarn']);
  assert.equal(rope.tuneLoss.yarn.length, 2);
  assert.equal(rope.rows.length, 4 * 2 * 2);
  for (const scaling of ['none', 'linear', 'ntk', 'yarn']) {
    const at0 = rope.rows.find((x) => x.ropeScaling === scaling && x.steps === 0 && x.length === 32);
    assert.equal(at0.loss, r.eval.find((x) => x.length === 32 && x.ropeScaling === scaling).loss, scaling);
  }
  assert.throws(() => pe.lab.extend({ ...opts, schemes: ['alibi'] }), error(RangeError, /extend: schemes\[0\]/));
  // extend's rules are C++'s (extend_check), asked before the dataset is made.
  assert.throws(() => pe.lab.extend({ ...opts, checkpoints: [5, 5] }), error(RangeError, /^extend: checkpoints must be distinct, ascending and <= 100000 \(got \[5, 5\]\)$/));
  assert.throws(() => pe.lab.extend({ ...opts, checkpoints: [] }), error(RangeError, /^extend: checkpoints must not be empty \(got \[\]\)$/));
  assert.throws(() => pe.lab.extend({ ...opts, factor: 1 }), error(RangeError, /^extend: factor must be in \[2, 64\] \(got 1\)$/));
  assert.throws(() => pe.lab.extend({ ...opts, factor: 64, trainLength: 1024 }), error(RangeError,
    /^extend: factor · trainLength must be <= 32768 \(evaluated at twice that\) \(got factor = 64, trainLength = 1024\)$/));
});

test('lab: run with seeds — one run per scheme and seed, seed S the same as a single run', () => {
  const small = { schemes: ['alibi', 't5'], steps: 3, size: 'tiny', trainLength: 8, vocabSize: 8, evalBatch: 1, batch: 2, seed: 4 };
  const seen = new Set();
  const r = pe.lab.run({ ...small, seeds: 2 }, (p) => { seen.add(`${p.scheme}:${p.seed}`); });
  assert.deepEqual(r.results.map((x) => [x.scheme, x.seed]), [['alibi', 4], ['alibi', 5], ['t5', 4], ['t5', 5]]);
  assert.deepEqual([...seen], ['alibi:4', 'alibi:5', 't5:4', 't5:5']);
  assert.equal(r.config.seeds, 2);
  const one = pe.lab.run({ ...small, schemes: ['t5'] });
  assert.deepEqual(Array.from(r.results[2].trainLoss), Array.from(one.results[0].trainLoss));
  assert.notDeepEqual(Array.from(r.results[3].trainLoss), Array.from(one.results[0].trainLoss));
  // One (scheme, seed) job of it alone: seed S + 1 on seed S's data (the page's workers).
  const job = pe.lab.run({ ...small, schemes: ['t5'], seed: 5, taskSeed: 4 });
  assert.deepEqual(Array.from(job.results[0].trainLoss), Array.from(r.results[3].trainLoss));
  assert.deepEqual(job.results[0].eval, r.results[3].eval);
  assert.notDeepEqual(Array.from(pe.lab.run({ ...small, schemes: ['t5'], seed: 5 }).results[0].trainLoss),
    Array.from(r.results[3].trainLoss));
  assert.throws(() => pe.lab.run({ ...small, seeds: 0 }), error(RangeError, /run: seeds must be/));
  assert.deepEqual(r.results[2].position.t5_bias.shape, [32, 2]);  // the trained table, for the page
  assert.equal(r.results[0].position.t5_bias, undefined);
});

test('lab: positionParameters — pos_emb as the tensor, FIRE sampled on 65 points', () => {
  withModel({ scheme: 'learned' }, (m) => {
    const p = m.positionParameters();
    assert.deepEqual(Object.keys(p), ['pos_emb']);
    assert.deepEqual(p.pos_emb.shape, [8, 16]);
    assert.equal(p.pos_emb.values.length, 128);
  });
  withModel({ scheme: 'fire' }, (m) => {
    const p = m.positionParameters();
    assert.deepEqual(Object.keys(p).sort(), ['blocks.0.fire.L', 'blocks.0.fire.c', 'blocks.0.fire.f', 'blocks.1.fire.L',
      'blocks.1.fire.c', 'blocks.1.fire.f']);
    assert.deepEqual(p['blocks.0.fire.f'].shape, [65, 2]);
    assert.ok(p['blocks.0.fire.f'].values.every((v) => v === 0));  // w2 starts at 0
    assert.ok(Math.abs(p['blocks.1.fire.c'].values[0] - 0.1) < 1e-6);
    assert.ok(Math.abs(p['blocks.1.fire.L'].values[0] - 4) < 1e-5);  // trainLength 8 / 2
  });
  withModel({ scheme: 'cope' }, (m) => {
    const p = m.positionParameters();
    assert.deepEqual(Object.keys(p), ['blocks.0.cope.e', 'blocks.1.cope.e']);
    assert.deepEqual(p['blocks.0.cope.e'].shape, [9, 16]);
    assert.ok(p['blocks.0.cope.e'].values.every((v) => v === 0));  // the table starts at 0
  });
  withModel({ scheme: 'rope' }, (m) => assert.deepEqual(m.positionParameters(), {}));
});

test('lab: run trains and evaluates each scheme; onProgress can cancel', () => {
  const seen = [];
  const r = pe.lab.run({ schemes: ['learned', 'alibi'], steps: 3, size: 'tiny', trainLength: 8, vocabSize: 8, evalBatch: 2 },
    (p) => seen.push(`${p.scheme}:${p.step}/${p.totalSteps}`));
  assert.deepEqual(seen, ['learned:0/3', 'learned:1/3', 'learned:2/3', 'alibi:0/3', 'alibi:1/3', 'alibi:2/3']);
  assert.deepEqual(r.results.map((x) => x.scheme), ['learned', 'alibi']);
  assert.deepEqual(r.results[0].eval.map((e) => [e.length, e.noEmbedding]), [[4, false], [8, false], [16, true], [32, true], [64, true]]);
  assert.equal(r.results[0].eval[3].loss, null);
  assert.ok(r.results[1].eval.every((e) => Number.isFinite(e.loss) && e.bucketLoss.length === Math.ceil((e.length - 1) / 2)));
  assert.equal(r.results[1].trainLoss.length, 3);
  assert.ok(r.results.every((x) => Number.isInteger(x.clippedSteps) && x.clippedSteps >= 0 && x.clippedSteps <= 3));
  assert.deepEqual(Object.keys(r.floor), ['4', '8', '16', '32', '64']);
  assert.throws(() => pe.lab.run({ schemes: ['rope'], steps: 10, size: 'tiny', trainLength: 8 }, (p) => p.step < 2),
    error(RangeError, /run: cancelled/));
});

test('lab: bad arguments are TypeError or RangeError naming the argument; nothing leaks', () => {
  const before = pe.heapStats().inUseBytes;
  const bad = [
    [() => pe.lab.createModel({ ...small, dModel: 18, nHeads: 4 }), RangeError, /dModel must be a multiple of nHeads/],
    [() => pe.lab.createModel({ ...small, dModel: 18, nHeads: 2, scheme: 'rope' }), RangeError,
      /createModel: headDim \(dModel \/ nHeads\) must be even for rope, xpos and p_rope/],
    [() => pe.lab.createModel({ ...small, dModel: 18, nHeads: 2, scheme: 'p_rope' }), RangeError, /headDim \(dModel \/ nHeads\) must be even/],
    [() => pe.lab.createModel({ ...small, scheme: 'kerple' }), RangeError, /scheme must be one of 'none'/],
    [() => pe.lab.createModel({ ...small, vocabSize: 1 }), RangeError, /vocabSize/],
    // The config's and the dataset's rules are C++'s (Model::create's through footprint,
    // Dataset::check), asked before anything is allocated; the JS layer adds what it was given.
    [() => pe.lab.createModel({ ...small, vocabSize: 65537 }), RangeError, /^createModel: vocabSize must be in \[2, 65536\] \(got 65537\)$/],
    [() => pe.lab.createModel({ ...small, dModel: 0 }), RangeError, /^createModel: dModel must be in \[1, 4096\] \(got 0\)$/],
    [() => pe.lab.createModel({ ...small, nLayers: 65 }), RangeError, /^createModel: nLayers must be in \[1, 64\] \(got 65\)$/],
    [() => pe.lab.createModel({ ...small, dModel: 8, nHeads: 16 }), RangeError, /^createModel: nHeads must be in \[1, dModel\] \(got nHeads = 16, dModel = 8\)$/],
    [() => pe.lab.createModel({ ...small, trainLength: 1 }), RangeError, /^createModel: trainLength must be in \[2, 65536\] \(got 1\)$/],
    [() => pe.lab.createModel({ ...small, dModel: 1.5 }), RangeError, /dModel must be an integer/],
    [() => pe.lab.dataset({ vocabSize: 257 }), RangeError, /^dataset: vocabSize must be in \[2, 256\] for markov \(got 257\)$/],
    [() => pe.lab.dataset({ task: 'copy', vocabSize: 1 }), RangeError, /^dataset: vocabSize must be in \[2, 65536\] for copy \(got 1\)$/],
    [() => pe.lab.dataset({ peak: 21 }), RangeError, /^dataset: peak must be finite and in \[0, 20\] \(got 21\)$/],
    [() => pe.lab.dataset({ peak: NaN }), RangeError, /peak must be finite and in \[0, 20\] \(got NaN\)/],
    [() => pe.lab.dataset({ peak: '3' }), TypeError, /peak must be a number/],
    [() => pe.lab.dataset({ task: 'text', text: 'a' }), RangeError, /^dataset: text must have at least 2 bytes \(got 1\)$/],
    [() => pe.lab.createModel({ ...small, depth: 2 }), TypeError, /unknown option "depth"/],
    [() => pe.lab.dataset({ task: 'wiki' }), RangeError, /task must be one of/],
    [() => pe.lab.dataset({ task: 'text' }), TypeError, /text must be a string or a Uint8Array/],
    [() => pe.lab.run({ schemes: ['rope', 'nope'] }), RangeError, /schemes\[1\] must be one of/],
    [() => pe.lab.createModel({ vocabSize: 32, dModel: 4096, nLayers: 64, nHeads: 4 }), RangeError, /parameters/],
    [() => pe.lab.run({ trainLength: 8192 }), RangeError, /run: batch 16 × length 8192 needs/],
    // run()'s rules are C++'s (run_check): the cap of trainLength, lr >= 0, positive counts.
    [() => pe.lab.run({ trainLength: 8196 }), RangeError, /^run: trainLength must be <= 8192 \(evaluated at 8 · trainLength, at most 65536\) \(got 8196\)$/],
    [() => pe.lab.run({ trainLength: 2 }), RangeError, /^run: trainLength must be >= 4 \(got 2\)$/],
    [() => pe.lab.run({ lr: -1 }), RangeError, /^run: lr must be finite and >= 0 \(got -1\)$/],
    [() => pe.lab.extend({ lr: NaN }), RangeError, /^extend: lr must be finite and >= 0 \(got NaN\)$/],
    [() => pe.lab.run({ steps: 0 }), RangeError, /^run: steps must be > 0 \(got 0\)$/],
    [() => pe.lab.run({ evalBatch: 0 }), RangeError, /^run: batch and evalBatch must be > 0 \(got batch = 16, evalBatch = 0\)$/],
    [() => pe.lab.run({ task: 'copy', trainLength: 10 }), RangeError, /^run: trainLength must be a multiple of 4 for copy and flipflop/],
    [() => pe.lab.run({ lr: '1' }), TypeError, /lr must be a number/],
  ];
  for (const [call, type, pattern] of bad) assert.throws(call, error(type, pattern));
  withModel({ scheme: 'alibi' }, (m) => {
    // The tokens' and lr's rules are C++'s (the call's status; lr_check, asked first).
    assert.throws(() => m.trainStep(new Int32Array(8).fill(8)), error(RangeError, /^trainStep: tokens must be in \[0, vocabSize\)$/));
    assert.throws(() => m.evaluate([0, 1, 2, 3, 4, 5, 6, -1]), error(RangeError, /^evaluate: tokens must be in \[0, vocabSize\)$/));
    assert.throws(() => m.trainStep([0, 1, 2, 3, 4, 5, 6, 0.5]), error(RangeError, /trainStep: tokens\[7\] must be an integer/));
    assert.throws(() => m.trainStep(new Int32Array(8), { lr: NaN }), error(RangeError, /^trainStep: lr must be finite and >= 0 \(got NaN\)$/));
    assert.throws(() => m.trainStep(new Int32Array(7)), error(RangeError, /tokens.length must be a positive multiple of length = 8/));
    assert.throws(() => m.trainStep(new Float32Array(8)), error(TypeError, /tokens must be an Int32Array/));
    assert.throws(() => m.trainStep(new Int32Array(8), { lr: -1 }), error(RangeError, /lr must be finite and >= 0/));
    assert.throws(() => m.evaluate(new Int32Array(8), { ropeScaling: 'llama3' }), error(RangeError, /ropeScaling must be one of/));
    assert.throws(() => m.evaluate(new Int32Array(32768), { length: 32768 }), error(RangeError, /evaluate: batch 1 × length 32768 needs/));
    assert.throws(() => m.evaluate(new Int32Array(8), { length: 65537 }), error(RangeError, /^evaluate: length must be in \[2, 65536\] \(got 65537\)$/));
    assert.throws(() => m.trainStep(new Int32Array(8), { length: 1 }), error(RangeError, /^trainStep: length must be in \[2, 65536\] \(got 1\)$/));
    m.delete();
    m.delete();  // a no-op
    assert.throws(() => m.trainStep(new Int32Array(8)), error(TypeError, /trainStep: the model was deleted/));
  });
  withData({ task: 'markov', vocabSize: 4 }, (d) => {
    // A call's rows follow C++'s rule (shape_check; errors.test.mjs: its message, whatever it says);
    // their JS type is checked here.
    assert.throws(() => d.sample(1, 65537), error(RangeError, /^sample: length must be in \[2, 65536\] \(got 65537\)$/));
    assert.throws(() => d.floor(1), error(RangeError, /^floor: length must be in \[2, 65536\] \(got 1\)$/));
    assert.throws(() => d.sample(0, 8), error(RangeError, /^sample: batch must be > 0 \(got 0\)$/));
    assert.throws(() => d.sample(2 ** 23 + 1, 2), (e) => e instanceof RangeError && e.code === 'kTooLarge' &&
      e.message === 'sample: batch * length must be <= 2^24 (got batch = 8388609, length = 2)');
    assert.throws(() => d.sample(1.5, 8), error(RangeError, /^sample: batch must be an integer \(got 1\.5\)$/));
    assert.throws(() => d.floor('8'), error(TypeError, /^floor: length must be a number/));
    d.delete();
    d.delete();  // a no-op
    assert.throws(() => d.sample(2, 8), error(TypeError, /sample: the dataset was deleted/));
  });
  for (let i = 0; i < 20; i++) {
    withModel({ scheme: 't5' }, (m) => m.trainStep(new Int32Array(16).fill(1)));
    withData({ task: 'markov', vocabSize: 4 }, (d) => d.sample(2, 8));
  }
  assert.equal(pe.heapStats().inUseBytes, before);
});

test('lab: an exception thrown by onProgress cancels the run, reaches the caller, and leaks nothing', () => {
  const before = pe.heapStats().inUseBytes;
  const boom = new Error('stop here');
  for (let i = 0; i < 3; i++) {
    assert.throws(() => pe.lab.run({ schemes: ['rope'], steps: 50, size: 'tiny', trainLength: 8 }, (p) => {
      if (p.step === 3) throw boom;
      return true;
    }), (e) => e === boom);
  }
  assert.equal(pe.heapStats().inUseBytes, before);
  // The evaluation's rows within one call's (C++'s run_check and extend_check), before any training.
  assert.throws(() => pe.lab.run({ schemes: ['rope'], steps: 1, trainLength: 8192, evalBatch: 4096 }), (e) => e instanceof RangeError &&
    e.code === 'kTooLarge' && /^run: evalBatch \* the longest length evaluated \(8 · trainLength; extend: 2 · factor · trainLength\) must be <= 2\^24 \(got evalBatch = 4096, trainLength = 8192\)$/.test(e.message));
  assert.throws(() => pe.lab.run({ schemes: ['rope'], batch: 4096, trainLength: 8192 }), (e) => e instanceof RangeError &&
    e.code === 'kTooLarge' && e.message === 'run: batch * trainLength must be <= 2^24 (got batch = 4096, trainLength = 8192)');
  assert.throws(() => pe.lab.extend({ trainLength: 1024, factor: 16, evalBatch: 1024 }), (e) => e instanceof RangeError &&
    e.code === 'kTooLarge' && /^extend: evalBatch \* the longest length evaluated .* \(got evalBatch = 1024, trainLength = 1024, factor = 16\)$/.test(e.message));
});
