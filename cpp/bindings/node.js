// Node entry: reads the .wasm next to this file and hands it to the module as wasmBinary
// (Emscripten 3.1.6's own loader cannot fetch a file path under Node 20).
import { readFile } from 'node:fs/promises';
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';

export { MAX_ELEMENTS } from './api.js';

export async function init(options = {}) {
  const wasmBinary = options.wasmBinary ?? (await readFile(new URL('./posenc.wasm', import.meta.url)));
  return wrap(await createPosencModule({ wasmBinary }));
}
