// Opening a model file (.gguf, .safetensors, config.json, .npy): the package's readModel parses
// it; this file turns what it found into the page's settings. Without readModel in the package,
// the file controls stay hidden and nothing here runs.
import { headRead, ropeSettings } from './config.js';
import { FIELDS, defaults } from './state.js';

export const hasReadModel = (pe) => typeof pe.readModel === 'function';

const clamp = (key, v) => Math.min(FIELDS[key].max, Math.max(FIELDS[key].min, Math.round(v)));

/**
 * Settings for readModel's result (ModelInfo): { state, longFactors, ropeFile, learned, scheme,
 * read, irope, warnings }. learned: the position table ({ name, weights, maxLen, dModel }) when the file
 * holds its weights; ropeFile: what the settings cannot hold (freq_factors, LongRoPE's context);
 * irope: readModel's Llama 4 layers (which use RoPE), null for other models.
 */
function settingsFromModel(model) {
  const state = defaults();
  let longFactors = null, ropeFile = null, learned = null, scheme = null;
  const read = [`${model.format}${model.architecture ? ` (${model.architecture})` : ''}`];
  if (model.nHeads) state.heads = clamp('heads', model.nHeads);
  if (model.rope) {
    const p = model.rope;
    const r = ropeSettings(p, model.contextLength);
    for (const [k, v] of Object.entries(r.next)) if (v !== undefined) state[k] = FIELDS[k].type === 'int' ? clamp(k, v) : v;
    longFactors = r.longFactors;
    ropeFile = { headDim: state.dModel, partial: state.partial, freqFactors: p.freqFactors ?? null, contextLength: p.scaling?.contextLength ?? null };
    scheme = 'rope';
    read.push(`RoPE ${headRead(p)}, θ ${p.theta}, ${p.layout} pairs, scaling ${state.scaling}${p.freqFactors ? ', freq_factors' : ''}`);
  }
  if (model.sliding?.window) read.push(`sliding window ${model.sliding.window}`);
  if (model.alibi) {
    state.heads = clamp('heads', model.alibi.nHeads);
    state.maxBias = model.alibi.maxBias;
    scheme = 'alibi';
    read.push(`ALiBi ${model.alibi.nHeads} heads, max bias ${model.alibi.maxBias}`);
  }
  if (model.t5) {
    Object.assign(state, { heads: clamp('heads', model.t5.nHeads), t5Buckets: clamp('t5Buckets', model.t5.numBuckets), t5MaxDist: clamp('t5MaxDist', model.t5.maxDistance), t5Bidir: model.t5.bidirectional });
    scheme = 't5';
    read.push(`T5 ${model.t5.numBuckets} buckets, max distance ${model.t5.maxDistance}`);
  }
  if (model.positionTable) {
    const t = model.positionTable;
    Object.assign(state, { dModel: clamp('dModel', t.dModel), maxLen: clamp('maxLen', t.maxLen), seqLen: clamp('seqLen', t.maxLen) });
    if (t.weights) learned = t;
    scheme = scheme ?? 'learned';
    read.push(`position table “${t.name}” ${t.maxLen} × ${t.dModel}${t.weights ? '' : ' (its shape only)'}`);
  }
  if (model.contextLength && !model.rope) state.seqLen = clamp('seqLen', model.contextLength);
  if (!scheme) throw new Error(`${model.format} file read, but it holds no position scheme this page can show (no RoPE, ALiBi or T5 settings, no position table).`);
  state.attnScheme = scheme;
  state.schemes = scheme === 'rope' ? 'sinusoidal,rope' : scheme === 'learned' ? FIELDS.schemes.value : scheme;
  return { state, longFactors, ropeFile, learned, scheme, read, irope: model.irope ?? null, warnings: model.warnings ?? [] };
}

/** Reads `file` with the package; resolves to settingsFromModel's result, rejects with readModel's message. */
export async function openModelFile(pe, file) {
  const model = await pe.readModel(file);
  // A .npy holds one unnamed array: call its table by the file's name.
  if (model.positionTable && !model.positionTable.name) model.positionTable = { ...model.positionTable, name: file.name };
  return settingsFromModel(model);
}

/**
 * Wires a file input and dropping a file anywhere on the page to `onModel(result, file)`, and
 * `onError(message)`. Does nothing (the controls stay hidden) without readModel.
 */
export function setupModelFile(pe, { container, input, onModel, onError }) {
  if (!hasReadModel(pe)) return;
  container.hidden = false;
  const open = async (file) => {
    try {
      onModel(await openModelFile(pe, file), file);
    } catch (e) {
      onError(`${file.name}: ${e.message}`);
    }
  };
  input.addEventListener('change', () => { if (input.files[0]) open(input.files[0]); input.value = ''; });
  document.addEventListener('dragover', (e) => { if (e.dataTransfer?.types.includes('Files')) e.preventDefault(); });
  document.addEventListener('drop', (e) => {
    // A drop on the learned view's own file box is that view's; anywhere else opens the model.
    if (!e.dataTransfer?.files.length || e.target.closest?.('[data-drop="learned"]')) return;
    e.preventDefault();
    open(e.dataTransfer.files[0]);
  });
}
