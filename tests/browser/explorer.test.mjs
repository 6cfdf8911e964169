// The explorer in headless Debian Chromium: loads clean under its strict CSP, every chapter and
// view draws with numbers from the package, each view reacts to its own control, settings and
// history behave (presets start from the defaults, Back undoes a typed change, the theme stays out
// of the URL), the phone layout shows a plot on its first screen, and redraws stay fast.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { gguf, npy, safetensors } from '../js/model_writer.mjs';
import { EXPLORER } from '../../scripts/serve.mjs';
import { distinctColors, explorerSession } from './launch.mjs';

const artifacts = new URL('../../test-results/', import.meta.url);
// The chapters and views, in page order, as docs/explorer.md's "Chapters and views" table documents
// them (views after "go deeper:" in the chapter's fold): the page (web/index.html declares them) must
// show exactly those, each where the table puts it.
const [CHAPTERS, VIEWS, FOLDED] = await (async () => {
  const md = await readFile(new URL('../../docs/explorer.md', import.meta.url), 'utf8');
  const table = md.split('## Chapters and views')[1].split('\n## ')[0];
  const rows = [...table.matchAll(/^\| `([a-z-]+)` \| ([^|]+) \|/gm)];
  const names = (text) => [...text.matchAll(/`([a-z0-9-]+)`/g)].map((m) => m[1]);
  return [rows.map((r) => r[1]), rows.flatMap((r) => names(r[2])),
    rows.flatMap((r) => names(r[2].split('go deeper:')[1] ?? ''))];
})();
// Views with no canvas: a table of the package's numbers.
const TABLE_VIEWS = ['worked-example', 'comparison-table'];
const ex = explorerSession();
const { view, state, renders, pixels, open, drawn, reacts } = ex;


before(async () => {
  await ex.start();
  await mkdir(artifacts, { recursive: true });
});
after(async () => ex.close && ex.close());

test('the page loads the WASM module with a strict CSP and no console, page or request errors', async () => {
  const response = await ex.page.goto(`${ex.origin}/`);
  assert.match(response.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  await ex.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  assert.equal(await ex.page.isVisible('#error'), false);
  assert.match(await ex.page.textContent('#status'), /SIMD: wasm/);
  assert.deepEqual(ex.problems, []);
});

// The other files drive the production build (launch.mjs); the page as written, which
// `node scripts/serve.mjs --dev` serves while one edits it, must load and draw as well, with the
// lab's shipped data fetched by its path in data/ (a hashed asset in the build).
test('the page as written (web/, serve.mjs --dev) loads, draws and fetches the lab\'s data with no error', async () => {
  const dev = explorerSession(EXPLORER);
  await dev.start();
  try {
    await dev.open('#deeper=lab');
    assert.equal(await dev.page.isVisible('#error'), false);
    assert.match(await dev.page.textContent('#status'), /SIMD: wasm.* [1-9]\d* visible views drawn/);
    for (const id of ['lab-extrapolation', 'lab-extension']) {
      await dev.drawn(id);
      assert.match(await dev.page.textContent(`${dev.view(id)} .note`), /\d/, id);
    }
    assert.deepEqual(dev.problems, []);
  } finally {
    await dev.close();
  }
});

test('the server isolates the page (COOP/COEP), so the explorer runs on the threaded build', async () => {
  const response = await ex.page.goto(`${ex.origin}/`);
  assert.equal(response.headers()['cross-origin-opener-policy'], 'same-origin');
  assert.equal(response.headers()['cross-origin-embedder-policy'], 'require-corp');
  await ex.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
  const { isolated, threads, cores } = await ex.page.evaluate(() => ({
    isolated: crossOriginIsolated, threads: window.posencExplorer.pe.threads, cores: navigator.hardwareConcurrency }));
  assert.equal(isolated, true);
  assert.equal(threads, Math.max(1, Math.min(4, cores)));
  assert.match(await ex.page.textContent('#status'), new RegExp(`threads: ${threads}`));
  assert.deepEqual(ex.problems, []);
});

test('chapters come in the lesson\'s order, with a table of contents and a skip link', async () => {
  assert.deepEqual(await ex.page.$$eval('section[data-chapter]', (s) => s.map((x) => x.dataset.chapter)), CHAPTERS);
  assert.deepEqual(await ex.page.$$eval('.toc > ol > li:not(.extra) > a', (a) => a.map((x) => x.getAttribute('href'))),
    CHAPTERS.map((c) => `#chapter-${c}`));
  assert.deepEqual(await ex.page.$$eval('section[data-view]', (s) => s.map((x) => x.dataset.view)), VIEWS);
  // Beyond the lesson means in the chapter's fold, and only that.
  assert.deepEqual(await ex.page.$$eval('details.deeper section[data-view]', (s) => s.map((x) => x.dataset.view)), FOLDED);
  // Every link of the contents leads somewhere: a chapter, a view of the path, the takeaways or the errata.
  for (const href of await ex.page.$$eval('.toc a', (a) => a.map((x) => x.getAttribute('href')))) {
    assert.ok(await ex.page.$(`main ${href}`), `the contents link ${href} leads nowhere`);
  }
  assert.equal(await ex.page.$eval('section[data-view="attention"]', (s) => s.closest('[data-chapter]').dataset.chapter), 'order');
  await ex.page.keyboard.press('Tab');
  assert.equal(await ex.page.evaluate(() => document.activeElement.getAttribute('href')), '#chapter-order');
  // A chapter link keeps the settings (the URL's hash holds them), moves the focus to the chapter
  // and leaves its heading in sight below the sticky settings bar (open on a desktop).
  await ex.page.evaluate(() => { location.hash = 'seqLen=300'; });
  await ex.page.waitForFunction(() => document.querySelector('#settings-summary').textContent.includes('seq_len 300'));
  await ex.page.focus('.toc a[href="#chapter-long-context"]');
  await ex.page.keyboard.press('Enter');
  await ex.page.waitForFunction(() => document.activeElement?.id === 'chapter-long-context');
  await ex.page.waitForTimeout(1500);  // views near the target draw and grow the chapters above it
  const { heading, bar, hash, summary } = await ex.page.evaluate(() => ({
    heading: document.querySelector('#chapter-long-context > h2').getBoundingClientRect().top,
    bar: document.querySelector('#settings').getBoundingClientRect().bottom,
    hash: location.hash, summary: document.querySelector('#settings-summary').textContent }));
  assert.ok(heading >= bar && heading < bar + 60, `the heading (top ${heading}) is not just below the settings bar (bottom ${bar})`);
  assert.equal(hash, '#seqLen=300');
  assert.match(summary, /seq_len 300/);
  await open();
});

test('every view draws non-blank at its defaults, with a title and an explanation', async () => {
  await ex.page.screenshot({ path: new URL('explorer.png', artifacts).pathname });
  for (const id of VIEWS) {
    if (TABLE_VIEWS.includes(id)) continue;
    const canvas = await drawn(id);
    assert.ok(await distinctColors(ex.page, canvas) > 8, `${id} is blank`);
    assert.equal(await ex.page.$eval(view(id), (s) => s.classList.contains('failed')), false, `${id} refused its defaults`);
    assert.ok(await ex.page.$eval(`${view(id)} .explain`, (p) => p.textContent.length > 80), `${id} explains nothing`);
    await (await ex.page.$(view(id))).screenshot({ path: new URL(`view-${id}.png`, artifacts).pathname });
  }
  await drawn('comparison-table');
  // One row per lab scheme but NoPE, in the lab's order (pe.lab.schemes; the lab menu's boxes are those).
  const rows = await ex.page.$$eval(`${view('comparison-table')} tbody tr`, (r) => r.map((tr) => tr.dataset.scheme));
  const schemes = await ex.page.$$eval('input[name^="labSchemes-"]', (b) => b.map((x) => x.value));
  assert.ok(schemes.length >= 11 && schemes[0] === 'none', `lab menu: ${schemes}`);
  assert.deepEqual(rows, schemes.filter((s) => s !== 'none'));
  assert.deepEqual(ex.problems, []);
});

test('each new view reacts to its own control', async () => {
  await open();
  await reacts('attention', () => ex.page.selectOption('#control-attnScheme', 'rope'));
  assert.match(await ex.page.textContent(`${view('attention')} .note`), /With RoPE on q and k: the maps differ by up to/);
  // Counted before the change: counted after it, a drawing still to come would pass as done.
  const before = await renders('attention');
  await ex.page.selectOption('#control-attnScheme', 'none');
  await drawn('attention', before);
  assert.match(await ex.page.textContent(`${view('attention')} .note`), /No positions: the re-ordered map (is exactly|equals)/);
  await reacts('embedding', () => ex.page.uncheck('#control-embScale'));
  assert.match(await ex.page.textContent(`${view('embedding')} .note`), /Unscaled, the position dominates/);
  await reacts('shift', () => ex.page.fill('#control-shiftK', '7'));
  assert.match(await ex.page.textContent(`${view('shift')} .note`), /Largest error over the whole vector: \d/);
  // The worked example, one row per dimension: position 5's first pair is (sin 5, cos 5); the erratum
  // says what some copies print instead.
  await drawn('worked-example');
  const worked = await ex.page.$$eval(`${view('worked-example')} tbody tr`, (trs) => trs.map((tr) => [...tr.querySelectorAll('td')]
    .map((td) => td.textContent)));
  assert.equal(worked.length, 8);
  assert.deepEqual([worked[0][2], worked[1][2]], ['-0.959', '0.284']);
  assert.deepEqual(worked.map((r) => r[0]), ['0.000', '1.000', '0.000', '1.000', '0.000', '1.000', '0.000', '1.000']);
  assert.match(await ex.page.textContent('#erratum-row5 .lesson-says'), /0\.959 -0\.279/);
  await ex.page.$eval('#errata', (s) => s.scrollIntoView());  // computed once the list is near the screen
  await ex.page.waitForFunction(() => /sin 5 = -0\.959 and cos 5 = 0\.284/.test(document.querySelector('#erratum-row5 .correction')
    .textContent));
  await reacts('rope-rotation', () => ex.page.fill('#control-rotShift', '40'));
  assert.match(await ex.page.textContent(`${view('rope-rotation')} .note`), /at s = 40/);
  await reacts('rope-relative', () => ex.page.fill('#control-relLen', '20'));
  assert.match(await ex.page.textContent(`${view('rope-relative')} .note`), /RoPE: \S+ \(float32 rounding\), none: 0\.000, sinusoidal added: 0\.[1-9]/);
  await reacts('cross-terms', () => ex.page.fill('#control-crossLen', '12'));
  assert.match(await ex.page.textContent(`${view('cross-terms')} .note`), /12 words/);
  // Context shift: shifted cached keys equal recomputed ones to float32 rounding; stale ones do not.
  await reacts('context-shift', () => ex.page.fill('#control-shiftDelta', '100'));
  const shiftNote = await ex.page.textContent(`${view('context-shift')} .note`);
  const [, worst, stale] = shiftNote.match(/shifted and recomputed keys: (\S+) \(rounding.*off by up to (\S+) in a score/) ?? [];
  assert.ok(Number(worst) < 1e-3 && Number(stale) > 0.01, shiftNote);
  assert.match(shiftNote, /held the 64 keys turned at positions 100 … 163; cache\.shift\(−100\) moved them to 0 … 63/);
  // With precision accurate the cache's shift matches the recomputed keys to float32 rounding even at Δ = 65536, and
  // so does the next query's output through the cache; the stale keys and output are far off.
  await ex.page.click('details[data-fold="long-context"] > summary');  // the precision control is in that fold
  await ex.page.selectOption('#control-precision', 'accurate');
  await ex.page.fill('#control-shiftDelta', '65536');
  await ex.page.press('#control-shiftDelta', 'Enter');
  const shift = await ex.page.waitForFunction(() => {
    const d = window.posencExplorer.views.find((v) => v.def.id === 'context-shift').data;
    const done = d?.precision === 'accurate' && d.delta === 65536;
    return done && { worst: d.worst, stale: d.stale, out: d.outShifted, outStale: d.outStale };
  }, null, { timeout: 15000 }).then((h) => h.jsonValue());
  assert.ok(shift.worst <= 1e-5 && shift.out <= 1e-5, JSON.stringify(shift));
  assert.ok(shift.stale > 0.1 && shift.outStale > 0.1, JSON.stringify(shift));
  // The learned lookup past max_len fails plainly: the table at initialisation is max_len × d_model (the
  // trained one, drawn by default, is the lab's 64 × 64: tests/browser/trained.test.mjs).
  await reacts('learned', () => ex.page.selectOption('#control-learnedSource', 'init'));
  await reacts('learned', () => ex.page.fill('#control-learnedPos', '512'));
  assert.match(await ex.page.textContent(`${view('learned')} .note`), /No row for position 512: the table has rows 0 … 511 only/);
  // The comparison table counts parameters for the current settings.
  await drawn('comparison-table');
  assert.match(await ex.page.textContent(`${view('comparison-table')} tr[data-scheme="learned"]`), /65,536/);
  // Measured from the lab's shipped result from the start (tests/browser/lab.test.mjs checks the numbers).
  assert.match(await ex.page.textContent(`${view('comparison-table')} tr[data-scheme="rope"] [data-extrapolation]`), /the usual claim; measured: \d/);
  await ex.page.evaluate(() => window.posencExplorer.setMeasuredExtrapolation({ rope: 1.5 }));
  await ex.page.waitForFunction(() => /measured: 1\.50/.test(document.querySelector('tr[data-scheme="rope"] [data-extrapolation]').textContent));
  assert.deepEqual(ex.problems, []);
});

test('the view-specific controls of the older views sit in their views and drive them', async () => {
  await open();
  for (const [id, control] of [['dim-traces', 'dims'], ['clocks', 'pos'], ['compare', 'compare'], ['score-vs-distance', 'schemes'], ['alibi', 'maxBias'], ['t5-buckets', 't5Buckets']]) {
    assert.ok(await ex.page.$(`${view(id)} [name^="${control}"]`), `${id} lacks its ${control} control`);
  }
  await reacts('compare', () => ex.page.selectOption('#control-compare', 'linear'));
  await reacts('score-vs-distance', () => ex.page.uncheck(`${view('score-vs-distance')} input[name="schemes-alibi"]`));
  assert.ok(await ex.page.$(`${view('clocks')} button.play`));
  assert.deepEqual(ex.problems, []);
});

test('a preset starts from the defaults: Gemma-3-4B then GPT-2 gives GPT-2\'s θ back', async () => {
  await open();
  await ex.page.selectOption('#preset', 'gemma-3-4b');
  await ex.page.waitForFunction(() => window.posencExplorer.state.preset === 'gemma-3-4b');
  let st = await state();
  assert.equal(st.theta, 1000000);
  assert.equal(st.dModel, 256);
  assert.equal(st.scaling, 'linear');
  assert.equal(await ex.page.inputValue('#control-theta'), '1000000');
  // Its local layers: the layer type select appears for Gemma only.
  await ex.page.selectOption('#layer-type', 'sliding_attention');
  await ex.page.waitForFunction(() => window.posencExplorer.state.theta === 10000);
  assert.equal((await state()).scaling, 'none');
  await ex.page.selectOption('#layer-type', 'full_attention');
  await ex.page.waitForFunction(() => window.posencExplorer.state.theta === 1000000);
  await ex.page.selectOption('#preset', 'gpt2');
  await ex.page.waitForFunction(() => window.posencExplorer.state.preset === 'gpt2');
  st = await state();
  assert.equal(st.theta, 10000, 'θ leaked from Gemma');
  assert.equal(st.scaling, 'yarn', 'the scaling leaked from Gemma');
  assert.equal(st.dModel, 768);
  assert.equal(st.maxLen, 1024);
  assert.equal(st.heads, 12);
  assert.equal(st.attnScheme, 'learned');
  assert.equal(await ex.page.inputValue('#control-theta'), '10000');
  assert.equal(await ex.page.isVisible('#layer-type-label'), false);
  // Llama-3.1: L_target is max_position_embeddings, the factor stays the config's.
  await ex.page.selectOption('#preset', 'llama-3.1-8b');
  await ex.page.waitForFunction(() => window.posencExplorer.state.preset === 'llama-3.1-8b');
  st = await state();
  assert.deepEqual([st.lTrain, st.lTarget, st.factor, st.scaling], [8192, 131072, 8, 'llama3']);
  assert.equal(await ex.page.$eval('#control-betaFast', (i) => i.closest('.control').classList.contains('dim')), true);
  await drawn('spectrum');
  await ex.page.focus(`${view('spectrum')} canvas`);
  for (let i = 0; i < 40; i++) await ex.page.keyboard.press('ArrowRight');
  const readout = await ex.page.textContent(`${view('spectrum')} .readout`);
  const { init } = await import('posenc');
  const pe = await init();
  const preset = pe.presets.presets.find((p) => p.id === 'llama-3.1-8b');
  const f = pe.ropeFrequencies(pe.ropeParamsFromConfig(preset.config), { dtype: 'float64' }).invFreq;
  const shown = Number(readout.match(/^pair 40: wavelength .* → (\S+) positions/)[1]);
  assert.ok(Math.abs(shown / ((2 * Math.PI) / f[40]) - 1) < 1e-3, readout);
  assert.deepEqual(ex.problems, []);
});

test('a pasted config goes to its own scheme, or is refused with what could not be read', async () => {
  await open();
  await ex.page.click('#paste summary');
  const paste = async (config) => {
    await ex.page.fill('#config-text', typeof config === 'string' ? config : JSON.stringify(config));
    await ex.page.click('#config-apply');
    return ex.page.textContent('#model-message');
  };
  assert.match(await paste({ model_type: 'gpt2', n_positions: 1024, n_embd: 768, n_head: 12 }), /learned/);
  assert.deepEqual(await ex.page.evaluate(() => { const s = window.posencExplorer.state; return [s.attnScheme, s.dModel, s.maxLen, s.heads]; }), ['learned', 768, 1024, 12]);
  assert.match(await paste({ model_type: 'bert', max_position_embeddings: 512, hidden_size: 768, num_attention_heads: 12, position_embedding_type: 'absolute' }), /learned/);
  assert.equal((await state()).maxLen, 512);
  assert.match(await paste({ model_type: 'mpt', d_model: 4096, n_heads: 32, max_seq_len: 2048, attn_config: { alibi: true, alibi_bias_max: 8 } }), /alibi/);
  assert.deepEqual(await ex.page.evaluate(() => { const s = window.posencExplorer.state; return [s.attnScheme, s.heads, s.seqLen]; }), ['alibi', 32, 2048]);
  assert.match(await paste({ model_type: 'bloom', hidden_size: 1024, n_head: 16 }), /alibi/);
  assert.match(await paste({ model_type: 't5', d_model: 768, num_heads: 12, relative_attention_num_buckets: 32, relative_attention_max_distance: 128 }), /t5/);
  assert.deepEqual(await ex.page.evaluate(() => { const s = window.posencExplorer.state; return [s.attnScheme, s.heads, s.t5Buckets]; }), ['t5', 12, 32]);
  assert.match(await paste({ head_dim: 64, rope_theta: 150000, num_attention_heads: 64, max_position_embeddings: 131072, rope_scaling: { rope_type: 'yarn', factor: 32, original_max_position_embeddings: 4096, truncate: false } }), /rope/);
  assert.deepEqual(await ex.page.evaluate(() => { const s = window.posencExplorer.state; return [s.scaling, s.truncate, s.heads, s.lTarget, s.theta]; }), ['yarn', false, 64, 131072, 150000]);
  assert.match(await paste({ vocab_size: 50000 }), /Not a config this page can read/);
  assert.equal(await ex.page.$eval('#model-message', (m) => m.classList.contains('bad')), true);
  assert.match(await paste('{"head_dim": 64,'), /Not JSON/);
  assert.match(await paste({ head_dim: 64, rope_scaling: { type: 'wobbly' } }), /"wobbly" is not one of/);
  assert.equal((await state()).theta, 150000, 'a refused config changed the settings');
  assert.deepEqual(ex.problems, []);
});

test('Back undoes a typed change, one entry per committed change; a slider drag is one entry', async () => {
  await ex.freshTab();
  await open();
  const length = await ex.page.evaluate(() => history.length);
  await ex.page.fill('#control-dModel', '64');
  await ex.page.press('#control-dModel', 'Tab');
  await ex.page.waitForFunction(() => /dModel=64/.test(location.hash));
  assert.equal(await ex.page.evaluate(() => history.length), length + 1);
  await ex.page.selectOption('#control-attnScheme', 'sinusoidal');
  assert.match(ex.page.url(), /attnScheme=sinusoidal/);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.attnScheme === 'none');
  assert.equal(await ex.page.inputValue('#control-attnScheme'), 'none');
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.dModel === 128);
  assert.equal(await ex.page.inputValue('#control-dModel'), '128');
  // A drag: many input events and one change make one entry, so Back skips every step of it.
  const slider = 'input[type="range"][data-for="seqLen"]';
  for (const v of [300, 320, 340, 360]) await ex.page.$eval(slider, (el, x) => { el.value = String(x); el.dispatchEvent(new Event('input', { bubbles: true })); }, v);
  await ex.page.$eval(slider, (el) => el.dispatchEvent(new Event('change', { bubbles: true })));
  assert.notEqual((await state()).seqLen, 100);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.seqLen === 100);
  assert.deepEqual(ex.problems, []);
});

test('values typed one after another are one history entry each (issue 20); one value\'s keystrokes and a drag stay one', async () => {
  await ex.freshTab();
  await open();
  const length0 = await ex.page.evaluate(() => history.length);
  const entries = async () => (await ex.page.evaluate(() => history.length)) - length0;
  const settle = () => ex.page.waitForTimeout(1000);  // a second between values, as a reader types them
  // As a reader types: focus the box, select its text, type, Enter. `delay` spaces the keystrokes.
  const type = async (key, value, delay = 0) => {
    const box = `#control-${key}`;
    await ex.page.$eval(box, (el) => el.scrollIntoView({ block: 'center' }));
    await ex.page.focus(box);
    await ex.page.$eval(box, (el) => el.select());
    await ex.page.keyboard.type(value, { delay });
    await ex.page.keyboard.press('Enter');
  };
  // What the page shows at each step: the settings, the hash and the boxes, the one just typed in
  // (it keeps the focus, as when a reader presses Enter and then Back) included.
  const shows = async (expect) => {
    const sel = Object.keys(expect).map((k) => `#control-${k}`);
    await ex.page.waitForFunction((e) => Object.entries(e).every(([k, v]) => window.posencExplorer.state[k] === v), expect);
    const hash = await ex.page.evaluate(() => location.hash);
    for (const [k, v] of Object.entries(expect)) {
      const d = { seqLen: 100, theta: 10000, dModel: 128 }[k];
      assert.equal(new URLSearchParams(hash.slice(1)).get(k), v === d ? null : String(v), `${k} in ${hash}`);
    }
    assert.deepEqual(await Promise.all(sel.map((s) => ex.page.inputValue(s))), Object.values(expect).map(String));
  };
  // seq_len 100 → 200 → 300 in the settings bar, then θ twice in the RoPE chapter, then d_model.
  const steps = [['seqLen', 200], ['seqLen', 300], ['theta', 20000], ['theta', 500000], ['dModel', 64]];
  const states = [{ seqLen: 100, theta: 10000, dModel: 128 }];
  for (const [key, value] of steps) {
    await type(key, String(value));
    await settle();
    states.push({ ...states.at(-1), [key]: value });
    assert.equal(await entries(), states.length - 1, `after typing ${key} ${value}`);
    await shows(states.at(-1));
  }
  for (let i = states.length - 2; i >= 0; i--) {
    await ex.page.goBack();
    await shows(states[i]);
  }
  for (let i = 1; i < states.length; i++) {
    await ex.page.goForward();
    await shows(states[i]);
  }
  // One value typed slowly (the page writes the URL between keystrokes) is still one entry.
  await type('seqLen', '4000', 400);
  await settle();
  assert.equal(await entries(), states.length);
  await shows({ ...states.at(-1), seqLen: 4000 });
  await ex.page.goBack();
  await shows(states.at(-1));
  await ex.page.goForward();
  await shows({ ...states.at(-1), seqLen: 4000 });
  // A drag with the mouse, pausing on the way, is one entry; Back (the slider still focused) puts
  // the thumb back; a value typed after the drag is its own entry.
  const slider = await ex.page.$('input[type="range"][data-for="seqLen"]');
  await slider.scrollIntoViewIfNeeded();
  const thumb0 = await slider.inputValue();
  const box = await slider.boundingBox();
  const y = box.y + box.height / 2;
  await ex.page.mouse.move(box.x + box.width * 0.4, y);
  await ex.page.mouse.down();
  for (const f of [0.45, 0.5, 0.55, 0.6]) {
    await ex.page.mouse.move(box.x + box.width * f, y, { steps: 3 });
    await ex.page.waitForTimeout(300);
  }
  await ex.page.mouse.up();
  const dragged = (await state()).seqLen;
  assert.ok(![100, 4000].includes(dragged), `the drag left seq_len at ${dragged}`);
  await settle();
  assert.equal(await entries(), states.length + 1);
  const thumb = await slider.inputValue();
  assert.equal(await ex.page.evaluate(() => document.activeElement.dataset.for), 'seqLen');
  await ex.page.goBack();
  await shows({ ...states.at(-1), seqLen: 4000 });
  assert.equal(await slider.inputValue(), thumb0);
  await ex.page.goForward();
  await shows({ ...states.at(-1), seqLen: dragged });
  assert.equal(await slider.inputValue(), thumb);
  await type('seqLen', '300');
  await settle();
  assert.equal(await entries(), states.length + 2);
  await ex.page.goBack();
  await shows({ ...states.at(-1), seqLen: dragged });
  await ex.page.goBack();
  await shows({ ...states.at(-1), seqLen: 4000 });
  assert.deepEqual(ex.problems, []);
});

test('a value the page must refuse is refused visibly with the rule, and the settings keep the last good one', async () => {
  await open();
  await ex.page.fill('#control-dModel', '5000');
  assert.match(await ex.page.textContent('#control-dModel ~ .rule'), /d_model must be an even whole number from 2 to 4096/);
  assert.equal((await state()).dModel, 128);
  // Odd widths are refused too (tests/browser/quality.test.mjs): sin and cos, and RoPE, pair dimensions.
  assert.deepEqual(ex.problems, []);
});

test('keyboard: PageUp/PageDown and Home/End move plot cursors in big steps', async () => {
  await open('#seqLen=1000');
  const canvas = await drawn('pe-heatmap');
  await ex.page.focus(canvas);
  const readout = () => ex.page.textContent(`${view('pe-heatmap')} .readout`);
  await ex.page.keyboard.press('Home');
  assert.match(await readout(), /^interleaved: pos 0, dim 0/);
  await ex.page.keyboard.press('PageUp');
  assert.match(await readout(), /^interleaved: pos 100, dim 0/);
  await ex.page.keyboard.press('End');
  assert.match(await readout(), /^interleaved: pos 999, dim 0/);
  await ex.page.keyboard.press('PageDown');
  assert.match(await readout(), /^interleaved: pos 899, dim 0/);
  // Past the last position of the first map the cursor goes on into the second, the concat layout.
  await ex.page.keyboard.press('End');
  await ex.page.keyboard.press('ArrowRight');
  assert.match(await readout(), /^concat: pos 0, dim 0 \(sin half\)/);
  assert.deepEqual(ex.problems, []);
});

test('T5 buckets that max distance does not reach past are refused in words, with no page error', async () => {
  await open('#t5Buckets=1024&t5MaxDist=128');
  await ex.page.$eval(view('t5-buckets'), (s) => s.scrollIntoView());
  await ex.page.waitForSelector(`${view('t5-buckets')}.failed`);
  const note = await ex.page.textContent(`${view('t5-buckets')} .note`);
  assert.match(note, /max distance must be more than 512; 128 is not\. Raise max distance or lower the buckets/);
  assert.doesNotMatch(note, /t5Bucket/);
  assert.match(await ex.page.textContent('[data-live="t5-last"]'), /which T5 refuses: max distance must be more than 512/);
  assert.deepEqual(ex.problems, []);
});

test('plots that sample fewer columns than positions say so', async () => {
  await open('#seqLen=131072');
  await drawn('pe-heatmap');
  assert.match(await ex.page.textContent(`${view('pe-heatmap')} .note`), /Sampled: every 65th of 131072 positions/);
  await drawn('similarity');
  assert.match(await ex.page.textContent(`${view('similarity')} .note`), /Largest change along any diagonal: \S+ .*Sampled: every \d+(st|nd|rd|th) of 131072 positions, evenly/);
  assert.deepEqual(ex.problems, []);
});

test('the theme lives in local storage, never in the URL', async () => {
  await open();
  await ex.page.selectOption('#theme', 'dark');
  assert.equal(await ex.page.getAttribute('html', 'data-theme'), 'dark');
  assert.doesNotMatch(ex.page.url(), /theme/);
  assert.equal(await ex.page.evaluate(() => localStorage.getItem('posenc-explorer-theme')), 'dark');
  await open('#theme=light');
  assert.equal(await ex.page.getAttribute('html', 'data-theme'), 'dark');
  assert.equal(await ex.page.evaluate(() => getComputedStyle(document.body).backgroundColor), 'rgb(20, 23, 28)');
  await ex.page.selectOption('#theme', 'auto');
  assert.deepEqual(ex.problems, []);
});

test('on a 390 × 844 phone the first screen shows the title, the start text and a plot', async () => {
  await ex.page.setViewportSize({ width: 390, height: 844 });
  try {
    await open();
    assert.equal(await ex.page.getAttribute('#settings-toggle', 'aria-expanded'), 'false');
    assert.equal(await ex.page.isVisible('#control-dModel'), false);
    const top = (sel) => ex.page.$eval(sel, (e) => e.getBoundingClientRect().top);
    assert.ok(await top('h1') < 844 && await top('.start') < 844);
    const canvasTop = await top(`${view('attention')} canvas`);
    assert.ok(canvasTop < 844 - 150, `the first plot starts at ${canvasTop}px`);
    assert.ok(await distinctColors(ex.page, `${view('attention')} canvas`) > 8);
    const overflow = await ex.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
    assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
    await ex.page.screenshot({ path: new URL('explorer-390px.png', artifacts).pathname });
    await ex.page.click('#settings-toggle');
    assert.equal(await ex.page.isVisible('#control-dModel'), true);
  } finally {
    await ex.page.setViewportSize({ width: 1200, height: 900 });
  }
  assert.deepEqual(ex.problems, []);
});

test('export gives a PNG at 1x and 2x and a CSV with the parameters in the caption', async () => {
  await open();
  await drawn('pe-heatmap');
  const section = view('pe-heatmap');
  const width = await ex.page.$eval(`${section} canvas`, (c) => c.clientWidth);
  for (const [button, scale] of [['png1', 1], ['png2', 2]]) {
    const [download] = await Promise.all([ex.page.waitForEvent('download'), ex.page.click(`${section} button[data-export="${button}"]`)]);
    assert.equal(download.suggestedFilename(), `posenc-pe-heatmap@${scale}x.png`);
    const path = new URL(download.suggestedFilename(), artifacts).pathname;
    await download.saveAs(path);
    const png = await readFile(path);
    assert.equal(png.subarray(1, 4).toString(), 'PNG');
    assert.equal(png.readUInt32BE(16), Math.round(width * scale));
  }
  const [csv] = await Promise.all([ex.page.waitForEvent('download'), ex.page.click(`${section} button[data-export="csv"]`)]);
  const lines = (await readFile(await csv.path(), 'utf8')).split('\n');
  assert.equal(lines[0], '# posenc · sinusoidal seq_len=100 d_model=128 base=10000 layouts=interleaved,concat');
  // The two layouts one after the other, each with its header.
  assert.equal(lines[1], 'pos,dim,pe_interleaved');
  assert.equal(lines[2 + 100 * 128], 'pos,dim,pe_concat');
  assert.equal(lines.length - 4, 2 * 100 * 128);
  assert.match(lines[2 + 128], /^1,0,0\.84147/);  // pos 1, dim 0 = sin(1)
  assert.match(lines[3 + 100 * 128 + 128 + 64], /^1,64,0\.54030/);  // concat: pos 1, dim 64 = cos(1)
  await ex.page.click(`${section} details.table summary`);
  assert.match(await ex.page.textContent(`${section} table tbody tr:nth-child(129)`), /^10(0\.84147)/);
  // ALiBi with 12 heads draws its rows by slope; the CSV still names the head of each row (the
  // steepest is head 8, slope 2^-0.5: bias -0.7071 one position back).
  await open('#heads=12');
  await drawn('alibi');
  const [alibiCsv] = await Promise.all([ex.page.waitForEvent('download'), ex.page.click(`${view('alibi')} button[data-export="csv"]`)]);
  const alibiLines = (await readFile(await alibiCsv.path(), 'utf8')).split('\n');
  assert.equal(alibiLines[1], 'distance,head,bias');
  assert.match(alibiLines[2 + 12], /^1,8,-0\.7071/);
  assert.deepEqual(ex.problems, []);
});

// Its time is judged by `npm run bench` (bench/page.mjs, against a plain-JS heatmap in the same
// run), not here: on a loaded CI machine the same page measured p95 37 ms where it measures 4 ms idle.
test('a slider drag at head_dim 128, seq_len 2048 redraws once per step and ends on the last value', async () => {
  await open('#dModel=128&seqLen=2048');
  await ex.page.$eval('#chapter-sinusoidal', (s) => s.scrollIntoView());
  await drawn('pe-heatmap');
  const slider = 'input[type="range"][data-for="base"]';
  const drag = async (from, steps) => {
    for (let i = 0; i < steps; i++) {
      await ex.page.$eval(slider, (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, from + i * 5);
      await ex.settled('pe-heatmap');  // a step's redraw done, however long a loaded machine takes
    }
  };
  await drag(200, 10);
  await ex.page.evaluate(() => performance.clearMeasures('frame'));
  const before = await renders('pe-heatmap'), warmBase = (await state()).base;
  await drag(300, 60);
  const frames = await ex.page.evaluate(() => performance.getEntriesByName('frame').map((e) => e.duration));
  frames.sort((a, b) => a - b);
  console.log(`explorer: slider drag at head_dim 128, seq_len 2048: ${frames.length} redraws, median ${frames[frames.length >> 1].toFixed(1)} ms, `
    + `p95 ${frames[Math.ceil(frames.length * 0.95) - 1].toFixed(1)} ms (not judged here: npm run bench)`);
  assert.equal(await renders('pe-heatmap') - before, 60, 'one redraw per drag step');
  const { base } = await state();  // the slider is logarithmic: its last step is some base above the warm-up's
  assert.ok(base > warmBase, `base ${base} after the drag, ${warmBase} before`);
  await ex.page.focus(`${view('pe-heatmap')} canvas`);
  await ex.page.keyboard.press('ArrowRight');
  const readout = await ex.page.textContent(`${view('pe-heatmap')} .readout`);
  assert.ok(readout.includes(`/ ${base}^`), `the read-out is of the last base ${base}: ${readout}`);
  assert.deepEqual(ex.problems, []);
});

test('a slider drag at d_model 4096, seq_len 131072 keeps the page responsive', async () => {
  await open('#dModel=4096&seqLen=131072');
  await ex.page.$eval('#chapter-long-context', (s) => s.scrollIntoView());
  await drawn('compare');
  await ex.page.evaluate(() => performance.clearMeasures('frame'));
  const slider = 'input[type="range"][data-for="factor"]';
  const gaps = [];
  for (let i = 0; i < 20; i++) {
    await ex.page.$eval(slider, (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, 300 + i * 10);
    // How long the page takes to answer: the time until the next animation frame.
    gaps.push(await ex.page.evaluate(() => new Promise((r) => { const t = performance.now(); requestAnimationFrame(() => r(performance.now() - t)); })));
  }
  gaps.sort((a, b) => a - b);
  const worst = gaps[gaps.length - 1];
  console.log(`explorer: drag at d_model 4096, seq_len 131072: frame gaps median ${gaps[gaps.length >> 1].toFixed(1)} ms, worst ${worst.toFixed(1)} ms`);
  // Frozen means a second without a frame; the gaps themselves are printed, not judged: CI's loaded
  // machine measured 109 ms where this one measures 28.
  assert.ok(worst < 1000, `the page froze for ${worst.toFixed(0)} ms`);
  assert.deepEqual(ex.problems, []);
});

test('at sizes that would hold the page, the heavy views compute in a worker and draw what the page would', async () => {
  await open('#dModel=4096&shiftKeep=2048&grid2dH=64&grid2dW=64&mropeH=64&mropeW=64&relLen=128&seqLen=128&learnedSource=init');
  // A note while the worker computes (the section marked waiting), then the drawing.
  await ex.page.evaluate(() => {
    window.waited = new Set();
    new MutationObserver((records) => { for (const r of records) if (r.target.hasAttribute('data-waiting')) window.waited.add(r.target.dataset.view); })
      .observe(document.body, { subtree: true, attributeFilter: ['data-waiting'] });
  });
  for (const id of ['learned', 'context-shift', 'rope-2d', 'mrope', 'rope-relative']) {
    await drawn(id);
    // The same compute on the page, its offload answered by the view's work here: the same numbers.
    const { offloaded, same, waited } = await ex.page.evaluate((i) => {
      const { pe, state, views } = window.posencExplorer;
      const v = views.find((x) => x.def.id === i);
      let asked = false;
      const here = v.def.compute({ pe, st: state, extras: {}, memo: (k, f) => f(), redraw() {},
        offload: (id, args) => { asked = id === i; return v.def.work(pe, structuredClone(args)); } });
      return { offloaded: asked, same: JSON.stringify(here) === JSON.stringify(v.data), waited: window.waited.has(i) };
    }, id);
    assert.ok(offloaded, `${id}: not offloaded at these sizes`);
    assert.ok(waited, `${id}: never said it was computing`);
    assert.ok(same, `${id}: the worker's data differ from the page's`);
    assert.doesNotMatch(await ex.page.textContent(`${view(id)} .note`), /Computing/);
  }
  // A change while it computes keeps the last drawing, dimmed, with the note, until the new data come.
  const shown = await pixels('context-shift'), n = await renders('context-shift');
  await ex.page.fill('#control-shiftKeep', '2047');
  await ex.page.press('#control-shiftKeep', 'Enter');
  await ex.page.waitForSelector(`${view('context-shift')}[data-waiting].stale`);
  assert.match(await ex.page.textContent(`${view('context-shift')} .note`), /Computing in the background/);
  assert.equal(await pixels('context-shift'), shown, 'the last drawing was not kept');
  await drawn('context-shift', n);
  assert.match(await ex.page.textContent(`${view('context-shift')} .note`), /held the 2047 keys/);
  assert.notEqual(await pixels('context-shift'), shown);
  assert.deepEqual(ex.problems, []);
});

test('a compute worker that cannot load says so in the view, instead of computing for ever', async () => {
  await ex.page.route('**/compute-worker*', (r) => r.abort());
  try {
    await open('#dModel=4096&shiftKeep=2048&deeper=production');
    await ex.page.$eval(view('context-shift'), (s) => s.scrollIntoView());
    await ex.page.waitForSelector(`${view('context-shift')}.failed`, { timeout: 15000 });
    assert.match(await ex.page.textContent(`${view('context-shift')} .note`), /compute worker failed/);
  } finally {
    await ex.page.unroute('**/compute-worker*');
  }
  ex.problems.length = 0;  // the aborted request's console error is the point of this test
});

// Small model files written here from the format specs (tests/js/model_writer.mjs).
const TABLE = Float32Array.from({ length: 24 * 8 }, (_, i) => Math.sin(i / 3) * 0.1);
const file = (name, bytes) => ({ name, mimeType: 'application/octet-stream', buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) });

test('the learned view loads a position table from .npy and .safetensors; a file without one is refused with readModel\'s words', async () => {
  await open();
  await drawn('learned');
  const input = `${view('learned')} input[data-learned-file]`;
  const message = `${view('learned')} .file-box .message`;
  const before = await renders('learned');  // counted before the change (a drawing to come is not done)
  await ex.page.setInputFiles(input, file('gpt-wpe.npy', npy(TABLE, 24, 8)));
  await ex.page.waitForFunction(() => window.posencExplorer.state.maxLen === 24);
  assert.match(await ex.page.textContent(message), /Loaded “gpt-wpe\.npy”, 24 × 8/);
  await drawn('learned', before);
  assert.match(await ex.page.textContent(`${view('learned')} .note`), /Table: “gpt-wpe\.npy” from your file/);
  assert.equal((await state()).dModel, 8);
  // The read-out is the file's number: row 3, dim 0 = TABLE[24].
  await ex.page.focus(`${view('learned')} canvas`);
  for (let i = 0; i < 3; i++) await ex.page.keyboard.press('ArrowRight');
  const shown = Number((await ex.page.textContent(`${view('learned')} .readout`)).match(/weight (\S+)$/)[1]);
  assert.ok(Math.abs(shown - TABLE[24]) < 1e-6, `${shown} vs ${TABLE[24]}`);
  await ex.page.setInputFiles(input, file('model.safetensors', safetensors({
    'transformer.wte.weight': { shape: [5, 8], data: new Float32Array(40) },
    'transformer.wpe.weight': { shape: [12, 8], data: TABLE.subarray(0, 96) },
  })));
  await ex.page.waitForFunction(() => window.posencExplorer.state.maxLen === 12);
  assert.match(await ex.page.textContent(message), /Loaded “transformer\.wpe\.weight”, 12 × 8/);
  await ex.page.setInputFiles(input, file('junk.npy', new Uint8Array([1, 2, 3, 4, 5, 6, 7, 8])));
  await ex.page.waitForFunction((sel) => document.querySelector(sel).classList.contains('bad'), message);
  assert.match(await ex.page.textContent(message), /^junk\.npy: readModel: /);
  assert.equal((await state()).maxLen, 12, 'a refused file changed the settings');
  assert.deepEqual(ex.problems, []);
});

test('opening or dropping a model file switches the page to that model', async () => {
  await open();
  assert.equal(await ex.page.isVisible('#model-file'), true);
  const llama = gguf([['general.architecture', 'llama'], ['llama.context_length', { u32: 131072 }], ['llama.attention.head_count', { u32: 32 }],
    ['llama.rope.dimension_count', { u32: 128 }], ['llama.rope.freq_base', { f32: 500000 }], ['llama.embedding_length', { u32: 4096 }]],
  [{ name: 'rope_freqs.weight', ne: [64], data: new Float32Array(64).fill(2) }]).bytes;
  await ex.page.setInputFiles('#model-file-input', file('llama.gguf', llama));
  await ex.page.waitForFunction(() => window.posencExplorer.state.theta === 500000);
  let st = await state();
  assert.deepEqual([st.dModel, st.heads, st.lTarget, st.attnScheme, st.preset], [128, 32, 131072, 'rope', '']);
  assert.match(await ex.page.textContent('#model-message'), /^llama\.gguf: read gguf \(llama\); RoPE head_dim 128, θ 500000/);
  assert.match(await ex.page.textContent('#settings-summary'), /llama\.gguf/);
  // Its freq_factors (rope_freqs.weight, all 2 here) divide every frequency: wavelengths double.
  await drawn('spectrum');
  await ex.page.focus(`${view('spectrum')} canvas`);
  assert.match(await ex.page.textContent(`${view('spectrum')} .readout`), /^pair 0: wavelength \S+ → \S+ positions \(×2\.0000\)/);
  // A config.json: MPT goes to ALiBi.
  const mpt = new TextEncoder().encode(JSON.stringify({ model_type: 'mpt', d_model: 4096, n_heads: 32, max_seq_len: 2048, attn_config: { alibi: true, alibi_bias_max: 8 } }));
  await ex.page.setInputFiles('#model-file-input', { name: 'config.json', mimeType: 'application/json', buffer: Buffer.from(mpt) });
  await ex.page.waitForFunction(() => window.posencExplorer.state.attnScheme === 'alibi');
  st = await state();
  assert.deepEqual([st.heads, st.maxBias, st.theta, st.seqLen], [32, 8, 10000, 2048]);
  // Dropped anywhere on the page: a .npy table goes to the learned view.
  const bytes = Array.from(npy(TABLE, 24, 8));
  const dt = await ex.page.evaluateHandle((b) => { const d = new DataTransfer(); d.items.add(new File([new Uint8Array(b)], 'dropped.npy')); return d; }, bytes);
  await ex.page.dispatchEvent('#chapter-rope', 'drop', { dataTransfer: dt });
  await ex.page.waitForFunction(() => window.posencExplorer.state.maxLen === 24);
  assert.equal((await state()).attnScheme, 'learned');
  await drawn('learned');
  assert.match(await ex.page.textContent(`${view('learned')} .note`), /“dropped\.npy” from your file/);
  // A file readModel cannot read: its message, and nothing changes.
  await ex.page.setInputFiles('#model-file-input', file('notes.txt', new TextEncoder().encode('hello')));
  await ex.page.waitForFunction(() => document.querySelector('#model-message').classList.contains('bad'));
  assert.match(await ex.page.textContent('#model-message'), /^notes\.txt: readModel: /);
  assert.equal((await state()).maxLen, 24);
  assert.deepEqual(ex.problems, []);
});

test('a visible banner says so when the WASM cannot load (either build)', async () => {
  await ex.page.route('**/posenc*.wasm', (route) => route.fulfill({ status: 200, contentType: 'application/wasm', body: Buffer.from('not wasm') }));
  ex.problems.length = 0;
  await ex.page.goto(`${ex.origin}/`);
  await ex.page.waitForSelector('body[data-ready="error"]', { timeout: 30000 });
  assert.equal(await ex.page.isVisible('#error'), true);
  assert.match(await ex.page.textContent('#error'), /failed to load/);
  await ex.page.unroute('**/posenc*.wasm');
  ex.problems.length = 0;  // the broken module logs its own console error, on purpose here
});
