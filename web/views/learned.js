// A learned position table (chapter "learned"): the lab's trained pos_emb by default (what training made
// of it, measured), the seeded N(0, 0.02²) table at initialisation, or real weights from a file; its
// heatmap, its similarity matrix, its size, and a lookup that fails plainly past its last row.
import { DIVERGING, SERIES } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { LabLoading, TRAIN_LENGTH } from '../lab/lab.js';
import { drawnFrom, resultTag, trainedPosition } from '../lab/lab-position.js';
import { hasReadModel } from '../settings/model-file.js';
import { moveGrid } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { columnsFor, samplePositions, samplingNote } from './shared/sampling.js';
import { dotRows } from './shared/vectors.js';
import { OFFLOAD_VALUES } from '../page/offload.js';

const LIMIT = 2 ** 22;  // numbers in a table this page draws (16 MiB of float32)
const PANEL = 260, MIN_WIDTH = 330;
const SOURCES = { trained: 'trained in the lab', init: 'at initialisation', file: 'your file' };
// A table at initialisation: the package's seeded N(0, std²), and the words that say so.
const SEEDED_INIT = { seed: 0, std: 0.02 };
const SEEDED = 'seeded N(0, 0.02²), as at the start of training';

// The last table made, kept while its size and source stay the same (the lookup slider moves often).
let cached = { key: '', table: null };
function made(key, weights, make) {
  if (cached.key !== key || cached.weights !== weights) cached = { key, weights, table: make() };
  return cached.table;
}

// The seeded table at the settings' size, or (file) the file's when one is loaded and of that size:
// { make() (the table), seeded, source (the words that say which) }.
function settingsTable(pe, st, file, loaded, opened) {
  if (st.maxLen * st.dModel > LIMIT) {
    throw new Error(`max_len × d_model = ${st.maxLen * st.dModel} numbers is more than this page draws (${LIMIT}); `
      + 'lower max_len or d_model.');
  }
  const own = file && loaded && loaded.maxLen === st.maxLen && loaded.dModel === st.dModel;
  const make = () => made(`${st.maxLen} ${st.dModel} ${own ? loaded.name : 'seeded'}`, own ? loaded.weights : null,
    () => pe.learnedTable(st.maxLen, st.dModel, own ? { weights: loaded.weights } : SEEDED_INIT));
  const source = own ? `“${loaded.name}” from your file`
    : file && loaded ? `seeded N(0, 0.02²) — your file's “${loaded.name}” is ${loaded.maxLen} × ${loaded.dModel}, `
      + 'set max_len and d_model to those to see it'
      : file && st.model && st.model !== 'pasted config' && opened !== st.model
        ? `seeded N(0, 0.02²) — the settings came from “${st.model}”, which is not open in this page (a link cannot `
          + 'carry a file): open it again to see its rows'
        : file ? 'seeded N(0, 0.02²) — no file is open: load one below to see its rows'
          : SEEDED;
  return { make, seeded: !own, source };
}

// The lab's trained pos_emb, at its own size whatever the settings say.
function trainedTable(pe, st, t) {
  const { shape: [rows, d], values } = t.position.pos_emb;
  const table = made(`trained ${rows} ${d}`, values, () => pe.learnedTable(rows, d, { weights: Float32Array.from(values) }));
  const size = st.maxLen !== rows || st.dModel !== d
    ? `The settings' max_len ${st.maxLen} and d_model ${st.dModel} size the table at initialisation, not this one.` : '';
  return { table, trained: t, source: `the lab's trained pos_emb, ${rows} × ${d} (T_train × d_model of the lab's model)`,
    more: [size, drawnFrom(t, 'learned')] };
}

function tableFor(pe, st, extras, lab) {
  const trained = st.learnedSource === 'trained';
  const t = trained ? trainedPosition(lab, 'learned') : null;
  if (t) return trainedTable(pe, st, t);
  if (trained && lab.waiting()) throw new LabLoading();
  const r = settingsTable(pe, st, st.learnedSource === 'file', extras.learned, extras.opened);
  if (trained) {
    r.source += ` (no lab result has a trained learned model: ${lab.shippedFailure() || 'train one in the lab chapter'})`;
  }
  return r;
}

// Rows `positions` of a [rows][d] table, one after another.
function rowsAt(w, positions, d) {
  const out = new Float32Array(positions.length * d);
  positions.forEach((p, i) => { out.set(w.subarray(p * d, (p + 1) * d), i * d); });
  return out;
}

// Mean cosine similarity of neighbouring rows and of all pairs of rows of a [rows][d] table.
function smoothness(w, rows, d) {
  const norm = Array.from({ length: rows }, (_, i) => Math.hypot(...w.subarray(i * d, (i + 1) * d)) || 1);
  const dots = dotRows(w, w, rows, rows, d);
  const cos = (i, j) => dots[i * rows + j] / (norm[i] * norm[j]);
  let near = 0, all = 0;
  for (let i = 0; i + 1 < rows; i++) near += cos(i, i + 1);
  for (let i = 0; i < rows; i++) for (let j = i + 1; j < rows; j++) all += cos(i, j);
  return { near: near / (rows - 1), all: all / ((rows * (rows - 1)) / 2) };
}

// The lab's tasks in words (docs/lab.md, "The tasks").
const TASKS = {
  markov: 'markov (an order-2 source, where only the last two tokens matter)',
  copy: 'copy (the second half of each row repeats the first: the answer is T_train/2 back)',
  flipflop: 'flipflop (a read recalls the last written bit, any distance back)',
  text: 'text (the characters of a file, a window of it per row)',
};

// What the trained table learned, in one sentence, against a sinusoidal table of the same size.
function learnedText(pe, t, table) {
  const { maxLen: rows, dModel: d } = table, c = t.config;
  const m = smoothness(table.weights, rows, d);
  const sin = smoothness(pe.sinusoidal(rows, d), rows, d);
  const task = TASKS[t.result.task] ?? t.result.task;
  const verdict = m.near < sin.near / 2 ? 'its table is not smooth' : 'its neighbouring rows grew alike';
  // A ratio says something only while any two rows are alike on average (copy's are not).
  const compare = m.all > 0.01 ? `neighbours ${fmt(m.near / m.all, 2)}× as similar as any two`
    : `neighbours more alike than any two, which are on average ${m.all < -0.01 ? 'slightly opposed' : 'orthogonal'}`;
  return `What training made of it: the model learned ${task} for ${c.steps} steps at T_train ${c.trainLength}, and `
    + `${verdict}: neighbouring rows have mean cosine similarity ${fmt(m.near, 3)}, all pairs of rows ${fmt(m.all, 3)} — `
    + `${compare} — where a sinusoidal table of the same size gives ${fmt(sin.near, 3)} and ${fmt(sin.all, 3)}.`;
}

function setupFile(section, host) {
  if (!hasReadModel(host.pe)) return;
  const box = document.createElement('div');
  box.className = 'file-box';
  box.dataset.drop = 'learned';
  box.innerHTML = '<label>load real weights <input type="file" accept=".npy,.safetensors" data-learned-file></label>'
    + '<span class="hint">.npy or .safetensors, or drop one here</span><span class="message" role="status"></span>';
  const msg = box.querySelector('.message');
  const load = async (file) => {
    try {
      const model = await host.pe.readModel(file);
      const t = model.positionTable;
      if (!t) throw new Error('it holds no position-embedding table (no 2-D tensor named like wpe or position_embeddings)');
      if (!t.weights) {
        throw new Error(`it gives the table's shape (${t.maxLen} × ${t.dModel}) but not its weights: `
          + 'load the .safetensors or .npy file');
      }
      if (t.dModel % 2) {
        throw new Error(`its rows are ${t.dModel} wide: the page draws even widths only, as sin and cos and RoPE pair `
          + 'dimensions');
      }
      const name = t.name || file.name;
      const warnings = model.warnings?.length ? ` ${model.warnings.join('; ')}` : '';
      msg.textContent = `Loaded “${name}”, ${t.maxLen} × ${t.dModel}.${warnings}`;
      msg.classList.remove('bad');
      host.loadLearned({ ...t, name });
    } catch (e) {
      msg.textContent = `${file.name}: ${e.message}`;
      msg.classList.add('bad');
    }
  };
  box.querySelector('input').addEventListener('change', (e) => {
    if (e.target.files[0]) load(e.target.files[0]);
    e.target.value = '';
  });
  box.addEventListener('dragover', (e) => e.preventDefault());
  box.addEventListener('drop', (e) => { e.preventDefault(); if (e.dataTransfer.files[0]) load(e.dataTransfer.files[0]); });
  section.querySelector('.view-controls').append(box);
}

// What the view draws of a table: sampled columns, the similarity of sampled rows, and the row at pos
// (or why there is none).
function tableData(table, pos, trained) {
  const { maxLen, dModel: d } = table;
  const xs = samplePositions(maxLen - 1, columnsFor(d));
  const values = rowsAt(table.weights, xs, d);
  let hi = 0;
  for (const v of values) hi = Math.max(hi, Math.abs(v));
  // Cosine similarity of sampled rows.
  const ss = samplePositions(maxLen - 1, Math.min(128, Math.max(8, Math.floor(Math.sqrt(4e6 / d)))));
  const n = ss.length, rows = rowsAt(table.weights, ss, d);
  const norms = ss.map((_, i) => Math.hypot(...rows.subarray(i * d, (i + 1) * d)) || 1);
  const dots = dotRows(rows, rows, n, n, d);
  const sim = Float32Array.from(dots, (s, c) => s / (norms[Math.floor(c / n)] * norms[c % n]));
  let row = null, failure = '';
  try {
    row = table.lookup([pos]);
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    failure = `No row for position ${pos}: the table has rows 0 … ${maxLen - 1} only. A model trained with `
      + `max_len ${maxLen} cannot represent this position at all${trained ? ' (the lab reports “no emb.” past it)' : ''}. `
      + `(The package: “${e.message.replace(/^learnedTable\.lookup: /, '')}”)`;
  }
  return { xs, values, hi: hi || 1, d, ss, sim, n, row, failure, pos, params: maxLen * d, maxLen };
}

// The seeded table, made and read in the page's worker: args from compute.
function work(pe, { maxLen, d, pos, source }) {
  return { ...tableData(pe.learnedTable(maxLen, d, SEEDED_INIT), pos, null), source, more: [], learned: '' };
}

export default {
  id: 'learned',
  controls: [
    ['learnedSource', { kind: 'select', label: 'table', labels: SOURCES }],
    ['maxLen', { label: 'max_len', slider: { min: 1, max: 16384, log: true }, shown: (st) => st.learnedSource === 'init' }],
    // The lookup slider reaches a quarter past the table drawn: the lab's (T_train rows) or max_len's.
    ['learnedPos', { label: 'look up position', slider: (st) => ({ min: 0,
      max: Math.max(2, Math.ceil((st.learnedSource === 'trained' ? TRAIN_LENGTH : st.maxLen) * 1.25)) }) }],
  ],
  setup(section, host) {
    setupFile(section, host);
    host.lab.onChange((what) => { if (what === 'result') host.refresh('learned'); });
  },
  height: (width) => panelsHeight(3, width, PANEL, MIN_WIDTH),
  work,
  compute({ pe, st, extras, lab, offload }) {
    const r = tableFor(pe, st, extras, lab);
    // A seeded table past OFFLOAD_VALUES numbers is made and read in the page's worker (offload.js):
    // 512 × 4096 of them held the page for 150–230 ms.
    if (r.seeded && st.maxLen * st.dModel > OFFLOAD_VALUES) {
      return offload('learned', { maxLen: st.maxLen, d: st.dModel, pos: st.learnedPos, source: r.source });
    }
    const { trained = null, more = [] } = r, table = r.table ?? r.make();
    return { ...tableData(table, st.learnedPos, trained), source: r.source, more,
      learned: trained ? learnedText(pe, trained, table) : '' };
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: [
    { title: `${data.learned ? 'trained ' : ''}table: ${data.maxLen} × ${data.d} = ${data.params.toLocaleString('en-US')} parameters`,
      kind: 'heatmap', spec: {
      values: data.values, nx: data.xs.length, ny: data.d, xDomain: [data.xs[0], data.xs[data.xs.length - 1]], lo: -data.hi,
      hi: data.hi, lut: DIVERGING, xLabel: 'position', yLabel: 'dimension', legendLabel: 'weight' } },
    { title: 'cosine similarity of two rows', kind: 'heatmap', spec: { values: data.sim, nx: data.n, ny: data.n,
      xDomain: [data.ss[0], data.ss[data.n - 1]], yDomain: [data.ss[0], data.ss[data.n - 1]], lo: -1, hi: 1, lut: DIVERGING,
      square: true, yDown: true, xLabel: 'position j', yLabel: 'position i', legendLabel: 'cos' } },
    data.row
      ? { title: `lookup(${data.pos}): row ${data.pos}`, kind: 'lines', spec: { xLabel: 'dimension', yLabel: 'weight', series: [
        { label: `row ${data.pos}`, x: Float64Array.from({ length: data.d }, (_, i) => i), y: data.row, color: SERIES[0] }] } }
      : { title: `lookup(${data.pos}): no such row`, kind: 'message', spec: { text: data.failure } },
  ] } }),
  move(data, c, key) {
    const grids = [{ nx: data.xs.length, ny: data.d }, { nx: data.n, ny: data.n, down: true }, { nx: data.d, ny: 1 }];
    const p = Math.min(c.panel ?? 0, 2);
    const at = 'x' in c ? c : { x: c.i ?? 0, y: 0 };
    return { panel: p, ...moveGrid(at, grids[p].nx, grids[p].ny, key, grids[p].down) };
  },
  note: (data) => [`Table: ${data.source}.`, ...data.more, samplingNote(data.xs, data.maxLen), data.failure]
    .filter(Boolean).join(' '),
  html: (data) => (data?.learned ? `<p data-caption="learned">${data.learned}</p>` : ''),
  readout(data, c) {
    if (c.panel === 0) return `position ${data.xs[c.x]}, dim ${c.y}: weight ${fmt(data.values[c.x * data.d + c.y])}`;
    if (c.panel === 1) return `cos(row ${data.ss[c.y]}, row ${data.ss[c.x]}) = ${fmt(data.sim[c.x * data.n + c.y], 4)}`;
    return data.row ? `row ${data.pos}, dim ${c.i ?? c.x}: ${fmt(data.row[c.i ?? c.x])}` : data.failure;
  },
  csv: (data) => heatmapCsv({ nx: data.xs.length, ny: data.d, xs: data.xs, values: data.values }, 'pos', 'dim', 'weight'),
  caption(st, { lab }) {
    const t = st.learnedSource === 'trained' ? trainedPosition(lab, 'learned') : null;
    return t ? `learned trained pos_emb · lab ${resultTag(t)} · lookup=${st.learnedPos}`
      : `learned table=${st.learnedSource} max_len=${st.maxLen} d_model=${st.dModel} lookup=${st.learnedPos}`;
  },
  cursor0: () => ({ panel: 0, x: 0, y: 0 }),
};
