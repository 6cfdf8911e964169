// "Adding PE doesn't change attention", answered (chapter "misconceptions"): the four terms of
// (x_i + p_i)·W_Q·W_Kᵀ·(x_j + p_j) against RoPE's single term — the lesson's "sinusoidal vs RoPE"
// table made visible. Rows are query words, word 0 at the top, as in every query × key map of the page.
import { DIVERGING } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight, squareHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { ropeRule } from '../settings/rope-settings.js';
import { dotRows, project, seededVectors } from './shared/vectors.js';

const DW = 64, PANEL = 240, MIN_WIDTH = 170;
const each = (k, pw) => squareHeight(pw, { max: PANEL, legend: false });

// [i][j] (query i, key j) → x-major with x = key j, y = query i.
function byKey(values, n) {
  const out = new Float32Array(n * n);
  for (let i = 0; i < n; i++) for (let j = 0; j < n; j++) out[j * n + i] = values[i * n + j];
  return out;
}

// rows [n][d] × W [d][d] → [n][d], in float32 as a model's activations.
const projected = (rows, w, n, d) => Float32Array.from(project(rows, n, d, w, d));
// Scores a_i·b_j / √d, [i][j].
function scores(a, b, n, d) {
  const scale = 1 / Math.sqrt(d);
  return Float32Array.from(dotRows(a, b, n, n, d), (s) => s * scale);
}

export default {
  id: 'cross-terms',
  controls: [['crossLen', { label: 'words', slider: { min: 2, max: 64 } }]],
  height: (width) => panelsHeight(5, width, each, MIN_WIDTH),
  compute({ pe, st }) {
    const n = Math.min(st.crossLen, st.seqLen), d = Math.min(DW, st.dModel);
    if (d % 2) throw new Error(ropeRule(st));
    const x = seededVectors(pe, n, d, 41);
    const p = pe.sinusoidal(n, d, { base: st.base, layout: st.sinLayout });
    const wq = seededVectors(pe, d, d, 42, 1 / Math.sqrt(d)), wk = seededVectors(pe, d, d, 43, 1 / Math.sqrt(d));
    const [xq, xk, pq, pk] = [projected(x, wq, n, d), projected(x, wk, n, d), projected(p, wq, n, d), projected(p, wk, n, d)];
    const opts = { seqLen: n, nHeads: 1, headDim: d, params: { headDim: d, theta: st.theta }, layout: st.layout };
    const terms = [
      { key: 'content_content', title: 'content · content', values: scores(xq, xk, n, d) },
      { key: 'content_position', title: 'content · position', values: scores(xq, pk, n, d) },
      { key: 'position_content', title: 'position · content', values: scores(pq, xk, n, d) },
      { key: 'position_position', title: 'position · position', values: scores(pq, pk, n, d) },
      { key: 'rope', title: 'RoPE: the one term', values: scores(pe.applyRope(xq, opts), pe.applyRope(xk, opts), n, d) },
    ];
    // The four add up to the full score of the summed inputs.
    const sum = Float32Array.from({ length: n * d }, (_, i) => x[i] + p[i]);
    const full = scores(projected(sum, wq, n, d), projected(sum, wk, n, d), n, d);
    let gap = 0, hi = 0;
    const four = terms.slice(0, 4);
    for (let c = 0; c < n * n; c++) gap = Math.max(gap, Math.abs(full[c] - four.reduce((s, t) => s + t.values[c], 0)));
    for (const t of terms) for (const v of t.values) hi = Math.max(hi, Math.abs(v));
    for (const t of terms) t.values = byKey(t.values, n);
    return { n, d, terms, gap, hi: hi || 1, capped: st.dModel > DW };
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, each, cursor, panels: data.terms.map((t) => ({
    title: t.title, kind: 'heatmap', spec: { values: t.values, nx: data.n, ny: data.n, lo: -data.hi, hi: data.hi, lut: DIVERGING,
      square: true, yDown: true, legend: false, xLabel: 'key word j', yLabel: 'query word i', legendLabel: 'score' } })) } }),
  move: (data, c, key) => movePanels(c, data.terms.map(() => ({ nx: data.n, ny: data.n, down: true })), key),
  note: (data) => `Colour: −${fmt(data.hi, 2)} (blue) to +${fmt(data.hi, 2)} (red) in every map. The four sinusoidal terms `
    + `add up to the full score (largest gap ${fmt(data.gap, 2)}, float32 rounding). ${data.n} words, d = ${data.d}`
    + `${data.capped ? ` (not d_model: at most ${DW} here, to keep this instant)` : ''}.`,
  readout: (data, c) => `${data.terms[c.panel].title}, query word ${c.y} with key word ${c.x}: `
    + `${fmt(data.terms[c.panel].values[c.x * data.n + c.y], 5)}`,
  csv: (data) => data.terms.map((t) => heatmapCsv({ nx: data.n, ny: data.n, values: t.values }, 'key_j', 'query_i', t.key)).join(''),
  caption: (st) => `cross terms d=${Math.min(DW, st.dModel)} base=${st.base} theta=${st.theta}`,
  cursor0: () => ({ panel: 0, x: 0, y: 0 }),
};
