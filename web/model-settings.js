// What a model says, as the page's settings. The package reads every model (pe.readModel: a
// .gguf, .safetensors, .npy, or a config.json as a file, pasted, or a preset's); one function here,
// settingsFromModel, turns what it found into settings, so a preset, a pasted config and an opened
// file read alike. Each reading starts from the defaults: nothing of the previous model remains.
// GGUF metadata pasted as JSON has no readModel: pe.ropeParamsFromConfig reads its RoPE keys, and
// ggufModel gives the result readModel's shape.
import { FIELDS, SCALINGS, defaults } from './state.js';

/** Sets field `key` to `v` within the field's rule (a whole number rounded, a number clamped); skips undefined. */
function setField(state, key, v) {
  if (v === undefined) return;
  const f = FIELDS[key];
  if (typeof v !== 'number' || (f.type !== 'int' && f.type !== 'num')) { state[key] = v; return; }
  if (Number.isFinite(v)) state[key] = Math.min(f.max, Math.max(f.min, f.type === 'int' ? Math.round(v) : v));
}

/** head_dim in words, with the rotated slice of an MLA head. */
export const headRead = (p) => (p.rotaryOffset
  ? `head_dim ${p.headDim} (RoPE on dims ${p.rotaryOffset}–${p.rotaryOffset + p.rotaryDim - 1})` : `head_dim ${p.headDim}`);

/** Settings for RoPE parameters as the package returns them; longFactors go to `extras`. */
export function ropeSettings(params, maxPositions) {
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

/**
 * The width of an ALiBi or T5 config (readModel reports one only with a position table): the keys
 * cpp/src/model_config.cpp reads for it.
 */
function configWidth(config) {
  const c = config?.text_config ?? config;
  const v = c && ['hidden_size', 'n_embd', 'd_model', 'dim'].map((k) => c[k]).find((x) => typeof x === 'number');
  return v || undefined;
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
  const { state, read } = r;
  const rs = ropeSettings(p, model.contextLength);
  for (const [k, v] of Object.entries(rs.next)) setField(state, k, v);
  r.longFactors = rs.longFactors;
  const contextLength = p.scaling?.contextLength ?? null;
  if (p.freqFactors || contextLength) {
    // What the settings cannot hold: freq_factors (a Llama-3.1 GGUF), LongRoPE's context (web/rope-params.js).
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
    setField(state, 'winSize', window);
    setField(state, 'winLen', 2 * window);
    read.push(`sliding_window ${window}`);
  }
  const irope = model.irope;
  if (irope) {
    if (irope.chunkSize) { state.winMask = 'chunk'; setField(state, 'winChunk', irope.chunkSize); }
    setField(state, 'iropeFloor', irope.floorScale);
    setField(state, 'iropeAttn', irope.attnScale);
    const chunk = irope.chunkSize ? `attention_chunk_size ${irope.chunkSize}, ` : '';
    read.push(`${chunk}floor_scale ${irope.floorScale}, attn_scale ${irope.attnScale}`);
  }
  if (model.contextLength) read.push(`L_target ${state.lTarget}`);
}

/**
 * Settings for readModel's result (ModelInfo, posenc.d.ts): { state, scheme, read (what was read,
 * in words), warnings, longFactors, ropeFile, learned, irope }; throws an Error saying what the page
 * cannot use. layerType: the layers to show of a model with two kinds ('sliding_attention': Gemma
 * 3's local layers; else the full-attention ones). config: the config object it was read from
 * (a preset or a pasted one; none for a file): the width of ALiBi and T5 models, and how it gives
 * its NoPE layers. learned: the position table ({ name, weights, maxLen, dModel }) when the file
 * holds its weights; ropeFile: what the settings cannot hold (freq_factors, LongRoPE's context);
 * irope: { info: readModel's Llama 4 layers or null, given, interval }.
 */
export function settingsFromModel(model, { layerType, config } = {}) {
  const state = defaults();
  const format = model.format === 'config' ? 'config.json' : model.format;
  const r = {
    state, scheme: null, read: [`${format}${model.architecture ? ` (${model.architecture})` : ''}`],
    warnings: model.warnings ?? [], longFactors: null, ropeFile: null, learned: null,
    irope: { info: model.irope ?? null, ...noRopeKeys(config) },
  };
  const { read } = r;
  if (model.nHeads) setField(state, 'heads', model.nHeads);
  const rope = layerType === 'sliding_attention' ? model.sliding?.params ?? model.rope : model.rope;
  if (rope) {
    readRope(r, rope, model);
    r.scheme = 'rope';
  }
  const width = configWidth(config);
  if (model.alibi) {
    const { nHeads, maxBias } = model.alibi;
    if (!nHeads) throw new Error('An ALiBi model needs the number of heads (n_head or n_heads): ALiBi has one slope per head.');
    setField(state, 'heads', nHeads);
    setField(state, 'maxBias', maxBias);
    setField(state, 'dModel', width);
    r.scheme = 'alibi';
    read.push(`ALiBi ${nHeads} heads, max bias ${maxBias}`);
  }
  if (model.t5) {
    const t = model.t5;
    if (t.nHeads) setField(state, 'heads', t.nHeads);
    setField(state, 't5Buckets', t.numBuckets);
    setField(state, 't5MaxDist', t.maxDistance);
    state.t5Bidir = t.bidirectional;
    setField(state, 'dModel', width);
    r.scheme = 't5';
    read.push(`T5 ${t.numBuckets} buckets, max distance ${t.maxDistance}`);
  }
  if (model.positionTable) {
    const t = model.positionTable;
    if (!t.dModel) {
      throw new Error('A learned-position config needs the width (n_embd, hidden_size, d_model or dim) '
        + 'as well as the table length.');
    }
    for (const [k, v] of [['dModel', t.dModel], ['maxLen', t.maxLen], ['seqLen', t.maxLen]]) setField(state, k, v);
    if (t.weights) r.learned = t;
    r.scheme = r.scheme ?? 'learned';
    const name = t.name ? `position table “${t.name}”` : 'learned position table';
    read.push(`${name} ${t.maxLen} × ${t.dModel}${t.weights ? '' : ' (its shape only)'}`);
  }
  if (!r.scheme) {
    throw new Error(`${format} read, but it holds no position scheme this page can show `
      + '(no RoPE, ALiBi or T5 settings, no position table).');
  }
  if ((r.scheme === 'rope' || r.scheme === 'learned') && model.nHeads) read.push(`${model.nHeads} heads`);
  if (model.contextLength && !rope) setField(state, 'seqLen', model.contextLength);
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
  if (dialect === 'gguf') return settingsFromModel(ggufModel(pe, config));
  let model;
  try {
    model = await pe.readModel(config);
  } catch (e) {
    throw new Error(`Not a config this page can read: ${e.message.replace(/^readModel: /, '')}`);
  }
  return settingsFromModel(model, { config });
}

/** A reading in words, for the settings bar: "`label`: read …." with readModel's warnings. */
export function describeReading(label, r) {
  return `${label}: read ${r.read.join('; ')}.${r.warnings.length ? ` Warnings: ${r.warnings.join('; ')}` : ''}`;
}
