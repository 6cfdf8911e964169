// RoPE parameters: the public params object ↔ the flat object embind_rope.cpp reads, the frequencies
// (HF's semantics, cpp/src/rope_frequencies.cpp), config import and ggml's parameters.
import {
  PosencRangeError, PosencTypeError, camel, checkBool, checkChoice, checkFinite, checkInt, checkNumber,
  checkOptions, describe, isPlainObject, numberOrBigint, toFloat64
} from './checks.js';

// M-RoPE: what the pairs no section claims turn by (HF: the temporal id; llama.cpp: none).
const MROPE_REST = { temporal: false, unrotated: true };
const DIALECTS = { hf: 0, gguf: 1 };
const PARAMS_KEYS = ['headDim', 'rotaryDim', 'rotaryOffset', 'partialRotaryFactor', 'theta', 'layout', 'scaling', 'freqFactors', 'mrope'];
const SCALING_KEYS = ['type', 'factor', 'originalMaxPositionEmbeddings', 'maxPositionEmbeddings', 'betaFast',
  'betaSlow', 'mscale', 'mscaleAllDim', 'attentionFactor', 'truncate', 'lowFreqFactor', 'highFreqFactor',
  'shortFactor', 'longFactor', 'contextLength'];

/** The keys of a RoPE params object, its scaling and its mrope: checked before any of their values. */
export function checkRopeParamsKeys(fn, params, name = 'params') {
  if (!isPlainObject(params)) {
    throw new PosencTypeError(`${fn}: ${name} must be an object like { headDim: 128, theta: 10000 } (got ${describe(params)})`);
  }
  checkOptions(fn, params, PARAMS_KEYS, name);
  checkOptions(fn, params.scaling, SCALING_KEYS, `${name}.scaling`);
  checkOptions(fn, params.mrope, ['section', 'interleaved', 'rest'], `${name}.mrope`);
  return params;
}

/**
 * The names the RoPE options take, from the C++ enums (module.names(), embind.cpp), in the JS
 * API's spelling: { scalings: [...] (and 'default', HF's name for none), layouts: { halfSplit: 0,
 * ... }, precisions: { fast: 0, ... } } — values are the enums' ordinals.
 */
export function ropeNames(module) {
  const n = module.names();
  const codes = (list) => Object.fromEntries(list.map((name, k) => [camel(name), k]));
  return { scalings: [...n.ropeScalings, 'default'], layouts: codes(n.ropeLayouts), precisions: codes(n.precisions) };
}

export function ropeParamsApi(module, heap, names) {
  const { scoped, f64, status } = heap;
  const { scalings: ROPE_SCALING_TYPES, layouts: ROPE_LAYOUTS } = names;
  const LAYOUT_NAMES = Object.keys(ROPE_LAYOUTS);
  // ---- RoPE parameters -------------------------------------------------------------------------

  // The public params object → the flat object embind_rope.cpp reads (NaN = unset).
  function flatRopeParams(fn, params) {
    checkRopeParamsKeys(fn, params);
    const { headDim, rotaryDim, rotaryOffset = 0, partialRotaryFactor = 1, theta = 10000, scaling = { type: 'none' }, freqFactors,
      mrope } = params;
    if (mrope !== undefined) {
      if (!Array.isArray(mrope.section) || mrope.section.length !== 3) {
        throw new PosencRangeError(`${fn}: params.mrope.section must be 3 pair counts [t, h, w] (got ${describe(mrope.section)})`);
      }
      mrope.section.forEach((n, i) => checkInt(fn, `params.mrope.section[${i}]`, n, 0));
      if (mrope.interleaved !== undefined) checkBool(fn, 'params.mrope.interleaved', mrope.interleaved);
      if (mrope.rest !== undefined) checkChoice(fn, 'params.mrope.rest', mrope.rest, MROPE_REST);
    }
    checkInt(fn, 'params.headDim', headDim, 1, 1 << 20);
    if (rotaryDim !== undefined) {
      checkInt(fn, 'params.rotaryDim', rotaryDim, 1, 1 << 20);
      if (rotaryDim % 2 !== 0) throw new PosencRangeError(`${fn}: params.rotaryDim must be even (got ${rotaryDim})`);
      if (rotaryDim > headDim) throw new PosencRangeError(`${fn}: params.rotaryDim must be <= headDim = ${headDim} (got ${rotaryDim})`);
    }
    checkInt(fn, 'params.rotaryOffset', rotaryOffset, 0, 1 << 20);
    const layout = checkChoice(fn, 'params.layout', params.layout ?? 'halfSplit', ROPE_LAYOUTS);
    checkNumber(fn, 'params.partialRotaryFactor', partialRotaryFactor);
    checkNumber(fn, 'params.theta', theta);
    const s = scaling ?? {};
    if (!ROPE_SCALING_TYPES.includes(s.type)) {
      throw new PosencRangeError(`${fn}: params.scaling.type must be one of: ${ROPE_SCALING_TYPES.join(', ')} (got ${describe(s.type)})`);
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
      mropeRestUnrotated: mrope?.rest === 'unrotated',
      rotaryOffset,
      layout,
    };
  }

  // The flat object → the public params object (only what differs from the defaults).
  function publicRopeParams(flat) {
    const params = { headDim: flat.headDim, theta: flat.theta, layout: LAYOUT_NAMES[flat.layout] };
    if (flat.rotaryDim) params.rotaryDim = flat.rotaryDim;
    if (flat.rotaryOffset) params.rotaryOffset = flat.rotaryOffset;
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
    if (flat.mropeSection.length) {
      params.mrope = { section: flat.mropeSection, interleaved: flat.mropeInterleaved };
      if (flat.mropeRestUnrotated) params.mrope.rest = 'unrotated';
    }
    return params;
  }

  // { invFreq: Float64Array, attentionFactor, rotaryDim } for the public params object.
  function frequencies64(fn, params, seqLen) {
    const flat = flatRopeParams(fn, params);
    const rotaryDim = module.ropeRotDim(flat);
    if (rotaryDim === 0) throw new PosencRangeError(`${fn}: params.partialRotaryFactor must be in (0, 1]`);
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
      throw new PosencTypeError(`${fn}: pass exactly one of options.invFreq and options.params`);
    }
    let f;
    if (params !== undefined) {
      f = { ...frequencies64(fn, params, maxPosition + 1), from: 'params' };
    } else {
      const inv = toFloat64(fn, 'invFreq', invFreq);
      if (inv.length === 0) throw new PosencRangeError(`${fn}: invFreq must not be empty`);
      f = { invFreq: inv, attentionFactor: 1, rotaryDim: inv.length * 2, from: `2 * invFreq.length = 2 * ${inv.length}` };
    }
    if (options.rotaryDim !== undefined && options.rotaryDim !== f.rotaryDim) {
      checkInt(fn, 'rotaryDim', options.rotaryDim, 1);
      throw new PosencRangeError(`${fn}: rotaryDim must equal 2 * the number of frequencies = ${f.rotaryDim} (got ${options.rotaryDim})`);
    }
    const attentionFactor = options.attentionFactor === undefined
      ? f.attentionFactor : checkFinite(fn, 'attentionFactor', options.attentionFactor);
    // Where the rotation sits: the model's (params.layout, params.rotaryOffset) unless the call says.
    const layout = checkChoice(fn, 'layout', options.layout ?? params?.layout ?? 'halfSplit', ROPE_LAYOUTS);
    const rotaryOffset = options.rotaryOffset === undefined
      ? (params?.rotaryOffset ?? 0) : checkInt(fn, 'rotaryOffset', options.rotaryOffset, 0, 1 << 20);
    return { ...f, attentionFactor, layout, rotaryOffset };
  }

  // Positions of seqLen tokens: options.positions, or offset + 0 … seqLen-1. With batch rows,
  // positions are one row for every batch row, or one per batch row ([batch][seqLen], as HF's
  // position_ids): perRow says which.
  function resolvePositions(fn, options, seqLen, batch = 1) {
    if (options.positions !== undefined) {
      if (options.offset !== undefined) throw new PosencTypeError(`${fn}: pass options.positions or options.offset, not both`);
      const positions = toFloat64(fn, 'positions', options.positions);
      const perRow = batch > 1 && positions.length === batch * seqLen;
      if (positions.length !== seqLen && !perRow) {
        const rows = batch > 1 ? ` or batch * seqLen = ${batch * seqLen}` : '';
        throw new PosencRangeError(`${fn}: positions.length must equal seqLen = ${seqLen}${rows} (got ${positions.length})`);
      }
      let max = -Infinity;
      for (const p of positions) max = Math.max(max, p);
      return { positions, perRow, offset: 0, maxPosition: max };
    }
    const offset = options.offset === undefined ? 0 : checkFinite(fn, 'offset', numberOrBigint(fn, 'offset', options.offset));
    return { positions: null, perRow: false, offset, maxPosition: offset + seqLen - 1 };
  }

  /**
   * The frequencies f placed in heads of headDim: f's rotaryOffset, unless it would run past the
   * head's end and the head is exactly rotaryDim wide — x is then the rotated slice alone (DeepSeek's
   * q_pe / k_pe, which HF and llama.cpp rope) and turns from dim 0. offsetGiven: the call set
   * rotaryOffset itself (it is then kept as given). what: the option's prefix in messages ('rope ').
   */
  function placeRotation(fn, f, headDim, offsetGiven, what = '') {
    if (f.rotaryDim > headDim) throw new PosencRangeError(`${fn}: ${what}rotaryDim = ${f.rotaryDim} (${f.from}) must be <= headDim = ${headDim}`);
    if (f.rotaryOffset + f.rotaryDim <= headDim) return f;
    if (!offsetGiven && headDim === f.rotaryDim) return { ...f, rotaryOffset: 0 };
    const hint = offsetGiven ? '' : `; pass whole heads of ${f.rotaryOffset + f.rotaryDim} dims, or the rotated slice alone, ${f.rotaryDim} wide`;
    throw new PosencRangeError(`${fn}: ${what}rotaryOffset + rotaryDim must be <= headDim = ${headDim} (got ${f.rotaryOffset} + ${f.rotaryDim})${hint}`);
  }

  return {
    flatRopeParams,
    publicRopeParams,
    resolveFrequencies,
    resolvePositions,
    placeRotation,
    api: {
      ropeFrequencies(params, options) {
        const fn = 'ropeFrequencies';
        const { seqLen = 0, dtype = 'float32' } = checkOptions(fn, options, ['seqLen', 'dtype']);
        checkRopeParamsKeys(fn, params);
        checkInt(fn, 'seqLen', seqLen, 0);
        checkChoice(fn, 'dtype', dtype, { float32: 0, float64: 1 });
        const f = frequencies64(fn, params, seqLen);
        const invFreq = dtype === 'float64' ? f.invFreq : Float32Array.from(f.invFreq);
        return { invFreq, attentionFactor: f.attentionFactor, rotaryDim: f.rotaryDim };
      },
  
      ggmlRopeParams(params, options) {
        const fn = 'ggmlRopeParams';
        const { seqLen = 0 } = checkOptions(fn, options, ['seqLen']);
        checkRopeParamsKeys(fn, params);
        checkInt(fn, 'seqLen', seqLen, 0);
        const [message, g] = module.ggmlRopeParams(flatRopeParams(fn, params), seqLen);
        status(fn, message);
        return { ...g, freqFactors: g.freqFactors.length ? Float32Array.from(g.freqFactors) : null };
      },
  
      ropeParamsFromConfig(config, options) {
        const fn = 'ropeParamsFromConfig';
        const { layerType = '', dialect = 'hf' } = checkOptions(fn, options, ['layerType', 'dialect']);
        if (typeof layerType !== 'string') throw new PosencTypeError(`${fn}: layerType must be a string (got ${describe(layerType)})`);
        const dialectCode = checkChoice(fn, 'dialect', dialect, DIALECTS);
        let text;
        if (typeof config === 'string') text = config;
        else if (isPlainObject(config)) text = JSON.stringify(config);
        else throw new PosencTypeError(`${fn}: config must be a parsed config object or its JSON text (got ${describe(config)})`);
        const [message, detail, flat] = module.ropeParamsFromConfig(text, dialectCode, layerType);
        status(fn, message, detail);
        return publicRopeParams(flat);
      },
    },
  };
}
