// Attention with positions fused in (cpp/src/attention.cpp): RoPE, ALiBi, T5, masks, sliding
// windows, sinks, Llama 4's chunks and temperature.
import {
  PosencRangeError, PosencTypeError, checkBool, checkChoice, checkElements,
  checkFloat32Array, checkInt, checkNumber, checkOptions, checkOut, describe, isPlainObject, numberOrBigint, toFloat64
} from './checks.js';
import { checkRopeParamsKeys, checkRotation, frequencyArg, gainArg, placeRotation, resolveFrequencies } from './rope_params.js';
import { extents, float32Data, fromFloat32, halfBits, isFloat16Array, isTensorLike, isTfTensor, tensorArg } from './tensor.js';

const TENSOR_LAYOUTS = { bshd: false, bhsd: true };

// Options that attention and kvCache.attend / kvCache share.

/**
 * The positional bias terms (C++ PositionBias) in the options: each term of `terms` (a scheme's
 * module declares its own: { option, keys, parse }, as js/alibi.js does; keys(fn, value) checks its
 * option's keys, which the calls do before anything else) parses its option →
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

/** options.sinks: gpt-oss's logit per head → the Float32Array, or null (C++ holds them finite). */
export function sinksOption(fn, sinks, nHeads) {
  if (sinks === undefined) return null;
  checkFloat32Array(fn, 'sinks', sinks);
  if (sinks.length !== nHeads) throw new PosencRangeError(`${fn}: sinks must have nHeads = ${nHeads} entries (one logit per head; got ${sinks.length})`);
  return sinks;
}

// Sizes cross into C++ as wasm32's size_t.
const MAX_SIZE = 2 ** 32 - 1;

/**
 * The options' values as attention_options (embind_attention.cpp) reads them, checked for their
 * JS type: a size, a number, null for what is not given. Their rules are C++'s (attention_check,
 * which attentionPlan runs). → { call (the binding's object, without tensors), values (what was
 * given, by JS name, for C++'s messages) }.
 */
function callOptions(fn, options, sizes) {
  const size = (name) => (options[name] === undefined ? null : checkInt(fn, name, options[name], 0, MAX_SIZE));
  const number = (name, v = options[name]) => (v === undefined ? null : checkNumber(fn, name, v));
  let temperature = null;
  if (options.temperature !== undefined) {
    const { floorScale = 8192, attnScale = 0.1 } = options.temperature;
    temperature = { floorScale: number('temperature.floorScale', floorScale), attnScale: number('temperature.attnScale', attnScale) };
  }
  const call = { ...sizes, window: size('window'), sinkTokens: size('sinkTokens') ?? 0, chunkSize: size('chunkSize'),
    scale: number('scale'), softcap: number('softcap') ?? 0, temperature };
  const values = Object.fromEntries(['nHeads', 'nKvHeads', 'headDim', 'window', 'sinkTokens', 'chunkSize', 'scale', 'softcap']
    .filter((k) => call[k] !== null && (k in sizes || options[k] !== undefined)).map((k) => [k, call[k]]));
  if (temperature) Object.assign(values, temperature);
  return { call, values };
}

/**
 * options.rope: RopeParams, or { params | invFreq, layout, rotaryOffset, precision, attentionFactor };
 * fields: the RoPE params fields (rope_params.js ropeParamsFields).
 */
export function ropeOption(fn, rope, fields) {
  const r = isPlainObject(rope) && 'headDim' in rope ? { params: rope } : rope;
  checkOptions(fn, r, ['params', 'invFreq', 'layout', 'rotaryOffset', 'precision', 'attentionFactor'], 'rope');
  if (r.params !== undefined) checkRopeParamsKeys(fn, r.params, fields, r === rope ? 'rope.params' : 'rope');
  return r;
}

// k or v as the kernels take it: float32, or float16 bits (kvDtype 'float16', a Float16Array or a
// float16 tensor) → { data, half }.
function kvData(fn, name, t, kvDtype) {
  const bits = halfBits(t.data);
  const half = bits !== null && (isFloat16Array(t.data) || t.type === 'float16' || kvDtype === true);
  if (kvDtype === true && !half) {
    throw new PosencTypeError(`${fn}: ${name} must be a Uint16Array of float16 bits or a Float16Array with kvDtype 'float16' (got ${describe(t.data)})`);
  }
  if (kvDtype === false && half) throw new PosencTypeError(`${fn}: ${name} is float16 but kvDtype is 'float32'`);
  if (half) return { data: bits, half };
  if (t.type !== undefined && t.type !== 'float32') throw new PosencTypeError(`${fn}: ${name} must be a float32 or float16 tensor (got type ${describe(t.type)})`);
  return { data: checkFloat32Array(fn, t.dims ? `${name}.data` : name, t.data), half };
}

// options.mask → { data, slab, perHead, perBatch } or null: a flat mask is [qLen][kvLen],
// [nHeads][qLen][kvLen] or [batch][nHeads][qLen][kvLen]; a tensor's dims broadcast to
// [batch, nHeads, qLen, kvLen] from the right, as ONNX's attn_mask does (each leading dim 1 or full).
function maskOption(fn, mask, { batch, nHeads, qLen, kvLen }) {
  if (mask === undefined) return null;
  const t = tensorArg(fn, 'mask', mask);
  const data = checkFloat32Array(fn, t.dims ? 'mask.data' : 'mask', t.data);
  const full = [batch, nHeads, qLen, kvLen];
  let dims;
  if (t.dims) {
    const d = t.dims;
    const ok = d.length >= 2 && d.length <= 4 && d.every((n, i) => n === full[4 - d.length + i] || (i < d.length - 2 && n === 1));
    if (!ok) throw new PosencRangeError(`${fn}: mask.dims must broadcast to [batch, nHeads, qLen, kvLen] = [${full}] (got [${d}])`);
    dims = [1, 1, 1, 1].map((one, i) => d[i - (4 - d.length)] ?? one);
    if (data.length !== dims.reduce((a, b) => a * b)) throw new PosencRangeError(`${fn}: mask.data has ${data.length} elements but dims [${d}] need ${dims.reduce((a, b) => a * b)}`);
  } else {
    const forms = [[1, 1], [1, nHeads], [batch, nHeads]].filter(([b, h], i) => i === 0 || b * h > 1);
    const hit = forms.find(([b, h]) => b * h * qLen * kvLen === data.length);
    if (!hit) {
      const names = ['qLen * kvLen', 'nHeads * qLen * kvLen', 'batch * nHeads * qLen * kvLen'];
      throw new PosencRangeError(`${fn}: mask.length must be ${forms.map(([b, h], i) => `${names[i]} = ${b * h * qLen * kvLen}`).join(' or ')} (got ${data.length})`);
    }
    dims = [...hit, qLen, kvLen];
  }
  const perHead = dims[1] > 1, perBatch = dims[0] > 1;
  return { data, perHead, perBatch, slab: (perHead ? nHeads : 1) * qLen * kvLen };
}

// attention() and iropeScale take the attention context ctx = { module, heap, names, biasTerms,
// attentionOptions } (attentionApi's).

// Everything attention() checks, in the order the rule asks: option keys, then the tensors and
// their extents, then the values. → the plan runAttention follows.
function attentionPlan(ctx, fn, q, k, v, options) {
  const { biasTerms } = ctx;
  if (options === undefined && !(isTensorLike(q) || isTfTensor(q))) throw new PosencTypeError(`${fn}: options { nHeads, headDim } are required`);
  options = checkOptions(fn, options, ctx.attentionOptions);
  const ropeOpts = options.rope === undefined ? undefined : ropeOption(fn, options.rope, ctx.names.ropeParams);
  for (const t of biasTerms) if (options[t.option] !== undefined) t.keys?.(fn, options[t.option]);
  const temperatureOpts = options.temperature === undefined ? undefined
    : checkOptions(fn, options.temperature, ['floorScale', 'attnScale'], 'temperature');
  const Q = tensorArg(fn, 'q', q);
  const { data: qData, half } = float32Data(fn, 'q', Q);
  const kvDtype = options.kvDtype === undefined ? undefined : checkChoice(fn, 'kvDtype', options.kvDtype, { float32: false, float16: true });
  const K = tensorArg(fn, 'k', k), V = tensorArg(fn, 'v', v);
  const kd = kvData(fn, 'k', K, kvDtype), vd = kvData(fn, 'v', V, kvDtype ?? kd.half);
  const headsMajor = checkChoice(fn, 'layout', options.layout ?? 'bshd', TENSOR_LAYOUTS);
  const qe = extents(fn, 'q', { data: qData, dims: Q.dims }, { batch: options.batch, heads: options.nHeads, headDim: options.headDim },
    { headsMajor, names: { len: 'qLen', heads: 'nHeads' } });
  if (options.nKvHeads !== undefined) {  // the heads' rule before k's extents, which it gives
    const heads = { nHeads: qe.heads, nKvHeads: checkInt(fn, 'nKvHeads', options.nKvHeads, 1, 2 ** 20), headDim: qe.headDim };
    ctx.heap.status(fn, ctx.module.attentionCheck(qe.len, 1, heads, false), { values: heads });
  }
  // nKvHeads: the options', K's dims' (4-D), else nHeads.
  const kvGiven = { batch: qe.batch, heads: options.nKvHeads ?? (K.dims?.length === 4 ? undefined : qe.heads), headDim: qe.headDim };
  const ke = extents(fn, 'k', { data: kd.data, dims: K.dims }, kvGiven, { headsMajor, names: { len: 'kvLen', heads: 'nKvHeads' } });
  if (!V.dims && !K.dims) {
    if (vd.data.length !== kd.data.length) throw new PosencRangeError(`${fn}: v.length must equal k.length = ${kd.data.length} (got ${vd.data.length})`);
  } else {
    extents(fn, 'v', { data: vd.data, dims: V.dims }, { ...ke, heads: ke.heads }, { headsMajor, names: { len: 'kvLen', heads: 'nKvHeads' } });
  }
  const { batch, heads: nHeads, headDim, len: qLen } = qe, { heads: nKvHeads, len: kvLen } = ke;
  const causal = options.causal === undefined ? false : checkBool(fn, 'causal', options.causal);
  const returnWeights = options.returnWeights === undefined ? false : checkBool(fn, 'returnWeights', options.returnWeights);
  checkElements(fn, 'batch * nHeads * qLen * kvLen', returnWeights ? batch * nHeads * qLen * kvLen : 0);
  const bias = positionBiasOption(fn, options, nHeads, causal, biasTerms);
  let rope = null;
  if (ropeOpts !== undefined) {
    const f = placeRotation(resolveFrequencies(ctx, `${fn} (rope)`, ropeOpts, kvLen - 1), headDim, ropeOpts.rotaryOffset !== undefined);
    rope = { ...f, precision: checkChoice(fn, 'rope.precision', ropeOpts.precision ?? 'fast', { fast: 0, accurate: 1 }) };
    checkRotation(ctx, `${fn} (rope)`, f, { seqLen: kvLen, nHeads, headDim, offset: 0, precision: rope.precision });
  }
  const { call, values } = callOptions(fn, { ...options, temperature: temperatureOpts },
    { nHeads, nKvHeads, headDim, causal, headsMajor, kvHalf: kd.half });
  const n = qData.length;
  const outType = half ? globalThis.Float16Array : Float32Array;
  const out = options.out === undefined ? undefined : checkOut(fn, options.out, { n, what: 'q.length', input: Q.data, Type: outType });
  const mask = maskOption(fn, options.mask, { batch, nHeads, qLen, kvLen });
  const sinks = sinksOption(fn, options.sinks, nHeads);
  // The core's rules for all of it (attention_check), before anything is in the heap.
  ctx.heap.status(fn, ctx.module.attentionCheck(qLen, kvLen, { ...call, sinks }, returnWeights), { values });
  return {
    Q, qData, half, k: kd.data, v: vd.data, kvHalf: kd.half, batch, nHeads, nKvHeads, headDim, qLen, kvLen, headsMajor, returnWeights, out,
    mask, sinks,
    call: {
      ...call, qPos: 0,
      ropeRotDim: rope ? rope.rotaryDim : 0, ropeLayout: rope ? rope.layout : 0, ropeRotOffset: rope ? rope.rotaryOffset : 0,
      ropePrecision: rope ? rope.precision : 0, ropeAttentionFactor: rope ? gainArg(rope) : NaN,
    },
    rope, bias,
  };
}

// Runs the plan, one batch row after another: k, v and the small tables go into the heap whole
// (a batch row's), q streams through it (heap.js pieceRows): each piece's rows of q, the mask and
// the weights are copied in and its output copied out, so the heap holds K, V and ~4 MiB of q,
// not q and the output too.
function runAttention(ctx, fn, p, output, weights) {
  const { module, heap: { scoped, f32, u16, status, pieceRows, gatherRows, scatterRows } } = ctx;
  const { nHeads, nKvHeads, headDim, qLen, kvLen, mask } = p;
  const qN = qLen * nHeads * headDim, kvN = kvLen * nKvHeads * headDim, wN = nHeads * qLen * kvLen;
  const rows = pieceRows(qLen, Math.max(nHeads * headDim, mask ? (mask.perHead ? nHeads : 1) * kvLen : 0, p.returnWeights ? nHeads * kvLen : 0));
  const qRows = { slabs: p.headsMajor ? nHeads : 1, len: qLen, width: p.headsMajor ? headDim : nHeads * headDim };
  const maskRows = { slabs: mask?.perHead ? nHeads : 1, len: qLen, width: kvLen };
  const weightRows = { slabs: nHeads, len: qLen, width: kvLen };
  const kvView = p.kvHalf ? u16 : f32;
  scoped(fn, (alloc, put) => {
    // float16 K and V keep their 2 bytes per value in the heap (half the copy, as a float16 KV cache).
    const kp = alloc(kvN * (p.kvHalf ? 2 : 4)), vp = alloc(kvN * (p.kvHalf ? 2 : 4));
    const sk = put(p.sinks), tables = p.bias.tables.map((t) => put(t));
    const ropeFrequencies = frequencyArg(put, p.rope);
    const qp = alloc(rows * nHeads * headDim * 4), yp = alloc(rows * nHeads * headDim * 4);
    const mp = mask ? alloc(maskRows.slabs * rows * kvLen * 4) : 0;
    const wp = p.returnWeights ? alloc(nHeads * rows * kvLen * 4) : 0;
    const call = { ...p.call, ...p.bias.fields(tables), ropeFrequencies, bias: mp, biasPerHead: mask?.perHead ?? false, sinks: sk };
    for (let b = 0; b < p.batch; b++) {
      kvView(kp, kvN).set(p.k.subarray(b * kvN, (b + 1) * kvN));
      kvView(vp, kvN).set(p.v.subarray(b * kvN, (b + 1) * kvN));
      const q = p.qData.subarray(b * qN, (b + 1) * qN), y = output.subarray(b * qN, (b + 1) * qN);
      const m = mask && (mask.perBatch ? mask.data.subarray(b * mask.slab, (b + 1) * mask.slab) : mask.data);
      const w = weights?.subarray(b * wN, (b + 1) * wN);
      for (let i0 = 0; i0 < qLen; i0 += rows) {
        const n = Math.min(rows, qLen - i0);
        gatherRows(f32, qp, q, qRows, i0, n);
        if (m) gatherRows(f32, mp, m, maskRows, i0, n);
        call.qPos = kvLen - qLen + i0;  // query i0 of the whole q
        status(fn, module.attention(qp, kp, vp, n, kvLen, call, yp, wp));
        scatterRows(y, f32, yp, qRows, i0, n);
        if (w) scatterRows(w, f32, wp, weightRows, i0, n);
      }
    }
  });
}

function attention(ctx, q, k, v, options) {
  const fn = 'attention';
  const p = attentionPlan(ctx, fn, q, k, v, options);
  const n = p.qData.length;
  // float16 q: computed in float32 (q widened exactly), the output rounded to float16.
  const output = p.out && !p.half ? p.out : new Float32Array(n);
  const weights = p.returnWeights ? new Float32Array(p.batch * p.nHeads * p.qLen * p.kvLen) : null;
  runAttention(ctx, fn, p, output, weights);
  let y = output;
  if (p.half) y = p.out ? (p.out.set(output), p.out) : fromFloat32(output, true);
  const { Q } = p;
  if (Q.dims) y = Q.wrap(y, Q.dims.slice(), p.half ? 'float16' : 'float32');
  if (!p.returnWeights) return y;
  const w = Q.dims ? Q.wrap(weights, [p.batch, p.nHeads, p.qLen, p.kvLen], 'float32') : weights;
  return { output: y, weights: w };
}


function iropeScale(ctx, positions, options) {
  const fn = 'iropeScale';
  const { module, heap: { scoped, f64, status } } = ctx;
  const { floorScale = 8192, attnScale = 0.1 } = checkOptions(fn, options, ['floorScale', 'attnScale']);
  checkNumber(fn, 'floorScale', floorScale);
  checkNumber(fn, 'attnScale', attnScale);
  // The rule is C++'s (irope_check), asked before anything is allocated.
  status(fn, module.iropeCheck(floorScale, attnScale), { values: { floorScale, attnScale } });
  const single = typeof positions === 'number' || typeof positions === 'bigint';
  const pos = toFloat64(fn, 'positions', single ? [numberOrBigint(fn, 'positions', positions)] : positions);
  checkElements(fn, 'positions.length', pos.length);
  return scoped(fn, (alloc, put) => {
    const p = put(pos, Float64Array), out = alloc(Math.max(1, pos.length) * 8);
    status(fn, module.iropeScales(out, p, pos.length, floorScale, attnScale));
    const scales = f64(out, pos.length).slice();
    return single ? scales[0] : scales;
  });
}

/**
 * pe.attention and iropeScale over the module and its heap tools; biasTerms: the positional bias
 * terms (each scheme module's { option, keys, parse }), names: ropeNames(module).
 */
export function attentionApi(module, heap, { biasTerms, names }) {
  const attentionOptions = ['nHeads', 'nKvHeads', 'headDim', 'batch', 'causal', ...biasTerms.map((t) => t.option), 'rope', 'mask',
    'scale', 'softcap', 'returnWeights', 'window', 'sinkTokens', 'sinks', 'chunkSize', 'temperature', 'layout', 'kvDtype', 'out'];
  const ctx = { module, heap, names, biasTerms, attentionOptions };
  return {
    attention: (q, k, v, options) => attention(ctx, q, k, v, options),
    iropeScale: (positions, options) => iropeScale(ctx, positions, options),
  };
}
