// The 2-thread rows of npm run bench, in a process of their own: onnxruntime-web fixes its thread
// count when its first session is made, so the 1-thread contenders (bench/run.mjs) and these cannot
// share one. posenc with 1 and with 2 threads (init({ threads: 2 }): the pthreads build),
// onnxruntime-web with env.wasm.numThreads = 2 and onnxruntime-node with intraOpNumThreads = 2, on
// the same inputs, interleaved, medians; outputs checked against the 1-thread posenc result. Then
// the lab's training step (bench/lab.mjs's model and batch) on 1 and 2 threads, whose weights after
// the same steps must be bitwise equal.
//   node bench/threads.mjs [--smoke]    prints one JSON object: { rows, checks }
import { init } from 'posenc';
import * as ortWeb from 'onnxruntime-web';
import { attentionCase, maxAbsDiff, ropeCase } from './ops/cases.mjs';
import { LAB_SCHEME, LAB_SIZES } from './lab.mjs';
import { measure } from './measure.mjs';

const smoke = process.argv.includes('--smoke');
const THREADS = 2;
const one = await init();
const two = await init({ threads: THREADS });
ortWeb.env.wasm.numThreads = THREADS;
ortWeb.env.logLevel = 'error';
const runtimes = { 'onnxruntime-web': { ort: ortWeb, ep: 'wasm' } };
try {
  runtimes['onnxruntime-node'] = { ort: await import('onnxruntime-node'), ep: 'cpu', threads: THREADS };
} catch {
  // reported by bench/run.mjs already
}
const plan = smoke ? { warmup: 1, rounds: 1 } : { warmup: 3, rounds: 9 };
const rows = [], checks = [];
const named = (timings, rename) => Object.fromEntries(Object.entries(timings).map(([n, ms]) => [rename[n] ?? n, ms]));

const S = smoke ? 16 : 1024;
for (const alibi of [false, true]) {
  const title = `causal attention${alibi ? ' + ALiBi' : ''} [1, 8, ${S}, 64]`;
  const c = await attentionCase({ pe: two, runtimes: alibi ? { 'onnxruntime-web': runtimes['onnxruntime-web'] } : runtimes, S, alibi, plain: false });
  const { q, k, v, opts } = c.inputs;
  const contenders = { 'posenc attention, 1 thread': () => one.attention(q, k, v, opts), ...c.contenders };
  const timings = named(await measure(contenders, plan), {
    'posenc attention': `posenc attention, ${THREADS} threads`, 'posenc attention (bhsd)': `posenc attention (bhsd), ${THREADS} threads`,
    'onnxruntime-web': `onnxruntime-web, ${THREADS} threads`, 'onnxruntime-node': `onnxruntime-node, ${THREADS} threads` });
  rows.push({ title, timings });
  checks.push({ title, what: `posenc ${THREADS} threads vs 1 thread`, diff: maxAbsDiff(two.attention(q, k, v, opts), one.attention(q, k, v, opts)) });
  for (const [what, diff] of Object.entries(await c.check())) checks.push({ title, what: `${what} (${THREADS} threads)`, diff });
}

const R = smoke ? 16 : 2048;
const rope = await ropeCase({ pe: two, runtimes: {}, S: R });
const pick = ['posenc onnx.rotaryEmbedding (cache given, fresh result)', 'posenc onnx.rotaryEmbedding (cache given, into out)', 'posenc applyRope (copies in and out)'];
const ropeTimings = await measure(Object.fromEntries(pick.map((n) => [n, rope.contenders[n]])), plan);
rows.push({ title: `RoPE [1, 32, ${R}, 128] half-split`, timings: Object.fromEntries(Object.entries(ropeTimings).map(([n, ms]) => [`${n}, ${THREADS} threads`, ms])) });
for (const [what, diff] of Object.entries(await rope.check())) checks.push({ title: `RoPE [1, 32, ${R}, 128]`, what: `${what} (${THREADS} threads)`, diff });
rope.dispose();

// One model per thread count, from the same init, stepped on the same batch: k steps per round each.
const { batch, ...labModel } = smoke ? LAB_SIZES.smoke : LAB_SIZES.full;
const labData = one.lab.dataset({ task: 'markov', seed: 1 });
const labTokens = labData.sample(batch, labModel.trainLength, 0);
labData.delete();
const labModels = { 1: one, [THREADS]: two };
for (const [n, p] of Object.entries(labModels)) labModels[n] = p.lab.createModel({ ...labModel, scheme: LAB_SCHEME, seed: 0 });
const k = smoke ? 1 : 4;
const labTitle = `lab training step (${LAB_SCHEME}, d_model ${labModel.dModel}, batch [${batch}][${labModel.trainLength}])`;
const labTimings = await measure(Object.fromEntries(Object.entries(labModels).map(([n, m]) => [`posenc lab, ${n} thread${n > 1 ? 's' : ''}`, () => {
  for (let i = 0; i < k; i++) m.trainStep(labTokens, { lr: 1e-3 });
}])), plan);
rows.push({ title: labTitle, timings: Object.fromEntries(Object.entries(labTimings).map(([n, ms]) => [n, ms / k])) });
const w1 = labModels[1].exportWeights(), w2 = labModels[THREADS].exportWeights();
checks.push({ title: labTitle, what: `posenc ${THREADS} threads vs 1 thread: weights after the same steps, bytes differing`,
  diff: w1.length === w2.length ? w1.reduce((n, b, i) => n + (b !== w2[i]), 0) : Infinity });
for (const m of Object.values(labModels)) m.delete();

console.log(JSON.stringify({ rows, checks }));
