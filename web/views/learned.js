// A learned position table: seeded N(0, 0.02²) or real weights from a file, its heatmap, its
// similarity matrix, its size, and a lookup that fails plainly past max_len (chapter "learned").
import { DIVERGING, SERIES } from '../colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { hasReadModel } from '../model-file.js';
import { moveGrid } from '../cursor.js';
import { fmt } from '../numbers.js';
import { columnsFor, samplePositions, samplingNote } from '../sampling.js';

const LIMIT = 2 ** 22;  // numbers in a table this page draws (16 MiB of float32)
const PANEL = 260, MIN_WIDTH = 330;

// The last table made, kept while its size and source stay the same (the lookup slider moves often).
let cached = { key: '', table: null };
function tableFor(pe, st, loaded, opened) {
  const own = loaded && loaded.maxLen === st.maxLen && loaded.dModel === st.dModel;
  const key = `${st.maxLen} ${st.dModel} ${own ? loaded.name : 'seeded'}`;
  if (cached.key !== key || (own && cached.weights !== loaded.weights)) {
    const table = pe.learnedTable(st.maxLen, st.dModel, own ? { weights: loaded.weights } : { seed: 0, std: 0.02 });
    cached = { key, table, weights: own ? loaded.weights : null };
  }
  const source = own ? `“${loaded.name}” from your file`
    : loaded ? `seeded N(0, 0.02²) — your file's “${loaded.name}” is ${loaded.maxLen} × ${loaded.dModel}, `
      + 'set max_len and d_model to those to see it'
      : st.model && st.model !== 'pasted config' && opened !== st.model
        ? `seeded N(0, 0.02²) — the settings came from “${st.model}”, which is not open in this page (a link cannot `
          + 'carry a file): open it again to see its rows'
        : 'seeded N(0, 0.02²), as at the start of training';
  return { table: cached.table, source };
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

export default {
  id: 'learned',
  controls: [
    ['maxLen', { label: 'max_len', slider: { min: 1, max: 16384, log: true } }],
    ['learnedPos', { label: 'look up position', slider: (st) => ({ min: 0, max: Math.max(2, Math.ceil(st.maxLen * 1.25)) }) }],
  ],
  setup: setupFile,
  height: (width) => panelsHeight(3, width, PANEL, MIN_WIDTH),
  compute({ pe, st, extras }) {
    const { maxLen, dModel: d } = st;
    if (maxLen * d > LIMIT) {
      throw new Error(`max_len × d_model = ${maxLen * d} numbers is more than this page draws (${LIMIT}); `
        + 'lower max_len or d_model.');
    }
    const { table, source } = tableFor(pe, st, extras.learned, extras.opened);
    const xs = samplePositions(maxLen - 1, columnsFor(d));
    const values = new Float32Array(xs.length * d);
    let hi = 0;
    xs.forEach((p, i) => { values.set(table.weights.subarray(p * d, (p + 1) * d), i * d); });
    for (const v of values) hi = Math.max(hi, Math.abs(v));
    // Cosine similarity of sampled rows.
    const ss = samplePositions(maxLen - 1, Math.min(128, Math.max(8, Math.floor(Math.sqrt(4e6 / d)))));
    const n = ss.length, sim = new Float32Array(n * n);
    const norms = ss.map((p) => Math.hypot(...table.weights.subarray(p * d, (p + 1) * d)) || 1);
    for (let i = 0; i < n; i++) {
      for (let j = i; j < n; j++) {
        let s = 0;
        for (let k = 0; k < d; k++) s += table.weights[ss[i] * d + k] * table.weights[ss[j] * d + k];
        sim[i * n + j] = sim[j * n + i] = s / (norms[i] * norms[j]);
      }
    }
    let row = null, failure = '';
    try {
      row = table.lookup([st.learnedPos]);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      failure = `No row for position ${st.learnedPos}: the table has rows 0 … ${maxLen - 1} only. A model trained with `
        + `max_len ${maxLen} cannot represent this position at all. `
        + `(The package: “${e.message.replace(/^learnedTable\.lookup: /, '')}”)`;
    }
    return { xs, values, hi: hi || 1, d, ss, sim, n, row, failure, pos: st.learnedPos, params: maxLen * d, maxLen, source };
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: [
    { title: `table: ${data.maxLen} × ${data.d} = ${data.params.toLocaleString('en-US')} parameters`, kind: 'heatmap', spec: {
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
  note: (data) => [`Table: ${data.source}.`, samplingNote(data.xs, data.maxLen), data.failure].filter(Boolean).join(' '),
  readout(data, c) {
    if (c.panel === 0) return `position ${data.xs[c.x]}, dim ${c.y}: weight ${fmt(data.values[c.x * data.d + c.y])}`;
    if (c.panel === 1) return `cos(row ${data.ss[c.y]}, row ${data.ss[c.x]}) = ${fmt(data.sim[c.x * data.n + c.y], 4)}`;
    return data.row ? `row ${data.pos}, dim ${c.i ?? c.x}: ${fmt(data.row[c.i ?? c.x])}` : data.failure;
  },
  csv: (data) => heatmapCsv({ nx: data.xs.length, ny: data.d, xs: data.xs, values: data.values }, 'pos', 'dim', 'weight'),
  caption: (st) => `learned max_len=${st.maxLen} d_model=${st.dModel} lookup=${st.learnedPos}`,
  cursor0: () => ({ panel: 0, x: 0, y: 0 }),
};
