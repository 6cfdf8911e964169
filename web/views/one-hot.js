// Why positions are not one-hot vectors (chapter "embedding"): one dimension per position (the
// width grows with the length), no nearness (every two positions are orthogonal), and no vector
// for a position past the table — against the sinusoidal vectors of chapter 3.
import { DIVERGING, SERIES } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { panelsHeight, squareHeight } from '../plot/panels.js';
import { movePanels } from '../plot/cursor.js';
import { fmt } from './shared/numbers.js';
import { dotRows } from './shared/vectors.js';

const SHOWN = 64, PANEL = 260, MIN_WIDTH = 300;
const each = (k, pw) => (k < 2 ? squareHeight(pw, { max: PANEL, legend: k === 1 }) : PANEL);

export default {
  id: 'one-hot',
  controls: [['hotPos', { label: 'compare position', slider: { min: 0, max: 63 } }]],
  height: (width) => panelsHeight(3, width, each, MIN_WIDTH),
  compute({ pe, st }) {
    const total = st.seqLen, n = Math.min(total, SHOWN), d = st.dModel;
    // One-hot rows for the positions shown: the identity, as a table the package looks rows up in.
    const eye = new Float32Array(n * n);
    for (let i = 0; i < n; i++) eye[i * n + i] = 1;
    const table = pe.learnedTable(n, n, { weights: eye });
    const hot = table.lookup(Array.from({ length: n }, (_, i) => i));
    let refusal = '';
    try {
      table.lookup([n]);
    } catch (e) {
      if (!(e instanceof RangeError)) throw e;
      refusal = e.message.replace(/^learnedTable\.lookup: /, '');
    }
    const pe0 = pe.sinusoidal(n, d, { base: st.base, layout: st.sinLayout });
    const norm = Math.ceil(d / 2);
    // Symmetric maps: [i][j] is also the heatmaps' x-major order (x = j, y = i).
    const oneHot = Float32Array.from(dotRows(hot, hot, n, n, n));
    const sin = Float32Array.from(dotRows(pe0, pe0, n, n, d), (v) => v / norm);
    const p0 = Math.min(st.hotPos, n - 1);
    const xs = Float64Array.from({ length: n }, (_, j) => j);
    const series = [
      { label: `sinusoidal: PE(${p0})·PE(j) / ${norm}`, x: xs, y: Float64Array.from(xs, (j) => sin[j * n + p0]), color: SERIES[0], width: 2.4 },
      { label: `one-hot: e(${p0})·e(j)`, x: xs, y: Float64Array.from(xs, (j) => oneHot[j * n + p0]), color: SERIES[1], dash: [5, 3] },
    ];
    return { n, total, d, norm, oneHot, sin, p0, asked: st.hotPos, xs, series, refusal };
  },
  plot(data, cursor) {
    const map = (title, values, legend) => ({ title, kind: 'heatmap', spec: { values, nx: data.n, ny: data.n, lo: -1, hi: 1,
      lut: DIVERGING, square: true, yDown: true, legend, xLabel: 'position j', yLabel: 'position i', legendLabel: 'similarity' } });
    return { kind: 'panels', spec: { minWidth: MIN_WIDTH, each, cursor: cursor && (cursor.panel === 2 ? { ...cursor, i: cursor.i ?? cursor.x } : cursor),
      panels: [
        map('one-hot: e(i)·e(j)', data.oneHot, false),
        map(`sinusoidal: PE(i)·PE(j) / ${data.norm}`, data.sin, true),
        { title: `position ${data.p0} against every position`, kind: 'lines', spec: { series: data.series, xLabel: 'position j',
          yLabel: 'similarity', yDomain: [-1.05, 1.05], vlines: [{ x: data.p0, label: `${data.p0}` }] } },
      ] } };
  },
  move(data, c, key) {
    const grids = [{ nx: data.n, ny: data.n, down: true }, { nx: data.n, ny: data.n, down: true }, { nx: data.n, ny: 1 }];
    const at = movePanels({ panel: c.panel, x: c.i ?? c.x, y: c.panel === 2 ? 0 : c.y }, grids, key);
    return at.panel === 2 ? { panel: 2, x: at.x, i: at.x, y: 0 } : at;
  },
  note(data) {
    const { p0, n, d, norm } = data;
    const width = data.total.toLocaleString('en-US'), s = data.total === 1 ? '' : 's';
    const size = `One-hot: ${width} position${s} need${s ? '' : 's'} ${width} dimension${s} (d_model here is ${d}), a table of `
      + `${width} × ${width} = ${(data.total ** 2).toLocaleString('en-US')} numbers, and it must grow with the longest text.`
      + (data.total > n ? ` The maps show the first ${n}: positions 0 … ${n - 1}.` : '');
    const past = `A one-hot table for the ${n} position${n === 1 ? '' : 's'} shown has no row ${n}: the package's lookup says `
      + `“${data.refusal}”.`;
    if (n === 1) return `${size} ${past} With one position there is no other to compare it with: raise seq_len.`;
    // Its neighbour, and the position farthest from it (the other end), each compared with it.
    const near = p0 + 1 < n ? p0 + 1 : p0 - 1, far = p0 < n / 2 ? n - 1 : 0;
    const others = far === near ? [near] : [near, far];
    const sim = (j) => `PE(${p0})·PE(${j}) / ${norm} = ${fmt(data.sin[j * n + p0], 3)}`;
    const asked = data.asked > p0 ? ` (compare position ${data.asked} is past the positions shown: ${p0}, the last, is drawn)` : '';
    const unlike = others.length > 1 ? `is as unlike ${others.join(' as ')} (similarity 0 for both)`
      : `is orthogonal to ${near} (similarity 0)`;
    return `${size} Any two positions are orthogonal: ${p0}${asked} ${unlike}. ${past} Sinusoidal: ${d} numbers for any position, and nearness shows: `
      + `${others.map(sim).join(', ')}.`;
  },
  readout(data, c) {
    if (c.panel === 2) {
      const j = c.i ?? c.x;
      return `position ${data.p0} with ${j}: one-hot ${fmt(data.series[1].y[j], 0)}, sinusoidal ${fmt(data.series[0].y[j], 5)}`;
    }
    const v = (c.panel === 0 ? data.oneHot : data.sin)[c.x * data.n + c.y];
    return `${c.panel === 0 ? 'one-hot' : 'sinusoidal'}: position i = ${c.y}, j = ${c.x} (i − j = ${c.y - c.x}): ${fmt(v, 5)}`;
  },
  csv: (data) => [['one_hot', data.oneHot], ['sinusoidal', data.sin]]
    .map(([name, values]) => heatmapCsv({ nx: data.n, ny: data.n, values }, 'j', 'i', name)).join(''),
  caption: (st) => `one-hot vs sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base} position=${st.hotPos}`,
  cursor0: (data) => ({ panel: 0, x: data.p0, y: data.p0 }),
};
