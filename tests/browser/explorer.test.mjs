// The explorer in headless Debian Chromium: loads clean under its strict CSP, every view draws
// with numbers from the package, controls and the URL drive it, exports work, redraws are fast.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, readFile } from 'node:fs/promises';
import { distinctColors, openExplorer } from './launch.mjs';

const artifacts = new URL('../../test-results/', import.meta.url);
const VIEWS = ['pe-heatmap', 'dim-traces', 'spectrum', 'clocks', 'score-vs-distance', 'similarity', 'attention',
  'alibi', 't5-buckets', 'precision', 'compare'];
let ex;

async function ready(page) {
  await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
}

// Scrolls a view into sight and waits until it has been drawn at least `after` + 1 times.
async function drawn(page, id, after = 0) {
  const canvas = `section[data-view="${id}"] canvas`;
  await page.$eval(`section[data-view="${id}"]`, (s) => s.scrollIntoView());
  await page.waitForFunction(({ sel, n }) => Number(document.querySelector(sel).dataset.renders ?? 0) > n, { sel: canvas, n: after }, { timeout: 15000 });
  return canvas;
}

const renders = (page, id) => page.$eval(`section[data-view="${id}"] canvas`, (c) => Number(c.dataset.renders ?? 0));

before(async () => {
  ex = await openExplorer();
  await mkdir(artifacts, { recursive: true });
});
after(async () => ex && ex.close());

test('the page loads the WASM module with a strict CSP and no console, page or request errors', async () => {
  const response = await ex.page.goto(`${ex.origin}/`);
  assert.match(response.headers()['content-security-policy'], /script-src 'self' 'wasm-unsafe-eval'/);
  await ready(ex.page);
  assert.equal(await ex.page.isVisible('#error'), false);
  assert.match(await ex.page.textContent('#status'), /SIMD: wasm · .* computed and drawn in/);
  assert.deepEqual(ex.problems, []);
});

test('every view renders non-blank, with the lesson\'s seq_len 100 × d_model 128 heatmap first', async () => {
  const first = await ex.page.$eval('canvas', (c) => c.closest('section').dataset.view);
  assert.equal(first, 'pe-heatmap');
  await ex.page.screenshot({ path: new URL('explorer.png', artifacts).pathname });
  for (const id of VIEWS) {
    const canvas = await drawn(ex.page, id);
    assert.ok(await distinctColors(ex.page, canvas) > 8, `${id} is blank`);
    assert.ok(await ex.page.$eval(`section[data-view="${id}"] h2`, (h) => h.textContent.length > 5));
    await (await ex.page.$(`section[data-view="${id}"]`)).screenshot({ path: new URL(`view-${id}.png`, artifacts).pathname });
  }
  assert.deepEqual(ex.problems, []);
});

test('moving a control changes its plot and the URL; hover and the keyboard cursor read out exact values', async () => {
  const canvas = await drawn(ex.page, 'pe-heatmap');
  const before = await ex.page.$eval(canvas, (c) => c.toDataURL());
  const n = await renders(ex.page, 'pe-heatmap');
  await ex.page.fill('#control-dModel', '16');
  await drawn(ex.page, 'pe-heatmap', n);
  assert.notEqual(await ex.page.$eval(canvas, (c) => c.toDataURL()), before);
  assert.match(ex.page.url(), /dModel=16/);
  // Keyboard: focus puts the cursor on (pos 1, dim 0): sin(1) from the package.
  await ex.page.focus(canvas);
  assert.match(await ex.page.textContent('section[data-view="pe-heatmap"] .readout'), /^pos 1, dim 0 = sin\(.*: 0\.841471$/);
  await ex.page.keyboard.press('ArrowUp');
  assert.match(await ex.page.textContent('section[data-view="pe-heatmap"] .readout'), /^pos 1, dim 1 = cos\(.*: 0\.540302$/);
  // Hover a cell.
  const box = await ex.page.$eval(canvas, (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  await ex.page.mouse.move(box.x + 62 + 3, box.y + 14 + 3);
  assert.match(await ex.page.textContent('section[data-view="pe-heatmap"] .readout'), /^pos 0, dim 15 = cos/);
  // A select drives the RoPE views.
  const spec = await drawn(ex.page, 'spectrum');
  const s0 = await ex.page.$eval(spec, (c) => c.toDataURL());
  const m = await renders(ex.page, 'spectrum');
  await ex.page.selectOption('#control-scaling', 'yarn');
  await drawn(ex.page, 'spectrum', m);
  assert.notEqual(await ex.page.$eval(spec, (c) => c.toDataURL()), s0);
  assert.deepEqual(ex.problems, []);
});

test('a URL restores the settings exactly, and back/forward walk through changes', async () => {
  const hash = '#dModel=64&seqLen=300&base=500000&scaling=llama3&lTrain=8192&lTarget=65536&precision=accurate';
  await ex.page.goto(`${ex.origin}/${hash}`);
  await ready(ex.page);
  assert.equal(await ex.page.inputValue('#control-dModel'), '64');
  assert.equal(await ex.page.inputValue('#control-base'), '500000');
  assert.equal(await ex.page.inputValue('#control-scaling'), 'llama3');
  assert.equal(await ex.page.inputValue('#control-precision'), 'accurate');
  const state = await ex.page.evaluate(() => window.posencExplorer.state);
  assert.equal(state.lTarget, 65536);
  assert.equal(new URL(ex.page.url()).hash, hash);
  await ex.page.selectOption('#control-scaling', 'linear');
  assert.match(ex.page.url(), /scaling=linear/);
  await ex.page.goBack();
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'llama3');
  assert.equal(await ex.page.inputValue('#control-scaling'), 'llama3');
  await ex.page.goForward();
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'linear');
  assert.deepEqual(ex.problems, []);
});

test('export gives a PNG at 1x and 2x and a CSV with the parameters in the caption', async () => {
  await ex.page.goto(`${ex.origin}/`);
  await ready(ex.page);
  await drawn(ex.page, 'pe-heatmap');
  const section = 'section[data-view="pe-heatmap"]';
  const width = await ex.page.$eval(`${section} canvas`, (c) => c.getBoundingClientRect().width);
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
  const text = await readFile(await csv.path(), 'utf8');
  const lines = text.split('\n');
  assert.equal(lines[0], '# posenc · sinusoidal seq_len=100 d_model=128 base=10000 layout=interleaved');
  assert.equal(lines[1], 'pos,dim,pe');
  assert.equal(lines.length - 3, 100 * 128);
  assert.match(lines[2 + 128], /^1,0,0\.84147/);  // pos 1, dim 0 = sin(1)
  // The data-table fallback shows the same data.
  await ex.page.click(`${section} details.table summary`);
  assert.match(await ex.page.textContent(`${section} table tbody tr:nth-child(129)`), /^10(0\.84147)/);
  assert.deepEqual(ex.problems, []);
});

test('a preset shows the same numbers as the npm API for that model (Llama-3.1-8B)', async () => {
  await ex.page.goto(`${ex.origin}/`);
  await ready(ex.page);
  await ex.page.selectOption('#preset', 'llama-3.1-8b');
  await ex.page.waitForFunction(() => window.posencExplorer.state.preset === 'llama-3.1-8b');
  assert.equal(await ex.page.inputValue('#control-scaling'), 'llama3');
  assert.equal(await ex.page.inputValue('#control-dModel'), '128');
  assert.equal(await ex.page.inputValue('#control-base'), '500000');
  assert.match(await ex.page.textContent('#preset-config'), /"rope_type": "llama3"/);
  await drawn(ex.page, 'spectrum');
  await ex.page.focus('section[data-view="spectrum"] canvas');
  for (let i = 0; i < 40; i++) await ex.page.keyboard.press('ArrowRight');  // pair 40, in the divided band
  const readout = await ex.page.textContent('section[data-view="spectrum"] .readout');
  // The npm API in Node for the same model.
  const { init } = await import('posenc');
  const pe = await init();
  const preset = pe.presets.presets.find((p) => p.id === 'llama-3.1-8b');
  const f = pe.ropeFrequencies(pe.ropeParamsFromConfig(preset.config), { dtype: 'float64' }).invFreq;
  const wavelength = (2 * Math.PI) / f[40];
  assert.match(readout, /^pair 40: wavelength .* → (\S+) positions/);
  const shown = Number(readout.match(/→ (\S+) positions/)[1]);
  assert.ok(Math.abs(shown / wavelength - 1) < 1e-3, `${shown} vs ${wavelength}`);
  assert.deepEqual(ex.problems, []);
});

test('pasting a config applies it; a bad one says what is wrong', async () => {
  await ex.page.click('#paste summary');
  await ex.page.fill('#config-text', JSON.stringify({ head_dim: 64, rope_theta: 150000, rope_scaling: { rope_type: 'yarn', factor: 32, original_max_position_embeddings: 4096, truncate: false } }));
  await ex.page.click('#config-apply');
  await ex.page.waitForFunction(() => window.posencExplorer.state.scaling === 'yarn');
  assert.equal(await ex.page.evaluate(() => window.posencExplorer.state.truncate), false);
  await ex.page.fill('#config-text', '{"head_dim": 64, "rope_scaling": {"type": "wobbly"}}');
  await ex.page.click('#config-apply');
  assert.match(await ex.page.textContent('#config-message'), /"wobbly" is not one of/);
  assert.deepEqual(ex.problems, []);
});

test('dark mode toggles, and the page works on a 390-px wide screen', async () => {
  await ex.page.selectOption('#theme', 'dark');
  assert.equal(await ex.page.getAttribute('html', 'data-theme'), 'dark');
  const bg = await ex.page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(20, 23, 28)');
  await ex.page.setViewportSize({ width: 390, height: 844 });
  await ex.page.goto(`${ex.origin}/#theme=dark`);
  await ready(ex.page);
  const canvas = await drawn(ex.page, 'pe-heatmap');
  const overflow = await ex.page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
  assert.ok(overflow <= 0, `page is ${overflow}px wider than the screen`);
  assert.ok(await distinctColors(ex.page, canvas) > 8);
  await ex.page.screenshot({ path: new URL('explorer-390px-dark.png', artifacts).pathname });
  await ex.page.setViewportSize({ width: 1200, height: 900 });
  assert.deepEqual(ex.problems, []);
});

test('a slider drag at head_dim 128, seq_len 2048 redraws within 16 ms at the 95th percentile', async () => {
  await ex.page.goto(`${ex.origin}/#dModel=128&seqLen=2048`);
  await ready(ex.page);
  await ex.page.evaluate(() => window.scrollTo(0, 0));
  const slider = 'input[type="range"][data-for="base"]';
  const drag = async (from, steps) => {
    for (let i = 0; i < steps; i++) {
      await ex.page.$eval(slider, (el, v) => { el.value = String(v); el.dispatchEvent(new Event('input', { bubbles: true })); }, from + i * 5);
      await ex.page.evaluate(() => new Promise((r) => requestAnimationFrame(() => requestAnimationFrame(r))));
    }
  };
  await drag(200, 10);  // warm-up: the first redraws also compile code
  await ex.page.evaluate(() => performance.clearMeasures('frame'));
  await drag(300, 60);
  const frames = await ex.page.evaluate(() => performance.getEntriesByName('frame').map((e) => e.duration));
  assert.ok(frames.length >= 30, `only ${frames.length} redraws measured`);
  frames.sort((a, b) => a - b);
  const p95 = frames[Math.floor(frames.length * 0.95) - 1];
  console.log(`explorer: slider drag at head_dim 128, seq_len 2048: ${frames.length} redraws, median ${frames[frames.length >> 1].toFixed(1)} ms, p95 ${p95.toFixed(1)} ms`);
  assert.ok(p95 <= 16, `p95 redraw ${p95.toFixed(1)} ms`);
  assert.deepEqual(ex.problems, []);
});

test('a visible banner says so when the WASM cannot load', async () => {
  await ex.page.route('**/posenc.wasm', (route) => route.fulfill({ status: 200, contentType: 'application/wasm', body: Buffer.from('not wasm') }));
  ex.problems.length = 0;
  await ex.page.goto(`${ex.origin}/`);
  await ex.page.waitForSelector('body[data-ready="error"]', { timeout: 30000 });
  assert.equal(await ex.page.isVisible('#error'), true);
  assert.match(await ex.page.textContent('#error'), /failed to load/);
  await ex.page.unroute('**/posenc.wasm');
  ex.problems.length = 0;  // the broken module logs its own console error, on purpose here
});
