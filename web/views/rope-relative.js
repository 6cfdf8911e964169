// The score matrix of the same content at every position: RoPE (constant diagonals), no positions
// (constant everywhere), sinusoidal added at the input (not constant along diagonals) (chapter
// "rope"; why random q and k at each position test nothing is in the errata, web/page/errata.js).
// Rows are queries, query 0 at the top, as in every query × key map of the page.
import { DIVERGING } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight, squareHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { ropeParams, ropeRule } from '../settings/rope-settings.js';
import { diagonalSpread, dotRows, seededVectors, tile } from './shared/vectors.js';

const PANEL = 280, MIN_WIDTH = 320;
const each = (k, pw) => squareHeight(pw, { max: PANEL });

// Past this many multiply-adds (n² × head_dim, for each of two score maps) the work runs in the page's
// compute worker (web/page/offload.js): about 25 ms here; 128 positions of 4096 take about 0.25 s.
const OFFLOAD_PRODUCTS = 2 ** 24;

/** The three score maps and their diagonal spread, for args from compute: here or in the worker. */
function work(pe, { d, n, params, layout, base, sinLayout, capped }) {
  const scale = 1 / Math.sqrt(d);
  const qk = seededVectors(pe, 2, d, 31);
  const q = qk.subarray(0, d), k = qk.subarray(d);
  const opts = { seqLen: n, nHeads: 1, headDim: d, params, layout };
  const Q = pe.applyRope(tile(q, n), opts), K = pe.applyRope(tile(k, n), opts);
  const P = pe.sinusoidal(n, d, { base, layout: sinLayout });
  // q + P_i and k + P_j once each, not once per pair, and q·k once.
  const qs = new Float64Array(n * d), ks = new Float64Array(n * d);
  for (let i = 0; i < n * d; i++) { qs[i] = q[i % d] + P[i]; ks[i] = k[i % d] + P[i]; }
  // Keys times queries: [j][i], x-major with x = key j, y = query i (drawn from the top).
  const scaled = (keys, queries) => Float32Array.from(dotRows(keys, queries, n, n, d), (s) => s * scale);
  const panels = { rope: scaled(K, Q), none: new Float32Array(n * n).fill(dotRows(q, k, 1, 1, d)[0] * scale),
    sinusoidal: scaled(ks, qs) };
  const list = [
    { key: 'rope', title: 'RoPE on q and k' },
    { key: 'none', title: 'no positions' },
    { key: 'sinusoidal', title: 'sinusoidal added to the input' },
  ].map((p) => ({ ...p, values: panels[p.key], spread: diagonalSpread(panels[p.key], n),
    hi: Math.max(...panels[p.key].map(Math.abs)) || 1 }));
  return { n, d, list, capped };
}

export default {
  id: 'rope-relative',
  controls: [['relLen', { label: 'positions shown', slider: { min: 2, max: 128 } }]],
  height: (width) => panelsHeight(3, width, each, MIN_WIDTH),
  work,
  compute({ pe, st, extras, offload }) {
    const rule = ropeRule(st, 'none');  // unscaled frequencies only
    if (rule) throw new Error(rule);
    const d = st.dModel, n = Math.min(st.relLen, st.seqLen);
    const args = { d, n, params: ropeParams(st, extras), layout: st.layout, base: st.base, sinLayout: st.sinLayout,
      capped: st.seqLen < st.relLen };
    return n * n * d > OFFLOAD_PRODUCTS ? offload('rope-relative', args) : work(pe, args);
  },
  plot: (data, cursor) => ({ kind: 'panels', spec: { minWidth: MIN_WIDTH, each, cursor, panels: data.list.map((p) => ({
    title: `${p.title}: diagonal change ${fmt(p.spread, 2)}`, kind: 'heatmap',
    spec: { values: p.values, nx: data.n, ny: data.n, lo: -p.hi, hi: p.hi, lut: DIVERGING, square: true, yDown: true,
      xLabel: 'key position j', yLabel: 'query position i', legendLabel: 'q·k / √d' } })) } }),
  move: (data, c, key) => movePanels(c, data.list.map(() => ({ nx: data.n, ny: data.n, down: true })), key),
  note: (data) => `Largest change along a diagonal — RoPE: ${fmt(data.list[0].spread, 3)} (float32 rounding), `
    + `none: ${fmt(data.list[1].spread, 3)}, sinusoidal added: ${fmt(data.list[2].spread, 3)}.`
    + `${data.capped ? ` Positions 0 … ${data.n - 1} (seq_len).` : ''}`,
  readout: (data, c) => `${data.list[c.panel].title}: i = ${c.y}, j = ${c.x} (i − j = ${c.y - c.x}): `
    + `${fmt(data.list[c.panel].values[c.x * data.n + c.y], 5)}`,
  csv: (data) => data.list.map((p) => heatmapCsv({ nx: data.n, ny: data.n, values: p.values }, 'j', 'i', p.key)).join(''),
  caption: (st) => `rope relative head_dim=${st.dModel} theta=${st.theta} base=${st.base}`,
  cursor0: () => ({ panel: 0, x: 1, y: 0 }),
};
