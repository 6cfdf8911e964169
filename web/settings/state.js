// The explorer's settings: defaults, limits, and the URL hash that stores them all, so a link
// restores the page exactly and Back undoes the last committed change. The theme is not a setting
// of the lesson: it lives in local storage (settings-bar.js), never in a shared link.

import { PAGE_SCHEMES } from '../views/shared/schemes.js';

export const SCALINGS = ['none', 'linear', 'ntk', 'dynamic', 'yarn', 'llama3', 'longrope'];
// The scheme menus, from the page's schemes (schemes.js): those "score vs distance" draws, and the
// order chapter's "positions".
export const SCHEMES = PAGE_SCHEMES.filter((s) => s.distance).map((s) => s.id);
export const ATTENTION_SCHEMES = PAGE_SCHEMES.filter((s) => s.order).map((s) => s.id);
// The chapters with a "go deeper" fold (index.html's <details class="deeper" data-fold>: what goes
// beyond the lesson, closed by default). chapters.js checks that the page declares exactly these.
export const FOLDS = ['embedding', 'sinusoidal', 'rope', 'long-context', 'bias', 'comparison', 'production', 'lab'];

/** Every setting: default, rule, and how to read it back from the hash. */
export const FIELDS = {
  // Global (the settings bar).
  // Even: sinusoidal's sin and cos, and RoPE, pair the dimensions (most views draw pairs).
  dModel: { value: 128, type: 'int', min: 2, max: 4096, even: true, label: 'd_model' },
  seqLen: { value: 100, type: 'int', min: 1, max: 131072, label: 'seq_len' },
  heads: { value: 8, type: 'int', min: 1, max: 128, label: 'heads' },
  preset: { value: '', type: 'str' },
  // The model the settings came from when it is not a preset: a file's name or "pasted config". A
  // link cannot carry the file, so a page opened from it says what was dropped (web/main.js).
  model: { value: '', type: 'str' },
  // The "go deeper" folds open, by chapter (FOLDS): a shared link opens them.
  deeper: { value: '', type: 'list', values: FOLDS, label: 'folds open' },
  // Chapter "order".
  attnScheme: { value: 'none', type: 'enum', values: ATTENTION_SCHEMES, label: 'positions' },
  attnCausal: { value: false, type: 'bool', label: 'causal mask (a decoder)' },
  // Chapter "embedding".
  embScale: { value: true, type: 'bool', label: 'scale tokens by √d_model' },
  concatWidth: { value: 128, type: 'int', min: 2, max: 4096, label: 'position width (concatenated)' },
  // Chapter "sinusoidal".
  base: { value: 10000, type: 'num', min: 1.0001, max: 1e9, label: 'base' },
  sinLayout: { value: 'interleaved', type: 'enum', values: ['interleaved', 'concat'], label: 'layout' },
  dims: { value: '0,1,20,40', type: 'list', label: 'dimensions' },
  shiftPos: { value: 5, type: 'int', min: 0, max: 100000, label: 'pos' },
  shiftK: { value: 3, type: 'int', min: -10000, max: 10000, label: 'shift k' },
  shiftPair: { value: 0, type: 'int', min: 0, max: 2047, label: 'pair i' },
  // Chapter "learned": the table drawn — the lab's trained pos_emb, the seeded one at initialisation
  // (max_len × d_model), or one from a file.
  learnedSource: { value: 'trained', type: 'enum', values: ['trained', 'init', 'file'], label: 'table' },
  maxLen: { value: 512, type: 'int', min: 1, max: 16384, label: 'max_len' },
  learnedPos: { value: 10, type: 'int', min: 0, max: 20000, label: 'look up position' },
  hotPos: { value: 10, type: 'int', min: 0, max: 63, label: 'compare position' },
  // Chapter "rope".
  theta: { value: 10000, type: 'num', min: 1.0001, max: 1e9, label: 'θ (rope_theta)' },
  layout: { value: 'halfSplit', type: 'enum', values: ['halfSplit', 'interleaved'], label: 'pair layout' },
  partial: { value: 1, type: 'num', min: 0.01, max: 1, label: 'partial rotary' },
  rotM: { value: 3, type: 'int', min: 0, max: 100000, label: 'query position m' },
  rotN: { value: 1, type: 'int', min: 0, max: 100000, label: 'key position n' },
  rotShift: { value: 0, type: 'int', min: 0, max: 100000, label: 'shift both by s' },
  rotPair: { value: 0, type: 'int', min: 0, max: 2047, label: 'pair i' },
  relLen: { value: 48, type: 'int', min: 2, max: 128, label: 'positions' },
  crossLen: { value: 32, type: 'int', min: 2, max: 64, label: 'words' },
  // M-RoPE (Qwen2.5-VL-7B's sections for head_dim 128) and 2-D RoPE (issue 14).
  mropeSection: { value: '16,24,24', type: 'list', label: 'mrope_section (t, h, w pairs)' },
  mropeInterleaved: { value: false, type: 'bool', label: 'interleaved (Qwen3-VL)' },
  mropeText: { value: 4, type: 'int', min: 1, max: 64, label: 'text tokens before' },
  mropeT: { value: 1, type: 'int', min: 1, max: 8, label: 'image t' },
  mropeH: { value: 8, type: 'int', min: 1, max: 64, label: 'image h' },
  mropeW: { value: 12, type: 'int', min: 1, max: 64, label: 'image w' },
  grid2dH: { value: 12, type: 'int', min: 1, max: 64, label: 'patch rows' },
  grid2dW: { value: 16, type: 'int', min: 1, max: 64, label: 'patch columns' },
  grid2dRow: { value: 5, type: 'int', min: 0, max: 63, label: 'query row' },
  grid2dCol: { value: 7, type: 'int', min: 0, max: 63, label: 'query column' },
  // Chapter "bias".
  maxBias: { value: 8, type: 'num', min: 0.01, max: 64, label: 'max bias' },
  t5Buckets: { value: 32, type: 'int', min: 4, max: 1024, label: 'buckets' },
  t5MaxDist: { value: 128, type: 'int', min: 8, max: 1e6, label: 'max distance' },
  t5Bidir: { value: true, type: 'bool', label: 'bidirectional (encoder)' },
  // Chapter "long-context": its own defaults show a difference (YaRN, 4× past L_train).
  scaling: { value: 'yarn', type: 'enum', values: SCALINGS, label: 'scaling' },
  factor: { value: 4, type: 'num', min: 1, max: 1024, label: 'factor' },
  lTrain: { value: 4096, type: 'int', min: 2, max: 1048576, label: 'L_train' },
  lTarget: { value: 16384, type: 'int', min: 2, max: 4194304, label: 'L_target' },
  betaFast: { value: 32, type: 'num', min: 0.01, max: 1e4, label: 'YaRN β_fast' },
  betaSlow: { value: 1, type: 'num', min: 0.01, max: 1e4, label: 'YaRN β_slow' },
  truncate: { value: true, type: 'bool', label: 'YaRN truncate' },
  lowFreq: { value: 1, type: 'num', min: 0.01, max: 1e3, label: 'llama3 low_freq_factor' },
  highFreq: { value: 4, type: 'num', min: 0.01, max: 1e3, label: 'llama3 high_freq_factor' },
  precision: { value: 'fast', type: 'enum', values: ['fast', 'accurate'], label: 'precision' },
  pos: { value: 8000, type: 'int', min: 0, max: 4194304, label: 'clock position' },
  compare: { value: 'none', type: 'enum', values: SCALINGS, label: 'compare with' },
  // Windows, sinks and chunks (issue 14): on a map of winLen positions.
  winMask: { value: 'window', type: 'enum', values: ['causal', 'window', 'chunk'], label: 'mask' },
  winSize: { value: 8, type: 'int', min: 1, max: 1048576, label: 'window W (sliding_window)' },
  winChunk: { value: 16, type: 'int', min: 1, max: 1048576, label: 'chunk (attention_chunk_size)' },
  winSinkTokens: { value: 0, type: 'int', min: 0, max: 64, label: 'sink tokens (StreamingLLM)' },
  winSinkLogit: { value: false, type: 'bool', label: 'sink logit (gpt-oss)' },
  winSinkValue: { value: 2, type: 'num', min: -30, max: 30, label: 'sink logit value' },
  winLen: { value: 48, type: 'int', min: 4, max: 256, label: 'positions shown' },
  // Llama 4's iRoPE temperature (Llama-4-Scout's floor_scale and attn_scale).
  shiftDelta: { value: 512, type: 'int', min: 1, max: 1048576, label: 'tokens dropped Δ' },
  shiftKeep: { value: 64, type: 'int', min: 2, max: 4096, label: 'tokens kept N' },
  iropeFloor: { value: 8192, type: 'int', min: 1, max: 1048576, label: 'floor_scale' },
  iropeAttn: { value: 0.1, type: 'num', min: 0, max: 10, label: 'attn_scale' },
  iropeSpan: { value: 16, type: 'int', min: 2, max: 1024, label: 'positions up to × floor_scale' },
  // Chapter "comparison".
  schemes: { value: 'sinusoidal,rope,alibi,t5', type: 'list', label: 'schemes' },
  // Chapter "lab": what Start trains — by default RoPE against ALiBi, the small model, 600 steps: two
  // workers side by side, the first comparison in under a minute on two cores (docs/explorer.md) —
  // and the length the loss-by-position plot shows, in multiples of T_train.
  labTask: { value: 'markov', type: 'enum', values: ['markov', 'copy', 'flipflop', 'text'], label: 'task' },
  labSchemes: { value: 'rope,alibi', type: 'list', label: 'schemes' },
  labSize: { value: 'small', type: 'enum', values: ['tiny', 'small'], label: 'model size' },
  labSteps: { value: 600, type: 'int', min: 1, max: 20000, label: 'steps' },
  // Runs per scheme (seeds 1 … N), and training at random positions in [0, 8 T_train) (Ruoss et al. 2023).
  labSeeds: { value: 1, type: 'int', min: 1, max: 5, label: 'seeds' },
  labRandom: { value: false, type: 'bool', label: 'randomized positions (L_max = 8 × T_train)' },
  labAt: { value: '4', type: 'enum', values: ['1/2', '1', '2', '4', '8'], label: 'loss by position at length (× T_train)' },
  labScalings: { value: true, type: 'bool', label: 'RoPE with inference scalings' },
  // The result plot's series hidden from its legend (their labels).
  labHide: { value: '', type: 'list', label: 'series hidden' },
};

export function defaults() {
  return Object.fromEntries(Object.entries(FIELDS).map(([k, f]) => [k, f.value]));
}

/** The rule of a field in words, for refusals: "a whole number in [1, 4096]". */
export function describeRule(key) {
  const f = FIELDS[key];
  if (f.type === 'int') return `${f.even ? 'an even' : 'a'} whole number from ${f.min} to ${f.max}`;
  if (f.type === 'num') return `a number from ${f.min} to ${f.max}`;
  if (f.type === 'enum') return `one of ${f.values.join(', ')}`;
  if (f.type === 'list' && f.values) return `a comma-separated list of ${f.values.join(', ')}`;
  if (f.type === 'bool') return '1 or 0';
  return 'a valid value';
}

/** A value for field `key` from text, or undefined if it breaks the field's rule. */
export function parseField(key, text) {
  const f = FIELDS[key];
  if (!f || text === undefined || text === null) return undefined;
  switch (f.type) {
    case 'int':
    case 'num': {
      if (String(text).trim() === '') return undefined;
      const v = Number(text);
      if (!Number.isFinite(v) || v < f.min || v > f.max) return undefined;
      if (f.type === 'int' && !Number.isInteger(v)) return undefined;
      if (f.even && v % 2) return undefined;
      return v;
    }
    case 'bool': return text === '1' || text === 'true' ? true : text === '0' || text === 'false' ? false : undefined;
    case 'enum': return f.values.includes(text) ? text : undefined;
    case 'list': return !f.values || listOf(text).every((v) => f.values.includes(v)) ? String(text) : undefined;
    default: return String(text);
  }
}

export function toHash(state, base = defaults()) {
  const params = new URLSearchParams();
  for (const key of Object.keys(FIELDS)) {
    if (key === 'preset' ? !state.preset : state[key] === base[key]) continue;
    const v = state[key];
    params.set(key, typeof v === 'boolean' ? (v ? '1' : '0') : String(v));
  }
  const s = params.toString();
  return s ? `#${s}` : '';
}

/**
 * The settings a hash holds, and what it asked for that the page refused: { state, refused:
 * [{ key, text, why }] } (a value that breaks its field's rule keeps the base's; a key that is no
 * setting is dropped). baseOf(preset) gives what the keys the hash leaves out take: the defaults,
 * or with a preset its own settings — so `#preset=llama-3.1-8b` opens that model, and toHash(state,
 * baseOf(state.preset)) writes only what differs from it.
 */
export function readHash(hash, baseOf = () => defaults()) {
  const params = new URLSearchParams(hash.replace(/^#/, ''));
  const preset = params.has('preset') ? parseField('preset', params.get('preset')) : undefined;
  const state = { ...baseOf(preset ?? '') };
  const refused = [];
  for (const [key, text] of params) {
    const f = Object.hasOwn(FIELDS, key) ? FIELDS[key] : null;
    const v = f ? parseField(key, text) : undefined;
    if (v !== undefined) state[key] = v;
    else {
      const why = !f ? (key === 'theme' ? 'the theme stays on your device, not in links' : 'no setting of this page has that name')
        : `${f.label ?? key} must be ${describeRule(key)}`;
      refused.push({ key, text, why });
    }
  }
  return { state, refused };
}

/** A list-valued field's items ('' is the empty list). */
export const listOf = (text) => String(text).split(',').filter(Boolean);

/** At most this many dimensions are drawn against position (dim-traces): more would be a blur. */
export const MAX_DIMS = 8;

/** The list-valued fields as arrays. */
export function dimsOf(state) {
  return state.dims.split(',').map(Number).filter((d) => Number.isInteger(d) && d >= 0 && d < state.dModel).slice(0, MAX_DIMS);
}
export function schemesOf(state) {
  return state.schemes.split(',').filter((s) => SCHEMES.includes(s));
}
