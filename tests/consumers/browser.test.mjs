// The built package (dist/, what npm pack ships) in Chromium, where Node 20 cannot go: Float16Array
// in and out; the worker form in a module Web Worker, bit for bit the direct calls, threaded on a
// crossOriginIsolated page, and how long the main thread is blocked with and without it (printed);
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

test('Chromium: Float16Array in and out — attention, applyRope, applyRope2d, kvCache and the ONNX ops, bits still accepted', async () => {
  const { page, messages } = await open('isolated');
  const r = await page.evaluate(async () => {
    const { init } = await import('/dist/browser.js');
    const pe = await init();
    const n = 40 * 4 * 16, f32 = Float32Array.from({ length: n }, (_, i) => Math.sin(i * 0.7));
    const f16 = Float16Array.from(f32), bits = new Uint16Array(f16.buffer);
    const o = { nHeads: 4, headDim: 16, causal: true };
    const sameBits = (a, b) => a.length === b.length && new Uint16Array(a.buffer, a.byteOffset, a.length).every((x, i) => x === new Uint16Array(b.buffer, b.byteOffset, b.length)[i]);
    const same = (a, b) => a.length === b.length && a.every((x, i) => Object.is(x, b[i]));
    const wide = Float32Array.from(f16);
    const out = {};
    // K/V as Float16Array: kvDtype float16 by itself, exactly the Uint16Array-bits call.
    out.kv = same(pe.attention(wide, f16, f16, o), pe.attention(wide, bits, bits, { ...o, kvDtype: 'float16' }));
    // q as Float16Array: computed in float32, the output rounded to a Float16Array.
    const y = pe.attention(f16, f16, f16, o);
    out.attention = y instanceof Float16Array && same(y, Float16Array.from(pe.attention(wide, wide, wide, o)));
    const r2 = pe.applyRope2d(f16.subarray(0, 4 * 4 * 16), { nHeads: 4, headDim: 16, grid: [2, 2] });
    out.rope2d = r2 instanceof Float16Array && same(r2, Float16Array.from(pe.applyRope2d(wide.subarray(0, 256), { nHeads: 4, headDim: 16, grid: [2, 2] })));
    const cache = pe.kvCache({ nKvHeads: 4, headDim: 16, capacity: 40, rope: { params: { headDim: 16 } } });
    cache.append(f16, f16);
    const a16 = cache.attend(f16.subarray(-64), { nHeads: 4 });
    out.cache = a16 instanceof Float16Array && same(a16, Float16Array.from(cache.attend(wide.subarray(-64), { nHeads: 4 }))) &&
      same(cache.read().k, (() => { const c = pe.kvCache({ nKvHeads: 4, headDim: 16, capacity: 40, rope: { params: { headDim: 16 } } });
        c.append(wide, wide); const k = c.read().k; c.delete(); return k; })());
    cache.delete();
    const rope = pe.applyRope(f16, { seqLen: 40, nHeads: 4, params: { headDim: 16 } });
    out.rope = rope instanceof Float16Array && same(rope, Float16Array.from(pe.applyRope(wide, { seqLen: 40, nHeads: 4, params: { headDim: 16 } })));
    // The ONNX ops: Float16Array data gives Float16Array results with the bits of the Uint16Array call.
    const t = (data) => ({ data, dims: [1, 4, 40, 16] });
    const Y16 = pe.onnx.attention({ Q: t(f16), K: t(f16), V: t(f16) }, { is_causal: 1 }).Y;
    const Ybits = pe.onnx.attention({ Q: t(bits), K: t(bits), V: t(bits) }, { is_causal: 1 }).Y;
    out.onnx = Y16.data instanceof Float16Array && Ybits.data instanceof Uint16Array && Y16.type === 'float16' && sameBits(Y16.data, Ybits.data);
    const { cos, sin } = pe.ropeCache({ params: { headDim: 16 }, seqLen: 40 });
    const c16 = { data: Float16Array.from(cos), dims: [40, 8] }, s16 = { data: Float16Array.from(sin), dims: [40, 8] };
    const cb = { data: new Uint16Array(c16.data.buffer), dims: [40, 8] }, sb = { data: new Uint16Array(s16.data.buffer), dims: [40, 8] };
    const ids = { data: Array.from({ length: 40 }, (_, i) => i), dims: [1, 40] };
    const R16 = pe.onnx.rotaryEmbedding({ X: t(f16), cos_cache: c16, sin_cache: s16, position_ids: ids }).Y;
    out.rotary = R16.data instanceof Float16Array && sameBits(R16.data, pe.onnx.rotaryEmbedding({ X: t(bits), cos_cache: cb, sin_cache: sb, position_ids: ids }).Y.data);
    return out;
  });
  assert.deepEqual(r, { kv: true, attention: true, rope2d: true, cache: true, rope: true, onnx: true, rotary: true });
  assert.deepEqual(messages, []);
  await page.close();
});

test('Chromium: initWorker in a module Web Worker — the direct results bit for bit, threaded when isolated; main-thread blocking (printed)', async () => {
  const { page, messages } = await open('isolated');
  const r = await page.evaluate(async () => {
    const { init, initWorker, PosencRangeError } = await import('/dist/browser.js');
    const pe = await init();
    const S = 2048, H = 8, D = 64, o = { nHeads: H, headDim: D, causal: true };
    const x = Float32Array.from({ length: S * H * D }, (_, i) => Math.sin(i * 0.37));
    const same = (a, b) => a.length === b.length && a.every((v, i) => Object.is(v, b[i]));
    let t = performance.now();
    const want = pe.attention(x, x, x, o);
    const direct = performance.now() - t;
    // The longest gap between timer ticks on the page's main thread while the worker computes.
    async function stall(w) {
      const args = [x.slice(), x.slice(), x.slice()];  // fresh (transfer detaches them), made before the clock starts
      let worst = 0, last = performance.now(), on = true;
      const tick = () => { const now = performance.now(); worst = Math.max(worst, now - last); last = now; if (on) setTimeout(tick, 0); };
      tick();
      const y = await w.attention(...args, o);
      on = false;
      return { worst, same: same(y, want) };
    }
    const out = { direct };
    const pw = await initWorker();
    out.single = await stall(pw);
    const f16 = Float16Array.from(x.subarray(0, 64 * H * D));
    const r16 = await pw.applyRope(f16, { seqLen: 64, nHeads: H, params: { headDim: D } });
    out.float16 = r16 instanceof Float16Array && same(r16, pe.applyRope(f16, { seqLen: 64, nHeads: H, params: { headDim: D } }));
    out.error = await pw.sinusoidal(0, 8).then(() => 'no error', (e) => `${e instanceof PosencRangeError} ${e.code} ${e.message}`);
    pw.terminate();
    const threaded = await initWorker({ threads: 2, transfer: true });
    out.threads = threaded.threads;
    out.threaded = await stall(threaded);
    threaded.terminate();
    return out;
  });
  console.log(`Chromium: causal attention [2048, 8, 64] blocks the page ${r.direct.toFixed(0)} ms called directly; through initWorker ` +
    `the page's longest stall is ${r.single.worst.toFixed(1)} ms (inputs copied), ${r.threaded.worst.toFixed(1)} ms (2 threads, inputs transferred)`);
  assert.deepEqual([r.single.same, r.threaded.same, r.float16, r.threads], [true, true, true, 2]);
  assert.equal(r.error, 'true kBadArgument sinusoidal: seqLen must be >= 1 (got 0)');
  assert.ok(r.single.worst < r.direct, 'the worker form blocks the page less than the call itself');
  assert.deepEqual(messages, []);
  await page.close();
});

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
