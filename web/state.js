// The explorer's settings: defaults, limits, and the URL hash that stores them all, so a link
// restores the page exactly and back/forward walk through changes.

export const SCALINGS = ['none', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope'];

/** Every setting: default, and how to read it back from the hash. */
export const FIELDS = {
  dModel: { value: 128, type: 'int', min: 2, max: 4096, even: true },
  seqLen: { value: 100, type: 'int', min: 1, max: 131072 },
  base: { value: 10000, type: 'num', min: 1.0001, max: 1e9 },
  sinLayout: { value: 'interleaved', type: 'enum', values: ['interleaved', 'concat'] },
  lTrain: { value: 4096, type: 'int', min: 2, max: 1048576 },
  lTarget: { value: 16384, type: 'int', min: 2, max: 4194304 },
  heads: { value: 8, type: 'int', min: 1, max: 128 },
  layout: { value: 'halfSplit', type: 'enum', values: ['halfSplit', 'interleaved'] },
  partial: { value: 1, type: 'num', min: 0.01, max: 1 },
  scaling: { value: 'none', type: 'enum', values: SCALINGS },
  betaFast: { value: 32, type: 'num', min: 0.01, max: 1e4 },
  betaSlow: { value: 1, type: 'num', min: 0.01, max: 1e4 },
  truncate: { value: true, type: 'bool' },
  lowFreq: { value: 1, type: 'num', min: 0.01, max: 1e3 },
  highFreq: { value: 4, type: 'num', min: 0.01, max: 1e3 },
  maxBias: { value: 8, type: 'num', min: 0.01, max: 64 },
  t5Buckets: { value: 32, type: 'int', min: 4, max: 1024 },
  t5MaxDist: { value: 128, type: 'int', min: 8, max: 1e6 },
  t5Bidir: { value: true, type: 'bool' },
  precision: { value: 'fast', type: 'enum', values: ['fast', 'accurate'] },
  pos: { value: 100, type: 'int', min: 0, max: 4194304 },
  dims: { value: '0,1,20,40', type: 'list' },
  schemes: { value: 'sinusoidal,rope,alibi,t5', type: 'list' },
  compare: { value: 'none', type: 'enum', values: SCALINGS },
  preset: { value: '', type: 'str' },
  theme: { value: 'auto', type: 'enum', values: ['auto', 'light', 'dark'] },
};

export function defaults() {
  return Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, f.value]));
}

/** A value for field `key` from text, or undefined if it breaks the field's rule. */
export function parseField(key, text) {
  const f = FIELDS[key];
  if (!f || text === undefined || text === null) return undefined;
  switch (f.type) {
    case 'int':
    case 'num': {
      const v = Number(text);
      if (!Number.isFinite(v) || v < f.min || v > f.max) return undefined;
      if (f.type === 'int' && !Number.isInteger(v)) return undefined;
      if (f.even && v % 2 !== 0) return undefined;
      return v;
    }
    case 'bool': return text === '1' || text === 'true' ? true : text === '0' || text === 'false' ? false : undefined;
    case 'enum': return f.values.includes(text) ? text : undefined;
    default: return String(text);
  }
}

export function toHash(state) {
  const d = defaults();
  const params = new URLSearchParams();
  for (const key of Object.keys(FIELDS)) {
    if (state[key] === d[key]) continue;
    const v = state[key];
    params.set(key, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  const s = params.toString();
  return s ? `#${s}` : '#';
}

export function fromHash(hash) {
  const state = defaults();
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  for (const [key, text] of params) {
    const v = parseField(key, text);
    if (v !== undefined) state[key] = v;
  }
  return state;
}

/** The list-valued fields as arrays. */
export function dimsOf(state) {
  return state.dims.split(',').map(Number).filter((d) => Number.isInteger(d) && d >= 0 && d < state.dModel).slice(0, 8);
}
export function schemesOf(state) {
  return state.schemes.split(',').filter((s) => ['sinusoidal', 'rope', 'alibi', 't5'].includes(s));
}
