// The explorer as users deploy it: web/ bundled and minified by Vite into build/page/, a static
// folder any static host serves, with the package (dist/), its .wasm and the lab's data as hashed
// assets, and a precompressed .br and .gz beside every file worth compressing (scripts/serve.mjs
// sends them to a browser that accepts them). Nothing is inlined: the page's Content-Security-
// Policy allows scripts, styles and data from its own origin only.
//   node scripts/build-page.mjs [--force]   (after the WASM build: dist/ must exist; a no-op when
//                                           build/page/ is newer than every source, below)
import { readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

const root = fileURLToPath(new URL('..', import.meta.url));
export const PAGE_DIR = join(root, 'build', 'page');
const COMPRESS = /\.(html|js|mjs|css|json|wasm|svg)$/;
const MIN_BYTES = 1024;  // smaller files gain nothing from an encoding

// Every file and folder under dir.
async function entries(dir) {
  const out = [];
  for (const e of await readdir(dir, { withFileTypes: true })) {
    const path = join(dir, e.name);
    out.push(path);
    if (e.isDirectory()) out.push(...await entries(path));
  }
  return out;
}

/** Writes FILE.br and FILE.gz beside each compressible file of `dir`; returns { files, raw, br } bytes. */
export async function precompress(dir) {
  let count = 0, raw = 0, br = 0;
  for (const file of await entries(dir)) {
    const info = await stat(file);
    if (!COMPRESS.test(file) || !info.isFile() || info.size < MIN_BYTES) continue;
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

// What the build is made from, and where it notes when it started reading them.
const SOURCES = ['web', 'dist', 'data', 'scripts/build-page.mjs', 'package-lock.json'];
const STAMP = join(root, 'build', 'page-sources-read-at');  // beside the folder a host serves, not in it

/**
 * Why build/page/ is out of date (never built, a source missing, or one changed since the build
 * started reading them: a file or folder of web/, dist/, data/, this script, the lock file), or null
 * when it is up to date. A folder's time changes when a file is added to it or deleted from it.
 */
export async function staleSource() {
  const readAt = Number(await readFile(STAMP, 'utf8').catch(() => NaN));
  if (!Number.isFinite(readAt)) return 'never built';
  for (const source of SOURCES) {
    const path = join(root, source);
    const info = await stat(path).catch(() => null);
    if (!info) return `${source} is missing`;
    if (info.mtimeMs >= readAt) return `${source} changed since`;
    for (const p of info.isDirectory() ? await entries(path) : []) {
      if ((await stat(p)).mtimeMs >= readAt) return `${relative(root, p)} changed since`;
    }
  }
  return null;
}

/** Bundles web/ into PAGE_DIR and precompresses it. */
export async function buildPage({ quiet = false } = {}) {
  await stat(join(root, 'dist', 'browser.js')).catch(() => {
    throw new Error('dist/ is missing: build the package first (bash scripts/build.sh wasm)');
  });
  const readAt = Date.now();
  await rm(STAMP, { force: true });  // a build that fails leaves none
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
  const sizes = await precompress(PAGE_DIR);
  await writeFile(STAMP, `${readAt}\n`);
  return sizes;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const stale = process.argv.includes('--force') ? 'forced' : await staleSource();
  if (!stale) {
    console.log(`explorer: ${PAGE_DIR} is up to date (--force builds it again)`);
    process.exit(0);
  }
  const t0 = performance.now();
  const { files: n, raw, br } = await buildPage();
  console.log(`explorer: built ${PAGE_DIR} in ${((performance.now() - t0) / 1000).toFixed(1)} s; `
    + `${n} files precompressed, ${(raw / 1024).toFixed(0)} KiB → ${(br / 1024).toFixed(0)} KiB with brotli`);
}
