// The idiomatic JS API over the Embind module. Every argument is checked here, before anything is
// allocated in the WASM heap, so users see a TypeError or RangeError that names the argument and
// the rule; results are fresh Float32Arrays that JS owns (nothing to free).

/** The largest result one call may return, in float32 elements (1 GiB); the heap may grow to 2 GiB. */
export const MAX_ELEMENTS = 2 ** 28;

function describe(v) {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'bigint') return `${v}n`;
  if (v === null || typeof v !== 'object') return String(v);
  return Array.isArray(v) ? 'an array' : `an object (${v.constructor?.name ?? 'Object'})`;
}

function checkInt(fn, name, v, min, max = Number.MAX_SAFE_INTEGER) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number (got ${describe(v)})`);
  if (!Number.isInteger(v)) throw new RangeError(`${fn}: ${name} must be an integer (got ${v})`);
  if (v < min || v > max) {
    const rule = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `in [${min}, ${max}]`;
    throw new RangeError(`${fn}: ${name} must be ${rule} (got ${v})`);
  }
  return v;
}

function checkPositiveFinite(fn, name, v) {
  if (typeof v !== 'number') throw new TypeError(`${fn}: ${name} must be a number (got ${describe(v)})`);
  if (!Number.isFinite(v) || v <= 0) throw new RangeError(`${fn}: ${name} must be finite and > 0 (got ${v})`);
  return v;
}

function checkOptions(fn, options, allowed) {
  if (options === undefined) return {};
  if (options === null || typeof options !== 'object' || Array.isArray(options)) {
    throw new TypeError(`${fn}: options must be an object (got ${describe(options)})`);
  }
  for (const key of Object.keys(options)) {
    if (!allowed.includes(key)) {
      throw new TypeError(`${fn}: unknown option ${JSON.stringify(key)} (allowed: ${allowed.join(', ')})`);
    }
  }
  return options;
}

function checkElements(fn, what, n) {
  if (n > MAX_ELEMENTS) {
    throw new RangeError(`${fn}: ${what} = ${n} elements exceeds the limit of ${MAX_ELEMENTS} (1 GiB of float32)`);
  }
}

/** Builds the public API object from an instantiated Emscripten module. */
export function wrap(module) {
  return {
    /** The SIMD instruction set the kernels were compiled for: "wasm" in this build. */
    simdArch: module.simdArch(),
    MAX_ELEMENTS,

    sinusoidal(seqLen, dModel, options) {
      const fn = 'sinusoidal';
      checkInt(fn, 'seqLen', seqLen, 1);
      checkInt(fn, 'dModel', dModel, 1);
      const { base = 10000 } = checkOptions(fn, options, ['base']);
      checkPositiveFinite(fn, 'base', base);
      checkElements(fn, 'seqLen * dModel', seqLen * dModel);
      return module.sinusoidal(seqLen, dModel, base);
    },
  };
}
