// RoPE parameters: the public params object, which embind_rope.cpp reads and writes (its fields, their
// defaults and what readModel shows are stated there once), the frequencies (HF's semantics,
// cpp/src/rope_frequencies.cpp), config import and ggml's parameters.
import {
  PosencRangeError, PosencTypeError, camel, checkBool, checkChoice, checkFinite, checkInt, checkNumber,
  checkOptions, describe, isPlainObject, jsMessageWith, numberOrBigint, toFloat64
} from './checks.js';

const DIALECTS = { hf: 0, gguf: 1 };
// HF's name for no scaling, accepted for 'none'.
const ALIASES = { 'scaling.type': { default: 'none' } };
// Sizes cross into C++ as wasm32's size_t.
const MAX_SIZE = 2 ** 32 - 1;

/**
 * The RoPE params fields as C++ declares them (module.ropeParamsFields(), embind_rope.cpp, where
 * each is stated once with its default and when readModel shows it): { fields, keys } — keys: the
 * allowed keys of params and of each group ('scaling', 'mrope'), for checkRopeParamsKeys.
 */
export function ropeParamsFields(module) {
  const fields = module.ropeParamsFields();
  const keys = { '': [] };
  for (const f of fields) {
    if (f.group && !keys[f.group]) {
      keys[f.group] = [];
      keys[''].push(f.group);
    }
    keys[f.group].push(f.key);
  }
  return { fields, keys };
}

/** The keys of a RoPE params object and of its groups (scaling, mrope): checked before any of their values. */
export function checkRopeParamsKeys(fn, params, { keys }, name = 'params') {
  if (!isPlainObject(params)) {
    throw new PosencTypeError(`${fn}: ${name} must be an object like { headDim: 128, theta: 10000 } (got ${describe(params)})`);
  }
  for (const [group, allowed] of Object.entries(keys)) {
    checkOptions(fn, group ? params[group] : params, allowed, group ? `${name}.${group}` : name);
  }
  return params;
}

// One field's value, checked for its JS type only (C++ states the rules: rope_frequencies).
function fieldValue(fn, name, v, f) {
  switch (f.kind) {
    case 'size': return checkInt(fn, name, v, 0, MAX_SIZE);
    case 'number': return checkNumber(fn, name, v);
    case 'bool': return checkBool(fn, name, v);
    case 'numbers': return Array.from(toFloat64(fn, name, v));
    case 'sizes':
      if (!Array.isArray(v)) throw new PosencTypeError(`${fn}: ${name} must be an array of integers (got ${describe(v)})`);
      return v.map((n, i) => checkInt(fn, `${name}[${i}]`, n, 0, MAX_SIZE));
    default: {  // 'choice', 'flag': one of its names
      const aliases = ALIASES[`${f.group}.${f.key}`] ?? {};
      return checkChoice(fn, name, v, Object.fromEntries([...f.names, ...Object.keys(aliases)].map((n) => [n, aliases[n] ?? n])));
    }
  }
}

/**
 * The names the RoPE options take, from the C++ enums (module.names(), embind.cpp), in the JS
 * API's spelling: { scalings: [...], layouts: { halfSplit: 0, ... }, precisions: { fast: 0, ... } }
 * — values are the enums' ordinals; ropeParams: the params fields (ropeParamsFields).
 */
export function ropeNames(module) {
  const n = module.names();
  const codes = (list) => Object.fromEntries(list.map((name, k) => [camel(name), k]));
  return { scalings: n.ropeScalings, layouts: codes(n.ropeLayouts), precisions: codes(n.precisions), ropeParams: ropeParamsFields(module) };
}

/**
 * The frequencies f (resolveFrequencies') as a rotating binding takes them (RopeFrequencies,
 * embind_options.hpp): the caller's table put in the heap ({ invFreq: address }), or the params,
 * which the binding turns into frequencies and applies in the same call; null for no RoPE.
 */
export function frequencyArg(put, f) {
  if (!f) return null;
  return f.fromParams ?? { invFreq: put(f.invFreq, Float64Array) };
}

// The functions below take the RoPE context ctx = { module, heap, names }: the Embind module, its
// heap tools (heap.js) and ropeNames(module).

/**
 * The public params object (its keys checked first) → { params, values, names }: params as
 * embind_rope.cpp reads it (the fields given, their values checked for type, arrays plain; a
 * field left out keeps C++'s default), values (each scalar given, by its JS name) and names
 * (C++ field names → JS names) for C++'s messages about them. name: the params' JS name.
 */
export function ropeParamsIn(ctx, fn, params, name = 'params') {
  const rope = ctx.names.ropeParams;
  checkRopeParamsKeys(fn, params, rope, name);
  const out = {}, values = {}, jsNames = {};
  for (const f of rope.fields) {
    const path = `${name}.${f.group ? `${f.group}.` : ''}${f.key}`;
    if (f.name) jsNames[f.name] = path;
    const holder = f.group ? params[f.group] : params;
    if (holder === undefined || (holder[f.key] === undefined && !f.required)) continue;
    const v = holder[f.key];
    if (typeof v !== 'object') values[path] = v;
    const target = f.group ? (out[f.group] ??= {}) : out;
    target[f.key] = fieldValue(fn, path, v, f);
  }
  return { params: out, values, names: jsMessageWith(jsNames) };
}

// ropeFrequencies' result, the table the caller asks for: { invFreq: Float64Array, attentionFactor,
// rotaryDim } of the public params object. (The rotations take params whole: frequencyArg.)
function frequencies64(ctx, fn, params, seqLen) {
  const { module, heap: { scoped, f64, status } } = ctx;
  const given = ropeParamsIn(ctx, fn, params);
  const rotaryDim = module.ropeRotDim(given.params);  // 0: params C++ refuses, and ropeFrequencies says why
  return scoped(fn, (alloc) => {
    const n = rotaryDim >> 1;
    const ptr = alloc(Math.max(1, n) * 8);
    const [message, attentionFactor] = module.ropeFrequencies(given.params, seqLen, ptr, n);
    status(fn, message, given);
    return { invFreq: f64(ptr, n).slice(), attentionFactor, rotaryDim };
  });
}

/**
 * Resolves { invFreq | params } of applyRope/ropeCache/shiftKeys/attention/kvCache: the caller's
 * table (invFreq, float64), or the params as C++ reads them (fromParams: { params, seqLen }, for
 * frequencyArg), checked by the core (rope_frequencies, at maxPosition + 1)
 * before anything is allocated; the binding that rotates computes their frequencies itself.
 * rotaryDim and from (where it comes from, for messages); attentionFactor: the call's, or null —
 * the frequencies' own (the params', 1 for a table), which C++ takes (gainArg).
 */
export function resolveFrequencies(ctx, fn, options, maxPosition) {
  const { invFreq, params } = options;
  if ((invFreq === undefined) === (params === undefined)) {
    throw new PosencTypeError(`${fn}: pass exactly one of options.invFreq and options.params`);
  }
  let f;
  if (params !== undefined) {
    const given = ropeParamsIn(ctx, fn, params), seqLen = maxPosition + 1;
    const [message, rotaryDim] = ctx.module.ropeParamsCheck(given.params, seqLen, false);
    ctx.heap.status(fn, message, given);
    f = { fromParams: { params: given.params, seqLen }, rotaryDim, from: 'params' };
  } else {
    const inv = toFloat64(fn, 'invFreq', invFreq);  // empty: rotaryDim 0, which C++ refuses (checkRotation)
    f = { invFreq: inv, rotaryDim: inv.length * 2, from: `2 * invFreq.length = 2 * ${inv.length}` };
  }
  if (options.rotaryDim !== undefined && options.rotaryDim !== f.rotaryDim) {
    checkInt(fn, 'rotaryDim', options.rotaryDim, 1);
    throw new PosencRangeError(`${fn}: rotaryDim must equal 2 * the number of frequencies = ${f.rotaryDim} (got ${options.rotaryDim})`);
  }
  const attentionFactor = options.attentionFactor === undefined ? null : checkNumber(fn, 'attentionFactor', options.attentionFactor);
  // Where the rotation sits: the model's (params.layout, params.rotaryOffset) unless the call says.
  const layout = checkChoice(fn, 'layout', options.layout ?? params?.layout ?? 'halfSplit', ctx.names.layouts);
  const rotaryOffset = options.rotaryOffset === undefined
    ? (params?.rotaryOffset ?? 0) : checkInt(fn, 'rotaryOffset', options.rotaryOffset, 0, 1 << 20);
  return { ...f, attentionFactor, layout, rotaryOffset };
}

// Positions of seqLen tokens: options.positions, or offset + 0 … seqLen-1. With batch rows,
// positions are one row for every batch row, or one per batch row ([batch][seqLen], as HF's
// position_ids): perRow says which.
export function resolvePositions(fn, options, seqLen, batch = 1) {
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

/** The gain f (resolveFrequencies') gives a rotating binding: the call's, or NaN for the frequencies' own. */
export const gainArg = (f) => f.attentionFactor ?? NaN;

/**
 * The frequencies f placed in heads of headDim: f's rotaryOffset, unless it would run past the
 * head's end and the head is exactly rotaryDim wide — x is then the rotated slice alone (DeepSeek's
 * q_pe / k_pe, which HF and llama.cpp rope) and turns from dim 0. offsetGiven: the call set
 * rotaryOffset itself (it is then kept as given). Where it does not fit, checkRotation says so.
 */
export function placeRotation(f, headDim, offsetGiven) {
  const past = f.rotaryOffset + f.rotaryDim > headDim;
  const slice = !offsetGiven && past && headDim === f.rotaryDim;
  return { ...f, rotaryOffset: slice ? 0 : f.rotaryOffset, offsetGiven };
}

// What checkRotation adds to C++'s message about where the rotation sits: where rotaryDim comes
// from and, for a model's offset that does not fit, how to pass x.
function placementNote(f, message) {
  if (!/\brot_(dim|offset)\b/.test(message)) return '';
  const hint = /\brot_offset\b/.test(message) && !f.offsetGiven
    ? `; pass whole heads of ${f.rotaryOffset + f.rotaryDim} dims, or the rotated slice alone, ${f.rotaryDim} wide` : '';
  return `; rotaryDim from ${f.from}${hint}`;
}

/**
 * The core's checks of a rotation (apply_rope_check), before anything is allocated: f placed
 * (placeRotation) in a call on seqLen tokens of nHeads heads of headDim, at offset (null: positions
 * given) in precision, with xpos (xposOf's, or null) and nRows rows of positions (M-RoPE: 3).
 * C++ states the rules; its message names what the call gave.
 */
export function checkRotation(ctx, fn, f, { seqLen, nHeads, headDim, offset = null, precision, xpos = null, nRows = 1 }) {
  const message = ctx.module.applyRopeCheck(seqLen, nHeads, headDim, f.fromParams ?? null, f.rotaryDim, offset, f.layout,
    precision, f.attentionFactor, f.rotaryOffset, xpos, nRows);
  const values = { seqLen, nHeads, headDim, rotaryDim: f.rotaryDim, rotaryOffset: f.rotaryOffset };
  if (f.attentionFactor !== null) values.attentionFactor = f.attentionFactor;
  if (offset !== null) values.offset = offset;
  if (xpos) Object.assign(values, { scaleBase: xpos.scaleBase, center: xpos.center });
  ctx.heap.status(fn, message, { values, note: (m) => placementNote(f, m) });
}

function ropeFrequencies(ctx, params, options) {
  const fn = 'ropeFrequencies';
  const { seqLen = 0, dtype = 'float32' } = checkOptions(fn, options, ['seqLen', 'dtype']);
  checkRopeParamsKeys(fn, params, ctx.names.ropeParams);
  checkInt(fn, 'seqLen', seqLen, 0);
  checkChoice(fn, 'dtype', dtype, { float32: 0, float64: 1 });
  const f = frequencies64(ctx, fn, params, seqLen);
  const invFreq = dtype === 'float64' ? f.invFreq : Float32Array.from(f.invFreq);
  return { invFreq, attentionFactor: f.attentionFactor, rotaryDim: f.rotaryDim };
}

function ggmlRopeParams(ctx, params, options) {
  const fn = 'ggmlRopeParams';
  const { seqLen = 0 } = checkOptions(fn, options, ['seqLen']);
  checkRopeParamsKeys(fn, params, ctx.names.ropeParams);
  checkInt(fn, 'seqLen', seqLen, 0);
  const given = ropeParamsIn(ctx, fn, params);
  const [message, g] = ctx.module.ggmlRopeParams(given.params, seqLen);
  ctx.heap.status(fn, message, given);
  return { ...g, freqFactors: g.freqFactors.length ? Float32Array.from(g.freqFactors) : null };
}

function ropeParamsFromConfig(ctx, config, options) {
  const fn = 'ropeParamsFromConfig';
  const { layerType = '', dialect = 'hf' } = checkOptions(fn, options, ['layerType', 'dialect']);
  if (typeof layerType !== 'string') throw new PosencTypeError(`${fn}: layerType must be a string (got ${describe(layerType)})`);
  const dialectCode = checkChoice(fn, 'dialect', dialect, DIALECTS);
  let text;
  if (typeof config === 'string') text = config;
  else if (isPlainObject(config)) text = JSON.stringify(config);
  else throw new PosencTypeError(`${fn}: config must be a parsed config object or its JSON text (got ${describe(config)})`);
  const [message, detail, params] = ctx.module.ropeParamsFromConfig(text, dialectCode, layerType);
  ctx.heap.status(fn, message, { detail });
  return params;
}

/** The public functions of RoPE's parameters: ropeFrequencies, ggmlRopeParams, ropeParamsFromConfig. */
export function ropeParamsApi(module, heap, names) {
  const ctx = { module, heap, names };
  return {
    ropeFrequencies: (params, options) => ropeFrequencies(ctx, params, options),
    ggmlRopeParams: (params, options) => ggmlRopeParams(ctx, params, options),
    ropeParamsFromConfig: (config, options) => ropeParamsFromConfig(ctx, config, options),
  };
}
