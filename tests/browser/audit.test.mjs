// Issue 36: the explorer as users get it — the production build (scripts/build-page.mjs) served
// precompressed — audited with the tools web developers use, in headless Debian Chromium:
// Lighthouse's Accessibility, Best Practices and SEO at 100 and CLS at most 0.02 on desktop and
// mobile (Performance printed, not judged: it moves with the machine's load), axe-core with every
// chapter, fold and data table open in both themes at 0 violations, a first load of at most
// 700 KiB that leaves the lab's data for later, and long tasks measured as a reader scrolls and with
// each view's controls at their ends.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { fileURLToPath } from 'node:url';
import { startServer } from '../../scripts/serve.mjs';
import { launchChromium, pageBuild } from './launch.mjs';
import { FIELDS } from '../../web/settings/state.js';

const AXE = fileURLToPath(new URL('../../node_modules/axe-core/axe.min.js', import.meta.url));
const FIRST_LOAD = 700 * 1024;  // bytes over the wire before the reader scrolls
let server, origin, browser;

before(async () => {
  server = await startServer({ port: 0, mounts: await pageBuild() });
  origin = `http://127.0.0.1:${server.address().port}`;
  browser = await launchChromium();
});
after(async () => {
  await browser?.close();
  await new Promise((ok) => (server ? server.close(ok) : ok()));
});

// A page of the build, watching for errors and counting the bytes that crossed the wire.
async function openPage(hash = '', options = {}) {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 }, ...options });
  const page = await context.newPage();
  const problems = [], requests = [], sizing = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  // Counted when it finishes; its size arrives later (on a busy machine, after the test looks).
  page.on('requestfinished', (r) => {
    const request = { url: r.url(), bytes: 0 };
    requests.push(request);
    sizing.push(r.sizes().then((s) => { request.bytes = s.responseHeadersSize + s.responseBodySize; }, () => {}));
  });
  requests.sized = () => Promise.all(sizing);
  await page.goto(`${origin}/${hash}`);
  await page.waitForSelector('body[data-ready="true"]', { timeout: 60000 });
  return { page, context, problems, requests };
}

test('the first load is at most 700 KiB, compressed, and the lab\'s data waits for a view that needs it', async () => {
  const { page, context, problems, requests } = await openPage();
  await page.waitForTimeout(2000);  // what loads without the reader doing anything
  await requests.sized();
  const bytes = requests.reduce((a, r) => a + r.bytes, 0);
  console.log(`audit: first load ${(bytes / 1024).toFixed(0)} KiB over ${requests.length} requests`);
  assert.ok(bytes <= FIRST_LOAD, `${bytes} bytes`);
  assert.deepEqual(requests.filter((r) => /lab-(result|extension)/.test(r.url)), [], 'the lab\'s data loaded up front');
  // The script and the .wasm came compressed.
  const encodings = await page.evaluate(() => performance.getEntriesByType('resource')
    .filter((e) => /\.(js|mjs|wasm)$/.test(new URL(e.name).pathname)).map((e) => e.encodedBodySize < e.decodedBodySize));
  assert.ok(encodings.length >= 3 && encodings.every(Boolean), `uncompressed: ${encodings}`);
  // Chapter 4 draws the lab's trained table: that fetches the shipped run, once.
  await page.$eval('section[data-view="learned"]', (s) => s.scrollIntoView());
  await page.waitForFunction(() => /trained pos_emb/.test(document.querySelector('section[data-view="learned"] .note')?.textContent));
  // The page may draw before the browser reports the request finished: give the report 10 s.
  const labData = () => requests.filter((r) => /lab-result-[^/]*\.json/.test(r.url)).length;
  for (let t = 0; t < 100 && labData() === 0; t++) await page.waitForTimeout(100);
  assert.equal(labData(), 1);
  assert.deepEqual(problems, []);
  await context.close();
});

// A Lighthouse run of the page (without the screenshots and the back/forward cache check, a second
// load: none weighs in a score). Now and then one comes back without some metric (its trace missed
// it: "TBT" undefined in 2 of about 12 runs on 2026-12-06); that run is said and made again, up to 3.
const METRICS = ['cumulative-layout-shift', 'total-blocking-time', 'largest-contentful-paint', 'total-byte-weight'];
async function measured(lighthouse, port, name, config) {
  for (let run = 1; ; run++) {
    const { lhr } = await lighthouse(`${origin}/`, { port, output: 'json', logLevel: 'error', disableFullPageScreenshot: true,
      skipAudits: ['bf-cache', 'screenshot-thumbnails', 'final-screenshot'] }, config);
    const missing = METRICS.filter((id) => typeof lhr.audits[id].numericValue !== 'number');
    if (!missing.length || run === 3) return lhr;
    console.log(`audit: Lighthouse ${name} run ${run} did not measure ${missing.map((id) => `${id} (${lhr.audits[id]
      .errorMessage ?? lhr.runtimeError?.message ?? 'no value'})`).join(', ')}: run again`);
  }
}

test('Lighthouse: Accessibility, Best Practices and SEO 100, CLS ≤ 0.02, on desktop and mobile', async () => {
  const { default: lighthouse } = await import('lighthouse');
  const { default: desktop } = await import('lighthouse/core/config/desktop-config.js');
  const chromeLauncher = await import('chrome-launcher');
  const chrome = await chromeLauncher.launch({ chromePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    chromeFlags: ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking',
      '--disable-component-update', '--disable-sync', '--no-first-run'] });
  try {
    // Issue 36's Performance targets, on an idle machine.
    for (const [name, config, target] of [['desktop', desktop, 95], ['mobile', undefined, 90]]) {
      const lhr = await measured(lighthouse, chrome.port, name, config);
      const score = (c) => Math.round(lhr.categories[c].score * 100);
      const a = lhr.audits;
      const failing = (c) => lhr.categories[c].auditRefs.filter((r) => r.weight > 0 && a[r.id].score !== null && a[r.id].score < 1)
        .map((r) => r.id);
      const v = (id, f) => (typeof a[id].numericValue === 'number' ? f(a[id].numericValue) : 'not measured');
      console.log(`audit: Lighthouse ${lhr.lighthouseVersion} ${name}: Performance ${score('performance')}, Accessibility `
        + `${score('accessibility')}, Best Practices ${score('best-practices')}, SEO ${score('seo')}; CLS `
        + `${v('cumulative-layout-shift', (x) => x.toFixed(3))}, TBT ${v('total-blocking-time', (x) => `${x.toFixed(0)} ms`)}, `
        + `LCP ${v('largest-contentful-paint', (x) => `${(x / 1000).toFixed(2)} s`)}, ${v('total-byte-weight', (x) => `${(x / 1024)
          .toFixed(0)} KiB`)}; issue 36's target, Performance ≥ ${target} on an idle machine: ${score('performance') >= target
          ? 'met' : 'not met'} in this run (Performance is not judged here: it moves with the machine's load)`);
      for (const c of ['accessibility', 'best-practices', 'seo']) assert.equal(score(c), 100, `${name} ${c}: ${failing(c)}`);
      assert.ok(a['cumulative-layout-shift'].numericValue <= 0.02, `${name} CLS ${a['cumulative-layout-shift'].numericValue}`);
    }
  } finally {
    await chrome.kill();
  }
});

test('axe-core: no violations with every chapter, fold and data table open, light and dark', async () => {
  for (const colorScheme of ['light', 'dark']) {
    // axe is injected as a script of the test's, which the page's CSP would refuse: bypassed for it alone.
    const { page, context, problems } = await openPage(`#deeper=${['embedding', 'sinusoidal', 'rope', 'long-context', 'bias',
      'comparison', 'production', 'lab'].join(',')}`, { colorScheme, bypassCSP: true });
    const { views, tasks, garbage } = await scrollThrough(page);
    if (colorScheme === 'light') printLongTasks('defaults', views, tasks, 50);
    assert.deepEqual(garbage, []);
    await page.evaluate(() => { for (const d of document.querySelectorAll('details')) d.open = true; });
    await page.waitForTimeout(500);
    assert.equal(await page.evaluate(() => document.querySelectorAll('details:not([open])').length), 0);
    await page.addScriptTag({ path: AXE });
    // Summed up in the page: axe's whole result (every passing node of about 28,000 elements, with its
    // HTML) took twice as long to come back over the wire as axe took to run.
    const { version, violations, passed } = await page.evaluate(async () => {
      const r = await window.axe.run(document, { resultTypes: ['violations'] });
      return { version: window.axe.version, passed: r.passes.length,
        violations: r.violations.map((v) => `${v.id}: ${v.nodes.map((n) => n.target.join(' ')).slice(0, 5).join(', ')}`) };
    });
    console.log(`audit: axe-core ${version}, ${colorScheme}: ${violations.length} violations, ${passed} rules passed, `
      + `${views.length} views and every fold open`);
    assert.deepEqual(violations, []);
    assert.deepEqual(problems, []);
    await context.close();
  }
});

// Long tasks as a reader goes through every view, at the defaults (the axe test's light pass,
// above) and at the largest settings the controls allow: printed, not judged (their length is the
// machine's as much as the page's; issue 36 asks for none over 50 ms at the defaults and none over
// 200 ms anywhere). At the largest settings every view must still draw without an error, and at
// both no view's words may show NaN or undefined.
test('long tasks while every view draws at the largest settings (printed), and no error', async () => {
  const folds = 'embedding,sinusoidal,rope,long-context,bias,comparison,production,lab';
  const { page, context, problems } = await openPage(`#dModel=4096&seqLen=131072&heads=128&deeper=${folds}`);
  const { views, tasks, garbage } = await scrollThrough(page, 60000);
  printLongTasks('largest', views, tasks, 200);
  assert.deepEqual(problems, []);
  assert.deepEqual(garbage, []);
  await context.close();
});

// Scrolls to every view in turn, each drawn (with its data) before the next. Returns the views, the
// long tasks (ms, longest first) from then until every view had drawn, and any words showing NaN.
async function scrollThrough(page, timeout = 30000) {
  await observeLongTasks(page);
  const views = await page.$$eval('section[data-view]', (s) => s.map((x) => x.dataset.view)), garbage = [];
  for (const id of views) {
    await page.$eval(`section[data-view="${id}"]`, (s) => s.scrollIntoView());
    await drawnAfter(page, id, 0, timeout);
    garbage.push(...await wordsOf(page, id, id));
  }
  await page.waitForTimeout(500);
  return { views, garbage, tasks: (await page.evaluate(() => window.longTasks)).sort((a, b) => b - a) };
}

// Printed with issue 36's target for it (none over `limit` ms) and whether this run met it.
function printLongTasks(name, views, tasks, limit) {
  console.log(`audit: long tasks after load, scrolling through all ${views.length} views at the ${name}: ${tasks.length}, the `
    + `longest ${tasks.slice(0, 5).map((t) => `${t.toFixed(0)} ms`).join(', ') || 'none'}; issue 36's target, none over `
    + `${limit} ms: ${tasks.some((t) => t > limit) ? 'not met' : 'met'} in this run (not judged here)`);
}

// Issue 36's "no long task over 200 ms at any setting the controls allow", measured: at the largest
// global settings, each view's numeric controls set to their maximum and their minimum, and its
// selects and checkboxes to each of their choices, one at a time, and the longest task while the
// page redraws (about 90 s). Printed, not judged, like the scrolls above; a page error at any of
// those settings fails it, and so does a view whose words show "NaN" or "undefined". The lab's own controls are left out: they start workers, not drawings.
test('long tasks with each view\'s controls at their ends (printed), and no error', async () => {
  const folds = 'embedding,sinusoidal,rope,long-context,bias,comparison,production,lab';
  const { page, context, problems } = await openPage(`#dModel=4096&seqLen=131072&heads=128&deeper=${folds}`);
  await observeLongTasks(page);
  const views = await page.evaluate(() => window.posencExplorer.views.map((v) => [v.def.id, (v.def.controls ?? []).map(([k]) => k)]));
  const rows = [], quiet = [], garbage = [];
  // Sets a control (set()) and notes the longest task until the view is drawn again; the last of
  // a control's values is the one it had, so it is set back without being counted.
  const measure = async (id, at, set, counted) => {
    await page.evaluate(() => { window.longTasks = []; });
    const n = await page.$eval(`section[data-view="${id}"]`, (s) => Number(s.dataset.renders ?? 0));
    await set();
    // A value the page refuses, or one it already had, draws nothing: said below, not waited for.
    if (!(await drawnAfter(page, id, n).then(() => true, () => false))) { quiet.push(at); return; }
    await page.waitForTimeout(400);
    if (counted) rows.push({ at, longest: await page.evaluate(() => Math.max(0, ...window.longTasks)) });
    garbage.push(...await wordsOf(page, id, at));
  };
  for (const [id, keys] of views) {
    await page.$eval(`section[data-view="${id}"]`, (s) => s.scrollIntoView());
    if (!(await drawnAfter(page, id, 0).then(() => true, () => false))) { quiet.push(`${id} (its first drawing)`); continue; }
    for (const key of keys.filter((k) => FIELDS[k]?.max !== undefined && !k.startsWith('lab'))) {
      const input = await page.$(`section[data-view="${id}"] [id^="control-${key}"]:not([type="range"])`);
      if (!input || !(await input.isVisible()) || await input.isDisabled()) continue;
      for (const value of [FIELDS[key].max, FIELDS[key].min, FIELDS[key].value]) {
        await measure(id, `${id} ${key}=${value}`, async () => { await input.fill(String(value)); await input.press('Enter'); },
          value !== FIELDS[key].value);
      }
    }
    const choices = await page.$$eval(`section[data-view="${id}"] :is(select, input[type="checkbox"])[id^="control-"]`,
      (els) => els.filter((e) => !e.disabled && e.offsetParent && !e.id.startsWith('control-lab')).map((e) => ({ sel: `#${e.id}`,
        values: e.type === 'checkbox' ? [!e.checked, e.checked] : [...[...e.options].map((o) => o.value).filter((x) => x !== e.value), e.value] })));
    for (const { sel, values } of choices) {
      for (const [k, value] of values.entries()) {
        await measure(id, `${id} ${sel.slice(9)}=${value}`, () => (typeof value === 'boolean' ? page.setChecked(sel, value)
          : page.selectOption(sel, value)), k < values.length - 1);
      }
    }
  }
  rows.sort((a, b) => b.longest - a.longest);
  console.log(`audit: long tasks with each view's controls at their ends (${rows.length} settings, d_model 4096, seq_len `
    + `131072, 128 heads): over 200 ms ${rows.filter((r) => r.longest > 200).length}, over 50 ms `
    + `${rows.filter((r) => r.longest > 50).length} (issue 36's target, none over 200 ms: ${rows.some((r) => r.longest > 200)
      ? 'not met' : 'met'} in this run); the longest ${rows.slice(0, 6).map((r) => `${r.longest.toFixed(0)} ms (${r.at})`).join(', ')}`
    + `${quiet.length ? `; not redrawn within 10 s: ${quiet.join(', ')}` : ''}`);
  assert.deepEqual(problems, []);
  assert.deepEqual(garbage, []);
  await context.close();
});

// What a view says in words (its note, readout and text after the plot) where it shows a number
// its code could not compute: "NaN" or "undefined" (at "at"). None, whatever the setting.
function wordsOf(page, id, at) {
  return page.$eval(`section[data-view="${id}"]`, (s, where) => [...s.querySelectorAll('.note, .readout, .view-html')]
    .map((e) => e.textContent).filter((t) => /\b(NaN|undefined)\b/.test(t)).map((t) => `${where}: ${t.slice(0, 160)}`), at);
}

// From now on the page keeps each long task's duration (ms) in window.longTasks.
function observeLongTasks(page) {
  return page.evaluate(() => {
    window.longTasks = [];
    new PerformanceObserver((l) => { for (const e of l.getEntries()) window.longTasks.push(e.duration); }).observe({ type: 'longtask' });
  });
}

// Drawn with its data more than n times.
function drawnAfter(page, id, n, timeout = 10000) {
  return page.waitForFunction(([i, k]) => {
    const s = document.querySelector(`section[data-view="${i}"]`);
    return Number(s.dataset.renders ?? 0) > k && !s.hasAttribute('data-waiting');
  }, [id, n], { timeout });
}
