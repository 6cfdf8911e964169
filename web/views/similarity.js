// PE(i)·PE(j) for sampled positions, and the check that every diagonal is constant (chapter "sinusoidal").
// Position i down the rows from 0 at the top, j across, as the page's query × key maps.
import { DIVERGING } from '../plot/colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { fmt } from './shared/numbers.js';
import { samplePositions, sinusoidalRows } from './shared/sampling.js';
import { diagonalSpread, dotRows } from './shared/vectors.js';

export default {
  id: 'similarity',
  // A square map: the canvas is as wide (style.css caps it) as the map, its labels and colour bar
  // need at the height it has, so no half of it stays empty.
  height: (width) => Math.min(540, Math.max(260, width - 72)),
  compute(ctx) {
    const { st } = ctx;
    // Evenly spaced samples (one integer stride), so (i, j) and (i+1, j+1) are always the same distance apart.
    const budget = Math.max(8, Math.floor(Math.sqrt(4e6 / st.dModel)));
    const xs = samplePositions(st.seqLen - 1, Math.min(256, budget));
    const n = xs.length, d = st.dModel;
    const rows = sinusoidalRows(ctx, xs);
    const norm = Math.ceil(d / 2);
    const values = Float32Array.from(dotRows(rows, rows, n, n, d), (v) => v / norm);
    return { xs, ys: xs, nx: n, ny: n, yDown: true, values, spread: diagonalSpread(values, n), total: st.seqLen, norm };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]],
    yDomain: [d.xs[0], d.xs[d.ny - 1]], lo: -1, hi: 1, lut: DIVERGING, square: true, yDown: true, xLabel: 'position j', yLabel: 'position i',
    legendLabel: `PE(i)·PE(j) / ${d.norm}`, cursor } }),
  note(d) {
    const sampled = d.xs.length < d.total
      ? ` Sampled: every ${d.xs[1] - d.xs[0]}th of ${d.total} positions, evenly, so the diagonals stay diagonals.` : '';
    return `Largest change along any diagonal: ${fmt(d.spread, 3)} (float32 rounding; exactly 0 in exact arithmetic).${sampled}`;
  },
  readout: (d, c) => `PE(${d.ys[c.y]})·PE(${d.xs[c.x]}) / ${d.norm} = ${fmt(d.values[c.x * d.ny + c.y])}, `
    + `distance i − j = ${d.ys[c.y] - d.xs[c.x]}`,
  csv: (d) => heatmapCsv(d, 'i', 'j', 'similarity'),
  caption: (st) => `similarity sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
