// Interop at small sizes: posenc's outputs equal onnxruntime-web's (and onnxruntime-node's) for
// every benchmarked op, within 1e-5. The same cases as `npm run bench` (bench/ops/cases.mjs).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import * as ortWeb from 'onnxruntime-web';
import { attentionCase, attentionHalfCase, ropeCase, sinusoidalCase } from '../../bench/ops/cases.mjs';
import { decodeCase } from '../../bench/ops/decode.mjs';
import { pe } from './helpers.mjs';

ortWeb.env.wasm.numThreads = 1;
ortWeb.env.logLevel = 'error';
const runtimes = { 'onnxruntime-web': { ort: ortWeb, ep: 'wasm' } };
try {
  runtimes['onnxruntime-node'] = { ort: await import('onnxruntime-node'), ep: 'cpu' };
} catch (e) {
  console.log(`interop: onnxruntime-node not loadable here (${e.message.split('\n')[0]}); checking onnxruntime-web only`);
}

async function agree(c) {
  const diffs = await c.check();
  c.dispose();
  assert.ok(Object.keys(diffs).some((k) => k.startsWith('onnxruntime') || k.startsWith('plain')));
  for (const [what, diff] of Object.entries(diffs)) assert.ok(diff <= 1e-5, `${what}: ${diff}`);
}

test('RoPE [1, 32, S, 128]: posenc applyRope = its ONNX op = onnxruntime RotaryEmbedding-23', async () => {
  for (const S of [1, 7, 33]) await agree(await ropeCase({ pe, runtimes: { 'onnxruntime-web': runtimes['onnxruntime-web'] }, S }));
});

test('causal attention [1, 8, S, 64], with and without ALiBi: posenc = onnxruntime Attention-23 = plain JS', async () => {
  for (const S of [1, 5, 70]) {
    await agree(await attentionCase({ pe, runtimes, S }));
    await agree(await attentionCase({ pe, runtimes: { 'onnxruntime-web': runtimes['onnxruntime-web'] }, S, alibi: true }));
  }
});

test('causal attention [1, 8, S, 64], float16 K/V: posenc = its float32 call on the same values (exactly) = plain JS', async () => {
  for (const S of [1, 5, 70]) {
    const c = await attentionHalfCase({ pe, S });
    const diffs = await c.check();
    assert.equal(diffs['posenc float16 K/V vs float32 K/V on the same values'], 0);
    await agree(c);
  }
});

test('decoding against a cache (GQA, 1 and 5 new queries): posenc kvCache = pe.attention = onnxruntime Attention-23 and GroupQueryAttention', async () => {
  for (const [L, n] of [[1, 1], [40, 1], [70, 5]]) {
    const c = await decodeCase({ pe, ort: ortWeb, L, n, Hq: 8, Hk: 2, D: 16 });
    const diffs = await c.check();
    c.dispose();
    assert.equal(Object.keys(diffs).filter((k) => k.startsWith('onnxruntime')).length, 2);
    assert.equal(diffs['posenc kvCache float16 vs posenc kvCache float32 (the same values)'], 0);
    for (const [what, diff] of Object.entries(diffs)) assert.ok(diff <= 1e-5, `L ${L}, n ${n}, ${what}: ${diff}`);
  }
});

test('sinusoidal table: posenc = plain JS', async () => {
  await agree(await sinusoidalCase({ pe, S: 64 }));
});
