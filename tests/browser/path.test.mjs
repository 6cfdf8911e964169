// Issue 35, the lesson as one path, in headless Debian Chromium: the page's height with every "go
// deeper" fold closed at a desktop's and a phone's size (what the lesson asks of a reader), each fold
// opening and closing by click and key with its state in the URL, NTK's base following the settings.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { explorerSession, launchChromium } from './launch.mjs';

const ex = explorerSession();
const { view, state, open, drawn } = ex;
// The budgets: 15 screens at 1280 × 800, 25 at 390 × 844.
const SIZES = [{ width: 1280, height: 800, screens: 15, max: 12000 }, { width: 390, height: 844, screens: 25, max: 21100 }];

before(() => ex.start());
after(() => ex.close?.());

const folds = () => ex.page.$$eval('details.deeper', (d) => d.map((x) => x.dataset.fold));
// Waits until fold `name` is open (or closed) on the page and in the settings, and only it.
async function settled(name, open) {
  const ok = await ex.page.waitForFunction(({ n, o }) => {
    const d = document.querySelector(`details[data-fold="${n}"]`);
    return d.open === o && window.posencExplorer.state.deeper === (o ? n : '');
  }, { n: name, o: open }, { timeout: 30000 }).catch(() => false);
  if (!ok) {
    const now = await ex.page.evaluate((n) => ({ open: document.querySelector(`details[data-fold="${n}"]`).open,
      deeper: window.posencExplorer.state.deeper, hash: location.hash }), name);
    assert.fail(`fold ${name} did not ${open ? 'open' : 'close'}: ${JSON.stringify(now)}`);
  }
}
const openFolds = () => ex.page.$$eval('details.deeper[open]', (d) => d.map((x) => x.dataset.fold));

test('with the folds closed the lesson is at most 15 screens at 1280×800 and 25 at 390×844', async () => {
  const browser = await launchChromium();
  try {
    for (const size of SIZES) {
      const page = await browser.newPage({ viewport: { width: size.width, height: size.height } });
      await page.goto(`${ex.origin}/`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
      // Every view of the path drawn (a drawn view has its notes and tables, and its final height).
      const path = await page.$$eval('section[data-view]', (s) => s.filter((x) => !x.closest('details.deeper'))
        .map((x) => x.dataset.view));
      for (const id of path) {
        await page.$eval(view(id), (s) => s.scrollIntoView());
        await page.waitForFunction((sel) => Number(document.querySelector(sel).dataset.renders ?? 0) > 0
          && !document.querySelector(sel).hasAttribute('data-waiting'), view(id));
      }
      const { height, open } = await page.evaluate(() => ({ height: document.documentElement.scrollHeight,
        open: document.querySelectorAll('details.deeper[open]').length }));
      assert.equal(open, 0);
      console.log(`page height, folds closed, ${size.width}×${size.height}: ${height} px = ${(height / size.height).toFixed(1)} `
        + `screens (at most ${size.screens}, ${size.max} px)`);
      assert.ok(height <= size.max, `${height} px at ${size.width}×${size.height}`);
      await page.close();
    }
  } finally {
    await browser.close();
  }
  assert.deepEqual(ex.problems, []);
});

test('each fold opens and closes with one click or key, says it is beyond the lesson, and is kept in the URL', async () => {
  await open();
  const names = await folds();
  assert.ok(names.length >= 8, `folds: ${names}`);
  assert.deepEqual(await openFolds(), []);
  for (const name of names) {
    const summary = `details[data-fold="${name}"] > summary`;
    assert.match(await ex.page.textContent(summary), /^Go deeper \(beyond the lesson\): .+ \(\d+ views?\)$/);
    await ex.clickSettled(summary);
    await settled(name, true);
    assert.equal(new URLSearchParams(await ex.page.evaluate(() => location.hash.slice(1))).get('deeper'), name);
    // Its views draw once it is open.
    const first = await ex.page.$eval(`details[data-fold="${name}"] section[data-view]`, (s) => s.dataset.view);
    await drawn(first);
    // Back closes it again; a key opens it (the summary is focused, Enter toggles it).
    await ex.page.goBack();
    await settled(name, false);
    await ex.page.focus(summary);
    await ex.page.keyboard.press('Enter');
    await settled(name, true);
    await ex.clickSettled(summary);
    await settled(name, false);
    assert.equal(await ex.page.evaluate(() => location.hash), '');
  }
  // A shared link opens the folds it names, and only those.
  await open(`#deeper=${names[1]},${names[5]}`);
  assert.deepEqual(await openFolds(), [names[1], names[5]]);
  // A name that is no fold is refused with the rule, like any value.
  await open('#deeper=rope,nowhere');
  assert.match(await ex.page.textContent('[data-notice="url"]'),
    /deeper=rope,nowhere \(folds open must be a comma-separated list of embedding, sinusoidal/);
  assert.deepEqual(await openFolds(), []);
  assert.deepEqual(ex.problems, []);
});

test('a link into a closed fold opens it, in one history entry', async () => {
  await open();
  await ex.page.click('#chapter-embedding > p a[href="#view-embedding"]');
  await ex.page.waitForFunction(() => window.posencExplorer.state.deeper === 'embedding');
  assert.equal(await ex.page.$eval('details[data-fold="embedding"]', (d) => d.open), true);
  await drawn('embedding');
  await ex.page.goBack();
  await ex.page.waitForFunction(() => !document.querySelector('details[data-fold="embedding"]').open);
  assert.deepEqual(ex.problems, []);
});

test('NTK\'s base follows the settings: θ·s^(d/(d−2)) in the text, and read back from the package in the view', async () => {
  await open();
  const prose = () => ex.page.textContent('[data-live="ntk-base"]');
  const base = (theta, s, d) => theta * s ** (d / (d - 2));
  assert.equal(await prose(), `${Math.round(base(10000, 4, 128)).toLocaleString('en-US')} for θ 10,000, d 128 and s 4`);
  assert.equal(await prose(), '40,890 for θ 10,000, d 128 and s 4');
  await drawn('ntk');
  const note = async () => (await ex.page.textContent(`${view('ntk')} .note`)).replace(/,/g, '');
  const NUMBERS = /= (\d+(?:\.\d+)?); read back from the package's frequencies: (\d+(?:\.\d+)?)/;
  const [, formula, readBack] = (await note()).match(NUMBERS);
  // Eight significant digits of each: 40,889.942.
  assert.ok(Math.abs(Number(formula) - base(10000, 4, 128)) / base(10000, 4, 128) < 1e-7, formula);
  assert.ok(Math.abs(Number(readBack) - base(10000, 4, 128)) / base(10000, 4, 128) < 1e-7, readBack);
  // s 8 and θ 500,000 (Llama 3's), d 64.
  for (const [key, value] of [['factor', '8'], ['theta-long', '500000']]) {
    await ex.page.fill(`#control-${key}`, value);
    await ex.page.press(`#control-${key}`, 'Enter');
  }
  await ex.page.fill('#control-dModel', '64');
  await ex.page.press('#control-dModel', 'Enter');
  await ex.page.waitForFunction(() => window.posencExplorer.state.dModel === 64);
  const st = await state();
  assert.deepEqual([st.factor, st.theta, st.dModel], [8, 500000, 64]);
  assert.equal(await prose(), `${Math.round(base(500000, 8, 64)).toLocaleString('en-US')} for θ 500,000, d 64 and s 8`);
  await ex.page.waitForFunction((id) => !window.posencExplorer.views.find((v) => v.def.id === id).dirty, 'ntk');
  const [, f2, r2] = (await note()).match(NUMBERS);
  assert.ok(Math.abs(Number(f2) - base(500000, 8, 64)) / base(500000, 8, 64) < 1e-7, f2);
  assert.ok(Math.abs(Number(r2) - base(500000, 8, 64)) / base(500000, 8, 64) < 1e-7, r2);
  // The view also draws the lab's RoPE model read with each scaling (the shipped markov run).
  assert.match(await ex.page.textContent(`${view('ntk')} .readout`), /exact values/);
  assert.deepEqual(ex.problems, []);
});
