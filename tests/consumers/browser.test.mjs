// The built package (dist/, what npm pack ships) in Chromium, where Node 20 cannot go:
// init({ threads }) on a page that is not isolated: one thread and one warning giving the reason.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { launchChromium } from '../browser/launch.mjs';
import { CSP, ISOLATION } from '../../scripts/serve.mjs';

const dist = fileURLToPath(new URL('../../dist/', import.meta.url));
const TYPES = { '.js': 'text/javascript', '.mjs': 'text/javascript', '.wasm': 'application/wasm', '.html': 'text/html', '.json': 'application/json' };
const PAGE = '<!doctype html><html lang="en"><head><meta charset="utf-8"><link rel="icon" href="data:,"><title>posenc</title></head><body></body></html>';

// dist/ at /dist/ and an empty page at /, with the explorer's CSP; COOP/COEP only when `isolated`.
function serve(isolated) {
  const server = createServer(async (req, res) => {
    const path = decodeURIComponent(req.url.split('?')[0]);
    const headers = { 'Content-Security-Policy': CSP, ...(isolated ? ISOLATION : {}) };
    if (path === '/') return res.writeHead(200, { ...headers, 'Content-Type': 'text/html' }).end(PAGE);
    const file = normalize(join(dist, path.replace(/^\/dist\//, '')));
    try {
      if (!path.startsWith('/dist/') || !file.startsWith(dist)) throw new Error('outside');
      const body = await readFile(file);
      res.writeHead(200, { ...headers, 'Content-Type': TYPES[extname(file)] ?? 'application/octet-stream' }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  return new Promise((ok) => server.listen(0, '127.0.0.1', () => ok(server)));
}

let browser;
const servers = {};
before(async () => {
  browser = await launchChromium();
  servers.isolated = await serve(true);
  servers.plain = await serve(false);
});
after(async () => {
  await browser?.close();
  for (const s of Object.values(servers)) s.close();
});

/** A fresh page of `which` server, with its console warnings and errors collected. */
async function open(which) {
  const page = await browser.newPage();
  const messages = [];
  page.on('console', (m) => { if (m.type() === 'warning' || m.type() === 'error') messages.push(`${m.type()}: ${m.text()}`); });
  page.on('pageerror', (e) => messages.push(`page error: ${e.message}`));
  await page.goto(`http://127.0.0.1:${servers[which].address().port}/`);
  return { page, messages };
}

test('Chromium: init({ threads: 2 }) on a page that is not crossOriginIsolated runs 1 thread and warns once, with the reason', async () => {
  const { page, messages } = await open('plain');
  const threads = await page.evaluate(async () => {
    const { init } = await import('/dist/browser.js');
    const a = await init({ threads: 2 }), b = await init({ threads: 2 });
    return [a.threads, b.threads, crossOriginIsolated];
  });
  assert.deepEqual(threads, [1, 1, false]);
  assert.equal(messages.length, 1, messages.join('\n'));
  assert.match(messages[0], /^warning: posenc: init\(\{ threads: 2 \}\) runs on 1 thread: the page is not crossOriginIsolated, so it has no SharedArrayBuffer \(serve it with Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp\)$/);
  await page.close();
});
