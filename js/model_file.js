// pe.readModel: the positional settings of a model file (GGUF, safetensors, .npy, config.json).
// The parsing is C++ (cpp/src/gguf.cpp, safetensors.cpp, npy.cpp, model_config.cpp); this module
// only fetches bytes. The C++ reader runs over the byte ranges fetched so far; when it needs a
// range it does not have, it says which, this module reads it (Blob slices and file reads are
// asynchronous) and runs the reader again. A multi-GB file costs its header and a few small
// tensors, never its weights.

import { PosencRangeError, PosencTypeError, checkInt, checkOptions, describe, isPosencError } from './checks.js';

const FIRST_READ = 1 << 20;  // bytes read up front: most headers fit (GGUF vocabularies may not)
const MAX_PASSES = 64;

// What the system says when bytes cannot be had (Node's ENOENT, EACCES, EISDIR; a Blob that cannot
// be read) as posenc's error: a RangeError with code 'kUnavailable', the system's error as its cause.
async function reach(fn, what, promise) {
  try {
    return await promise;
  } catch (e) {
    if (isPosencError(e)) throw e;
    throw new PosencRangeError(`${fn}: ${what}: ${e?.message ?? e}`, 'kUnavailable', { cause: e });
  }
}

// source → { size, read(offset, length) → Promise<Uint8Array>, close() }.
async function openSource(fn, source, openPath) {
  if (source instanceof ArrayBuffer) source = new Uint8Array(source);
  if (ArrayBuffer.isView(source)) {
    const bytes = new Uint8Array(source.buffer, source.byteOffset, source.byteLength);
    return { size: bytes.length, read: async (o, n) => bytes.subarray(o, o + n), close() {} };
  }
  if (typeof Blob !== 'undefined' && source instanceof Blob) {
    return {
      size: source.size,
      read: async (o, n) => new Uint8Array(await source.slice(o, o + n).arrayBuffer()),
      close() {},
    };
  }
  if (typeof source === 'string' && /^\s*\{/.test(source)) {  // config.json text
    const bytes = new TextEncoder().encode(source);
    return { size: bytes.length, read: async (o, n) => bytes.subarray(o, o + n), close() {} };
  }
  if (source !== null && typeof source === 'object' && Object.getPrototypeOf(source) === Object.prototype) {
    return openSource(fn, JSON.stringify(source), openPath);  // a parsed config.json
  }
  if (typeof source === 'string' || (typeof URL !== 'undefined' && source instanceof URL)) {
    if (!openPath) {
      throw new PosencTypeError(`${fn}: a file path needs Node; in a browser pass a File, Blob, ArrayBuffer or Uint8Array`);
    }
    return openPath(source);
  }
  throw new PosencTypeError(`${fn}: source must be a File/Blob, ArrayBuffer, Uint8Array, config.json text or object, or (Node) a path (got ${describe(source)})`);
}

export function makeReadModel(module, { status, openPath }) {
  return async function readModel(source, options) {
    const fn = 'readModel';
    const { tableName = '', maxTableFloats = 2 ** 26 } = checkOptions(fn, options, ['tableName', 'maxTableFloats']);
    if (typeof tableName !== 'string') throw new PosencTypeError(`${fn}: tableName must be a string (got ${describe(tableName)})`);
    // 2^26 floats (256 MiB) at most: the table's bytes and its float32 copy must both fit in the heap.
    checkInt(fn, 'maxTableFloats', maxTableFloats, 1, 2 ** 26);
    const file = await reach(fn, `cannot open ${describe(source)}`, openSource(fn, source, openPath));
    const chunks = [];  // [offset, heap pointer, length]
    let bytesRead = 0;
    const fetch = async (offset, length) => {
      const bytes = await reach(fn, `cannot read bytes ${offset} … ${offset + length} of ${describe(source)}`, file.read(offset, length));
      if (bytes.length !== length) {
        throw new PosencRangeError(`${fn}: the file is truncated: read ${bytes.length} of ${length} bytes at ${offset} of the ${file.size} it had when opened (it changed?)`, 'kUnavailable');
      }
      const ptr = module.heapAlloc(Math.max(1, length));
      if (!ptr) throw new PosencRangeError(`${fn}: ${length} bytes do not fit in WASM memory`, 'kTooLarge');
      chunks.push([offset, ptr, length]);
      module.HEAPU8.set(bytes, ptr);
      bytesRead += length;
    };
    try {
      if (file.size === 0) throw new PosencRangeError(`${fn}: the file is empty`);
      await fetch(0, Math.min(file.size, FIRST_READ));
      for (let pass = 0; pass < MAX_PASSES; pass++) {
        const [message, detail, info, needOffset, needLength] = module.readModel(chunks, file.size, tableName, maxTableFloats);
        if (info) return toPublic(info, bytesRead);
        if (!(needLength > 0)) status(fn, message, { detail });
        // Headers are read in growing steps (a range right after what we hold doubles it);
        // tensors exactly, in at least 1 MiB.
        const held = chunks.reduce((n, c) => n + c[2], 0);
        const adjacent = chunks.some((c) => c[0] + c[2] === needOffset);
        const want = Math.max(needLength, adjacent ? held : FIRST_READ);
        await fetch(needOffset, Math.min(want, file.size - needOffset));
      }
      throw new PosencRangeError(`${fn}: the file needed more than ${MAX_PASSES} reads`);
    } finally {
      for (const c of chunks) module.heapFree(c[1]);
      try {
        await file.close();
      } catch {
        // a failed close must not hide the reader's own result or error
      }
    }
  };
}

// readModel's rope is the params object itself, ready for ropeFrequencies / applyRope / attention.
// Its `.params` (the earlier shape, { params }) stays as a non-enumerable alias of the same object, so old
// callers work and the object's own keys are params keys only.
export function ropeResult(params) {
  return Object.defineProperty(params, 'params', { value: params, enumerable: false });
}

// The C++ reader writes the public shape (posenc.d.ts, ModelInfo; embind_model_file.cpp's model_info); here
// its RoPE params get their .params alias and the count of bytes read is added.
function toPublic(m, bytesRead) {
  if (m.rope) m.rope = ropeResult(m.rope);
  m.bytesRead = bytesRead;
  return m;
}
