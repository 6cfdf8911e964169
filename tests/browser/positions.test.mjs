// The explorer's views for positions as current models use them (issue 14), in headless Chromium:
// M-RoPE and 2-D RoPE react to their controls, the window, chunk and sink options change the
// attention map as HF's masks say, NoPE with a causal mask tells the two sentences apart, the
// iRoPE curve follows its settings, and the Qwen2.5-VL, Llama-4-Scout and gpt-oss presets load
// into every view.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { distinctColors, explorerSession } from './launch.mjs';

const ex = explorerSession();
const { view, state, renders, pixels, open, drawn, reacts } = ex;
const dataOf = (id, fn) => ex.page.evaluate(({ id, fn }) => new Function('d', `return (${fn})(d)`)(window.posencExplorer.views.find((v) => v.def.id === id).data), { id, fn: fn.toString() });
const note = (id) => ex.page.textContent(`${view(id)} .note`);
const readout = (id) => ex.page.textContent(`${view(id)} .readout`);

before(() => ex.start());
after(async () => ex.close && ex.close());

test('the new views sit in their chapters and draw non-blank at their defaults', async () => {
  await open();
  const chapters = await ex.page.$$eval('section[data-view]', (s) => Object.fromEntries(s.map((x) => [x.dataset.view, x.closest('[data-chapter]').dataset.chapter])));
  assert.deepEqual(['mrope', 'rope-2d', 'attention-window', 'irope'].map((id) => chapters[id]), ['rope', 'rope', 'production', 'production']);
  for (const id of ['mrope', 'rope-2d', 'attention-window', 'irope']) {
    const canvas = await drawn(id);
    assert.ok(await distinctColors(ex.page, canvas) > 8, `${id} is blank`);
    assert.equal(await ex.page.$eval(view(id), (s) => s.classList.contains('failed')), false, `${id} refused its defaults`);
  }
  assert.deepEqual(ex.problems, []);
});

test('mrope: Qwen2.5-VL\'s consecutive sections by default, Qwen3-VL\'s interleaved on the toggle; ids from mropePositions', async () => {
  await open();
  const canvas = await drawn('mrope');
  await ex.page.focus(canvas);
  assert.match(await readout('mrope'), /^pair 0: temporal section, θ = 1\.000000/);
  await ex.page.keyboard.press('End');
  assert.match(await readout('mrope'), /^pair 63: width section/);
  assert.match(await note('mrope'), /mrope_section 16, 24, 24; 104 tokens, the last at id 19/);
  assert.deepEqual(await dataOf('mrope', (d) => [0, 1, 2].map((g) => d.groups.filter((x) => x === g).length)), [16, 24, 24]);
  await reacts('mrope', () => ex.page.check('#control-mropeInterleaved'));
  assert.deepEqual(await dataOf('mrope', (d) => Array.from(d.groups.slice(0, 6))), [0, 1, 2, 0, 1, 2]);
  // The text after the image continues after the largest id: 4 + max(8, 12) = 16.
  assert.deepEqual(await dataOf('mrope', (d) => [d.ids[d.n - 4], d.ids[2 * d.n + 4], d.ids[2 * d.n + 15]]), [16, 4, 15]);
  await reacts('mrope', () => ex.page.fill('#control-mropeW', '20'));
  assert.match(await note('mrope'), /the last at id 27/);
  // Sections that do not fit head_dim are replaced, and the note says so.
  await ex.page.fill('#control-mropeSection', '8,8,8');
  await ex.page.press('#control-mropeSection', 'Tab');
  await ex.page.waitForFunction(() => /do not sum to the 64 rotary pairs/.test(document.querySelector('section[data-view="mrope"] .note').textContent));
  assert.deepEqual(ex.problems, []);
});

test('rope-2d: half the pairs follow rows, half columns; the score map moves with the query patch', async () => {
  await open();
  await drawn('rope-2d');
  assert.deepEqual(await dataOf('rope-2d', (d) => [d.groups.filter((g) => g === 0).length, d.groups.filter((g) => g === 1).length]), [32, 32]);
  // 2-D: a neighbour one row down scores like one column right; in reading order it does not.
  const [two, one] = await dataOf('rope-2d', (d) => d.near.map((p) => Math.abs(p.row - p.col)));
  assert.ok(two < one, `2-D ${two} vs 1-D ${one}`);
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dRow', '2'));
  assert.match(await readout('rope-2d'), /./);
  // A query in the last row and column scores its neighbours up and left (there is none down or
  // right: that was "NaN"), the same as down and right (cos is even), but for reading order's row,
  // now 6 positions away instead of 16; one patch has no neighbour.
  const scores = () => note('rope-2d').then((t) => t.match(/-?\d\.\d+/g).filter((_, i) => i !== 2));
  const inside = await scores();
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dRow', '4'));
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dCol', '5'));
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dH', '5'));
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dW', '6'));
  assert.match(await note('rope-2d'), /^Score from the query patch to its neighbours — 2-D: one row up [\d.−-]+, one column left [\d.−-]+; /);
  assert.doesNotMatch(await note('rope-2d'), /NaN/);
  assert.deepEqual(await scores(), inside);
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dH', '1'));
  await reacts('rope-2d', () => ex.page.fill('#control-grid2dW', '1'));
  assert.match(await note('rope-2d'), /^One patch: no neighbour to score/);
  assert.deepEqual(ex.problems, []);
});

test('attention-window: a sliding window, a chunk, sink tokens and a sink logit change the map as the masks say', async () => {
  await open();
  await drawn('attention-window');
  // Decoded token by token through pe.kvCache, the cache holds min(p + 1, W + sink tokens) tokens (all with the causal
  // mask) and gives pe.attention's outputs.
  const decoded = async (most) => {
    const { held, diff } = await dataOf('attention-window',
      (d) => ({ held: Array.from(d.series[2].y), diff: d.cacheDiff }));
    assert.deepEqual(held, held.map((_, p) => Math.min(p + 1, most)));
    assert.ok(diff <= 1e-5, `the cache's outputs differ from pe.attention's by ${diff}`);
  };
  const weight = (p, j) => dataOf('attention-window', new Function('d', `return d.values[${j} * d.n + ${p}]`));
  assert.equal(await weight(20, 12), 0, 'key 12 is outside the window of 8 for query 20');
  assert.ok(await weight(20, 13) > 0, 'key 13 is inside the window of 8 for query 20');
  await decoded(8);
  assert.match(await note('attention-window'), /the cache holds at most W = 8 tokens \(2 KiB of keys and values/);
  await reacts('attention-window', () => ex.page.fill('#control-winSize', '4'));
  assert.equal(await weight(20, 16), 0);
  assert.ok(await weight(20, 17) > 0);
  assert.match(await note('attention-window'), /Window W = 4: the query at p sees keys p − 3 … p/);
  await reacts('attention-window', () => ex.page.selectOption('#control-winMask', 'causal'));
  assert.ok(await weight(20, 12) > 0, 'causal only: every earlier key is visible');
  await decoded(Infinity);
  await reacts('attention-window', () => ex.page.selectOption('#control-winMask', 'chunk'));
  assert.equal(await weight(16, 15), 0, 'query 16 starts a new chunk of 16');
  assert.ok(await weight(31, 16) > 0);
  assert.deepEqual(await dataOf('attention-window', (d) => [d.series.length, d.cacheDiff]), [2, null]);
  assert.match(await note('attention-window'), /A KV cache has no chunk mode/);
  await ex.page.selectOption('#control-winMask', 'window');
  await reacts('attention-window', () => ex.page.fill('#control-winSinkTokens', '2'));
  assert.ok(await weight(30, 1) > 0 && await weight(30, 2) === 0, 'keys 0 and 1 stay visible as sink tokens');
  await decoded(4 + 2);
  // Sink tokens need a window (the package says so): with chunks they are set aside, not an error.
  await reacts('attention-window', () => ex.page.selectOption('#control-winMask', 'chunk'));
  assert.equal(await ex.page.$eval(view('attention-window'), (s) => s.classList.contains('failed')), false);
  assert.equal(await weight(30, 1), 0);
  await ex.page.selectOption('#control-winMask', 'window');
  await reacts('attention-window', () => ex.page.check('#control-winSinkLogit'));
  const minSum = await dataOf('attention-window', (d) => d.minSum);
  assert.ok(minSum < 0.99, `rows should lose weight to the sink logit (min Σ ${minSum})`);
  assert.match(await note('attention-window'), /Sink logit 2: rows sum to as little as/);
  await decoded(4 + 2);
  assert.deepEqual(ex.problems, []);
});

test('NoPE with a causal mask: the two sentences\' maps differ; without it they do not', async () => {
  await open();
  await drawn('attention');
  assert.equal(await ex.page.$eval('#control-attnScheme option[value="none"]', (o) => o.textContent), 'none (NoPE)');
  assert.ok(await dataOf('attention', (d) => d.worst) < 1e-6);
  await reacts('attention', () => ex.page.check('#control-attnCausal'));
  assert.ok(await dataOf('attention', (d) => d.worst) > 0.1);
  assert.match(await note('attention'), /NoPE with a causal mask: the maps differ by up to 0\.\d+/);
  assert.deepEqual(ex.problems, []);
});

test('irope: Llama-4-Scout\'s temperature, 1 until floor_scale, then a staircase', async () => {
  await open();
  await drawn('irope');
  assert.match(await note('irope'), /at position 8190: 1\.0000; at 8191 \(where \(p \+ 1\) \/ floor_scale reaches 1\): 1\.0693; at 131072: 1\.2833/);
  await reacts('irope', () => ex.page.fill('#control-iropeAttn', '0.2'));
  assert.match(await note('irope'), /at 8191 .*: 1\.1386/);
  assert.deepEqual(ex.problems, []);
});

test('irope: the view says which layers of the model on the page are NoPE, as readModel reads its config', async () => {
  await open();
  await drawn('irope');
  const sentence = `${view('irope')} .irope-layers`;
  const layers = () => ex.page.textContent(sentence);
  const says = (re) => ex.page.waitForFunction(({ sel, src }) => new RegExp(src).test(document.querySelector(sel)?.textContent ?? ''),
    { sel: sentence, src: re.source }, { timeout: 15000 });
  const marked = () => ex.page.$$eval(`${view('irope')} .layer-cells > span`, (s) => s.flatMap((x, l) => (x.classList.contains('nope') ? [l] : [])));
  assert.match(await layers(), /^No model chosen: the curve uses Llama-4-Scout's floor_scale \(8192\) and attn_scale \(0\.1\)/);
  // The preset holds the published config's no_rope_layers, [] (Llama4TextConfig then makes every
  // 4th layer NoPE), and the page lists the layers readModel gives for it.
  const published = await ex.page.evaluate(() => window.posencExplorer.pe.presets.presets.find((p) => p.id === 'llama-4-scout').config.text_config.no_rope_layers);
  assert.deepEqual(published, [], 'the package\'s presets lack no_rope_layers: dist/ is older than data/presets.json');
  const fromReadModel = await ex.page.evaluate(async () => {
    const { pe } = window.posencExplorer;
    const m = await pe.readModel(pe.presets.presets.find((p) => p.id === 'llama-4-scout').config);
    return m.irope.ropeLayers.flatMap((rope, l) => (rope ? [] : [l]));
  });
  assert.deepEqual(fromReadModel, Array.from({ length: 12 }, (_, i) => 4 * i + 3));
  await ex.page.selectOption('#preset', 'llama-4-scout');
  await says(/NoPE layers/);
  const scout = 'Llama-4-Scout-17B-16E (iRoPE) has 48 layers, counted from 0. NoPE layers (no positions, temperature-scaled queries): ' +
    '3, 7, 11, … 47 — every 4th, HF\'s default for an empty no_rope_layers. The other 36 use RoPE, attending only within chunks of 8192 tokens (attention_chunk_size).';
  assert.equal(await layers(), scout);
  await drawn('irope', await renders('irope') - 1);
  assert.deepEqual(await marked(), fromReadModel);
  // A typed change and Back keep the model's layers; Back to the lesson defaults drops them.
  await ex.page.fill('#control-iropeSpan', '32');
  await ex.page.press('#control-iropeSpan', 'Enter');
  await ex.page.waitForFunction(() => window.posencExplorer.state.iropeSpan === 32);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.iropeSpan === 16 && window.posencExplorer.state.preset === 'llama-4-scout');
  await drawn('irope', await renders('irope') - 1);
  assert.equal(await layers(), scout);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.preset === '');
  await says(/^No model chosen/);
  assert.deepEqual(await marked(), []);
  // A pasted config with its own list (1 = RoPE, 0 = NoPE) and the temperature off.
  await ex.page.click('#paste summary');
  const own = { model_type: 'llama4_text', head_dim: 64, num_attention_heads: 8, rope_theta: 500000, num_hidden_layers: 8,
    attention_chunk_size: 4096, no_rope_layers: [1, 0, 1, 1, 1, 1, 1, 0], attn_temperature_tuning: false };
  await ex.page.fill('#config-text', JSON.stringify(own));
  await ex.page.click('#config-apply');
  await says(/^The pasted config has 8 layers/);
  assert.equal(await layers(), 'The pasted config has 8 layers, counted from 0. NoPE layers (no positions; attn_temperature_tuning is off, so no temperature): ' +
    '1, 7 — as the config\'s no_rope_layers lists them (0 = NoPE). The other 6 use RoPE, attending only within chunks of 4096 tokens (attention_chunk_size).');
  // An opened config.json: readModel's layers, whatever the file's list said.
  const scoutConfig = await ex.page.evaluate(() => window.posencExplorer.pe.presets.presets.find((p) => p.id === 'llama-4-scout').config);
  await ex.page.setInputFiles('#model-file-input', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(JSON.stringify(scoutConfig)) });
  await says(/^“config\.json” has 48 layers/);
  assert.match(await layers(), /NoPE layers \(no positions, temperature-scaled queries\): 3, 7, 11, … 47 — every 4th, as readModel reads the file\./);
  // A model without Llama 4's keys has none.
  await ex.page.selectOption('#preset', 'gpt2');
  await says(/^GPT-2 \(124M\) has no NoPE layers that readModel can see/);
  assert.deepEqual(ex.problems, []);
});

test('the Qwen2.5-VL, Llama-4-Scout and gpt-oss presets load into every view', async () => {
  // Every fold open: the presets must load into the views beyond the lesson too.
  await open(`#deeper=${await ex.page.evaluate(() => [...document.querySelectorAll('details.deeper')].map((d) => d.dataset.fold).join(','))}`);
  const ids = await ex.page.$$eval('section[data-view]', (s) => s.map((x) => x.dataset.view));
  const expect = {
    'qwen2.5-vl-7b': (st) => [st.mropeSection, st.mropeInterleaved, st.dModel, st.theta].join() === '16,24,24,false,128,1000000',
    'llama-4-scout': (st) => [st.winMask, st.winChunk, st.iropeFloor, st.iropeAttn, st.layout, st.dModel].join() === 'chunk,8192,8192,0.1,interleaved,128',
    'gpt-oss-20b': (st) => [st.winMask, st.winSize, st.winLen].join() === 'window,128,256',
  };
  for (const [preset, ok] of Object.entries(expect)) {
    // From another model first: nothing of it may remain.
    await ex.page.selectOption('#preset', 'gpt2');
    await ex.page.waitForFunction(() => window.posencExplorer.state.preset === 'gpt2');
    await ex.page.selectOption('#preset', preset);
    await ex.page.waitForFunction((p) => window.posencExplorer.state.preset === p, preset);
    assert.ok(ok(await state()), `${preset}: ${JSON.stringify(await state())}`);
    assert.match(await ex.page.textContent('#model-message'), { 'qwen2.5-vl-7b': /mrope_section 16,24,24/, 'llama-4-scout': /attention_chunk_size 8192, floor_scale 8192, attn_scale 0\.1/, 'gpt-oss-20b': /sliding_window 128/ }[preset]);
    for (const id of ids) {
      await ex.page.$eval(view(id), (s) => s.scrollIntoView());
      await ex.page.waitForFunction((i) => !window.posencExplorer.views.find((v) => v.def.id === i).dirty, id, { timeout: 15000 });
      assert.equal(await ex.page.$eval(view(id), (s) => s.classList.contains('failed')), false, `${preset}: ${id} failed: ${await note(id)}`);
    }
  }
  await drawn('attention-window');
  assert.match(await note('attention-window'), /Window W = 128: the query at p sees keys p − 127 … p/);
  assert.deepEqual(ex.problems, []);
});
