// Applying RoPE: rotations (copying, in the heap, multi-axis M-RoPE and 2-D), caches and the shift
// of cached keys (cpp/src/rope.cpp).
import {
  PosencRangeError, PosencTypeError, checkChoice, checkElements, checkFinite, checkFloat32Array,
  checkInt, checkOptions, checkOut, describe, isPlainObject, toFloat64
} from './checks.js';

export function ropeApi(module, heap, { flatRopeParams, resolveFrequencies, resolvePositions }, names) {
  const { scoped, f32, f64, copyOut, status, HeapFloat32 } = heap;
  const { precisions: PRECISIONS, layouts: ROPE_LAYOUTS } = names;
  const ROPE_OPTIONS = ['seqLen', 'nHeads', 'headDim', 'layout', 'rotaryDim', 'rotaryOffset', 'positions', 'offset', 'invFreq',
    'params', 'precision', 'attentionFactor', 'xpos'];
  const XPOS_ROLES = { query: false, key: true };

  // options.xpos → { scaleBase, key, center } for embind_rope.cpp, or null (plain RoPE).
  function xposOf(fn, xpos) {
    if (xpos === undefined) return null;
    const { scaleBase = 512, role, center = 0 } = checkOptions(fn, xpos, ['scaleBase', 'role', 'center'], 'xpos');
    if (role === undefined) throw new PosencTypeError(`${fn}: xpos.role is required: 'query' or 'key' (their scales are reciprocal)`);
    return { scaleBase: checkFinite(fn, 'xpos.scaleBase', scaleBase, { positive: true }),
      key: checkChoice(fn, 'xpos.role', role, XPOS_ROLES), center: checkFinite(fn, 'xpos.center', center) };
  }

  // Checks applyRope's options against x's length; returns what the C++ call needs.
  function ropeCall(fn, length, options) {
    if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen, nHeads, headDim, invFreq | params } are required`);
    checkOptions(fn, options, ROPE_OPTIONS);
    const seqLen = checkInt(fn, 'seqLen', options.seqLen, 1);
    const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
    const headDim = checkInt(fn, 'headDim', options.headDim ?? options.params?.headDim, 1);
    if (options.params?.headDim !== undefined && options.params.headDim !== headDim) {
      throw new PosencRangeError(`${fn}: headDim = ${headDim} differs from params.headDim = ${options.params.headDim}`);
    }
    if (seqLen * nHeads * headDim !== length) {
      throw new PosencRangeError(`${fn}: x.length must equal seqLen * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${length})`);
    }
    const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
    const pos = resolvePositions(fn, options, seqLen);
    const f = resolveFrequencies(fn, options, pos.maxPosition);
    if (f.rotaryDim > headDim) throw new PosencRangeError(`${fn}: rotaryDim = ${f.rotaryDim} (${f.from}) must be <= headDim = ${headDim}`);
    if (precision === PRECISIONS.ggml && options.params === undefined) {
      throw new PosencTypeError(`${fn}: precision 'ggml' needs options.params: ggml forms the angle from the parameters, not from an invFreq table`);
    }
    if (precision === PRECISIONS.ggml && options.attentionFactor !== undefined) {
      throw new PosencTypeError(`${fn}: precision 'ggml' takes its gain from options.params (ggml's attn_factor); drop options.attentionFactor`);
    }
    return { seqLen, nHeads, headDim, precision, ...pos, ...f, flat: options.params && flatRopeParams(fn, options.params),
      xpos: xposOf(fn, options.xpos) };
  }

  function runRope(fn, put, xPtr, c) {
    rotate(fn, xPtr, c.seqLen, put(c.invFreq, Float64Array), put(c.positions, Float64Array), c.offset, c);
  }

  // One applyRope call on n tokens at xPtr (positions at posPtr, or offset + 0 … n-1).
  function rotate(fn, xPtr, n, invPtr, posPtr, offset, c) {
    if (c.precision === PRECISIONS.ggml) {
      status(fn, module.applyRopeGgml(xPtr, n, c.nHeads, c.headDim, c.flat, c.maxPosition + 1, posPtr, offset, c.layout,
        c.rotaryOffset, c.xpos));
    } else {
      status(fn, module.applyRope(xPtr, n, c.nHeads, c.headDim, invPtr, c.rotaryDim, posPtr, offset,
        c.layout, c.precision, c.attentionFactor, c.rotaryOffset, c.xpos));
    }
  }

  // applyRope with params.mrope and positions [3][seqLen] (temporal, height, width ids).
  function applyMrope(fn, x, options) {
    const { positions, out: into, ...rest } = options;
    // Sizes, layout and frequencies; for seq_len-dependent scalings (dynamic, longrope) the
    // frequencies are those at the largest position id + 1, as HF takes them.
    if (rest.offset !== undefined) throw new PosencTypeError(`${fn}: pass options.positions or options.offset, not both`);
    if (rest.xpos !== undefined) throw new PosencTypeError(`${fn}: xpos takes one position per token, not M-RoPE's three rows`);
    const pos = toFloat64(fn, 'positions', positions);
    let maxId = -Infinity;
    for (const p of pos) maxId = Math.max(maxId, p);
    const c = ropeCall(fn, x.length, { ...rest, offset: maxId + 1 - rest.seqLen });
    checkElements(fn, 'x.length', x.length);
    if (into !== undefined) checkOut(fn, into, { n: x.length, what: 'x.length', input: x });
    const flat = flatRopeParams(fn, options.params);
    return scoped(fn, (alloc, put) => {
      const xp = put(x), inv = put(c.invFreq, Float64Array), pp = put(pos, Float64Array);
      if (c.precision === PRECISIONS.ggml) {  // llama.cpp's ggml_rope_multi (MROPE / IMROPE)
        status(fn, module.applyRopeRowsGgml(xp, c.seqLen, c.nHeads, c.headDim, flat, c.maxPosition + 1, pp,
          flat.mropeInterleaved, flat.mropeRestUnrotated, flat.mropeSection, c.layout, c.rotaryOffset));
      } else {
        const mode = (flat.mropeInterleaved ? 1 : 0) + (flat.mropeRestUnrotated ? 4 : 0);
        status(fn, module.applyRopeRows(xp, c.seqLen, c.nHeads, c.headDim, inv, c.rotaryDim, pp, mode,
          flat.mropeSection, 0, c.layout, c.precision, c.attentionFactor, c.rotaryOffset));
      }
      if (!into) return copyOut(xp, x.length);
      into.set(f32(xp, x.length));
      return into;
    });
  }

  return {
    applyRope(x, options) {
      const fn = 'applyRope';
      checkFloat32Array(fn, 'x', x);
      if (options?.params?.mrope !== undefined && options.positions !== undefined) {
        const n = options.positions?.length, seqLen = options.seqLen;
        if (n === 3 * seqLen) return applyMrope(fn, x, options);
        if (n !== seqLen) {
          throw new PosencRangeError(`${fn}: with params.mrope, positions must hold 3 * seqLen = ${3 * seqLen} ids (temporal, height and width rows; see mropePositions) or seqLen = ${seqLen} for text only (got ${n})`);
        }
      }
      const { out: into, tensorLayout = 'bshd', ...rest } = options ?? {};
      const c = ropeCall(fn, x.length, options === undefined ? undefined : rest);
      checkElements(fn, 'x.length', x.length);
      if (into !== undefined) checkOut(fn, into, { n: x.length, what: 'x.length', input: x });
      // 'bhsd': x [nHeads][seqLen][headDim]; each head's slab is a one-head token-major tensor.
      const headsMajor = checkChoice(fn, 'tensorLayout', tensorLayout, { bshd: false, bhsd: true });
      const slabs = headsMajor ? c.nHeads : 1;
      const one = headsMajor ? { ...c, nHeads: 1 } : c;
      // Chunks of ~256 KiB go through the heap: copied in, rotated, copied out while still in cache.
      const row = one.nHeads * c.headDim;
      const chunk = Math.max(1, Math.floor(65536 / row));
      const out = into ?? new Float32Array(x.length);
      scoped(fn, (alloc, put) => {
        const xPtr = alloc(Math.min(chunk, c.seqLen) * row * 4);
        const invPtr = put(c.invFreq, Float64Array), posPtr = put(c.positions, Float64Array);
        for (let h = 0; h < slabs; h++) {
          const base = h * c.seqLen * row;
          for (let t0 = 0; t0 < c.seqLen; t0 += chunk) {
            const n = Math.min(chunk, c.seqLen - t0);
            f32(xPtr, n * row).set(x.subarray(base + t0 * row, base + (t0 + n) * row));
            rotate(fn, xPtr, n, invPtr, posPtr ? posPtr + t0 * 8 : 0, c.offset + t0, one);
            out.set(f32(xPtr, n * row), base + t0 * row);
          }
        }
      });
      return out;
    },

    applyRopeInPlace(buffer, options) {
      const fn = 'applyRopeInPlace';
      if (!(buffer instanceof HeapFloat32)) {
        throw new PosencTypeError(`${fn}: buffer must come from allocFloat32() (got ${describe(buffer)})`);
      }
      if (!buffer.ptr) throw new PosencTypeError(`${fn}: buffer was deleted`);
      const c = ropeCall(fn, buffer.length, options);
      scoped(fn, (alloc, put) => runRope(fn, put, buffer.ptr, c));
    },

    allocFloat32(length) {
      return new HeapFloat32(length);
    },

    applyRope2d(x, options) {
      const fn = 'applyRope2d';
      checkFloat32Array(fn, 'x', x);
      if (options === undefined) throw new PosencTypeError(`${fn}: options { nHeads, headDim, grid | positions } are required`);
      checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'theta', 'grid', 'positions', 'layout', 'precision']);
      const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
      const headDim = checkInt(fn, 'headDim', options.headDim, 4);
      if (headDim % 4 !== 0) throw new PosencRangeError(`${fn}: headDim must be a multiple of 4 (half the pairs by row, half by column; got ${headDim})`);
      const theta = options.theta === undefined ? 10000 : checkFinite(fn, 'theta', options.theta, { positive: true });
      if ((options.grid === undefined) === (options.positions === undefined)) {
        throw new PosencTypeError(`${fn}: pass exactly one of options.grid ([rows, cols] of patches) and options.positions ([2][seqLen]: row ids, then column ids)`);
      }
      let pos;
      if (options.grid !== undefined) {
        if (!Array.isArray(options.grid) || options.grid.length !== 2) throw new PosencRangeError(`${fn}: grid must be [rows, cols] (got ${describe(options.grid)})`);
        const [h, w] = options.grid.map((n, i) => checkInt(fn, `grid[${i}]`, n, 1));
        pos = new Float64Array(2 * h * w);
        for (let i = 0; i < h * w; i++) { pos[i] = Math.floor(i / w); pos[h * w + i] = i % w; }
      } else {
        pos = toFloat64(fn, 'positions', options.positions);
      }
      const seqLen = pos.length / 2;
      if (options.seqLen !== undefined && checkInt(fn, 'seqLen', options.seqLen, 1) !== seqLen) {
        throw new PosencRangeError(`${fn}: seqLen = ${options.seqLen} differs from the ${seqLen} patches the grid or positions give`);
      }
      if (!Number.isInteger(seqLen) || seqLen === 0) throw new PosencRangeError(`${fn}: positions must hold 2 rows of equal length (got ${pos.length} values)`);
      if (seqLen * nHeads * headDim !== x.length) {
        throw new PosencRangeError(`${fn}: x.length must equal patches * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${x.length})`);
      }
      const layout = checkChoice(fn, 'layout', options.layout ?? 'halfSplit', ROPE_LAYOUTS);
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', { fast: 0, accurate: 1 });
      return scoped(fn, (alloc, put) => {
        const xp = put(x), inv = alloc(headDim / 2 * 8), pp = put(pos, Float64Array);
        status(fn, module.applyRopeRows(xp, seqLen, nHeads, headDim, inv, headDim, pp, 2, [], theta, layout, precision, 1, 0));
        return copyOut(xp, x.length);
      });
    },

    mropePositions(segments) {
      const fn = 'mropePositions';
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
    },

    shiftKeys(k, options) {
      const fn = 'shiftKeys';
      const heap = k instanceof HeapFloat32;
      if (heap && !k.ptr) throw new PosencTypeError(`${fn}: k was deleted`);
      if (!heap) checkFloat32Array(fn, 'k', k);
      if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen, nHeads, headDim, delta, invFreq | params } are required`);
      checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'delta', 'invFreq', 'params', 'layout', 'precision', 'rotaryDim',
        'rotaryOffset']);
      const seqLen = checkInt(fn, 'seqLen', options.seqLen, 1);
      const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
      const headDim = checkInt(fn, 'headDim', options.headDim ?? options.params?.headDim, 1);
      if (seqLen * nHeads * headDim !== k.length) {
        throw new PosencRangeError(`${fn}: k.length must equal seqLen * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${k.length})`);
      }
      let deltas = null, deltaAll = 0;
      if (typeof options.delta === 'number') deltaAll = checkFinite(fn, 'delta', options.delta);
      else if (options.delta === undefined) throw new PosencTypeError(`${fn}: options.delta (a number, or one per token) is required`);
      else {
        deltas = toFloat64(fn, 'delta', options.delta);
        if (deltas.length !== seqLen) throw new PosencRangeError(`${fn}: delta.length must equal seqLen = ${seqLen} (got ${deltas.length})`);
      }
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', { fast: 0, accurate: 1 });
      const f = resolveFrequencies(fn, options, seqLen - 1);
      if (f.rotaryDim > headDim) throw new PosencRangeError(`${fn}: rotaryDim = ${f.rotaryDim} (${f.from}) must be <= headDim = ${headDim}`);
      scoped(fn, (alloc, put) => {
        const kPtr = heap ? k.ptr : put(k);
        const inv = put(f.invFreq, Float64Array), d = put(deltas, Float64Array);
        status(fn, module.shiftKeys(kPtr, seqLen, nHeads, headDim, inv, f.rotaryDim, d, deltaAll, f.layout, precision,
          f.rotaryOffset));
        if (!heap) k.set(f32(kPtr, k.length));
      });
    },

    ropeCache(options) {
      const fn = 'ropeCache';
      if (options === undefined) throw new PosencTypeError(`${fn}: options { seqLen | positions, invFreq | params } are required`);
      checkOptions(fn, options, ['seqLen', 'positions', 'offset', 'invFreq', 'params', 'precision', 'attentionFactor', 'rotaryDim']);
      // seqLen defaults to the number of positions; resolvePositions checks and converts them once.
      const seqLen = options.positions !== undefined && options.seqLen === undefined
        ? options.positions?.length : checkInt(fn, 'seqLen', options.seqLen, 1);
      if (seqLen === 0) throw new PosencRangeError(`${fn}: positions must not be empty`);
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
      if (precision === PRECISIONS.ggml && (options.params === undefined || options.attentionFactor !== undefined)) {
        throw new PosencTypeError(`${fn}: precision 'ggml' needs options.params and takes its gain from them (no invFreq, no attentionFactor)`);
      }
      const pos = resolvePositions(fn, options, seqLen);
      const f = resolveFrequencies(fn, options, pos.maxPosition);
      const half = f.rotaryDim >> 1;
      checkElements(fn, 'seqLen * rotaryDim / 2', seqLen * half);
      return scoped(fn, (alloc, put) => {
        const cos = alloc(seqLen * half * 4);
        const sin = alloc(seqLen * half * 4);
        const inv = put(f.invFreq, Float64Array), p = put(pos.positions, Float64Array);
        if (precision === PRECISIONS.ggml) {
          status(fn, module.ropeCacheGgml(cos, sin, seqLen, flatRopeParams(fn, options.params), pos.maxPosition + 1, p, pos.offset));
        } else {
          status(fn, module.ropeCache(cos, sin, seqLen, inv, f.rotaryDim, p, pos.offset, precision, f.attentionFactor));
        }
        return { cos: copyOut(cos, seqLen * half), sin: copyOut(sin, seqLen * half), rotaryDim: f.rotaryDim };
      });
    },
  };
}
