// The idiomatic JS API over the Embind module. Arguments are checked here first, with the user's
// names, before anything is allocated in the WASM heap; C++ checks the rules again and its status
// message (snake_case names) is re-worded with the JS names. Results are fresh typed arrays owned
// by JS; the only object that holds WASM memory is HeapFloat32 (allocFloat32), freed by delete().
import presets from './presets.js';
import { wrapLab } from './lab.js';  // the extrapolation lab: pe.lab

/** The largest result one call may return, in float32 elements (1 GiB); the heap may grow to 2 GiB. */
export const MAX_ELEMENTS = 2 ** 28;

const ROPE_SCALING_TYPES = ['none', 'default', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope', 'proportional'];
const ROPE_LAYOUTS = { halfSplit: 0, interleaved: 1 };
const PRECISIONS = { fast: 0, accurate: 1, ggml: 2 };
const SINUSOIDAL_LAYOUTS = { interleaved: 0, concat: 1 };
const DIALECTS = { hf: 0, gguf: 1 };

// C++ status messages name parameters in snake_case; users know them by these names.
const JS_NAMES = {
  seq_len: 'seqLen', d_model: 'dModel', n_heads: 'nHeads', head_dim: 'headDim', rot_dim: 'rotaryDim',
  q_len: 'qLen', k_len: 'kLen', max_len: 'maxLen', max_bias: 'maxBias', num_buckets: 'numBuckets',
  max_distance: 'maxDistance', inv_freq: 'invFreq', pos: 'positions', pos_offset: 'offset', n_pos: 'seqLen',
  attention_factor: 'attentionFactor', theta: 'params.theta',
  partial_rotary_factor: 'params.partialRotaryFactor', factor: 'params.scaling.factor',
  original_max_position_embeddings: 'params.scaling.originalMaxPositionEmbeddings',
  max_position_embeddings: 'params.scaling.maxPositionEmbeddings', beta_fast: 'params.scaling.betaFast',
  beta_slow: 'params.scaling.betaSlow', mscale: 'params.scaling.mscale',
  mscale_all_dim: 'params.scaling.mscaleAllDim', low_freq_factor: 'params.scaling.lowFreqFactor',
  high_freq_factor: 'params.scaling.highFreqFactor', short_factor: 'params.scaling.shortFactor',
  long_factor: 'params.scaling.longFactor', freq_factors: 'params.freqFactors', query_offset: 'queryOffset',
};

function jsMessage(message) {
  return message.replace(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*\b/g, (w) => JS_NAMES[w] ?? w);
}

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'function') return 'a function';
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : `an object (${v.constructor?.name ?? 'Object'})`;
}

function checkNumber(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number (got ${describe(v)})`);
  return v;
}

function checkInt(fn, name, v, min, max = Number.MAX_SAFE_INTEGER) {
  checkNumber(fn, name, v);
  if (!Number.isInteger(v)) throw new RangeError(`${fn}: ${name} must be an integer (got ${v})`);
  if (v < min || v > max) {
    const rule = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new RangeError(`${fn}: ${name} must be ${rule} (got ${v})`);
  }
  return v;
}

function checkFinite(fn, name, v, { positive = false } = {}) {
  checkNumber(fn, name, v);
  if (!Number.isFinite(v) || (positive && v <= 0)) {
    throw new RangeError(`${fn}: ${name} must be finite${positive ? ' and > 0' : ''} (got ${v})`);
  }
  return v;
}

function checkBool(fn, name, v) {
  if (typeof v !== 'boolean') throw new TypeError(`${fn}: ${name} must be a boolean (got ${describe(v)})`);
  return v;
}

function checkChoice(fn, name, v, choices) {
  if (typeof v !== 'string' || !Object.hasOwn(choices, v)) {
    throw new RangeError(`${fn}: ${name} must be one of ${Object.keys(choices).map((c) => `'${c}'`).join(', ')} (got ${describe(v)})`);
  }
  return choices[v];
}

function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

function checkOptions(fn, options, allowed, name = 'options') {
  if (options === undefined) return {};
  if (!isPlainObject(options)) throw new TypeError(`${fn}: ${name} must be an object (got ${describe(options)})`);
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${fn}: unknown ${name === 'options' ? 'option' : `key in ${name}`} ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
    }
  }
  return options;
}

function checkFloat32Array(fn, name, v) {
  if (!(v instanceof Float32Array)) throw new TypeError(`${fn}: ${name} must be a Float32Array (got ${describe(v)})`);
  return v;
}

/** An array-like of numbers (Array or any typed array; BigInt64Array too) as a Float64Array. */
function toFloat64(fn, name, v, { integer = false } = {}) {
  const ok = Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
  if (!ok) throw new TypeError(`${fn}: ${name} must be an array or typed array of numbers (got ${describe(v)})`);
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = typeof v[i] === 'bigint' ? Number(v[i]) : v[i];
    if (typeof x !== 'number') throw new TypeError(`${fn}: ${name}[${i}] must be a number (got ${describe(v[i])})`);
    if (!Number.isFinite(x) || (integer && !Number.isInteger(x))) {
      throw new RangeError(`${fn}: ${name}[${i}] must be ${integer ? 'an integer' : 'finite'} (got ${x})`);
    }
    out[i] = x;
  }
  return out;
}

function checkElements(fn, what, n) {
  if (n > MAX_ELEMENTS) {
    throw new RangeError(`${fn}: ${what} = ${n} elements exceeds the limit of ${MAX_ELEMENTS} (1 GiB of float32)`);
  }
}


// ---- tensors (ONNX ops) ----------------------------------------------------------------------------

const ATTENTION_INPUTS = ['Q', 'K', 'V', 'attn_mask', 'past_key', 'past_value', 'nonpad_kv_seqlen'];
const ATTENTION_OUTPUTS = ['Y', 'present_key', 'present_value', 'qk_matmul_output'];
const ATTENTION_ATTRS = ['is_causal', 'kv_num_heads', 'q_num_heads', 'qk_matmul_output_mode', 'scale', 'softcap',
  'softmax_precision'];
const ROTARY_INPUTS = ['X', 'cos_cache', 'sin_cache', 'position_ids'];
const ROTARY_ATTRS = ['interleaved', 'num_heads', 'rotary_embedding_dim'];
const DTYPE = { float32: 0, bool: 1, int64: 2 };

/**
 * Reads an ONNX-style tensor { data, dims } (an onnxruntime-web Tensor works as is) for a slot
 * whose allowed element types are `kinds` ('float32', 'bool', 'int64'). null when absent.
 */
function readTensor(fn, slot, t, kinds) {
  if (t === undefined || t === null) return null;
  if (typeof t !== 'object' || !('data' in t) || !('dims' in t)) {
    throw new TypeError(`${fn}: inputs.${slot} must be a tensor { data, dims } (got ${describe(t)})`);
  }
  const dimsIn = t.dims;
  if (!(Array.isArray(dimsIn) || ArrayBuffer.isView(dimsIn))) {
    throw new TypeError(`${fn}: inputs.${slot}.dims must be an array of integers (got ${describe(dimsIn)})`);
  }
  const dims = Array.from(dimsIn, (d) => (typeof d === 'bigint' ? Number(d) : d));
  if (dims.length < 1 || dims.length > 4) {
    throw new RangeError(`${fn}: inputs.${slot}.dims must have 1 to 4 entries (got [${dims}])`);
  }
  dims.forEach((d, i) => {
    if (typeof d !== 'number' || !Number.isInteger(d) || d < 0) {
      throw new RangeError(`${fn}: inputs.${slot}.dims[${i}] must be an integer >= 0 (got ${describe(dimsIn[i])})`);
    }
  });
  const n = dims.reduce((a, b) => a * b, 1);
  if (n > MAX_ELEMENTS) throw new RangeError(`${fn}: inputs.${slot} has ${n} elements, over the limit of ${MAX_ELEMENTS}`);
  const data = t.data;
  let dtype;
  if (data instanceof Float32Array && kinds.includes('float32')) dtype = 'float32';
  else if ((data instanceof Uint8Array || (Array.isArray(data) && typeof data[0] === 'boolean')) && kinds.includes('bool')) dtype = 'bool';
  else if ((data instanceof BigInt64Array || (Array.isArray(data) && data.every((x) => typeof x === 'number' || typeof x === 'bigint'))) && kinds.includes('int64')) dtype = 'int64';
  else {
    const wanted = { float32: 'Float32Array', bool: 'Uint8Array or boolean[]', int64: 'BigInt64Array or number[]' };
    throw new TypeError(`${fn}: inputs.${slot}.data must be a ${kinds.map((k) => wanted[k]).join(' or ')} (got ${describe(data)})`);
  }
  if (data.length !== n) {
    throw new RangeError(`${fn}: inputs.${slot}.data has ${data.length} elements but dims [${dims}] need ${n}`);
  }
  if (dtype === 'int64') {
    for (let i = 0; i < n; i++) {
      const x = data[i];
      if (typeof x === 'number' && !Number.isSafeInteger(x)) throw new RangeError(`${fn}: inputs.${slot}.data[${i}] must be an integer (got ${x})`);
    }
  }
  return { slot, dtype, dims, data, n };
}

function readAttrs(fn, attrs, allowed) {
  if (attrs === undefined) return {};
  if (!isPlainObject(attrs)) throw new TypeError(`${fn}: attrs must be an object (got ${describe(attrs)})`);
  for (const key of Object.keys(attrs)) {
    if (!allowed.includes(key)) throw new TypeError(`${fn}: unknown attribute ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
  }
  return attrs;
}

function intAttr(fn, attrs, name, dflt, min, max) {
  let v = attrs[name];
  if (v === undefined) return dflt;
  if (typeof v === 'boolean') v = v ? 1 : 0;
  if (typeof v === 'bigint') v = Number(v);
  return checkInt(fn, `attrs.${name}`, v, min, max);
}

/** Builds the public API object from an instantiated Emscripten module. */
import { makeReadModel } from './model_file.js';

/** The public API over an Emscripten module; hooks.openPath (Node) opens a file path for readModel. */
export function wrap(module, hooks = {}) {
  // Runs body(alloc) with scratch heap buffers and frees them all afterwards, whatever happens.
  // Heap views are taken after every allocation: growing memory detaches older views.
  function scoped(fn, body) {
    const ptrs = [];
    const alloc = (bytes) => {
      const ptr = module.heapAlloc(bytes);
      if (!ptr) throw new RangeError(`${fn}: ${bytes} bytes do not fit in WASM memory (at most 2 GiB)`);
      ptrs.push(ptr);
      return ptr;
    };
    try {
      return body(alloc);
    } finally {
      for (const ptr of ptrs) module.heapFree(ptr);
    }
  }
  const f32 = (ptr, n) => module.HEAPF32.subarray(ptr >> 2, (ptr >> 2) + n);
  const f64 = (ptr, n) => module.HEAPF64.subarray(ptr >> 3, (ptr >> 3) + n);
  const i32 = (ptr, n) => module.HEAP32.subarray(ptr >> 2, (ptr >> 2) + n);
  const copyOut = (ptr, n) => module.HEAPF32.slice(ptr >> 2, (ptr >> 2) + n);
  function status(fn, message) {
    if (message) throw new RangeError(`${fn}: ${jsMessage(message)}`);
  }

  // ---- RoPE parameters -------------------------------------------------------------------------

  const SCALING_KEYS = ['type', 'factor', 'originalMaxPositionEmbeddings', 'maxPositionEmbeddings', 'betaFast',
    'betaSlow', 'mscale', 'mscaleAllDim', 'attentionFactor', 'truncate', 'lowFreqFactor', 'highFreqFactor',
    'shortFactor', 'longFactor', 'contextLength'];

  // The public params object → the flat object embind.cpp reads (NaN = unset).
  function flatRopeParams(fn, params) {
    if (!isPlainObject(params)) {
      throw new TypeError(`${fn}: params must be an object like { headDim: 128, theta: 10000 } (got ${describe(params)})`);
    }
    checkOptions(fn, params, ['headDim', 'rotaryDim', 'partialRotaryFactor', 'theta', 'scaling', 'freqFactors', 'mrope'], 'params');
    const { headDim, rotaryDim, partialRotaryFactor = 1, theta = 10000, scaling = { type: 'none' }, freqFactors, mrope } = params;
    if (mrope !== undefined) {
      checkOptions(fn, mrope, ['section', 'interleaved'], 'params.mrope');
      if (!Array.isArray(mrope.section) || mrope.section.length !== 3) {
        throw new RangeError(`${fn}: params.mrope.section must be 3 pair counts [t, h, w] (got ${describe(mrope.section)})`);
      }
      mrope.section.forEach((n, i) => checkInt(fn, `params.mrope.section[${i}]`, n, 0));
      if (mrope.interleaved !== undefined) checkBool(fn, 'params.mrope.interleaved', mrope.interleaved);
    }
    checkInt(fn, 'params.headDim', headDim, 1, 1 << 20);
    if (rotaryDim !== undefined) {
      checkInt(fn, 'params.rotaryDim', rotaryDim, 1, 1 << 20);
      if (rotaryDim % 2 !== 0) throw new RangeError(`${fn}: params.rotaryDim must be even (got ${rotaryDim})`);
      if (rotaryDim > headDim) throw new RangeError(`${fn}: params.rotaryDim must be <= headDim = ${headDim} (got ${rotaryDim})`);
    }
    checkNumber(fn, 'params.partialRotaryFactor', partialRotaryFactor);
    checkNumber(fn, 'params.theta', theta);
    checkOptions(fn, scaling, SCALING_KEYS, 'params.scaling');
    const s = scaling ?? {};
    if (!ROPE_SCALING_TYPES.includes(s.type)) {
      throw new RangeError(`${fn}: params.scaling.type must be one of: ${ROPE_SCALING_TYPES.join(', ')} (got ${describe(s.type)})`);
    }
    const num = (key, dflt) => (s[key] === undefined ? dflt : checkFinite(fn, `params.scaling.${key}`, s[key]));
    const int = (key) => (s[key] === undefined ? 0 : checkInt(fn, `params.scaling.${key}`, s[key], 1));
    return {
      headDim,
      rotaryDim: rotaryDim ?? 0,
      partialRotaryFactor,
      theta,
      scaling: s.type === 'default' ? 'none' : s.type,
      factor: num('factor', NaN),
      originalMaxPositionEmbeddings: int('originalMaxPositionEmbeddings'),
      maxPositionEmbeddings: int('maxPositionEmbeddings'),
      betaFast: num('betaFast', 32),
      betaSlow: num('betaSlow', 1),
      mscale: num('mscale', 0),
      mscaleAllDim: num('mscaleAllDim', 0),
      attentionFactor: num('attentionFactor', NaN),
      truncate: s.truncate === undefined ? true : checkBool(fn, 'params.scaling.truncate', s.truncate),
      lowFreqFactor: num('lowFreqFactor', 1),
      highFreqFactor: num('highFreqFactor', 4),
      shortFactor: s.shortFactor === undefined ? [] : Array.from(toFloat64(fn, 'params.scaling.shortFactor', s.shortFactor)),
      longFactor: s.longFactor === undefined ? [] : Array.from(toFloat64(fn, 'params.scaling.longFactor', s.longFactor)),
      contextLength: int('contextLength'),
      freqFactors: freqFactors === undefined ? [] : Array.from(toFloat64(fn, 'params.freqFactors', freqFactors)),
      mropeSection: mrope ? mrope.section : [],
      mropeInterleaved: mrope?.interleaved ?? false,
    };
  }

  // The flat object → the public params object (only what differs from the defaults).
  function publicRopeParams(flat) {
    const params = { headDim: flat.headDim, theta: flat.theta };
    if (flat.rotaryDim) params.rotaryDim = flat.rotaryDim;
    if (flat.partialRotaryFactor !== 1) params.partialRotaryFactor = flat.partialRotaryFactor;
    const scaling = { type: flat.scaling };
    if (!Number.isNaN(flat.factor)) scaling.factor = flat.factor;
    if (flat.originalMaxPositionEmbeddings) scaling.originalMaxPositionEmbeddings = flat.originalMaxPositionEmbeddings;
    if (flat.maxPositionEmbeddings) scaling.maxPositionEmbeddings = flat.maxPositionEmbeddings;
    if (flat.scaling === 'yarn') {
      Object.assign(scaling, { betaFast: flat.betaFast, betaSlow: flat.betaSlow, truncate: flat.truncate });
      if (flat.mscale) scaling.mscale = flat.mscale;
      if (flat.mscaleAllDim) scaling.mscaleAllDim = flat.mscaleAllDim;
    }
    if (!Number.isNaN(flat.attentionFactor)) scaling.attentionFactor = flat.attentionFactor;
    if (flat.scaling === 'llama3') Object.assign(scaling, { lowFreqFactor: flat.lowFreqFactor, highFreqFactor: flat.highFreqFactor });
    if (flat.scaling === 'longrope') Object.assign(scaling, { shortFactor: flat.shortFactor, longFactor: flat.longFactor });
    if (flat.contextLength) scaling.contextLength = flat.contextLength;
    params.scaling = scaling;
    if (flat.freqFactors.length) params.freqFactors = flat.freqFactors;
    if (flat.mropeSection.length) params.mrope = { section: flat.mropeSection, interleaved: flat.mropeInterleaved };
    return params;
  }

  // { invFreq: Float64Array, attentionFactor, rotaryDim } for the public params object.
  function frequencies64(fn, params, seqLen) {
    const flat = flatRopeParams(fn, params);
    const rotaryDim = module.ropeRotDim(flat);
    if (rotaryDim === 0) {
      status(fn, 'partial_rotary_factor must be in (0, 1]');
    }
    return scoped(fn, (alloc) => {
      const n = rotaryDim >> 1;
      const ptr = alloc(Math.max(1, n) * 8);
      const [message, attentionFactor] = module.ropeFrequencies(flat, seqLen, ptr, n);
      status(fn, message);
      return { invFreq: f64(ptr, n).slice(), attentionFactor, rotaryDim };
    });
  }

  // Resolves { invFreq | params } of applyRope/ropeCache to float64 frequencies.
  function resolveFrequencies(fn, options, maxPosition) {
    const { invFreq, params } = options;
    if ((invFreq === undefined) === (params === undefined)) {
      throw new TypeError(`${fn}: pass exactly one of options.invFreq and options.params`);
    }
    let f;
    if (params !== undefined) {
      f = { ...frequencies64(fn, params, maxPosition + 1), from: 'params' };
    } else {
      const inv = toFloat64(fn, 'invFreq', invFreq);
      if (inv.length === 0) throw new RangeError(`${fn}: invFreq must not be empty`);
      f = { invFreq: inv, attentionFactor: 1, rotaryDim: inv.length * 2, from: `2 * invFreq.length = 2 * ${inv.length}` };
    }
    if (options.rotaryDim !== undefined && options.rotaryDim !== f.rotaryDim) {
      checkInt(fn, 'rotaryDim', options.rotaryDim, 1);
      throw new RangeError(`${fn}: rotaryDim must equal 2 * the number of frequencies = ${f.rotaryDim} (got ${options.rotaryDim})`);
    }
    const attentionFactor = options.attentionFactor === undefined
      ? f.attentionFactor : checkFinite(fn, 'attentionFactor', options.attentionFactor);
    return { ...f, attentionFactor };
  }

  // Positions of seqLen tokens: options.positions, or offset + 0 … seqLen-1.
  function resolvePositions(fn, options, seqLen) {
    if (options.positions !== undefined) {
      if (options.offset !== undefined) throw new TypeError(`${fn}: pass options.positions or options.offset, not both`);
      const positions = toFloat64(fn, 'positions', options.positions);
      if (positions.length !== seqLen) {
        throw new RangeError(`${fn}: positions.length must equal seqLen = ${seqLen} (got ${positions.length})`);
      }
      let max = -Infinity;
      for (const p of positions) max = Math.max(max, p);
      return { positions, offset: 0, maxPosition: max };
    }
    const offset = options.offset === undefined ? 0 : checkFinite(fn, 'offset', options.offset);
    return { positions: null, offset, maxPosition: offset + seqLen - 1 };
  }

  const ROPE_OPTIONS = ['seqLen', 'nHeads', 'headDim', 'layout', 'rotaryDim', 'positions', 'offset', 'invFreq',
    'params', 'precision', 'attentionFactor'];

  // Checks applyRope's options against x's length; returns what the C++ call needs.
  function ropeCall(fn, length, options) {
    if (options === undefined) throw new TypeError(`${fn}: options { seqLen, nHeads, headDim, invFreq | params } are required`);
    checkOptions(fn, options, ROPE_OPTIONS);
    const seqLen = checkInt(fn, 'seqLen', options.seqLen, 1);
    const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
    const headDim = checkInt(fn, 'headDim', options.headDim ?? options.params?.headDim, 1);
    if (options.params?.headDim !== undefined && options.params.headDim !== headDim) {
      throw new RangeError(`${fn}: headDim = ${headDim} differs from params.headDim = ${options.params.headDim}`);
    }
    if (seqLen * nHeads * headDim !== length) {
      throw new RangeError(`${fn}: x.length must equal seqLen * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${length})`);
    }
    const layout = checkChoice(fn, 'layout', options.layout ?? 'halfSplit', ROPE_LAYOUTS);
    const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
    const pos = resolvePositions(fn, options, seqLen);
    const f = resolveFrequencies(fn, options, pos.maxPosition);
    if (f.rotaryDim > headDim) throw new RangeError(`${fn}: rotaryDim = ${f.rotaryDim} (${f.from}) must be <= headDim = ${headDim}`);
    if (precision === PRECISIONS.ggml && options.params === undefined) {
      throw new TypeError(`${fn}: precision 'ggml' needs options.params: ggml forms the angle from the parameters, not from an invFreq table`);
    }
    if (precision === PRECISIONS.ggml && options.attentionFactor !== undefined) {
      throw new TypeError(`${fn}: precision 'ggml' takes its gain from options.params (ggml's attn_factor); drop options.attentionFactor`);
    }
    return { seqLen, nHeads, headDim, layout, precision, ...pos, ...f, flat: options.params && flatRopeParams(fn, options.params) };
  }

  function runRope(fn, alloc, xPtr, c) {
    const invPtr = alloc(c.invFreq.length * 8);
    const posPtr = c.positions ? alloc(c.positions.length * 8) : 0;
    f64(invPtr, c.invFreq.length).set(c.invFreq);
    if (posPtr) f64(posPtr, c.positions.length).set(c.positions);
    rotate(fn, xPtr, c.seqLen, invPtr, posPtr, c.offset, c);
  }

  // One applyRope call on n tokens at xPtr (positions at posPtr, or offset + 0 … n-1).
  function rotate(fn, xPtr, n, invPtr, posPtr, offset, c) {
    if (c.precision === PRECISIONS.ggml) {
      status(fn, module.applyRopeGgml(xPtr, n, c.nHeads, c.headDim, c.flat, c.maxPosition + 1, posPtr, offset, c.layout));
    } else {
      status(fn, module.applyRope(xPtr, n, c.nHeads, c.headDim, invPtr, c.rotaryDim, posPtr, offset,
        c.layout, c.precision, c.attentionFactor));
    }
  }

  // applyRope with params.mrope and positions [3][seqLen] (temporal, height, width ids).
  function applyMrope(fn, x, options) {
    const { positions, ...rest } = options;
    const c = ropeCall(fn, x.length, rest);  // sizes, layout, frequencies (at the largest id + 1)
    if (c.precision === PRECISIONS.ggml) throw new TypeError(`${fn}: M-RoPE takes precision 'fast' or 'accurate'`);
    const pos = toFloat64(fn, 'positions', positions);
    const flat = flatRopeParams(fn, options.params);
    return scoped(fn, (alloc) => {
      const xp = alloc(x.length * 4), inv = alloc(c.invFreq.length * 8), pp = alloc(pos.length * 8);
      f32(xp, x.length).set(x);
      f64(inv, c.invFreq.length).set(c.invFreq);
      f64(pp, pos.length).set(pos);
      status(fn, module.applyRopeRows(xp, c.seqLen, c.nHeads, c.headDim, inv, c.rotaryDim, pp, flat.mropeInterleaved ? 1 : 0,
        flat.mropeSection, 0, c.layout, c.precision, c.attentionFactor));
      return copyOut(xp, x.length);
    });
  }

  /** Float32Array of `length` floats inside the WASM heap, for in-place calls. Free with delete(). */
  class HeapFloat32 {
    #ptr;
    constructor(length) {
      checkInt('allocFloat32', 'length', length, 1);
      checkElements('allocFloat32', 'length', length);
      this.#ptr = module.heapAlloc(length * 4);
      if (!this.#ptr) throw new RangeError(`allocFloat32: ${length * 4} bytes do not fit in WASM memory (at most 2 GiB)`);
      this.length = length;
    }
    /** The heap address (bytes), 0 once deleted. */
    get ptr() { return this.#ptr ?? 0; }
    /** A view of the data. Borrowed: take a new one after any posenc call, which may grow memory. */
    get array() {
      if (!this.#ptr) throw new TypeError('HeapFloat32: used after delete()');
      return f32(this.#ptr, this.length);
    }
    /** Frees the memory. A second call does nothing. */
    delete() {
      if (this.#ptr) module.heapFree(this.#ptr);
      this.#ptr = 0;
    }
    [Symbol.dispose ?? Symbol.for('Symbol.dispose')]() { this.delete(); }
  }


  // Copies tensors into the heap (all allocations first: growth detaches views) → descriptors.
  function tensorsToHeap(alloc, tensors) {
    const placed = tensors.map((t) => {
      if (!t) return null;
      const bytes = t.dtype === 'float32' ? 4 : t.dtype === 'bool' ? 1 : 8;
      return { t, ptr: alloc(Math.max(1, t.n) * bytes) };
    });
    const out = {};
    for (const p of placed) {
      if (!p) continue;
      const { t, ptr } = p;
      if (t.dtype === 'float32') module.HEAPF32.set(t.data, ptr >> 2);
      else if (t.dtype === 'bool') module.HEAPU8.set(Uint8Array.from(t.data, (x) => (x ? 1 : 0)), ptr);
      else {
        const view = new BigInt64Array(module.HEAPU8.buffer, ptr, t.n);
        for (let i = 0; i < t.n; i++) view[i] = BigInt(t.data[i]);
      }
      out[t.slot] = { ptr, dtype: DTYPE[t.dtype], dims: t.dims };
    }
    return out;
  }

  function onnxAttention(inputs, attrs, options) {
    const fn = 'onnx.attention';
    if (!isPlainObject(inputs)) throw new TypeError(`${fn}: inputs must be an object keyed by slot (Q, K, V, ...) (got ${describe(inputs)})`);
    for (const key of Object.keys(inputs)) {
      if (!ATTENTION_INPUTS.includes(key)) throw new TypeError(`${fn}: unknown input slot ${JSON.stringify(key)} (slots: ${ATTENTION_INPUTS.join(', ')})`);
    }
    for (const slot of ['Q', 'K', 'V']) {
      if (inputs[slot] === undefined || inputs[slot] === null) throw new TypeError(`${fn}: inputs.${slot} is required`);
    }
    const tensors = ATTENTION_INPUTS.map((slot) => readTensor(fn, slot, inputs[slot],
      slot === 'attn_mask' ? ['float32', 'bool'] : slot === 'nonpad_kv_seqlen' ? ['int64'] : ['float32']));
    readAttrs(fn, attrs, ATTENTION_ATTRS);
    const a = attrs ?? {};
    const { outputs, opset = 24 } = checkOptions(fn, options, ['outputs', 'opset']);
    const normalized = {
      is_causal: intAttr(fn, a, 'is_causal', 0, 0, 1),
      q_num_heads: intAttr(fn, a, 'q_num_heads', 0, 1, 2 ** 30),
      kv_num_heads: intAttr(fn, a, 'kv_num_heads', 0, 1, 2 ** 30),
      qk_matmul_output_mode: intAttr(fn, a, 'qk_matmul_output_mode', 0, 0, 3),
      softmax_precision: intAttr(fn, a, 'softmax_precision', 0, 0, 2 ** 30),
      scale: a.scale === undefined ? NaN : checkFinite(fn, 'attrs.scale', a.scale),
      softcap: a.softcap === undefined ? 0 : checkFinite(fn, 'attrs.softcap', a.softcap),
      opset: checkInt(fn, 'opset', opset, 23, 24),
    };
    const hasPast = tensors[4] !== null;
    let wanted = hasPast ? ['Y', 'present_key', 'present_value'] : ['Y'];
    if (outputs !== undefined) {
      if (!Array.isArray(outputs)) throw new TypeError(`${fn}: outputs must be an array of output slot names (got ${describe(outputs)})`);
      wanted = outputs.filter((o) => o !== '');
      for (const o of wanted) {
        if (!ATTENTION_OUTPUTS.includes(o)) throw new RangeError(`${fn}: unknown output slot ${JSON.stringify(o)} (slots: ${ATTENTION_OUTPUTS.join(', ')})`);
      }
      if (!wanted.includes('Y')) throw new RangeError(`${fn}: outputs must include Y`);
    }
    return scoped(fn, (alloc) => {
      const desc = tensorsToHeap(alloc, tensors);
      const [message, shapes] = module.onnxAttentionShapes(desc, normalized);
      status(fn, message);
      const ptrs = {};
      const sizes = {};
      for (const o of wanted) {
        sizes[o] = shapes[o].reduce((x, y) => x * y, 1);
        checkElements(fn, o, sizes[o]);
        ptrs[o] = alloc(Math.max(1, sizes[o]) * 4);
      }
      status(fn, module.onnxAttention(desc, normalized, ptrs.Y, ptrs.present_key ?? 0, ptrs.present_value ?? 0,
        ptrs.qk_matmul_output ?? 0));
      const result = {};
      for (const o of wanted) result[o] = { data: copyOut(ptrs[o], sizes[o]), dims: shapes[o] };
      return result;
    });
  }

  function onnxRotaryEmbedding(inputs, attrs) {
    const fn = 'onnx.rotaryEmbedding';
    if (!isPlainObject(inputs)) throw new TypeError(`${fn}: inputs must be an object keyed by slot (X, cos_cache, ...) (got ${describe(inputs)})`);
    for (const key of Object.keys(inputs)) {
      if (!ROTARY_INPUTS.includes(key)) throw new TypeError(`${fn}: unknown input slot ${JSON.stringify(key)} (slots: ${ROTARY_INPUTS.join(', ')})`);
    }
    for (const slot of ['X', 'cos_cache', 'sin_cache']) {
      if (inputs[slot] === undefined || inputs[slot] === null) throw new TypeError(`${fn}: inputs.${slot} is required`);
    }
    const tensors = ROTARY_INPUTS.map((slot) => readTensor(fn, slot, inputs[slot], slot === 'position_ids' ? ['int64'] : ['float32']));
    readAttrs(fn, attrs, ROTARY_ATTRS);
    const a = attrs ?? {};
    const interleaved = intAttr(fn, a, 'interleaved', 0, 0, 1);
    const numHeads = intAttr(fn, a, 'num_heads', 0, 1, 2 ** 30);
    const rotaryDim = intAttr(fn, a, 'rotary_embedding_dim', 0, 0, 2 ** 30);
    const x = tensors[0];
    return scoped(fn, (alloc) => {
      const desc = tensorsToHeap(alloc, tensors);
      const y = alloc(Math.max(1, x.n) * 4);
      status(fn, module.onnxRotaryEmbedding(desc, interleaved, rotaryDim, numHeads, y));
      return { Y: { data: copyOut(y, x.n), dims: x.dims.slice() } };
    });
  }

  function alibiSlopes(nHeads, maxBias) {
    return scoped('alibiSlopes', (alloc) => {
      const out = alloc(nHeads * 4);
      status('alibiSlopes', module.alibiSlopes(out, nHeads, maxBias));
      return copyOut(out, nHeads);
    });
  }

  // options.queryOffset of alibiBias/t5Bias: the key position of query 0 (NaN: kLen - qLen).
  function resolveQueryOffset(fn, queryOffset, qLen, kLen) {
    if (queryOffset === undefined) {
      if (qLen > kLen) {
        throw new RangeError(`${fn}: qLen = ${qLen} must be <= kLen = ${kLen} when the queries sit at the last key positions (the default); pass queryOffset`);
      }
      return NaN;
    }
    return checkInt(fn, 'queryOffset', queryOffset, 0, 2 ** 52);
  }

  const ATTENTION_OPTIONS = ['nHeads', 'nKvHeads', 'headDim', 'causal', 'alibi', 't5', 'rope', 'mask', 'scale', 'softcap',
    'returnWeights', 'window', 'sinkTokens', 'sinks'];

  function attention(q, k, v, options) {
    const fn = 'attention';
    checkFloat32Array(fn, 'q', q);
    checkFloat32Array(fn, 'k', k);
    checkFloat32Array(fn, 'v', v);
    if (options === undefined) throw new TypeError(`${fn}: options { nHeads, headDim } are required`);
    checkOptions(fn, options, ATTENTION_OPTIONS);
    const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1, 2 ** 20);
    const nKvHeads = checkInt(fn, 'nKvHeads', options.nKvHeads ?? nHeads, 1, 2 ** 20);
    const headDim = checkInt(fn, 'headDim', options.headDim, 1, 2 ** 20);
    if (nHeads % nKvHeads !== 0) throw new RangeError(`${fn}: nHeads = ${nHeads} must be a multiple of nKvHeads = ${nKvHeads}`);
    if (q.length === 0 || q.length % (nHeads * headDim) !== 0) {
      throw new RangeError(`${fn}: q.length must be a non-zero multiple of nHeads * headDim = ${nHeads * headDim} (got ${q.length})`);
    }
    if (k.length === 0 || k.length % (nKvHeads * headDim) !== 0) {
      throw new RangeError(`${fn}: k.length must be a non-zero multiple of nKvHeads * headDim = ${nKvHeads * headDim} (got ${k.length})`);
    }
    if (v.length !== k.length) throw new RangeError(`${fn}: v.length must equal k.length = ${k.length} (got ${v.length})`);
    const qLen = q.length / (nHeads * headDim), kvLen = k.length / (nKvHeads * headDim);
    const causal = options.causal === undefined ? false : checkBool(fn, 'causal', options.causal);
    const scale = options.scale === undefined ? NaN : checkFinite(fn, 'scale', options.scale);
    const softcap = options.softcap === undefined ? 0 : checkFinite(fn, 'softcap', options.softcap);
    const returnWeights = options.returnWeights === undefined ? false : checkBool(fn, 'returnWeights', options.returnWeights);
    checkElements(fn, 'nHeads * qLen * kvLen', returnWeights ? nHeads * qLen * kvLen : 0);

    let slopes = null;
    if (options.alibi !== undefined && options.alibi !== false) {
      if (options.alibi instanceof Float32Array) {
        if (options.alibi.length !== nHeads) throw new RangeError(`${fn}: alibi slopes must have nHeads = ${nHeads} entries (got ${options.alibi.length})`);
        slopes = options.alibi;
      } else {
        const { maxBias = 8 } = options.alibi === true ? {} : checkOptions(fn, options.alibi, ['maxBias'], 'alibi');
        checkFinite(fn, 'alibi.maxBias', maxBias, { positive: true });
        slopes = alibiSlopes(nHeads, maxBias);
      }
    }
    let t5 = null;
    if (options.t5 !== undefined) {
      const { table, bidirectional = !causal, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, options.t5,
        ['table', 'bidirectional', 'numBuckets', 'maxDistance'], 't5');
      checkFloat32Array(fn, 't5.table', table);
      checkBool(fn, 't5.bidirectional', bidirectional);
      checkInt(fn, 't5.numBuckets', numBuckets, 1, 2 ** 30);
      checkInt(fn, 't5.maxDistance', maxDistance, 1, 2 ** 30);
      if (table.length !== numBuckets * nHeads) {
        throw new RangeError(`${fn}: t5.table.length must equal numBuckets * nHeads = ${numBuckets * nHeads} (got ${table.length})`);
      }
      t5 = { table, bidirectional, numBuckets, maxDistance };
    }
    let rope = null;
    if (options.rope !== undefined) {
      const r = isPlainObject(options.rope) && 'headDim' in options.rope ? { params: options.rope } : options.rope;
      checkOptions(fn, r, ['params', 'invFreq', 'layout', 'precision', 'attentionFactor'], 'rope');
      const f = resolveFrequencies(`${fn} (rope)`, r, kvLen - 1);
      if (f.rotaryDim > headDim) throw new RangeError(`${fn}: rope rotaryDim = ${f.rotaryDim} must be <= headDim = ${headDim}`);
      rope = { ...f, layout: checkChoice(fn, 'rope.layout', r.layout ?? 'halfSplit', ROPE_LAYOUTS),
        precision: checkChoice(fn, 'rope.precision', r.precision ?? 'fast', { fast: 0, accurate: 1 }) };
    }
    const window = options.window === undefined ? 0 : checkInt(fn, 'window', options.window, 1);
    const sinkTokens = options.sinkTokens === undefined ? 0 : checkInt(fn, 'sinkTokens', options.sinkTokens, 0);
    if (sinkTokens > 0 && !window) throw new TypeError(`${fn}: sinkTokens needs a window (StreamingLLM keeps the first keys beside a rolling window)`);
    let sinks = null;
    if (options.sinks !== undefined) {
      checkFloat32Array(fn, 'sinks', options.sinks);
      if (options.sinks.length !== nHeads) throw new RangeError(`${fn}: sinks must have nHeads = ${nHeads} entries (one logit per head; got ${options.sinks.length})`);
      for (const x of options.sinks) if (!Number.isFinite(x)) throw new RangeError(`${fn}: sinks must be finite (got ${x})`);
      sinks = options.sinks;
    }
    let mask = null, maskPerHead = false;
    if (options.mask !== undefined) {
      checkFloat32Array(fn, 'mask', options.mask);
      maskPerHead = options.mask.length === nHeads * qLen * kvLen && nHeads > 1;
      if (!maskPerHead && options.mask.length !== qLen * kvLen) {
        throw new RangeError(`${fn}: mask.length must be qLen * kvLen = ${qLen * kvLen} or nHeads * qLen * kvLen = ${nHeads * qLen * kvLen} (got ${options.mask.length})`);
      }
      mask = options.mask;
    }
    return scoped(fn, (alloc) => {
      const put32 = (arr) => { const p = alloc(Math.max(1, arr.length) * 4); return { p, arr }; };
      const bufs = [put32(q), put32(k), put32(v)];
      const sl = slopes ? put32(slopes) : null;
      const tb = t5 ? put32(t5.table) : null;
      const mk = mask ? put32(mask) : null;
      const sk = sinks ? put32(sinks) : null;
      const inv = rope ? alloc(rope.invFreq.length * 8) : 0;
      const out = alloc(q.length * 4);
      const w = returnWeights ? alloc(Math.max(1, nHeads * qLen * kvLen) * 4) : 0;
      for (const b of [...bufs, sl, tb, mk, sk]) if (b) f32(b.p, b.arr.length).set(b.arr);
      if (rope) f64(inv, rope.invFreq.length).set(rope.invFreq);
      status(fn, module.attention(bufs[0].p, bufs[1].p, bufs[2].p, qLen, kvLen, {
        nHeads, nKvHeads, headDim, causal, scale, softcap,
        alibiSlopes: sl ? sl.p : 0,
        t5Table: tb ? tb.p : 0, t5Bidirectional: t5 ? t5.bidirectional : true,
        t5NumBuckets: t5 ? t5.numBuckets : 32, t5MaxDistance: t5 ? t5.maxDistance : 128,
        ropeInvFreq: inv, ropeRotDim: rope ? rope.rotaryDim : 0, ropeLayout: rope ? rope.layout : 0,
        ropePrecision: rope ? rope.precision : 0, ropeAttentionFactor: rope ? rope.attentionFactor : 1,
        bias: mk ? mk.p : 0, biasPerHead: maskPerHead, window, sinkTokens, sinks: sk ? sk.p : 0,
      }, out, w));
      const output = copyOut(out, q.length);
      return returnWeights ? { output, weights: copyOut(w, nHeads * qLen * kvLen) } : output;
    });
  }

  // ---- the API -----------------------------------------------------------------------------------

  return {
    /** The SIMD instruction set the kernels were compiled for: "wasm" in this build. */
    simdArch: module.simdArch(),
    MAX_ELEMENTS,
    /** Real models' position settings (see data/presets.json). */
    presets,
    /** The extrapolation lab (cpp/bindings/lab.js). */
    lab: wrapLab(module),

    /** The WASM heap: its size (it grows, up to 2 GiB, and never shrinks) and the bytes in use. */
    heapStats() {
      return { heapBytes: module.HEAPU8.length, inUseBytes: module.heapInUse() };
    },

    sinusoidal(seqLen, dModel, options) {
      const fn = 'sinusoidal';
      checkInt(fn, 'seqLen', seqLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      const { base = 10000, layout = 'interleaved', positions } = checkOptions(fn, options, ['base', 'layout', 'positions']);
      checkFinite(fn, 'base', base, { positive: true });
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
      const pos = positions === undefined ? null : toFloat64(fn, 'positions', positions);
      if (pos && pos.length !== seqLen) throw new RangeError(`${fn}: positions.length must equal seqLen = ${seqLen} (got ${pos.length})`);
      checkElements(fn, 'seqLen * dModel', seqLen * dModel);
      return scoped(fn, (alloc) => {
        const out = alloc(seqLen * dModel * 4);
        const p = pos ? alloc(seqLen * 8) : 0;
        if (p) f64(p, seqLen).set(pos);
        status(fn, module.sinusoidal(out, seqLen, dModel, base, layoutCode, p));
        return copyOut(out, seqLen * dModel);
      });
    },

    sinusoidalShift(k, dModel, options) {
      const fn = 'sinusoidalShift';
      checkFinite(fn, 'k', k);
      checkInt(fn, 'dModel', dModel, 2);
      if (dModel % 2 !== 0) throw new RangeError(`${fn}: dModel must be even (got ${dModel})`);
      const { base = 10000, layout = 'interleaved' } = checkOptions(fn, options, ['base', 'layout']);
      checkFinite(fn, 'base', base, { positive: true });
      const layoutCode = checkChoice(fn, 'layout', layout, SINUSOIDAL_LAYOUTS);
      checkElements(fn, 'dModel * dModel', dModel * dModel);
      return scoped(fn, (alloc) => {
        const out = alloc(dModel * dModel * 4);
        status(fn, module.sinusoidalShift(out, k, dModel, base, layoutCode));
        return copyOut(out, dModel * dModel);
      });
    },

    learnedTable(maxLen, dModel, options) {
      const fn = 'learnedTable';
      checkInt(fn, 'maxLen', maxLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      const { seed = 0, std = 0.02, weights, offset = 0 } = checkOptions(fn, options, ['seed', 'std', 'weights', 'offset']);
      checkInt(fn, 'offset', offset, 0, 2 ** 31 - 1);
      checkElements(fn, 'maxLen * dModel', maxLen * dModel);
      let table;
      if (weights !== undefined) {
        checkFloat32Array(fn, 'weights', weights);
        if (weights.length !== maxLen * dModel) {
          throw new RangeError(`${fn}: weights.length must equal maxLen * dModel = ${maxLen * dModel} (got ${weights.length})`);
        }
        table = weights.slice();
      } else {
        checkInt(fn, 'seed', seed, 0);
        checkFinite(fn, 'std', std);
        table = scoped(fn, (alloc) => {
          const out = alloc(maxLen * dModel * 4);
          status(fn, module.learnedInit(out, maxLen, dModel, seed, std));
          return copyOut(out, maxLen * dModel);
        });
      }
      const lookup = (positions) => {
        const lfn = 'learnedTable.lookup';
        const pos = toFloat64(lfn, 'positions', positions, { integer: true });
        if (pos.length === 0) throw new RangeError(`${lfn}: positions must not be empty`);
        checkElements(lfn, 'positions.length * dModel', pos.length * dModel);
        pos.forEach((p, i) => {
          if (p < 0 || p + offset >= maxLen) {
            throw new RangeError(`${lfn}: positions[${i}] = ${p} (row ${p + offset} with offset ${offset}) is outside the table of maxLen = ${maxLen}: a model trained on ${maxLen} positions has no embedding for it`);
          }
        });
        return scoped(lfn, (alloc) => {
          const t = alloc(table.length * 4);
          const p = alloc(pos.length * 4);
          const out = alloc(pos.length * dModel * 4);
          f32(t, table.length).set(table);
          i32(p, pos.length).set(pos);
          status(lfn, module.learnedLookup(out, t, maxLen, dModel, p, pos.length, offset));
          return copyOut(out, pos.length * dModel);
        });
      };
      return { maxLen, dModel, offset, weights: table, lookup };
    },

    embed(tokenIds, options) {
      const fn = 'embed';
      const tokens = toFloat64(fn, 'tokenIds', tokenIds, { integer: true });
      if (tokens.length === 0) throw new RangeError(`${fn}: tokenIds must not be empty`);
      if (options === undefined) throw new TypeError(`${fn}: options { tokenEmbeddings, dModel, positionTable } are required`);
      const { tokenEmbeddings, dModel, positionTable, positions, scale = Math.sqrt(dModel) } = checkOptions(fn, options,
        ['tokenEmbeddings', 'dModel', 'positionTable', 'positions', 'scale']);
      checkInt(fn, 'dModel', dModel, 1);
      checkFloat32Array(fn, 'tokenEmbeddings', tokenEmbeddings);
      checkFloat32Array(fn, 'positionTable', positionTable);
      checkFinite(fn, 'scale', scale);
      for (const [name, t] of [['tokenEmbeddings', tokenEmbeddings], ['positionTable', positionTable]]) {
        if (t.length === 0 || t.length % dModel !== 0) {
          throw new RangeError(`${fn}: ${name}.length must be a non-zero multiple of dModel = ${dModel} (got ${t.length})`);
        }
      }
      const vocab = tokenEmbeddings.length / dModel;
      const rows = positionTable.length / dModel;
      const pos = positions === undefined ? tokens.map((_, i) => i) : toFloat64(fn, 'positions', positions, { integer: true });
      if (pos.length !== tokens.length) {
        throw new RangeError(`${fn}: positions.length must equal tokenIds.length = ${tokens.length} (got ${pos.length})`);
      }
      tokens.forEach((t, i) => {
        if (t < 0 || t >= vocab) throw new RangeError(`${fn}: tokenIds[${i}] = ${t} is outside the vocabulary [0, ${vocab})`);
      });
      pos.forEach((p, i) => {
        if (p < 0 || p >= rows) throw new RangeError(`${fn}: position ${p} (token ${i}) is outside positionTable, which has ${rows} rows`);
      });
      const n = tokens.length;
      checkElements(fn, 'tokenIds.length * dModel', n * dModel);
      // Only the rows used cross into the heap: row i of each gathered table belongs to token i.
      return scoped(fn, (alloc) => {
        const e = alloc(n * dModel * 4);
        const q = alloc(n * dModel * 4);
        const idx = alloc(n * 4);
        const out = alloc(n * dModel * 4);
        const eView = f32(e, n * dModel), qView = f32(q, n * dModel);
        for (let i = 0; i < n; i++) {
          eView.set(tokenEmbeddings.subarray(tokens[i] * dModel, (tokens[i] + 1) * dModel), i * dModel);
          qView.set(positionTable.subarray(pos[i] * dModel, (pos[i] + 1) * dModel), i * dModel);
        }
        i32(idx, n).set(tokens.map((_, i) => i));
        status(fn, module.embed(out, idx, n, e, n, dModel, q, n, idx, scale));
        return copyOut(out, n * dModel);
      });
    },

    ropeFrequencies(params, options) {
      const fn = 'ropeFrequencies';
      const { seqLen = 0, dtype = 'float32' } = checkOptions(fn, options, ['seqLen', 'dtype']);
      checkInt(fn, 'seqLen', seqLen, 0);
      checkChoice(fn, 'dtype', dtype, { float32: 0, float64: 1 });
      const f = frequencies64(fn, params, seqLen);
      const invFreq = dtype === 'float64' ? f.invFreq : Float32Array.from(f.invFreq);
      return { invFreq, attentionFactor: f.attentionFactor, rotaryDim: f.rotaryDim };
    },

    readModel: makeReadModel(module, { publicRopeParams, openPath: hooks.openPath }),

    ggmlRopeParams(params, options) {
      const fn = 'ggmlRopeParams';
      const { seqLen = 0 } = checkOptions(fn, options, ['seqLen']);
      checkInt(fn, 'seqLen', seqLen, 0);
      const [message, g] = module.ggmlRopeParams(flatRopeParams(fn, params), seqLen);
      status(fn, message);
      return { ...g, freqFactors: g.freqFactors.length ? Float32Array.from(g.freqFactors) : null };
    },

    ropeParamsFromConfig(config, options) {
      const fn = 'ropeParamsFromConfig';
      const { layerType = '', dialect = 'hf' } = checkOptions(fn, options, ['layerType', 'dialect']);
      if (typeof layerType !== 'string') throw new TypeError(`${fn}: layerType must be a string (got ${describe(layerType)})`);
      const dialectCode = checkChoice(fn, 'dialect', dialect, DIALECTS);
      let text;
      if (typeof config === 'string') text = config;
      else if (isPlainObject(config)) text = JSON.stringify(config);
      else throw new TypeError(`${fn}: config must be a parsed config object or its JSON text (got ${describe(config)})`);
      const [message, detail, flat] = module.ropeParamsFromConfig(text, dialectCode, layerType);
      if (message) throw new RangeError(`${fn}: ${detail || message}`);
      return publicRopeParams(flat);
    },

    applyRope(x, options) {
      const fn = 'applyRope';
      checkFloat32Array(fn, 'x', x);
      if (options?.params?.mrope !== undefined && options.positions?.length === 3 * options.seqLen) return applyMrope(fn, x, options);
      const c = ropeCall(fn, x.length, options);
      checkElements(fn, 'x.length', x.length);
      // Chunks of ~256 KiB go through the heap: copied in, rotated, copied out while still in cache.
      const row = c.nHeads * c.headDim;
      const chunk = Math.max(1, Math.floor(65536 / row));
      const out = new Float32Array(x.length);
      scoped(fn, (alloc) => {
        const xPtr = alloc(Math.min(chunk, c.seqLen) * row * 4);
        const invPtr = alloc(c.invFreq.length * 8);
        const posPtr = c.positions ? alloc(c.positions.length * 8) : 0;
        f64(invPtr, c.invFreq.length).set(c.invFreq);
        if (posPtr) f64(posPtr, c.positions.length).set(c.positions);
        for (let t0 = 0; t0 < c.seqLen; t0 += chunk) {
          const n = Math.min(chunk, c.seqLen - t0);
          f32(xPtr, n * row).set(x.subarray(t0 * row, (t0 + n) * row));
          rotate(fn, xPtr, n, invPtr, posPtr ? posPtr + t0 * 8 : 0, c.offset + t0, c);
          out.set(f32(xPtr, n * row), t0 * row);
        }
      });
      return out;
    },

    applyRopeInPlace(buffer, options) {
      const fn = 'applyRopeInPlace';
      if (!(buffer instanceof HeapFloat32)) {
        throw new TypeError(`${fn}: buffer must come from allocFloat32() (got ${describe(buffer)})`);
      }
      if (!buffer.ptr) throw new TypeError(`${fn}: buffer was deleted`);
      const c = ropeCall(fn, buffer.length, options);
      scoped(fn, (alloc) => runRope(fn, alloc, buffer.ptr, c));
    },

    allocFloat32(length) {
      return new HeapFloat32(length);
    },

    applyRope2d(x, options) {
      const fn = 'applyRope2d';
      checkFloat32Array(fn, 'x', x);
      if (options === undefined) throw new TypeError(`${fn}: options { nHeads, headDim, grid | positions } are required`);
      checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'theta', 'grid', 'positions', 'layout', 'precision']);
      const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
      const headDim = checkInt(fn, 'headDim', options.headDim, 4);
      if (headDim % 4 !== 0) throw new RangeError(`${fn}: headDim must be a multiple of 4 (half the pairs by row, half by column; got ${headDim})`);
      const theta = options.theta === undefined ? 10000 : checkFinite(fn, 'theta', options.theta, { positive: true });
      if ((options.grid === undefined) === (options.positions === undefined)) {
        throw new TypeError(`${fn}: pass exactly one of options.grid ([rows, cols] of patches) and options.positions ([2][seqLen]: row ids, then column ids)`);
      }
      let pos;
      if (options.grid !== undefined) {
        if (!Array.isArray(options.grid) || options.grid.length !== 2) throw new RangeError(`${fn}: grid must be [rows, cols] (got ${describe(options.grid)})`);
        const [h, w] = options.grid.map((n, i) => checkInt(fn, `grid[${i}]`, n, 1));
        pos = new Float64Array(2 * h * w);
        for (let i = 0; i < h * w; i++) { pos[i] = Math.floor(i / w); pos[h * w + i] = i % w; }
      } else {
        pos = toFloat64(fn, 'positions', options.positions);
      }
      const seqLen = pos.length / 2;
      if (options.seqLen !== undefined && checkInt(fn, 'seqLen', options.seqLen, 1) !== seqLen) {
        throw new RangeError(`${fn}: seqLen = ${options.seqLen} differs from the ${seqLen} patches the grid or positions give`);
      }
      if (!Number.isInteger(seqLen) || seqLen === 0) throw new RangeError(`${fn}: positions must hold 2 rows of equal length (got ${pos.length} values)`);
      if (seqLen * nHeads * headDim !== x.length) {
        throw new RangeError(`${fn}: x.length must equal patches * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${x.length})`);
      }
      const layout = checkChoice(fn, 'layout', options.layout ?? 'halfSplit', ROPE_LAYOUTS);
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', { fast: 0, accurate: 1 });
      return scoped(fn, (alloc) => {
        const xp = alloc(x.length * 4), inv = alloc(headDim / 2 * 8), pp = alloc(pos.length * 8);
        f32(xp, x.length).set(x);
        f64(pp, pos.length).set(pos);
        status(fn, module.applyRopeRows(xp, seqLen, nHeads, headDim, inv, headDim, pp, 2, [], theta, layout, precision, 1));
        return copyOut(xp, x.length);
      });
    },

    mropePositions(segments) {
      const fn = 'mropePositions';
      if (!Array.isArray(segments) || segments.length === 0) {
        throw new TypeError(`${fn}: segments must be a non-empty array like [{ text: 5 }, { image: [t, h, w] }, { text: 3 }] (got ${describe(segments)})`);
      }
      const rows = segments.map((g, i) => {
        if (!isPlainObject(g) || (g.text === undefined) === (g.image === undefined)) {
          throw new TypeError(`${fn}: segments[${i}] must be { text: n } or { image: [t, h, w] } (got ${describe(g)})`);
        }
        if (g.text !== undefined) return [checkInt(fn, `segments[${i}].text`, g.text, 1), 0, 0, 0];
        if (!Array.isArray(g.image) || g.image.length !== 3) throw new RangeError(`${fn}: segments[${i}].image must be [t, h, w] (got ${describe(g.image)})`);
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
      if (heap && !k.ptr) throw new TypeError(`${fn}: k was deleted`);
      if (!heap) checkFloat32Array(fn, 'k', k);
      if (options === undefined) throw new TypeError(`${fn}: options { seqLen, nHeads, headDim, delta, invFreq | params } are required`);
      checkOptions(fn, options, ['seqLen', 'nHeads', 'headDim', 'delta', 'invFreq', 'params', 'layout', 'precision', 'rotaryDim']);
      const seqLen = checkInt(fn, 'seqLen', options.seqLen, 1);
      const nHeads = checkInt(fn, 'nHeads', options.nHeads, 1);
      const headDim = checkInt(fn, 'headDim', options.headDim ?? options.params?.headDim, 1);
      if (seqLen * nHeads * headDim !== k.length) {
        throw new RangeError(`${fn}: k.length must equal seqLen * nHeads * headDim = ${seqLen * nHeads * headDim} (got ${k.length})`);
      }
      let deltas = null, deltaAll = 0;
      if (typeof options.delta === 'number') deltaAll = checkFinite(fn, 'delta', options.delta);
      else if (options.delta === undefined) throw new TypeError(`${fn}: options.delta (a number, or one per token) is required`);
      else {
        deltas = toFloat64(fn, 'delta', options.delta);
        if (deltas.length !== seqLen) throw new RangeError(`${fn}: delta.length must equal seqLen = ${seqLen} (got ${deltas.length})`);
      }
      const layout = checkChoice(fn, 'layout', options.layout ?? 'halfSplit', ROPE_LAYOUTS);
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', { fast: 0, accurate: 1 });
      const f = resolveFrequencies(fn, options, seqLen - 1);
      if (f.rotaryDim > headDim) throw new RangeError(`${fn}: rotaryDim = ${f.rotaryDim} (${f.from}) must be <= headDim = ${headDim}`);
      scoped(fn, (alloc) => {
        const kPtr = heap ? k.ptr : alloc(k.length * 4);
        const inv = alloc(f.invFreq.length * 8);
        const d = deltas ? alloc(seqLen * 8) : 0;
        if (!heap) f32(kPtr, k.length).set(k);
        f64(inv, f.invFreq.length).set(f.invFreq);
        if (d) f64(d, seqLen).set(deltas);
        status(fn, module.shiftKeys(kPtr, seqLen, nHeads, headDim, inv, f.rotaryDim, d, deltaAll, layout, precision));
        if (!heap) k.set(f32(kPtr, k.length));
      });
    },

    ropeCache(options) {
      const fn = 'ropeCache';
      if (options === undefined) throw new TypeError(`${fn}: options { seqLen | positions, invFreq | params } are required`);
      checkOptions(fn, options, ['seqLen', 'positions', 'offset', 'invFreq', 'params', 'precision', 'attentionFactor', 'rotaryDim']);
      // seqLen defaults to the number of positions; resolvePositions checks and converts them once.
      const seqLen = options.positions !== undefined && options.seqLen === undefined
        ? options.positions?.length : checkInt(fn, 'seqLen', options.seqLen, 1);
      if (seqLen === 0) throw new RangeError(`${fn}: positions must not be empty`);
      const precision = checkChoice(fn, 'precision', options.precision ?? 'fast', PRECISIONS);
      if (precision === PRECISIONS.ggml && (options.params === undefined || options.attentionFactor !== undefined)) {
        throw new TypeError(`${fn}: precision 'ggml' needs options.params and takes its gain from them (no invFreq, no attentionFactor)`);
      }
      const pos = resolvePositions(fn, options, seqLen);
      const f = resolveFrequencies(fn, options, pos.maxPosition);
      const half = f.rotaryDim >> 1;
      checkElements(fn, 'seqLen * rotaryDim / 2', seqLen * half);
      return scoped(fn, (alloc) => {
        const cos = alloc(seqLen * half * 4);
        const sin = alloc(seqLen * half * 4);
        const inv = alloc(half * 8);
        const p = pos.positions ? alloc(seqLen * 8) : 0;
        f64(inv, half).set(f.invFreq);
        if (p) f64(p, seqLen).set(pos.positions);
        if (precision === PRECISIONS.ggml) {
          status(fn, module.ropeCacheGgml(cos, sin, seqLen, flatRopeParams(fn, options.params), pos.maxPosition + 1, p, pos.offset));
        } else {
          status(fn, module.ropeCache(cos, sin, seqLen, inv, f.rotaryDim, p, pos.offset, precision, f.attentionFactor));
        }
        return { cos: copyOut(cos, seqLen * half), sin: copyOut(sin, seqLen * half), rotaryDim: f.rotaryDim };
      });
    },

    alibiSlopes(nHeads, options) {
      const fn = 'alibiSlopes';
      checkInt(fn, 'nHeads', nHeads, 1, 1 << 20);
      const { maxBias = 8 } = checkOptions(fn, options, ['maxBias']);
      checkFinite(fn, 'maxBias', maxBias, { positive: true });
      return alibiSlopes(nHeads, maxBias);
    },

    alibiBias(nHeads, qLen, kLen, options) {
      const fn = 'alibiBias';
      checkInt(fn, 'nHeads', nHeads, 1);
      checkInt(fn, 'qLen', qLen, 1);
      checkInt(fn, 'kLen', kLen, 1);
      const { causal = true, maxBias = 8, queryOffset } = checkOptions(fn, options, ['causal', 'maxBias', 'queryOffset']);
      checkBool(fn, 'causal', causal);
      checkFinite(fn, 'maxBias', maxBias, { positive: true });
      const qOffset = resolveQueryOffset(fn, queryOffset, qLen, kLen);
      const n = nHeads * qLen * kLen;
      checkElements(fn, 'nHeads * qLen * kLen', n);
      return scoped(fn, (alloc) => {
        const out = alloc(n * 4);
        status(fn, module.alibiBias(out, nHeads, qLen, kLen, causal, maxBias, qOffset));
        return copyOut(out, n);
      });
    },

    t5Bucket(relativePosition, options) {
      const fn = 't5Bucket';
      const { bidirectional = true, numBuckets = 32, maxDistance = 128 } = checkOptions(fn, options,
        ['bidirectional', 'numBuckets', 'maxDistance']);
      checkBool(fn, 'bidirectional', bidirectional);
      checkInt(fn, 'numBuckets', numBuckets, 1, 2 ** 30);
      checkInt(fn, 'maxDistance', maxDistance, 1, 2 ** 30);
      const single = typeof relativePosition === 'number';
      const rel = single ? toFloat64(fn, 'relativePosition', [relativePosition], { integer: true })
        : toFloat64(fn, 'relativePosition', relativePosition, { integer: true });
      checkElements(fn, 'relativePosition.length', rel.length);
      return scoped(fn, (alloc) => {
        const out = alloc(Math.max(1, rel.length) * 4);
        const r = alloc(Math.max(1, rel.length) * 8);
        f64(r, rel.length).set(rel);
        status(fn, module.t5Buckets(out, r, rel.length, bidirectional, numBuckets, maxDistance));
        const buckets = i32(out, rel.length).slice();
        return single ? buckets[0] : buckets;
      });
    },

    /** ONNX operators with their exact semantics: inputs keyed by slot, attrs by attribute name. */
    onnx: { attention: onnxAttention, rotaryEmbedding: onnxRotaryEmbedding },

    attention,

    t5Bias(table, nHeads, qLen, kLen, options) {
      const fn = 't5Bias';
      checkFloat32Array(fn, 'table', table);
      checkInt(fn, 'nHeads', nHeads, 1);
      checkInt(fn, 'qLen', qLen, 1);
      checkInt(fn, 'kLen', kLen, 1);
      const { bidirectional = true, numBuckets = 32, maxDistance = 128, queryOffset } = checkOptions(fn, options,
        ['bidirectional', 'numBuckets', 'maxDistance', 'queryOffset']);
      checkBool(fn, 'bidirectional', bidirectional);
      checkInt(fn, 'numBuckets', numBuckets, 1, 2 ** 30);
      checkInt(fn, 'maxDistance', maxDistance, 1, 2 ** 30);
      const qOffset = resolveQueryOffset(fn, queryOffset, qLen, kLen);
      if (table.length !== numBuckets * nHeads) {
        throw new RangeError(`${fn}: table.length must equal numBuckets * nHeads = ${numBuckets * nHeads} (got ${table.length})`);
      }
      const n = nHeads * qLen * kLen;
      checkElements(fn, 'nHeads * qLen * kLen', n);
      return scoped(fn, (alloc) => {
        const out = alloc(n * 4);
        const t = alloc(table.length * 4);
        f32(t, table.length).set(table);
        status(fn, module.t5Bias(out, t, nHeads, qLen, kLen, bidirectional, numBuckets, maxDistance, qOffset));
        return copyOut(out, n);
      });
    },
  };
}
