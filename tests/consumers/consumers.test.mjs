// The package where users put it: `npm pack` ships only what it should, the tarball installs into
// an empty project and imports in Node, Vite (build and dev server), webpack 5 and a plain page
// without a bundler compute a known value in Chromium, single-threaded and with the threaded build
// (`?threads=2` on a crossOriginIsolated page), and tsc accepts the types test.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, cp, mkdir, mkdtemp, readFile, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { openExplorer } from '../browser/launch.mjs';
import { ISOLATION } from '../../scripts/serve.mjs';

const run = promisify(execFile);
const root = fileURLToPath(new URL('../..', import.meta.url));
const app = fileURLToPath(new URL('./app', import.meta.url));
const expected = `wasm ${Math.fround(Math.sin(1))}`;
const expectedThreaded = `${expected} threads 2 same`;
let work, tarball, packedFiles;

// A project folder with the packed posenc installed from the tarball (no registry needed).
async function project(name, files = {}) {
  const dir = join(work, name);
  await cp(app, dir, { recursive: true });
  await writeFile(join(dir, 'package.json'), JSON.stringify({ name, private: true, type: 'module' }));
  for (const [file, text] of Object.entries(files)) await writeFile(join(dir, file), text);
  await run('npm', ['install', '--no-audit', '--no-fund', '--offline', '--ignore-scripts', tarball], { cwd: dir });
  return dir;
}

// Serves `out` (with COOP/COEP, as scripts/serve.mjs) and checks what the page computes, with one
// thread, with ?threads=2 and through the worker form (?worker).
async function checkPages(out) {
  const served = await openExplorer([['/', out]]);
  try {
    for (const [query, want] of [['', expected], ['?threads=2', expectedThreaded], ['?worker', `${expected} worker same`]]) {
      await served.page.goto(`${served.origin}/${query}`);
      await served.page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
      assert.equal(await served.page.textContent('#out'), want, query);
    }
    assert.deepEqual(served.problems, []);
  } finally {
    await served.close();
  }
}

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'posenc-consumers-'));
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], { cwd: root });
  const [info] = JSON.parse(stdout);
  tarball = join(work, info.filename);
  packedFiles = info.files.map((f) => f.path).sort();
});
after(async () => work && rm(work, { recursive: true, force: true }));

test('npm pack ships only the package: JS entries, types, the .wasm, data, README and its docs, LICENSE', async () => {
  // What it should ship, from the tree: every file of js/ (CMake copies them all to dist/), the
  // Emscripten builds, the presets, the docs pages with the schemes' (not their other files), README, LICENSE.
  const js = (await readdir(join(root, 'js'))).map((f) => `dist/${f}`);
  const docs = (await readdir(join(root, 'docs'), { recursive: true })).filter((f) => f.endsWith('.md')).map((f) => `docs/${f}`);
  const builds = ['posenc.mjs', 'posenc.wasm', 'posenc-threads.mjs', 'posenc-threads.wasm', 'posenc-threads.worker.js',
    'posenc-threads-node.cjs', 'posenc-threads-node.worker.cjs', 'presets.js', 'presets.json'].map((f) => `dist/${f}`);
  const want = [...js, ...builds, ...docs, 'docs/explorer.png', 'README.md', 'LICENSE', 'package.json'].sort();
  assert.deepEqual(packedFiles, want);
});

// npm pack runs scripts/prepack.sh, which builds dist/ (above, it found it up to date). In a copy of
// the sources without dist/, on a machine without Emscripten (a PATH without emcc, a user who cannot
// install it), packing must fail and say what is missing, not ship a package without dist/.
test('npm pack without dist/ and without the toolchain fails, naming what is missing', async (t) => {
  if (process.getuid?.() !== 0) return t.skip('SKIPPED: needs root to run npm pack as another user (nobody)');
  const copy = join(work, 'no-toolchain'), bin = join(work, 'bin-without-emcc');
  const { stdout: files } = await run('git', ['ls-files', '--cached', '--others', '--exclude-standard'], { cwd: root });
  for (const f of files.trim().split('\n')) await cp(join(root, f), join(copy, f));
  await symlink(join(root, 'node_modules'), join(copy, 'node_modules'));
  await mkdir(bin);
  for (const dir of ['/usr/local/bin', '/usr/bin']) {
    for (const f of await readdir(dir)) if (!['emcc', 'em++'].includes(f)) await symlink(join(dir, f), join(bin, f)).catch(() => {});
  }
  await run('chown', ['-R', 'nobody', copy]);
  await chmod(work, 0o755);  // mkdtemp's 0700 would keep nobody out
  const packed = run('setpriv', ['--reuid=nobody', '--regid=nogroup', '--clear-groups', 'env', `PATH=${bin}`, `HOME=${copy}`, 'npm', 'pack'], { cwd: copy });
  await assert.rejects(packed, (e) => {
    assert.match(e.stderr, /bootstrap: missing: emscripten/);
    assert.match(e.stderr, /prepack: dist\/ \(the npm package\) could not be built, so nothing was packed/);
    return true;
  });
  assert.deepEqual((await readdir(copy)).filter((f) => f.endsWith('.tgz')), []);
});

test('the tarball installs into an empty project and imports in Node', async () => {
  const dir = await project('node-app', {
    'check.mjs': "import { init } from 'posenc';\nimport presets from 'posenc/presets.json' with { type: 'json' };\n" +
      "const pe = await init();\nconsole.log(`${pe.simdArch} ${pe.sinusoidal(2, 2)[2]} ${presets.presets.length}`);\n" +
      "const pe2 = await init({ threads: 2 });\nconsole.log(`threads ${pe2.threads} ${pe2.sinusoidal(2, 2)[2]}`);\n",
  });
  const { stdout } = await run('node', ['--no-warnings', 'check.mjs'], { cwd: dir });
  const n = JSON.parse(await readFile(join(root, 'data/presets.json'), 'utf8')).presets.length;
  assert.equal(stdout.trim(), `${expected} ${n}\nthreads 2 ${Math.fround(Math.sin(1))}`);
});

test('Vite: a production build of an app using posenc computes in Chromium', async () => {
  const dir = await project('vite-app');
  const { build } = await import('vite');
  await build({ root: dir, logLevel: 'silent', build: { outDir: join(dir, 'out'), target: 'es2022' } });
  await checkPages(join(dir, 'out'));
});

// Vite's dev server rewrites the worker script into a module: init() sees it and stays on 1 thread.
// It needs no optimizeDeps setting (Vite 8.3 serves the .wasm as it is).
test('Vite: the dev server serves posenc as is (threads fall back to 1 there)', async () => {
  const dir = await project('vite-dev');
  const { createServer } = await import('vite');
  const server = await createServer({ root: dir, logLevel: 'silent', server: { host: '127.0.0.1', port: 0, headers: ISOLATION } });
  await server.listen();
  const { launchChromium } = await import('../browser/launch.mjs');
  const browser = await launchChromium();
  try {
    const page = await browser.newPage();
    const address = server.httpServer.address();
    const warnings = [];
    page.on('console', (m) => { if (m.type() === 'warning') warnings.push(m.text()); });
    for (const [query, want] of [['', expected], ['?threads=2', `${expected} threads 1 same`], ['?worker', `${expected} worker same`]]) {
      await page.goto(`http://127.0.0.1:${address.port}/${query}`);
      await page.waitForSelector('body[data-ready="true"]', { timeout: 30000 });
      assert.equal(await page.textContent('#out'), want, query);
    }
    assert.match(warnings.join('\n'), /runs on 1 thread: .*posenc-threads.worker.js\?no-inline is missing or was rewritten by the server/);
  } finally {
    await browser.close();
    await server.close();
  }
});

test('webpack 5: a production bundle of an app using posenc computes in Chromium', async () => {
  const dir = await project('webpack-app');
  const { default: webpack } = await import('webpack');
  const stats = await new Promise((ok, fail) => webpack({
    mode: 'production', context: dir, entry: './main.js',
    output: { path: join(dir, 'out'), filename: 'main.js', publicPath: '' },
  }).run((err, s) => (err ? fail(err) : ok(s))));
  assert.equal(stats.hasErrors(), false, stats.toString('errors-only'));
  await writeFile(join(dir, 'out', 'index.html'), await readFile(join(dir, 'index.html'), 'utf8'));
  await checkPages(join(dir, 'out'));
});

test('a plain page without a bundler imports the installed package by path', async () => {
  const dir = await project('plain-page');
  const main = await readFile(join(dir, 'main.js'), 'utf8');
  await writeFile(join(dir, 'main.js'), main.replace("from 'posenc'", "from './node_modules/posenc/dist/browser.js'"));
  await checkPages(dir);
});

// use.ts under lib es2022 alone (no DOM, no @types/node, skipLibCheck false), with Node16 and with
// bundler resolution; interop.ts beside onnxruntime-web's and TF.js's own types, with the DOM.
test('TypeScript: tsc --noEmit accepts a file using every export (and rejects its misuses), without the DOM, node16 and bundler', async () => {
  for (const config of ['tsconfig.json', 'tsconfig.bundler.json', 'tsconfig.interop.json']) {
    await run(join(root, 'node_modules/.bin/tsc'), ['-p', join(root, 'tests/consumers/types', config)], { cwd: root });
  }
});
