// Static server for the explorer: the production build (build/page/, scripts/build-page.mjs) at /,
// each file sent precompressed (.br or .gz, as the browser accepts) and its hashed assets cached for
// good; or, for development, the page as written: web/ at /, the built package at /dist/, data/ (the
// lab's shipped results) at /data/. Serves .wasm as application/wasm and sends a strict
// Content-Security-Policy, and COOP/COEP, which make the page crossOriginIsolated
// (SharedArrayBuffer: posenc's threads). Loopback only.
//   node scripts/serve.mjs            the production build (PORT overrides 8080)
//   node scripts/serve.mjs --dev      web/ as written
import { createServer } from 'node:http';
import { readFile, stat } from 'node:fs/promises';
import { extname, join, normalize, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The explorer as written: the built package at /dist/, data/ at /data/, the page at /. */
export const EXPLORER = [
  ['/dist/', join(root, 'dist')],
  ['/data/', join(root, 'data')],
  ['/', join(root, 'web')],
];
/** The explorer as users deploy it: the production build at /. */
export const PAGE = [['/', join(root, 'build', 'page')]];
const IMMUTABLE = /\/assets\/[^/]+-[A-Za-z0-9_-]{8}\.[a-z0-9]+$/;  // Vite's hashed names: never change
const ENCODINGS = [['br', '.br'], ['gzip', '.gz']];
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

// The file to send for `file`: its precompressed form when there is one the browser accepts, and
// its stat (throws ENOENT when there is no such file).
async function encoded(file, accept = '') {
  for (const [name, ext] of ENCODINGS) {
    if (!new RegExp(`\\b${name}\\b`).test(accept)) continue;
    const info = await stat(file + ext).catch(() => null);
    if (info?.isFile()) return { path: file + ext, encoding: name, info };
  }
  return { path: file, encoding: null, info: await stat(file) };
}

/** Serves `mounts` ([url prefix, folder] pairs, first match wins) on host:port (0: any free port). */
export function startServer({ port = 8080, host = '127.0.0.1', mounts = EXPLORER } = {}) {
  const server = createServer(async (req, res) => {
    const file = req.method === 'GET' || req.method === 'HEAD' ? resolve(mounts, req.url) : null;
    try {
      if (!file) throw Object.assign(new Error('not found'), { code: 'ENOENT' });
      const { path, encoding, info: { size, mtimeMs } } = await encoded(file, req.headers['accept-encoding']);
      // A validator for the file as sent: a browser holding this copy gets a 304, and reuses what
      // it compiled from it (V8's code cache for scripts and WebAssembly) instead of fetching again.
      const etag = `"${size.toString(36)}-${Math.trunc(mtimeMs).toString(36)}${encoding ? `-${encoding}` : ''}"`;
      const fresh = req.headers['if-none-match'] === etag;
      const body = fresh ? undefined : await readFile(path);
      res.writeHead(fresh ? 304 : 200, {
        ETag: etag,
        'Content-Type': types[extname(file)] ?? 'application/octet-stream',
        ...(encoding ? { 'Content-Encoding': encoding } : {}),
        Vary: 'Accept-Encoding',
        'Content-Security-Policy': CSP,
        ...ISOLATION,
        'X-Content-Type-Options': 'nosniff',
        'Cache-Control': IMMUTABLE.test(file) ? 'public, max-age=31536000, immutable' : 'no-cache',
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
  const dev = process.argv.includes('--dev');
  if (!dev && !(await stat(join(PAGE[0][1], 'index.html')).catch(() => null))) {
    console.error('posenc explorer: build/page/ is missing: node scripts/build-page.mjs builds it (npm start does)');
    process.exit(1);
  }
  const server = await startServer({ port, mounts: dev ? EXPLORER : PAGE });
  const { port: actual } = server.address();
  console.log(`posenc explorer${dev ? ' (web/ as written)' : ''}: http://127.0.0.1:${actual}/  (Ctrl+C to stop)`);
}
