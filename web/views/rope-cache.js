// In production (chapter "long-context"): serving engines compute RoPE's cos and sin once per
// position up to max_position_embeddings and gather rows by the batch's position ids. The view
// gives that table's size for the model on the page and measures, in this browser, recomputing
// the rows of a batch (pe.ropeCache) against copying them out of a table computed once.
import { SERIES } from '../plot/colormap.js';
import { linesCsv } from '../plot/lines.js';
import { bytesText, fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';

const BATCHES = [1, 4, 16, 64, 256, 1024, 4096];
// The batches timed hold at most this many angles (positions × pairs): a call of a larger one, at
// the widest heads, would hold the page for a second.
const MAX_ANGLES = 2 ** 19;
const batchesFor = (half) => BATCHES.filter((b) => b === 1 || b * half <= MAX_ANGLES);
const TABLE_BYTES = 16 * 2 ** 20;  // the table measured here holds at most 16 MiB
const SAMPLE_MS = 1, SAMPLES = 5;  // each sample repeats a call for 1 ms at least; the median of 5

const n = (v) => v.toLocaleString('en-US');

// Time per call of fn, in ms, pushed onto `out` (a list in the result r): the median of SAMPLES samples, each as many calls
// as fill SAMPLE_MS. A generator: it yields before each sample, so a large batch's timing is spread
// over steps (the page's frames) like the rest.
function* timeIt(fn, out, r) {
  const samples = [];
  fn();  // a first call compiles and allocates: not timed
  for (let s = 0; s < SAMPLES; s++) {
    yield r;
    let calls = 0;
    const t0 = performance.now();
    let t = t0;
    do { fn(); calls += 1; t = performance.now(); } while (t - t0 < SAMPLE_MS);
    samples.push((t - t0) / calls);
  }
  out.push(samples.sort((a, b) => a - b)[SAMPLES >> 1]);
}

// Positions of a batch: spread over the table like the requests of many sequences (a fixed LCG).
function batchPositions(count, rows) {
  const out = new Float64Array(count);
  let x = 12345;
  for (let i = 0; i < count; i++) { x = (x * 1103515245 + 12345) % 2147483648; out[i] = x % rows; }
  return out;
}

// The measurement, a step at a time: the table is built in slices of rows and each batch size is
// timed in a step of its own, and a drawing runs steps for at most STEP_MS, then asks to be drawn
// again (ctx.redraw), so the page never waits on it. Kept while the pairs, the precision and the
// rows measured stay the same (the timings do not depend on θ or the scaling; the table does, and
// is rebuilt with them).
const STEP_MS = 10;
let job = { key: '', steps: null, result: null };

function* measurement(pe, invFreq, precision, rows) {
  const half = invFreq.length;
  const table = { cos: new Float32Array(rows * half), sin: new Float32Array(rows * half) };
  const slice = Math.max(1, Math.floor(2 ** 15 / half));  // rows a step builds
  const r = { build: 0, recompute: [], gather: [], identical: true, done: false };
  for (let r0 = 0; r0 < rows; r0 += slice) {
    const t0 = performance.now();
    const part = pe.ropeCache({ invFreq, seqLen: Math.min(slice, rows - r0), offset: r0, precision });
    table.cos.set(part.cos, r0 * half);
    table.sin.set(part.sin, r0 * half);
    r.build += performance.now() - t0;
    yield r;
  }
  for (const b of batchesFor(half)) {
    const positions = batchPositions(b, rows);
    yield* timeIt(() => pe.ropeCache({ invFreq, positions, precision }), r.recompute, r);
    yield r;
    // A gather, as index_select does it: each position's row copied out of the table.
    const take = () => {
      const cos = new Float32Array(b * half), sin = new Float32Array(b * half);
      for (let i = 0, o = 0; i < b; i++) {
        const p = positions[i] * half;
        for (let k = 0; k < half; k++, o++) { cos[o] = table.cos[p + k]; sin[o] = table.sin[p + k]; }
      }
      return { cos, sin };
    };
    yield* timeIt(take, r.gather, r);
    yield r;
    if (b === batchesFor(half).at(-1)) {  // the rows a batch gathers are the rows it would recompute, bit for bit
      const a = pe.ropeCache({ invFreq, positions, precision });
      yield r;  // each a step of its own: at the largest batch, one call is a step's worth
      const g = take();
      yield r;
      for (let k = 0; k < a.cos.length; k++) if (a.cos[k] !== g.cos[k] || a.sin[k] !== g.sin[k]) { r.identical = false; break; }
    }
    yield r;
  }
  r.done = true;
  return r;
}

// Runs the measurement for these inputs for about STEP_MS; the result so far (done: all of it).
function measureSome(pe, invFreq, precision, rows, redraw) {
  const key = `${invFreq.length} ${precision} ${rows}`;
  if (job.key !== key) job = { key, steps: measurement(pe, invFreq, precision, rows), result: null };
  const t0 = performance.now();
  while (!job.result?.done && performance.now() - t0 < STEP_MS) job.result = job.steps.next().value;
  if (!job.result.done) setTimeout(() => redraw('rope-cache'));
  return job.result;
}

// The note: the table's size, then what was measured. `s` holds the measured parts as shown
// (shown(d)): "…" for each number until the measurement is done.
function noteText(d, s) {
  const largest = batchesFor(d.half).at(-1);
  const fewer = largest < BATCHES.at(-1) ? ` (none larger at ${d.half} pairs: it would hold the page)` : '';
  const built = d.rows < d.maxPositions ? `Its first ${n(d.rows)} positions (16 MiB, as far as the page goes) built` : 'Built';
  // A model on the page without RoPE (GPT-2's learned table, T5's buckets) has no such table.
  const whose = !d.model ? 'these settings' : d.rope ? d.model : `these settings (${d.model}, on the page, has no RoPE)`;
  return `The cos/sin table for ${whose}: ${n(d.maxPositions)} positions`
    + `${d.published ? ' (max_position_embeddings as published)' : ' (L_target)'} × ${d.half} pairs (rotary_dim ${d.rotaryDim} / 2) `
    + `× 2 tables × 4 bytes (float32) = ${n(d.bytes)} bytes, ${bytesText(d.bytes)}, shared by every layer and head. `
    + `${built} in ${s.build} ms; ${n(largest)} positions${fewer} took ${s.recompute} ms to recompute, ${s.gather} ms `
    + `to gather (median of ${SAMPLES}, ${d.precision}): ${s.verdict}.`;
}

// A time in ms with four significant digits at most (at most five characters below 10 s), a ratio
// with three: so that WIDEST below bounds every note's width.
const ms4 = (v) => fmt(v, v < 10 ? 3 : v < 100 ? 2 : v < 1000 ? 1 : 0);
const times = (r) => fmt(r, r < 100 ? 1 : 0);

function shown(d) {
  const batches = batchesFor(d.half), at = batches.length - 1;
  if (!d.done) {
    return { build: '…', recompute: '…', gather: '…', verdict: `measuring: ${d.gather.length} of ${batches.length} batch sizes timed so far` };
  }
  // Within 25 % either way the two are called even: a browser's timings of a few ms move that much run to run.
  const ratio = d.recompute[at] / d.gather[at];
  const faster = ratio >= 1.25 ? `gathering is ${times(ratio)}× faster` : ratio <= 0.8 ? `recomputing is ${times(1 / ratio)}× faster`
    : 'neither is 25 % faster';
  return { build: ms4(d.build), recompute: ms4(d.recompute[at]), gather: ms4(d.gather[at]),
    verdict: `${faster}, ${d.identical ? 'rows equal bit for bit' : 'but rows differ'}` };
}

// The note keeps one height while the numbers arrive, so that nothing below it moves: its least
// height is that of the note with the widest numbers and words it can show (times under 10 s, a
// ratio under 1000; the page's digits are all one width), measured (one layout: the page's other
// views set their heights without reading them back) when the settings or the window's width change.
const WIDEST = { build: '88.88', recompute: '88.88', gather: '88.88', verdict: 'recomputing is 88.8× faster, rows equal bit for bit' };
let reserved = '';
function reserve(d, section) {
  const note = section.querySelector('.note');
  if (!d) { note.style.minHeight = ''; reserved = ''; return; }
  const widest = noteText(d, WIDEST), key = `${window.innerWidth} ${widest}`;
  if (key === reserved) return;
  const text = note.textContent;
  note.style.minHeight = '';
  note.textContent = widest;
  const height = note.getBoundingClientRect().height;
  note.textContent = text;
  note.style.minHeight = `${height}px`;
  reserved = key;
}

export default {
  id: 'rope-cache',
  compute({ pe, st, extras, redraw }) {
    const rule = ropeRule(st);
    if (rule) throw new Error(rule);
    const params = ropeParams(st, extras, st.scaling, true);
    const { invFreq, rotaryDim } = pe.ropeFrequencies(params, { seqLen: st.lTarget, dtype: 'float64' });
    const half = invFreq.length;
    // The model's max positions: L_target, or what it publishes when L_target's limit cut it.
    const clamped = extras.clamped?.find((c) => c.key === 'lTarget' && c.shown === st.lTarget);
    const maxPositions = clamped ? clamped.published : st.lTarget;
    const bytes = maxPositions * half * 2 * 4;
    const rows = Math.max(1, Math.min(maxPositions, Math.floor(TABLE_BYTES / (half * 2 * 4))));
    const m = measureSome(pe, invFreq, st.precision, rows, redraw);
    // The batch sizes timed both ways so far (all of them once the measurement is done).
    const k = m.gather.length, xs = Float64Array.from(BATCHES.slice(0, k));
    const r = { ...m, recompute: m.recompute.slice(0, k), gather: m.gather.slice(0, k) };
    const series = [
      { label: 'recompute the rows (pe.ropeCache)', x: xs, y: Float64Array.from(r.recompute), color: SERIES[1], points: true, width: 2.2 },
      { label: 'gather the rows from the table', x: xs, y: Float64Array.from(r.gather), color: SERIES[0], points: true, width: 2.2, dash: [6, 3] },
    ];
    return { xs, series, half, rotaryDim, maxPositions, published: Boolean(clamped), bytes, rows, precision: st.precision, ...r,
      model: extras.modelLabel, rope: extras.modelScheme === 'rope' };
  },
  plot: (d, cursor) => ({ kind: 'lines', spec: { series: d.series, xLog: true, yLog: true, xTicks: BATCHES,
    xDomain: [0.7, BATCHES[BATCHES.length - 1] * 1.5],
    xLabel: 'positions in the batch (log)', yLabel: 'time per batch (ms, log)', cursor,
    note: `table: ${n(d.maxPositions)} positions × ${d.half} pairs × 2 (cos, sin) × 4 bytes = ${bytesText(d.bytes)}` } }),
  note: (d) => noteText(d, shown(d)),
  rendered: reserve,
  // A cursor placed before the first batch is timed (the settings changed under it) waits for one.
  readout: (d, c) => (d.xs[c.i] === undefined ? 'timing the first batches…'
    : `${n(d.xs[c.i])} positions: recompute ${fmt(d.recompute[c.i], 4)} ms, gather ${fmt(d.gather[c.i], 4)} ms `
    + `(${fmt(d.recompute[c.i] / d.gather[c.i], 2)}×)`),
  csv: (d) => linesCsv('positions', d.xs, d.series),
  caption: (st) => `rope cos/sin cache head_dim=${st.dModel} partial=${st.partial} L_target=${st.lTarget} precision=${st.precision}`,
  cursor0: (d) => ({ i: d.xs.length - 1 }),
};
