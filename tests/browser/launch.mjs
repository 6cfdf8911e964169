// Shared by the browser tests: the explorer's server on a free loopback port, and Debian's Chromium
// driven by playwright-core (never a downloaded browser).
import { chromium } from 'playwright-core';
import { startServer } from '../../scripts/serve.mjs';

export function launchChromium() {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
      '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
}

/** The explorer (or other `mounts`) served on a free port, and a Chromium page watching for errors. */
export async function openExplorer(mounts) {
  const server = await startServer({ port: 0, ...(mounts ? { mounts } : {}) });
  const origin = `http://127.0.0.1:${server.address().port}`;
  const browser = await launchChromium();
  const page = await browser.newPage({ viewport: { width: 1200, height: 900 } });
  const problems = [];
  page.on('console', (m) => { if (m.type() === 'error' || m.type() === 'warning') problems.push(`console ${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => problems.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => problems.push(`request failed: ${r.url()} ${r.failure()?.errorText}`));
  page.on('response', (r) => { if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.url()}`); });
  page.on('request', (r) => { if (!r.url().startsWith(origin) && !r.url().startsWith('data:')) problems.push(`request outside the origin: ${r.url()}`); });
  async function close() {
    await browser.close();
    await new Promise((ok) => server.close(ok));
  }
  return { page, origin, problems, close };
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
