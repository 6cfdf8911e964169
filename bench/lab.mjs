// The lab's training step against TensorFlow.js (issue 13, "Correct, and fast"): the default lab
// model (docs/lab.md, "The model card"; scheme rope) written again in TF.js ops, started from posenc's
// own weights (exportWeights(), safetensors) on the same batch, checked to compute the same loss and
// gradients, then timed: posenc WASM (one thread), tfjs-backend-wasm (setThreadsCount(1)) and tfjs
// `cpu`, interleaved after warm-up. Used by bench/run.mjs (full and --smoke).
//
// TF.js has no AdamW (tf.train.adam has no decoupled weight decay and no global-norm clip), so the
// update is written here in TF.js ops, exactly as cpp/lab/optimizer.cpp does it: clip the
// gradients by 1/(norm + 1e-6) when the global norm is above 1; m = β1 m + (1 − β1) g,
// v = β2 v + (1 − β2) g², p = p (1 − lr·0.1 on the blocks' matrices) − lr/(1 − β1ᵗ) · m /
// (√v / √(1 − β2ᵗ) + eps), β1 0.9, β2 0.99, eps 1e-8.
import { createRequire } from 'node:module';
import path from 'node:path';
import { median } from './measure.mjs';

const require = createRequire(import.meta.url);

export const LAB_SCHEME = 'rope';
// The default lab model (docs/lab.md; `npm run lab`, size small) and batch; smoke: a tiny one.
export const LAB_SIZES = {
  full: { vocabSize: 32, dModel: 64, nLayers: 2, nHeads: 4, trainLength: 64, batch: 16 },
  smoke: { vocabSize: 32, dModel: 16, nLayers: 1, nHeads: 2, trainLength: 16, batch: 2 },
};
// Tolerances of the interop check (float32 on both sides, different summation orders).
export const LOSS_RTOL = 1e-5;   // |loss_tf − loss_posenc| / loss_posenc, at step 0 and after 2 AdamW steps
export const GRAD_RTOL = 1e-4;   // per tensor: max |g_tf − g_posenc| / max |g_posenc|, at step 0

/**
 * FLOPs of one posenc training step (forward + backward), counting 2 per multiply-add of the matrix
 * products only (LayerNorm, softmax, GELU, RoPE and AdamW are O(rows·d) and left out):
 *   forward = L · (24·R·d² + 4·B·T²·d) + 2·R·d·V,   R = B·T rows
 *     (per layer: q, k, v, wo 4·2·R·d², w1 and w2 2·2·R·d·4d; scores QKᵀ and P·V 2·2·B·H·T²·(d/H) —
 *      posenc's kernels compute the whole T×T square, masked afterwards; tied logits 2·R·d·V)
 *   backward = 2 × forward (each product has two: the input's gradient and the weight's; for
 *     attention dP, dV, dS·K, dSᵀ·Q), so step = 3 × forward.
 * Default model: 0.717 GFLOP per step.
 */
export function labStepFlops({ vocabSize: V, dModel: d, nLayers: L, trainLength: T, batch: B }) {
  const R = B * T;
  return 3 * (L * (24 * R * d * d + 4 * B * T * T * d) + 2 * R * d * V);
}

/** The safetensors bytes of exportWeights() → { name: { shape, data: Float32Array } }. */
export function readSafetensors(bytes) {
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  const header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  const out = {};
  for (const [name, e] of Object.entries(header)) {
    if (name === '__metadata__') continue;
    const [a, b] = e.data_offsets;
    out[name] = { shape: e.shape, data: new Float32Array(bytes.slice(8 + n + a, 8 + n + b).buffer) };
  }
  return out;
}

let tfLoaded = null;
let modelCount = 0;
/** @tensorflow/tfjs through CommonJS (registers the gradients) with the wasm backend on one thread. */
export async function loadTf() {
  if (tfLoaded) return tfLoaded;
  const tf = require('@tensorflow/tfjs');
  const wasm = require('@tensorflow/tfjs-backend-wasm');
  wasm.setWasmPaths(`${path.dirname(require.resolve('@tensorflow/tfjs-backend-wasm'))}/`);
  wasm.setThreadsCount(1);
  tf.enableProdMode();  // no debug checks (and no console advice to install tfjs-node)
  if (!(await tf.setBackend('wasm'))) throw new Error('tfjs-backend-wasm did not initialise');
  tfLoaded = { tf, wasm };
  return tfLoaded;
}

/**
 * The lab model in TF.js, on the backend active when it is created. weights: readSafetensors() of
 * posenc's exportWeights(). Rows are b·T + t as in posenc; W is [in][out], y = x·W.
 */
export function tfLabModel(tf, config, weights, { explicitTranspose = false } = {}) {
  const { vocabSize: V, dModel: d, nLayers: L, nHeads: H, batch: B, trainLength: T } = config;
  const hd = d / H, half = hd / 2;
  const modelId = ++modelCount;
  const names = Object.keys(weights);
  const vars = Object.fromEntries(names.map((n) => [n, tf.variable(tf.tensor(weights[n].data, weights[n].shape), true, `lab${modelId}.${n}`)]));
  const decay = Object.fromEntries(names.map((n) => [n, /^blocks\.\d+\.(wq|wk|wv|wo|w1|w2)$/.test(n)]));
  const adamM = Object.fromEntries(names.map((n) => [n, tf.variable(tf.zerosLike(vars[n]), false)]));
  const adamV = Object.fromEntries(names.map((n) => [n, tf.variable(tf.zerosLike(vars[n]), false)]));
  let steps = 0;

  // RoPE tables as posenc's rope_cache builds them: half-split, θ 10000, rot_dim = head_dim,
  // angle t·θ^(−2k/hd) in float64, then float32. [1, T, 1, half] to broadcast over batch and heads.
  const cosT = new Float32Array(T * half), sinT = new Float32Array(T * half);
  for (let t = 0; t < T; t++) {
    for (let k = 0; k < half; k++) {
      const a = t * 10000 ** (-(2 * k) / hd);
      cosT[t * half + k] = Math.cos(a);
      sinT[t * half + k] = Math.sin(a);
    }
  }
  const cos = tf.tensor(cosT, [1, T, 1, half]), sin = tf.tensor(sinT, [1, T, 1, half]);
  // Causal mask added to the scores (0 where j ≤ i, −1e9 above): exp underflows to exactly 0.
  const maskData = new Float32Array(T * T);
  for (let i = 0; i < T; i++) for (let j = i + 1; j < T; j++) maskData[i * T + j] = -1e9;
  const mask = tf.tensor(maskData, [1, 1, T, T]);
  // Loss weights: 1/n on rows with a next token (t < T − 1), 0 on each row's last position.
  const lossW = new Float32Array(B * T);
  for (let r = 0; r < B * T; r++) lossW[r] = r % T + 1 < T ? 1 / (B * (T - 1)) : 0;
  const lossWeight = tf.tensor(lossW, [B * T, 1]);
  const scale = 1 / Math.sqrt(hd);

  const layerNorm = (x, w, b) => {
    const mu = tf.mean(x, -1, true);
    const xc = tf.sub(x, mu);
    const r = tf.rsqrt(tf.add(tf.mean(tf.square(xc), -1, true), 1e-5));
    return tf.add(tf.mul(tf.mul(xc, r), w), b);
  };
  const gelu = (u) => tf.mul(tf.mul(u, 0.5), tf.add(1, tf.tanh(tf.mul(tf.add(u, tf.mul(tf.mul(tf.mul(u, u), u), 0.044715)), Math.sqrt(2 / Math.PI)))));
  const rope = (x) => {  // x [B, T, H, hd] → R x
    const [x1, x2] = tf.split(x, 2, -1);
    return tf.concat([tf.sub(tf.mul(x1, cos), tf.mul(x2, sin)), tf.add(tf.mul(x2, cos), tf.mul(x1, sin))], -1);
  };
  const heads = (x) => tf.reshape(x, [B, T, H, hd]);
  // The 2-D products. tf.matMul's own gradient multiplies with transposeA / transposeB, which
  // tfjs-backend-wasm runs ~10× slower than a plain product (measured: its fast path is the
  // untransposed, unbatched one); explicitTranspose gives the same values through a gradient that
  // transposes first — TF.js tuned for this backend, so posenc is compared with its best.
  const matMul2d = explicitTranspose
    ? tf.customGrad((a, b, save) => {
      save([a, b]);
      return { value: tf.matMul(a, b), gradFunc: (dy, [sa, sb]) => [tf.matMul(dy, tf.transpose(sb)), tf.matMul(tf.transpose(sa), dy)] };
    })
    : (a, b) => tf.matMul(a, b);

  // tokens: an int32 tensor [B·T]. The mean next-token cross-entropy, a scalar.
  function loss(tokens, targets) {
    const p = (n) => vars[n];
    const emb = p('tok_emb');
    let x = matMul2d(tf.oneHot(tokens, V).toFloat(), emb);  // = tok_emb[token] (a gather's gradient is not in tfjs-backend-wasm)
    for (let l = 0; l < L; l++) {
      const pre = `blocks.${l}.`;
      const a = layerNorm(x, p(`${pre}ln1.weight`), p(`${pre}ln1.bias`));
      const q = tf.transpose(rope(heads(matMul2d(a, p(`${pre}wq`)))), [0, 2, 1, 3]);  // [B, H, T, hd]
      const k = tf.transpose(rope(heads(matMul2d(a, p(`${pre}wk`)))), [0, 2, 1, 3]);
      const v = tf.transpose(heads(matMul2d(a, p(`${pre}wv`))), [0, 2, 1, 3]);
      const s = tf.add(tf.mul(tf.matMul(q, k, false, true), scale), mask);
      const ctx = tf.reshape(tf.transpose(tf.matMul(tf.softmax(s), v), [0, 2, 1, 3]), [B * T, d]);
      const h = tf.add(x, matMul2d(ctx, p(`${pre}wo`)));
      const b = layerNorm(h, p(`${pre}ln2.weight`), p(`${pre}ln2.bias`));
      x = tf.add(h, matMul2d(gelu(matMul2d(b, p(`${pre}w1`))), p(`${pre}w2`)));
    }
    const f = layerNorm(x, p('ln_f.weight'), p('ln_f.bias'));
    const logp = tf.logSoftmax(explicitTranspose ? matMul2d(f, tf.transpose(emb)) : tf.matMul(f, emb, false, true));  // tied: ln_f(x)·tok_embᵀ
    return tf.neg(tf.sum(tf.mul(tf.mul(logp, tf.oneHot(targets, V).toFloat()), lossWeight)));
  }
  // targets[r] = tokens[r + 1] (the last position of a row has weight 0; any id will do).
  const inputs = (tokens) => {
    const next = new Int32Array(tokens.length);
    next.set(tokens.subarray(1));
    return [tf.tensor1d(tokens, 'int32'), tf.tensor1d(next, 'int32')];
  };
  const varList = names.map((n) => vars[n]);

  return {
    /** Loss and gradients (name → Float32Array), read back. */
    lossAndGradients(tokens) {
      return tf.tidy(() => {
        const [tok, tgt] = inputs(tokens);
        const { value, grads } = tf.variableGrads(() => loss(tok, tgt), varList);
        const gradients = {};
        for (const n of names) gradients[n] = grads[vars[n].name].dataSync();
        return { loss: value.dataSync()[0], gradients };
      });
    },
    /** One AdamW step at learning rate lr; returns the loss before it (read back, as posenc does). */
    trainStep(tokens, lr) {
      steps += 1;
      const out = tf.tidy(() => {
        const [tok, tgt] = inputs(tokens);
        const { value, grads } = tf.variableGrads(() => loss(tok, tgt), varList);
        const g = names.map((n) => grads[vars[n].name]);
        const norm = tf.sqrt(tf.addN(g.map((x) => tf.sum(tf.square(x)))));
        const clip = tf.where(tf.greater(norm, 1), tf.div(1, tf.add(norm, 1e-6)), tf.onesLike(norm));
        const b1 = 0.9, b2 = 0.99;
        const stepSize = lr / (1 - b1 ** steps), sqrtBc2 = Math.sqrt(1 - b2 ** steps);
        names.forEach((n, i) => {
          const gi = tf.mul(g[i], clip);
          const m = tf.add(tf.mul(adamM[n], b1), tf.mul(gi, 1 - b1));
          const v = tf.add(tf.mul(adamV[n], b2), tf.mul(tf.square(gi), 1 - b2));
          adamM[n].assign(m);
          adamV[n].assign(v);
          const p = decay[n] ? tf.mul(vars[n], 1 - lr * 0.1) : vars[n];
          vars[n].assign(tf.sub(p, tf.mul(tf.div(m, tf.add(tf.div(tf.sqrt(v), sqrtBc2), 1e-8)), stepSize)));
        });
        return value;
      });
      const l = out.dataSync()[0];
      out.dispose();
      return l;
    },
    /** Reads every tensor once, which moves it to the active backend (after tf.setBackend). */
    touch() {
      tf.tidy(() => { for (const t of [...varList, ...Object.values(adamM), ...Object.values(adamV), cos, sin, mask, lossWeight]) tf.sum(t); });
    },
    dispose() {
      for (const n of names) { vars[n].dispose(); adamM[n].dispose(); adamV[n].dispose(); }
      for (const t of [cos, sin, mask, lossWeight]) t.dispose();
    },
  };
}


/**
 * The lab part of the bench: { config, scheme, flops, rows, checks, peak }. rows: { name, ms, stepsPerSecond, gflops };
 * checks: { what, diff, tol } (relative). peak: the WASM register multiply-add peak, GFLOP/s.
 */
export async function labBench({ pe, smoke, peak, native = null }) {
  const { tf } = await loadTf();
  const size = smoke ? LAB_SIZES.smoke : LAB_SIZES.full;
  const { batch, ...modelOptions } = size;
  const config = { ...size };
  const data = pe.lab.dataset({ task: 'markov', seed: 1 });
  const tokens = data.sample(batch, size.trainLength, 0);
  data.delete();
  const lr = 1e-3;
  const checks = [];
  const rel = (a, b) => Math.abs(a - b) / Math.abs(b);

  // posenc models: one for the check, one timed; TF.js models from the same weights, one per
  // contender (its variables live on that backend).
  const create = () => pe.lab.createModel({ ...modelOptions, scheme: LAB_SCHEME, seed: 0 });
  const ref = create();
  const weights = readSafetensors(ref.exportWeights());
  const tfContenders = {
    'tfjs-backend-wasm (setThreadsCount(1))': { backend: 'wasm', options: {}, k: smoke ? 1 : 2 },
    'tfjs-backend-wasm, gradients through explicit transposes': { backend: 'wasm', options: { explicitTranspose: true }, k: smoke ? 1 : 3 },
    'tfjs cpu backend': { backend: 'cpu', options: {}, k: 1 },
  };
  for (const c of Object.values(tfContenders)) {
    await tf.setBackend(c.backend);
    c.model = tfLabModel(tf, config, weights, c.options);
  }

  // Interop: the step-0 loss and every gradient, then the loss after two identical AdamW steps.
  const mine = ref.lossAndGradients(tokens);
  const after = [ref.trainStep(tokens, { lr }), ref.trainStep(tokens, { lr }), ref.lossAndGradients(tokens).loss];
  for (const [name, c] of Object.entries(tfContenders)) {
    await tf.setBackend(c.backend);
    const m = c.model;
    const theirs = m.lossAndGradients(tokens);
    checks.push({ what: `${name} vs posenc: loss at step 0 (${mine.loss.toFixed(6)}), relative`, diff: rel(theirs.loss, mine.loss), tol: LOSS_RTOL });
    let worst = 0, worstName = '';
    for (const [n, g] of Object.entries(mine.gradients)) {
      let d = 0, s = 0;
      for (let i = 0; i < g.length; i++) { d = Math.max(d, Math.abs(theirs.gradients[n][i] - g[i])); s = Math.max(s, Math.abs(g[i])); }
      if (d / s > worst) { worst = d / s; worstName = n; }
    }
    checks.push({ what: `${name} vs posenc: gradients at step 0, worst tensor (${worstName}) max|Δg|/max|g|`, diff: worst, tol: GRAD_RTOL });
    const tfAfter = [m.trainStep(tokens, lr), m.trainStep(tokens, lr), m.lossAndGradients(tokens).loss];
    checks.push({ what: `${name} vs posenc: loss after 2 AdamW steps (${after[2].toFixed(6)}), relative`, diff: rel(tfAfter[2], after[2]), tol: LOSS_RTOL });
  }
  ref.delete();

  // Timing: a round runs each contender for its k steps in turn (k × its step time is a few
  // hundred ms or more); after switching the TF.js backend, touch() moves the model's tensors
  // there, untimed. Median over rounds of the time per step.
  const timed = create();
  const { warmup, rounds } = smoke ? { warmup: 1, rounds: 1 } : { warmup: 1, rounds: 7 };
  const contenders = {
    'posenc WASM (1 thread)': { k: smoke ? 1 : 6, run: () => timed.trainStep(tokens, { lr }) },
    ...Object.fromEntries(Object.entries(tfContenders).map(([name, c]) => [name, { ...c, run: () => c.model.trainStep(tokens, lr) }])),
  };
  const times = Object.fromEntries(Object.keys(contenders).map((n) => [n, []]));
  for (let r = 0; r < warmup + rounds; r++) {
    for (const [name, c] of Object.entries(contenders)) {
      if (c.backend) { await tf.setBackend(c.backend); c.model.touch(); }
      const t0 = performance.now();
      for (let i = 0; i < c.k; i++) c.run();
      if (r >= warmup) times[name].push((performance.now() - t0) / c.k);
    }
  }
  timed.delete();
  for (const c of Object.values(tfContenders)) { await tf.setBackend(c.backend); c.model.dispose(); }
  await tf.setBackend('wasm');

  const flops = labStepFlops(config);
  const rows = Object.keys(contenders).map((name) => {
    const ms = median(times[name]);
    return { name, ms, stepsPerSecond: 1000 / ms, gflops: flops / (ms * 1e6) };
  });
  if (native) {
    for (const [simd, ms] of Object.entries(native)) rows.push({ name: `posenc native C++ (${simd}; CPU time)`, ms, stepsPerSecond: 1000 / ms, gflops: flops / (ms * 1e6) });
  }
  return { config, scheme: LAB_SCHEME, flops, rows, checks, peak };
}
