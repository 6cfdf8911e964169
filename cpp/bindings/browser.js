// Browser (and bundler) entry: the .wasm is located with new URL(..., import.meta.url), the
// pattern Vite and webpack 5 follow to ship the file next to the bundle.
// init({ threads: n > 1 }) on a crossOriginIsolated page loads the pthreads build. Its glue, worker
// script and .wasm are shipped as plain files (new URL again) and the glue is imported from its own
// URL, not bundled: each worker imports that same file, which a bundle's chunk could not serve.
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';
import { requestedThreads } from './threads.js';

export { MAX_ELEMENTS } from './api.js';

export async function init(options = {}) {
  const threads = requestedThreads(options);
  if (threads > 1 && globalThis.crossOriginIsolated === true) {
    const glue = new URL('./posenc-threads.mjs', import.meta.url).href;
    const worker = new URL('./posenc-threads.worker.js', import.meta.url).href;
    const wasm = new URL('./posenc-threads.wasm', import.meta.url).href;
    const { default: createThreaded } = await import(/* webpackIgnore: true */ /* @vite-ignore */ glue);
    const locateFile = (name) => (name.endsWith('.worker.js') ? worker : wasm);
    const module = await createThreaded({ posencPoolSize: threads - 1, mainScriptUrlOrBlob: glue, locateFile });
    return wrap(module, { threads });
  }
  const wasmUrl = String(options.wasmUrl ?? new URL('./posenc.wasm', import.meta.url));
  const settings = options.wasmBinary ? { wasmBinary: options.wasmBinary } : { locateFile: () => wasmUrl };
  return wrap(await createPosencModule(settings));
}
