// The sinusoidal table PE[pos][dim] as a heatmap (chapter "sinusoidal").
import { DIVERGING } from '../colormap.js';
import { heatmapCsv } from '../plot/heatmap.js';
import { TWO_PI, fmt } from '../numbers.js';
import { columnsFor, samplePositions, samplingNote, sinusoidalRows } from '../sampling.js';

export default {
  id: 'pe-heatmap',
  compute(ctx) {
    const xs = samplePositions(ctx.st.seqLen - 1, columnsFor(ctx.st.dModel));
    return { xs, nx: xs.length, ny: ctx.st.dModel, values: sinusoidalRows(ctx, xs), total: ctx.st.seqLen };
  },
  plot: (d, cursor) => ({ kind: 'heatmap', spec: { values: d.values, nx: d.nx, ny: d.ny, xDomain: [d.xs[0], d.xs[d.nx - 1]],
    lo: -1, hi: 1, lut: DIVERGING, xLabel: 'position pos', yLabel: 'dimension (0 = fastest)', legendLabel: 'PE value',
    cursor } }),
  note: (d) => samplingNote(d.xs, d.total),
  readout(d, c, st) {
    const i = Math.floor(c.y / 2);
    const v = d.values[c.x * d.ny + c.y];
    if (st.sinLayout === 'interleaved') {
      const wavelength = TWO_PI * st.base ** ((2 * i) / st.dModel);
      return `pos ${d.xs[c.x]}, dim ${c.y} = ${c.y % 2 ? 'cos' : 'sin'}(pos / ${st.base}^(${2 * i}/${st.dModel})), `
        + `wavelength ${fmt(wavelength, 4)} positions: ${fmt(v)}`;
    }
    return `pos ${d.xs[c.x]}, dim ${c.y} (${c.y < Math.ceil(d.ny / 2) ? 'sin' : 'cos'} half, concat layout): ${fmt(v)}`;
  },
  csv: (d) => heatmapCsv(d, 'pos', 'dim', 'pe'),
  caption: (st) => `sinusoidal seq_len=${st.seqLen} d_model=${st.dModel} base=${st.base} layout=${st.sinLayout}`,
  cursor0: (d) => ({ x: Math.min(1, d.nx - 1), y: 0 }),
};
