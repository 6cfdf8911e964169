// Node entry: reads the .wasm next to this file and hands it to the module as wasmBinary
// (Emscripten 3.1.6's own loader cannot fetch a file path under Node 20).
import { open, readFile } from 'node:fs/promises';
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';

export { MAX_ELEMENTS } from './api.js';

export async function init(options = {}) {
  const wasmBinary = options.wasmBinary ?? (await readFile(new URL('./posenc.wasm', import.meta.url)));
  return wrap(await createPosencModule({ wasmBinary }), { openPath });
}

// readModel's file access in Node: positional reads, so only the bytes asked for are read.
async function openPath(path) {
  const handle = await open(path, 'r');
  let size;
  try {
    ({ size } = await handle.stat());
  } catch (e) {
    await handle.close();
    throw e;
  }
  return {
    size,
    async read(offset, length) {
      const buffer = new Uint8Array(length);
      let done = 0;
      while (done < length) {
        const { bytesRead } = await handle.read(buffer, done, length - done, offset + done);
        if (bytesRead === 0) break;
        done += bytesRead;
      }
      return buffer.subarray(0, done);
    },
    close: () => handle.close(),
  };
}
