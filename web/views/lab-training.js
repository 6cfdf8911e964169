// The lab's training view (chapter "lab"): what to train (task, schemes, size, steps, seeds,
// randomized positions) and how many steps that model needs, Start / Cancel, a progress bar and an
// ETA per scheme and seed, and the training loss against step — live while workers train, else the
// loss curves of the result on show (the shipped native run until you train your own). The work is
// in web/lab/lab.js and web/lab/lab-worker.js; this view only draws.
import { LabLoading, RANDOM_MAX, commandFor, eta, jobName } from '../lab/lab.js';
import { fmt } from './shared/numbers.js';
import { legibleOn } from '../plot/legible.js';
import { legendRows, linesCsv } from '../plot/lines.js';

const schemesOf = (st, lab) => st.labSchemes.split(',').filter((s) => lab.schemes().includes(s));
// Steps each size needs on markov before its loss at T_train comes within 0.1 nats of the floor,
// and below how many it has barely started (measured natively: docs/explorer.md, "The lab chapter").
const STEPS_NEEDED = { small: { need: 2000, text: '≈ 2000 steps', few: 400 },
  tiny: { need: 4000, text: 'more than 4000 steps', few: 2000 } };
// Seed S draws solid, the others dashed, so that one scheme's runs tell apart.
const SEED_DASH = [undefined, [6, 3], [2, 2], [8, 3, 2, 3], [4, 4]];
const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const seconds = (s) => (s >= 90 ? `${Math.floor(s / 60)} min ${Math.round(s % 60)} s` : `${s.toFixed(s < 10 ? 1 : 0)} s`);

function trailingMean(values, window) {
  const out = new Float64Array(values.length);
  let sum = 0;
  for (let i = 0; i < values.length; i++) {
    sum += values[i] - (i >= window ? values[i - window] : 0);
    out[i] = sum / Math.min(i + 1, window);
  }
  return out;
}

// The text task's file box: the file goes to the lab (lab.setTextFile).
function textFileBox(lab) {
  const file = document.createElement('div');
  file.className = 'file-box lab-text';
  file.innerHTML = '<label>text file <input type="file" accept=".txt,.md,text/*" data-lab-text></label>'
    + '<span class="message" role="status"></span>';
  const msg = file.querySelector('.message');
  file.querySelector('input').addEventListener('change', async (e) => {
    const f = e.target.files[0];
    if (!f) return;
    const bytes = new Uint8Array(await f.arrayBuffer());
    if (bytes.length < 2) {
      msg.textContent = `${f.name} is empty: choose a text file.`;
      msg.classList.add('bad');
      return;
    }
    msg.textContent = `${f.name}: ${bytes.length.toLocaleString('en-US')} bytes, character level.`;
    msg.classList.remove('bad');
    lab.setTextFile(f.name, bytes);
  });
  return file;
}

// What a scheme's row in the progress list says about its entry (lab.run().schemes).
function entryText(e, now) {
  const last = e.losses.length ? ` · loss ${e.losses[e.losses.length - 1].toFixed(3)}` : '';
  const t = eta(e, now);
  return {
    queued: 'waiting for a free worker',
    loading: 'loading the package in its worker…',
    training: `step ${e.step}/${e.total}${last}${t === null ? '' : ` · ETA ${seconds(t)}`}`,
    evaluating: `trained${last} · evaluating at ½ … 8 × T_train…`,
    done: `done${last}`,
    cancelled: e.step ? `cancelled at step ${e.step}` : 'cancelled before it started',
  }[e.state] ?? e.state;
}

// One row per job (scheme and seed) of the run, made again when the run's jobs change.
function progressRows(list, rows, jobs, lab) {
  if ([...rows.keys()].join() === Object.keys(jobs).join()) return;
  list.replaceChildren();
  rows.clear();
  for (const [key, e] of Object.entries(jobs)) {
    const li = document.createElement('li');
    li.dataset.scheme = e.scheme;
    li.dataset.seed = String(e.seed);
    li.innerHTML = `<span class="name">${jobName(e)}</span><progress max="1" value="0"></progress><span class="what"></span>`;
    list.append(li);
    rows.set(key, li);
  }
}

// Beside the controls, before Start: how many steps this model needs to learn markov.
function advice(st) {
  if (st.labTask !== 'markov') return '';
  const { need, text, few } = STEPS_NEEDED[st.labSize];
  const steps = st.labSteps.toLocaleString('en-US');
  const now = st.labSteps < few ? ` ${steps} steps will show how the schemes start, not how they extrapolate.`
    : st.labSteps < need ? ` At ${steps} it has learned most of it, enough to see how each scheme extrapolates; its `
      + 'ratios can differ from the shipped run\'s 2000 steps.' : '';
  return `The ${st.labSize} model needs ${text} to come within 0.1 nats of the markov floor at T_train `
    + `(measured natively); below ${few.toLocaleString('en-US')} it has barely started.${now}`;
}

// After Cancel: where each job stopped, and what the plots show now.
function cancelledText(run, shown) {
  const stopped = Object.values(run.jobs).filter((e) => e.state === 'cancelled' && e.step > 0)
    .map((e) => `step ${e.step} of ${jobName(e)}`);
  const done = Object.values(run.jobs).filter((e) => e.state === 'done').map(jobName);
  const where = stopped.length ? `at ${stopped.join(', ')}` : 'before any training step';
  const what = shown?.source === 'yours' ? `your run of ${shown.date}` : 'the shipped native run';
  return `Cancelled ${where}; the workers were stopped and their memory freed. The training plot shows the `
    + `cancelled curves; the results below still show the previous result, ${what}`
    + `${done.length ? ` (the finished ${done.join(', ')} ${done.length > 1 ? 'are' : 'is'} not kept)` : ''}.`;
}

// The file box, Start / Cancel and the progress list (the plot is drawn by compute and plot).
function setup(section, host) {
  const { lab } = host;
  const controls = section.querySelector('.view-controls');
  const file = textFileBox(lab);
  controls.append(file);
  const bar = document.createElement('div');
  bar.className = 'lab-run';
  bar.innerHTML = `<p class="lab-advice"></p><div class="row"><button type="button" data-lab="start">Start</button>
    <button type="button" data-lab="cancel" disabled>Cancel</button>
    <span class="lab-status" role="status" aria-live="polite"></span></div>
    <ul class="lab-progress" aria-label="training progress per scheme and seed"></ul>`;
  controls.after(bar);
  const start = bar.querySelector('[data-lab="start"]'), cancel = bar.querySelector('[data-lab="cancel"]');
  const status = bar.querySelector('.lab-status'), list = bar.querySelector('.lab-progress');
  const needs = bar.querySelector('.lab-advice');

  start.addEventListener('click', () => {
    const st = host.state();
    const schemes = schemesOf(st, lab);
    if (!schemes.length) { status.textContent = 'Tick at least one scheme to train.'; return; }
    try {
      lab.startRun({ task: st.labTask, schemes, size: st.labSize, steps: st.labSteps, seeds: st.labSeeds,
        randomPositions: st.labRandom ? RANDOM_MAX : 0 });
    } catch (e) {
      status.textContent = e.message;
    }
  });
  cancel.addEventListener('click', () => lab.cancelRun());

  const rows = new Map();
  function paint() {
    const st = host.state();
    file.hidden = st.labTask !== 'text';
    needs.textContent = advice(st);
    needs.hidden = !needs.textContent;
    const run = lab.run();
    const running = run?.state === 'running';
    start.disabled = running;
    cancel.disabled = !running;
    if (!run) {
      list.replaceChildren();
      rows.clear();
      status.textContent = st.labTask === 'text' && !lab.textFile() ? 'Choose a text file, then Start.'
        : `Start trains ${plural(schemesOf(st, lab).length, 'scheme')}${st.labSeeds > 1 ? ` × ${st.labSeeds} seeds` : ''} `
          + `in your browser, one Web Worker each, up to ${navigator.hardwareConcurrency || 2} at a time.`;
      return;
    }
    progressRows(list, rows, run.jobs, lab);
    const now = performance.now(), drawn = legibleOn(list);
    for (const [key, e] of Object.entries(run.jobs)) {
      const li = rows.get(key);
      // Its curve's colour as the plot draws it (CSSOM: the CSP forbids style attributes).
      li.querySelector('.name').style.borderColor = drawn(lab.color(e.scheme));
      li.dataset.state = e.state;
      const p = li.querySelector('progress');
      p.max = e.total;
      p.value = e.step;
      li.querySelector('.what').textContent = entryText(e, now);
    }
    const elapsed = ((run.finished || now) - run.started) / 1000;
    status.textContent = {
      running: `Training ${rows.size} model(s), ${seconds(elapsed)} so far. The page stays usable: the work is in workers.`,
      done: `Done in ${seconds(elapsed)}. The plots below and the comparison table now show this run.`,
      cancelled: cancelledText(run, lab.shown()),
      error: `The run failed: ${run.error}`,
    }[run.state];
  }
  lab.onChange(() => { paint(); host.refresh('lab-training'); });
  section.addEventListener('change', () => setTimeout(paint));
  paint();
  section.paint = paint;
}

export default {
  id: 'lab-training',
  controls: [
    ['labTask', { kind: 'select', label: 'task' }],
    ['labSchemes', { kind: 'checks', label: 'schemes', values: (host) => host.lab.schemes() }],
    ['labSize', { kind: 'select', label: 'model size' }],
    ['labSteps', { label: 'steps', slider: { min: 10, max: 20000, log: true } }],
    ['labSeeds', { label: 'seeds', slider: { min: 1, max: 5 } }],
    ['labRandom', { kind: 'checkbox' }],
  ],
  setup,
  // 280 px (the stylesheet's, 250 on a phone) with two rows of legend; each row more (a phone shows the
  // 15 shipped curves' names in seven) adds its 17 px, so the plot keeps its height.
  height: (width, d) => 280 + 17 * Math.max(0, legendRows(d?.series.map((s) => s.label) ?? [], width) - 2),
  // A change from elsewhere (Back, a link) repaints the advice and the status too.
  rendered: (d, section) => section.paint(),
  compute({ st, lab }) {
    lab.need();
    const run = lab.run(), shown = lab.shown();
    let series, source, floor = null;
    if (run && run.state !== 'done') {
      series = Object.values(run.jobs).map((e) => ({ label: jobName(e), scheme: e.scheme, seed: e.seed, losses: e.losses }));
      source = `your run (${run.state}): ${commandFor(run.options, run.textName)}`;
    } else if (shown) {
      // The CLI's JSON keeps each scheme's first seed's curve only (docs/lab.md); a page run has all.
      const n = shown.config.seeds ?? 1, curves = shown.results.filter((r) => r.trainLoss);
      series = curves.map((r) => ({ label: jobName({ ...r, seeds: n }), scheme: r.scheme, seed: r.seed,
        losses: r.trainLoss }));
      const only = curves.length < shown.results.length ? ` (curves of seed ${shown.config.seed}; every seed is evaluated)` : '';
      source = `${shown.source === 'shipped' ? 'the shipped native run' : 'your run'} of ${shown.date}: ${shown.command}${only}`;
      floor = shown.floors[shown.config.trainLength] ?? null;
    } else {
      throw lab.waiting() ? new LabLoading() : new Error(`${lab.shippedFailure()} Press Start to train your own.`);
    }
    const n = Math.max(1, ...series.map((s) => s.losses.length));
    const xs = Float64Array.from({ length: n }, (_, i) => i + 1);
    // One batch's loss is noisy: the plot draws the mean of the last `window` steps (the CSV has every step).
    const window = Math.max(1, Math.round(n / 100));
    return {
      xs, floor, source, window,
      series: series.map((s) => ({ label: s.label, scheme: s.scheme, x: xs.subarray(0, s.losses.length),
        y: trailingMean(s.losses, window), raw: s.losses, color: lab.color(s.scheme),
        dash: SEED_DASH[((s.seed ?? 1) - 1) % SEED_DASH.length] })),
    };
  },
  // Lines 1 px wide: a stroke at most one device pixel wide takes Chromium's fast path when it
  // rasterizes in software, without a GPU (15 curves of 1100 points in 1.9 ms, against 17–27 ms at
  // 1.1–1.5 px, on a screen of one device pixel per px), and the 15 shipped curves, which run
  // close together, stay easier to tell apart.
  plot: (d, cursor) => ({
    kind: 'lines',
    spec: {
      series: d.series.map((s) => ({ ...s, width: 1 })), xLabel: 'training step', cursor,
      yLabel: d.window > 1 ? `loss, nats/token (mean of ${d.window} steps)` : 'loss, nats/token',
      xDomain: [1, Math.max(2, d.xs.length)],
      hlines: d.floor === null ? [] : [{ y: d.floor, label: `entropy floor at T_train: ${d.floor.toFixed(3)}`, side: 'left' }],
    },
  }),
  note: (d) => `Shown: ${d.source}.`,
  readout(d, c) {
    const at = (s) => {
      if (c.i >= s.y.length) return '–';
      return `${fmt(s.raw[c.i], 4)}${d.window > 1 ? ` (mean ${fmt(s.y[c.i], 4)})` : ''}`;
    };
    return `step ${d.xs[c.i]}: ${d.series.map((s) => `${s.label} ${at(s)}`).join(', ')}`;
  },
  csv: (d) => linesCsv('step', d.xs,
    d.series.map((s) => ({ label: s.label, y: Array.from(d.xs, (_, i) => (i < s.raw.length ? s.raw[i] : '')) }))),
  caption: (st, { lab }) => `lab training loss (${lab.shown()?.command ?? ''})`,
  cursor0: () => ({ i: 0 }),
};
