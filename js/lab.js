// pe.lab: the extrapolation lab (docs/lab.md) over embind_lab.cpp. Arguments' JS types are
// checked here; their rules are C++'s, asked before anything is allocated where C++ has a check
// for them (footprint, shape_check, Dataset::check, lr_check, run_check, extend_check,
// random_positions_check), and its status messages are re-worded with the JS names. Models and
// datasets hold WASM memory: free them with delete() (or `using`); a second delete() is a no-op.
// Every result is a fresh copy.

import {
  MAX_SIZE_T, PosencRangeError, PosencTypeError, checkChoice as checkChoiceOf, checkInt as checkIntIn,
  checkNumber, checkOptions, describe, renamer
} from './checks.js';
import { HeapObject, LIVE, heapTools } from './heap.js';

const SIZES = { small: { dModel: 64, nLayers: 2, nHeads: 4 }, tiny: { dModel: 32, nLayers: 2, nHeads: 2 } };

const JS_NAMES = {
  vocab_size: 'vocabSize', d_model: 'dModel', n_layers: 'nLayers', n_heads: 'nHeads', train_len: 'trainLength',
  seq_len: 'length', head_dim: 'headDim', rope_scaling: 'ropeScaling', total_steps: 'steps', peak_lr: 'lr',
  eval_batch: 'evalBatch', max_positions: 'maxPositions', random_positions: 'randomPositions', max_position: 'maxPosition',
};
// Memory is checked here before C++ allocates it: in WASM a failed C++ allocation would abort the
// module instead of returning a Status. At most 2^28 floats (1 GiB) for parameters + gradients +
// AdamW moments, and as much again for one call's activations; the counts are C++'s (lab::footprint).
const MAX_FLOATS = 2 ** 28;

// A 64-bit seed (a number below 2^53 or a bigint below 2^64) as the [hi, lo] 32-bit halves C++ takes.
function seedHalves(fn, name, seed) {
  if (typeof seed === 'bigint') {
    if (seed < 0n || seed >= 2n ** 64n) throw new PosencRangeError(`${fn}: ${name} must be in [0, 2^64) (got ${seed})`);
    return [Number(seed >> 32n), Number(seed & 0xFFFFFFFFn)];
  }
  checkIntIn(fn, name, seed, 0, Number.MAX_SAFE_INTEGER);
  return [Math.floor(seed / 2 ** 32), seed % 2 ** 32];
}

const jsMessage = renamer(JS_NAMES);
const checkInt = (fn, name, v, min, max = 2 ** 31 - 1) => checkIntIn(fn, name, v, min, max);
const checkChoice = (fn, name, v, choices) => checkChoiceOf(fn, name, v, Object.fromEntries(choices.map((c) => [c, c])));

// Every function below takes the lab's context (wrapLab's): { module, scoped, status, schemes, tasks,
// ropeScalings } — the Embind module, its heap tools (heap.js, with the lab's names) and the names
// the C++ lab has (lab.hpp).

// lab::footprint of a config (createModel's names) for calls on [batch][length]; its message
// states the config's rules (Model::create's), with what the config gave.
function footprint(lab, fn, c, batch, length) {
  const [message, params, activations] = lab.module.labFootprint(c.vocabSize, c.dModel, c.nLayers, c.nHeads, c.trainLength,
    c.maxPositions || 0, c.scheme, batch, length);
  lab.status(fn, message, { values: c });
  return { params, activations };
}
// lab::shape_check: the rule of a call's rows (batch of them, `length` tokens each), asked before
// the tokens are copied in or out.
function checkShape(lab, fn, batch, length) {
  lab.status(fn, lab.module.labShapeCheck(batch, length), { values: { batch, length } });
}
function checkParams(lab, fn, config) {
  const { params } = footprint(lab, fn, config, 1, 2);
  if (4 * params > MAX_FLOATS) {
    throw new PosencRangeError(`${fn}: ${params} parameters (×4 with gradients and AdamW moments) exceed ${MAX_FLOATS / 4}`);
  }
}
function checkWorkspace(lab, fn, config, batch, length) {
  const n = footprint(lab, fn, config, batch, length).activations;
  if (n > MAX_FLOATS) {
    throw new PosencRangeError(`${fn}: batch ${batch} × length ${length} needs ${n} floats of activations, more than ${MAX_FLOATS} (1 GiB)`);
  }
}
// An Int32Array of n values that fill(heap address) writes, returning C++'s status message.
function int32Out(lab, fn, n, fill) {
  return lab.scoped(fn, (alloc) => {
    const out = alloc(n * 4);
    lab.status(fn, fill(out));
    return lab.module.HEAP32.slice(out >> 2, (out >> 2) + n);
  });
}

// ids (tokens, positions): an Int32Array, or an array of integers within int32 (the type they cross
// into C++ as). Their rules (tokens in [0, vocabSize), positions increasing within [0, maxPositions))
// are C++'s, which the call's status gives.
function checkIds(fn, name, ids) {
  if (ids instanceof Int32Array) return ids;
  if (!Array.isArray(ids)) throw new PosencTypeError(`${fn}: ${name} must be an Int32Array or an array of integers (got ${describe(ids)})`);
  for (let i = 0; i < ids.length; i++) checkIntIn(fn, `${name}[${i}]`, ids[i], -(2 ** 31), 2 ** 31 - 1);
  return ids;
}
// tokens: batch × length ids. → batch.
function checkTokens(fn, tokens, length) {
  checkIds(fn, 'tokens', tokens);
  if (tokens.length === 0 || tokens.length % length !== 0) {
    throw new PosencRangeError(`${fn}: tokens.length must be a positive multiple of length = ${length} (got ${tokens.length})`);
  }
  return tokens.length / length;
}
// positions (optional): one per token. Returns them, or null when not given.
function checkPositions(fn, positions, tokens) {
  if (positions === undefined) return null;
  checkIds(fn, 'positions', positions);
  if (positions.length !== tokens.length) {
    throw new PosencRangeError(`${fn}: positions must have one entry per token (${tokens.length}, got ${positions.length})`);
  }
  return positions;
}

class LabModel extends HeapObject {
  #lab;
  #config;
  constructor(lab, ptr, config) {
    super(ptr, (p) => lab.module.labModelDelete(p), 'model');
    this.#lab = lab;
    this.#config = config;
  }
  #live(fn) { return this[LIVE](fn); }
  // options.length: trainLength if not given; a size_t here, its rule C++'s (shape_check).
  #length(fn, length) {
    if (length === undefined) return this.#config.trainLength;
    checkShape(this.#lab, fn, 1, checkInt(fn, 'length', length, 0, MAX_SIZE_T));
    return length;
  }
  // The checks and heap copies of a batch of rows that trainStep and lossAndGradients share:
  // run(tokens, batch, length, positions) gets heap addresses (positions 0 when not given).
  #rows(fn, tokens, len, given, run) {
    const length = this.#length(fn, len);
    const batch = checkTokens(fn, tokens, length);
    const positions = checkPositions(fn, given, tokens);
    checkShape(this.#lab, fn, batch, length);
    checkWorkspace(this.#lab, fn, this.#config, batch, length);
    return this.#lab.scoped(fn, (alloc, put) => run(put(tokens, Int32Array), batch, length, put(positions, Int32Array)));
  }
  /** { vocabSize, dModel, nLayers, nHeads, trainLength, maxPositions, scheme, seed } */
  get config() { return { ...this.#config }; }
  /** AdamW steps taken. */
  get steps() { return this.#lab.module.labModelSteps(this.#live('steps')); }
  /** What the model learned about positions, by name (docs/lab.md): { name: { shape, values } }. */
  positionParameters() {
    const fn = 'positionParameters';
    const [message, out] = this.#lab.module.labModelPosition(this.#live(fn));
    this.#lab.status(fn, message);
    return out;
  }
  /** [{ name, shape }] in the model's order. */
  get tensors() { return this.#lab.module.labModelTensors(this.#live('tensors')).map(({ name, shape }) => ({ name, shape })); }

  trainStep(tokens, options) {
    const fn = 'trainStep';
    const ptr = this.#live(fn);
    const { lr = 1e-3, length: len, positions: given } = checkOptions(fn, options, ['lr', 'length', 'positions']);
    checkNumber(fn, 'lr', lr);
    this.#lab.status(fn, this.#lab.module.labLrCheck(lr), { values: { lr } });  // C++'s rule (lr_check)
    return this.#rows(fn, tokens, len, given, (tok, batch, length, pos) => {
      const [message, loss] = this.#lab.module.labTrainStep(ptr, tok, batch, length, lr, pos);
      this.#lab.status(fn, message);
      return loss;
    });
  }

  lossAndGradients(tokens, options) {
    const fn = 'lossAndGradients';
    const ptr = this.#live(fn);
    const { length: len, positions: given } = checkOptions(fn, options, ['length', 'positions']);
    const { module, status } = this.#lab;
    return this.#rows(fn, tokens, len, given, (tok, batch, length, pos) => {
      const [message, loss] = module.labLossAndGradients(ptr, tok, batch, length, pos);
      status(fn, message);
      const gradients = {};
      for (const t of module.labModelTensors(ptr)) {
        const n = t.shape.reduce((a, b) => a * b, 1);
        gradients[t.name] = module.HEAPF32.slice(t.grad >> 2, (t.grad >> 2) + n);
      }
      return { loss, gradients };
    });
  }

  /** { loss, positionLoss } — or { loss: null, noEmbedding: true } for learned beyond maxPositions. */
  evaluate(tokens, options) {
    const fn = 'evaluate';
    const ptr = this.#live(fn);
    const { module, status, scoped } = this.#lab;
    const { length: len, ropeScaling = 'none' } = checkOptions(fn, options, ['length', 'ropeScaling']);
    const length = this.#length(fn, len);
    checkChoice(fn, 'ropeScaling', ropeScaling, this.#lab.ropeScalings);
    if (ropeScaling !== 'none' && this.#config.scheme !== 'rope' && this.#config.scheme !== 'xpos') {
      throw new PosencRangeError(`${fn}: ropeScaling needs the rope or xpos scheme (this model is '${this.#config.scheme}')`);
    }
    const batch = checkTokens(fn, tokens, length);
    checkShape(this.#lab, fn, batch, length);
    if (this.#config.scheme === 'learned' && length > this.#config.maxPositions) {
      return { loss: null, noEmbedding: true, positionLoss: null };
    }
    checkWorkspace(this.#lab, fn, this.#config, 1, length);  // evaluate runs one row at a time
    return scoped(fn, (alloc, put) => {
      const tok = put(tokens, Int32Array);
      const pos = alloc((length - 1) * 8);
      const [message, loss] = module.labEvaluate(ptr, tok, batch, length, ropeScaling, pos);
      status(fn, message);
      return { loss, noEmbedding: false, positionLoss: module.HEAPF64.slice(pos >> 3, (pos >> 3) + length - 1) };
    });
  }

  /** The weights as safetensors bytes (F32, shapes [in][out]; metadata: the config). */
  exportWeights() {
    return safetensorsOf(this.#lab.module, this.#live('exportWeights'), this.#config);
  }

  /** Loads safetensors bytes with exactly this model's tensor names, F32 and shapes. */
  loadWeights(bytes) {
    const fn = 'loadWeights';
    loadSafetensors(this.#lab.module, fn, this.#live(fn), bytes);
  }
}

// LabModel.exportWeights: the model at ptr as safetensors bytes, config in the metadata.
function safetensorsOf(module, ptr, config) {
  const tensors = module.labModelTensors(ptr);
  const header = { __metadata__: { format: 'posenc.lab', config: JSON.stringify(config) } };
  let offset = 0;
  for (const t of tensors) {
    const bytes = t.shape.reduce((a, b) => a * b, 1) * 4;
    header[t.name] = { dtype: 'F32', shape: t.shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += ' '.repeat((8 - (json.length % 8)) % 8);  // the data starts 8-byte aligned
  const head = new TextEncoder().encode(json);
  const out = new Uint8Array(8 + head.length + offset);
  new DataView(out.buffer).setBigUint64(0, BigInt(head.length), true);
  out.set(head, 8);
  for (const t of tensors) {
    const n = t.shape.reduce((a, b) => a * b, 1);
    const src = module.HEAPU8.subarray(t.data, t.data + n * 4);
    out.set(src, 8 + head.length + header[t.name].data_offsets[0]);
  }
  return out;
}

// LabModel.loadWeights: safetensors bytes into the model at ptr, every tensor checked first.
function loadSafetensors(module, fn, ptr, bytes) {
  if (!(bytes instanceof Uint8Array)) throw new PosencTypeError(`${fn}: bytes must be a Uint8Array (got ${describe(bytes)})`);
  if (bytes.length < 8) throw new PosencRangeError(`${fn}: bytes is not a safetensors file (${bytes.length} bytes)`);
  const n = Number(new DataView(bytes.buffer, bytes.byteOffset, 8).getBigUint64(0, true));
  if (n > bytes.length - 8) throw new PosencRangeError(`${fn}: bytes is not a safetensors file (header of ${n} bytes)`);
  let header;
  try {
    header = JSON.parse(new TextDecoder().decode(bytes.subarray(8, 8 + n)));
  } catch {
    throw new PosencRangeError(`${fn}: bytes is not a safetensors file (header is not JSON)`);
  }
  const base = 8 + n;
  const tensors = module.labModelTensors(ptr);
  const names = new Set(tensors.map((t) => t.name));
  for (const key of Object.keys(header)) {
    if (key !== '__metadata__' && !names.has(key)) throw new PosencRangeError(`${fn}: unexpected tensor ${JSON.stringify(key)}`);
  }
  const plan = tensors.map((t) => {
    const e = header[t.name];
    if (!e) throw new PosencRangeError(`${fn}: missing tensor ${JSON.stringify(t.name)}`);
    if (e.dtype !== 'F32') throw new PosencRangeError(`${fn}: ${t.name} must be F32 (got ${describe(e.dtype)})`);
    if (!Array.isArray(e.shape) || e.shape.join(',') !== t.shape.join(',')) {
      throw new PosencRangeError(`${fn}: ${t.name} must have shape [${t.shape}] (got ${JSON.stringify(e.shape)})`);
    }
    const [a, b] = e.data_offsets ?? [];
    const size = t.shape.reduce((x, y) => x * y, 1) * 4;
    if (!Number.isInteger(a) || b - a !== size || a < 0 || base + b > bytes.length) {
      throw new PosencRangeError(`${fn}: ${t.name} has bad data_offsets ${JSON.stringify(e.data_offsets)}`);
    }
    return { dst: t.data, src: bytes.subarray(base + a, base + b) };
  });
  for (const { dst, src } of plan) module.HEAPU8.set(src, dst);  // all checked first: all or nothing
}

class LabDataset extends HeapObject {
  #lab;
  constructor(lab, ptr, task) {
    super(ptr, (p) => lab.module.labDatasetDelete(p), 'dataset');
    this.#lab = lab;
    this.task = task;
    this.vocabSize = lab.module.labDatasetVocabSize(ptr);
    const h = lab.module.labDatasetEntropyRate(ptr);
    /** markov: the exact entropy rate in nats/token; null for copy and text. */
    this.entropyRate = Number.isNaN(h) ? null : h;
  }
  #live(fn) { return this[LIVE](fn); }
  /** The least expected mean loss over a row of `length` (null if unknown). */
  floor(length) {
    checkShape(this.#lab, 'floor', 1, checkInt('floor', 'length', length, 0, MAX_SIZE_T));
    const f = this.#lab.module.labDatasetFloor(this.#live('floor'), length);
    return Number.isNaN(f) ? null : f;
  }
  /** Int32Array [batch][length], a function of (dataset, seed); seed a number or a 64-bit bigint. */
  sample(batch, length, seed = 0) {
    const fn = 'sample';
    const ptr = this.#live(fn);
    // size_t here; their rule is C++'s (shape_check), asked before the heap.
    checkShape(this.#lab, fn, checkInt(fn, 'batch', batch, 0, MAX_SIZE_T), checkInt(fn, 'length', length, 0, MAX_SIZE_T));
    const [hi, lo] = seedHalves(fn, 'seed', seed);
    return int32Out(this.#lab, fn, batch * length, (out) => this.#lab.module.labDatasetSample(ptr, out, batch, length, hi, lo));
  }
  static ptrOf(d) { return d.#live('run'); }
}

function dataset(lab, options) {
  const fn = 'dataset';
  const { task = 'markov', seed = 0, vocabSize = 32, peak = 3, text } = checkOptions(fn, options,
    ['task', 'seed', 'vocabSize', 'peak', 'text']);
  checkChoice(fn, 'task', task, lab.tasks);
  checkInt(fn, 'seed', seed, 0, Number.MAX_SAFE_INTEGER);
  checkInt(fn, 'vocabSize', vocabSize, 0);
  checkNumber(fn, 'peak', peak);
  let bytes = new Uint8Array(0);
  if (task === 'text') {
    if (typeof text === 'string') bytes = new TextEncoder().encode(text);
    else if (text instanceof Uint8Array) bytes = text;
    else throw new PosencTypeError(`${fn}: text must be a string or a Uint8Array for task 'text' (got ${describe(text)})`);
  }
  // The rules are C++'s (Dataset::check), asked before the text is copied into the heap.
  lab.status(fn, lab.module.labDatasetCheck(task, vocabSize, peak, bytes.length), {
    values: { vocabSize, peak }, note: (m) => (/^text\b/.test(m) ? ` (got ${bytes.length})` : ''),
  });
  return lab.scoped(fn, (alloc, put) => {
    const [message, ptr] = lab.module.labDatasetCreate(task, vocabSize, seed, peak, put(bytes, Uint8Array), bytes.length);
    lab.status(fn, message);
    return new LabDataset(lab, ptr, task);
  });
}

function createModel(lab, options) {
  const fn = 'createModel';
  const { vocabSize = 32, dModel = 64, nLayers = 2, nHeads = 4, trainLength = 64, maxPositions: maxGiven, scheme = 'rope',
    seed = 0 } = checkOptions(fn, options, ['vocabSize', 'dModel', 'nLayers', 'nHeads', 'trainLength', 'maxPositions', 'scheme', 'seed']);
  // Sizes: their JS type here (integers C++ takes as size_t; maxPositions >= 1, as C++'s 0 is "left
  // out"), their rules C++'s: footprint checks the config (Model::create's rules) before anything is allocated.
  for (const [name, v] of Object.entries({ vocabSize, dModel, nLayers, nHeads, trainLength })) checkInt(fn, name, v, 0);
  const maxPositions = maxGiven === undefined ? trainLength : checkInt(fn, 'maxPositions', maxGiven, 1);
  checkChoice(fn, 'scheme', scheme, lab.schemes);
  checkInt(fn, 'seed', seed, 0, Number.MAX_SAFE_INTEGER);
  checkParams(lab, fn, { vocabSize, dModel, nLayers, nHeads, trainLength, maxPositions, scheme });
  const [message, ptr] = lab.module.labModelCreate(vocabSize, dModel, nLayers, nHeads, trainLength, maxPositions, scheme, seed);
  lab.status(fn, message);
  return new LabModel(lab, ptr, { vocabSize, dModel, nLayers, nHeads, trainLength, maxPositions, scheme, seed });
}

// experiment's options o (the card's model and schedule, the seeds; size: o.size's) → config, checked.
function experimentConfig(fn, o, size) {
  // Sizes: integers within what C++ takes (size_t) and the caps of a run here (batch, evalBatch,
  // steps, seeds; warmupSteps <= steps); their rules are C++'s: the model's Model::create's
  // (footprint), the run's run_check's and extend_check's, asked in experiment().
  const steps = checkInt(fn, 'steps', o.steps ?? 2000, 0, 1e7);
  const config = {
    dModel: checkInt(fn, 'dModel', o.dModel ?? size.dModel, 0),
    nLayers: checkInt(fn, 'nLayers', o.nLayers ?? size.nLayers, 0),
    nHeads: checkInt(fn, 'nHeads', o.nHeads ?? size.nHeads, 0),
    trainLength: checkInt(fn, 'trainLength', o.trainLength ?? 64, 0),
    batch: checkInt(fn, 'batch', o.batch ?? 16, 0, 4096),
    evalBatch: checkInt(fn, 'evalBatch', o.evalBatch ?? 16, 0, 4096),
    steps,
    warmupSteps: checkInt(fn, 'warmupSteps', o.warmupSteps ?? Math.min(steps, Math.max(1, Math.floor(steps / 20))), 0, steps),
    lr: checkNumber(fn, 'lr', o.lr ?? 1e-2),
    seed: checkInt(fn, 'seed', o.seed ?? 1, 0, Number.MAX_SAFE_INTEGER - 1024),
    seeds: checkInt(fn, 'seeds', o.seeds ?? 1, 1, 1024),
    randomPositions: 0,
  };
  return config;
}

// One C++ call of experiment (kind.call) for scheme and seed on data. An exception thrown by
// onProgress must not unwind through the C++ frames (their memory would leak): it cancels the run,
// and is rethrown once C++ has returned.
function experimentCall(lab, fn, kind, data, config, scheme, seed, onProgress) {
  let thrown = null;
  const progress = onProgress
    ? (step, totalSteps, loss) => {
      try {
        return onProgress({ scheme, seed, step, totalSteps, loss }) !== false;
      } catch (e) {
        thrown = e;
        return false;
      }
    }
    : undefined;
  const [message, result] = kind.call(LabDataset.ptrOf(data), { ...config, seed }, scheme, progress);
  if (thrown) throw thrown;
  lab.status(fn, message);
  return { scheme, seed, ...result };
}

// What run() and extend() share: the options of a run (the card's model, schedule and seeds), the
// checks before anything is allocated, and one C++ call per (scheme, seed) on the same data.
// kind: { keys (extra option names), schemes (the default and the ones allowed), extra(o, config)
// (adds its options to config) → { maxLength (longest evaluated) }, floorLengths(config),
// check(task, config) → C++'s message on the config, call(data, config, scheme, progress) →
// [message, result] }. Returns { task, config, entropyRate,
// floor: { length: floor }, results: [{ scheme, seed, ...result }] }.
function experiment(lab, fn, options, onProgress, kind) {
  const o = checkOptions(fn, options, ['task', 'text', 'vocabSize', 'schemes', 'steps', 'size', 'dModel', 'nLayers',
    'nHeads', 'trainLength', 'batch', 'evalBatch', 'lr', 'warmupSteps', 'seed', 'seeds', 'taskSeed', ...kind.keys]);
  if (onProgress !== undefined && typeof onProgress !== 'function') {
    throw new PosencTypeError(`${fn}: onProgress must be a function (got ${describe(onProgress)})`);
  }
  const size = SIZES[checkChoice(fn, 'size', o.size ?? 'small', Object.keys(SIZES))];
  const schemes = o.schemes === undefined || o.schemes === 'all' ? kind.schemes : o.schemes;
  if (!Array.isArray(schemes) || schemes.length === 0) throw new PosencTypeError(`${fn}: schemes must be 'all' or a non-empty array of scheme names`);
  schemes.forEach((s, i) => checkChoice(fn, `schemes[${i}]`, s, kind.schemes));
  const config = experimentConfig(fn, o, size);
  // The task's data (the Markov table) comes from taskSeed, seed by default: run({ seed: S + k,
  // taskSeed: S }) is seed S + k's part of run({ seed: S, seeds: N }), one job of it (the page's workers).
  const taskSeed = checkInt(fn, 'taskSeed', o.taskSeed ?? config.seed, 0, Number.MAX_SAFE_INTEGER);
  const { maxLength } = kind.extra(o, config);
  const task = checkChoice(fn, 'task', o.task ?? 'markov', lab.tasks);
  // The run's rules are C++'s (run_check, extend_check: the evaluation's rows within one call's too),
  // asked before the dataset is made.
  const { checkpoints, ...values } = config;
  lab.status(fn, kind.check(task, config), {
    values, note: (m) => (/^checkpoints\b/.test(m) ? ` (got [${checkpoints.join(', ')}])` : ''),
  });
  for (const scheme of schemes) {
    const sizes = { vocabSize: o.vocabSize ?? 32, ...config, maxPositions: config.randomPositions, scheme };
    checkParams(lab, fn, sizes);
    checkWorkspace(lab, fn, sizes, config.batch, config.trainLength);
    checkWorkspace(lab, fn, sizes, 1, maxLength);
  }
  const data = dataset(lab, { task, seed: taskSeed, vocabSize: o.vocabSize ?? 32, ...(o.text !== undefined ? { text: o.text } : {}) });
  try {
    const results = [];
    for (const scheme of schemes) for (let k = 0; k < config.seeds; k++) {
      // config.seed + k: init and batch order; the task's data stays config.seed's
      results.push(experimentCall(lab, fn, kind, data, config, scheme, config.seed + k, onProgress));
    }
    return { task, config: { ...config, vocabSize: data.vocabSize }, entropyRate: data.entropyRate,
      floor: Object.fromEntries(kind.floorLengths(config).map((l) => [l, data.floor(l)])), results };
  } finally {
    data.delete();
  }
}

// Trains and evaluates each scheme on the same data (synchronously: call it in a worker);
// onProgress({ scheme, seed, step, totalSteps, loss }) after every step, returning false cancels.
function run(lab, options, onProgress) {
  const fn = 'run';
  return experiment(lab, fn, options, onProgress, {
    keys: ['randomPositions'], schemes: lab.schemes,
    extra: (o, config) => {
      // Randomized positions (docs/lab.md): 0 (off) or L_max (C++'s run_check states the range).
      config.randomPositions = checkInt(fn, 'randomPositions', o.randomPositions ?? 0, 0);
      return { maxLength: 8 * config.trainLength };
    },
    floorLengths: (config) => [1, 2, 4, 8, 16].map((k) => (config.trainLength * k) / 2),
    check: (task, config) => lab.module.labRunCheck(task, config),
    call: (data, config, scheme, progress) => {
      const [message, result] = lab.module.labRunScheme(data, config, scheme, progress);
      if (result) for (const row of result.eval) row.bucketLoss = Array.from(row.bucketLoss, (v) => (Number.isNaN(v) ? null : v));
      return [message, result];
    },
  });
}

// Context extension by fine-tuning (docs/lab.md): per scheme (rope, xpos) and seed, the run()
// model, then a copy fine-tuned at factor · trainLength with each scaling, evaluated at the checkpoints.
function extend(lab, options, onProgress) {
  const fn = 'extend';
  return experiment(lab, fn, options, onProgress, {
    keys: ['factor', 'checkpoints'], schemes: ['rope', 'xpos'],
    extra: (o, config) => {
      // factor and the checkpoints (step counts): their rules are C++'s (extend_check).
      const factor = checkInt(fn, 'factor', o.factor ?? 4, 0);
      const checkpoints = o.checkpoints ?? [0, 25, 100, 400];
      if (!Array.isArray(checkpoints)) throw new PosencTypeError(`${fn}: checkpoints must be an array of step counts (got ${describe(checkpoints)})`);
      checkpoints.forEach((n, i) => checkInt(fn, `checkpoints[${i}]`, n, 0));
      const L = factor * config.trainLength;
      Object.assign(config, { factor, checkpoints: [...checkpoints] });
      return { maxLength: 2 * L };
    },
    floorLengths: (config) => [config.factor * config.trainLength, 2 * config.factor * config.trainLength],
    check: (task, config) => lab.module.labExtendCheck(task, config),
    call: (data, config, scheme, progress) => lab.module.labRunExtension(data, config, scheme, progress),
  });
}

// The seed of stream `index` of `seed` (lab.hpp stream_seed), a bigint: run() samples training
// batch s with streamSeed(seed, s) and the evaluation rows at length L with streamSeed(7, L).
function streamSeed(lab, seed, index) {
  const fn = 'streamSeed';
  const [hi, lo] = seedHalves(fn, 'seed', seed);
  checkIntIn(fn, 'index', index, 0, Number.MAX_SAFE_INTEGER);
  const [h, l] = lab.module.labStreamSeed(hi, lo, index);
  return (BigInt(h) << 32n) | BigInt(l);
}

// Randomized positions (lab.hpp random_positions): Int32Array [batch][length], each row a sorted
// uniform subset of [0, maxPosition); run() draws training batch s with
// randomPositions(batch, trainLength, randomPositions, streamSeed(seed + 2^32, s)).
function randomPositions(lab, batch, length, maxPosition, seed) {
  const fn = 'randomPositions';
  // size_t's; the rules are C++'s (random_positions_check), asked before the heap.
  for (const [name, v] of Object.entries({ batch, length, maxPosition })) checkInt(fn, name, v, 0, MAX_SIZE_T);
  lab.status(fn, lab.module.labRandomPositionsCheck(batch, length, maxPosition), { values: { batch, length, maxPosition } });
  const [hi, lo] = seedHalves(fn, 'seed', seed);
  return int32Out(lab, fn, batch * length, (out) => lab.module.labRandomPositions(out, batch, length, maxPosition, hi, lo));
}

/** pe.lab over the Embind module: the lab's names (lab.hpp) and its functions. */
export function wrapLab(module) {
  // The schemes, tasks and RoPE scalings the C++ lab has (lab.hpp), by name.
  const { schemes, tasks, ropeScalings } = module.labNames();
  const { scoped, status } = heapTools(module, jsMessage);
  const lab = { module, scoped, status, schemes, tasks, ropeScalings };
  return {
    schemes, tasks, ropeScalings,
    createModel: (options) => createModel(lab, options),
    dataset: (options) => dataset(lab, options),
    run: (options, onProgress) => run(lab, options, onProgress),
    extend: (options, onProgress) => extend(lab, options, onProgress),
    streamSeed: (seed, index) => streamSeed(lab, seed, index),
    randomPositions: (batch, length, maxPosition, seed) => randomPositions(lab, batch, length, maxPosition, seed),
  };
}
