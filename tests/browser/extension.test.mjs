// The lab chapter's context-extension view in headless Debian Chromium: it draws the shipped
// data/lab-extension.json (npm run lab -- --extend 4), its read-out gives the mean and min–max over
// the seeds computed here from the JSON, and its note names the lowest scaling per panel.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { distinctColors, openExplorer } from './launch.mjs';

const shipped = JSON.parse(await readFile(new URL('../../data/lab-extension.json', import.meta.url), 'utf8'));
const section = 'section[data-view="lab-extension"]';
let ex;

before(async () => {
  ex = await openExplorer();
  await ex.page.goto(`${ex.origin}/#deeper=lab`);  // the extension study is in the lab chapter's fold
  await ex.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
});
after(async () => ex && ex.close());

// The loss of every seed of `scheme` at `length` after `steps` with `scaling`, from the JSON.
const losses = (scheme, length, steps, scaling) => shipped.results.filter((r) => r.scheme === scheme)
  .map((r) => r.rows.find((w) => w.ropeScaling === scaling && w.steps === steps && w.length === length).loss);

test('lab-extension draws the shipped extension run; the read-out is the mean and min–max of its seeds', async () => {
  assert.deepEqual(shipped.extend.checkpoints, [0, 25, 100, 400]);
  assert.equal(shipped.extend.length, 4 * shipped.config.trainLength);
  await ex.page.$eval(section, (s) => s.scrollIntoView());
  // Drawn with its data: a drawing that waits for the fetch (data-waiting) has a note too.
  await ex.page.waitForFunction((sel) => Number(document.querySelector(sel).dataset.renders ?? 0) > 0
    && !document.querySelector(sel).hasAttribute('data-waiting')
    && !document.querySelector(sel).querySelector('.note').hidden, section, { timeout: 15000 });
  assert.ok(await distinctColors(ex.page, `${section} canvas`) > 8, 'the plot is drawn');
  await ex.page.focus(`${section} canvas`);
  await ex.page.keyboard.press('ArrowRight');  // rope at L, after 25 steps
  const readout = await ex.page.textContent(`${section} .readout`);
  const L = shipped.extend.length;
  assert.match(readout, new RegExp(`^rope at length ${L} after 25 fine-tuning steps, mean of 3 seeds: `));
  for (const [scaling, label] of [['none', 'none'], ['linear', 'linear \\(PI\\)'], ['ntk', 'NTK'], ['yarn', 'YaRN']]) {
    const v = losses('rope', L, 25, scaling);
    const mean = v.reduce((a, b) => a + b, 0) / v.length;
    const want = `${label} ${mean.toFixed(4)} \\(${Math.min(...v).toFixed(4)}–${Math.max(...v).toFixed(4)}\\)`;
    assert.match(readout, new RegExp(want), scaling);
  }
  // ArrowDown goes to the panel drawn below (two panels a row at this width: the next scheme at L),
  // ArrowUp back; past a panel's last checkpoint ArrowRight goes on to the next panel, rope at 2L.
  const next = [...new Set(shipped.results.map((x) => x.scheme))][1];
  await ex.page.keyboard.press('ArrowDown');
  assert.match(await ex.page.textContent(`${section} .readout`), new RegExp(`^${next} at length ${L} after 25`));
  await ex.page.keyboard.press('ArrowUp');
  await ex.page.keyboard.press('End');
  await ex.page.keyboard.press('ArrowRight');
  assert.match(await ex.page.textContent(`${section} .readout`), new RegExp(`^rope at length ${2 * L} after 0 `));
  // The note names the lowest mean per panel, before and after fine-tuning.
  const note = await ex.page.textContent(`${section} .note`);
  const lowest = (scheme, length, steps) => ['none', 'linear', 'ntk', 'yarn']
    .map((s) => [s, losses(scheme, length, steps, s).reduce((a, b) => a + b, 0) / 3]).sort((a, b) => a[1] - b[1])[0];
  const [s0, v0] = lowest('xpos', L, 0);
  const label = { none: 'none', linear: 'linear (PI)', ntk: 'NTK', yarn: 'YaRN' };
  assert.ok(note.includes(`xpos at ${L}: lowest mean with ${label[s0]} before fine-tuning (${v0.toFixed(3)})`), note);
  // It names its one shipped run, which the lab's task setting does not change.
  assert.ok(note.startsWith(`The ${shipped.task} task's shipped run (${shipped.command}), whatever task the lab has chosen.`), note);
  assert.deepEqual(ex.problems, []);
});
