// Threads: which build init() loads, and the heap views of the threaded one.
// init({ threads: n }) with n > 1 loads the pthreads build where shared memory exists (Node: always;
// browsers: when the page is crossOriginIsolated), with a pool of n - 1 workers made at load;
// otherwise the single-threaded build, with a warning (js/browser.js). pe.threads reports the count in use.
import { PosencRangeError, checkInt, checkOptions, codeName } from './checks.js';

const MAX_THREADS = 64;

/** The thread count asked for (default 1), checked; `allowed`: the entry's option keys. */
export function requestedThreads(options, allowed) {
  checkOptions('init', options, allowed);
  if (options.threads === undefined) return 1;
  const n = checkInt('init', 'threads', options.threads, 1, MAX_THREADS);
  for (const name of ['wasmBinary', 'wasmUrl'])
    if (n > 1 && options[name] !== undefined)
      throw new PosencRangeError(`init: ${name} is the single-threaded posenc.wasm; threads > 1 loads posenc-threads.wasm itself`);
  return n;
}

/** Starts n threads in the loaded module (its pool holds n - 1 workers); returns the count in use. */
export function startThreads(module, n) {
  if (n > 1) {
    const message = module.setNumThreads(n);
    if (message) throw new PosencRangeError(`init: ${message}`, codeName(module.lastStatusCode()));
  }
  return module.numThreads();
}

// Shared memory may grow while a worker thread runs, and only the thread that grew it renews its
// views: the main thread's would stay short. Every heap view the API takes is checked against the
// memory's current buffer and renewed when it has changed (the single-threaded build is untouched).
export function renewingHeapViews(module) {
  const memory = module.wasmMemory;
  if (!(typeof SharedArrayBuffer === 'function' && memory?.buffer instanceof SharedArrayBuffer)) return;
  const types = { HEAP8: Int8Array, HEAPU8: Uint8Array, HEAP16: Int16Array, HEAPU16: Uint16Array,
    HEAP32: Int32Array, HEAPU32: Uint32Array, HEAPF32: Float32Array, HEAPF64: Float64Array };
  for (const [name, Type] of Object.entries(types)) {
    let view = module[name];
    Object.defineProperty(module, name, {
      get() {
        if (view.buffer !== memory.buffer) view = new Type(memory.buffer);
        return view;
      },
      set(v) { view = v; },  // the Emscripten glue renews its own views when it grows memory
      configurable: true,
    });
  }
}
