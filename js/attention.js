// Attention with positions fused in (cpp/src/attention.cpp): RoPE, ALiBi, T5, masks, sliding
// windows, sinks, Llama 4's chunks and temperature.
import {
  PosencRangeError, PosencTypeError, checkBool, checkChoice, checkElements, checkFinite,
  checkFloat32Array, checkInt, checkOptions, checkOut, describe, isPlainObject, toFloat64
} from './checks.js';

// Options that attention and kvCache.attend / kvCache share.

/**
 * The positional bias terms (C++ PositionBias) in the options: each term of `terms` (a scheme's
 * module declares its own: { option, parse }, as js/alibi.js does) parses its option →
 * { tables, fields }: tables, the Float32Arrays (or null) to put in the heap; fields(addresses),
 * given their heap addresses in that order (0 for null), the options embind's position_bias reads.
 */
export function positionBiasOption(fn, options, nHeads, causal, terms) {
  const parsed = terms.map((t) => t.parse(fn, options[t.option], nHeads, causal));
  return {
    tables: parsed.map((p) => p.table),
    fields: (addresses) => Object.assign({}, ...parsed.map((p, i) => p.fields(addresses[i]))),
  };
}

/** options.sinks: gpt-oss's logit per head, finite → the Float32Array, or null. */
export function sinksOption(fn, sinks, nHeads) {
  if (sinks === undefined) return null;
  checkFloat32Array(fn, 'sinks', sinks);
  if (sinks.length !== nHeads) throw new PosencRangeError(`${fn}: sinks must have nHeads = ${nHeads} entries (one logit per head; got ${sinks.length})`);
  for (const x of sinks) if (!Number.isFinite(x)) throw new PosencRangeError(`${fn}: sinks must be finite (got ${x})`);
  return sinks;
}

/** options.rope: RopeParams, or { params | invFreq, layout, rotaryOffset, precision, attentionFactor }. */
export function ropeOption(fn, rope) {
  const r = isPlainObject(rope) && 'headDim' in rope ? { params: rope } : rope;
  return checkOptions(fn, r, ['params', 'invFreq', 'layout', 'rotaryOffset', 'precision', 'attentionFactor'], 'rope');
}

export function attentionApi(module, heap, { resolveFrequencies, biasTerms }) {
  const { scoped, f32, f64, status, pieceRows, gatherRows, scatterRows } = heap;
  const ATTENTION_OPTIONS = ['nHeads', 'nKvHeads', 'headDim', 'causal', ...biasTerms.map((t) => t.option), 'rope', 'mask',
    'scale', 'softcap', 'returnWeights', 'window', 'sinkTokens', 'sinks', 'chunkSize', 'temperature', 'layout', 'kvDtype', 'out'];
  const TENSOR_LAYOUTS = { bshd: false, bhsd: true };

  function attention(q, k, v, options) {
    const fn = 'attention';
    checkFloat32Array(fn, 'q', q);
    const kvHalf = checkChoice(fn, 'kvDtype', options?.kvDtype ?? 'float32', { float32: false, float16: true });
    for (const [name, t] of [['k', k], ['v', v]]) {
      if (kvHalf && !(t instanceof Uint16Array)) throw new PosencTypeError(`${fn}: ${name} must be a Uint16Array of float16 bits with kvDtype 'float16' (got ${describe(t)})`);
      if (!kvHalf) checkFloat32Array(fn, name, t);
    }
    if (options === undefined) throw new PosencTypeError(`${fn}: options { nHeads, headDim } are required`);
    checkOptions(fn, options, ATTENTION_OPTIONS);
    const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1, 2 ** 20);
    const nKvHeads = checkInt(fn, 'nKvHeads', options.nKvHeads ?? nHeads, 1, 2 ** 20);
    const headDim = checkInt(fn, 'headDim', options.headDim, 1, 2 ** 20);
    if (nHeads % nKvHeads !== 0) throw new PosencRangeError(`${fn}: nHeads = ${nHeads} must be a multiple of nKvHeads = ${nKvHeads}`);
    if (q.length === 0 || q.length % (nHeads * headDim) !== 0) {
      throw new PosencRangeError(`${fn}: q.length must be a non-zero multiple of nHeads * headDim = ${nHeads * headDim} (got ${q.length})`);
    }
    if (k.length === 0 || k.length % (nKvHeads * headDim) !== 0) {
      throw new PosencRangeError(`${fn}: k.length must be a non-zero multiple of nKvHeads * headDim = ${nKvHeads * headDim} (got ${k.length})`);
    }
    if (v.length !== k.length) throw new PosencRangeError(`${fn}: v.length must equal k.length = ${k.length} (got ${v.length})`);
    const qLen = q.length / (nHeads * headDim), kvLen = k.length / (nKvHeads * headDim);
    const causal = options.causal === undefined ? false : checkBool(fn, 'causal', options.causal);
    const scale = options.scale === undefined ? NaN : checkFinite(fn, 'scale', options.scale);
    const softcap = options.softcap === undefined ? 0 : checkFinite(fn, 'softcap', options.softcap);
    const returnWeights = options.returnWeights === undefined ? false : checkBool(fn, 'returnWeights', options.returnWeights);
    checkElements(fn, 'nHeads * qLen * kvLen', returnWeights ? nHeads * qLen * kvLen : 0);

    const bias = positionBiasOption(fn, options, nHeads, causal, biasTerms);
    let rope = null;
    if (options.rope !== undefined) {
      const r = ropeOption(fn, options.rope);
      const f = resolveFrequencies(`${fn} (rope)`, r, kvLen - 1);
      if (f.rotaryDim > headDim) throw new PosencRangeError(`${fn}: rope rotaryDim = ${f.rotaryDim} must be <= headDim = ${headDim}`);
      rope = { ...f, precision: checkChoice(fn, 'rope.precision', r.precision ?? 'fast', { fast: 0, accurate: 1 }) };
    }
    const window = options.window === undefined ? 0 : checkInt(fn, 'window', options.window, 1);
    const sinkTokens = options.sinkTokens === undefined ? 0 : checkInt(fn, 'sinkTokens', options.sinkTokens, 0);
    if (sinkTokens > 0 && !window) throw new PosencTypeError(`${fn}: sinkTokens needs a window (StreamingLLM keeps the first keys beside a rolling window)`);
    const sinks = sinksOption(fn, options.sinks, nHeads);
    const chunkSize = options.chunkSize === undefined ? 0 : checkInt(fn, 'chunkSize', options.chunkSize, 1);
    const headsMajor = checkChoice(fn, 'layout', options.layout ?? 'bshd', TENSOR_LAYOUTS);
    let temperature = { floorScale: 0, attnScale: 0 };
    if (options.temperature !== undefined) {
      const { floorScale = 8192, attnScale = 0.1 } = checkOptions(fn, options.temperature, ['floorScale', 'attnScale'], 'temperature');
      temperature = { floorScale: checkFinite(fn, 'temperature.floorScale', floorScale, { positive: true }),
        attnScale: checkFinite(fn, 'temperature.attnScale', attnScale) };
    }
    let mask = null, maskPerHead = false;
    if (options.mask !== undefined) {
      checkFloat32Array(fn, 'mask', options.mask);
      maskPerHead = options.mask.length === nHeads * qLen * kvLen && nHeads > 1;
      if (!maskPerHead && options.mask.length !== qLen * kvLen) {
        throw new PosencRangeError(`${fn}: mask.length must be qLen * kvLen = ${qLen * kvLen} or nHeads * qLen * kvLen = ${nHeads * qLen * kvLen} (got ${options.mask.length})`);
      }
      mask = options.mask;
    }
    const output = options.out === undefined ? new Float32Array(q.length) : checkOut(fn, options.out, { n: q.length, what: 'q.length', input: q });
    const weights = returnWeights ? new Float32Array(nHeads * qLen * kvLen) : null;

    // k, v and the small tables go into the heap whole; q streams through it (heap.js pieceRows):
    // each piece's rows of q, the mask and the weights are copied in and its output copied out, so
    // the heap holds K, V and ~4 MiB of q, not q and the output too.
    const rows = pieceRows(qLen, Math.max(nHeads * headDim, mask ? (maskPerHead ? nHeads : 1) * kvLen : 0,
      returnWeights ? nHeads * kvLen : 0));
    const qRows = { slabs: headsMajor ? nHeads : 1, len: qLen, width: headsMajor ? headDim : nHeads * headDim };
    const maskRows = { slabs: maskPerHead ? nHeads : 1, len: qLen, width: kvLen };
    const weightRows = { slabs: nHeads, len: qLen, width: kvLen };
    scoped(fn, (alloc, put) => {
      // float16 K and V keep their 2 bytes per value in the heap (half the copy, as a float16 KV cache).
      const kp = put(k, kvHalf ? Uint16Array : Float32Array), vp = put(v, kvHalf ? Uint16Array : Float32Array);
      const sk = put(sinks), tables = bias.tables.map((t) => put(t));
      const inv = put(rope?.invFreq, Float64Array);
      const qp = alloc(rows * nHeads * headDim * 4), yp = alloc(rows * nHeads * headDim * 4);
      const mp = mask ? alloc(maskRows.slabs * rows * kvLen * 4) : 0;
      const wp = returnWeights ? alloc(nHeads * rows * kvLen * 4) : 0;
      const call = {
        nHeads, nKvHeads, headDim, causal, scale, softcap,
        ...bias.fields(tables),
        ropeInvFreq: inv, ropeRotDim: rope ? rope.rotaryDim : 0, ropeLayout: rope ? rope.layout : 0, ropeRotOffset: rope ? rope.rotaryOffset : 0,
        ropePrecision: rope ? rope.precision : 0, ropeAttentionFactor: rope ? rope.attentionFactor : 1,
        bias: mp, biasPerHead: maskPerHead, window, sinkTokens, sinks: sk,
        chunkSize, floorScale: temperature.floorScale, attnScale: temperature.attnScale, headsMajor, kvHalf, qPos: 0,
      };
      for (let i0 = 0; i0 < qLen; i0 += rows) {
        const n = Math.min(rows, qLen - i0);
        gatherRows(f32, qp, q, qRows, i0, n);
        if (mask) gatherRows(f32, mp, mask, maskRows, i0, n);
        call.qPos = kvLen - qLen + i0;  // query i0 of the whole q
        status(fn, module.attention(qp, kp, vp, n, kvLen, call, yp, wp));
        scatterRows(output, f32, yp, qRows, i0, n);
        if (returnWeights) scatterRows(weights, f32, wp, weightRows, i0, n);
      }
    });
    return returnWeights ? { output, weights } : output;
  }

  return {
    attention,
    iropeScale(positions, options) {
      const fn = 'iropeScale';
      const { floorScale = 8192, attnScale = 0.1 } = checkOptions(fn, options, ['floorScale', 'attnScale']);
      checkFinite(fn, 'floorScale', floorScale, { positive: true });
      checkFinite(fn, 'attnScale', attnScale);
      const single = typeof positions === 'number';
      const pos = toFloat64(fn, 'positions', single ? [positions] : positions);
      checkElements(fn, 'positions.length', pos.length);
      return scoped(fn, (alloc, put) => {
        const p = put(pos, Float64Array), out = alloc(Math.max(1, pos.length) * 8);
        module.iropeScales(out, p, pos.length, floorScale, attnScale);
        const scales = f64(out, pos.length).slice();
        return single ? scales[0] : scales;
      });
    },
  };
}
