// The explorer in headless Debian Chromium: it loads clean, and its plots are drawn by the WASM module.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir } from 'node:fs/promises';
import { distinctColors, openExplorer } from './launch.mjs';

const artifacts = new URL('../../test-results/', import.meta.url);
let ex;

before(async () => {
  ex = await openExplorer();
  await ex.page.goto(`${ex.origin}/`);
  await ex.page.waitForSelector('body[data-ready]', { timeout: 30000 });
});
after(async () => ex && ex.close());

test('the page loads the WASM module with no console, page or request errors', async () => {
  assert.equal(await ex.page.getAttribute('body', 'data-ready'), 'true');
  assert.equal(await ex.page.isVisible('#error'), false);
  assert.match(await ex.page.textContent('#status'), /SIMD: wasm · sinusoidal 100×128 computed in/);
  assert.deepEqual(ex.problems, []);
});

test('the first canvas (pe-heatmap) is not blank', async () => {
  const first = await ex.page.$eval('canvas', (c) => c.closest('section').dataset.view);
  assert.equal(first, 'pe-heatmap');
  assert.ok(await distinctColors(ex.page, 'section[data-view="pe-heatmap"] canvas') > 50);
  await mkdir(artifacts, { recursive: true });
  await ex.page.screenshot({ path: new URL('explorer.png', artifacts).pathname, fullPage: true });
});

test('changing d_model redraws the heatmap, and hover reads out the exact value', async () => {
  const canvas = 'section[data-view="pe-heatmap"] canvas';
  const before = await ex.page.$eval(canvas, (c) => c.toDataURL());
  await ex.page.fill('input[name="dModel"]', '16');
  await ex.page.waitForFunction(() => document.querySelector('#status').textContent.includes('100×16'));
  assert.notEqual(await ex.page.$eval(canvas, (c) => c.toDataURL()), before);
  // Hover the cell (pos 1, dim 0): the read-out is sin(1) from the package.
  const box = await ex.page.$eval(canvas, (c) => { const r = c.getBoundingClientRect(); return { x: r.x, y: r.y, w: r.width, h: r.height }; });
  const plotW = box.w - 58 - 92, plotH = box.h - 12 - 46;
  await ex.page.mouse.move(box.x + 58 + plotW * (1.5 / 100), box.y + 12 + plotH * (15.5 / 16));
  assert.match(await ex.page.textContent('#pe-heatmap-readout'), /^pos 1, dim 0 = sin\(.*: 0\.841471$/);
  assert.deepEqual(ex.problems, []);
});
