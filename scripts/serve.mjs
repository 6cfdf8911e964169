// Static server for the explorer: web/ at /, the built package at /dist/, data/ (the lab's shipped
// result) at /data/. Serves .wasm as application/wasm and sends a strict Content-Security-Policy,
// and COOP/COEP, which make the page crossOriginIsolated (SharedArrayBuffer: posenc's threads).
// Loopback only.
//   node scripts/serve.mjs            (PORT overrides 8080)
import { createServer } from 'node:http';
import { readFile } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The explorer: the built package at /dist/, data/ at /data/, the page at /. */
export const EXPLORER = [
  ['/dist/', join(root, 'dist')],
  ['/data/', join(root, 'data')],
  ['/', join(root, 'web')],
];
const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.png': 'image/png',
  '.svg': 'image/svg+xml',
  '.ts': 'text/plain; charset=utf-8',
};
export const CSP =
  "default-src 'self'; script-src 'self' 'wasm-unsafe-eval'; style-src 'self'; " +
  "img-src 'self' data: blob:; connect-src 'self'; object-src 'none'; base-uri 'none'";

export const ISOLATION = { 'Cross-Origin-Opener-Policy': 'same-origin', 'Cross-Origin-Embedder-Policy': 'require-corp' };

function resolve(mounts, urlPath) {
  const path = decodeURIComponent(urlPath.split('?')[0]);
  for (const [prefix, dir] of mounts) {
    if (!path.startsWith(prefix)) continue;
    let rel = path.slice(prefix.length);
    if (rel === '' || rel.endsWith('/')) rel += 'index.html';
    const file = normalize(join(dir, rel));
    return file.startsWith(dir + sep) ? file : null;  // no escaping the mount
  }
  return null;
}

/** Serves `mounts` ([url prefix, folder] pairs, first match wins) on host:port (0: any free port). */
export function startServer({ port = 8080, host = '127.0.0.1', mounts = EXPLORER } = {}) {
  const server = createServer(async (req, res) => {
    const file = req.method === 'GET' || req.method === 'HEAD' ? resolve(mounts, req.url) : null;
    try {
      if (!file) throw Object.assign(new Error('not found'), { code: 'ENOENT' });
      const body = await readFile(file);
      res.writeHead(200, {
        'Content-Type': types[extname(file)] ?? 'application/octet-stream',
        'Content-Security-Policy': CSP,
        ...ISOLATION,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': 'no-cache',
      });
      res.end(req.method === 'HEAD' ? undefined : body);
    } catch (e) {
      const missing = e.code === 'ENOENT' || e.code === 'EISDIR';
      res.writeHead(missing ? 404 : 500, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end(missing ? 'not found\n' : 'server error\n');
    }
  });
  return new Promise((ok, fail) => {
    server.once('error', fail);
    server.listen(port, host, () => ok(server));
  });
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const port = Number(process.env.PORT ?? 8080);
  const server = await startServer({ port });
  const { port: actual } = server.address();
  console.log(`posenc explorer: http://127.0.0.1:${actual}/  (Ctrl+C to stop)`);
}
