// Applying RoPE: rotations (copying, in the heap, multi-axis M-RoPE and 2-D), caches and the shift
// of cached keys (cpp/src/rope.cpp). Every function below takes the RoPE context ctx = { module,
// heap, names } (rope_params.js).
import {
  PosencRangeError, PosencTypeError, checkChoice, checkElements, checkFloat32Array,
  checkInt, checkNumber, checkOptions, checkOut, describe, isPlainObject, numberOrBigint, toFloat64
} from './checks.js';
import {
  checkRopeParamsKeys, checkRotation, frequencyArg, gainArg, placeRotation, resolveFrequencies, resolvePositions, ropeParamsIn
} from './rope_params.js';
import { extents, float32Data, fromFloat32, isTfTensor, tensorArg } from './tensor.js';

const ROPE_OPTIONS = ['seqLen', 'nHeads', 'headDim', 'batch', 'layout', 'rotaryDim', 'rotaryOffset', 'positions', 'offset', 'invFreq',
  'params', 'precision', 'attentionFactor', 'xpos'];
const XPOS_ROLES = { query: false, key: true }, XPOS_KEYS = ['scaleBase', 'role', 'center'];
const NAMES = { len: 'seqLen', heads: 'nHeads' };

// options.xpos → { scaleBase, key, center } for embind_rope.cpp, or null (plain RoPE).
function xposOf(fn, xpos) {
  if (xpos === undefined) return null;
  const { scaleBase = 512, role, center = 0 } = checkOptions(fn, xpos, XPOS_KEYS, 'xpos');
  if (role === undefined) throw new PosencTypeError(`${fn}: xpos.role is required: 'query' or 'key' (their scales are reciprocal)`);
  // Their rules are C++'s (apply_rope_check): checkRotation.
  return { scaleBase: checkNumber(fn, 'xpos.scaleBase', scaleBase), key: checkChoice(fn, 'xpos.role', role, XPOS_ROLES),
    center: checkNumber(fn, 'xpos.center', center) };
}

// The extents of a flat x or k (no dims): batch, len (seqLen) and heads from the options.
function flatExtents(fn, given) {
  return { batch: given.batch === undefined ? 1 : checkInt(fn, 'batch', given.batch, 1),
    len: checkInt(fn, 'seqLen', given.len, 1), heads: checkInt(fn, 'nHeads', given.heads, 1), headDim: undefined };
}

// Checks applyRope's options against x (t: tensorArg's { data, dims }) for nRows rows of positions
// (M-RoPE: 3); returns what the C++ call needs. Option keys first (and the params' and xpos's), then
// x's extents, then the values.
function ropeCall(ctx, fn, t, options, headsMajor = false, nRows = 1) {
  const PRECISIONS = ctx.names.precisions;
  if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen, nHeads, headDim, invFreq | params } are required`);
  checkOptions(fn, options, ROPE_OPTIONS);
  if (options.params !== undefined) checkRopeParamsKeys(fn, options.params, ctx.names.ropeParams);
  checkOptions(fn, options.xpos, XPOS_KEYS, 'xpos');
  const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
  const given = { batch: options.batch, len: options.seqLen, heads: options.nHeads, headDim: options.headDim };
  const e = t.dims ? extents(fn, 'x', t, given, { headsMajor, names: NAMES }) : flatExtents(fn, given);
  const pos = resolvePositions(fn, options, e.len, e.batch);
  const f = resolveFrequencies(ctx, fn, options, pos.maxPosition);
  const headDim = e.headDim ?? flatHeadDim(fn, 'x', t.data.length, e, options, f);
  const paramsDim = options.params?.headDim;
  if (paramsDim !== undefined && paramsDim !== headDim && headDim !== f.rotaryDim) {
    throw new PosencRangeError(`${fn}: headDim = ${headDim} differs from params.headDim = ${paramsDim} (and from its rotaryDim = ${f.rotaryDim}, the width of the rotated slice alone)`);
  }
  const placed = placeRotation(f, headDim, options.rotaryOffset !== undefined);
  if (precision === PRECISIONS.ggml && options.params === undefined) {
    throw new PosencTypeError(`${fn}: precision 'ggml' needs options.params: ggml forms the angle from the parameters, not from an invFreq table`);
  }
  if (precision === PRECISIONS.ggml && options.attentionFactor !== undefined) {
    throw new PosencTypeError(`${fn}: precision 'ggml' takes its gain from options.params (ggml's attn_factor); drop options.attentionFactor`);
  }
  const xpos = xposOf(fn, options.xpos);
  checkRotation(ctx, fn, placed, { seqLen: e.len, nHeads: e.heads, headDim, offset: pos.positions ? null : pos.offset, precision, xpos, nRows });
  return { batch: e.batch, seqLen: e.len, nHeads: e.heads, headDim, precision, ...pos, ...placed,
    params: options.params && ropeParamsIn(ctx, fn, options.params).params, xpos };
}

// A flat x's headDim: options.headDim, else params.headDim — or the params' rotaryDim when x holds
// the rotated slice alone (its length says which). name: x's ('x', 'k').
function flatHeadDim(fn, name, length, e, options, f) {
  const rows = e.batch * e.len * e.heads;
  const what = `${e.batch > 1 ? 'batch * ' : ''}seqLen * nHeads * headDim`;
  if (options.headDim === undefined && options.params?.headDim !== undefined && f.rotaryDim < options.params.headDim &&
    length === rows * f.rotaryDim) return f.rotaryDim;
  const headDim = checkInt(fn, 'headDim', options.headDim ?? options.params?.headDim, 1);
  if (rows * headDim !== length) {
    const slice = options.headDim === undefined && f.rotaryDim < headDim ? `, or ${rows * f.rotaryDim} for the rotated slice alone (rotaryDim = ${f.rotaryDim} wide)` : '';
    throw new PosencRangeError(`${fn}: ${name}.length must equal ${what} = ${rows * headDim}${slice} (got ${length})`);
  }
  return headDim;
}

// One in-place call over every batch row of x at xPtr (positions: one row for all, or one each).
function runRope(ctx, fn, put, xPtr, c) {
  const freq = frequencyArg(put, c), pos = put(c.positions, Float64Array);
  const rowBytes = c.seqLen * c.nHeads * c.headDim * 4;
  for (let b = 0; b < c.batch; b++) {
    rotate(ctx, fn, xPtr + b * rowBytes, c.seqLen, freq, pos && c.perRow ? pos + b * c.seqLen * 8 : pos, c.offset, c);
  }
}

// One applyRope call on n tokens at xPtr (positions at posPtr, or offset + 0 … n-1; freq:
// frequencyArg's).
function rotate(ctx, fn, xPtr, n, freq, posPtr, offset, c) {
  const { module, heap: { status } } = ctx;
  if (c.precision === ctx.names.precisions.ggml) {
    status(fn, module.applyRopeGgml(xPtr, n, c.nHeads, c.headDim, c.params, c.maxPosition + 1, posPtr, offset, c.layout,
      c.rotaryOffset, c.xpos));
  } else {
    status(fn, module.applyRope(xPtr, n, c.nHeads, c.headDim, freq, c.rotaryDim, posPtr, offset,
      c.layout, c.precision, gainArg(c), c.rotaryOffset, c.xpos));
  }
}

// applyRope with params.mrope and positions [3][seqLen] (temporal, height, width ids), one sequence.
function applyMrope(ctx, fn, X, x, seqLen, options) {
  const { module, heap: { scoped, f32, status } } = ctx;
  const { positions, out: into, ...rest } = options;
  // Sizes, layout and frequencies; for seq_len-dependent scalings (dynamic, longrope) the
  // frequencies are those at the largest position id + 1, as HF takes them.
  if (rest.offset !== undefined) throw new PosencTypeError(`${fn}: pass options.positions or options.offset, not both`);
  const pos = toFloat64(fn, 'positions', positions);
  let maxId = -Infinity;
  for (const p of pos) maxId = Math.max(maxId, p);
  const c = ropeCall(ctx, fn, { data: x, dims: X.dims }, { ...rest, offset: maxId + 1 - seqLen }, false, 3);
  if (c.batch > 1) throw new PosencRangeError(`${fn}: M-RoPE positions [3][seqLen] are one sequence's: batch must be 1 (got ${c.batch}); call once per batch row`);
  checkElements(fn, 'x.length', x.length);
  if (into !== undefined) checkOut(fn, into, { n: x.length, what: 'x.length', input: X.data, Type: X.data.constructor });
  const { mrope } = c.params;
  const interleaved = mrope.interleaved ?? false, unrotated = mrope.rest === 'unrotated';
  return scoped(fn, (alloc, put) => {
    const xp = put(x), freq = frequencyArg(put, c), pp = put(pos, Float64Array);
    if (c.precision === ctx.names.precisions.ggml) {  // llama.cpp's ggml_rope_multi (MROPE / IMROPE)
      status(fn, module.applyRopeRowsGgml(xp, c.seqLen, c.nHeads, c.headDim, c.params, c.maxPosition + 1, pp,
        interleaved, unrotated, mrope.section, c.layout, c.rotaryOffset));
    } else {
      const mode = (interleaved ? 1 : 0) + (unrotated ? 4 : 0);
      status(fn, module.applyRopeRows(xp, c.seqLen, c.nHeads, c.headDim, freq, c.rotaryDim, pp, mode,
        mrope.section, 0, c.layout, c.precision, gainArg(c), c.rotaryOffset));
    }
    return f32(xp, x.length).slice();
  });
}

// x's sequence length as its dims give it (for telling M-RoPE's three rows of positions apart).
const lenOfDims = (dims, headsMajor) => (dims?.length === 4 ? dims[headsMajor ? 2 : 1] : dims?.length === 3 ? dims[1] : undefined);

// applyRope's streaming: every batch row (and with 'bhsd' every head) is a token-major run; chunks
// of ~256 KiB go through the heap: copied in, rotated, copied out while still in cache.
function rotateStreaming(ctx, fn, x, out, c, headsMajor) {
  const { scoped, f32 } = ctx.heap;
  const slabs = headsMajor ? c.nHeads : 1;
  const one = headsMajor ? { ...c, nHeads: 1 } : c;
  const row = one.nHeads * c.headDim;
  const chunk = Math.max(1, Math.floor(65536 / row));
  scoped(fn, (alloc, put) => {
    const xPtr = alloc(Math.min(chunk, c.seqLen) * row * 4);
    const freq = frequencyArg(put, c), posPtr = put(c.positions, Float64Array);
    for (let b = 0; b < c.batch; b++) {
      const pos = posPtr && (c.perRow ? posPtr + b * c.seqLen * 8 : posPtr);
      for (let h = 0; h < slabs; h++) {
        const base = (b * slabs + h) * c.seqLen * row;
        for (let t0 = 0; t0 < c.seqLen; t0 += chunk) {
          const n = Math.min(chunk, c.seqLen - t0);
          f32(xPtr, n * row).set(x.subarray(base + t0 * row, base + (t0 + n) * row));
          rotate(ctx, fn, xPtr, n, freq, pos ? pos + t0 * 8 : 0, c.offset + t0, one);
          out.set(f32(xPtr, n * row), base + t0 * row);
        }
      }
    }
  });
}

function applyRope(ctx, x, options) {
  const fn = 'applyRope';
  checkOptions(fn, options, [...ROPE_OPTIONS, 'out', 'tensorLayout']);
  if (options?.params !== undefined) checkRopeParamsKeys(fn, options.params, ctx.names.ropeParams);
  checkOptions(fn, options?.xpos, XPOS_KEYS, 'xpos');
  const { out: into, tensorLayout = 'bshd', ...rest } = options ?? {};
  const X = tensorArg(fn, 'x', x);
  const { data, half } = float32Data(fn, 'x', X);  // float16 x: rotated in float32, rounded back
  const headsMajor = checkChoice(fn, 'tensorLayout', tensorLayout, { bshd: false, bhsd: true });
  let y;
  const seqLen = rest.seqLen ?? lenOfDims(X.dims, headsMajor);
  if (rest.params?.mrope !== undefined && rest.positions !== undefined && rest.positions?.length === 3 * seqLen) {
    if (headsMajor) throw new PosencTypeError(`${fn}: M-RoPE takes x token-major ('bshd')`);
    y = applyMrope(ctx, fn, X, data, seqLen, options);
  } else {
    if (rest.params?.mrope !== undefined && rest.positions !== undefined && rest.positions?.length !== seqLen) {
      const n = rest.positions?.length;
      throw new PosencRangeError(`${fn}: with params.mrope, positions must hold 3 * seqLen = ${3 * seqLen} ids (temporal, height and width rows; see mropePositions) or seqLen = ${seqLen} for text only (got ${n})`);
    }
    const c = ropeCall(ctx, fn, { data, dims: X.dims }, options === undefined ? undefined : rest, headsMajor);
    checkElements(fn, 'x.length', data.length);
    if (into !== undefined) checkOut(fn, into, { n: data.length, what: 'x.length', input: X.data, Type: half ? X.data.constructor : Float32Array });
    y = into && !half ? into : new Float32Array(data.length);
    rotateStreaming(ctx, fn, data, y, c, headsMajor);
  }
  if (half) y = into ? (into.set(y), into) : fromFloat32(y, true);
  else if (into && y !== into) y = (into.set(y), into);
  return X.dims ? X.wrap(y, X.dims.slice(), half ? 'float16' : 'float32') : y;
}

function applyRopeInPlace(ctx, buffer, options) {
  const fn = 'applyRopeInPlace';
  if (!(buffer instanceof ctx.heap.HeapFloat32)) {
    throw new PosencTypeError(`${fn}: buffer must come from allocFloat32() (got ${describe(buffer)})`);
  }
  if (!buffer.ptr) throw new PosencTypeError(`${fn}: buffer was deleted`);
  const c = ropeCall(ctx, fn, { data: { length: buffer.length }, dims: null }, options);
  ctx.heap.scoped(fn, (alloc, put) => runRope(ctx, fn, put, buffer.ptr, c));
}

// applyRope2d's positions: options.grid's ([rows, cols] of patches, row-major) or options.positions
// ([2][seqLen]: row ids, then column ids), as a Float64Array.
function positions2d(fn, options) {
  if ((options.grid === undefined) === (options.positions === undefined)) {
    throw new PosencTypeError(`${fn}: pass exactly one of options.grid ([rows, cols] of patches) and options.positions ([2][seqLen]: row ids, then column ids)`);
  }
  if (options.grid === undefined) return toFloat64(fn, 'positions', options.positions);
  if (!Array.isArray(options.grid) || options.grid.length !== 2) throw new PosencRangeError(`${fn}: grid must be [rows, cols] (got ${describe(options.grid)})`);
  const [h, w] = options.grid.map((n, i) => checkInt(fn, `grid[${i}]`, n, 1));
  const pos = new Float64Array(2 * h * w);
  for (let i = 0; i < h * w; i++) { pos[i] = Math.floor(i / w); pos[h * w + i] = i % w; }
  return pos;
}

function applyRope2d(ctx, x, options) {
  const fn = 'applyRope2d';
  const { module, heap: { scoped, f32, status } } = ctx;
  if (options === undefined) throw new PosencTypeError(`${fn}: options { nHeads, headDim, grid | positions } are required`);
  checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'batch', 'theta', 'grid', 'positions', 'layout', 'precision']);
  const X = tensorArg(fn, 'x', x);
  const { data, half } = float32Data(fn, 'x', X);
  const theta = options.theta === undefined ? 10000 : checkNumber(fn, 'theta', options.theta);
  const pos = positions2d(fn, options);
  const seqLen = pos.length / 2;
  if (!Number.isInteger(seqLen) || seqLen === 0) throw new PosencRangeError(`${fn}: positions must hold 2 rows of equal length (got ${pos.length} values)`);
  if (options.seqLen !== undefined && checkInt(fn, 'seqLen', options.seqLen, 1) !== seqLen) {
    throw new PosencRangeError(`${fn}: seqLen = ${options.seqLen} differs from the ${seqLen} patches the grid or positions give`);
  }
  // 2-D RoPE's rules are C++'s (rope_2d_check): on the headDim given, before x's extents, which it
  // gives; then on x's.
  const check2d = (d) => status(fn, module.rope2dCheck(d, theta), { values: { headDim: d, theta } });
  if (options.headDim !== undefined) check2d(checkInt(fn, 'headDim', options.headDim, 1));
  // x [batch][patches][nHeads][headDim]: the same patch positions in every batch row.
  const e = extents(fn, 'x', { data, dims: X.dims }, { batch: options.batch, len: seqLen, heads: options.nHeads, headDim: options.headDim },
    { names: { len: 'patches', heads: 'nHeads' } });
  const { heads: nHeads, headDim } = e;
  check2d(headDim);
  const layout = checkChoice(fn, 'layout', options.layout ?? 'halfSplit', ctx.names.layouts);
  const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', { fast: 0, accurate: 1 });
  const row = seqLen * nHeads * headDim;
  const y = scoped(fn, (alloc, put) => {
    const xp = alloc(row * 4), pp = put(pos, Float64Array);
    const out = new Float32Array(data.length);
    for (let b = 0; b < e.batch; b++) {
      f32(xp, row).set(data.subarray(b * row, (b + 1) * row));
      status(fn, module.applyRopeRows(xp, seqLen, nHeads, headDim, null, headDim, pp, 2, [], theta, layout, precision, 1, 0));
      out.set(f32(xp, row), b * row);
    }
    return out;
  });
  const result = fromFloat32(y, half);
  return X.dims ? X.wrap(result, X.dims.slice(), half ? 'float16' : 'float32') : result;
}

function mropePositions(ctx, segments) {
  const fn = 'mropePositions';
  const { module, heap: { scoped, f64, status } } = ctx;
  if (!Array.isArray(segments) || segments.length === 0) {
    throw new PosencTypeError(`${fn}: segments must be a non-empty array like [{ text: 5 }, { image: [t, h, w] }, { text: 3 }] (got ${describe(segments)})`);
  }
  const rows = segments.map((g, i) => {
    if (!isPlainObject(g) || (g.text === undefined) === (g.image === undefined)) {
      throw new PosencTypeError(`${fn}: segments[${i}] must be { text: n } or { image: [t, h, w] } (got ${describe(g)})`);
    }
    if (g.text !== undefined) return [checkInt(fn, `segments[${i}].text`, g.text, 1), 0, 0, 0];
    if (!Array.isArray(g.image) || g.image.length !== 3) throw new PosencRangeError(`${fn}: segments[${i}].image must be [t, h, w] (got ${describe(g.image)})`);
    return [0, ...g.image.map((n, k) => checkInt(fn, `segments[${i}].image[${k}]`, n, 1))];
  });
  const seqLen = rows.reduce((n, r) => n + (r[0] || r[1] * r[2] * r[3]), 0);
  checkElements(fn, '3 * seqLen', 3 * seqLen);
  return scoped(fn, (alloc) => {
    const p = alloc(3 * seqLen * 8);
    status(fn, module.mropePositions(rows, p, seqLen));
    return f64(p, 3 * seqLen).slice();
  });
}

// shiftKeys' options.delta for e's tokens: { deltas: Float64Array (one per token of every batch
// row) or null, deltaAll (every token's, when deltas is null; its rule is C++'s: shiftKeysCheck) }.
function shiftDeltas(fn, delta, e) {
  const seqLen = e.batch * e.len;
  if (typeof delta === 'number' || typeof delta === 'bigint') return { deltas: null, deltaAll: checkNumber(fn, 'delta', numberOrBigint(fn, 'delta', delta)) };
  if (delta === undefined) throw new PosencTypeError(`${fn}: options.delta (a number, or one per token) is required`);
  let deltas = toFloat64(fn, 'delta', delta);
  if (deltas.length === e.len && e.batch > 1) deltas = Float64Array.from({ length: seqLen }, (_, i) => deltas[i % e.len]);
  if (deltas.length !== seqLen) {
    const rows = e.batch > 1 ? ` or batch * seqLen = ${seqLen}` : '';
    throw new PosencRangeError(`${fn}: delta.length must equal seqLen = ${e.len}${rows} (got ${deltas.length})`);
  }
  return { deltas, deltaAll: 0 };
}

function shiftKeys(ctx, k, options) {
  const fn = 'shiftKeys';
  const { module, heap: { scoped, f32, status, HeapFloat32 } } = ctx;
  if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen, nHeads, headDim, delta, invFreq | params } are required`);
  checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'batch', 'delta', 'invFreq', 'params', 'layout', 'precision', 'rotaryDim',
    'rotaryOffset']);
  if (options.params !== undefined) checkRopeParamsKeys(fn, options.params, ctx.names.ropeParams);
  const inHeap = k instanceof HeapFloat32;
  if (inHeap && !k.ptr) throw new PosencTypeError(`${fn}: k was deleted`);
  if (isTfTensor(k)) throw new PosencTypeError(`${fn}: k is shifted in place, and a TensorFlow.js tensor is immutable: pass a Float32Array, a tensor { data, dims } or a HeapFloat32`);
  const K = inHeap ? { data: { length: k.length }, dims: null } : tensorArg(fn, 'k', k);
  if (!inHeap) checkFloat32Array(fn, K.dims ? 'k.data' : 'k', K.data);
  // k [batch][seqLen][nHeads][headDim]: the shift has no positions, so batch rows are more tokens.
  const given = { batch: options.batch, len: options.seqLen, heads: options.nHeads, headDim: options.headDim };
  const e = K.dims ? extents(fn, 'k', K, given, { names: NAMES }) : flatExtents(fn, given);
  const frequencies = resolveFrequencies(ctx, fn, options, e.len - 1);
  const headDim = e.headDim ?? flatHeadDim(fn, 'k', K.data.length, e, options, frequencies);
  const nHeads = e.heads, seqLen = e.batch * e.len;
  const { deltas, deltaAll } = shiftDeltas(fn, options.delta, e);
  const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', ctx.names.precisions);
  // The core's rules of the shift (shift_keys_check), then of the rotation, before anything is in the heap.
  status(fn, module.shiftKeysCheck(deltas ? null : deltaAll, precision), { values: deltas ? {} : { delta: deltaAll } });
  const f = placeRotation(frequencies, headDim, options.rotaryOffset !== undefined);
  checkRotation(ctx, fn, f, { seqLen, nHeads, headDim, precision });
  scoped(fn, (alloc, put) => {
    const kPtr = inHeap ? k.ptr : put(K.data);
    const freq = frequencyArg(put, f), d = put(deltas, Float64Array);
    status(fn, module.shiftKeys(kPtr, seqLen, nHeads, headDim, freq, f.rotaryDim, d, deltaAll, f.layout, precision,
      f.rotaryOffset));
    if (!inHeap) K.data.set(f32(kPtr, K.data.length));
  });
}

function ropeCache(ctx, options) {
  const fn = 'ropeCache';
  const { module, heap: { scoped, copyOut, status } } = ctx;
  const PRECISIONS = ctx.names.precisions;
  if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen | positions, invFreq | params } are required`);
  checkOptions(fn, options, ['seqLen', 'positions', 'offset', 'invFreq', 'params', 'precision', 'attentionFactor', 'rotaryDim']);
  if (options.params !== undefined) checkRopeParamsKeys(fn, options.params, ctx.names.ropeParams);
  // seqLen defaults to the number of positions; resolvePositions checks and converts them once.
  const seqLen = options.positions !== undefined && options.seqLen === undefined
    ? options.positions?.length : checkInt(fn, 'seqLen', options.seqLen, 1);
  if (seqLen === 0) throw new PosencRangeError(`${fn}: positions must not be empty`);
  const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
  if (precision === PRECISIONS.ggml && (options.params === undefined || options.attentionFactor !== undefined)) {
    throw new PosencTypeError(`${fn}: precision 'ggml' needs options.params and takes its gain from them (no invFreq, no attentionFactor)`);
  }
  const pos = resolvePositions(fn, options, seqLen);
  const f = resolveFrequencies(ctx, fn, options, pos.maxPosition);
  // The cache of a head that is the rotated dims alone, half-split.
  checkRotation(ctx, fn, { ...f, layout: 0, rotaryOffset: 0 }, { seqLen, nHeads: 1, headDim: f.rotaryDim,
    offset: pos.positions ? null : pos.offset, precision });
  const half = f.rotaryDim >> 1;
  checkElements(fn, 'seqLen * rotaryDim / 2', seqLen * half);
  return scoped(fn, (alloc, put) => {
    const cos = alloc(seqLen * half * 4);
    const sin = alloc(seqLen * half * 4);
    const p = put(pos.positions, Float64Array);
    if (precision === PRECISIONS.ggml) {
      status(fn, module.ropeCacheGgml(cos, sin, seqLen, ropeParamsIn(ctx, fn, options.params).params, pos.maxPosition + 1, p, pos.offset));
    } else {
      status(fn, module.ropeCache(cos, sin, seqLen, frequencyArg(put, f), f.rotaryDim, p, pos.offset, precision, gainArg(f)));
    }
    return { cos: copyOut(cos, seqLen * half), sin: copyOut(sin, seqLen * half), rotaryDim: f.rotaryDim };
  });
}

/** The public functions that apply RoPE, over the module, its heap tools and ropeNames(module). */
export function ropeApi(module, heap, names) {
  const ctx = { module, heap, names };
  return {
    applyRope: (x, options) => applyRope(ctx, x, options),
    applyRopeInPlace: (buffer, options) => applyRopeInPlace(ctx, buffer, options),
    allocFloat32: (length) => new heap.HeapFloat32(length),
    applyRope2d: (x, options) => applyRope2d(ctx, x, options),
    mropePositions: (segments) => mropePositions(ctx, segments),
    shiftKeys: (k, options) => shiftKeys(ctx, k, options),
    ropeCache: (options) => ropeCache(ctx, options),
  };
}
