// Browser (and bundler) entry: the .wasm is located with new URL(..., import.meta.url), the
// pattern Vite and webpack 5 follow to ship the file next to the bundle.
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';

export { MAX_ELEMENTS } from './api.js';

export async function init(options = {}) {
  const wasmUrl = String(options.wasmUrl ?? new URL('./posenc.wasm', import.meta.url));
  const settings = options.wasmBinary ? { wasmBinary: options.wasmBinary } : { locateFile: () => wasmUrl };
  return wrap(await createPosencModule(settings));
}
