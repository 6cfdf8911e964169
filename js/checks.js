// Argument checks shared by every module of the JS API: they name the argument and the rule, in the
// user's (camelCase) names, before anything is allocated in the WASM heap.

/** The largest size C++ takes: sizes cross the binding as wasm32's size_t. */
export const MAX_SIZE_T = 2 ** 32 - 1;

/** The largest result one call may return, in float32 elements (1 GiB); the heap may grow to 2 GiB. */
export const MAX_ELEMENTS = 2 ** 28;

// C++ status messages name parameters in snake_case; users know them by these names. (RoPE params'
// fields are named per call, from C++'s list of them: rope_params.js ropeParamsIn.)
const JS_NAMES = {
  seq_len: 'seqLen', d_model: 'dModel', n_heads: 'nHeads', head_dim: 'headDim', rot_dim: 'rotaryDim', rot_offset: 'rotaryOffset',
  q_len: 'qLen', k_len: 'kLen', max_len: 'maxLen', max_bias: 'maxBias', num_buckets: 'numBuckets',
  max_distance: 'maxDistance', inv_freq: 'invFreq', pos: 'positions', pos_offset: 'offset', n_pos: 'seqLen',
  attention_factor: 'attentionFactor', query_offset: 'queryOffset',
  sink_tokens: 'sinkTokens', chunk_size: 'chunkSize', n_kv_heads: 'nKvHeads', rope_rot_dim: 'rope.rotaryDim',
  n_tokens: 'the tokens appended', kv_len: 'kvLen', kv_dtype: 'kvDtype', floor_scale: 'floorScale', attn_scale: 'attnScale',
  scale_base: 'scaleBase', shift_keys: 'shiftKeys',
};

// The C++ StatusCode names ("bad_shape" → 'kBadShape'), which errors carry as err.code.
export const codeName = (snake) => `k${snake.replace(/(^|_)([a-z])/g, (_, __, c) => c.toUpperCase())}`;

// Every error the API throws is a RangeError or TypeError with err.code, the C++ StatusCode name:
// the core's own status, or 'kBadArgument' ('kTooLarge' for sizes, 'kUnavailable' for bytes a file
// could not supply, the system's error as err.cause) for the checks this layer makes before
// anything reaches the heap. The package exports both classes and isPosencError.
export class PosencRangeError extends RangeError {
  constructor(message, code = 'kBadArgument', options = undefined) {
    super(message, options);
    this.code = code;
  }
}
export class PosencTypeError extends TypeError {
  constructor(message, code = 'kBadArgument', options = undefined) {
    super(message, options);
    this.code = code;
  }
}

/** Whether e is an error posenc threw (a PosencRangeError or PosencTypeError, with err.code). */
export const isPosencError = (e) => e instanceof PosencRangeError || e instanceof PosencTypeError;

/**
 * message → message with its snake_case names replaced by table's (C++ names → JS names). values
 * (JS name → the value the call passed), when given: those the message names are appended, as
 * "(got 7)", or "(got a = 1, b = 2)" for several — C++ states the rule, the JS layer what it was given.
 */
export const renamer = (table) => (message, values) => {
  const named = [];
  const text = message.replace(/\b[a-z][a-z0-9]*(?:_[a-z0-9]+)*\b/g, (w) => {
    const name = table[w] ?? w;
    if (values !== undefined && Object.hasOwn(values, name) && !named.includes(name)) named.push(name);
    return name;
  });
  if (named.length === 0) return text;
  const got = named.length === 1 ? describe(values[named[0]]) : named.map((n) => `${n} = ${describe(values[n])}`).join(', ');
  return `${text} (got ${got})`;
};
export const jsMessage = renamer(JS_NAMES);
/** jsMessage with more names (C++ → JS) for one call's arguments. */
export const jsMessageWith = (names) => renamer({ ...JS_NAMES, ...names });

/** snake_case → camelCase: the JS name of a C++ enum name ('half_split' → 'halfSplit'). */
export const camel = (snake) => snake.replace(/_([a-z0-9])/g, (_, c) => c.toUpperCase());

export function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (typeof v === 'function') return 'a function';
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : `an object (${v.constructor?.name ?? 'Object'})`;
}

/** A position-like scalar (an offset, a delta, a queryOffset): a number, or a bigint within ±(2^53 − 1), as BigInt64Array positions are. */
export function numberOrBigint(fn, name, v) {
  if (typeof v !== 'bigint') return v;
  const max = BigInt(Number.MAX_SAFE_INTEGER);
  if (v > max || v < -max) throw new PosencRangeError(`${fn}: ${name} must be within ±(2^53 - 1) (got ${v}n)`);
  return Number(v);
}

export function checkNumber(fn, name, v) {
  if (typeof v !== 'number') throw new PosencTypeError(`${fn}: ${name} must be a number (got ${describe(v)})`);
  return v;
}

export function checkInt(fn, name, v, min, max = Number.MAX_SAFE_INTEGER) {
  checkNumber(fn, name, v);
  if (!Number.isInteger(v)) throw new PosencRangeError(`${fn}: ${name} must be an integer (got ${v})`);
  if (v < min || v > max) {
    const rule = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new PosencRangeError(`${fn}: ${name} must be ${rule} (got ${v})`);
  }
  return v;
}

export function checkFinite(fn, name, v, { positive = false } = {}) {
  checkNumber(fn, name, v);
  if (!Number.isFinite(v) || (positive && v <= 0)) {
    throw new PosencRangeError(`${fn}: ${name} must be finite${positive ? ' and > 0' : ''} (got ${v})`);
  }
  return v;
}

export function checkBool(fn, name, v) {
  if (typeof v !== 'boolean') throw new PosencTypeError(`${fn}: ${name} must be a boolean (got ${describe(v)})`);
  return v;
}

export function checkChoice(fn, name, v, choices) {
  if (typeof v !== 'string' || !Object.hasOwn(choices, v)) {
    throw new PosencRangeError(`${fn}: ${name} must be one of ${Object.keys(choices).map((c) => `'${c}'`).join(', ')} (got ${describe(v)})`);
  }
  return choices[v];
}

export function isPlainObject(v) {
  return v !== null && typeof v === 'object' && !Array.isArray(v) && !ArrayBuffer.isView(v);
}

export function checkOptions(fn, options, allowed, name = 'options') {
  if (options === undefined) return {};
  if (!isPlainObject(options)) throw new PosencTypeError(`${fn}: ${name} must be an object (got ${describe(options)})`);
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new PosencTypeError(`${fn}: unknown ${name === 'options' ? 'option' : `key in ${name}`} ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
    }
  }
  return options;
}

export function checkFloat32Array(fn, name, v) {
  if (!(v instanceof Float32Array)) throw new PosencTypeError(`${fn}: ${name} must be a Float32Array (got ${describe(v)})`);
  return v;
}

/**
 * options.out of a streaming call: a `Type` (Float32Array, or Uint16Array for float16) of n
 * elements (`what`, for the message) that is the input itself (in place: each piece is read before its rows are written) or
 * does not overlap it.
 */
export function checkOut(fn, out, { n, what, input, Type = Float32Array }) {
  if (!(out instanceof Type)) throw new PosencTypeError(`${fn}: options.out must be a ${Type.name} (got ${describe(out)})`);
  if (out.length !== n) throw new PosencRangeError(`${fn}: options.out.length must equal ${what} = ${n} (got ${out.length})`);
  const overlap = out.buffer === input.buffer && out !== input && out.byteOffset < input.byteOffset + input.byteLength &&
    input.byteOffset < out.byteOffset + out.byteLength;
  if (overlap) throw new PosencRangeError(`${fn}: options.out must be the input itself or not overlap it`);
  return out;
}

/** An array-like of numbers (Array or any typed array; BigInt64Array too) as a Float64Array. */
export function toFloat64(fn, name, v, { integer = false } = {}) {
  const ok = Array.isArray(v) || (ArrayBuffer.isView(v) && !(v instanceof DataView));
  if (!ok) throw new PosencTypeError(`${fn}: ${name} must be an array or typed array of numbers (got ${describe(v)})`);
  const out = new Float64Array(v.length);
  for (let i = 0; i < v.length; i++) {
    const x = typeof v[i] === 'bigint' ? Number(v[i]) : v[i];
    if (typeof x !== 'number') throw new PosencTypeError(`${fn}: ${name}[${i}] must be a number (got ${describe(v[i])})`);
    if (!Number.isFinite(x) || (integer && !Number.isInteger(x))) {
      throw new PosencRangeError(`${fn}: ${name}[${i}] must be ${integer ? 'an integer' : 'finite'} (got ${x})`);
    }
    out[i] = x;
  }
  return out;
}

export function checkElements(fn, what, n) {
  if (n > MAX_ELEMENTS) {
    throw new PosencRangeError(`${fn}: ${what} = ${n} elements exceeds the limit of ${MAX_ELEMENTS} (1 GiB of float32)`, 'kTooLarge');
  }
}

/**
 * options.queryOffset of alibiBias and t5Bias: the key position of query 0, or NaN for the default
 * (kLen - qLen: the queries sit at the last key positions, which needs qLen <= kLen).
 */
export function checkQueryOffset(fn, queryOffset, qLen, kLen) {
  if (queryOffset === undefined) {
    if (qLen > kLen) {
      throw new PosencRangeError(`${fn}: qLen = ${qLen} must be <= kLen = ${kLen} when the queries sit at the last key positions (the default); pass queryOffset`);
    }
    return NaN;
  }
  return checkInt(fn, 'queryOffset', numberOrBigint(fn, 'queryOffset', queryOffset), 0, 2 ** 52);
}
