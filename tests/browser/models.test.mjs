// The model on the page, read by the package (issue 21): a pasted config.json goes through
// pe.readModel like an opened file, so the page reads what readModel reads (GPT-2 with only n_ctx,
// MPT without attn_config, seq_length); every preset still loads its published values, whether
// chosen in the list or opened from its URL; and a preset in the URL draws right from its first
// frame (LongRoPE's factors and Llama 4's NoPE layers come from reading the preset, not the URL).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { toHash } from '../../web/settings/state.js';
import { explorerSession } from './launch.mjs';

const ex = explorerSession();
const { state, open } = ex;

before(() => ex.start());
after(async () => ex.close && ex.close());

async function paste(config) {
  if (!await ex.page.$eval('#paste', (d) => d.open)) await ex.page.click('#paste summary');
  const before = await ex.page.textContent('#model-message');
  await ex.page.fill('#config-text', JSON.stringify(config));
  await ex.page.click('#config-apply');
  await ex.page.waitForFunction((b) => document.querySelector('#model-message').textContent !== b, before);
  return ex.page.textContent('#model-message');
}
const readModel = (config) => ex.page.evaluate(async (c) => {
  const { tensors, bytesRead, ...m } = await window.posencExplorer.pe.readModel(c);
  return m;
}, config);

test('a pasted config reads as readModel reads it: GPT-2 with only n_ctx, MPT without attn_config, seq_length', async () => {
  await open();
  // GPT-2's config.json names its table length n_ctx (older exports have no n_positions).
  const gpt2 = { model_type: 'gpt2', n_ctx: 2048, n_embd: 768, n_head: 12 };
  assert.deepEqual((await readModel(gpt2)).positionTable, { name: '', maxLen: 2048, dModel: 768, weights: null });
  assert.match(await paste(gpt2), /^Pasted config \(learned\): read config\.json \(gpt2\); learned position table 2048 × 768/);
  let st = await state();
  assert.deepEqual([st.attnScheme, st.maxLen, st.seqLen, st.dModel, st.heads], ['learned', 2048, 2048, 768, 12]);
  // MPT: attn_config.alibi defaults to true in HF's MptAttentionConfig, so no attn_config is ALiBi.
  const mpt = { model_type: 'mpt', d_model: 4096, n_heads: 32, max_seq_len: 2048 };
  assert.deepEqual((await readModel(mpt)).alibi, { nHeads: 32, maxBias: 8 });
  assert.match(await paste(mpt), /^Pasted config \(alibi\): read config\.json \(mpt\); ALiBi 32 heads, max bias 8/);
  st = await state();
  assert.deepEqual([st.attnScheme, st.schemes, st.heads, st.maxBias, st.seqLen, st.dModel], ['alibi', 'alibi', 32, 8, 2048, 4096]);
  assert.equal(st.maxLen, 512, 'GPT-2\'s table length stayed');
  // seq_length is a context length too (readModel's contextLength).
  const bloom = { model_type: 'bloom', hidden_size: 1024, n_head: 16, seq_length: 4096 };
  assert.equal((await readModel(bloom)).contextLength, 4096);
  await paste(bloom);
  st = await state();
  assert.deepEqual([st.attnScheme, st.heads, st.seqLen, st.dModel], ['alibi', 16, 4096, 1024]);
  // What readModel refuses, the page refuses with its words.
  assert.match(await paste({ vocab_size: 50000 }), /^Not a config this page can read: found none of: model_type, rope_theta/);
  assert.equal((await state()).heads, 16, 'a refused config changed the settings');
  assert.deepEqual(ex.problems, []);
});

// Each preset's published values (data/presets.json: the models' config.json), as the page shows
// them: d_model is the head size for RoPE (head_dim, or hidden_size / num_attention_heads), and
// L_target is capped at the field's limit (Llama-4-Scout publishes 10485760).
const PUBLISHED = {
  'llama-2-7b': { attnScheme: 'rope', heads: 32, dModel: 128, theta: 10000, scaling: 'none', lTrain: 4096, lTarget: 4096 },
  'llama-3.1-8b': { heads: 32, dModel: 128, theta: 500000, scaling: 'llama3', factor: 8, lTrain: 8192, lTarget: 131072, lowFreq: 1,
    highFreq: 4 },
  'mistral-7b': { heads: 32, dModel: 128, theta: 10000, scaling: 'none', lTarget: 32768, winMask: 'window', winSize: 4096 },
  'qwen2.5-7b-yarn': { heads: 28, dModel: 128, theta: 1000000, scaling: 'yarn', factor: 4, lTrain: 32768, lTarget: 131072 },
  'deepseek-v3': { heads: 128, dModel: 64, partial: 1, layout: 'interleaved', scaling: 'yarn', factor: 40, lTrain: 4096,
    lTarget: 163840, betaFast: 32, betaSlow: 1 },
  'phi-3.5-mini': { heads: 32, dModel: 96, theta: 10000, scaling: 'longrope', lTrain: 4096, lTarget: 131072, factor: 32 },
  'gpt-oss-20b': { heads: 64, dModel: 64, theta: 150000, scaling: 'yarn', factor: 32, lTrain: 4096, lTarget: 131072,
    truncate: false, winMask: 'window', winSize: 128 },
  'gemma-3-4b': { heads: 8, dModel: 256, theta: 1000000, scaling: 'linear', factor: 8, lTarget: 131072, winSize: 1024 },
  'qwen2.5-vl-7b': { heads: 28, dModel: 128, theta: 1000000, scaling: 'none', lTarget: 128000, mropeSection: '16,24,24',
    mropeInterleaved: false },
  'llama-4-scout': { heads: 40, dModel: 128, theta: 500000, layout: 'interleaved', scaling: 'llama3', factor: 16, lTrain: 8192,
    lowFreq: 1, highFreq: 1, lTarget: 4194304, winMask: 'chunk', winChunk: 8192, iropeFloor: 8192, iropeAttn: 0.1 },
  gpt2: { attnScheme: 'learned', dModel: 768, maxLen: 1024, seqLen: 1024, heads: 12 },
  'bert-base': { attnScheme: 'learned', dModel: 768, maxLen: 512, seqLen: 512, heads: 12 },
  'bloom-560m': { attnScheme: 'alibi', heads: 16, maxBias: 8, dModel: 1024 },
  'mpt-7b': { attnScheme: 'alibi', heads: 32, maxBias: 8, dModel: 4096, seqLen: 2048 },
  't5-base': { attnScheme: 't5', heads: 12, t5Buckets: 32, t5MaxDist: 128, t5Bidir: true, dModel: 768 },
};
const pick = (st, keys) => Object.fromEntries(keys.map((k) => [k, st[k]]));

test('every preset loads exactly its published values, chosen in the list or opened from its URL', async () => {
  await open();
  const ids = await ex.page.$$eval('#preset option', (o) => o.map((x) => x.value).filter(Boolean));
  assert.deepEqual(ids.sort(), Object.keys(PUBLISHED).sort());
  const chosen = {};
  for (const id of ids) {
    await ex.page.selectOption('#preset', id);
    await ex.page.waitForFunction((p) => window.posencExplorer.state.preset === p, id);
    chosen[id] = await state();
    const want = { attnScheme: 'rope', ...PUBLISHED[id] };
    assert.deepEqual(pick(chosen[id], Object.keys(want)), want, id);
    assert.match(await ex.page.textContent('#model-message'), /^[^:]+: read config\.json/, id);
  }
  // Gemma 3's local layers: their own θ and no scaling.
  await ex.page.selectOption('#preset', 'gemma-3-4b');
  await ex.page.selectOption('#layer-type', 'sliding_attention');
  await ex.page.waitForFunction(() => window.posencExplorer.state.theta === 10000);
  assert.deepEqual(pick(await state(), ['dModel', 'scaling', 'lTarget', 'winSize']),
    { dModel: 256, scaling: 'none', lTarget: 131072, winSize: 1024 });
  // A preset's URL opens the same settings: the long form older pages wrote, and the short one
  // (the preset alone), which is what the page writes now — a link holds what differs from it.
  for (const id of ids) {
    await open(toHash(chosen[id]), { drawn: false });
    assert.deepEqual(await state(), chosen[id], `${id} from its URL`);
    assert.equal(await ex.page.inputValue('#preset'), id);
    await open(`#preset=${id}`, { drawn: false });
    assert.deepEqual(await state(), chosen[id], `${id} from #preset=${id}`);
    assert.equal(await ex.page.evaluate(() => location.hash), `#preset=${id}`);
  }
  // A change from the preset is what the link adds, even back to a lesson default (θ 10000).
  await open();
  await ex.page.selectOption('#preset', 'llama-3.1-8b');
  await ex.page.waitForFunction(() => location.hash === '#preset=llama-3.1-8b');
  await ex.page.fill('#control-theta', '10000');
  await ex.page.press('#control-theta', 'Enter');
  await ex.page.waitForFunction(() => location.hash.includes('theta=10000'));
  const hash = await ex.page.evaluate(() => location.hash);
  await open(hash);
  assert.deepEqual(await state(), { ...chosen['llama-3.1-8b'], theta: 10000 });
  assert.deepEqual(ex.problems, []);
});

// What the page shows when it first draws (the end of its first drawn frame: scheduler.js marks
// it), and every view's first drawing as it happens: { id: { failed, note, irope } }.
function recordFirstDrawings() {
  window.firstDrawings = {};
  const mark = performance.mark.bind(performance);
  performance.mark = (name, ...rest) => {
    if (name === 'frame-end' && !window.firstFrame && document.querySelector('section[data-view][data-renders]')) {
      window.firstFrame = { summary: document.querySelector('#settings-summary').textContent,
        preset: document.querySelector('#preset').value, details: !document.querySelector('#preset-details').hidden,
        source: document.querySelector('#preset-source').textContent,
        drawn: [...document.querySelectorAll('section[data-view][data-renders]')].map((s) => s.dataset.view) };
    }
    return mark(name, ...rest);
  };
  new MutationObserver((records) => {
    for (const r of records) {
      const s = r.target;
      if (s.dataset.renders !== '1' || window.firstDrawings[s.dataset.view]) continue;
      window.firstDrawings[s.dataset.view] = { failed: s.classList.contains('failed'), note: s.querySelector('.note')?.textContent,
        irope: s.querySelector('[data-irope-layers]')?.textContent };
    }
  }).observe(document, { subtree: true, attributes: true, attributeFilter: ['data-renders'] });
}

test('a preset in the URL draws right from its first frame: LongRoPE factors and NoPE layers are read before it', async () => {
  await ex.page.addInitScript(recordFirstDrawings);
  // A viewport tall enough that every view up to context-shift is on screen when the page first
  // draws (a view draws only on screen: too short a viewport times out below): its bottom before
  // any view has drawn, and 2,000 px for what drawing adds above it (the views' HTML after their
  // plots: about 1,200 px at 1200 px wide). Those views are beyond the lesson: the links open their folds.
  const folds = '&deeper=long-context%2Cproduction';
  await ex.page.setViewportSize({ width: 1200, height: 900 });
  await open(`#${folds.slice(1)}`, { drawn: false });
  const bottom = await ex.page.$eval(ex.view('context-shift'), (s) => s.getBoundingClientRect().bottom + window.scrollY);
  await ex.page.setViewportSize({ width: 1200, height: Math.ceil(bottom) + 2000 });
  try {
    await open('#dModel=96&heads=32&preset=phi-3.5-mini&attnScheme=rope&scaling=longrope&factor=32&lTarget=131072'
      + `&schemes=sinusoidal%2Crope${folds}`);
    await ex.page.waitForFunction(() => window.firstDrawings.spectrum && window.firstDrawings['context-shift'], null, { timeout: 30000 });
    const frame = await ex.page.evaluate(() => window.firstFrame);
    assert.match(frame.summary, /^head_dim 96 · seq_len 100 · heads 32 · Phi-3\.5-mini-instruct \(LongRoPE\) · rope$/);
    assert.deepEqual([frame.preset, frame.details, frame.source],
      ['phi-3.5-mini', true, 'Source: Hugging Face microsoft/Phi-3.5-mini-instruct, config.json']);
    assert.ok(frame.drawn.includes('attention'), `first frame drew ${frame.drawn}`);
    const first = await ex.page.evaluate(() => window.firstDrawings);
    for (const id of ['spectrum', 'clocks', 'compare', 'precision', 'context-shift']) {
      assert.equal(first[id]?.failed, false, `${id} first drew as failed: ${first[id]?.note}`);
    }
    assert.match(first.spectrum.note, /^Attention factor a = 1\.1902/);
    await open('#heads=40&preset=llama-4-scout&attnScheme=rope&theta=500000&layout=interleaved&scaling=llama3&factor=16&lTrain=8192'
      + `&lTarget=4194304&highFreq=1&winMask=chunk&winChunk=8192&schemes=sinusoidal%2Crope${folds}`);
    await ex.page.waitForFunction(() => window.firstDrawings.irope, null, { timeout: 30000 });
    assert.match((await ex.page.evaluate(() => window.firstDrawings.irope)).irope,
      /^Llama-4-Scout-17B-16E \(iRoPE\) has 48 layers, counted from 0\. NoPE layers .*: 3, 7, 11, … 47/);
  } finally {
    await ex.page.setViewportSize({ width: 1200, height: 900 });
  }
  assert.deepEqual(ex.problems, []);
});
