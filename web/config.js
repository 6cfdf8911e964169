// Reading a model's config (a preset, a pasted config.json or GGUF metadata, or what readModel
// found in a file) into the explorer's settings. Every reading starts from the defaults, so nothing
// from the previous model remains. The RoPE keys are read by the package (ropeParamsFromConfig);
// this file only picks the scheme and copies sizes.
import { FIELDS, SCALINGS, defaults } from './state.js';

const clampField = (key, v) => {
  const f = FIELDS[key];
  if (typeof v !== 'number' || !Number.isFinite(v)) return undefined;
  return Math.min(f.max, Math.max(f.min, f.type === 'int' ? Math.round(v) : v));
};

/** Settings for RoPE parameters as the package returns them; longFactors go to `extras`. */
export const headRead = (p) => (p.rotaryOffset
  ? `head_dim ${p.headDim} (RoPE on dims ${p.rotaryOffset}–${p.rotaryOffset + p.rotaryDim - 1})` : `head_dim ${p.headDim}`);

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

/** Which scheme a config describes, from its keys: 'learned' | 'alibi' | 't5' | 'rope' | null. */
function schemeOfConfig(c) {
  const type = String(c.model_type ?? '').toLowerCase();
  if ('relative_attention_num_buckets' in c || /^(t5|mt5|umt5|longt5)$/.test(type)) return 't5';
  if (c.attn_config?.alibi === true || c.alibi === true || type === 'bloom' || (type === 'mpt' && c.attn_config?.alibi !== false)) return 'alibi';
  if ('n_positions' in c || c.position_embedding_type === 'absolute' || /^(gpt2|bert|roberta|opt|gpt_neo|distilbert|xlm-roberta)$/.test(type)) return 'learned';
  if ('rope_theta' in c || 'rope_scaling' in c || 'head_dim' in c || 'qk_rope_head_dim' in c || 'rotary_dim' in c) return 'rope';
  return null;
}

const first = (c, keys) => { for (const k of keys) if (typeof c[k] === 'number') return c[k]; return undefined; };

/**
 * Settings for a config object (HF config.json) or GGUF metadata. Returns { state, scheme, read,
 * longFactors } with state = defaults + what the config says; throws an Error saying what it could
 * not read. `hint`: the scheme when the caller knows it (presets).
 */
export function readConfig(pe, config, { dialect = 'hf', hint, layerType } = {}) {
  const state = defaults();
  let longFactors = null;
  const read = [];
  if (dialect === 'gguf') {
    const params = pe.ropeParamsFromConfig(config, { dialect: 'gguf' });
    const arch = config['general.architecture'];
    const ctx = arch ? config[`${arch}.context_length`] : undefined;
    const r = ropeSettings(params, typeof ctx === 'number' ? ctx : undefined);
    Object.assign(state, r.next, { attnScheme: 'rope' });
    const heads = arch ? config[`${arch}.attention.head_count`] : undefined;
    if (typeof heads === 'number') state.heads = clampField('heads', heads);
    return { state, scheme: 'rope', read: [headRead(params), `θ ${params.theta}`, `scaling ${state.scaling}`], longFactors: r.longFactors };
  }
  const c = config.text_config ?? config;
  const scheme = hint ?? schemeOfConfig(c);
  const heads = first(c, ['num_attention_heads', 'n_head', 'n_heads', 'num_heads']);
  const maxPositions = first(c, ['max_position_embeddings', 'n_positions', 'max_seq_len']);
  const hidden = first(c, ['hidden_size', 'n_embd', 'd_model']);
  if (heads !== undefined) { state.heads = clampField('heads', heads); read.push(`heads ${heads}`); }
  if (scheme === 'learned') {
    if (hidden === undefined || maxPositions === undefined) throw new Error('A learned-position config needs the width (n_embd or hidden_size) and the table length (n_positions or max_position_embeddings).');
    Object.assign(state, { dModel: clampField('dModel', hidden), maxLen: clampField('maxLen', maxPositions), seqLen: clampField('seqLen', maxPositions) });
    read.push(`d_model ${hidden}`, `max_len ${maxPositions}`);
  } else if (scheme === 'alibi') {
    if (heads === undefined) throw new Error('An ALiBi config needs the number of heads (n_head or n_heads): ALiBi has one slope per head.');
    state.maxBias = clampField('maxBias', c.attn_config?.alibi_bias_max ?? 8);
    if (hidden !== undefined) state.dModel = clampField('dModel', hidden);
    if (maxPositions !== undefined) state.seqLen = clampField('seqLen', maxPositions);
    read.push(`max bias ${state.maxBias}`);
  } else if (scheme === 't5') {
    state.t5Buckets = clampField('t5Buckets', c.relative_attention_num_buckets ?? 32);
    state.t5MaxDist = clampField('t5MaxDist', c.relative_attention_max_distance ?? 128);
    state.t5Bidir = c.is_decoder !== true;
    if (hidden !== undefined) state.dModel = clampField('dModel', hidden);
    read.push(`buckets ${state.t5Buckets}`, `max distance ${state.t5MaxDist}`);
  } else {
    let params;
    try {
      params = pe.ropeParamsFromConfig(config, layerType ? { layerType } : undefined);
    } catch (e) {
      throw new Error(`Not a config this page can read: no learned (n_positions), ALiBi (alibi), T5 (relative_attention_num_buckets) or RoPE keys. The RoPE reader said: ${e.message.replace(/^ropeParamsFromConfig: /, '')}`);
    }
    const r = ropeSettings(params, maxPositions);
    for (const [k, v] of Object.entries(r.next)) if (v !== undefined) state[k] = clampField(k, v) ?? v;
    longFactors = r.longFactors;
    // Issue 14: M-RoPE sections, sliding window, Llama 4's chunks and temperature (the config's keys).
    if (params.mrope) Object.assign(state, { mropeSection: params.mrope.section.join(','), mropeInterleaved: Boolean(params.mrope.interleaved) });
    if (typeof c.sliding_window === 'number') Object.assign(state, { winMask: 'window', winSize: clampField('winSize', c.sliding_window), winLen: clampField('winLen', 2 * c.sliding_window) });
    if (typeof c.attention_chunk_size === 'number') Object.assign(state, { winMask: 'chunk', winChunk: clampField('winChunk', c.attention_chunk_size) });
    if (typeof c.floor_scale === 'number') state.iropeFloor = clampField('iropeFloor', c.floor_scale);
    if (typeof c.attn_scale === 'number') state.iropeAttn = clampField('iropeAttn', c.attn_scale);
    if (params.mrope) read.push(`mrope_section ${state.mropeSection}${state.mropeInterleaved ? ' (interleaved)' : ''}`);
    for (const k of ['sliding_window', 'attention_chunk_size', 'floor_scale', 'attn_scale']) if (typeof c[k] === 'number') read.push(`${k} ${c[k]}`);
    read.push(headRead(params), `θ ${params.theta}`, `scaling ${state.scaling}`);
    if (maxPositions !== undefined) read.push(`L_target ${state.lTarget} (max_position_embeddings)`);
  }
  const s = scheme ?? 'rope';
  state.attnScheme = s;
  state.schemes = s === 'learned' ? FIELDS.schemes.value : s === 'rope' ? 'sinusoidal,rope' : s;
  return { state, scheme: s, read, longFactors };
}
