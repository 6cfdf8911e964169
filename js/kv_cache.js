// pe.kvCache: a KV cache in the WASM heap for decoding (cpp/src/kv_cache.cpp, kv_attend.cpp).
// Keys turn by RoPE once, when appended; attend() runs a few new queries against all of it without
// copying the cache; shift() is llama.cpp's context shift; a window evicts as HF's sliding-window
// cache does, keeping StreamingLLM's sink tokens.
import {
  PosencRangeError, PosencTypeError, checkBool, checkChoice, checkInt, checkNumber,
  checkOptions, checkOut, numberOrBigint, toFloat64
} from './checks.js';
import { positionBiasOption, ropeOption, sinksOption } from './attention.js';
import { checkRotation, frequencyArg, gainArg, placeRotation, resolveFrequencies } from './rope_params.js';
import { HELD, HeapObject, LIVE } from './heap.js';
import { extents, float32Data, fromFloat32, isTensorLike, isTfTensor, tensorArg } from './tensor.js';

// Sizes are passed to C++ as 32-bit size_t (wasm32): anything larger could not fit in the heap.
const MAX_SIZE = 2 ** 31 - 1;
const DTYPES = { float32: false, float16: true };

// tensorArg's t as one sequence's [len][heads][headDim] float32 data → [extents, data, half]:
// a cache holds one sequence, so a tensor's batch must be 1.
function oneSequence(fn, name, t, given, headsName) {
  const { data, half } = float32Data(fn, name, t);
  const e = extents(fn, name, { data, dims: t.dims }, given, { names: { len: name === 'q' ? 'qLen' : 'nTokens', heads: headsName } });
  if (e.batch !== 1) {
    throw new PosencRangeError(`${fn}: ${name}.dims[0] = ${e.batch}: a cache holds one sequence (batch 1); use one cache per batch row`);
  }
  return [e, data, half];
}

// The functions and the class below take the cache context ctx = { module, heap, names, biasTerms }
// (kvCacheApi's).

// options.rope → what kvCacheCreate needs, checked by the core (checkRotation; ggml's parameters
// too, for precision 'ggml'): the frequencies for a context of `capacity` tokens (dynamic NTK and
// LongRoPE depend on it), which kvCacheCreate computes from the params.
function ropeOf(ctx, fn, rope, nKvHeads, headDim, capacity) {
  const { precisions, ropeParams } = ctx.names;
  const r = ropeOption(fn, rope, ropeParams);
  const precision = checkChoice(fn, 'rope.precision', r.precision ?? 'fast', precisions);
  const f = placeRotation(resolveFrequencies(ctx, `${fn} (rope)`, r, capacity - 1), headDim, r.rotaryOffset !== undefined);
  if (precision === precisions.ggml && (r.params === undefined || r.attentionFactor !== undefined)) {
    throw new PosencTypeError(`${fn}: rope precision 'ggml' needs rope.params and takes its gain from them (no invFreq, no attentionFactor)`);
  }
  checkRotation(ctx, `${fn} (rope)`, f, { seqLen: capacity, nHeads: nKvHeads, headDim, offset: 0, precision });
  return { ...f, precision };
}

// positions of n tokens or queries, integers (the C++ side checks the range and the order).
function positionsOf(fn, positions, n, what) {
  if (positions === undefined) return null;
  const p = toFloat64(fn, 'positions', positions, { integer: true });
  if (p.length !== n) throw new PosencRangeError(`${fn}: positions.length must equal ${what} = ${n} (got ${p.length})`);
  return p;
}

/** A KV cache in the WASM heap. Free it with delete() (or `using`). */
class KvCache extends HeapObject {
  #ctx;
  #o;
  constructor(ctx, h, o) {
    super(h, (p) => ctx.module.kvCacheDelete(p), 'cache');
    this.#ctx = ctx;
    this.#o = o;
  }
  #handle(fn) { return this[LIVE](`kvCache.${fn}`); }
  /** Tokens held (0 once deleted). */
  get length() { return this[HELD] ? this.#ctx.module.kvCacheLength(this[HELD]) : 0; }
  /** Tokens it holds at most. */
  get capacity() { return this.#o.capacity; }
  /** Heap bytes of its keys, values and positions (0 once deleted). */
  get bytes() { return this[HELD] ? this.#ctx.module.kvCacheBytes(this[HELD]) : 0; }
  get nKvHeads() { return this.#o.nKvHeads; }
  get headDim() { return this.#o.headDim; }
  get dtype() { return this.#o.dtype; }

  /** Appends k, v [nTokens][nKvHeads][headDim] (tensors: [1, nTokens, nKvHeads, headDim]): keys turn by RoPE at their positions. */
  append(k, v, options = {}) {
    const fn = 'kvCache.append', h = this.#handle('append');
    const { module, heap: { scoped, status } } = this.#ctx;
    checkOptions(fn, options, ['positions']);
    const given = { heads: this.#o.nKvHeads, headDim: this.#o.headDim };
    const [{ len: n }, kd] = oneSequence(fn, 'k', tensorArg(fn, 'k', k), given, 'nKvHeads');
    const [, vd] = oneSequence(fn, 'v', tensorArg(fn, 'v', v), given, 'nKvHeads');
    if (vd.length !== kd.length) throw new PosencRangeError(`${fn}: v.length must equal k.length = ${kd.length} (got ${vd.length})`);
    const positions = positionsOf(fn, options.positions, n, 'the tokens appended');
    scoped(fn, (alloc, put) => {
      const kp = put(kd), vp = put(vd), pp = put(positions, Float64Array);
      status(fn, module.kvCacheAppend(h, kp, vp, n, pp));
    });
  }

  /** Attention of q [qLen][nHeads][headDim] (a tensor: [1, qLen, nHeads, headDim]) over every token held → the same shape and kind. */
  attend(q, options) {
    const fn = 'kvCache.attend', h = this.#handle('attend');
    const { module, heap: { scoped, f32, status }, biasTerms } = this.#ctx;
    const { nKvHeads, headDim } = this.#o;
    if (options === undefined && !(isTensorLike(q) || isTfTensor(q))) throw new PosencTypeError(`${fn}: options { nHeads } are required`);
    options = checkOptions(fn, options, ['nHeads', 'positions', 'causal', ...biasTerms.map((t) => t.option), 'scale', 'softcap', 'sinks', 'out']);
    for (const t of biasTerms) if (options[t.option] !== undefined) t.keys?.(fn, options[t.option]);
    // The core's rules (KvCache::attend_check) name what was given: the heads' first, before q's
    // extents, which nHeads gives; then all of them, before anything is in the heap.
    const check = (qLen, o, values) => status(fn, module.kvCacheAttendCheck(h, qLen, o), { values: { nKvHeads, ...values } });
    if (options.nHeads !== undefined) check(1, { nHeads: checkInt(fn, 'nHeads', options.nHeads, 1, 2 ** 20) }, { nHeads: options.nHeads });
    const Q = tensorArg(fn, 'q', q);
    const [qe, qData, half] = oneSequence(fn, 'q', Q, { heads: options.nHeads, headDim }, 'nHeads');
    const { heads: nHeads, len: qLen } = qe;
    const positions = positionsOf(fn, options.positions, qLen, 'qLen');
    const causal = options.causal === undefined ? true : checkBool(fn, 'causal', options.causal);
    const scale = options.scale === undefined ? null : checkNumber(fn, 'scale', options.scale);
    const softcap = options.softcap === undefined ? 0 : checkNumber(fn, 'softcap', options.softcap);
    const bias = positionBiasOption(fn, options, nHeads, causal, biasTerms);
    const sinks = sinksOption(fn, options.sinks, nHeads);
    const out = options.out === undefined ? undefined : checkOut(fn, options.out, { n: qData.length, what: 'q.length', input: Q.data,
      Type: half ? Q.data.constructor : Float32Array });
    const given = Object.fromEntries(Object.entries({ nHeads, scale: options.scale, softcap: options.softcap }).filter(([, v]) => v !== undefined));
    check(qLen, { nHeads, causal, scale, softcap, sinks, positions }, given);
    let output = out && !half ? out : new Float32Array(qData.length);
    scoped(fn, (alloc, put) => {
      const qp = put(qData), yp = alloc(qData.length * 4), pp = put(positions, Float64Array);
      const [sk, ...tables] = [sinks, ...bias.tables].map((t) => put(t));
      status(fn, module.kvCacheAttend(h, qp, qLen, { nHeads, positions: pp, causal, scale, softcap, sinks: sk, ...bias.fields(tables) }, yp));
      output.set(f32(yp, qData.length));
    });
    if (half) output = out ? (out.set(output), out) : fromFloat32(output, true);
    return Q.dims ? Q.wrap(output, Q.dims.slice(), half ? 'float16' : 'float32') : output;
  }

  /**
   * llama.cpp's context shift, by position: delta < 0 drops the tokens at positions
   * [keep, keep - delta) and moves the later ones back (their keys re-rotated by delta); delta > 0
   * moves the tokens at keep or later on.
   */
  shift(delta, options = {}) {
    const fn = 'kvCache.shift', h = this.#handle('shift');
    const { module, heap: { status } } = this.#ctx;
    checkOptions(fn, options, ['keep']);
    checkInt(fn, 'delta', numberOrBigint(fn, 'delta', delta), -Number.MAX_SAFE_INTEGER);
    const keep = options.keep === undefined ? 0 : checkInt(fn, 'keep', numberOrBigint(fn, 'keep', options.keep), 0);
    status(fn, module.kvCacheShift(h, Number(delta), keep));
  }

  /** The tokens held, oldest first: { k, v } [length][nKvHeads][headDim] float32 (keys as rotated), positions. */
  read() {
    const fn = 'kvCache.read', h = this.#handle('read');
    const { module, heap: { scoped, f32, f64 } } = this.#ctx;
    const n = this.length, size = n * this.#o.nKvHeads * this.#o.headDim;
    return scoped(fn, (alloc) => {
      const kp = alloc(Math.max(1, size) * 4), vp = alloc(Math.max(1, size) * 4), pp = alloc(Math.max(1, n) * 8);
      module.kvCacheRead(h, kp, vp, pp);
      return { k: f32(kp, size).slice(), v: f32(vp, size).slice(), positions: f64(pp, n).slice() };
    });
  }
}

function kvCache(ctx, options) {
  const { module, heap: { scoped, status } } = ctx;
  const fn = 'kvCache';
  if (options === undefined) throw new PosencTypeError(`${fn}: options { nKvHeads, headDim, capacity } are required`);
  checkOptions(fn, options, ['nKvHeads', 'headDim', 'capacity', 'dtype', 'rope', 'window', 'sinkTokens']);
  if (options.rope !== undefined) ropeOption(fn, options.rope, ctx.names.ropeParams);  // its keys, before any value
  // Sizes: their JS type here, their rules C++'s (KvCache::create_check, the storage's bytes too),
  // asked before the RoPE's and before anything is allocated. window: 1 or more (none: left out).
  const nKvHeads = checkInt(fn, 'nKvHeads', options.nKvHeads, 0, MAX_SIZE);
  const headDim = checkInt(fn, 'headDim', options.headDim, 0, MAX_SIZE);
  const capacity = checkInt(fn, 'capacity', options.capacity, 0, MAX_SIZE);
  const dtype = options.dtype ?? 'float32';
  const half = checkChoice(fn, 'dtype', dtype, DTYPES);
  const window = options.window === undefined ? 0 : checkInt(fn, 'window', options.window, 1, MAX_SIZE);
  const sinkTokens = options.sinkTokens === undefined ? 0 : checkInt(fn, 'sinkTokens', options.sinkTokens, 0, MAX_SIZE);
  const sizes = { nKvHeads, headDim, capacity, half, window, sinkTokens };
  const given = Object.fromEntries(['nKvHeads', 'headDim', 'capacity', 'window', 'sinkTokens']
    .filter((k) => options[k] !== undefined).map((k) => [k, sizes[k]]));
  status(fn, module.kvCacheCreateCheck(sizes), { values: given });
  const rope = options.rope === undefined ? null : ropeOf(ctx, fn, options.rope, nKvHeads, headDim, capacity);
  const h = scoped(fn, (alloc, put) => {
    const [message, handle] = module.kvCacheCreate({
      ...sizes, ropeFrequencies: frequencyArg(put, rope),
      ropeRotDim: rope ? rope.rotaryDim : 0, ropeLayout: rope ? rope.layout : 0, ropePrecision: rope ? rope.precision : 0,
      ropeAttentionFactor: rope ? gainArg(rope) : NaN, ropeRotOffset: rope ? rope.rotaryOffset : 0,
    });
    status(fn, message);
    return handle;
  });
  return new KvCache(ctx, h, { nKvHeads, headDim, capacity, dtype });
}

/** pe.kvCache over the module and its heap tools; biasTerms and names as attentionApi's. */
export function kvCacheApi(module, heap, { biasTerms, names }) {
  const ctx = { module, heap, names, biasTerms };
  return { kvCache: (options) => kvCache(ctx, options) };
}
