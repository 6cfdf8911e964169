// What a model says, as the page's settings. The package reads every model (pe.readModel: a
// .gguf, .safetensors, .npy, or a config.json as a file, pasted, or a preset's); one function here,
// settingsFromModel, turns what it found into settings, so a preset, a pasted config and an opened
// file read alike. Each reading starts from the defaults: nothing of the previous model remains.
// GGUF metadata pasted as JSON has no readModel: pe.ropeParamsFromConfig reads its RoPE keys, and
// ggufModel gives the result readModel's shape.
import { PAGE_SCHEMES } from '../views/shared/schemes.js';
import { FIELDS, SCALINGS, defaults } from './state.js';

// The schemes whose model files set the page through their entry (web/views/shared/schemes.js `model`).
const MODEL_SCHEMES = PAGE_SCHEMES.filter((s) => s.model);

/**
 * Sets field `key` to `v` within the field's rule (a whole number rounded, a number clamped); skips
 * undefined. A published value the limits change is recorded in `clamped` (a preset never changes
 * a published value silently: describeReading and the page say so); derived: the value is the
 * page's own choice (a map twice the window), not a published one.
 */
function setField(state, key, v, clamped = null) {
  if (v === undefined) return;
  const f = FIELDS[key];
  if (typeof v !== 'number' || (f.type !== 'int' && f.type !== 'num')) { state[key] = v; return; }
  if (!Number.isFinite(v)) return;
  const shown = Math.min(f.max, Math.max(f.min, f.type === 'int' ? Math.round(v) : v));
  if (f.even && shown % 2) {
    throw new Error(`its ${f.label ?? key} is ${shown}: the page draws even widths only, as sin and cos and RoPE pair `
      + 'dimensions');
  }
  state[key] = shown;
  if (clamped && shown !== v && (f.type !== 'int' || Math.round(v) !== shown)) {
    const old = clamped.findIndex((c) => c.key === key);
    if (old >= 0) clamped.splice(old, 1);
    clamped.push({ key, label: f.label ?? key, published: v, shown, limit: v > f.max ? f.max : f.min });
  }
}

/** head_dim in words, with the rotated slice of an MLA head. */
const headRead = (p) => (p.rotaryOffset
  ? `head_dim ${p.headDim} (RoPE on dims ${p.rotaryOffset}–${p.rotaryOffset + p.rotaryDim - 1})` : `head_dim ${p.headDim}`);

/** Settings for RoPE parameters as the package returns them; longFactors go to `extras`. */
function ropeSettings(params, maxPositions) {
  const s = params.scaling ?? { type: 'none' };
  // A head whose rotated part does not start at 0 (DeepSeek's MLA: [nope | rope]): the page draws
  // the rotated slice, rotaryDim wide.
  const sliced = (params.rotaryOffset ?? 0) > 0;
  const next = { dModel: sliced ? params.rotaryDim : params.headDim, theta: params.theta,
    partial: params.partialRotaryFactor ?? 1, scaling: SCALINGS.includes(s.type) ? s.type : 'none',
    layout: params.layout ?? 'halfSplit' };
  if (params.rotaryDim) next.partial = sliced ? 1 : params.rotaryDim / params.headDim;
  // L_train: the pre-extension length; L_target: the positions the model is published for,
  // max_position_embeddings, which need not be L_train × factor (Llama-3.1: 8192 × 8 < 131072),
  // unless the config leaves that key at L_train (Qwen2.5 with YaRN: 32768, factor 4).
  if (s.factor) next.factor = s.factor;
  const orig = s.originalMaxPositionEmbeddings ?? (s.type === 'dynamic' ? s.maxPositionEmbeddings : undefined);
  if (orig) next.lTrain = orig;
  else if (s.factor && maxPositions) next.lTrain = Math.round(maxPositions / s.factor);
  const extended = s.factor && next.lTrain ? Math.round(next.lTrain * s.factor) : 0;
  if (maxPositions || extended) next.lTarget = Math.max(maxPositions ?? 0, extended, next.lTrain ?? 0);
  if (next.scaling === 'none') { next.lTrain = maxPositions ?? FIELDS.lTrain.value; next.lTarget = next.lTrain; }
  if (s.type === 'longrope' && !s.factor && next.lTrain && next.lTarget) next.factor = next.lTarget / next.lTrain;
  if (s.type === 'yarn') Object.assign(next, { betaFast: s.betaFast, betaSlow: s.betaSlow, truncate: s.truncate });
  if (s.type === 'llama3') Object.assign(next, { lowFreq: s.lowFreqFactor, highFreq: s.highFreqFactor });
  const longFactors = s.type === 'longrope' ? { shortFactor: s.shortFactor, longFactor: s.longFactor } : null;
  return { next, longFactors };
}

/** For the irope view: what a config says about its NoPE layers (not known for a file). */
function noRopeKeys(config) {
  if (!config) return {};
  const c = config.text_config ?? config;
  const list = c.no_rope_layers;
  return { given: Array.isArray(list) ? (list.length ? 'list' : 'empty') : 'absent', interval: c.no_rope_layer_interval };
}

// RoPE's settings, with what goes with it: M-RoPE sections, sliding windows, Llama 4's chunks and
// temperature (issue 14). Fills r (settingsFromModel's result).
function readRope(r, p, model) {
  const { state, read, clamped } = r;
  const rs = ropeSettings(p, model.contextLength);
  for (const [k, v] of Object.entries(rs.next)) setField(state, k, v, clamped);
  r.longFactors = rs.longFactors;
  const contextLength = p.scaling?.contextLength ?? null;
  if (p.freqFactors || contextLength) {
    // What the settings cannot hold: freq_factors (a Llama-3.1 GGUF), LongRoPE's context (web/settings/rope-settings.js).
    r.ropeFile = { headDim: state.dModel, partial: state.partial, freqFactors: p.freqFactors ?? null, contextLength };
  }
  const factors = p.freqFactors ? ', freq_factors' : '';
  read.push(`RoPE ${headRead(p)}, θ ${p.theta}, ${p.layout} pairs, scaling ${state.scaling}${factors}`);
  if (p.mrope) {
    Object.assign(state, { mropeSection: p.mrope.section.join(','), mropeInterleaved: Boolean(p.mrope.interleaved) });
    read.push(`mrope_section ${state.mropeSection}${state.mropeInterleaved ? ' (interleaved)' : ''}`);
  }
  const window = model.sliding?.window;
  if (window) {
    state.winMask = 'window';
    setField(state, 'winSize', window, clamped);
    setField(state, 'winLen', 2 * window);  // the page's choice: a map twice the window, at most its limit
    read.push(`sliding_window ${window}`);
  }
  const irope = model.irope;
  if (irope) {
    if (irope.chunkSize) { state.winMask = 'chunk'; setField(state, 'winChunk', irope.chunkSize, clamped); }
    setField(state, 'iropeFloor', irope.floorScale, clamped);
    setField(state, 'iropeAttn', irope.attnScale, clamped);
    const chunk = irope.chunkSize ? `attention_chunk_size ${irope.chunkSize}, ` : '';
    read.push(`${chunk}floor_scale ${irope.floorScale}, attn_scale ${irope.attnScale}`);
  }
  if (model.contextLength) read.push(`L_target ${state.lTarget}`);
}

/**
 * Settings for readModel's result (ModelInfo, posenc.d.ts): { state, scheme, read (what was read,
 * in words), warnings, clamped (published values a setting's limit changed: [{ key, label,
 * published, shown, limit }]), longFactors, ropeFile, learned, irope }; throws an Error saying what the page
 * cannot use. layerType: the layers to show of a model with two kinds ('sliding_attention': Gemma
 * 3's local layers; else the full-attention ones). config: the config object it was read from
 * (a preset or a pasted one; none for a file): how it gives its NoPE layers. learned: the position
 * table ({ name, weights, maxLen, dModel }) when the file holds its weights; ropeFile: what the
 * settings cannot hold (freq_factors, LongRoPE's context); irope: { info: readModel's Llama 4
 * layers or null, given, interval }.
 */
export function settingsFromModel(model, { layerType, config } = {}) {
  const state = defaults();
  const format = model.format === 'config' ? 'config.json' : model.format;
  const r = {
    state, scheme: null, read: [`${format}${model.architecture ? ` (${model.architecture})` : ''}`],
    warnings: model.warnings ?? [], clamped: [], longFactors: null, ropeFile: null, learned: null,
    irope: { info: model.irope ?? null, ...noRopeKeys(config) },
  };
  const { read, clamped } = r;
  if (model.nHeads) setField(state, 'heads', model.nHeads, clamped);
  const rope = layerType === 'sliding_attention' ? model.sliding?.params ?? model.rope : model.rope;
  if (rope) {
    const width = rope.rotaryOffset ? rope.rotaryDim : rope.headDim;
    if (width % 2) {
      throw new Error(`head_dim is ${width}${model.dModel && !rope.rotaryOffset ? ` (hidden_size ${model.dModel} ÷ `
        + `num_attention_heads ${model.nHeads}, rounded down as Hugging Face does)` : ''}: RoPE turns dimensions in pairs, `
        + 'so it must be even.');
    }
    readRope(r, rope, model);
    r.scheme = 'rope';
  }
  const width = model.dModel;  // the width of a bias model (a learned table has its own)
  for (const { id, model: m } of MODEL_SCHEMES) {
    if (!model[m.field]) continue;
    read.push(m.settings(model[m.field], { set: (k, v) => setField(state, k, v, clamped), state, width }));
    r.scheme = id;
  }
  if (model.positionTable) {
    const t = model.positionTable;
    if (!t.dModel) {
      throw new Error('A learned-position config needs the width (n_embd, hidden_size, d_model or dim) '
        + 'as well as the table length.');
    }
    for (const [k, v] of [['dModel', t.dModel], ['maxLen', t.maxLen], ['seqLen', t.maxLen]]) setField(state, k, v, clamped);
    if (t.weights) r.learned = t;
    state.learnedSource = t.weights ? 'file' : 'init';  // its table, or the seeded one at its size
    r.scheme = r.scheme ?? 'learned';
    const name = t.name ? `position table “${t.name}”` : 'learned position table';
    read.push(`${name} ${t.maxLen} × ${t.dModel}${t.weights ? '' : ' (its shape only)'}`);
  }
  if (!r.scheme) {
    throw new Error(`${format} read, but it holds no position scheme this page can show `
      + `(no RoPE, ${MODEL_SCHEMES.map((m) => m.name ?? m.id).join(' or ')} settings, no position table).`);
  }
  if ((r.scheme === 'rope' || r.scheme === 'learned') && model.nHeads) read.push(`${model.nHeads} heads`);
  if (model.contextLength && !rope) setField(state, 'seqLen', model.contextLength, clamped);
  state.attnScheme = r.scheme;
  state.schemes = r.scheme === 'rope' ? 'sinusoidal,rope' : r.scheme === 'learned' ? FIELDS.schemes.value : r.scheme;
  return r;
}

/** GGUF metadata as JSON, in readModel's shape: its RoPE (ropeParamsFromConfig), heads and context length. */
function ggufModel(pe, metadata) {
  const rope = pe.ropeParamsFromConfig(metadata, { dialect: 'gguf' });
  const arch = metadata['general.architecture'];
  const number = (key) => (arch && typeof metadata[`${arch}.${key}`] === 'number' ? metadata[`${arch}.${key}`] : undefined);
  return { format: 'GGUF metadata', architecture: arch ?? '', nHeads: number('attention.head_count'),
    contextLength: number('context_length'), rope, warnings: [] };
}

/**
 * Settings for a pasted config object: a Hugging Face config.json (dialect 'hf', read by
 * readModel) or GGUF metadata as JSON ('gguf'). Resolves to settingsFromModel's result; rejects
 * with what could not be read.
 */
export async function readConfig(pe, config, { dialect = 'hf' } = {}) {
  let model;
  try {
    model = dialect === 'gguf' ? ggufModel(pe, config) : await pe.readModel(config);
  } catch (e) {
    // The package's messages start with the function that refused: the reader called none.
    const why = e.message.replace(/^(readModel|ropeParamsFromConfig): /, '');
    throw new Error(`Not ${dialect === 'gguf' ? 'GGUF metadata' : 'a config'} this page can read: ${why}`);
  }
  return settingsFromModel(model, { config: dialect === 'gguf' ? undefined : config });
}

// The config's name for what a setting holds, for the words about a clamped value.
const PUBLISHED_AS = { lTarget: 'max_position_embeddings', lTrain: 'original_max_position_embeddings', theta: 'rope_theta',
  winSize: 'sliding_window', winChunk: 'attention_chunk_size', iropeFloor: 'floor_scale', iropeAttn: 'attn_scale',
  ...Object.assign({}, ...MODEL_SCHEMES.map((m) => m.model.published)) };

/** The published values a setting's limit changed, in words ('' when none). */
function describeClamped(clamped) {
  if (!clamped?.length) return '';
  const n = (v) => v.toLocaleString('en-US');
  // The config's name beside the page's, unless the label has it already ("θ (rope_theta)").
  const name = (c) => (PUBLISHED_AS[c.key] && !c.label.includes(PUBLISHED_AS[c.key]) ? `${c.label} (${PUBLISHED_AS[c.key]})` : c.label);
  const each = clamped.map((c) => `${name(c)} is ${n(c.published)} `
    + `in the model, but ${c.label} here ${c.published > c.shown ? 'stops' : 'starts'} at ${n(c.limit)}, so the page shows `
    + `${n(c.shown)}`);
  return `Not shown as published: ${each.join('; ')}.`;
}

/** A reading in words, for the settings bar: "`label`: read …." with readModel's warnings and what was clamped. */
export function describeReading(label, r) {
  const clamped = describeClamped(r.clamped);
  return `${label}: read ${r.read.join('; ')}.${r.warnings.length ? ` Warnings: ${r.warnings.join('; ')}` : ''}`
    + `${clamped ? ` ${clamped}` : ''}`;
}
