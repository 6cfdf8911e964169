// Browser (and bundler) entry: the .wasm is located with new URL(..., import.meta.url), the
// pattern Vite and webpack 5 follow to ship the file next to the bundle.
// init({ threads: n > 1 }) on a crossOriginIsolated page loads the pthreads build; elsewhere it runs
// on one thread and warns once with the reason. Its glue, worker
// script and .wasm are shipped as plain files (new URL again) and the glue is imported from its own
// URL, not bundled: each worker imports that same file, which a bundle's chunk could not serve.
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';
import { requestedThreads } from './threads.js';
import { connect, workerOptions } from './worker.js';

export { MAX_ELEMENTS, PosencRangeError, PosencTypeError, isPosencError } from './api.js';

// ?no-inline: Vite would otherwise inline the small worker script as a data: URL, which a page
// cannot start a same-origin worker from.
const WORKER = new URL('./posenc-threads.worker.js?no-inline', import.meta.url).href;

// A threaded init() that runs on one thread says why, once per reason (pe.threads gives the count).
const warned = new Set();
function fallBack(threads, reason) {
  if (warned.has(reason)) return;
  warned.add(reason);
  console.warn(`posenc: init({ threads: ${threads} }) runs on 1 thread: ${reason}`);
}

export async function init(options = {}) {
  const threads = requestedThreads(options, ['threads', 'wasmBinary', 'wasmUrl']);
  if (threads > 1 && globalThis.crossOriginIsolated !== true) {
    fallBack(threads, 'the page is not crossOriginIsolated, so it has no SharedArrayBuffer (serve it with ' +
      'Cross-Origin-Opener-Policy: same-origin and Cross-Origin-Embedder-Policy: require-corp)');
  } else if (threads > 1) {
    if (await workerScriptIntact()) return initThreaded(threads);
    fallBack(threads, `${WORKER} is missing or was rewritten by the server (Vite's dev server does this)`);
  }
  const wasmUrl = String(options.wasmUrl ?? new URL('./posenc.wasm', import.meta.url));
  const settings = options.wasmBinary ? { wasmBinary: options.wasmBinary } : { locateFile: () => wasmUrl };
  return wrap(await createPosencModule(settings));
}

/**
 * The worker form (js/worker.js): init(options) in a module Web Worker, the same functions async.
 * new Worker(new URL(…, import.meta.url), { type: 'module' }) is the form Vite and webpack 5 bundle.
 */
export function initWorker(options = {}) {
  const [initOptions, how] = workerOptions(options, ['threads', 'wasmBinary', 'wasmUrl']);
  const worker = new Worker(new URL('./worker_browser.js', import.meta.url), { type: 'module' });
  worker.postMessage({ init: { ...initOptions, wasmUrl: initOptions.wasmUrl && String(initOptions.wasmUrl) } });
  return connect({
    postMessage: (msg, transfer) => worker.postMessage(msg, transfer),
    onMessage: (f) => worker.addEventListener('message', (e) => f(e.data)),
    onError: (f) => worker.addEventListener('error', (e) => f(new Error(`posenc worker: ${e.message ?? 'failed to start'}`))),
    terminate: () => worker.terminate(),
  }, how);
}

async function initThreaded(threads) {
  const glue = new URL('./posenc-threads.mjs', import.meta.url).href;
  const wasm = new URL('./posenc-threads.wasm', import.meta.url).href;
  const { default: createThreaded } = await import(/* webpackIgnore: true */ /* @vite-ignore */ glue);
  const locateFile = (name) => (name.endsWith('.worker.js') ? WORKER : wasm);
  return wrap(await createThreaded({ posencPoolSize: threads - 1, mainScriptUrlOrBlob: glue, locateFile }), { threads });
}

// Emscripten's worker script exactly as built. A worker that fails to start would leave the pool
// waiting forever, so init() checks the script first: missing (HTTP error) or rewritten (Vite's
// dev server turns every .js into a module with imports), the single-threaded build is used.
async function workerScriptIntact() {
  try {
    const response = await fetch(WORKER);
    return response.ok && (await response.text()).startsWith('"use strict";var Module={}');
  } catch {
    return false;
  }
}
