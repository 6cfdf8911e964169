// The lab chapter's state, one object (createLab) that main.js makes and hands to the views
// (host.lab, ctx.lab): the result on show (the shipped one from data/lab-result.json, a real
// native run, fetched when a view first needs it, until the user trains their own), the runs in Web Workers — one worker per scheme and
// seed, at most navigator.hardwareConcurrency at a time, each loading the package itself
// (web/lab/lab-worker.js) — and the extrapolation ratios the comparison table shows. Cancel
// terminates the workers, which frees their WASM memory at once. The views (web/views/lab-*.js,
// comparison-table.js) read it and hear of changes through lab.onChange.
import { SERIES } from '../plot/colormap.js';
import { MARKERS } from '../plot/markers.js';

// The shipped native runs, one per task (npm run lab -- [--task T] --seeds 5: docs/lab.md; text's on
// data/kjv-genesis-joshua.txt, shown while the user's own file has not been trained on): data/lab-result
// + the task's suffix + .json. The URL keeps that pattern written out, so that the production build
// (Vite globs a template URL) bundles data/lab-result*.json only, not the text run's 915 KB corpus.
const SHIPPED_SUFFIX = { markov: '', copy: '-copy', flipflop: '-flipflop', text: '-text' };
const SHIPPED_FILES = Object.fromEntries(Object.entries(SHIPPED_SUFFIX).map(([t, s]) => [t, `lab-result${s}.json`]));
export const shippedUrl = (task) => new URL(`../../data/lab-result${SHIPPED_SUFFIX[task]}.json`, import.meta.url);
export const hasShipped = (task) => Object.hasOwn(SHIPPED_SUFFIX, task);
const PROGRESS_REDRAW = 250;  // ms between redraws of the live loss curve
// pe.lab.run's training length and first seed, which the page keeps; randomized positions use
// L_max = 8 T_train, as the lab's shipped runs do.
export const TRAIN_LENGTH = 64;
const SEED = 1;
export const RANDOM_MAX = 8 * TRAIN_LENGTH;

/** What a view that needs the lab's result throws while it loads: view.js says so, without a failure. */
export class LabLoading extends Error {
  constructor(message = 'Loading the lab\'s shipped run…') {
    super(message);
    this.waiting = true;
  }
}

/** "npm run lab -- " with nothing after it is just "npm run lab". */
export const shortCommand = (c) => (c ?? '').replace(/ --$/, '');

/** The rows of the CLI's JSON and of pe.lab.run, in one shape (the CLI's keeps trainLoss for first seeds only). */
function normalise(r, source) {
  const floors = {};
  for (const s of r.results) {
    for (const e of s.eval) if (e.floor !== null && Number.isFinite(e.floor)) floors[e.length] = e.floor;
  }
  return {
    source, date: r.date, command: r.command, simd: r.simd, task: r.task, config: r.config,
    ...(r.added ? { added: r.added } : {}), entropyRate: r.entropyRate ?? null, floors,
    results: r.results.map((s) => (s.trainLoss ? { ...s, trainLoss: Array.from(s.trainLoss) } : { ...s })),
  };
}

/** The schemes of a result, once each, in its order (a result holds one entry per scheme and seed). */
export const schemesIn = (result) => [...new Set(result.results.map((s) => s.scheme))];

/** The RoPE inference scalings a result evaluated (its rope rows' ropeScaling but 'none'), in its order. */
export const scalingsIn = (result) => [...new Set(result.results.filter((s) => s.scheme === 'rope')
  .flatMap((s) => s.eval.map((e) => e.ropeScaling)))].filter((k) => k !== 'none');

/** The evaluation rows of a scheme at a length (scaling 'none' for the plain model), one per seed. */
export function rows(result, scheme, length, scaling = 'none') {
  return result.results.filter((x) => x.scheme === scheme)
    .map((s) => s.eval.find((e) => e.length === length && e.ropeScaling === scaling)).filter(Boolean);
}

/** The evaluation row of a scheme's first seed at a length. */
export const row = (result, scheme, length, scaling = 'none') => rows(result, scheme, length, scaling)[0] ?? null;

const mean = (values) => values.reduce((a, b) => a + b, 0) / values.length;

/**
 * loss(4 T_train) / loss(T_train) per scheme, taken per seed and averaged (as the CLI's table does):
 * a number, or 'noEmbedding' (learned).
 */
export function extrapolation(result) {
  const T = result.config.trainLength, out = {}, rope = {};
  const ratio = (scheme, scaling) => {
    const at = rows(result, scheme, T), far = rows(result, scheme, 4 * T, scaling);
    if (!at.length || far.length !== at.length) return null;
    if (far[0].noEmbedding) return 'noEmbedding';
    const r = mean(far.map((e, k) => e.loss / at[k].loss));
    return Number.isFinite(r) ? r : null;
  };
  for (const scheme of schemesIn(result)) {
    const r = ratio(scheme, 'none');
    if (r === null) continue;
    out[scheme] = r;
    if (scheme === 'rope') {
      for (const k of scalingsIn(result)) { const v = ratio('rope', k); if (typeof v === 'number') rope[k] = v; }
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
  return schemesIn(result).map((scheme) => ({ scheme, loss: mean(rows(result, scheme, T).map((e) => e.loss)), guess }))
    .filter((b) => b.loss > (floor + guess) / 2);
}

/**
 * The native command that reproduces a run of the page (same defaults as pe.lab.run; --seeds always,
 * as the CLI's default is 3; the schemes by name, so the command stays exact when schemes are added).
 */
export function commandFor({ task, schemes, size, steps, seeds, randomPositions }, textName) {
  const parts = ['npm run lab --', `--task ${task}`];
  if (task === 'text') parts.push(`--text ${textName ?? 'FILE'}`);
  parts.push(`--schemes ${schemes.join(',')}`, `--size ${size}`, `--steps ${steps}`, `--seeds ${seeds}`);
  if (randomPositions) parts.push(`--random-positions ${randomPositions}`);
  return parts.join(' ');
}

/** A result's seeds and positions in words: "seed 1", "seeds 1–3, randomized positions (L_max 512)". */
export function seedsText(c) {
  const n = c.seeds ?? 1;
  const seeds = n > 1 ? `seeds ${c.seed}–${c.seed + n - 1}` : `seed ${c.seed}`;
  return c.randomPositions ? `${seeds}, randomized positions (L_max ${c.randomPositions})` : seeds;
}

/**
 * The schemes a shipped result gained by later commands (its `added`), in words: "; added DATE:
 * COMMAND" for each (the command names them), or ''. `code` wraps a command, `esc` escapes text
 * (both for HTML).
 */
export const addedText = (r, code = (c) => c, esc = (t) => t) => (r.added ?? [])
  .map((a) => `; added ${esc(a.date)}: ${code(shortCommand(a.command))}`).join('');

/**
 * A result in words: where it comes from and what was trained, by its first command (the schemes
 * added later are the lab chapter's to name: addedText).
 */
export function describeSource(r) {
  const c = r.config;
  const what = `${r.task}, d_model ${c.dModel}, ${c.nLayers} layers, ${c.nHeads} heads, T_train ${c.trainLength}, `
    + `${c.steps} steps, ${seedsText(c)}`;
  return r.source === 'shipped'
    ? `the shipped result, a real native run (${r.simd}) of ${r.date}: ${shortCommand(r.command)} (${what})`
    : `your run in this browser (WASM workers, ${r.seconds?.toFixed(1)} s) of ${r.date} (${what}); `
      + `natively: ${shortCommand(r.command)}`;
}

/** The comparison table's extrapolation column from a result: { ratios, source, details }. */
function measuredFrom(r) {
  const { ratios, rope } = extrapolation(r);
  const T = r.config.trainLength;
  const details = { rope: Object.entries(rope).map(([k, v]) => `${k} ${v.toPrecision(3)}`).join(', ') };
  if (details.rope) details.rope = `with scaling: ${details.rope}`;
  for (const b of barelyLearned(r)) {
    const before = details[b.scheme] ? `${details[b.scheme]}; ` : '';
    details[b.scheme] = `${before}but this model barely learned the task, so the ratio says little`;
  }
  const n = r.config.seeds ?? 1;
  const source = `loss at ${4 * T} ÷ loss at ${T} tokens, by the lab (chapter 11) — ${describeSource(r)}. `
    + `${n > 1 ? `The mean of ${n} seeds' ratios` : 'One seed'}, tiny models.`;
  return { ratios, source, details };
}

/** ETA of a scheme's training in seconds (null until it has a rate). */
export function eta(e, now = performance.now()) {
  if (e.state !== 'training' || e.step < 2) return null;
  const rate = e.step / ((now - e.tTrain) / 1000);
  return (e.total - e.step) / rate;
}

/**
 * One (scheme, seed) job's training in its own worker: seed S + k on seed S's data, which is S + k's
 * part of pe.lab.run({ seed: S, seeds: N }). on: { current() (false once another run replaced this one:
 * its messages are dropped), progress(force), done(), fail(message) }.
 */
function trainInWorker(e, options, text, on) {
  e.state = 'loading';
  e.t0 = performance.now();
  const worker = new Worker(new URL('./lab-worker.js', import.meta.url), { type: 'module' });
  e.worker = worker;
  worker.onmessage = ({ data: m }) => {
    if (!on.current()) return;
    if (m.type === 'progress') {
      if (e.state !== 'training') { e.state = 'training'; e.tTrain = performance.now() - (m.elapsed ?? 0); }
      e.step = m.step;
      e.total = m.total;
      for (const l of m.losses) e.losses.push(l);
      if (m.step >= m.total) e.state = 'evaluating';
      on.progress(m.step >= m.total);
    } else if (m.type === 'done') {
      e.state = 'done';
      e.result = m.result;
      worker.terminate();
      e.worker = null;
      on.progress(true);
      on.done();
    } else if (m.type === 'error') {
      on.fail(`${jobName(e)}: ${m.message}`);
    }
  };
  worker.onerror = (ev) => {
    ev.preventDefault?.();
    on.fail(`${jobName(e)}: the worker failed (${ev.message || 'it could not load'})`);
  };
  const bytes = options.task === 'text' ? text.bytes.slice() : undefined;
  const job = { task: options.task, size: options.size, steps: options.steps, schemes: [e.scheme], seed: e.seed,
    taskSeed: SEED, randomPositions: options.randomPositions };
  if (bytes) job.text = bytes;
  worker.postMessage({ options: job }, bytes ? [bytes.buffer] : []);
}

function stopWorkers(run) {
  for (const e of Object.values(run.jobs)) {
    e.worker?.terminate();
    e.worker = null;
  }
}

/** A finished run's result, in the shape of the shipped one and in pe.lab.run's order: scheme, then seed. */
function resultOf(run) {
  const { options } = run;
  const parts = Object.values(run.jobs).map((e) => e.result);
  const first = parts[0];
  const date = new Date().toISOString().replace(/\.\d+Z$/, 'Z');
  const result = normalise({
    date, command: commandFor(options, run.textName), simd: 'wasm', task: first.task,
    config: { ...first.config, steps: options.steps, seed: SEED, seeds: options.seeds }, entropyRate: first.entropyRate,
    results: parts.flatMap((p) => p.results),
  }, 'yours');
  result.seconds = (run.finished - run.started) / 1000;
  return result;
}

/** A job's name: its scheme, and its seed when the run has several. */
export const jobName = (e) => (e.seeds > 1 ? `${e.scheme} seed ${e.seed}` : e.scheme);

/**
 * A new run: { run, start() }. run: { id, state, options, textName, jobs: { 'scheme:seed': entry },
 * started, finished, error }; start() sets the first `concurrency` workers going, the others take
 * their turn as these finish. on: { current() (false once another run replaced this one),
 * emit(what), finished(result) }.
 */
function newRun(id, options, text, concurrency, on) {
  const jobs = options.schemes.flatMap((scheme) => Array.from({ length: options.seeds }, (_, k) => ({ scheme,
    seed: SEED + k, seeds: options.seeds, state: 'queued', step: 0, total: options.steps, losses: [], t0: 0, tTrain: 0,
    worker: null, result: null, message: '' })));
  const entries = Object.fromEntries(jobs.map((e) => [`${e.scheme}:${e.seed}`, e]));
  const run = { id, state: 'running', options: { ...options }, textName: text?.name, jobs: entries, started: performance.now(),
    finished: 0, error: '' };
  const queue = Object.keys(entries);
  let lastEmit = 0, pending = 0;
  const progress = (force = false) => {
    const now = performance.now();
    if (force || now - lastEmit >= PROGRESS_REDRAW) { lastEmit = now; clearTimeout(pending); pending = 0; on.emit('progress'); }
    else if (!pending) pending = setTimeout(() => progress(true), PROGRESS_REDRAW);
  };
  const fail = (message) => {
    stopWorkers(run);
    run.state = 'error';
    run.error = message;
    on.emit('progress');
  };
  const next = () => {
    if (!on.current() || run.state !== 'running') return;
    const job = queue.shift();
    if (job) {
      trainInWorker(entries[job], options, text, { current: on.current, progress, fail, done: next });
    } else if (jobs.every((e) => e.state === 'done')) {
      run.state = 'done';
      run.finished = performance.now();
      on.finished(resultOf(run));
    }
  };
  return { run, start() { for (let k = 0; k < Math.max(1, Math.min(concurrency, jobs.length)); k++) next(); } };
}

// The shipped runs as they load: fetch(task) is a promise of its normalised result (null when it
// failed: failure() says why, and a later fetch tries again); peek(task) the loaded one or null.
function shippedStore() {
  const loaded = new Map(), byTask = new Map();
  let failure = '';
  const fetchTask = (task) => {
    if (!loaded.has(task)) {
      loaded.set(task, fetch(shippedUrl(task)).then(async (response) => {
        if (!response.ok) throw new Error(`HTTP ${response.status}`);
        failure = '';
        const result = normalise(await response.json(), 'shipped');
        byTask.set(task, result);
        return result;
      }).catch((e) => {
        failure = `The shipped lab result (data/${SHIPPED_FILES[task]}) did not load: ${e.message}.`;
        loaded.delete(task);  // a later choice of the task tries again
        return null;
      }));
    }
    return loaded.get(task);
  };
  return { fetch: fetchTask, peek: (task) => byTask.get(task) ?? null, failure: () => failure };
}

// Shows a result (st: createLab's state) and tells the views.
function display(st, result) {
  st.show(result);
  st.emit('progress');
  st.emit('result');
}

// Shows a shipped result, remembered as the shipped one on show.
function showShippedResult(st, r) {
  st.shipped = r;
  display(st, r);
}

// The task chosen for Start: while a shipped result is on show (not the user's own run), the plots
// show that task's shipped run (loaded once), so choosing copy shows copy's measurement.
async function followTask(st, task) {
  st.wantedTask = task;
  const ownOnShow = () => (st.shown && st.shown.source !== 'shipped') || st.run?.state === 'running';
  if (!st.wanted || !hasShipped(task) || st.shipped?.task === task || ownOnShow()) return;
  const r = await st.store.fetch(task);
  if (!r || st.wantedTask !== task || ownOnShow()) return;
  showShippedResult(st, r);
}

// Starts a run (createLab's startRun): each scheme and seed in its own worker.
function startRun(st, options, concurrency) {
  cancelRun(st);
  if (options.task === 'text' && !st.text) throw new Error('Choose a text file first (task text).');
  st.runs += 1;
  const id = st.runs;
  const started = newRun(id, options, st.text, concurrency, {
    current: () => st.run?.id === id,
    emit: st.emit,
    finished: (result) => display(st, result),
  });
  st.run = started.run;
  started.start();
  st.emit('progress');
  return id;
}

function cancelRun(st) {
  const { run } = st;
  if (!run || run.state !== 'running') return false;
  stopWorkers(run);
  run.state = 'cancelled';
  for (const e of Object.values(run.jobs)) if (e.state !== 'done') e.state = 'cancelled';
  st.emit('progress');
  return true;
}

/**
 * The lab's state. onChange(fn) calls fn(what) after a change: 'progress' (a run moved on),
 * 'result' (the result shown changed, and with it the measured ratios) or 'shipped' (a task's
 * shipped result that shippedResult asked for has loaded).
 */
export function createLab() {
  const listeners = new Set();
  const st = {
    shipped: null,
    shown: null,          // the result the plots show
    run: null,            // the current or last run: { id, state, options, jobs: { 'scheme:seed': entry }, ... }
    text: null,           // the text task's file: { name, bytes }
    runs: 0,
    measured: { ratios: {}, source: '', details: {} },
    schemes: [],          // pe.lab.schemes, in the C++ lab's order (setSchemes)
    wantedTask: 'markov', // the last task followTask was given
    wanted: false,        // a view asked for the result on show (need): the shipped run is fetched then
    store: shippedStore(),
    emit: (what) => { for (const fn of listeners) fn(what); },
    show(result) {
      st.shown = result;
      st.measured = measuredFrom(result);
    },
  };
  const lab = {
    onChange(fn) { listeners.add(fn); },
    /** The lab's schemes, from the package once it is loaded (pe.lab.schemes): the menu's order. */
    setSchemes(names) { st.schemes = [...names]; },
    schemes: () => st.schemes,
    /** Each scheme's colour in the lab's plots: its place in pe.lab.schemes picks a SERIES colour. */
    color: (scheme) => SERIES[Math.max(0, st.schemes.indexOf(scheme)) % SERIES.length],
    /** And its marker, so that no two schemes depend on colour alone: 8 shapes, filled for the first 8, open for the rest. */
    marker: (scheme) => {
      const k = Math.max(0, st.schemes.indexOf(scheme)) % (2 * MARKERS.length);
      return { shape: MARKERS[k % MARKERS.length], open: k >= MARKERS.length };
    },
    /**
     * For the views that draw the result on show: the first call fetches the shipped run (the task
     * chosen's, else markov's) and shows it, so the page loads the lab's data only once a view needs
     * it. True once a result is on show; waiting() says whether one is on its way.
     */
    need() {
      if (!st.wanted) {
        st.wanted = true;
        st.store.fetch(hasShipped(st.wantedTask) ? st.wantedTask : 'markov').then((r) => {
          if (r && !st.shown) showShippedResult(st, r);
        });
      }
      return Boolean(st.shown);
    },
    waiting: () => st.wanted && !st.shown && !st.store.failure(),
    followTask: (task) => followTask(st, task),
    shipped: () => st.shipped,
    /**
     * A task's shipped result when it has loaded, else null (and it starts loading: 'shipped' is
     * emitted once it is in). For views that read a task's measurement whatever the lab shows.
     */
    shippedResult(task) {
      const known = st.store.peek(task);
      if (known) return known;
      if (hasShipped(task)) st.store.fetch(task).then((r) => { if (r) st.emit('shipped'); });
      return null;
    },
    /** A task's shipped result if it has loaded, else null; fetches nothing. */
    peekShipped: (task) => st.store.peek(task),
    shippedFailure: () => st.store.failure(),
    shown: () => st.shown,
    run: () => st.run,
    textFile: () => st.text,
    setTextFile(name, bytes) { st.text = { name, bytes }; st.emit('progress'); },
    showShipped() {
      if (!st.shipped) return;
      if (st.run && st.run.state !== 'running') st.run = null;  // the training plot goes back to the shipped curves too
      display(st, st.shipped);
      followTask(st, st.wantedTask);  // the task chosen meanwhile, if it has a shipped run
    },
    /**
     * The comparison table's extrapolation column: { ratios: { scheme: ratio or 'noEmbedding' },
     * source (what was measured, shown under the table), details: { scheme: text beside the ratio } }.
     */
    measured: () => st.measured,
    /** Replaces the measured ratios (until the next result): for the tests, and for results from elsewhere. */
    setMeasured(ratios, by = {}) {
      st.measured = { ratios: { ...ratios }, source: by.source ?? '', details: { ...by.details } };
    },
    /**
     * Starts a run: options { task, schemes, size, steps, seeds, randomPositions (0 or L_max) } (text
     * comes from setTextFile). Each scheme and seed gets its own worker; jobs wait their turn beyond
     * `concurrency` workers.
     */
    startRun: (options, concurrency = navigator.hardwareConcurrency || 2) => startRun(st, options, concurrency),
    /** Stops the current run: its workers are terminated (their memory goes with them). */
    cancelRun: () => cancelRun(st),
    /** Live workers (for the tests: 0 after Cancel). */
    liveWorkers: () => (st.run ? Object.values(st.run.jobs).filter((e) => e.worker).length : 0),
  };
  return lab;
}
