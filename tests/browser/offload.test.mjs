// The page's compute worker (web/page/compute-worker.js) can run every view that offloads: a view
// whose definition has `work(pe, args)` (web/page/offload.js) is in the worker's list, and the list
// holds nothing else. Node imports the view modules as the worker does; the browser test in
// explorer.test.mjs checks that each draws, through the worker, the numbers the page computes.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';

const dir = new URL('../../web/views/', import.meta.url);

test('every view with work(pe, args) is in the compute worker\'s list, and only those', async () => {
  const worker = readFileSync(new URL('../../web/page/compute-worker.js', import.meta.url), 'utf8');
  const listed = [...worker.matchAll(/^\s+'?([a-z0-9-]+)'?: \(\) => import\('\.\.\/views\/([a-z0-9-]+)\.js'\)/gm)];
  for (const [, id, file] of listed) assert.equal(id, file, `the worker loads ${file}.js for ${id}`);
  const offloading = [];
  for (const f of readdirSync(dir).filter((x) => x.endsWith('.js'))) {
    const def = (await import(new URL(f, dir))).default;
    if (typeof def?.work === 'function') offloading.push(def.id);
  }
  assert.ok(offloading.length >= 4, `${offloading.length} views offload`);
  assert.deepEqual(listed.map(([, id]) => id).sort(), offloading.sort());
});
