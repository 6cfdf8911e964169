// The lab chapter's state: the result on show (the shipped one from data/lab-result.json, a real
// native run, until the user trains their own), and the runs in Web Workers — one worker per
// scheme, at most navigator.hardwareConcurrency at a time, each loading the package itself
// (web/lab-worker.js). Cancel terminates the workers, which frees their WASM memory at once.
// The views (web/views/lab-*.js) read from here and are told to redraw through onLabChange.

export const LAB_SCHEMES = ['none', 'sinusoidal', 'learned', 'rope', 'alibi', 't5'];
export const ROPE_SCALINGS = ['linear', 'ntk', 'dynamic', 'yarn'];
export const SHIPPED_URL = new URL('../data/lab-result.json', import.meta.url);
const PROGRESS_REDRAW = 250;  // ms between redraws of the live loss curve

const listeners = new Set();
let shipped = null, shippedError = '';
let shown = null;        // the result the plots show
let run = null;          // the current or last run: { id, state, options, schemes: { name: entry }, ... }
let text = null;         // the text task's file: { name, bytes }
let runs = 0;

/** Calls fn(what) after a change: 'progress' (a run moved on) or 'result' (the result shown changed). */
export function onLabChange(fn) { listeners.add(fn); }
const emit = (what) => { for (const fn of listeners) fn(what); };

/** The rows of the CLI's JSON and of pe.lab.run, in one shape. */
function normalise(r, source) {
  const floors = {};
  for (const s of r.results) for (const e of s.eval) if (e.floor !== null && Number.isFinite(e.floor)) floors[e.length] = e.floor;
  return {
    source, date: r.date, command: r.command, simd: r.simd, task: r.task, config: r.config,
    entropyRate: r.entropyRate ?? null, floors,
    results: r.results.map((s) => ({ ...s, trainLoss: Array.from(s.trainLoss) })),
  };
}

/** Loads the shipped result (once; the page waits for it so the table is measured from the start). */
export async function loadShipped() {
  try {
    const response = await fetch(SHIPPED_URL);
    if (!response.ok) throw new Error(`HTTP ${response.status}`);
    shipped = normalise(await response.json(), 'shipped');
    shown = shipped;
  } catch (e) {
    shippedError = `The shipped lab result (data/lab-result.json) did not load: ${e.message}.`;
  }
}

export const shippedResult = () => shipped;
export const shippedFailure = () => shippedError;
export const shownResult = () => shown;
export const currentRun = () => run;
export const textFile = () => text;
export function setTextFile(name, bytes) { text = { name, bytes }; emit('progress'); }
export function showShipped() {
  if (!shipped) return;
  shown = shipped;
  if (run && run.state !== 'running') run = null;  // the training plot goes back to the shipped curves too
  emit('progress');
  emit('result');
}

/** The evaluation row of a scheme at a length (scaling 'none' for the plain model). */
export function row(result, scheme, length, scaling = 'none') {
  const s = result.results.find((x) => x.scheme === scheme);
  return s?.eval.find((e) => e.length === length && e.ropeScaling === scaling) ?? null;
}

/** loss(4 T_train) / loss(T_train) per scheme: a number, or 'noEmbedding' (learned). */
export function extrapolation(result) {
  const T = result.config.trainLength, out = {}, rope = {};
  for (const s of result.results) {
    const at = row(result, s.scheme, T), far = row(result, s.scheme, 4 * T);
    if (!at || !far) continue;
    out[s.scheme] = far.noEmbedding ? 'noEmbedding' : far.loss / at.loss;
    if (s.scheme === 'rope') {
      for (const k of ROPE_SCALINGS) {
        const r = row(result, 'rope', 4 * T, k);
        if (r && Number.isFinite(r.loss)) rope[k] = r.loss / at.loss;
      }
    }
  }
  return { ratios: out, rope };
}

/**
 * Schemes whose model barely learned: mean loss at T_train above halfway between the floor and a
 * blind guess (ln vocabSize). Their extrapolation ratio says nothing about position.
 */
export function barelyLearned(result) {
  const T = result.config.trainLength, floor = result.floors[T];
  if (!Number.isFinite(floor)) return [];
  const guess = Math.log(result.config.vocabSize);
  return result.results.filter((s) => { const e = row(result, s.scheme, T); return e && e.loss > (floor + guess) / 2; })
    .map((s) => ({ scheme: s.scheme, loss: row(result, s.scheme, T).loss, guess }));
}

/** The native command that reproduces a run of the page (same defaults as pe.lab.run). */
export function commandFor({ task, schemes, size, steps }, textName) {
  const parts = ['npm run lab --', `--task ${task}`];
  if (task === 'text') parts.push(`--text ${textName ?? 'FILE'}`);
  parts.push(`--schemes ${schemes.length === LAB_SCHEMES.length ? 'all' : schemes.join(',')}`, `--size ${size}`, `--steps ${steps}`);
  return parts.join(' ');
}

/**
 * Starts a run: options { task, schemes, size, steps } (text comes from setTextFile). Each scheme
 * gets its own worker; schemes wait their turn beyond `concurrency` workers.
 */
export function startRun(options, concurrency = navigator.hardwareConcurrency || 2) {
  cancelRun();
  if (options.task === 'text' && !text) throw new Error('Choose a text file first (task text).');
  runs += 1;
  const id = runs;
  const entries = Object.fromEntries(options.schemes.map((s) => [s, { scheme: s, state: 'queued', step: 0, total: options.steps, losses: [], t0: 0, tTrain: 0, worker: null, result: null, message: '' }]));
  run = { id, state: 'running', options: { ...options }, textName: text?.name, schemes: entries, started: performance.now(), finished: 0, error: '' };
  const queue = [...options.schemes];
  let lastEmit = 0, pending = 0;
  const progress = (force = false) => {
    const now = performance.now();
    if (force || now - lastEmit >= PROGRESS_REDRAW) { lastEmit = now; clearTimeout(pending); pending = 0; emit('progress'); }
    else if (!pending) pending = setTimeout(() => progress(true), PROGRESS_REDRAW);
  };
  const next = () => {
    if (run?.id !== id || run.state !== 'running') return;
    const scheme = queue.shift();
    if (!scheme) {
      if (Object.values(entries).every((e) => e.state === 'done')) finish();
      return;
    }
    const e = entries[scheme];
    e.state = 'loading';
    e.t0 = performance.now();
    const worker = new Worker(new URL('./lab-worker.js', import.meta.url), { type: 'module' });
    e.worker = worker;
    worker.onmessage = ({ data: m }) => {
      if (run?.id !== id) return;
      if (m.type === 'progress') {
        if (e.state !== 'training') { e.state = 'training'; e.tTrain = performance.now() - (m.elapsed ?? 0); }
        e.step = m.step;
        e.total = m.total;
        for (const l of m.losses) e.losses.push(l);
        if (m.step >= m.total) e.state = 'evaluating';
        progress(m.step >= m.total);
      } else if (m.type === 'done') {
        e.state = 'done';
        e.result = m.result;
        worker.terminate();
        e.worker = null;
        progress(true);
        next();
      } else if (m.type === 'error') {
        fail(`${scheme}: ${m.message}`);
      }
    };
    worker.onerror = (ev) => { ev.preventDefault?.(); fail(`${scheme}: the worker failed (${ev.message || 'it could not load'})`); };
    const bytes = options.task === 'text' ? text.bytes.slice() : undefined;
    worker.postMessage({ options: { task: options.task, size: options.size, steps: options.steps, schemes: [scheme], ...(bytes ? { text: bytes } : {}) } }, bytes ? [bytes.buffer] : []);
  };
  const fail = (message) => {
    stopWorkers();
    run.state = 'error';
    run.error = message;
    emit('progress');
  };
  const finish = () => {
    run.state = 'done';
    run.finished = performance.now();
    const parts = options.schemes.map((s) => entries[s].result);
    const first = parts[0];
    const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
    shown = normalise({
      date, command: commandFor(options, run.textName), simd: 'wasm', task: first.task,
      config: { ...first.config, steps: options.steps }, entropyRate: first.entropyRate,
      results: parts.flatMap((p) => p.results),
    }, 'yours');
    shown.seconds = (run.finished - run.started) / 1000;
    emit('progress');
    emit('result');
  };
  for (let k = 0; k < Math.max(1, Math.min(concurrency, options.schemes.length)); k++) next();
  emit('progress');
  return id;
}

function stopWorkers() {
  if (!run) return;
  for (const e of Object.values(run.schemes)) {
    e.worker?.terminate();
    e.worker = null;
  }
}

/** Stops the current run: its workers are terminated (their memory goes with them). */
export function cancelRun() {
  if (!run || run.state !== 'running') return false;
  stopWorkers();
  run.state = 'cancelled';
  for (const e of Object.values(run.schemes)) if (e.state !== 'done') e.state = 'cancelled';
  emit('progress');
  return true;
}

/** Live workers (for the tests: 0 after Cancel). */
export const liveWorkers = () => (run ? Object.values(run.schemes).filter((e) => e.worker).length : 0);

/** ETA of a scheme's training in seconds (null until it has a rate). */
export function eta(e, now = performance.now()) {
  if (e.state !== 'training' || e.step < 2) return null;
  const rate = e.step / ((now - e.tTrain) / 1000);
  return (e.total - e.step) / rate;
}
