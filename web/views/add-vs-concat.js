// Why positions are added to the word vectors rather than concatenated (chapter "embedding"): the
// first thing a layer does is multiply by a matrix, and [x ; p]·W = x·W_x + p·W_p, so
// concatenating and projecting is adding a projected position; concatenating costs width in every
// layer. What adding costs, four terms in every score, is the cross-terms view's (chapter
// "misconceptions").
import { DIVERGING, SERIES } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { project, seededVectors } from './shared/vectors.js';

const WORDS = ['the', 'cat', 'sat', 'on', 'mat'];
const SENTENCE = [0, 1, 2, 3, 0, 4];  // "the cat sat on the mat", as the embedding view
const OUT = 32, PANEL = 230, BARS = 96, MIN_WIDTH = 270;
// The two maps, then two panels of two bars: on a phone, where they stack, the bars need less height.
const each = (k) => (k < 2 ? PANEL : BARS);

export default {
  id: 'add-vs-concat',
  controls: [['concatWidth', { label: 'position width (concatenated)', slider: { min: 2, max: 4096, log: true } }]],
  height: (width) => panelsHeight(4, width, each, MIN_WIDTH),
  compute({ pe, st }) {
    const d = st.dModel, dp = st.concatWidth, n = SENTENCE.length, m = Math.min(OUT, d);
    const scale = st.embScale ? Math.sqrt(d) : 1;
    const tokenEmbeddings = seededVectors(pe, WORDS.length, d, 3, 1 / Math.sqrt(d));
    const x = pe.embed(SENTENCE, { tokenEmbeddings, dModel: d, positionTable: new Float32Array(n * d), scale });
    const p = pe.sinusoidal(n, dp, { base: st.base, layout: st.sinLayout });
    // Concatenate: one row of d + dp numbers per token, times W [(d + dp)][m].
    const w = seededVectors(pe, d + dp, m, 61, 1 / Math.sqrt(d + dp));
    const cat = new Float32Array(n * (d + dp));
    for (let i = 0; i < n; i++) { cat.set(x.subarray(i * d, (i + 1) * d), i * (d + dp)); cat.set(p.subarray(i * dp, (i + 1) * dp), i * (d + dp) + d); }
    const concatenated = project(cat, n, d + dp, w, m);
    // Add after projecting each part by its own rows of W: W_x = rows 0 … d−1, W_p = rows d … d + dp − 1.
    const xw = project(x, n, d, w, m), pw = project(p, n, dp, w, m, d);
    const added = Float64Array.from(xw, (v, k) => v + pw[k]);
    let gap = 0, hi = 0;
    for (let k = 0; k < added.length; k++) {
      gap = Math.max(gap, Math.abs(added[k] - concatenated[k]));
      hi = Math.max(hi, Math.abs(added[k]));
    }
    // [token][output] is the heatmaps' x-major order already: token along x, output dimension up.
    const maps = [concatenated, added].map((v) => Float32Array.from(v));
    return { d, dp, m, n, maps, gap, hi: hi || 1, labels: SENTENCE.map((t) => WORDS[t]),
      widths: [d, d + dp], weights: [12 * d * d, 12 * (d + dp) ** 2] };
  },
  plot(data, cursor) {
    const heat = ['concatenate, then project: [x ; p]·W', 'project each, then add: x·W_x + p·W_p'].map((title, k) => ({
      title, kind: 'heatmap', spec: { values: data.maps[k], nx: data.n, ny: data.m, lo: -data.hi, hi: data.hi, lut: DIVERGING,
        xCategories: data.labels, xLabel: 'token', yLabel: 'output dimension', legend: false } }));
    const bar = (label, v, color) => ({ label, value: v, color, text: v.toLocaleString('en-US') });
    const bars = [
      { title: 'numbers per token, in every layer', kind: 'bars', spec: { bars: [
        bar('add', data.widths[0], SERIES[0]), bar('concatenate', data.widths[1], SERIES[1])] } },
      { title: 'weights per layer, 12 · width²', kind: 'bars', spec: { bars: [
        bar('add', data.weights[0], SERIES[0]), bar('concatenate', data.weights[1], SERIES[1])] } },
    ];
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, each, cursor, panels: [...heat, ...bars] } };
  },
  move(data, c, key) {  // in a panel of two bars, Home and End go to the first and the second
    if (c.panel >= 2 && (key === 'Home' || key === 'End')) { const y = key === 'Home' ? 0 : 1; return { panel: c.panel, i: y, x: 0, y }; }
    const grids = [{ nx: data.n, ny: data.m }, { nx: data.n, ny: data.m }, { nx: 1, ny: 2, down: true }, { nx: 1, ny: 2, down: true }];
    const at = movePanels({ panel: c.panel, x: c.x ?? 0, y: c.y ?? c.i ?? 0 }, grids, key);
    return at.panel >= 2 ? { panel: at.panel, i: at.y, x: 0, y: at.y } : at;
  },
  note: (data) => `The two maps agree to ${fmt(data.gap, 2)} (the same float64 sums, added in another order): `
    + `concatenating [x ; p] (${data.d} + ${data.dp} = ${data.d + data.dp} numbers) and multiplying by W `
    + `(${data.d + data.dp} × ${data.m}) is adding x·W_x and p·W_p, the two blocks of W's rows. Colour: −${fmt(data.hi, 2)} `
    + `(blue) to +${fmt(data.hi, 2)} (red), both maps. Weights per layer: 4·width² for W_Q, W_K, W_V, W_O and 8·width² `
    + 'for the MLP (4 × wider inside): a stream wider by the position pays that in every layer.',
  html: () => '<p>What adding costs: <a href="#view-cross-terms">three more terms in every score</a> (chapter 9).</p>',
  readout(data, c) {
    if (c.panel >= 2) {
      const k = c.i ?? c.y ?? 0, what = ['add', 'concatenate'][k];
      return c.panel === 2 ? `${what}: ${data.widths[k].toLocaleString('en-US')} numbers per token`
        : `${what}: 12 × ${data.widths[k]}² = ${data.weights[k].toLocaleString('en-US')} weights per layer`;
    }
    const v = (k) => fmt(data.maps[k][c.x * data.m + c.y], 6);
    return `token ${c.x} “${data.labels[c.x]}”, output ${c.y}: [x ; p]·W = ${v(0)}, x·W_x + p·W_p = ${v(1)}`;
  },
  csv: (data) => ['concatenated', 'added'].map((name, k) => heatmapCsv({ nx: data.n, ny: data.m, values: data.maps[k] },
    'token', 'output_dim', name)).join(''),
  caption: (st) => `add vs concatenate d_model=${st.dModel} position width=${st.concatWidth} base=${st.base} `
    + `scale=${st.embScale ? 'sqrt(d_model)' : '1'}`,
  cursor0: () => ({ panel: 0, x: 1, y: 0 }),
};
