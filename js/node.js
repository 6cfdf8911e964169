// Node entry: reads the .wasm next to this file and hands it to the module as wasmBinary
// (Emscripten 3.1.6's own loader cannot fetch a file path under Node 20). init({ threads: n > 1 })
// loads the pthreads build (posenc-threads-node.cjs, its workers run posenc-threads-node.worker.cjs).
import { open, readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { fileURLToPath } from 'node:url';
import { Worker } from 'node:worker_threads';
import createPosencModule from './posenc.mjs';
import { wrap } from './api.js';
import { requestedThreads } from './threads.js';
import { connect, workerOptions } from './worker.js';

export { MAX_ELEMENTS, PosencRangeError, PosencTypeError, isPosencError } from './api.js';

export async function init(options = {}) {
  const threads = requestedThreads(options, ['threads', 'wasmBinary']);
  if (threads === 1) {
    const wasmBinary = options.wasmBinary ?? (await readFile(new URL('./posenc.wasm', import.meta.url)));
    return wrap(await createPosencModule({ wasmBinary }), { openPath });
  }
  const createThreaded = createRequire(import.meta.url)('./posenc-threads-node.cjs');
  const wasmBinary = await readFile(new URL('./posenc-threads.wasm', import.meta.url));
  const worker = fileURLToPath(new URL('./posenc-threads-node.worker.cjs', import.meta.url));
  const module = await createThreaded({ wasmBinary, posencPoolSize: threads - 1, locateFile: () => worker });
  const pe = wrap(module, { openPath, threads });
  // The pool's threads wait for work as long as the module lives: they must not keep Node running.
  for (const w of module.PThread.runningWorkers) w.unref();
  return pe;
}

/**
 * The worker form (js/worker.js): init(options) in a worker thread, the same functions async.
 * The thread does not keep Node running while no call is pending; terminate() ends it.
 */
export function initWorker(options = {}) {
  const [initOptions, how] = workerOptions(options, ['threads', 'wasmBinary']);
  // The thread inherits Node's flags but runs a file: --input-type (node -e) would refuse it.
  const execArgv = process.execArgv.filter((a) => !a.startsWith('--input-type'));
  const worker = new Worker(new URL('./worker_node.js', import.meta.url), { workerData: initOptions, execArgv });
  return connect({
    postMessage: (msg, transfer) => worker.postMessage(msg, transfer),
    onMessage: (f) => worker.on('message', f),
    onError: (f) => worker.on('error', f),
    terminate: () => worker.terminate(),
    ref: () => worker.ref(),
    unref: () => worker.unref(),
  }, how);
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
