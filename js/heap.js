// The WASM heap as the JS API uses it: scoped scratch buffers freed whatever happens, views taken
// after every allocation (growth detaches older ones), C++ status messages as RangeErrors, and the
// objects that own heap memory until delete(): HeapObject, and HeapFloat32 (allocFloat32).
import { PosencRangeError, PosencTypeError, checkElements, checkInt, codeName, jsMessage } from './checks.js';

// A HeapObject's heap address: obj[HELD] (0 once deleted), or obj[LIVE](fn), which throws once
// deleted. Symbols, so that the public objects show no members for them.
export const HELD = Symbol('posenc.held');
export const LIVE = Symbol('posenc.live');

/**
 * What every JS object that owns a heap object shares (HeapFloat32, pe.kvCache, the lab's models
 * and datasets): [LIVE](fn) → its address, or a TypeError naming the call once deleted; delete()
 * frees it with free(address), and a second call does nothing; `using` calls delete().
 */
export class HeapObject {
  #ptr;
  #free;
  #what;
  constructor(ptr, free, what) {
    this.#ptr = ptr;
    this.#free = free;
    this.#what = what;
  }
  get [HELD]() { return this.#ptr; }
  [LIVE](fn) {
    if (!this.#ptr) throw new PosencTypeError(`${fn}: the ${this.#what} was deleted`);
    return this.#ptr;
  }
  /** Frees its heap memory. A second call does nothing. */
  delete() {
    if (this.#ptr) this.#free(this.#ptr);
    this.#ptr = 0;
  }
  [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() { this.delete(); }
}

// rename: C++ snake_case names → the JS names of the caller's API (default: the main API's).
export function heapTools(module, rename = jsMessage) {
  // Runs body(alloc, put) with scratch heap buffers and frees them all afterwards, whatever happens.
  // alloc(bytes) → an address; put(values, type = Float32Array) → the address of a copy of values
  // (a typed array or plain numbers) as `type` (Float32Array, Float64Array, Int32Array, Uint16Array),
  // or 0 for null / undefined. Heap views are taken after every allocation: growing memory detaches
  // older views.
  function scoped(fn, body) {
    const ptrs = [];
    const alloc = (bytes) => {
      const ptr = module.heapAlloc(bytes);
      if (!ptr) throw new PosencRangeError(`${fn}: ${bytes} bytes do not fit in WASM memory (at most 2 GiB)`, 'kTooLarge');
      ptrs.push(ptr);
      return ptr;
    };
    const put = (values, type = Float32Array) => {
      if (values === null || values === undefined) return 0;
      const ptr = alloc(Math.max(1, values.length) * type.BYTES_PER_ELEMENT);
      new type(module.HEAPU8.buffer, ptr, values.length).set(values);
      return ptr;
    };
    try {
      return body(alloc, put);
    } finally {
      for (const ptr of ptrs) module.heapFree(ptr);
    }
  }
  const f32 = (ptr, n) => module.HEAPF32.subarray(ptr >> 2, (ptr >> 2) + n);
  const f64 = (ptr, n) => module.HEAPF64.subarray(ptr >> 3, (ptr >> 3) + n);
  const i32 = (ptr, n) => module.HEAP32.subarray(ptr >> 2, (ptr >> 2) + n);
  const u16 = (ptr, n) => module.HEAPU16.subarray(ptr >> 1, (ptr >> 1) + n);
  const copyOut = (ptr, n) => module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);

  // Attention streams its queries: a tensor seen as t = { slabs, len, width } ([slabs][len][width])
  // goes through the heap in pieces, rows [i0, i0 + n) of every slab packed [slabs][n][width] at
  // ptr (view: f32 or u16). Pieces are whole 64-row query blocks (the C++ kernels' kQueryBlock, so
  // a piece runs the same tiles as one call would) of about PIECE_FLOATS values of the widest
  // streamed row (rowFloats: a row of every slab).
  const QUERY_BLOCK = 64, PIECE_FLOATS = 1 << 20;
  const pieceRows = (len, rowFloats) =>
    Math.min(len, Math.max(QUERY_BLOCK, Math.floor(PIECE_FLOATS / rowFloats / QUERY_BLOCK) * QUERY_BLOCK));
  function gatherRows(view, ptr, src, t, i0, n) {
    const dst = view(ptr, t.slabs * n * t.width);
    for (let h = 0; h < t.slabs; h++) {
      const at = (h * t.len + i0) * t.width;
      dst.set(src.subarray(at, at + n * t.width), h * n * t.width);
    }
  }
  function scatterRows(dst, view, ptr, t, i0, n) {
    const src = view(ptr, t.slabs * n * t.width);
    for (let h = 0; h < t.slabs; h++) dst.set(src.subarray(h * n * t.width, (h + 1) * n * t.width), (h * t.len + i0) * t.width);
  }
  // A C++ status message ("" = ok) → a RangeError carrying the status as err.code ('kBadShape', ...);
  // detail: the reader's specifics, shown instead of the message when there are any; values: what
  // the call passed, by JS name, for the message to say (checks.js renamer); names: another renamer;
  // note(message): what the JS layer adds after C++'s message (where a value came from, a hint).
  function status(fn, message, { detail = '', values, names = rename, note } = {}) {
    if (message) {
      throw new PosencRangeError(`${fn}: ${detail || names(message, values)}${note?.(message) ?? ''}`, codeName(module.lastStatusCode()));
    }
  }

  // HeapFloat32's memory, checked and allocated before the object exists.
  function allocated(length) {
    checkInt('allocFloat32', 'length', length, 1);
    checkElements('allocFloat32', 'length', length);
    const ptr = module.heapAlloc(length * 4);
    if (!ptr) throw new PosencRangeError(`allocFloat32: ${length * 4} bytes do not fit in WASM memory (at most 2 GiB)`, 'kTooLarge');
    return ptr;
  }
  /** Float32Array of `length` floats inside the WASM heap, for in-place calls. Free with delete(). */
  class HeapFloat32 extends HeapObject {
    constructor(length) {
      super(allocated(length), (p) => module.heapFree(p), 'buffer');
      this.length = length;
    }
    /** The heap address (bytes), 0 once deleted. */
    get ptr() { return this[HELD]; }
    /** A view of the data. Borrowed: take a new one after any posenc call, which may grow memory. */
    get array() { return f32(this[LIVE]('HeapFloat32.array'), this.length); }
  }

  return { scoped, f32, f64, i32, u16, copyOut, status, pieceRows, gatherRows, scatterRows, HeapFloat32 };
}
