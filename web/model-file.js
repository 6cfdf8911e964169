// Opening a model file (.gguf, .safetensors, config.json, .npy): the package's readModel parses
// it; this file turns what it found into the page's settings. Without readModel in the package,
// the file controls stay hidden and nothing here runs.
import { ropeSettings } from './config.js';
import { FIELDS, defaults } from './state.js';

export const hasReadModel = (pe) => typeof pe.readModel === 'function';

const clamp = (key, v) => Math.min(FIELDS[key].max, Math.max(FIELDS[key].min, Math.round(v)));

/**
 * Settings for readModel's result: { state, longFactors, learned, scheme, read } where learned is
 * the position table ({ name, weights, maxLen, dModel }) when the file holds one.
 */
export function settingsFromModel(pe, model) {
  let state = defaults();
  let longFactors = null, learned = null, scheme = null;
  const read = [`${model.format}${model.architecture ? ` (${model.architecture})` : ''}`];
  if (model.rope) {
    const r = ropeSettings(model.rope.params, model.rope.maxPositionEmbeddings);
    for (const [k, v] of Object.entries(r.next)) if (v !== undefined) state[k] = typeof v === 'number' && FIELDS[k].type === 'int' ? clamp(k, v) : v;
    longFactors = r.longFactors;
    scheme = 'rope';
    read.push(`RoPE head_dim ${model.rope.params.headDim}, θ ${model.rope.params.theta}, scaling ${state.scaling}`);
  }
  if (model.alibi) {
    state.heads = clamp('heads', model.alibi.nHeads);
    state.maxBias = model.alibi.maxBias;
    scheme = 'alibi';
    read.push(`ALiBi ${model.alibi.nHeads} heads, max bias ${model.alibi.maxBias}`);
  }
  if (model.t5) {
    state.t5Buckets = clamp('t5Buckets', model.t5.numBuckets);
    state.t5MaxDist = clamp('t5MaxDist', model.t5.maxDistance);
    state.t5Bidir = model.t5.bidirectional;
    scheme = 't5';
    read.push(`T5 ${model.t5.numBuckets} buckets, max distance ${model.t5.maxDistance}`);
  }
  if (model.positionTable) {
    const t = model.positionTable;
    learned = t;
    Object.assign(state, { dModel: clamp('dModel', t.dModel), maxLen: clamp('maxLen', t.maxLen), seqLen: clamp('seqLen', t.maxLen) });
    scheme = scheme ?? 'learned';
    read.push(`position table "${t.name}" ${t.maxLen} × ${t.dModel}`);
  }
  if (!scheme) throw new Error(`${model.format} file read, but it holds no position scheme this page can show (no RoPE, ALiBi, T5 settings or position table).`);
  state.attnScheme = scheme;
  state = { ...state, schemes: scheme === 'rope' ? 'sinusoidal,rope' : scheme === 'learned' ? FIELDS.schemes.value : scheme };
  return { state, longFactors, learned, scheme, read, warnings: model.warnings ?? [] };
}

/** Reads `file` with the package; resolves to settingsFromModel's result, rejects with readModel's message. */
export async function openModelFile(pe, file) {
  const model = await pe.readModel(file);
  return settingsFromModel(pe, model);
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
