// The explorer as users deploy it: web/ bundled and minified by Vite into build/page/, a static
// folder any static host serves, with the package (dist/), its .wasm and the lab's data as hashed
// assets, and a precompressed .br and .gz beside every file worth compressing (scripts/serve.mjs
// sends them to a browser that accepts them). Nothing is inlined: the page's Content-Security-
// Policy allows scripts, styles and data from its own origin only.
//   node scripts/build-page.mjs      (after the WASM build: dist/ must exist)
import { readdir, readFile, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
export const PAGE_DIR = join(root, 'build', 'page');
const COMPRESS = /\.(html|js|mjs|css|json|wasm|svg)$/;
const MIN_BYTES = 1024;  // smaller files gain nothing from an encoding

async function files(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    if (e.isDirectory()) out.push(...await files(path));
    else out.push(path);
  }
  return out;
}

/** Writes FILE.br and FILE.gz beside each compressible file of `dir`; returns { files, raw, br } bytes. */
export async function precompress(dir) {
  let count = 0, raw = 0, br = 0;
  for (const file of await files(dir)) {
    if (!COMPRESS.test(file) || (await stat(file)).size < MIN_BYTES) continue;
    const body = await readFile(file);
    const brotli = brotliCompressSync(body, { params: { [constants.BROTLI_PARAM_QUALITY]: 11,
      [constants.BROTLI_PARAM_SIZE_HINT]: body.length } });
    await writeFile(`${file}.br`, brotli);
    await writeFile(`${file}.gz`, gzipSync(body, { level: 9 }));
    count += 1;
    raw += body.length;
    br += brotli.length;
  }
  return { files: count, raw, br };
}

/** A file the build is made from (web/, dist/, data/) that is newer than the build, or null when it is up to date. */
export async function staleSource() {
  const built = await stat(join(PAGE_DIR, 'index.html')).then((s) => s.mtimeMs, () => -1);
  if (built < 0) return 'nothing (build/page/ is missing)';
  for (const dir of ['web', 'dist', 'data']) {
    for (const file of await files(join(root, dir))) if ((await stat(file)).mtimeMs > built) return relative(root, file);
  }
  return null;
}

/** Bundles web/ into PAGE_DIR and precompresses it. */
export async function buildPage({ quiet = false } = {}) {
  await stat(join(root, 'dist', 'browser.js')).catch(() => {
    throw new Error('dist/ is missing: build the package first (bash scripts/build.sh wasm)');
  });
  const { build } = await import('vite');
  await build({
    root: join(root, 'web'),
    base: './',
    logLevel: quiet ? 'error' : 'warn',
    publicDir: false,
    build: {
      outDir: PAGE_DIR, emptyOutDir: true, target: 'es2022', assetsInlineLimit: 0, reportCompressedSize: false,
      modulePreload: { polyfill: false },
      // One script for the page: its views are imported by name at start (chapters.js), all of them.
      rolldownOptions: { output: { codeSplitting: false } },
    },
    worker: { format: 'es' },
  });
  return precompress(PAGE_DIR);
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const t0 = performance.now();
  const { files: n, raw, br } = await buildPage();
  console.log(`explorer: built ${PAGE_DIR} in ${((performance.now() - t0) / 1000).toFixed(1)} s; `
    + `${n} files precompressed, ${(raw / 1024).toFixed(0)} KiB → ${(br / 1024).toFixed(0)} KiB with brotli`);
}
