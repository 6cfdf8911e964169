// Token embedding, position embedding and their sum, with the √d_model scaling (chapter "embedding").
import { DIVERGING, SEQUENTIAL } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { seededVectors } from './shared/vectors.js';

const WORDS = ['the', 'cat', 'sat', 'on', 'mat'];
const SENTENCE = [0, 1, 2, 3, 0, 4];  // "the cat sat on the mat": "the" twice, at positions 0 and 4
const SHOWN_DIMS = 64, PANEL = 230, MIN_WIDTH = 270;

const norm = (a, i, d) => { let s = 0; for (let k = 0; k < d; k++) s += a[i * d + k] ** 2; return Math.sqrt(s); };

export default {
  id: 'embedding',
  controls: [['embScale', { kind: 'checkbox', label: 'scale word vectors by √d_model' }]],
  height: (width) => panelsHeight(4, width, PANEL, MIN_WIDTH),
  compute({ pe, st }) {
    const d = st.dModel, n = SENTENCE.length;
    const scale = st.embScale ? Math.sqrt(d) : 1;
    const tokenEmbeddings = seededVectors(pe, WORDS.length, d, 3, 1 / Math.sqrt(d));
    const positions = pe.sinusoidal(n, d, { base: st.base, layout: st.sinLayout });
    const word = pe.embed(SENTENCE, { tokenEmbeddings, dModel: d, positionTable: new Float32Array(n * d), scale });
    const sum = pe.embed(SENTENCE, { tokenEmbeddings, dModel: d, positionTable: positions, scale });
    const ny = Math.min(d, SHOWN_DIMS);
    // Each map its own colour scale, so the position's pattern stays readable next to a scaled word.
    const his = [0, 0, 0];
    const parts = [word, positions, sum].map((t, k) => {
      const values = new Float32Array(n * ny);
      for (let x = 0; x < n; x++) {
        for (let y = 0; y < ny; y++) { values[x * ny + y] = t[x * d + y]; his[k] = Math.max(his[k], Math.abs(t[x * d + y])); }
      }
      return values;
    });
    // Per token: ‖word·s‖, ‖PE‖, ‖sum‖ and cos(sum, word): how much of the word the sum keeps.
    const stats = new Float32Array(n * 4);
    for (let i = 0; i < n; i++) {
      let dotWS = 0;
      for (let k = 0; k < d; k++) dotWS += word[i * d + k] * sum[i * d + k];
      const nw = norm(word, i, d), ns = norm(sum, i, d);
      stats.set([nw, norm(positions, i, d), ns, dotWS / (nw * ns || 1)], i * 4);
    }
    return { d, ny, n, parts, his: his.map((h) => h || 1), stats, scale, labels: SENTENCE.map((t) => WORDS[t]) };
  },
  plot(data, cursor) {
    const titles = [`word · ${data.scale === 1 ? '1' : `√${data.d}`}`, 'position PE(pos)', 'sum: what the layer sees'];
    const yLabel = data.ny < data.d ? `dimension (first ${data.ny})` : 'dimension';
    const heat = data.parts.map((values, k) => ({ title: `${titles[k]} (colour ±${fmt(data.his[k], 2)})`, kind: 'heatmap',
      spec: { values, nx: data.n, ny: data.ny, lo: -data.his[k], hi: data.his[k], lut: DIVERGING, xCategories: data.labels,
        xLabel: 'token', yLabel, legend: false } }));
    const maxNorm = Math.max(...data.stats.filter((_, i) => i % 4 !== 3));
    const lengths = { title: 'lengths, and cos(sum, word)', kind: 'matrix', spec: {
      values: data.stats, shade: Float32Array.from(data.stats, (v, i) => (i % 4 === 3 ? v * maxNorm : v)), rows: data.n, cols: 4,
      rowLabels: data.labels.map((w, i) => `${i}: ${w}`), colLabels: ['‖word‖', '‖PE‖', '‖sum‖', 'cos'],
      lo: 0, hi: maxNorm, lut: SEQUENTIAL, digits: 2, dark: (t) => t < 0.6 } };
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, cursor, panels: [...heat, lengths] } };
  },
  move: (data, c, key) => movePanels(c, [...data.parts.map(() => ({ nx: data.n, ny: data.ny })), { nx: 4, ny: data.n, down: true }], key),
  note(data) {
    const mean = (k) => data.stats.filter((_, i) => i % 4 === k).reduce((a, b) => a + b, 0) / data.n;
    const verdict = data.scale === 1 ? 'Unscaled, the position dominates.' : 'Scaled, word and position share the sum.';
    return 'Each map has its own colour scale, blue negative to red positive (its range in its title), so the position\'s '
      + 'stripes stay readable; compare sizes with the lengths table (the last panel). '
      + `Average length: word ${fmt(mean(0), 2)}, position ${fmt(mean(1), 2)}; the sum points ${fmt(mean(3), 2)} of the way `
      + `along the word (cosine). ${verdict} (The cos column shares the colour scale, as a fraction of the longest length.)`;
  },
  readout(data, c) {
    if (c.panel === 3) {
      const names = ['‖word·s‖', '‖PE‖', '‖sum‖', 'cos(sum, word)'];
      return `token ${c.y} “${data.labels[c.y]}”: ${names[c.x]} = ${fmt(data.stats[c.y * 4 + c.x], 5)}`;
    }
    const names = ['word·s', 'PE', 'sum'];
    const v = data.parts[c.panel][c.x * data.ny + c.y];
    return `token ${c.x} “${data.labels[c.x]}”, dim ${c.y}: ${names[c.panel]} = ${fmt(v, 5)}`;
  },
  csv: (data) => ['word', 'position', 'sum']
    .map((name, k) => heatmapCsv({ nx: data.n, ny: data.ny, values: data.parts[k] }, 'token', 'dim', name)).join(''),
  caption: (st) => `embedding "the cat sat on the mat" d_model=${st.dModel} scale=${st.embScale ? 'sqrt(d_model)' : '1'} `
    + `base=${st.base}`,
  cursor0: () => ({ panel: 2, x: 0, y: 0 }),
};
