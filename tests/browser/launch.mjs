// Shared by the browser tests: the explorer's server on a free loopback port, and Debian's Chromium
// driven by playwright-core (never a downloaded browser).
import { chromium } from 'playwright-core';
import { staleSource } from '../../scripts/build-page.mjs';
import { EXPLORER, PAGE, startServer } from '../../scripts/serve.mjs';

/**
 * The explorer as `npm start` serves it: the production build (build/page/, which the page layer
 * builds first), refused when out of date.
 */
export async function pageBuild() {
  const stale = await staleSource();
  if (stale) throw new Error(`build/page/ is out of date (${stale}): bash scripts/build.sh page builds it`);
  return PAGE;
}

/**
 * What the browser tests serve: the production build (a page load there costs about 0.9 s of CPU,
 * against 1.4 s for web/'s 68 modules fetched one by one), or with POSENC_PAGE=web the page as
 * written: for a file run alone while editing web/ (`POSENC_PAGE=web node --test tests/browser/F`),
 * with no build. The audit always takes the build.
 */
export const explorerMounts = () => (process.env.POSENC_PAGE === 'web' ? EXPLORER : pageBuild());

export async function launchChromium() {
  const browser = await chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  // Every page it opens is watched for a hang (below); browser.newPage makes its context here too.
  const newContext = browser.newContext.bind(browser);
  browser.newContext = async (options) => {
    const context = await newContext(options);
    context.on('page', watchHang);
    return context;
  };
  return browser;
}

// A page whose main thread has not answered for HANG_S seconds is said on stderr, once, with its
// address. A test waiting on it would wait until the file's time limit (scripts/test.sh), which names
// only the file; this tells a script or WASM call that never returns from a wait elsewhere.
const HANG_S = 60;
const watched = new Set();
function watchHang(page) {
  const entry = { page, asking: false, said: false };
  watched.add(entry);
  page.on('close', () => watched.delete(entry));
}
setInterval(() => {
  for (const e of watched) {
    if (e.asking || e.said) continue;
    e.asking = true;
    const late = new Promise((done) => { setTimeout(() => done(false), HANG_S * 1000).unref(); });
    Promise.race([e.page.evaluate(() => true).catch(() => true), late]).then((answered) => {
      e.asking = false;
      if (answered) return;
      e.said = true;
      console.error(`hang: the page at ${e.page.url()} has not answered for ${HANG_S} s (a script or WASM call that does not return)`);
    });
  }
}, HANG_S * 500).unref();

/** The explorer (or other `mounts`) served on a free port, and a Chromium page watching for errors. */
export async function openExplorer(mounts) {
  const server = await startServer({ port: 0, mounts: mounts ?? await explorerMounts() });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchChromium();
  const problems = [];
  // A page that records every error, failed or foreign request into problems.
  async function watched(page) {
    // The settings bar folds by default; these tests work with it open, as a desktop reader who opened
    // it once has it (lesson.test.mjs checks the default in a fresh context).
    await page.addInitScript(() => {
      if (!localStorage.getItem('posenc-explorer-settings')) localStorage.setItem('posenc-explorer-settings', 'open');
    });
    page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
    page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
    page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
    page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
    page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) problems.push(`request outside the origin: ${r.url()}`); });
    return page;
  }
  const context = await browser.newContext({ viewport: { width: 1200, height: 900 } });
  const page = await watched(await context.newPage());
  // The page closed and another opened in its place: a tab with no history (Chromium keeps 50 entries).
  const newTab = async (old) => {
    const tab = await watched(await context.newPage());
    await old.close();
    return tab;
  };
  async function close() {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  }
  return { page, origin, problems, close, newTab };
}

/** Number of distinct RGB colours in a canvas (0 for a blank one). */
export function distinctColors(page, selector) {
  return page.$eval(selector, (canvas) => {
    const { data } = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height);
    const seen = new Set();
    for (let i = 0; i < data.length; i += 4) if (data[i + 3] > 0) seen.add((data[i] << 16) | (data[i + 1] << 8) | data[i + 2]);
    return seen.size;
  });
}

/**
 * The explorer for a test file (served from `mounts`, by default explorerMounts()): openExplorer's
 * fields once start() ran, and the helpers the tests share (a fresh document per open(), "drawn",
 * "reacts" to a control, ...).
 */
export function explorerSession(mounts) {
  const ex = {
    async start() { Object.assign(ex, await openExplorer(mounts)); },
    view: (id) => `section[data-view="${id}"]`,
    state: () => ex.page.evaluate(() => window.posencExplorer.state),
    renders: (id) => ex.page.$eval(ex.view(id), (s) => Number(s.dataset.renders ?? 0)),
    pixels: (id) => ex.page.$eval(`${ex.view(id)} canvas`, (c) => c.toDataURL()),
    visits: 0,
    // For a test that counts history entries: a new tab, since Chromium keeps at most 50 per tab.
    async freshTab() { ex.page = await ex.newTab(ex.page); },
    // A fresh document each time (a hash-only change would be a same-document navigation), until
    // the views on screen are drawn, or with { drawn: false } until the page has read its settings
    // (enough for a test of what a URL opens: it leaves before the drawing, about half a load's CPU).
    async open(hash = '', { drawn = true } = {}) {
      ex.visits += 1;
      await ex.page.goto(`${ex.origin}/?visit=${ex.visits}${hash}`);
      if (drawn) await ex.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
      else await ex.page.waitForFunction(() => window.posencExplorer !== undefined, null, { timeout: 30000 });
    },
    // Scrolls a view into sight (opening its "go deeper" fold, as a reader would, if it is in a
    // closed one) and waits until it has been drawn more than `after` times.
    async drawn(id, after = 0) {
      await ex.page.$eval(ex.view(id), (s) => {
        const fold = s.closest('details.deeper');
        if (fold && !fold.open) fold.querySelector('summary').click();
      });
      await ex.page.$eval(ex.view(id), (s) => s.scrollIntoView());
      // Drawn with its data: a view waiting for the lab's result (data-waiting) is drawn again once it is in.
      await ex.page.waitForFunction(({ sel, n }) => {
        const s = document.querySelector(sel);
        return Number(s.dataset.renders ?? 0) > n && !s.hasAttribute('data-waiting');
      }, { sel: ex.view(id), n: after }, { timeout: 15000 });
      return `${ex.view(id)} canvas`;
    },
    // Clicks `selector` once it is on screen and the views there are drawn: a view drawn for the first
    // time between Playwright's check of the target and its click could move the target from under
    // the pointer (a note or table written, a fold's height settling).
    async clickSettled(selector) {
      await ex.page.$eval(selector, (e) => e.scrollIntoView({ block: 'center' }));
      await ex.page.waitForFunction(() => window.posencExplorer.views.every((v) => !v.visible || (!v.dirty && !v.computed)),
        null, { timeout: 15000 });
      await ex.page.click(selector);
    },
    // Waits until a view has no redraw pending (a view drawn earlier may be due for another).
    settled: (id) => ex.page.waitForFunction((i) => !window.posencExplorer.views.find((v) => v.def.id === i).dirty, id,
      { timeout: 15000 }),
    // Changes a view's own control and checks that its plot changed. The plot before is taken once
    // no redraw is pending, so that a redraw from before the change cannot pass for the change's:
    // a box still focused from an earlier change commits it when the focus moves (its change event
    // redraws every view), so that happens first.
    async reacts(id, change) {
      await ex.drawn(id);
      await ex.page.evaluate(() => document.activeElement?.blur?.());
      await ex.settled(id);
      const before = await ex.pixels(id);
      const n = await ex.renders(id);
      await change();
      await ex.drawn(id, n);
      if (await ex.pixels(id) === before) throw new Error(`${id} did not change`);
    },
  };
  return ex;
}
